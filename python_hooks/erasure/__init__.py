"""Erasure evidence: what the bytes under a request's purged tables still hold."""
