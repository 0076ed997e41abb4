"""Erasure evidence: requests and their certificates, and what the bytes under a request's purged tables still hold (macros/erasure/, models/erasure/)."""
