"""Erasure evidence: requests, coverage, byte verification, certificates (macros/erasure/, models/erasure/)."""
