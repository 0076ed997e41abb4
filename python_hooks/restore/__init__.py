"""Restore: choose the backup a partition goes back to, check everything first (macros/restore/)."""
