"""Erasure evidence: requests and their certificates, coverage (tables that hold ids but are not
onboarded), and what the bytes under a request's purged tables still hold (macros/erasure/,
models/erasure/)."""
