"""A user's own dbt project adopts the product exactly as docs/adopt.md says, outside the repository.

The runtime is installed with pip into a fresh venv from a clean checkout of this repository (what
`git archive` of the commit holds, with the working tree's changes to tracked files), pinned by its
constraints.txt; the dbt package comes through the project's packages.yml.  The project has its own
name, profile and databases (`sales.orders`: partitioned parquet, `customer_id`; `crm.contacts`:
ORC, `person.id`; the id table `privacy.erasure_ids`, column `subject_id`) and no compaction
inputs.  Every dbt command is its own process with its own Spark session, as a user's are; after
each, the same process reads the lake back (tests/functional/adopt/host.py).

The story: install, `dbt ls` before any var (nothing of the compliance job exists), the vars and
the default selector, `dbt build` (nothing deleted, nothing missing), onboarding, a purge dry run
(nothing changed), a purge (rows gone, locations swapped), a restore, retention, the erasure
ledger, `dbt docs generate`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import time
from datetime import datetime, timedelta, timezone
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, local_only
from tests.functional.adopt import host

pytestmark = [local_only, pytest.mark.slow]

HOST = Path(host.__file__)
TIMINGS: list[tuple[str, float]] = []


def clean_checkout(destination: Path) -> Path:
    """What a clone of this commit holds, with the working tree's changes to tracked files (the
    stash commit `git stash create` makes without touching anything), and nothing else: no
    .venv, no target/, no dbt_packages/."""
    stash = subprocess.run(
        ["git", "-C", str(REPO), "stash", "create"], capture_output=True, text=True, check=True
    ).stdout.strip()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", stash or "HEAD"], capture_output=True, check=True
    ).stdout
    destination.mkdir(parents=True)
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(destination, filter="data")
    return destination


def environment(project: Path, venv: Path) -> dict[str, str]:
    """The user's shell: the venv first on PATH, nothing of this repository's setup."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "DBT_PROFILES_DIR", "DBT_TARGET", "DBT_SCHEMA", "VIRTUAL_ENV")
        and not k.startswith("SPARK_")
    }
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        DBT_PROFILES_DIR=str(project),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
    )
    return env


class Host:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.venv = root / "venv"
        self.project = root / host.PROJECT
        self.warehouse = root / "warehouse"
        self.metastore = root / "metastore_db"

    def run(self, label: str, *command: str, timeout: float = 900) -> str:
        started = time.monotonic()
        done = subprocess.run(
            command,
            cwd=self.project,
            env=environment(self.project, self.venv),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        TIMINGS.append((label, time.monotonic() - started))
        output = done.stdout + done.stderr
        assert done.returncode == 0, f"{label} failed:\n{output[-6000:]}"
        return output

    def dbt(self, *args: str) -> tuple[str, dict[str, Any]]:
        """`dbt <args>` in a process of its own, and the lake's state it read afterwards."""
        output = self.run("dbt " + " ".join(args), str(self.venv / "bin" / "python"), str(HOST), "dbt", *args)
        return output, host_state(output)

    def write(self, name: str, text: str) -> None:
        path = self.project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def host_state(output: str) -> dict[str, Any]:
    line = next(x for x in output.splitlines() if x.startswith("HOST_STATE "))
    return json.loads(line[len("HOST_STATE ") :])


def orders(state: dict[str, Any]) -> list[tuple]:
    rows = [json.loads(r) for r in state["tables"]["sales.orders"]["rows"]]
    return sorted((r["order_id"], r["customer_id"], r["amount"], r["order_date"]) for r in rows)


def contact_ids(state: dict[str, Any]) -> list[int]:
    return sorted(json.loads(r)["person"]["id"] for r in state["tables"]["crm.contacts"]["rows"])


def mart(state: dict[str, Any]) -> dict[int, tuple]:
    rows = [json.loads(r) for r in state["tables"][host.MART]["rows"]]
    return {r["customer_id"]: (r["orders"], r["revenue"]) for r in rows}


def lake_files(state: dict[str, Any]) -> dict[str, str]:
    """The data files of the user's lake tables (not the product's log tables)."""
    return {
        path: digest
        for path, digest in state["files"].items()
        if path.startswith(("sales.db/", "crm.db/", "privacy.db/", f"{host.SCHEMA}.db/customer_revenue"))
    }


def log_of(state: dict[str, Any], table: str, invocation: str) -> list[dict[str, Any]]:
    return [r for r in state[table] or [] if r["invocation_id"] == invocation]


def latest_invocation(state: dict[str, Any], command: str) -> str:
    return [r for r in state["invocations"] if r["command"] == command][-1]["invocation_id"]


def keys(rows: list[dict[str, Any]], wanted: str) -> set[tuple]:
    return {(r["database_name"], r["table_name"], r["partition_spec"]) for r in rows if r["state"] == wanted}


PURGED = {
    ("sales", "orders", "order_date=2024-01-01"),
    ("sales", "orders", "order_date=2024-01-02"),
    ("crm", "contacts", None),
    (host.SCHEMA, "customer_revenue", None),
}


@pytest.fixture(scope="module")
def story(tmp_path_factory) -> dict[str, Any]:
    started = time.monotonic()
    TIMINGS.clear()
    site = Host(tmp_path_factory.mktemp("adopt"))
    checkout = clean_checkout(site.root / "checkout")
    site.project.mkdir()

    # step 1: the runtime, with the venv's own pip, into a fresh venv
    site.run("python -m venv", sys.executable, "-m", "venv", str(site.venv))
    pip = [str(site.venv / "bin" / "python"), "-m", "pip"]
    site.run(
        "pip install", *pip, "install", "--quiet", str(checkout), "-c", str(checkout / "constraints.txt")
    )
    site.run("pip check", *pip, "check")
    installed = site.run(
        "import check",
        str(site.venv / "bin" / "python"),
        "-c",
        "import dbt.adapters.lakehouse, python_hooks, sqlglot, openlineage.client, pyarrow; print(python_hooks.__file__)",
    )
    assert str(site.venv) in installed, installed

    # the lake the user already has, written by other tools
    lake = site.run(
        "the user's lake",
        str(site.venv / "bin" / "python"),
        str(HOST),
        "lake",
        str(site.warehouse),
        str(site.metastore),
    )

    # steps 2 and 3: the profile, the package
    site.write("dbt_project.yml", host.DBT_PROJECT)
    site.write("profiles.yml", host.profile(str(site.warehouse), str(site.metastore)))
    site.write("packages.yml", host.packages(str(checkout)))
    site.write("models/_sources.yml", host.SOURCES)
    site.write("models/customer_revenue.sql", host.MART_SQL)
    site.write("models/customer_revenue.yml", host.MART_YML)
    site.run("dbt deps", str(site.venv / "bin" / "dbt"), "deps")
    # installed, nothing configured: what exists
    listed = site.run(
        "dbt ls",
        str(site.venv / "bin" / "dbt"),
        "ls",
        "--resource-type",
        "model",
        "seed",
        "snapshot",
        "source",
        "--output",
        "json",
        "--output-keys",
        "unique_id",
    )
    unconfigured = {json.loads(x)["unique_id"] for x in listed.splitlines() if x.startswith("{")}

    # steps 4 and 5: the vars, and the default selector that keeps the compliance job out
    site.write("dbt_project.yml", host.DBT_PROJECT + host.VARS)
    site.write("selectors.yml", host.SELECTORS)
    site.write("onboarding.yml", host.ONBOARDING)

    out: dict[str, Any] = {
        "unconfigured": unconfigured,
        "warehouse": site.warehouse,
        "before": host_state(lake),
    }
    out["build"] = site.dbt("build")
    # step 6: onboarding the lake's tables (the mart is onboarded by its config)
    out["onboard"] = site.dbt("run-operation", "onboard_tables", "--args", "{file: onboarding.yml}")
    # step 7: the first dry run
    out["dry"] = site.dbt("run", "--select", "purge+", "--vars", "{purge_dry_run: true}")
    # step 8: the first purge, and a restore of one partition
    out["purge"] = site.dbt("run", "--select", "purge+")
    out["restore"] = site.dbt(
        "run-operation",
        "restore",
        "--args",
        json.dumps({"table": "sales.orders", "partition": host.RESTORED_PARTITION}),
    )
    # step 9: retention, here as if ten days had passed; the ledger; the docs
    later = (datetime.now(timezone.utc) + timedelta(days=10)).strftime("%Y-%m-%dT%H:%M:%S")
    out["retention"] = site.dbt(
        "run", "--select", "retention", "--vars", json.dumps({"retention_now": later})
    )
    out["ledger"] = site.dbt("run", "--select", "tag:erasure")
    # every node in the catalog, the compliance job's too (the default selector would leave it out)
    site.run("dbt docs generate", str(site.venv / "bin" / "dbt"), "docs", "generate", "--select", "fqn:*")
    out["manifest"] = json.loads((site.project / "target" / "manifest.json").read_text())
    out["catalog"] = json.loads((site.project / "target" / "catalog.json").read_text())
    TIMINGS.append(("whole story", time.monotonic() - started))
    print("\nhost-project story, seconds per step:")
    for label, seconds in TIMINGS:
        print(f"  {seconds:7.1f}  {label}")
    return out


ORIGINAL_ORDERS = sorted(host.ORDERS)
PURGED_ORDERS = [o for o in ORIGINAL_ORDERS if o[1] not in host.ERASED]
RESTORED_ORDERS = sorted(
    PURGED_ORDERS + [o for o in ORIGINAL_ORDERS if o[3] == "2024-01-02" and o[1] in host.ERASED]
)


class TestHostProject:
    def test_installed_and_unconfigured_nothing_of_the_compliance_job_exists(self, story):
        unconfigured = story["unconfigured"]
        assert "model.shop_analytics.customer_revenue" in unconfigured
        # the audit is there, like dbt_artifacts' models
        assert "model.compliance.dbt_invocations" in unconfigured
        product = {u for u in unconfigured if ".compliance." in u}
        assert all(u.startswith("model.compliance.dbt_") for u in product), sorted(product)
        # no demo name, no source of the product's examples, no clash with the user's own crm
        assert not [u for u in unconfigured if u.startswith("source.compliance.")]

    def test_a_plain_build_deletes_nothing_and_misses_nothing(self, story):
        before = story["before"]
        output, state = story["build"]
        assert "Completed successfully" in output
        # the lake: the same rows and the same files, and no side table
        for table in host.LAKE_TABLES + [host.ID_TABLE]:
            assert state["tables"][table]["rows"] == before["tables"][table]["rows"], table
            assert state["tables"][table]["partitions"] == before["tables"][table]["partitions"], table
        assert {
            p: d for p, d in lake_files(state).items() if not p.startswith(f"{host.SCHEMA}.db")
        } == lake_files(before)
        assert state["side_tables"] == []
        # the compliance job did not run: the selector kept it out, and the product logged nothing
        assert state["purge_log"] is None and state["retention_log"] is None
        assert " purge " not in output and "compliance.purge" not in output
        # the user's mart was built, and carries its onboarding from its config
        assert mart(state)[3] == (1, 40.0)
        assert "customer_id" in state["tables"][host.MART]["descriptor"]
        # the audit works in the installed distribution: the invocation and the mart's column lineage
        assert [r["status"] for r in state["invocations"] if r["command"] == "build"] == ["success"]
        assert {
            r["column_name"]
            for r in state["column_lineage"]
            if r["model_unique_id"].endswith("customer_revenue")
        } >= {
            "customer_id",
            "revenue",
        }
        assert "audit: could not load" not in output

    def test_onboarding_writes_descriptors_and_nothing_else(self, story):
        _, built = story["build"]
        _, state = story["onboard"]
        assert json.loads(state["tables"]["sales.orders"]["descriptor"]) == {
            "complianceSpec": {"identifierField": "customer_id"}
        }
        assert json.loads(state["tables"]["crm.contacts"]["descriptor"]) == {
            "complianceSpec": {"identifierField": "person.id"}
        }
        assert lake_files(state) == lake_files(built)

    def test_the_dry_run_changes_nothing_and_names_what_the_purge_would_rewrite(self, story):
        _, onboarded = story["onboard"]
        _, state = story["dry"]
        for table in host.LAKE_TABLES + [host.MART]:
            assert state["tables"][table] == onboarded["tables"][table], table
        assert lake_files(state) == lake_files(onboarded)
        assert state["side_tables"] == []
        run = log_of(state, "purge_log", latest_invocation(state, "run"))
        assert keys(run, "DRY_RUN") == PURGED
        assert not keys(run, "COMMITTED")

    def test_the_purge_removes_the_rows_and_swaps_the_locations(self, story):
        _, dry = story["dry"]
        _, state = story["purge"]
        assert orders(state) == PURGED_ORDERS
        assert contact_ids(state) == [i for i, _, _ in sorted(host.CONTACTS) if i not in host.ERASED]
        assert not set(mart(state)) & host.ERASED and set(mart(state)) == {1, 2, 4, 5, 6}
        before = dry["tables"]["sales.orders"]["partitions"]
        after = state["tables"]["sales.orders"]["partitions"]
        for spec in ("order_date=2024-01-01", "order_date=2024-01-02"):
            assert re.fullmatch(
                re.escape(before[spec].rsplit("/", 1)[0]) + r"/\d{13}/" + spec, after[spec]
            ), after
        assert after["order_date=2024-01-03"] == before["order_date=2024-01-03"]  # no listed id: untouched
        contacts = state["tables"]["crm.contacts"]["location"]
        assert re.fullmatch(
            re.escape(dry["tables"]["crm.contacts"]["location"]) + r"/_purge_\d{13}", contacts
        )
        # every file the purge replaced is still there, for readers mid-query and the backups
        assert set(lake_files(dry)) <= set(lake_files(state))
        run = log_of(state, "purge_log", latest_invocation(state, "run"))
        assert keys(run, "COMMITTED") == PURGED
        assert keys(run, "SKIPPED") >= {("sales", "orders", "order_date=2024-01-03")}
        assert {r["rows_purged"] for r in run if r["partition_spec"] == "order_date=2024-01-02"} == {2}
        backups = [t for t in state["side_tables"] if "_backup_" in t]
        assert sorted(t.rsplit("_backup_", 1)[0] for t in backups) == [
            f"{host.SCHEMA}.customer_revenue",
            "crm.contacts",
            "sales.orders",
        ]
        assert {r["request_id"] for r in state["erasure_requests"]} == {"REQ-1", "REQ-2"}

    def test_a_restore_puts_the_partition_back_to_its_backup(self, story):
        _, dry = story["dry"]
        _, state = story["restore"]
        assert orders(state) == RESTORED_ORDERS
        partitions = state["tables"]["sales.orders"]["partitions"]
        assert (
            partitions[host.RESTORED_PARTITION]
            == dry["tables"]["sales.orders"]["partitions"][host.RESTORED_PARTITION]
        )
        assert [t for t in state["side_tables"] if t.startswith("sales.orders_trash_")]

    def test_retention_deletes_the_expired_copies_and_nothing_live(self, story):
        _, dry = story["dry"]
        _, purged = story["purge"]
        _, restored = story["restore"]
        _, state = story["retention"]
        # the live rows are the restore's
        for table in host.LAKE_TABLES + [host.MART]:
            assert state["tables"][table]["rows"] == restored["tables"][table]["rows"], table
        # every backup and the trash expired (7 days by default) and went
        assert state["side_tables"] == []
        files = lake_files(state)
        original = lake_files(dry)
        restored_dir = "sales.db/orders/" + host.RESTORED_PARTITION + "/"
        # the restored partition is live again: its files stay; every other pre-purge copy is gone
        for path in original:
            if path.startswith(restored_dir) or path.startswith("privacy.db/"):
                assert path in files, path
            elif path.startswith("sales.db/orders/order_date=2024-01-03/"):
                assert path in files, path  # never purged: live
            else:
                assert path not in files, f"the pre-purge copy {path} is still there"
        # the purged version of the restored partition (the restore's trash) is gone too
        trash = purged["tables"]["sales.orders"]["partitions"][host.RESTORED_PARTITION]
        trash = trash.removeprefix("file:").removeprefix(f"{story['warehouse']}/") + "/"
        assert [p for p in lake_files(purged) if p.startswith(trash)]
        assert not [p for p in files if p.startswith(trash)]
        attempts = log_of(state, "retention_log", latest_invocation(state, "run"))
        assert attempts and all(a["succeeded"] and not a["dry_run"] for a in attempts)
        assert {a["kind"] for a in attempts if a["action"] == "delete" and a["files_deleted"]} >= {
            "backup",
            "trash",
        }
        assert [
            a for a in attempts if a["action"] == "keep_data" and a["table_name"].startswith("orders_backup_")
        ], "the restored partition's data was not kept"

    def test_the_verifier_finds_the_restored_ids_and_the_ledger_certifies_nothing(self, story):
        """Requested in 2024, so overdue; the restore put their ids back, which the verification
        (the first, after the restore) read in the bytes of sales.orders: pending underneath."""
        _, state = story["ledger"]
        assert {r["request_id"]: (r["status"], r["progress"]) for r in state["erasure_requests"]} == {
            "REQ-1": ("overdue", "pending"),
            "REQ-2": ("overdue", "pending"),
        }
        assert all("sales.orders" in r["live_holding"] for r in state["erasure_requests"])

    def test_the_docs_show_what_the_purge_covers_and_no_example_source(self, story):
        manifest, catalog = story["manifest"], story["catalog"]
        inputs = {
            "source.shop_analytics.sales.orders",
            "source.shop_analytics.crm.contacts",
            "model.shop_analytics.customer_revenue",
        }
        assert inputs | {"source.compliance.compliance.id_table"} <= set(
            manifest["parent_map"]["model.compliance.purge"]
        )
        assert inputs <= set(manifest["parent_map"]["model.compliance.purge_verification"])
        sources = set(manifest["sources"])
        assert not {
            s for s in sources if s.startswith(("source.compliance.kafka.", "source.compliance.crm."))
        }
        assert [s for s in sources if ".crm." in s] == ["source.shop_analytics.crm.contacts"]
        # the product's overview page, shown under its project in the docs
        assert "doc.compliance.__compliance__" in manifest["docs"]
        assert "model.compliance.purge_log" in catalog["nodes"]
