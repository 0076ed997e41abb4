"""A user's own dbt project adopts the product exactly as the docs say, outside the repository.

The docs run as written: every `bash` block of README's "In your own dbt project" and of
docs/adopt.md is extracted from the Markdown and executed in order, with only the paths
substituted (`/path/to/...` is the clean checkout), `pip` the venv's, and each `dbt` command run
by tests/functional/adopt/host.py, which reads the lake back in the same process afterwards.
The files each step shows (the profile, packages.yml, the vars, onboarding.yml) are host.py's,
written before the step's commands run.

The runtime is installed with pip into a fresh venv from a clean checkout of this repository (what
`git archive` of the commit holds, with the working tree's changes to tracked files), pinned by its
constraints.txt; the dbt package comes through the project's packages.yml.  The project has its own
name, profile and databases (`sales.orders`: partitioned parquet, `customer_id`; `crm.contacts`:
ORC, `person.id`; the id table `privacy.erasure_ids`, column `subject_id`) and no compaction
inputs, and no selectors.yml.

The story: install, `dbt ls` before any var (nothing of the compliance job exists), the vars,
a plain `dbt build` with no selector (nothing deleted: dry runs that print the command), onboarding,
a purge dry run (nothing changed), a purge (rows gone, locations swapped), a restore, the
scheduled commands (the ids purged again, the ledger), `dbt docs generate` (every source in the
catalog with its columns, and in the site a headless Chromium renders), then retention at zero,
the request `erased`, its certificate written and re-checked.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, local_only
from tests.functional.adopt import docs_site, host
from tests.markdown_blocks import CHECKOUT_PLACEHOLDERS, markdown_section, shell_commands

pytestmark = [local_only, pytest.mark.slow]

HOST = Path(host.__file__)
# the placeholders the docs write for the checkout the user installs from
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


def docs_steps() -> list[tuple[str, list[str]]]:
    """(step, commands) in reading order: README's section, then each `## N.` step of docs/adopt.md."""
    readme = (REPO / "README.md").read_text()
    steps = [("readme", shell_commands(markdown_section(readme, "In your own dbt project")))]
    adopt = (REPO / "docs" / "adopt.md").read_text()
    for number, title in re.findall(r"^## (\d+)\. (.+)$", adopt, flags=re.MULTILINE):
        steps.append((number, shell_commands(markdown_section(adopt, f"{number}. {title}"))))
    return steps


class CommandFailed(AssertionError):
    """A command of the docs that exited non-zero; `output` is all it printed."""

    def __init__(self, label: str, output: str) -> None:
        # dbt's own lines, not the lake's state the host program prints after them
        shown = "\n".join(line for line in output.splitlines() if not line.startswith("HOST_STATE "))
        super().__init__(f"{label} failed:\n{shown[-6000:]}")
        self.output = output


class Host:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.venv = root / "venv"
        self.checkout = root / "checkout"
        self.project = root / host.PROJECT
        self.warehouse = root / "warehouse"
        self.metastore = root / "metastore_db"
        self.site = root / "docs_site"

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
        if done.returncode != 0:
            raise CommandFailed(label, output)
        return output

    def dbt(self, *args: str) -> tuple[str, dict[str, Any] | None]:
        """`dbt <args>` in a process of its own, and the lake's state it read afterwards (None when
        the command started no Spark session)."""
        output = self.run("dbt " + " ".join(args), str(self.venv / "bin" / "python"), str(HOST), "dbt", *args)
        return output, host_state(output)

    def shell(self, command: str) -> tuple[str, dict[str, Any] | None]:
        """One command of the docs, as written but for the checkout's path."""
        for placeholder in CHECKOUT_PLACEHOLDERS:
            command = command.replace(placeholder, str(self.checkout))
        argv = shlex.split(command, comments=True)
        if argv[0] == "pip":
            return self.run(command, str(self.venv / "bin" / "python"), "-m", "pip", *argv[1:]), None
        assert argv[0] == "dbt", f"the docs run only pip and dbt: {command}"
        if argv[1].startswith("-"):  # `dbt --version`: the installed script itself
            return self.run(command, str(self.venv / "bin" / "dbt"), *argv[1:]), None
        return self.dbt(*argv[1:])

    def write(self, name: str, text: str) -> None:
        path = self.project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def host_state(output: str) -> dict[str, Any] | None:
    line = next((x for x in output.splitlines() if x.startswith("HOST_STATE ")), None)
    return json.loads(line[len("HOST_STATE ") :]) if line else None


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


# the files each step of docs/adopt.md shows, written before its commands run
def files_of_step(site: Host, step: str) -> dict[str, str]:
    return {
        "2": {
            "dbt_project.yml": host.DBT_PROJECT,
            "profiles.yml": host.profile(str(site.warehouse), str(site.metastore)),
        },
        "3": {
            "packages.yml": host.packages(str(site.checkout)),
            "models/_sources.yml": host.SOURCES,
            "models/customer_revenue.sql": host.MART_SQL,
            "models/customer_revenue.yml": host.MART_YML,
        },
        "4": {"dbt_project.yml": host.DBT_PROJECT + host.VARS},
        "5": {"onboarding.yml": host.ONBOARDING},
        "12": {
            "seeds/store_locations.csv": host.STORE_LOCATIONS,
            "models/daily_revenue.sql": host.DAILY_REVENUE_SQL,
        },
        "13": {
            "seeds/coverage_exceptions.csv": host.COVERAGE_EXCEPTIONS,
            "dbt_project.yml": host.DBT_PROJECT + host.VARS + host.EXCEPTIONS_VAR,
        },
    }.get(step, {})


@pytest.fixture(scope="module")
def story(tmp_path_factory) -> dict[str, Any]:
    """Every command of the docs, run in order: {(step, command): (output, state)}."""
    started = time.monotonic()
    TIMINGS.clear()
    site = Host(tmp_path_factory.mktemp("adopt"))
    clean_checkout(site.checkout)
    site.project.mkdir()
    # the virtualenv the docs install into, and pip's own
    site.run("python -m venv", sys.executable, "-m", "venv", str(site.venv))
    out: dict[Any, Any] = {"warehouse": site.warehouse, "site": site.site}
    for step, commands in docs_steps():
        for name, text in files_of_step(site, step).items():
            site.write(name, text)
        for command in commands:
            try:
                out[(step, command)] = site.shell(command)
            except CommandFailed as failed:  # the tests of this step fail with it; the story goes on
                out[(step, command)] = (FAILED + failed.output, None)
            if command.startswith("dbt docs generate"):
                # the site as `dbt docs serve` would serve it, before later commands rewrite target/
                site.site.mkdir(exist_ok=True)
                for name in ("index.html", "manifest.json", "catalog.json"):
                    shutil.copy(site.project / "target" / name, site.site / name)
        if step == "readme":
            installed = site.run(
                "import check",
                str(site.venv / "bin" / "python"),
                "-c",
                "import dbt.adapters.lakehouse, python_hooks, sqlglot, openlineage.client, pyarrow; print(python_hooks.__file__)",
            )
            assert str(site.venv) in installed, installed
            site.run("pip check", str(site.venv / "bin" / "python"), "-m", "pip", "check")
            # the lake the user already has, written by other tools
            out["before"] = host_state(
                site.run(
                    "the user's lake",
                    str(site.venv / "bin" / "python"),
                    str(HOST),
                    "lake",
                    str(site.warehouse),
                    str(site.metastore),
                )
            )
    out["manifest"] = json.loads((site.site / "manifest.json").read_text())
    out["catalog"] = json.loads((site.site / "catalog.json").read_text())
    certificate = site.project / "target" / "erasure" / "REQ-1.json"
    out["certificate"] = json.loads(certificate.read_text()) if certificate.exists() else None
    TIMINGS.append(("whole story", time.monotonic() - started))
    print("\nhost-project story, seconds per step:")
    for label, seconds in TIMINGS:
        print(f"  {seconds:7.1f}  {label}")
    return out


def step(story: dict[str, Any], number: str, prefix: str) -> tuple[str, dict[str, Any]]:
    """The (output, state) of the command of docs step `number` that starts with `prefix`."""
    found = [
        v for k, v in story.items() if isinstance(k, tuple) and k[0] == number and k[1].startswith(prefix)
    ]
    assert len(found) == 1, f"docs/adopt.md step {number} has {len(found)} commands starting {prefix!r}"
    output, _ = found[0]
    assert not output.startswith(FAILED), "\n".join(
        line for line in output.splitlines() if not line.startswith("HOST_STATE ")
    )[-6000:]
    return found[0]


FAILED = "FAILED: "


ZERO = "dbt run --select retention --vars '{backup_retention_days: 0"

ORIGINAL_ORDERS = sorted(host.ORDERS)
PURGED_ORDERS = [o for o in ORIGINAL_ORDERS if o[1] not in host.ERASED]
RESTORED_ORDERS = sorted(
    PURGED_ORDERS + [o for o in ORIGINAL_ORDERS if o[3] == "2024-01-02" and o[1] in host.ERASED]
)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def listed_nodes(output: str) -> set[str]:
    """The nodes `dbt ls` printed (`shop_analytics.customer_revenue`, `source:...`)."""
    found = set()
    for line in ANSI.sub("", output).splitlines():
        line = re.sub(r"^\d\d:\d\d:\d\d\s+", "", line.strip())
        if re.fullmatch(r"(source:)?\w+(\.\w+)+", line):
            found.add(line)
    return found


class TestHostProject:
    def test_the_docs_blocks_ran_as_written(self, story):
        ran = [k for k in story if isinstance(k, tuple)]
        commands = [command.split(" #")[0].strip() for _, command in ran]
        assert sum(c.startswith("pip install ") for c in commands) == 2  # README's and step 1's
        for expected in (
            "dbt deps",
            "dbt seed",
            "dbt build",
            "dbt run --select purge+ --vars '{purge_dry_run: true}'",
            "dbt run --select tag:erasure",
            "dbt docs generate",
            "dbt run-operation verify_certificate --args '{file: target/erasure/REQ-1.json}'",
        ):
            assert expected in commands, (expected, commands)
        # one version: `dbt --version` shows the adapter plugin's, the repository's
        from dbt.adapters.lakehouse.__version__ import version

        output, _ = story[
            ("readme", next(c for s, c in ran if s == "readme" and c.startswith("dbt --version")))
        ]
        assert re.search(r"lakehouse:?\s+" + re.escape(version) + r"\b", output), output[-2000:]

    def test_installed_and_unconfigured_nothing_of_the_compliance_job_exists(self, story):
        output, _ = step(story, "3", "dbt ls")
        unconfigured = listed_nodes(output)
        assert "shop_analytics.customer_revenue" in unconfigured, output[-3000:]
        # the audit is there, like dbt_artifacts' models
        assert "compliance.audit.dbt_invocations" in unconfigured
        product = {u for u in unconfigured if u.startswith(("compliance.", "source:compliance."))}
        assert all(u.startswith("compliance.audit.dbt_") for u in product), sorted(product)
        assert "source:shop_analytics.sales.orders" in unconfigured

    def test_a_plain_build_without_a_selector_deletes_nothing_and_says_the_command(self, story):
        before = story["before"]
        output, state = step(story, "6", "dbt build")
        assert "Completed successfully" in output
        # the purge and retention ran as dry runs, and said what does it
        assert "purge: not selected by name" in output
        assert "To purge, run `dbt run --select purge+`." in output
        assert "To delete, run `dbt run --select retention`." in output
        # the lake: the same rows, partitions and files (by checksum), and no side table
        for table in host.LAKE_TABLES + [host.ID_TABLE]:
            assert state["tables"][table]["rows"] == before["tables"][table]["rows"], table
            assert state["tables"][table]["partitions"] == before["tables"][table]["partitions"], table
            assert state["tables"][table]["location"] == before["tables"][table]["location"], table
        assert {
            p: d for p, d in lake_files(state).items() if not p.startswith(f"{host.SCHEMA}.db")
        } == lake_files(before)
        assert state["side_tables"] == []
        build = latest_invocation(state, "build")
        purge_rows = log_of(state, "purge_log", build)
        assert purge_rows and not keys(purge_rows, "COMMITTED"), purge_rows
        # every partition a purge would rewrite is listed, none rewritten
        assert keys(purge_rows, "DRY_RUN") == PURGED
        assert all(r["dry_run"] for r in log_of(state, "retention_log", build))
        # the user's mart was built, and carries its onboarding from its config
        assert mart(state)[3] == (1, 40.0)
        assert "customer_id" in state["tables"][host.MART]["descriptor"]
        # the audit works in the installed distribution: the invocation and the mart's column lineage
        assert [r["status"] for r in state["invocations"] if r["command"] == "build"] == ["success"]
        assert {
            r["column_name"]
            for r in state["column_lineage"]
            if r["model_unique_id"].endswith("customer_revenue")
        } >= {"customer_id", "revenue"}
        assert "audit: could not load" not in output

    def test_onboarding_writes_descriptors_and_nothing_else(self, story):
        built = story["before"]
        _, state = step(story, "5", "dbt run-operation onboard_tables")
        assert json.loads(state["tables"]["sales.orders"]["descriptor"]) == {
            "complianceSpec": {"identifierField": "customer_id"}
        }
        assert json.loads(state["tables"]["crm.contacts"]["descriptor"]) == {
            "complianceSpec": {"identifierField": "person.id"}
        }
        assert lake_files(state) == lake_files(built)

    def test_the_dry_run_changes_nothing_and_names_what_the_purge_would_rewrite(self, story):
        _, onboarded = step(story, "6", "dbt build")
        _, state = step(story, "7", "dbt run --select purge+")
        for table in host.LAKE_TABLES + [host.MART]:
            assert state["tables"][table] == onboarded["tables"][table], table
        assert lake_files(state) == lake_files(onboarded)
        assert state["side_tables"] == []
        run = log_of(state, "purge_log", latest_invocation(state, "run"))
        assert keys(run, "DRY_RUN") == PURGED
        assert not keys(run, "COMMITTED")

    def test_the_purge_removes_the_rows_and_swaps_the_locations(self, story):
        _, dry = step(story, "7", "dbt run --select purge+")
        _, state = step(story, "8", "dbt run --select purge+")
        assert orders(state) == PURGED_ORDERS
        assert contact_ids(state) == [i for i, _, _ in sorted(host.CONTACTS) if i not in host.ERASED]
        assert not set(mart(state)) & host.ERASED and set(mart(state)) == {1, 2, 4, 5, 6}
        before = dry["tables"]["sales.orders"]["partitions"]
        after = state["tables"]["sales.orders"]["partitions"]
        for spec in ("order_date=2024-01-01", "order_date=2024-01-02"):
            # docs/adopt.md step 8: <table location>/<ts>/<partition path>
            assert re.fullmatch(
                re.escape(before[spec].rsplit("/", 1)[0]) + r"/\d{13}/" + spec, after[spec]
            ), after
        assert after["order_date=2024-01-03"] == before["order_date=2024-01-03"]  # no listed id: untouched
        # docs/adopt.md step 8: an unpartitioned table's beside it, at <table location>__purge_<ts>
        contacts = state["tables"]["crm.contacts"]["location"]
        assert re.fullmatch(
            re.escape(dry["tables"]["crm.contacts"]["location"]) + r"__purge_\d{13}", contacts
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
        _, dry = step(story, "7", "dbt run --select purge+")
        _, state = step(story, "8", "dbt run-operation restore")
        assert orders(state) == RESTORED_ORDERS
        partitions = state["tables"]["sales.orders"]["partitions"]
        assert (
            partitions[host.RESTORED_PARTITION]
            == dry["tables"]["sales.orders"]["partitions"][host.RESTORED_PARTITION]
        )
        assert [t for t in state["side_tables"] if t.startswith("sales.orders_trash_")]

    def test_the_scheduled_purge_removes_the_restored_ids_and_the_ledger_waits_for_the_copies(self, story):
        _, state = step(story, "9", "dbt run --select purge+")
        assert orders(state) == PURGED_ORDERS
        run = log_of(state, "purge_log", latest_invocation(state, "run"))
        assert keys(run, "COMMITTED") == {("sales", "orders", host.RESTORED_PARTITION)}
        _, verified = step(story, "9", "dbt run --select tag:erasure")
        ledger = {r["request_id"]: r for r in verified["erasure_requests"]}
        assert {r: row["status"] for r, row in ledger.items()} == {
            "REQ-1": "copies_remaining",
            "REQ-2": "copies_remaining",
        }
        assert all(row["copies_holding"] for row in ledger.values())
        # the scheduled retention: nothing is due yet (7 days), nothing is deleted
        _, kept = step(story, "9", "dbt run --select retention")
        attempts = log_of(kept, "retention_log", latest_invocation(kept, "run"))
        assert not [a for a in attempts if a["files_deleted"]], attempts
        assert kept["side_tables"] == verified["side_tables"] != []

    def test_the_catalog_holds_every_source_with_its_columns(self, story):
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
        # every source the product reads, in the catalog with its columns
        assert sources == set(catalog["sources"]), sorted(sources ^ set(catalog["sources"]))
        columns = {s: set(catalog["sources"][s]["columns"]) for s in sources}
        assert columns["source.shop_analytics.sales.orders"] >= {
            "order_id",
            "customer_id",
            "amount",
            "order_date",
        }
        assert columns["source.shop_analytics.crm.contacts"] >= {"person", "email"}
        assert columns["source.compliance.compliance.id_table"] >= {
            "subject_id",
            "request_id",
            "requested_at",
        }
        # the product's overview page, shown under its project in the docs
        assert "doc.compliance.__compliance__" in manifest["docs"]
        assert "model.compliance.purge_log" in catalog["nodes"]
        assert "model.compliance.purge" in manifest["child_map"]["source.shop_analytics.sales.orders"]

    def test_the_docs_site_shows_the_onboarded_table_in_a_browser(self, story):
        if docs_site.browser() is None:
            pytest.fail("no Chromium: `make test-long` installs Debian's chromium (`make chromium`)")
        dom = docs_site.render(story["site"], "source/source.shop_analytics.sales.orders")
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom))
        assert "orders" in text and "One row per order" in text, text[:3000]
        for column in ("order_id", "customer_id", "amount", "order_date"):
            assert column in text, column
        # the lineage edge, as the page shows it: the purge references the table
        referenced = text[text.index("Referenced By") :]
        assert re.search(r"\bpurge\b", referenced), referenced[:3000]

    def test_retention_at_zero_deletes_every_pre_purge_copy_and_nothing_live(self, story):
        _, dry = step(story, "7", "dbt run --select purge+")
        _, purged = step(story, "9", "dbt run --select purge+")
        _, state = step(story, "11", ZERO)
        for table in host.LAKE_TABLES + [host.MART]:
            assert state["tables"][table]["rows"] == purged["tables"][table]["rows"], table
        assert state["side_tables"] == []
        files = lake_files(state)
        for path in lake_files(dry):
            if path.startswith(("privacy.db/", "sales.db/orders/order_date=2024-01-03/")):
                assert path in files, path  # never purged: live
            else:
                assert path not in files, f"the pre-purge copy {path} is still there"
        attempts = log_of(state, "retention_log", latest_invocation(state, "run"))
        assert attempts and all(a["succeeded"] and not a["dry_run"] for a in attempts)
        assert {a["kind"] for a in attempts if a["action"] == "delete" and a["files_deleted"]} >= {
            "backup",
            "trash",
        }

    def test_the_request_is_erased_and_its_certificate_verifies(self, story):
        _, state = step(story, "11", "dbt run --select tag:erasure")
        assert {r["request_id"]: r["status"] for r in state["erasure_requests"]} == {
            "REQ-1": "erased",
            "REQ-2": "erased",
        }
        certificate = story["certificate"]
        assert certificate and certificate["document"] == "erasure certificate"
        assert (certificate["request"]["request_id"], certificate["request"]["status"]) == ("REQ-1", "erased")
        from dbt.adapters.lakehouse.__version__ import version

        assert certificate["product"]["version"] == certificate["product"]["package_version"] == version
        output, _ = step(story, "11", "dbt run-operation verify_certificate")
        assert "target/erasure/REQ-1.json verifies" in output

    def test_the_coverage_gate_names_a_table_and_a_model_of_the_user_s_own(self, story):
        """Step 12: a seed with a field named like an identifier in use (loaded, no descriptor), and a
        model built from an onboarded table, fail `assert_pii_coverage_complete` in the build that
        adds the model, each named with its kind of finding and what to do."""
        step(story, "12", "dbt seed --select store_locations")  # loaded, without a descriptor
        found = [
            v
            for k, v in story.items()
            if isinstance(k, tuple) and k[0] == "12" and k[1].startswith("dbt build")
        ]
        assert len(found) == 1, found
        output, _ = found[0]
        assert output.startswith(FAILED), output[-3000:]
        text = ANSI.sub("", output)
        assert "assert_pii_coverage_complete" in text, text[-3000:]
        assert (
            f"pii_coverage: {host.SCHEMA}.daily_revenue (downstream_of_onboarded): downstream of sales.orders."
            in text
        ), text[-3000:]
        assert (
            f"pii_coverage: {host.SCHEMA}.store_locations (pii_column_without_descriptor): fields id." in text
        )

    def test_the_user_s_exceptions_seed_excepts_both_with_their_reasons(self, story):
        """Step 13: the user's seed, named by var pii_coverage_exceptions, excepts both tables; the
        build passes and pii_coverage shows each `excepted` with its reason."""
        _, state = step(story, "13", "dbt build --select coverage_exceptions")
        rows = {
            (r["table_id"], r["finding"]): (r["status"], r["exception_reason"]) for r in state["pii_coverage"]
        }
        assert rows[(f"{host.SCHEMA}.store_locations", "pii_column_without_descriptor")] == (
            "excepted",
            "store ids: no person",
        )
        assert rows[(f"{host.SCHEMA}.daily_revenue", "downstream_of_onboarded")] == (
            "excepted",
            "daily sums over every customer: no customer id",
        )
        assert [key for key, (status, _) in rows.items() if status != "excepted"] == []
