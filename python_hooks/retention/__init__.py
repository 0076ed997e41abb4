"""Retention: delete what is past its policy, never what is live (macros/retention/)."""
