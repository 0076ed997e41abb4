"""The erasure certificate: one request's evidence as JSON (for machines) and Markdown (for a
data-protection officer), under `target/erasure/`.

The macro `erasure_certificate` reads the rows from the erasure models and hands them here; this
module only formats and writes them, adding the project's git revision.  No id reaches it: the
rows hold counts, locations, dates and run ids.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

STATUS_TEXT = {
    "pending": "No purge run has served this request cleanly yet.",
    "live_clean": "The live tables hold none of its ids; pre-purge copies remain until retention deletes them.",
    "erased": "The live tables hold none of its ids and every pre-purge copy has been deleted.",
    "overdue": "Its deadline has passed and it is not erased.",
    "reintroduced": "Its ids are live again after it was clean (a restore, a recompaction or a rebuild); "
    "the next purge removes them.",
}


def _plain(value: Any) -> Any:
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def git_revision(project_dir: str | None) -> str:
    """`<commit>` of the project's checkout (`-dirty` when it has local changes), or `unknown`."""
    root = project_dir or os.getcwd()
    try:
        commit = subprocess.run(
            ["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=20, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return commit + ("-dirty" if dirty else "") if commit else "unknown"


def _file_name(request_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", request_id).strip("._") or "request"


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _table(rows: list[dict[str, Any]], columns: list[str]) -> list[str]:
    if not rows:
        return ["(none)", ""]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(row.get(c)) for c in columns) + " |" for row in rows]
    return lines + [""]


def markdown(doc: dict[str, Any]) -> str:
    request = doc["request"]
    status = request.get("status")
    lines = [
        f"# Erasure certificate: request {request.get('request_id')}",
        "",
        f"**Status: {status}.** {STATUS_TEXT.get(status, '')}",
        "",
        f"- Requested at: {request.get('requested_at') or '(not given: the first purge that served it)'}",
        f"- Deadline: {request.get('deadline_at')}",
        f"- Ids in the request: {request.get('id_count')} (never copied into this certificate or any table)",
        f"- Live tables clean since: {request.get('live_clean_at') or '-'}",
        f"- Fully erased at: {request.get('fully_erased_at') or '-'}",
        f"- Pre-purge copies: {request.get('copies_total')} made, {request.get('copies_remaining')} remaining"
        + (f", all deleted by {request['copies_deleted_by']}" if request.get("copies_deleted_by") else ""),
        f"- Generated at: {doc['generated_at']} by project revision `{doc['git_revision']}`",
        "",
        "## Purge runs (dbt invocation ids)",
        "",
        *_table(
            doc["runs"],
            ["invocation_id", "started_at", "purged_at", "partitions_committed", "partitions_failed"],
        ),
        "## Live tables checked",
        "",
        *_table(doc["tables"], ["table_id", "identifier_field", "remaining_rows", "checked_at"]),
        "## Pre-purge copies and their deletion",
        "",
        *_table(
            doc["copies"],
            [
                "table_name",
                "partition_spec",
                "location",
                "backup_table",
                "purged_at",
                "will_delete_at",
                "deleted_at",
            ],
        ),
        "## Verification of bytes",
        "",
    ]
    if doc["verification"]:
        lines += _table(
            doc["verification"],
            [
                "verified_at",
                "table_name",
                "location_kind",
                "location",
                "files_total",
                "files_read",
                "rows_holding_ids",
            ],
        )
    else:
        lines += [
            "Not run for this request: `dbt run-operation verify_erasure --args '{request_id: ...}'` reads every "
            "data file under the purged tables' directories.",
            "",
        ]
    return "\n".join(lines) + "\n"


def write_certificate(
    spark: Any,
    request: dict[str, Any],
    runs: list[dict[str, Any]],
    tables: list[dict[str, Any]],
    copies: list[dict[str, Any]],
    verification: list[dict[str, Any]],
    target_path: str | None = None,
    project_dir: str | None = None,
) -> dict[str, Any]:
    """Writes `<target>/erasure/<request>.json` and `.md`; returns their paths."""
    del spark  # a python_hook receives the session first; the rows arrive read
    root = Path(project_dir or os.getcwd())
    target = Path(target_path or "target")
    directory = (target if target.is_absolute() else root / target) / "erasure"
    directory.mkdir(parents=True, exist_ok=True)
    doc = _plain(
        {
            "request": request,
            "runs": runs,
            "tables": tables,
            "copies": copies,
            "verification": verification,
            "git_revision": git_revision(project_dir),
            "generated_at": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        }
    )
    name = _file_name(str(request.get("request_id")))
    json_path = directory / f"{name}.json"
    md_path = directory / f"{name}.md"
    json_path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    md_path.write_text(markdown(doc))
    return {"json": str(json_path), "markdown": str(md_path), "status": doc["request"].get("status")}
