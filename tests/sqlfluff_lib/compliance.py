"""The `compliance.` macro namespace for sqlfluff's jinja templater (lint only).

dbt resolves `compliance.<macro>(...)` to the project's macros; sqlfluff renders models without
dbt.  Here a macro named `*_sql` (the project's convention for a macro that builds a whole
statement) renders a one-column select, and any other renders a plain identifier, which parses
wherever an expression or a relation may stand.
"""

from __future__ import annotations

from typing import Any, Callable


def __getattr__(name: str) -> Callable[..., str]:
    rendered = "select 1 as compliance_stub" if name.endswith("_sql") else "compliance_stub"

    def stand_in(*args: Any, **kwargs: Any) -> str:
        return rendered

    return stand_in
