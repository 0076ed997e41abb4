"""Erasure evidence: what the purge covers and what it does not (macros/erasure/)."""
