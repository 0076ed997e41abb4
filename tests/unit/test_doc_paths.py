"""Every file of the repository that the docs name exists: the README, docs/*.md, the yml
descriptions and the SQL comments point a reader at a path, and a path that moved or went away
sends them nowhere.

`adapter/.../name.py` is the docs' short form for a file under adapter/; a path in a table of
tests may be written relative to tests/.  docs/benchmarks.md is left out: it is history, each
section naming the files as they were when it was measured.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TOP = "python_hooks|macros|models|bench|scripts|tests|adapter|tools|seeds|snapshots|demo|docs|jvm"
PATH = re.compile(
    rf"(?<![\w/.:-])((?:{TOP})/[\w/.-]*\w\.(?:py|sql|yml|yaml|sh|java|md|csv|xml|properties|template))"
)
HISTORY = {"docs/benchmarks.md"}


def documents() -> list[Path]:
    found = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    for pattern in ("macros/**/*.yml", "macros/**/*.sql", "models/**/*.yml", "models/**/*.sql"):
        found += sorted(REPO.glob(pattern))
    return [path for path in found if path.relative_to(REPO).as_posix() not in HISTORY]


def exists(named: str) -> bool:
    if "/.../" in named:
        top, _, rest = named.partition("/.../")
        return any((REPO / top).glob(f"**/{rest}"))
    return (REPO / named).exists() or (REPO / "tests" / named).exists()


def named_paths(text: str) -> list[str]:
    return [match.group(1) for match in PATH.finditer(text)]


def test_the_pattern_finds_the_forms_the_docs_use() -> None:
    text = (
        "see `python_hooks/purge/skipping.py`, adapter/.../storage.py and "
        "`tests/python_hooks/test_metastore.py::test_x`; not https://x.org/macros/a.sql"
    )
    assert named_paths(text) == [
        "python_hooks/purge/skipping.py",
        "adapter/.../storage.py",
        "tests/python_hooks/test_metastore.py",
    ]
    assert exists("adapter/.../storage.py")
    assert not exists("python_hooks/purge/scan.py")


def test_every_path_the_docs_name_exists() -> None:
    missing = [
        f"{document.relative_to(REPO)}:{number}: {named}"
        for document in documents()
        for number, line in enumerate(document.read_text(encoding="utf-8").splitlines(), 1)
        for named in named_paths(line)
        if not exists(named)
    ]
    assert not missing, "the docs name files that do not exist (moved or removed?):\n" + "\n".join(missing)
