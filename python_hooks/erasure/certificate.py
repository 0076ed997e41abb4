"""Erasure certificates, the status reports written instead of them, and their re-check.

`write(...)` receives one request's ledger row (computed afresh by the macro, with the same SQL
as `erasure_requests`), the latest verification of the request, its run and its locations, the
purge runs, the copies, and the selection of evidence rows.  It checks the rule once more here
(`rule_failures`): a certificate says `erased` only when

- the ledger says `erased`, for the verification it names, and that verification is the
  request's latest;
- the verification found 0 rows holding the request's ids in every location it read, and read
  every location (no error);
- it started after the request's last purge, the warehouse's last restore, the last write to an
  onboarded table and the last deletion of a copy (the ledger's `last_purge_at`,
  `last_restore_at`, `last_write_at`, `last_deletion_at`).

Otherwise it writes a *status report* (`<request>.status.json` / `.md`) that says which part of
the rule is not met, and no certificate.  A certificate (`<request>.json` / `.md`) names the
verification (start, end, scope, what it read), the purge runs, the copies with their deletion
dates, every table with its database, every time as a UTC instant, and the product's version and
revision; `<request>.evidence.txt` holds the evidence rows in canonical order (erasure.evidence),
whose SHA-256 the certificate carries.  `check(...)` recomputes that digest from the tables.
No id reaches this module.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from python_hooks.erasure import delta_copies, evidence, iceberg_copies
from python_hooks.errors import ConfigError, NotFoundError

FORMAT_VERSION = 2  # 2: the seal (each section's SHA-256), the .md's digest, the warehouse
DISTRIBUTION = "dbt-lakehouse"
PACKAGE = "compliance"
RULE = (
    "A request is erased when a verification that started after the request's last purge, after the "
    "last restore, after the last write to an onboarded table and after the last deletion of a copy "
    "read every onboarded table (all partitions), "
    "every registered backup, staging and trash table, every stale location, every reaped backup "
    "directory and every location of the purge journal, and found no row holding any of the "
    "request's ids, and no location it could not read."
)


# ---- values --------------------------------------------------------------------------------------
def utc(value: Any) -> dt.datetime | None:
    """A timestamp as an aware UTC datetime: Spark gives naive local times, ISO text is parsed."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if not isinstance(value, dt.datetime):
        return None
    return (value if value.tzinfo else value.astimezone()).astimezone(dt.timezone.utc)


def when(value: Any) -> str | None:
    """`2026-11-26T04:22:53.123456Z`, the form of every time in a certificate."""
    instant = utc(value)
    return instant.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if instant else None


def _plain(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return when(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _number(value: Any) -> int:
    return int(value or 0)


# ---- the product ---------------------------------------------------------------------------------
def _git(directory: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(directory), *args], capture_output=True, text=True, timeout=20, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def package_directory(project_name: str | None, project_dir: str | None) -> Path:
    """The directory of the `compliance` dbt package: the project itself when it is the product,
    else `<packages-install-path>/compliance` of the installing project (symlinks resolved)."""
    root = Path(project_dir or os.getcwd()).resolve()
    if project_name == PACKAGE:
        return root
    install = "dbt_packages"
    try:
        config = yaml.safe_load((root / "dbt_project.yml").read_text()) or {}
        install = str(config.get("packages-install-path") or install)
    except (OSError, yaml.YAMLError):
        pass
    return (root / install / PACKAGE).resolve()


def _lock_revision(project_dir: str | None) -> str | None:
    """The `revision` the installing project's package-lock.yml pins for the package (a git package)."""
    try:
        lock = yaml.safe_load((Path(project_dir or os.getcwd()) / "package-lock.yml").read_text()) or {}
    except (OSError, yaml.YAMLError):
        return None
    for entry in lock.get("packages") or []:
        if isinstance(entry, dict) and entry.get("name") == PACKAGE and entry.get("revision"):
            return str(entry["revision"])
    return None


def product_identity(project_name: str | None, project_dir: str | None, version: str) -> dict[str, Any]:
    """The product's version and revision, never the installing project's.

    version: the product's one version, as the adapter passes it (its __version__.py, which the
    `dbt-lakehouse` distribution's metadata repeats); package_version: the `compliance`
    package's dbt_project.yml; revision: the commit of the git checkout that holds
    the package's own files (`-dirty` when the package's tracked files changed), else the
    revision the installing project's package-lock.yml pins, else `unknown`.
    """
    directory = package_directory(project_name, project_dir)
    package_version = None
    try:
        package_version = str(
            (yaml.safe_load((directory / "dbt_project.yml").read_text()) or {}).get("version")
        )
    except (OSError, yaml.YAMLError):
        pass
    revision, source = None, None
    # the package's own files must be tracked by the checkout: a copy under an installing
    # project's (ignored) dbt_packages/ is not that project's revision
    if directory.is_dir() and _git(directory, "ls-files", "--error-unmatch", "dbt_project.yml") is not None:
        commit = _git(directory, "rev-parse", "HEAD")
        if commit:
            dirty = _git(directory, "status", "--porcelain", "--untracked-files=no", "--", ".")
            revision = commit + ("-dirty" if dirty else "")
            source = f"git checkout of {directory}"
    if revision is None:
        pinned = _lock_revision(project_dir)
        if pinned:
            revision, source = pinned, "package-lock.yml of the installing project"
    return {
        "distribution": DISTRIBUTION,
        "version": version,
        "dbt_package": PACKAGE,
        "package_version": package_version,
        "package_directory": str(directory),
        "revision": revision or "unknown",
        "revision_source": source or "neither a git checkout nor a pinned package revision",
    }


# ---- the rule ------------------------------------------------------------------------------------
def rule_failures(
    request: dict[str, Any], verified: dict[str, Any] | None, run: dict[str, Any] | None
) -> list[str]:
    """What keeps the request from being certified erased ([] when nothing does)."""
    failures = []
    status = request.get("status")
    if status != "erased":
        failures.append(
            f"the ledger's status is {status}: {request.get('missing') or 'see erasure_requests'}"
        )
    if not _number(request.get("purge_runs")):
        failures.append("no purge run has served the request")
    if verified is None or run is None:
        failures.append("no verification has read the bytes for this request")
        return failures
    if request.get("verification_id") != verified.get("verification_id"):
        failures.append(
            f"the ledger rests on verification {request.get('verification_id')}, not on the latest "
            f"({verified.get('verification_id')}): rebuild it (dbt run --select erasure_requests)"
        )
    if _number(verified.get("live_rows")) or _number(verified.get("copy_rows")):
        failures.append(
            f"verification {verified['verification_id']} found {_number(verified.get('live_rows'))} live row(s) and "
            f"{_number(verified.get('copy_rows'))} row(s) in copies holding its ids"
        )
    if _number(verified.get("unread_live")) or _number(verified.get("unread_copies")):
        failures.append(
            f"verification {verified['verification_id']} could not read "
            f"{_number(verified.get('unread_live')) + _number(verified.get('unread_copies'))} location(s): "
            f"{verified.get('unread_locations')}"
        )
    started = utc(run.get("started_at"))
    for label, key in (
        ("the request's last purge", "last_purge_at"),
        ("the last restore", "last_restore_at"),
        ("the last write to an onboarded table", "last_write_at"),
        ("the last deletion of a copy", "last_deletion_at"),
    ):
        moment = utc(request.get(key))
        if moment is not None and (started is None or started <= moment):
            failures.append(
                f"verification {verified['verification_id']} started at {when(started)}, not after {label} "
                f"({when(moment)}): run `dbt run --select erasure_verification erasure_requests` again"
            )
    return failures


# ---- the documents -------------------------------------------------------------------------------
def _file_name(request_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", request_id).strip("._") or "request"


def _directory(target_path: str | None, project_dir: str | None) -> Path:
    root = Path(project_dir or os.getcwd())
    target = Path(target_path or "target")
    directory = (target if target.is_absolute() else root / target) / "erasure"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _table(rows: list[dict[str, Any]], columns: list[str]) -> list[str]:
    if not rows:
        return ["(none)", ""]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(row.get(c)) for c in columns) + " |" for row in rows]
    return lines + [""]


def _live_tables(locations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per onboarded table: the live locations (partitions) read, files, bytes, and the rows holding
    the request's ids (each location's `rows_holding_ids`, from the verification's findings); for a
    Delta Lake table, the version whose files were read as live (`delta_version`; the files of the
    older versions, the change data and the log are among the copies read); for an Iceberg table,
    the snapshot (`iceberg_snapshot`; the older snapshots' files, the delete files and the metadata
    are among the copies read)."""
    tables: dict[str, dict[str, Any]] = {}
    for row in locations:
        if row.get("location_kind") != "live":
            continue
        table = f"{row['database_name']}.{row['table_name']}"
        entry = tables.setdefault(
            table,
            {
                "table": table,
                "delta_version": None,
                "iceberg_snapshot": None,
                "locations": 0,
                "files": 0,
                "bytes": 0,
                "rows_holding_ids": 0,
            },
        )
        version = delta_copies.version_read(row.get("referenced_by"))
        if version is not None:
            entry["delta_version"] = version
        snapshot = iceberg_copies.snapshot_read(row.get("referenced_by"))
        if snapshot is not None:
            entry["iceberg_snapshot"] = snapshot
        entry["locations"] += 1
        entry["files"] += _number(row.get("files_total"))
        entry["bytes"] += _number(row.get("bytes_total"))
        entry["rows_holding_ids"] += _number(row.get("rows_holding_ids"))
    return [tables[t] for t in sorted(tables)]


def _copies_read(locations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for row in locations:
        if row.get("location_kind") == "live" or not row.get("location_exists"):
            continue
        found.append(
            {
                "kind": row["location_kind"],
                "table": f"{row['database_name']}.{row['table_name']}",
                "referenced_by": row.get("referenced_by"),
                "location": row["location"],
                "files": _number(row.get("files_total")),
                "rows_holding_ids": _number(row.get("rows_holding_ids")),
            }
        )
    return sorted(found, key=lambda r: (r["table"], r["location"]))


def _verification_section(run: dict[str, Any], locations: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "verification_id": run.get("verification_id"),
        "invocation_id": run.get("invocation_id"),
        "trigger": run.get("trigger"),
        "started_at": when(run.get("started_at")),
        "ended_at": when(run.get("ended_at")),
        "scope": run.get("scope"),
        "onboarded_tables_outside_scope": run.get("out_of_scope_tables"),
        "read": {
            "onboarded_tables": _number(run.get("tables_read")),
            "side_tables": _number(run.get("side_tables_read")),
            "partitions": _number(run.get("partitions_read")),
            "locations": _number(run.get("locations_total")),
            "locations_existing": _number(run.get("locations_existing")),
            "files": _number(run.get("files_total")),
            "files_read": _number(run.get("files_read")),
            "files_skipped_by_footer_statistics": _number(run.get("files_skipped")),
            "bytes": _number(run.get("bytes_total")),
            "bytes_read": _number(run.get("bytes_read")),
        },
        "live_tables": _live_tables(locations),
        "copies_read": _copies_read(locations),
    }


def _copies(copies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for c in copies:
        found.append(
            {
                "table": f"{c.get('database_name')}.{c.get('table_name')}",
                "kind": c.get("copy_kind"),
                "partition": c.get("partition_spec"),
                "location": c.get("location"),
                "kept_by": c.get("backup_table"),
                "source": c.get("source"),
                "made_at": when(c.get("purged_at")),
                "will_delete_at": when(c.get("will_delete_at")),
                "deleted_at": when(c.get("deleted_at")),
            }
        )
    return found


def _runs(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "invocation_id": r.get("invocation_id"),
            "started_at": when(r.get("started_at")),
            "ended_at": when(r.get("purged_at")),
            "partitions_committed": _number(r.get("partitions_committed")),
            "partitions_failed": _number(r.get("partitions_failed")),
        }
        for r in runs
    ]


def _request_section(request: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "request_id", "status", "missing", "requested_at", "deadline_at", "id_count", "purge_runs",
        "last_purge_at", "last_restore_at", "last_write_at", "last_deletion_at", "live_clean_at", "fully_erased_at",
        "copies_total", "copies_remaining", "exempt_rows", "exempt_holding",
    )  # fmt: skip
    return {k: (when(request.get(k)) if k.endswith("_at") else _plain(request.get(k))) for k in keys}


def write(
    spark: Any,
    schema: str,
    request: dict[str, Any],
    verified: dict[str, Any] | None,
    run: dict[str, Any] | None,
    locations: list[dict[str, Any]],
    runs: list[dict[str, Any]],
    copies: list[dict[str, Any]],
    selection: dict[str, Any],
    generated_by: dict[str, Any],
    target_path: str | None,
    project_dir: str | None,
    version: str,
) -> dict[str, Any]:
    """The certificate, or the status report when the rule is not met; their paths and kind
    (`version`: the product's, which the adapter passes)."""
    request_id = str(request.get("request_id"))
    directory = _directory(target_path, project_dir)
    name = _file_name(request_id)
    failures = rule_failures(request, verified, run)
    now = when(dt.datetime.now(dt.timezone.utc))
    product = product_identity(generated_by.get("project_name"), project_dir, version)
    common = {
        "format_version": FORMAT_VERSION,
        "request": _request_section(request),
        "rule": RULE,
        "product": product,
        "generated_at": now,
        "generated_by": _plain(generated_by),
        "purge_runs": _runs(runs),
        "copies": _copies(copies),
    }
    if failures:
        doc = {
            "document": "erasure status report",
            **common,
            "not_certified_because": failures,
            "latest_verification": _verification_section(run, locations) if run else None,
        }
        json_path, md_path = directory / f"{name}.status.json", directory / f"{name}.status.md"
        json_path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
        md_path.write_text(status_markdown(doc))
        return {"document": "status report", "json": str(json_path), "markdown": str(md_path),
                "status": request.get("status"), "reasons": failures}  # fmt: skip
    full_selection = {
        "request_id": request_id,
        "verification_id": verified["verification_id"],  # type: ignore[index]
        "purge_invocation_ids": sorted(selection.get("purge_invocation_ids") or []),
        "retention_attempt_ids": sorted(selection.get("retention_attempt_ids") or []),
    }
    text, parts = evidence.evidence_text(spark, schema, full_selection)
    full_selection["columns"] = {p: v["columns"] for p, v in parts.items() if p != "journal"}
    evidence_path = directory / f"{name}.evidence.txt"
    evidence_path.write_text(text, encoding="utf-8")
    doc = {
        "document": "erasure certificate",
        **common,
        "verification": _verification_section(run, locations),  # type: ignore[arg-type]
        "evidence": {
            "sha256": evidence.digest(text),
            "canonical_order": list(evidence.PARTS),
            "parts": {p: {"rows": v["rows"], "sha256": v["sha256"]} for p, v in parts.items()},
            "selection": full_selection,
            "file": evidence_path.name,
            "recheck": f"dbt run-operation verify_certificate --args '{{file: {directory / (name + '.json')}}}'",
        },
    }
    json_path, md_path = directory / f"{name}.json", directory / f"{name}.md"
    doc["warehouse"] = warehouse_of(spark, schema)
    markdown = certificate_markdown(doc)
    doc["evidence"]["markdown_sha256"] = _sha256(markdown.encode("utf-8"))
    doc["evidence"]["seal"] = seal(doc)
    json_path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    md_path.write_text(markdown, encoding="utf-8")
    return {"document": "certificate", "json": str(json_path), "markdown": str(md_path), "status": "erased",
            "sha256": doc["evidence"]["sha256"], "evidence": str(evidence_path)}  # fmt: skip


def _header(doc: dict[str, Any]) -> list[str]:
    request = doc["request"]
    product = doc["product"]
    return [
        f"- Request: {request['request_id']}; requested at {request.get('requested_at') or '(not given)'}; "
        f"deadline {request.get('deadline_at')}; {request.get('id_count')} id(s) (never copied here)",
        f"- Purge runs that served it: {request.get('purge_runs')}; last purge {request.get('last_purge_at')}; "
        f"last restore {request.get('last_restore_at') or '-'}; last deletion of a copy {request.get('last_deletion_at') or '-'}",
        f"- Product: {product['distribution']} {product['version']}, dbt package {product['dbt_package']} "
        f"{product.get('package_version')}, revision `{product['revision']}` ({product['revision_source']})",
        f"- Generated at {doc['generated_at']} by dbt {doc['generated_by'].get('dbt_version')} "
        f"(project {doc['generated_by'].get('project_name')}, target {doc['generated_by'].get('target_name')}, "
        f"schema {doc['generated_by'].get('target_schema')}); every time is UTC",
        "",
    ]


def _verification_lines(section: dict[str, Any]) -> list[str]:
    read = section["read"]
    return [
        f"- Verification `{section['verification_id']}` (dbt invocation {section['invocation_id']}, "
        f"{section['trigger']}): started {section['started_at']}, ended {section['ended_at']}",
        f"- Scope: {section['scope']}; onboarded tables outside it: {section.get('onboarded_tables_outside_scope') or 'none'}",
        f"- Read: {read['onboarded_tables']} onboarded table(s) with {read['partitions']} partition(s), "
        f"{read['side_tables']} side table(s), {read['locations']} location(s) ({read['locations_existing']} existing), "
        f"{read['files']} file(s) and {read['bytes']} byte(s), of which {read['files_read']} file(s) "
        f"({read['bytes_read']} bytes) read row by row and {read['files_skipped_by_footer_statistics']} skipped "
        "because their footer statistics prove they hold none of the ids",
        "",
        "### Live tables read",
        "",
        "A Delta Lake table's live files are those of the version shown, an Iceberg table's those of"
        " the snapshot shown; the files their older versions and snapshots still hold, the change"
        " data, the delete files, the log and the metadata are among the copies read.",
        "",
        *_table(
            section["live_tables"],
            ["table", "delta_version", "iceberg_snapshot", "locations", "files", "bytes", "rows_holding_ids"],
        ),
        "### Copies read (backups, staging, trash, stale, reaped, journal, table directories)",
        "",
        *_table(section["copies_read"], ["kind", "table", "location", "files", "rows_holding_ids"]),
    ]


def certificate_markdown(doc: dict[str, Any]) -> str:
    request = doc["request"]
    lines = [
        f"# Erasure certificate: request {request['request_id']}",
        "",
        f"**Erased.** Fully erased at {request.get('fully_erased_at')}; verified by a reading of the bytes "
        f"that started at {doc['verification']['started_at']} and found no row holding any of the request's "
        "ids, in any location it read.",
        "",
        *_header(doc),
        "## The rule",
        "",
        doc["rule"],
        "",
        "## The verification it rests on",
        "",
        *_verification_lines(doc["verification"]),
        *_runs_and_copies(doc),
        "## Evidence digest",
        "",
        f"SHA-256 `{doc['evidence']['sha256']}` over the rows below, in this order, as written in "
        f"`{doc['evidence']['file']}` (`sha256sum` of that file gives the same digest).  Re-check against the tables: "
        f"`{doc['evidence']['recheck']}`.",
        "",
        *_table(
            [{"part": p, **v} for p, v in doc["evidence"]["parts"].items()],
            ["part", "rows", "sha256"],
        ),
    ]
    return "\n".join(lines) + "\n"


def _runs_and_copies(doc: dict[str, Any]) -> list[str]:
    """The purge runs and the copies with their deletion, as the certificate and the report list them."""
    return [
        "## Purge runs (dbt invocation ids)",
        "",
        *_table(
            doc["purge_runs"],
            ["invocation_id", "started_at", "ended_at", "partitions_committed", "partitions_failed"],
        ),
        "## Copies and their deletion",
        "",
        *_table(
            doc["copies"],
            [
                "table",
                "kind",
                "partition",
                "location",
                "kept_by",
                "source",
                "made_at",
                "will_delete_at",
                "deleted_at",
            ],
        ),
    ]


def status_markdown(doc: dict[str, Any]) -> str:
    request = doc["request"]
    lines = [
        f"# Erasure status report: request {request['request_id']} (not a certificate)",
        "",
        f"**Status: {request.get('status')}.** {request.get('missing') or ''}",
        "",
        "No certificate was written, because:",
        "",
        *[f"- {reason}" for reason in doc["not_certified_because"]],
        "",
        *_header(doc),
        "## The rule",
        "",
        doc["rule"],
        "",
        "## The latest verification",
        "",
        *(
            _verification_lines(doc["latest_verification"])
            if doc.get("latest_verification")
            else ["(none)", ""]
        ),
        *_runs_and_copies(doc),
    ]
    return "\n".join(lines) + "\n"


# ---- the re-check --------------------------------------------------------------------------------
def read_certificate(path: str, project_dir: str | None) -> dict[str, Any]:
    """A certificate's JSON; ConfigError / NotFoundError naming the file otherwise."""
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = Path(project_dir or os.getcwd()) / candidate
    if not candidate.exists():
        raise NotFoundError(
            f"verify_certificate: {candidate} does not exist; give the .json file erasure_certificate wrote"
        )
    try:
        doc = json.loads(candidate.read_text())
    except ValueError as exc:
        raise ConfigError(f"verify_certificate: {candidate} is not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("document") != "erasure certificate":
        kind = doc.get("document") if isinstance(doc, dict) else None
        raise ConfigError(
            f"verify_certificate: {candidate} is {'an ' + kind if kind else 'not a certificate'}; only an erasure "
            "certificate (target/erasure/<request>.json) carries an evidence digest"
        )
    return doc


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def warehouse_of(spark: Any, schema: str) -> dict[str, str]:
    """The warehouse a certificate's evidence rows live in: its directory and the schema."""
    from python_hooks.catalog import filesystem

    directory = filesystem.qualify(spark, str(spark.conf.get("spark.sql.warehouse.dir")))
    return {"directory": directory.rstrip("/"), "schema": schema}


def seal(doc: dict[str, Any]) -> dict[str, str]:
    """{section: SHA-256} of each top-level section of the certificate's JSON (canonical: sorted
    keys, no spaces), the evidence section without the seal itself: `check` names the section an
    edit of the .json touched."""
    sealed = {}
    for key, value in doc.items():
        if key == "evidence":
            value = {k: v for k, v in value.items() if k != "seal"}
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        sealed[key] = _sha256(text.encode("utf-8"))
    return sealed


def _file_checks(doc: dict[str, Any], json_path: Path, spark: Any, schema: str) -> list[dict[str, Any]]:
    """What the tables cannot show: the .json's sections against its seal, the .evidence.txt and
    the .md against their digests, the warehouse it was written for against this one."""
    recorded = doc["evidence"]
    checks: list[dict[str, Any]] = []

    def add(part: str, matches: bool, detail: str) -> None:
        checks.append({"part": part, "rows": None, "rows_now": None, "matches": matches, "detail": detail})

    sealed = recorded.get("seal")
    if not isinstance(sealed, dict):
        add("json", False, f"{json_path.name} carries no seal (format_version {doc.get('format_version')}): "
            "its sections cannot be checked; write the certificate again")  # fmt: skip
    else:
        now = seal(doc)
        changed = sorted(k for k in set(sealed) | set(now) if sealed.get(k) != now.get(k))
        add("json", not changed, f"{json_path.name}: " + (
            f"section(s) {', '.join(changed)} edited since it was written" if changed else "every section unchanged"
        ))  # fmt: skip
    for part, name, digest in (
        ("evidence_file", str(recorded.get("file") or ""), recorded.get("sha256")),
        ("markdown", json_path.with_suffix(".md").name, recorded.get("markdown_sha256")),
    ):
        target = json_path.parent / name
        if not name or not target.is_file():
            add(part, False, f"{target} is missing")
        elif digest is None:
            add(part, False, f"{target.name}: the certificate records no digest of it")
        else:
            found = _sha256(target.read_bytes())
            add(
                part,
                found == digest,
                f"{target.name}: sha256 {found}" + ("" if found == digest else f", not {digest}"),
            )
    written_for = doc.get("warehouse") or {}
    here = warehouse_of(spark, schema)
    add("warehouse", written_for == here, f"written for {written_for.get('directory')} schema {written_for.get('schema')}, "
        f"checked on {here['directory']} schema {here['schema']}")  # fmt: skip
    return checks


def check(spark: Any, schema: str, path: str, project_dir: str | None) -> dict[str, Any]:
    """The certificate checked: its files against the digests it records, the warehouse it was
    written for, and its evidence digest recomputed from the tables: {file, request_id,
    verification_id, matches, sha256, recomputed, parts: [{part, rows, rows_now, matches, detail}]},
    `matches` only when every part does."""
    doc = read_certificate(path, project_dir)
    json_path = Path(path) if Path(path).is_absolute() else Path(project_dir or os.getcwd()) / path
    recorded = doc["evidence"]
    text, parts = evidence.evidence_text(spark, schema, recorded["selection"], tolerant=True)
    found = evidence.digest(text)
    rows = _file_checks(doc, json_path, spark, schema)
    for part in evidence.PARTS:
        then, now = recorded["parts"].get(part, {}), parts[part]
        rows.append(
            {
                "part": part,
                "rows": then.get("rows"),
                "rows_now": now["rows"],
                "matches": then.get("sha256") == now["sha256"],
                "detail": now.get("error"),
            }
        )
    return {
        "file": path,
        "request_id": doc["request"]["request_id"],
        "verification_id": recorded["selection"]["verification_id"],
        "generated_at": doc.get("generated_at"),
        "matches": found == recorded["sha256"] and all(r["matches"] for r in rows),
        "sha256": recorded["sha256"],
        "recomputed": found,
        "parts": rows,
    }
