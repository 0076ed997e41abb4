"""Policy evaluation: the ages and roots retention compares against a table's policy."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from python_hooks.catalog.patterns import TablePattern
from python_hooks.errors import ConfigError, did_you_mean

DAY_MS = 86_400_000
HOUR_MS = 3_600_000


def java_date_format(fmt: str) -> str:
    """`yyyy-MM-dd-HH` (the Java pattern users write in policies) as a strptime format."""
    for java, python in (
        ("yyyy", "%Y"),
        ("MM", "%m"),
        ("dd", "%d"),
        ("HH", "%H"),
        ("mm", "%M"),
        ("ss", "%S"),
    ):
        fmt = fmt.replace(java, python)
    return fmt


def partition_time_ms(value: str, fmt: str) -> int | None:
    """Epoch ms of a date partition value, or None when it does not parse (such partitions are kept)."""
    try:
        parsed = datetime.strptime(value, java_date_format(fmt))
    except (TypeError, ValueError):
        return None
    return int(parsed.replace(tzinfo=timezone.utc).timestamp() * 1000)


# What each policy setting accepts: (kind, time unit in hours or None).  Blank means "disabled"
# for the optional ones and "the default" in a seed row.
SETTINGS: dict[str, tuple[str, float | None]] = {
    "backup_retention_days": ("number", 24),
    "backup_retention_versions": ("count", None),
    "trash_retention_days": ("number", 24),
    "staging_retention_hours": ("number", 1),
    "backup_reap_days": ("number", None),  # moves backups, deletes nothing
    "backup_dir": ("path", None),
    "partition_column": ("name", None),
    "partition_date_format": ("date_format", None),
    "partition_age": ("choice", None),
    "partition_retention_days": ("number", 24),
    "snapshot_column": ("name", None),
    "snapshot_retention_count": ("count", None),
    "stale_retention_days": ("number", 24),
}
REQUIRED = ("backup_retention_days", "backup_retention_versions", "trash_retention_days", "staging_retention_hours",
            "stale_retention_days")  # fmt: skip
DATE_TOKENS = re.compile(r"yyyy|MM|dd|HH|mm|ss")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _blank(value: Any) -> bool:
    return value is None or str(value).strip() == ""


def check_setting(name: str, value: Any) -> str | None:
    """Why `value` is not acceptable for setting `name` (None when it is)."""
    kind, _ = SETTINGS[name]
    text = str(value).strip()
    if kind in ("number", "count"):
        try:
            number = float(text)
        except ValueError:
            number = None
        if number is None or number != number or number < 0 or (kind == "count" and number != int(number)):
            accepted = "a whole number >= 0" if kind == "count" else "a number >= 0"
            unit = {"count": "", "number": " (hours)" if name.endswith("_hours") else " (days)"}[kind]
            return f"{name} is {text!r}: expected {accepted}{unit}"
    elif kind == "date_format":
        missing = [label for token, label in (("yyyy", "a year (yyyy)"), ("MM", "a month (MM)"), ("dd", "a day (dd)"))
                   if token not in text]  # fmt: skip
        leftover = DATE_TOKENS.sub("", text)
        if missing:
            hint = " (mm is minutes, not months)" if "mm" in text and "MM" not in text else ""
            return f"partition_date_format is {text!r}: it has no {' and no '.join(missing)}{hint}"
        if any(ch.isalpha() for ch in leftover):
            return (
                f"partition_date_format is {text!r}: only yyyy, MM, dd, HH, mm and ss are understood,"
                f" with separators between them (not {''.join(sorted({c for c in leftover if c.isalpha()}))!r})"
            )
    elif kind == "choice" and text not in ("value", "modified"):
        return (
            f"partition_age is {text!r}: expected value (the partition's date) or modified (its files' time)"
        )
    elif kind == "name" and not NAME.match(text):
        return f"{name} is {text!r}: expected a column name"
    elif kind == "path" and ".." in text.replace("\\", "/").split("/"):
        return f"backup_dir is {text!r}: a path with '..' is refused; give the directory itself"
    return None


def check_policies(
    rows: list[dict[str, Any]],
    defaults: dict[str, Any],
    min_hours: Any = 24,
    allow_short: bool = False,
) -> list[str]:
    """Every problem of the retention vars (`defaults`) and the policy seed's rows, one line each.

    Checked before anything is deleted, so a bad cell stops the whole pass.  A time-based policy
    under `min_hours` (Delta's retentionDurationCheck) is refused unless `allow_short`.
    """
    problems = []
    try:
        floor = float(str(min_hours).strip())
        if floor < 0:
            raise ValueError
    except ValueError:
        return [
            f"Var retention_min_hours is {str(min_hours)!r}: expected a number of hours >= 0 (default 24)"
        ]

    def check(where: str, name: str, value: Any) -> None:
        problem = check_setting(name, value)
        if problem:
            problems.append(f"{where}: {problem}")
            return
        unit = SETTINGS[name][1]
        if unit is not None and not allow_short and float(str(value).strip()) * unit < floor:
            problems.append(
                f"{where}: {name} is {str(value).strip()} ({float(str(value).strip()) * unit:g} h), under"
                f" retention_min_hours ({floor:g} h). So short a retention can delete what a run in progress or"
                " a reader still needs; raise it, or set retention_allow_short: true to allow it"
                " (--vars '{retention_allow_short: true}')"
            )

    for name, value in defaults.items():
        if name not in SETTINGS:
            continue
        if _blank(value):
            if name in REQUIRED:
                problems.append(f"Var {name}: it is blank; it must be set ({SETTINGS[name][0]} >= 0)")
            continue
        check(f"Var {name}", name, value)
    for number, row in enumerate(rows, start=1):
        where = f"retention_policies row {number} (table_pattern {str(row.get('table_pattern'))!r})"
        for name in SETTINGS:
            if name in row and not _blank(row[name]):
                check(where, name, row[name])
    return problems


def unmatched_patterns(
    tables: list[tuple[str, str]], rows: list[dict[str, Any]], scope: Any = ""
) -> list[str]:
    """One warning per pattern of the policy rows or of `retention_scope` that matches no table of
    `tables` ([(database, table)], lower case), with the nearest existing names: a policy for a
    table that does not exist yet is allowed, a misspelt one is shown."""
    names = sorted({f"{db}.{t}" for db, t in tables} | {db for db, _ in tables})
    found = []
    sources = [
        (f"retention_policies row {n} (table_pattern)", row.get("table_pattern"))
        for n, row in enumerate(rows, 1)
    ]
    sources.append(("Var retention_scope", scope))
    for where, value in sources:
        for pattern in str(value or "").split(","):
            if pattern.strip() and not any(TablePattern.parse(pattern).matches(db, t) for db, t in tables):
                found.append(
                    f"{where}: {pattern.strip()!r} matches no table{did_you_mean(pattern.strip().rstrip('*'), names)}"
                )
    return found


def validate_policies(
    spark: Any,
    rows: list[dict[str, Any]],
    defaults: dict[str, Any],
    min_hours: Any = 24,
    allow_short: Any = False,
    scope: Any = "",
    tables: list[list[str]] | None = None,
) -> list[str]:
    """The retention model's check before a pass: raises ConfigError listing every problem; returns
    the warnings (patterns that match no table of `tables`, [[database, table]] as
    engine.base_tables lists them for the pass, with the nearest names)."""
    # allow_short arrives parsed: the macro reads it with compliance.bool_var, the one boolean parser
    problems = check_policies(rows, defaults, min_hours, allow_short is True)
    if problems:
        raise ConfigError(
            "Retention policies refused; nothing was deleted:\n  "
            + "\n  ".join(problems)
            + "\nFix the vars or the rows of seeds/retention/retention_policies.csv (then `dbt seed`), and run again."
        )
    return unmatched_patterns([(db.lower(), name.lower()) for db, name in tables or []], rows, scope)
