"""The reference pages (docs/reference/) are what tools.reference generates from the code, and
what they are generated from is complete: every var the project reads is described."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tools import reference

REPO = Path(__file__).resolve().parents[2]


def test_no_reference_page_is_stale() -> None:
    assert reference.stale(REPO) == [], "run `python -m tools.reference` and commit docs/reference/"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The files the pages are generated from, and the pages, in a directory of their own."""
    for part in (
        "dbt_project.yml",
        "macros",
        "models",
        "seeds",
        "snapshots",
        "python_hooks",
        "adapter/src",
        "docs/reference",
    ):
        source = REPO / part
        (tmp_path / part).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy)(source, tmp_path / part)
    return tmp_path


def test_a_changed_description_makes_its_page_stale_and_the_check_names_it(copy: Path) -> None:
    project = copy / "dbt_project.yml"
    project.write_text(
        project.read_text().replace("# the id table's id column", "# the id column of the id table")
    )
    assert reference.stale(copy) == ["vars.md"]
    reference.write(copy)
    assert reference.stale(copy) == []
    assert (
        '| `compliance_id_column` | `""` (off) | string | the id column of the id table |'
        in (copy / "docs/reference/vars.md").read_text()
    )


def test_every_var_the_project_reads_is_described() -> None:
    declared = {v["name"]: v for v in reference.declared_vars(REPO)}
    undescribed = sorted(
        name for name, var in declared.items() if not var["description"] or not var["capability"]
    )
    assert undescribed == [], "describe each in dbt_project.yml, in the comment right above it"
    unlisted = sorted(reference.used_vars(REPO) - set(declared))
    assert unlisted == [], "declare each in dbt_project.yml, or add a `# <name> (no default): ...` line"


def test_the_errors_page_shows_a_message_with_its_variable_parts() -> None:
    """A Python raise (an f-string) and a macro's (a Jinja concatenation) read as a user meets them."""
    page = (REPO / "docs/reference/errors.md").read_text()
    assert (
        "`Var retention_now is <str(value)>: expected epoch milliseconds or an ISO timestamp in UTC" in page
    )
    assert (
        "`erasure_deadline_days: '<value>' is not a number of days (a non-negative number, e.g. 30)`" in page
    )


def test_the_statuses_page_lists_the_ledger_verdicts() -> None:
    page = (REPO / "docs/reference/statuses.md").read_text()
    assert (
        "| `erasure_verification` | `verdict` | `LIVE_ROWS`, `COPIES_HOLD_IDS`, `INCOMPLETE`, `NONE_FOUND` |"
        in page
    )
