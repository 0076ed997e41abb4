"""Every file of the repository that the docs name exists: the README, docs/*.md, the yml
descriptions and the SQL comments point a reader at a path, and a path that moved or went away
sends them nowhere.  Likewise every section a document links (`benchmarks.md#<heading>`): a
renamed heading breaks the README's links to its figures.

`adapter/.../name.py` is the docs' short form for a file under adapter/; a path in a table of
tests may be written relative to tests/.  docs/benchmarks-history.md is left out: it is history, each
section naming the files as they were when it was measured.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TOP = "python_hooks|macros|models|bench|scripts|tests|adapter|tools|seeds|snapshots|demo|docs|jvm"
PATH = re.compile(
    rf"(?<![\w/.:-])((?:{TOP})/[\w/.-]*\w\.(?:py|sql|yml|yaml|sh|java|md|csv|xml|properties|template))"
)
HISTORY = {"docs/benchmarks-history.md"}
# files of the reader's own project that the tutorial has them write (the host project test writes
# the same): not this repository's
READERS_FILES = {
    ("docs/adopt.md", "seeds/store_locations.csv"),
    ("docs/adopt.md", "models/daily_revenue.sql"),
    ("docs/adopt.md", "seeds/coverage_exceptions.csv"),
}


def markdown() -> list[Path]:
    """The README and docs/**/*.md, history and the generated reference included."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def documents() -> list[Path]:
    found = markdown()
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
        if not exists(named) and (str(document.relative_to(REPO)), named) not in READERS_FILES
    ]
    assert not missing, "the docs name files that do not exist (moved or removed?):\n" + "\n".join(missing)


# ---- anchors: a link to a section of a document --------------------------------------------
# `[text](docs/x.md#section)`, `[name]: x.md#section` and `(#section)`, relative to the document
LINK = re.compile(r"(?:\]\(|^\[[^\]]+\]:\s*)([\w./-]*\.md|)#([\w-]+)\)?", re.MULTILINE)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces
    made `-`."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@functools.cache
def anchors(document: Path) -> set[str]:
    """Every heading's anchor in `document` (a repeated heading's second is `<slug>-1`, ...),
    outside fenced code."""
    seen: dict[str, int] = {}
    found, fenced = set(), False
    for line in document.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not re.match(r"#{1,6} ", line):
            continue
        base = slug(line.lstrip("#"))
        found.add(f"{base}-{seen[base]}" if base in seen else base)
        seen[base] = seen.get(base, 0) + 1
    return found


def test_a_heading_gives_githubs_anchor() -> None:
    assert slug("The 200 tables and the verifier (2026-11-30, late, issue 30)") == (
        "the-200-tables-and-the-verifier-2026-11-30-late-issue-30"
    )
    assert slug("`dbt build` and 1.5× — twice") == "dbt-build-and-15--twice"
    found = LINK.findall("see [a](docs/benchmarks.md#on-hdfs) and [b](#x)\n[c]: deploy.md#y-z\n")
    assert found == [("docs/benchmarks.md", "on-hdfs"), ("", "x"), ("deploy.md", "y-z")]


def test_every_section_the_docs_link_exists() -> None:
    broken = []
    for document in markdown():
        for number, line in enumerate(document.read_text(encoding="utf-8").splitlines(), 1):
            for target, anchor in LINK.findall(line):
                linked = (document.parent / target).resolve() if target else document
                if not linked.exists():
                    broken.append(f"{document.relative_to(REPO)}:{number}: {target} does not exist")
                elif anchor not in anchors(linked):
                    broken.append(
                        f"{document.relative_to(REPO)}:{number}: no section #{anchor} in {target or 'itself'}"
                    )
    assert not broken, "the docs link sections that do not exist (renamed headings?):\n" + "\n".join(broken)
