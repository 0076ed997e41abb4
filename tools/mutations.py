"""`make test-mutations`: deliberate bugs, each applied to a copy of the repository, and the tests
that must catch it.  A mutant the tests do not kill fails the run.

    .venv/bin/python -m tools.mutations                          # every mutant, two at a time
    .venv/bin/python -m tools.mutations --only drop-retention-minimum skip-the-row-check
    .venv/bin/python -m tools.mutations --docs docs/safety.md    # and write the table into the doc

A run cannot shrink without saying so:

- the tests of every chosen mutant run first on an unmutated copy; when one of them fails there, no
  mutant runs and the run fails (a kill by a test that fails anyway proves nothing).  In CI the
  suite that just ran on the same checkout is that first run: `--baseline-report` reads its JUnit
  report, and every mutant's test must have passed in it;
- a mutant whose snippet does not occur exactly once in its file is NOT APPLIED: a failure of that
  mutant, reported, while the others still run;
- a mutant is killed only by an assertion failing in one of its named tests (`assert`,
  `pytest.fail`, `pytest.raises` that did not raise): a test that errors in a fixture, raises
  another exception, is skipped or is not found is an ERROR, never a kill.

Each mutant is one or more exact edits of product files, made in a copy of the files git tracks or
would track (the working tree, not HEAD); its tests run there with this repository's virtualenv,
with the copy first on `PYTHONPATH` (the adapter's sources too), so `python_hooks`, the adapter, the
macros the test projects copy (tests/conftest.py `repo_files`) and FileFacts.java all come from it.
The outcome of each test comes from pytest's JUnit XML report, not from its exit code.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# where `--docs` writes the table: between these two lines of the document
TABLE_START = "<!-- mutations: the table below is written by `python -m tools.mutations --docs` -->"
TABLE_END = "<!-- mutations: end of the table -->"


@dataclass(frozen=True)
class Edit:
    """One exact snippet of one file, replaced."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Mutant:
    name: str
    bug: str
    edits: tuple[Edit, ...]
    tests: tuple[str, ...]  # pytest node ids: each mutant runs only these; their assertions kill it
    # tests run first, in the same pytest process, that build the state its tests read (a story
    # class's earlier steps): they must pass, mutated or not, and never count as a kill
    before: tuple[str, ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(edit.path for edit in self.edits))


def one(path: str, old: str, new: str) -> tuple[Edit, ...]:
    return (Edit(path, old, new),)


# the erasure story: its tests share one lake and run in order, each a step of the request's life
STORY = "tests/functional/erasure/test_erasure_requests.py::TestErasureRequests"
# the Delta Lake purge's story: a dry run, then the purge whose bytes its later tests read
DELTA = "tests/functional/purge/test_delta.py::TestDeltaPurge"
# the evidence over Delta tables: after the purge, then after a VACUUM
DELTA_EVIDENCE = "tests/functional/erasure/test_delta_evidence.py::TestDeltaEvidence"
# the Iceberg purge's story (a dry run, then the purge) and the Iceberg evidence's (the purge,
# a tag, retention, the verifier)
ICEBERG = "tests/functional/purge/test_iceberg.py::TestIcebergPurge"
ICEBERG_EVIDENCE = "tests/functional/erasure/test_iceberg_evidence.py::TestIcebergEvidence"

MUTANTS = (
    Mutant(
        "list-without-hidden-copies",
        "the purge's listing hides every `_` name again (a `_k=v` file Spark reads is left out)",
        one(
            "python_hooks/catalog/FileFacts.java",
            'if (name.startsWith(".") || name.endsWith("._COPYING_")) return true;',
            'if (name.startsWith(".") || name.startsWith("_")) return true;',
        ),
        ("tests/python_hooks/test_footer_rows.py::test_the_hidden_rule_is_sparks",),
    ),
    Mutant(
        "footer-rule-off-by-one",
        "the footer rule rules out a file whose smallest or largest identifier is a listed id",
        one(
            "python_hooks/catalog/file_facts.py",
            "if not (int(group.max) < bounds[0] or int(group.min) > bounds[1]):",
            "if not (int(group.max) <= bounds[0] or int(group.min) >= bounds[1]):",
        ),
        (
            "tests/functional/purge/test_data_skipping.py::TestScanNarrowedByFooters::"
            "test_an_id_at_the_bound_of_a_file_is_purged",
        ),
    ),
    Mutant(
        "drop-retention-minimum",
        "a retention under retention_min_hours is no longer refused",
        one(
            "python_hooks/retention/policy.py",
            "if unit is not None and not allow_short and float(str(value).strip()) * unit < floor:",
            "if unit is not None and False and float(str(value).strip()) * unit < floor:",
        ),
        ("tests/python_hooks/test_policy.py::test_a_retention_under_the_minimum_is_refused_unless_allowed",),
    ),
    Mutant(
        "skip-the-commit-check",
        "the purge swaps a partition whose files changed since the rewrite read them",
        one(
            "python_hooks/purge/committing.py",
            "elif changed := listing.changes_since(run.ledger.entry(part).files):",
            "elif changed := '':",
        ),
        (
            "tests/functional/purge/test_concurrent_writer.py::TestConcurrentWriter::"
            "test_a_caught_change_is_not_swapped_and_is_cleaned_up",
        ),
    ),
    Mutant(
        "swap-before-the-backup",
        "the backup starts after the swaps (the state table and the commit check let a rewritten"
        " partition through): the purge completes, but each swap happens with no backup of the old data",
        (
            Edit(
                "python_hooks/purge/table_purge.py",
                "    committing.start_backup,  # on a background thread, during the rewrite\n",
                "",
            ),
            Edit(
                "python_hooks/purge/table_purge.py",
                "    committing.swap,  # CHECKED -> SWAPPED\n",
                "    committing.swap,  # CHECKED -> SWAPPED\n    committing.start_backup,\n",
            ),
            Edit(
                "python_hooks/purge/states.py",
                "    (State.BACKED_UP, Step.COMMIT_CHECK): State.CHECKED,\n",
                "    (State.BACKED_UP, Step.COMMIT_CHECK): State.CHECKED,\n"
                "    (State.REWRITTEN, Step.COMMIT_CHECK): State.CHECKED,\n",
            ),
            Edit(
                "python_hooks/purge/committing.py",
                "    backed_up = run.ledger.parts(State.BACKED_UP)\n",
                "    backed_up = run.ledger.parts(State.REWRITTEN, State.BACKED_UP)\n",
            ),
        ),
        (
            "tests/functional/purge/test_engine.py::TestSwapsInOneCall::test_every_swap_finds_its_backup_in_place",
        ),
    ),
    Mutant(
        "swap-after-a-failed-backup",
        "the backup table's failure is ignored: its partitions go on towards their swaps",
        one(
            "python_hooks/purge/committing.py",
            "    error = join_backup(run)\n    if error is not None:\n",
            "    error = join_backup(run)\n    if False:\n",
        ),
        (
            "tests/functional/purge/test_purge_failures.py::TestPurgeFailures::"
            "test_a_backup_that_cannot_be_made_stops_every_swap_and_leaves_nothing_behind",
        ),
    ),
    Mutant(
        "skip-the-row-check",
        "the row check counts the rewrite but no longer compares it: a rewrite that lost rows is swapped in",
        one(
            "python_hooks/purge/rewriting.py",
            "        if after is None or after != expected:\n",
            "        if after is None:\n",
        ),
        (
            "tests/functional/purge/test_purge_failures.py::TestPurgeFailures::test_a_rewrite_that_loses_rows_is_never_swapped",
        ),
    ),
    Mutant(
        "forget-a-journal-entry",
        "the purge writes no journal intent before a table's staging table and swap",
        one("python_hooks/purge/committing.py", "    run.node.journal.record_intent(run.intent)\n", ""),
        (
            "tests/functional/purge/test_engine.py::TestJournalRecovery::test_purge_log_is_completed_from_the_journal",
        ),
    ),
    Mutant(
        "future-retention-clock",
        "a retention_now in the future is taken as the time: every backup and staging table is due at once",
        one(
            "python_hooks/catalog/clock.py",
            "    if moved > FUTURE_TOLERANCE_MS and allow_future is not True:\n",
            "    if False:\n",
        ),
        ("tests/python_hooks/test_policy.py::test_a_clock_in_the_future_is_refused_unless_allowed",),
    ),
    Mutant(
        "lapsed-exemption-still-exempts",
        "an exemption whose review date has passed still keeps a request's ids as retained_exempt",
        one(
            "macros/erasure/exemptions.sql",
            "{%- set lapsed = exemption.review_date < today -%}",
            "{%- set lapsed = false -%}",
        ),
        (
            "tests/functional/erasure/test_exemptions.py::TestExemptions::test_a_lapsed_exemption_stops_exempting",
        ),
    ),
    Mutant(
        "verifier-counts-one-row-too-few",
        "the verifier counts one row fewer per file and request",
        one(
            "python_hooks/erasure/verification.py",
            "return {(_decoded(str(r[0])), r[1]): int(r[2]) for r in counted}",
            "return {(_decoded(str(r[0])), r[1]): int(r[2]) - 1 for r in counted}",
        ),
        (
            "tests/functional/erasure/test_copy_kinds.py::TestEveryCopyKind::test_ids_in_every_copy_kind_are_found",
        ),
    ),
    Mutant(
        "verifier-forgets-the-journal",
        "the verifier reads no location only the purge journal names",
        one(
            "python_hooks/erasure/locations.py",
            "entries = [e for e in Journal(spark).read_entries() if in_scope(scope, e.intent.database, e.intent.table)]",
            "entries = []",
        ),
        (
            "tests/functional/erasure/test_copy_kinds.py::TestEveryCopyKind::test_ids_in_every_copy_kind_are_found",
        ),
    ),
    Mutant(
        "erased-one-step-early",
        "the ledger says `erased` without a verification after the last deletion of a copy",
        one(
            "macros/erasure/requests.sql",
            "                facts.copy_rows = 0 and facts.unread_copies = 0\n"
            "                and (facts.last_deletion_at is null or facts.verified_at > facts.last_deletion_at)\n",
            "                facts.copy_rows = 0 and facts.unread_copies = 0\n",
        ),
        (
            "tests/functional/erasure/test_copy_kinds.py::TestEveryCopyKind::"
            "test_a_deletion_after_the_last_verification_holds_erased_back",
        ),
    ),
    Mutant(
        "certificate-check-ignores-its-files",
        "verify_certificate checks only the table parts: not the .json, .evidence.txt, .md or warehouse",
        one(
            "python_hooks/erasure/certificate.py",
            "rows = _file_checks(doc, json_path, spark, schema)",
            "rows: list[dict[str, Any]] = []",
        ),
        (f"{STORY}::test_verify_certificate_names_each_part_that_changed",),
        before=tuple(
            f"{STORY}::{step}"
            for step in (
                "test_a_dry_run_serves_no_request",
                "test_a_purge_alone_certifies_nothing_until_a_verification_reads_the_bytes",
                "test_the_verification_finds_the_backups_holding_its_ids",
                "test_a_restore_then_a_verification_reintroduces_the_request",
                "test_a_rebuild_writing_an_id_back_reintroduces_the_request",
                "test_a_certificate_is_refused_before_the_request_is_erased",
                "test_retention_alone_does_not_erase_a_fresh_verification_does",
                "test_the_certificate_names_what_it_rests_on_and_no_id",
            )
        ),
    ),
    Mutant(
        "delta-delete-only-marks",
        "the purge of a Delta table with deletion vectors deletes without its REORG: the rows are"
        " only marked, their bytes stay in the live files",
        (
            Edit(
                "python_hooks/purge/delta.py",
                '    with _session_setting(spark, MERGE_DELETION_VECTORS, "false"):',
                '    with _session_setting(spark, MERGE_DELETION_VECTORS, "true"):',
            ),
            Edit(
                "python_hooks/purge/delta.py",
                "    reorg = table.deletion_vectors and deletion_vectors_left(spark, table, after)",
                "    reorg = False",
            ),
        ),
        (f"{DELTA}::test_the_live_files_hold_no_id_once_the_deletion_vectors_are_purged",),
        before=(
            f"{DELTA}::test_a_dry_run_says_what_it_would_delete_and_changes_no_version",
            f"{DELTA}::test_one_command_purges_hive_and_delta_tables",
        ),
    ),
    Mutant(
        "delta-deletion-vectors-assumed-gone",
        "the purge takes a Delta table for free of deletion vectors whatever its checksum counts: rows"
        " someone else's delete (or a stopped run) only marked stay in the live files' bytes",
        one(
            "python_hooks/purge/delta.py",
            "    return counted is None or int(counted) > 0",
            "    return False",
        ),
        (f"{DELTA}::test_a_run_stopped_between_its_delete_and_its_reorg_is_finished_by_the_next",),
        before=(
            f"{DELTA}::test_a_dry_run_says_what_it_would_delete_and_changes_no_version",
            f"{DELTA}::test_one_command_purges_hive_and_delta_tables",
        ),
    ),
    Mutant(
        "iceberg-delete-files-left",
        "the purge of a merge-on-read Iceberg table skips its rewrites: its delete files hide the"
        " rows, which stay in the live data files' bytes",
        one(
            "python_hooks/purge/iceberg.py",
            "    if not found:\n        return False",
            "    if True:\n        return False",
        ),
        (f"{ICEBERG}::test_one_command_purges_hive_and_iceberg_tables_and_no_live_file_keeps_an_id",),
        before=(f"{ICEBERG}::test_a_dry_run_says_what_it_would_delete_and_changes_no_snapshot",),
    ),
    Mutant(
        "iceberg-manifests-keep-removed-entries",
        "the purge of an Iceberg table does not rewrite its manifests: the current snapshot keeps the"
        " entry of each removed data file, its statistics the purged ids, after every older snapshot expired",
        one(
            "python_hooks/purge/iceberg.py",
            '    _run(spark, table, "rewrite_manifests", statements["rewrite_manifests"])\n',
            "",
        ),
        (f"{ICEBERG}::test_one_command_purges_hive_and_iceberg_tables_and_no_live_file_keeps_an_id",),
        before=(f"{ICEBERG}::test_a_dry_run_says_what_it_would_delete_and_changes_no_snapshot",),
    ),
    Mutant(
        "iceberg-metadata-unread",
        "the verifier leaves out an Iceberg table's `metadata/`, whose manifests keep each file's"
        " smallest and largest identifier",
        one(
            "python_hooks/erasure/iceberg_copies.py",
            '        found.add(spark, metadata, METADATA, owner, f"{name} metadata/", metadata_key)',
            "        pass",
        ),
        (f"{ICEBERG_EVIDENCE}::test_the_purge_leaves_the_id_in_the_older_snapshot_only",),
    ),
    Mutant(
        "iceberg-manifests-read-compressed",
        "the verifier searches an Iceberg manifest's bytes as written, compressed: no statistic is"
        " ever found in them",
        one(
            "python_hooks/erasure/iceberg_copies.py",
            "            content = avro_bytes(content, path)",
            "            pass",
        ),
        (f"{ICEBERG_EVIDENCE}::test_the_purge_leaves_the_id_in_the_older_snapshot_only",),
    ),
    Mutant(
        "iceberg-older-snapshots-unread",
        "the verifier reads an Iceberg table's current snapshot only: a data file only an older"
        " snapshot references, readable by time travel, is never read",
        one(
            "python_hooks/erasure/iceberg_copies.py",
            "    everything = listed | table.data_files | table.older_data_files | table.delete_files",
            "    everything = table.data_files",
        ),
        (f"{ICEBERG_EVIDENCE}::test_the_purge_leaves_the_id_in_the_older_snapshot_only",),
    ),
    Mutant(
        "iceberg-tags-unreported",
        "retention says nothing of an Iceberg tag that keeps an older snapshot, and its ids, past the horizon",
        one(
            "python_hooks/retention/iceberg_snapshots.py",
            "        _report_refs(spark, log, database, table, this.name, location)\n",
            "",
        ),
        (f"{ICEBERG_EVIDENCE}::test_retention_reports_the_tag_and_keeps_what_it_pins",),
        before=(f"{ICEBERG_EVIDENCE}::test_the_purge_leaves_the_id_in_the_older_snapshot_only",),
    ),
    Mutant(
        "verifier-skips-delta-tables",
        "the verifier does not see an onboarded Delta table (its descriptor is in Delta's log), so"
        " a request whose ids its older versions hold can be certified erased",
        one(
            "python_hooks/erasure/locations.py",
            "        elif metastore.table_property(spark, meta, DESCRIPTOR) is not None:",
            "        elif meta.properties().get(DESCRIPTOR).isDefined():",
        ),
        (f"{DELTA_EVIDENCE}::test_after_the_purge_older_versions_change_data_and_log_hold_the_ids",),
    ),
    Mutant(
        "delta-change-data-unread",
        "the verifier leaves out a Delta table's `_change_data/`, where the change data feed keeps"
        " each deleted row whole",
        one("python_hooks/erasure/delta_copies.py", '        ("_change_data", CHANGE_DATA, data_key),\n', ""),
        (f"{DELTA_EVIDENCE}::test_after_the_purge_older_versions_change_data_and_log_hold_the_ids",),
    ),
    Mutant(
        "delta-log-unread",
        "the verifier leaves out a Delta table's `_delta_log/`, whose statistics and predicates keep"
        " ids after every data file that held them is vacuumed",
        one("python_hooks/erasure/delta_copies.py", '        ("_delta_log", LOG, log_key),\n', ""),
        (f"{DELTA_EVIDENCE}::test_after_the_purge_older_versions_change_data_and_log_hold_the_ids",),
    ),
    Mutant(
        "delta-log-statistics-unread",
        "the verifier reads a Delta log's predicates and not its statistics, whose smallest and"
        " largest values are ids",
        one(
            "python_hooks/erasure/delta_copies.py",
            "    return from_stats.unionByName(words), numbered",
            "    return words, numbered",
        ),
        (f"{DELTA_EVIDENCE}::test_after_the_purge_older_versions_change_data_and_log_hold_the_ids",),
    ),
    Mutant(
        "delta-vacuum-overrides-on-its-own",
        "retention overrides Delta's retentionDurationCheck without retention_allow_short: a short"
        " backup_retention_days vacuums versions Delta's own horizon keeps",
        one(
            "python_hooks/retention/delta_versions.py",
            '            if "retentionDurationCheck" not in str(exc) or not allow_short:',
            '            if "retentionDurationCheck" not in str(exc):',
        ),
        (f"{DELTA_EVIDENCE}::test_retention_vacuums_past_the_policy_only_when_delta_s_check_is_overridden",),
        before=(f"{DELTA_EVIDENCE}::test_after_the_purge_older_versions_change_data_and_log_hold_the_ids",),
    ),
    Mutant(
        "delta-log-predicates-unread",
        "the verifier reads a Delta log's statistics and not its commits' predicates, where a"
        " user's `DELETE ... WHERE id = <id>` keeps the id",
        one(
            "python_hooks/erasure/delta_copies.py",
            "    return from_stats.unionByName(words), numbered",
            "    return from_stats, numbered",
        ),
        (f"{DELTA_EVIDENCE}::test_after_the_purge_older_versions_change_data_and_log_hold_the_ids",),
    ),
)


# Mutants whose tests build an erasure lake through a dozen dbt commands (2.5 to 4 minutes each),
# or the Delta Lake or Iceberg evidence's story: `--fast` (CI, whose hour they would overrun)
# leaves them to `make test-mutations`, and says so.  One of each evidence's mutants (the Delta
# log, the Iceberg metadata) and the purges' run in CI.
SLOW = frozenset(
    {
        "iceberg-manifests-read-compressed",
        "iceberg-older-snapshots-unread",
        "iceberg-tags-unreported",
        "verifier-skips-delta-tables",
        "delta-change-data-unread",
        "delta-log-statistics-unread",
        "delta-log-predicates-unread",
        "delta-vacuum-overrides-on-its-own",
        "lapsed-exemption-still-exempts",
        "verifier-counts-one-row-too-few",
        "verifier-forgets-the-journal",
        "erased-one-step-early",
        "certificate-check-ignores-its-files",
    }
)


# ---- applying ----------------------------------------------------------------------------------
def tracked_files(root: Path) -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        check=True,
        capture_output=True,
    ).stdout.decode()
    return [name for name in listed.split("\0") if name and (root / name).is_file()]


def copy_of(root: Path, into: Path) -> Path:
    for name in tracked_files(root):
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target)
    return into


def not_applicable(root: Path, mutant: Mutant) -> list[str]:
    """Why `mutant` cannot be applied to the files under `root` (empty: it can): each edit's snippet
    must occur exactly once, so a mutant that no longer fits the code is seen, never skipped."""
    problems = []
    for edit in mutant.edits:
        path = root / edit.path
        count = path.read_text(encoding="utf-8").count(edit.old) if path.is_file() else 0
        if count != 1:
            problems.append(
                f"{edit.path}: the snippet occurs {count} time(s), not once: {edit.old.strip()[:80]!r}"
            )
    return problems


def apply(root: Path, mutant: Mutant) -> None:
    for edit in mutant.edits:
        path = root / edit.path
        path.write_text(path.read_text(encoding="utf-8").replace(edit.old, edit.new, 1), encoding="utf-8")


# ---- running and judging -----------------------------------------------------------------------
@dataclass
class TestResult:
    node: str
    outcome: str  # passed | assertion | failed | error | skipped
    message: str = ""


ASSERTION = ("AssertionError", "assert ", "Failed: ")


def results_of(report: Path) -> list[TestResult]:
    """Each test case of a JUnit XML report, with how it ended; an assertion is told apart from
    any other failure by the message pytest gives it."""
    if not report.is_file():
        return []
    found = []
    for case in ET.parse(report).getroot().iter("testcase"):
        node = f"{case.get('classname', '')}::{case.get('name', '')}"
        failure, error, skipped = case.find("failure"), case.find("error"), case.find("skipped")
        if error is not None:
            found.append(TestResult(node, "error", error.get("message", "")))
        elif failure is not None:
            message = failure.get("message", "")
            found.append(
                TestResult(node, "assertion" if message.startswith(ASSERTION) else "failed", message)
            )
        elif skipped is not None:
            found.append(TestResult(node, "skipped", skipped.get("message", "")))
        else:
            found.append(TestResult(node, "passed"))
    return found


def run_tests(copy: Path, tests: list[str], report: Path) -> tuple[list[TestResult], str]:
    """The tests, in the copy, one pytest process: each test's result and the end of the output."""
    env = {
        **os.environ,
        "PYTHONPATH": f"{copy}{os.pathsep}{copy / 'adapter' / 'src'}",
        "DBT_PROFILES_DIR": str(copy),
    }
    pytest = [
        str(ROOT / ".venv" / "bin" / "pytest"), "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit2",
        f"--junitxml={report}", *tests,
    ]  # fmt: skip
    done = subprocess.run(pytest, cwd=copy, env=env, capture_output=True, text=True)
    return results_of(report), (done.stdout + done.stderr)[-6000:]


@dataclass
class Verdict:
    mutant: Mutant
    outcome: str  # killed | SURVIVED | NOT APPLIED | ERROR
    seconds: float
    detail: str  # the killing assertion, or what went wrong
    output: str = ""

    @property
    def killed(self) -> bool:
        return self.outcome == "killed"


def judge(results: list[TestResult], killers: tuple[str, ...] | None = None) -> tuple[str, str]:
    """(outcome, detail) of a mutant from its tests' results; with `killers` (node ids), only an
    assertion of one of those tests kills (any other test is a step before them)."""
    if not results:
        return "ERROR", "no test ran (not found, or pytest failed before collecting)"
    for result in results:
        if result.outcome == "assertion" and (killers is None or any(named(result, k) for k in killers)):
            first = result.message.splitlines()[0] if result.message else ""
            return "killed", f"`{short_name(result)}`: {first[:100]}"
    wrong = [r for r in results if r.outcome != "passed"]
    if wrong:
        return "ERROR", "; ".join(
            f"{r.node}: {r.outcome} ({r.message.splitlines()[0][:120] if r.message else ''})" for r in wrong
        )
    return "SURVIVED", f"{len(results)} test(s) passed"


def short_name(result: TestResult) -> str:
    """`Class::test[param]` (or `module::test[param]`) of a JUnit result, for the table."""
    classname, _, name = result.node.rpartition("::")
    return f"{classname.rsplit('.', 1)[-1]}::{name}"


def named(result: TestResult, test: str) -> bool:
    """Whether a JUnit result is the test a node id names (a parameter of it, or a test of a class)."""
    node = node_of(result).split("[")[0]
    return node == test or node.startswith(test + "::")


def run_mutant(mutant: Mutant) -> Verdict:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"mutant-{mutant.name}-") as tmp:
        copy = copy_of(ROOT, Path(tmp) / "repo")
        problems = not_applicable(copy, mutant)
        if problems:
            return Verdict(mutant, "NOT APPLIED", time.monotonic() - started, "; ".join(problems))
        apply(copy, mutant)
        results, output = run_tests(copy, [*mutant.before, *mutant.tests], Path(tmp) / "report.xml")
    outcome, detail = judge(results, mutant.tests)
    return Verdict(mutant, outcome, time.monotonic() - started, detail, output)


def baseline(chosen: list[Mutant]) -> tuple[list[TestResult], str, float]:
    """Every chosen mutant's tests on an unmutated copy, in one pytest process."""
    started = time.monotonic()
    tests = list(dict.fromkeys(t for m in chosen for t in (*m.before, *m.tests)))
    with tempfile.TemporaryDirectory(prefix="mutants-baseline-") as tmp:
        copy = copy_of(ROOT, Path(tmp) / "repo")
        results, output = run_tests(copy, tests, Path(tmp) / "report.xml")
    return results, output, time.monotonic() - started


def node_of(result: TestResult) -> str:
    """A JUnit test case's pytest node id (`tests/a/test_b.py::Class::test_c[param]`)."""
    classname, _, name = result.node.rpartition("::")
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        if (ROOT / Path(*parts[:cut])).with_suffix(".py").is_file():
            return "::".join(["/".join(parts[:cut]) + ".py", *parts[cut:], name])
    return result.node


def baseline_from(report: Path, chosen: list[Mutant]) -> tuple[list[TestResult], str, float]:
    """The chosen mutants' tests as a suite's JUnit report has them: each named test (with every
    parameter it has there) must be in it."""
    by_node: dict[str, list[TestResult]] = {}
    for result in results_of(report):
        node = node_of(result)
        by_node.setdefault(node.split("[")[0], []).append(TestResult(node, result.outcome, result.message))
    found: list[TestResult] = []
    missing = []
    for test in dict.fromkeys(t for m in chosen for t in (*m.before, *m.tests)):
        matched = [
            r
            for key, results in by_node.items()
            if key == test or key.startswith(test + "::")
            for r in results
        ]
        if not matched:
            missing.append(test)
        found += matched
    note = f"{report}: " + (
        f"not in the report: {', '.join(missing)}" if missing else "every mutant's test is in it"
    )
    return found + [TestResult(test, "not run", "not in the report") for test in missing], note, 0.0


# ---- reporting ---------------------------------------------------------------------------------
def table(verdicts: list[Verdict]) -> str:
    lines = [
        "| mutant | the bug | file(s) | its tests | result | caught by |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for verdict in verdicts:
        mutant = verdict.mutant
        files = "<br>".join(f"`{p}`" for p in mutant.paths)
        tests = "<br>".join(f"`{t.removeprefix('tests/')}`" for t in mutant.tests)
        detail = verdict.detail.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{mutant.name}` | {mutant.bug} | {files} | {tests} | {verdict.outcome} | {detail} |")
    return "\n".join(lines) + "\n"


def write_into(document: Path, text: str) -> None:
    """`text` between the document's TABLE_START and TABLE_END lines."""
    content = document.read_text(encoding="utf-8")
    if TABLE_START not in content or TABLE_END not in content:
        raise SystemExit(f"{document} has no mutation table's markers ({TABLE_START!r} ... {TABLE_END!r})")
    head, _, rest = content.partition(TABLE_START)
    _, _, tail = rest.partition(TABLE_END)
    document.write_text(f"{head}{TABLE_START}\n{text}{TABLE_END}{tail}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="mutant names (default: all)")
    parser.add_argument("--fast", action="store_true", help="leave out the SLOW mutants (CI)")
    parser.add_argument("--jobs", type=int, default=2, help="mutants run side by side (default 2)")
    parser.add_argument("--markdown", help="also write the result table to this file")
    parser.add_argument("--docs", help="write the result table into this document, between its markers")
    parser.add_argument("--list", action="store_true", help="list the mutants and their tests, run nothing")
    parser.add_argument(
        "--baseline-report",
        help="the JUnit report of a suite that just ran on this checkout: its results are the unmutated run",
    )
    args = parser.parse_args(argv)
    unknown = set(args.only or []) - {m.name for m in MUTANTS}
    if unknown:
        parser.error(f"no mutant {', '.join(sorted(unknown))}; known: {', '.join(m.name for m in MUTANTS)}")
    chosen = [
        m for m in MUTANTS if (not args.only or m.name in args.only) and not (args.fast and m.name in SLOW)
    ]
    if args.fast:
        print(f"--fast: {len(SLOW)} slow mutant(s) left to `make test-mutations`: {', '.join(sorted(SLOW))}")
    if args.docs and len(chosen) != len(MUTANTS):
        parser.error("--docs writes the whole table: run every mutant (no --only)")
    if args.list:
        for mutant in chosen:
            steps = "".join(f"\n  (before) {t}" for t in mutant.before)
            print(f"{mutant.name}: {mutant.bug}{steps}\n  " + "\n  ".join(mutant.tests))
        return 0

    if args.baseline_report:
        results, output, seconds = baseline_from(Path(args.baseline_report), chosen)
    else:
        results, output, seconds = baseline(chosen)
    wrong = [r for r in results if r.outcome != "passed"]
    expected = len({t for m in chosen for t in (*m.before, *m.tests)})
    print(
        f"baseline: {len(results)} test(s) on the unmutated code, {len(wrong)} not passed ({seconds:.0f} s)",
        flush=True,
    )
    if wrong or len(results) < expected:
        print(output, flush=True)
        for result in wrong:
            print(
                f"  {result.node}: {result.outcome}: {result.message.splitlines()[0][:200] if result.message else ''}"
            )
        print(
            "The mutants' tests do not all pass on the unmutated code: no mutant was run. Fix the tests first."
        )
        return 2

    verdicts: list[Verdict] = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for verdict in pool.map(run_mutant, chosen):
            print(
                f"{verdict.mutant.name}: {verdict.outcome} ({verdict.seconds:.0f} s): {verdict.detail}",
                flush=True,
            )
            if verdict.outcome not in ("killed", "NOT APPLIED"):
                print(verdict.output, flush=True)
            verdicts.append(verdict)
    text = table(verdicts)
    print(text)
    for target in (args.markdown, args.docs):
        if not target:
            continue
        if target == args.docs:
            write_into(Path(target), text)
        else:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            Path(target).write_text(text, encoding="utf-8")
    failed = [v for v in verdicts if not v.killed]
    if failed:
        print(
            f"{len(failed)} of {len(verdicts)} mutant(s) not killed: "
            + ", ".join(v.mutant.name for v in failed)
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
