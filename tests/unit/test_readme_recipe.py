"""The README's recipe, "Erase one person from your own lake", is docs/adopt.md in short: every
command line of its `bash` block is a command line of adopt.md's `bash` blocks, character for
character and in the same order, so that what the host-project test runs as written
(tests/functional/adopt/test_host_project.py, `make test-long`) is what the README shows."""

from __future__ import annotations

from pathlib import Path

from tests.markdown_blocks import markdown_section, shell_commands

REPO = Path(__file__).resolve().parents[2]
HEADING = "Erase one person from your own lake"


def recipe() -> list[str]:
    return shell_commands(markdown_section((REPO / "README.md").read_text(encoding="utf-8"), HEADING))


def test_the_parser_reads_bash_blocks_only() -> None:
    text = "```bash\n# a comment\n  dbt deps  \n\n```\n```yaml\nvars: x\n```\n```bash\ndbt seed\n```\n"
    assert shell_commands(text) == ["dbt deps", "dbt seed"]


def test_the_recipe_is_a_short_list_of_commands() -> None:
    lines = recipe()
    assert 6 <= len(lines) <= 14, f"the README's recipe has {len(lines)} command lines: {lines}"


def test_every_recipe_line_is_a_line_of_adopt_md_in_the_same_order() -> None:
    adopt = shell_commands((REPO / "docs" / "adopt.md").read_text(encoding="utf-8"))
    position = 0
    for line in recipe():
        assert line in adopt, f"the README's recipe line is not a bash line of docs/adopt.md: {line!r}"
        later = [i for i, candidate in enumerate(adopt) if candidate == line and i >= position]
        assert later, (
            f"the README's recipe line {line!r} is in docs/adopt.md only before the line that comes "
            f"before it in the recipe ({adopt[position - 1]!r})"
        )
        position = later[0] + 1
