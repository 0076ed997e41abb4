"""The certificate's rule, its canonical evidence text and the product's identity (no warehouse)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest

from python_hooks.erasure import certificate, evidence

UTC = dt.timezone.utc


def at(hour: int) -> dt.datetime:
    return dt.datetime(2026, 11, 26, hour, 0, tzinfo=UTC)


def erased(**changes):
    request = {
        "request_id": "R-1", "status": "erased", "purge_runs": 2, "verification_id": "v2",
        "last_purge_at": at(1), "last_restore_at": None, "last_deletion_at": at(3),
    }  # fmt: skip
    verified = {"verification_id": "v2", "live_rows": 0, "copy_rows": 0, "unread_live": 0, "unread_copies": 0}
    run = {"verification_id": "v2", "started_at": at(4)}
    for key, value in changes.items():
        if key == "ledger_verification_id":
            request["verification_id"] = value
            continue
        target = (
            request if key in request and key != "verification_id" else verified if key in verified else run
        )
        target[key] = value
    return request, verified, run


def test_an_erased_request_meets_the_rule():
    assert certificate.rule_failures(*erased()) == []


@pytest.mark.parametrize(
    "changes, said",
    [
        ({"status": "copies_remaining"}, "the ledger's status is copies_remaining"),
        ({"purge_runs": 0}, "no purge run has served the request"),
        ({"copy_rows": 2}, "found 0 live row(s) and 2 row(s) in copies"),
        ({"unread_live": 1}, "could not read 1 location(s)"),
        ({"started_at": at(2)}, "not after the last deletion of a copy"),
        ({"last_purge_at": at(5)}, "not after the request's last purge"),
        ({"last_restore_at": at(4)}, "not after the last restore"),
        ({"ledger_verification_id": "v1"}, "not on the latest (v2)"),
    ],
)
def test_each_part_of_the_rule_refuses_a_certificate(changes, said):
    failures = certificate.rule_failures(*erased(**changes))
    assert any(said in f for f in failures), failures


def test_no_verification_no_certificate():
    request, _, _ = erased()
    assert "no verification has read the bytes for this request" in certificate.rule_failures(
        request, None, None
    )


def test_naive_spark_times_are_local_and_every_time_is_written_in_utc():
    local = dt.datetime(2026, 11, 26, 5, 0, 0, 123456)
    assert certificate.when(local) == local.astimezone().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert certificate.when("2026-11-26T05:00:00Z") == "2026-11-26T05:00:00.000000Z"
    assert evidence.micros_text(1_700_000_000_000_001) == "2023-11-14T22:13:20.000001Z"


def test_the_canonical_line_is_stable():
    row = {"b": Decimal("1.50"), "a": None, "c": True, "d": [1, "x"], "e": 1.5, "f": "é\t"}
    assert (
        evidence.line("purge_log", row)
        == 'purge_log\t{"a":null,"b":"1.50","c":true,"d":[1,"x"],"e":"1.5","f":"é\\t"}'
    )
    assert evidence.canonical_value(dt.datetime(2026, 1, 1, 12, tzinfo=UTC)) == "2026-01-01T12:00:00.000000Z"


def _git(directory: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(directory), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def test_the_revision_is_the_packages_not_the_installing_projects(tmp_path):
    product = tmp_path / "product"
    product.mkdir()
    (product / "dbt_project.yml").write_text("name: compliance\nversion: '0.1.0'\n")
    _git(product, "init", "-q")
    _git(product, "-c", "user.email=a@b", "-c", "user.name=a", "add", ".")
    _git(product, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "product")
    host = tmp_path / "host"
    (host / "dbt_packages").mkdir(parents=True)
    (host / "dbt_project.yml").write_text("name: host\nversion: '9.9.9'\n")
    (host / ".gitignore").write_text("dbt_packages/\n")
    _git(host, "init", "-q")
    _git(host, "-c", "user.email=a@b", "-c", "user.name=a", "add", ".")
    _git(host, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "host")
    # a local package installed as a symlink: the product's own checkout
    (host / "dbt_packages" / "compliance").symlink_to(product)
    found = certificate.product_identity("host", str(host), "0.1.0")
    assert found["revision"] == _git(product, "rev-parse", "HEAD") != _git(host, "rev-parse", "HEAD")
    assert found["package_version"] == "0.1.0" and found["distribution"] == "dbt-lakehouse"
    # a copy under the host's ignored dbt_packages/ is not the host's revision
    (host / "dbt_packages" / "compliance").unlink()
    (host / "dbt_packages" / "compliance").mkdir()
    (host / "dbt_packages" / "compliance" / "dbt_project.yml").write_text(
        "name: compliance\nversion: '0.1.0'\n"
    )
    assert certificate.product_identity("host", str(host), "0.1.0")["revision"] == "unknown"
    # ... unless the host's package-lock pins the package's revision (a git package)
    (host / "package-lock.yml").write_text(
        json.dumps({"packages": [{"git": "x", "revision": "abc123", "name": "compliance"}]})
    )
    pinned = certificate.product_identity("host", str(host), "0.1.0")
    assert (pinned["revision"], pinned["revision_source"]) == (
        "abc123",
        "package-lock.yml of the installing project",
    )


def test_a_delta_table_is_certified_at_the_version_its_live_files_were_read():
    from python_hooks.erasure.delta_copies import live_reference
    from python_hooks.erasure.iceberg_copies import live_reference as iceberg_reference

    def live(table, referenced_by, files):
        return {"location_kind": "live", "database_name": "db", "table_name": table,
                "referenced_by": referenced_by, "files_total": files, "bytes_total": 10, "rows_holding_ids": 0}  # fmt: skip

    rows = [
        live("events", live_reference("db.events", 7), 2),
        live("events", live_reference("db.events", 7, outside=True), 1),
        live("hive", "db.hive", 3),
        live("clicks", iceberg_reference("db.clicks", 5412683190245507281), 4),
        live("fresh", iceberg_reference("db.fresh", None), 0),
    ]
    tables = {t["table"]: t for t in certificate._live_tables(rows)}
    assert (tables["db.events"]["delta_version"], tables["db.events"]["files"]) == (7, 3)
    assert tables["db.events"]["iceberg_snapshot"] is None
    assert (tables["db.hive"]["delta_version"], tables["db.hive"]["iceberg_snapshot"]) == (None, None)
    assert (tables["db.clicks"]["iceberg_snapshot"], tables["db.clicks"]["delta_version"]) == (
        5412683190245507281,
        None,
    )
    # a table with no snapshot yet names none, rather than a made-up one
    assert tables["db.fresh"]["iceberg_snapshot"] is None
