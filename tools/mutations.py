"""`make test-mutations`: deliberate bugs, each applied to a copy of the repository, and the tests
that must catch it.  A mutant that the tests let pass (it *survives*) fails the run.

    .venv/bin/python -m tools.mutations                   # every mutant, a table at the end
    .venv/bin/python -m tools.mutations --only drop-retention-minimum --markdown out.md

Each mutant replaces one exact snippet of one product file (the snippet must occur exactly once,
so a mutant that no longer applies fails loudly instead of passing silently), in a copy of the
files git tracks or would track (the working tree, not HEAD), and runs its tests there with this
repository's virtualenv: `PYTHONPATH` is the copy, so `python_hooks`, the macros the test projects
copy (tests/conftest.py `repo_files`) and FileFacts.java all come from it.  One pytest process at a
time, `-x`: a mutant is killed at its first failing test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    name: str
    bug: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


MUTANTS = (
    Mutant(
        "list-without-hidden-copies",
        "the purge's listing hides every `_` name again (a `_k=v` file Spark reads is left out)",
        "python_hooks/catalog/FileFacts.java",
        'if (name.startsWith(".") || name.endsWith("._COPYING_")) return true;',
        'if (name.startsWith(".") || name.startsWith("_")) return true;',
        ("tests/python_hooks/test_footer_rows.py::test_the_hidden_rule_is_sparks",),
    ),
    Mutant(
        "footer-rule-claims-decimal-and-unsigned",
        "the data-skipping rule prunes on any INT32/INT64 footer, decimal and unsigned included",
        "python_hooks/catalog/file_facts.py",
        'return physical in ("INT32", "INT64") and logical.startswith("INTEGER(") and logical.endswith(",true)")',
        'return physical in ("INT32", "INT64")',
        ("tests/python_hooks/test_footer_rows.py::test_the_footer_rule_agrees_with_sparks_semi_join",),
    ),
    Mutant(
        "drop-retention-minimum",
        "a retention under retention_min_hours is no longer refused",
        "python_hooks/retention/policy.py",
        "if unit is not None and not allow_short and float(str(value).strip()) * unit < floor:",
        "if unit is not None and False and float(str(value).strip()) * unit < floor:",
        ("tests/python_hooks/test_policy.py::test_a_retention_under_the_minimum_is_refused_unless_allowed",),
    ),
    Mutant(
        "skip-the-commit-check",
        "the purge swaps a partition whose files changed since the rewrite read them",
        "python_hooks/purge/committing.py",
        "or listing.fingerprint() != run.ledger.entry(part).fingerprint",
        "or False",
        ("tests/functional/purge/test_concurrent_writer.py::TestConcurrentWriter",),
    ),
    Mutant(
        "check-before-the-backup",
        "the state table lets a rewritten partition through the commit check (and on to its swap) before its backup",
        "python_hooks/purge/states.py",
        "    (State.BACKED_UP, Step.COMMIT_CHECK): State.CHECKED,\n",
        "    (State.REWRITTEN, Step.COMMIT_CHECK): State.CHECKED,\n",
        ("tests/unit/test_purge_states.py",),
    ),
    Mutant(
        "swap-after-a-failed-backup",
        "the backup table's failure is ignored: its partitions go on towards their swaps",
        "python_hooks/purge/committing.py",
        "    error = join_backup(run)\n    if error is not None:\n",
        "    error = join_backup(run)\n    if False:\n",
        (
            "tests/functional/purge/test_purge_failures.py::TestPurgeFailures::"
            "test_a_backup_that_cannot_be_made_stops_every_swap_and_leaves_nothing_behind",
        ),
    ),
    Mutant(
        "forget-a-journal-entry",
        "the purge writes no journal intent before a table's staging table and swap",
        "python_hooks/purge/committing.py",
        "    run.node.journal.record_intent(run.intent)\n",
        "",
        (
            "tests/functional/purge/test_engine.py::TestJournalRecovery::test_purge_log_is_completed_from_the_journal",
        ),
    ),
    Mutant(
        "verifier-counts-one-row-too-few",
        "the verifier counts one row fewer per file and request",
        "python_hooks/erasure/verification.py",
        "return {(_decoded(str(r[0])), r[1]): int(r[2]) for r in counted}",
        "return {(_decoded(str(r[0])), r[1]): int(r[2]) - 1 for r in counted}",
        (
            "tests/functional/erasure/test_copy_kinds.py::TestEveryCopyKind::"
            "test_ids_in_a_copy_keep_the_request_from_erased_until_removed[stale]",
        ),
    ),
    Mutant(
        "verifier-forgets-the-journal",
        "the verifier reads no location only the purge journal names",
        "python_hooks/erasure/locations.py",
        "entries = [e for e in Journal(spark).read_entries() if in_scope(scope, e.intent.database, e.intent.table)]",
        "entries = []",
        (
            "tests/functional/erasure/test_copy_kinds.py::TestEveryCopyKind::"
            "test_ids_in_a_copy_keep_the_request_from_erased_until_removed[journal]",
        ),
    ),
    Mutant(
        "erased-one-step-early",
        "the ledger says `erased` without a verification after the last deletion of a copy",
        "macros/erasure/requests.sql",
        "                facts.copy_rows = 0 and facts.unread_copies = 0\n"
        "                and (facts.last_deletion_at is null or facts.verified_at > facts.last_deletion_at)\n",
        "                facts.copy_rows = 0 and facts.unread_copies = 0\n",
        (
            "tests/functional/erasure/test_copy_kinds.py::TestEveryCopyKind::"
            "test_a_deletion_after_the_last_verification_holds_erased_back",
        ),
    ),
    Mutant(
        "certificate-check-ignores-its-files",
        "verify_certificate checks only the table parts: not the .json, .evidence.txt, .md or warehouse",
        "python_hooks/erasure/certificate.py",
        "rows = _file_checks(doc, json_path, spark, schema)",
        "rows: list[dict[str, Any]] = []",
        ("tests/functional/erasure/test_erasure_requests.py",),
    ),
)


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


def apply(copy: Path, mutant: Mutant) -> None:
    path = copy / mutant.path
    text = path.read_text(encoding="utf-8")
    if text.count(mutant.old) != 1:
        raise SystemExit(
            f"mutant {mutant.name}: the snippet occurs {text.count(mutant.old)} time(s) in {mutant.path}, not once;"
            " update the mutant to the code"
        )
    path.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")


def caught_by(output: str) -> str:
    """The first failing test and its message, from pytest's short summary (`FAILED node - msg`)."""
    for line in output.splitlines():
        if line.startswith("FAILED "):
            node, _, message = line[len("FAILED ") :].partition(" - ")
            return f"`{node.split('::', 1)[-1]}`" + (f": {message[:90]}" if message else "")
    return ""


def run_mutant(mutant: Mutant) -> tuple[str, float, str]:
    """(killed | SURVIVED | ERROR, seconds, the end of pytest's output)."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"mutant-{mutant.name}-") as tmp:
        copy = copy_of(ROOT, Path(tmp) / "repo")
        apply(copy, mutant)
        env = {**os.environ, "PYTHONPATH": str(copy), "DBT_PROFILES_DIR": str(copy)}
        pytest = [str(ROOT / ".venv" / "bin" / "pytest"), "-q", "-x", "-p", "no:cacheprovider", *mutant.tests]
        done = subprocess.run(pytest, cwd=copy, env=env, capture_output=True, text=True)
    output = (done.stdout + done.stderr)[-6000:]
    outcome = {0: "SURVIVED", 1: "killed"}.get(done.returncode, "ERROR")
    return outcome, time.monotonic() - started, output


def table(results: list[tuple[Mutant, str, float, str]]) -> str:
    lines = [
        "| mutant | the bug | file | tests run | result | caught by | time |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for mutant, outcome, seconds, caught in results:
        tests = "<br>".join(f"`{t.removeprefix('tests/')}`" for t in mutant.tests)
        caught = caught.replace("|", "\\|")
        lines.append(
            f"| `{mutant.name}` | {mutant.bug} | `{mutant.path}` | {tests} | {outcome} | {caught} | {seconds:.0f} s |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="mutant names (default: all)")
    parser.add_argument("--markdown", help="also write the result table to this file")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if not args.only or m.name in args.only]
    unknown = set(args.only or []) - {m.name for m in MUTANTS}
    if unknown:
        parser.error(f"no mutant {', '.join(sorted(unknown))}; known: {', '.join(m.name for m in MUTANTS)}")
    results = []
    for mutant in chosen:
        outcome, seconds, output = run_mutant(mutant)
        print(f"{mutant.name}: {outcome} ({seconds:.0f} s)", flush=True)
        if outcome != "killed":
            print(output, flush=True)
        results.append((mutant, outcome, seconds, caught_by(output) if outcome == "killed" else ""))
    text = table(results)
    print(text)
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(text, encoding="utf-8")
    return 0 if all(outcome == "killed" for _, outcome, _, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
