"""The mutation check (tools/mutations.py) cannot shrink without saying so: every mutant still
applies to the code as it is, names tests that exist, and is in the table of docs/safety.md; and a
mutant counts as killed only when one of its tests fails on an assertion, judged from a real
pytest run's JUnit report."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tools import mutations
from tools.mutations import MUTANTS, ROOT, judge, not_applicable, results_of


def test_the_slow_mutants_are_mutants_and_most_run_in_ci():
    """`--fast` (CI) leaves out only named mutants, and never most of them."""
    names = {m.name for m in MUTANTS}
    assert mutations.SLOW <= names and len(mutations.SLOW) < len(names) / 2


def test_every_mutant_applies_to_the_code_exactly_once():
    """A refactoring that moves a mutated snippet fails here, in `make test`, not silently in the
    mutation check."""
    problems = {m.name: not_applicable(ROOT, m) for m in MUTANTS}
    assert not {name: p for name, p in problems.items() if p}, problems
    assert len({m.name for m in MUTANTS}) == len(MUTANTS)


def defined_tests(path: Path) -> set[str]:
    """`Class::test` and `test` names defined in a test file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            found.add(node.name)
        if isinstance(node, ast.ClassDef):
            found.add(node.name)
            found.update(
                f"{node.name}::{item.name}"
                for item in node.body
                if isinstance(item, ast.FunctionDef) and item.name.startswith("test_")
            )
    return found


def test_every_mutant_names_tests_that_exist():
    for mutant in MUTANTS:
        assert mutant.tests, mutant.name
        for node in (*mutant.before, *mutant.tests):
            file, _, name = node.partition("::")
            assert (ROOT / file).is_file(), (mutant.name, node)
            assert not name or name.split("[")[0] in defined_tests(ROOT / file), (mutant.name, node)


def documented_rows() -> list[list[str]]:
    text = (ROOT / "docs" / "safety.md").read_text(encoding="utf-8")
    assert mutations.TABLE_START in text and mutations.TABLE_END in text
    table = text.split(mutations.TABLE_START, 1)[1].split(mutations.TABLE_END, 1)[0]
    rows = [line for line in table.strip().splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows]


def test_the_documented_table_is_the_tools_last_run_of_every_mutant():
    """docs/safety.md lists exactly the mutants of the tool, in its order, with the same bug,
    files and tests, each killed: a mutant added or changed without a run of the check (which
    rewrites the table) fails here."""
    rows = documented_rows()
    expected = mutations.table([mutations.Verdict(m, "killed", 0, "") for m in MUTANTS]).splitlines()[2:]
    assert [r[:4] for r in rows] == [
        [cell.strip() for cell in line.strip("|").split(" | ")][:4] for line in expected
    ]
    assert {r[4] for r in rows} == {"killed"}, [r[:1] + r[4:5] for r in rows if r[4] != "killed"]


KINDS_OF_ENDING = """
import pytest

def test_passes():
    assert 1 + 1 == 2

def test_assertion():
    assert [1] == [2], "the rows differ"

def test_did_not_raise():
    with pytest.raises(ValueError):
        pass

def test_another_exception():
    raise RuntimeError("the product crashed")

@pytest.fixture
def broken():
    raise RuntimeError("the fixture broke")

def test_fixture_error(broken):
    pass

def test_skipped():
    pytest.skip("not here")
"""


def junit_report(cwd: Path, tests: str, report: Path) -> Path:
    """A real pytest run of `tests` in `cwd`, its JUnit report (whatever the tests' outcome)."""
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit2",
         f"--junitxml={report}", tests],
        cwd=cwd, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return report


@pytest.fixture(scope="module")
def ended(tmp_path_factory: pytest.TempPathFactory) -> dict[str, mutations.TestResult]:
    """Each kind of ending, from a real pytest run's JUnit report."""
    root = tmp_path_factory.mktemp("endings")
    (root / "test_endings.py").write_text(KINDS_OF_ENDING)
    report = junit_report(root, "test_endings.py", root / "report.xml")
    return {r.node.rsplit("::", 1)[-1]: r for r in results_of(report)}


def test_only_an_assertion_kills(ended):
    assert {name: r.outcome for name, r in ended.items()} == {
        "test_passes": "passed",
        "test_assertion": "assertion",
        "test_did_not_raise": "assertion",
        "test_another_exception": "failed",
        "test_fixture_error": "error",
        "test_skipped": "skipped",
    }
    assert judge([ended["test_passes"], ended["test_assertion"]])[0] == "killed"
    assert judge([ended["test_did_not_raise"]])[0] == "killed"
    assert "the rows differ" in judge([ended["test_assertion"]])[1]
    # a crash, a fixture error or a skip proves nothing about the tests' assertions
    for name in ("test_another_exception", "test_fixture_error", "test_skipped"):
        outcome, detail = judge([ended["test_passes"], ended[name]])
        assert outcome == "ERROR" and name in detail, (name, outcome, detail)
    assert judge([ended["test_passes"]])[0] == "SURVIVED"
    assert judge([])[0] == "ERROR"


def test_a_step_before_the_mutants_tests_never_kills_it(ended):
    """A story's earlier steps (`Mutant.before`) run first; an assertion of one of them is an
    ERROR (the state the mutant's test reads was never built), not a kill."""
    step, test = ended["test_assertion"], ended["test_passes"]
    assert judge([step, test], killers=(test.node,))[0] == "ERROR"
    assert judge([test, step], killers=(step.node,))[0] == "killed"


def test_a_mutant_that_no_longer_fits_is_not_applied_and_named(tmp_path):
    (tmp_path / "python_hooks").mkdir()
    (tmp_path / "python_hooks" / "x.py").write_text("a = 1\na = 1\n")
    twice = mutations.Mutant("twice", "", mutations.one("python_hooks/x.py", "a = 1", "a = 2"), ("t",))
    gone = mutations.Mutant("gone", "", mutations.one("python_hooks/x.py", "b = 1", "b = 2"), ("t",))
    assert not_applicable(tmp_path, twice) == [
        "python_hooks/x.py: the snippet occurs 2 time(s), not once: 'a = 1'"
    ]
    assert not_applicable(tmp_path, gone) == [
        "python_hooks/x.py: the snippet occurs 0 time(s), not once: 'b = 1'"
    ]


def test_a_suites_report_is_the_baseline_when_it_ran_every_mutants_test(tmp_path):
    """In CI the suite that just ran is the unmutated run: its JUnit report is read back into node
    ids, every parameter of a named test is taken, and a named test the suite did not run stops
    the check."""
    report = junit_report(ROOT, "tests/unit/test_purge_states.py", tmp_path / "suite.xml")
    ran = mutations.Mutant(
        "ran",
        "",
        (),
        ("tests/unit/test_purge_states.py::test_each_state_and_step", "tests/unit/test_purge_states.py"),
    )
    results, note, _ = mutations.baseline_from(report, [ran])
    nodes = {r.node for r in results}
    assert "tests/unit/test_purge_states.py::test_each_state_and_step[PENDING-REWRITE]" in nodes
    assert "tests/unit/test_purge_states.py::test_only_failing_and_undoing_leave_the_line" in nodes
    assert {r.outcome for r in results} == {"passed"} and "every mutant's test is in it" in note
    absent = mutations.Mutant("absent", "", (), ("tests/unit/test_purge_states.py::test_not_there",))
    results, note, _ = mutations.baseline_from(report, [absent])
    assert [(r.node, r.outcome) for r in results] == [
        ("tests/unit/test_purge_states.py::test_not_there", "not run")
    ]
    assert "not in the report: tests/unit/test_purge_states.py::test_not_there" in note
