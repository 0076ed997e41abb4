"""Which column types an identifier and the listed ids may have, as the purge and the verifier
both need them: one rule, so that what the purge purges the verifier can read."""

from __future__ import annotations

INTEGRAL = ("tinyint", "smallint", "int", "bigint")
NUMERIC = (*INTEGRAL, "float", "double")


def types_comparable(left: str, right: str) -> bool:
    """Can Spark compare the two types without a lossy implicit cast? Numbers with numbers, text with text."""
    left, right = (left or "").lower(), (right or "").lower()

    def numeric(t: str) -> bool:
        return t in NUMERIC or t.startswith("decimal")

    def text(t: str) -> bool:
        return t == "string" or t.startswith(("varchar", "char"))

    return (numeric(left) and numeric(right)) or (text(left) and text(right)) or (left == right != "")
