"""The docs' shell blocks as the tests read them: a `## heading` section of a markdown page, and
the command lines of its `bash` blocks (the host-project test runs them; the README's recipe is
checked against adopt.md's)."""

from __future__ import annotations

# what the docs write for a reader's checkout of this repository (the host-project test puts its
# clean checkout there)
CHECKOUT_PLACEHOLDERS = ("/path/to/this/checkout", "/path/to/lakehouse-compliance")


# the fences of a shell block: every one is read, so that none escapes the docs tests
SHELL_FENCES = ("```bash", "```shell", "```sh")


def markdown_section(text: str, heading: str) -> str:
    """The part of `text` under the `## heading` line, up to the next `## ` heading."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == f"## {heading}"), None)
    if start is None:
        raise ValueError(f"no section '## {heading}'")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[start:end])


def shell_commands(markdown: str) -> list[str]:
    """The commands of the shell blocks (`bash`, `shell`, `sh`) of `markdown`, in order: one a line, stripped, blank and
    `#` lines dropped."""
    commands, inside = [], False
    for line in markdown.splitlines():
        if line.strip().startswith("```"):
            inside = line.strip() in SHELL_FENCES if not inside else False
            continue
        if inside and line.strip() and not line.strip().startswith("#"):
            commands.append(line.strip())
    return commands
