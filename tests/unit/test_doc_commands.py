"""Every command of every shell block of the README and docs/ names something that exists, as
written: a `make` target of the Makefile; a dbt command dbt's own command line accepts, whose
`--vars` are vars of the project, whose `run-operation` is one of its macros with the arguments
its yml declares, and whose `--select` names its nodes, tags and folders; a script or module of
the repository with the flags it parses; a pytest path that exists.

The commands adopt.md gives run for real, in a project of a user's own
(tests/functional/adopt/test_host_project.py), and the README's recipe is held to them
(test_readme_recipe.py); formats.md's run as written, its outputs held to what they print
(tests/functional/formats/test_formats_guide.py); the make targets run in CI or before a release.  This test is what
keeps the rest from going stale: a renamed macro, a var that went away, a flag a script no
longer takes.  The one placeholder allowed is the reader's checkout (CHECKOUT_PLACEHOLDERS).
"""

from __future__ import annotations

import re
import shlex
import warnings
from functools import cache
from pathlib import Path

import click
import pytest
import yaml
from dbt.cli.main import cli

from tests.markdown_blocks import CHECKOUT_PLACEHOLDERS, shell_commands
from tools import reference

REPO = Path(__file__).resolve().parents[2]
DOCS = ["README.md", *(str(p.relative_to(REPO)) for p in sorted((REPO / "docs").glob("*.md")))]
SHELL_BUILTINS = {"export", "source", "cd", "eval"}
DBT = {"dbt", ".venv/bin/dbt", "../.venv/bin/dbt"}
PYTHON = {".venv/bin/python", "python", "python3"}
PYTEST = {".venv/bin/pytest", "pytest"}


def commands() -> list[tuple[str, str]]:
    """(page, command line) of every bash block of the docs."""
    return [(page, line) for page in DOCS for line in shell_commands((REPO / page).read_text())]


@cache
def make_targets() -> set[str]:
    return set(re.findall(r"^([\w-]+):", (REPO / "Makefile").read_text(), re.MULTILINE))


@cache
def known_vars() -> set[str]:
    return {v["name"] for v in reference.declared_vars(REPO)}


@cache
def macro_arguments() -> dict[str, set[str]]:
    """The macros of the package and of the demo project (the guides' `run-operation`s) and the
    arguments their yml declares."""
    entries = [*reference.macro_entries(REPO)]
    for path in sorted((REPO / "demo" / "macros").glob("_*.yml")):
        entries += yaml.safe_load(path.read_text()).get("macros") or []
    return {m["name"]: {a["name"] for a in m.get("arguments") or []} for m in entries}


@cache
def selectable() -> set[str]:
    """Node names (models, seeds, snapshots, singular tests), tags and the models' folders."""
    names = {p.stem for folder in ("models", "seeds", "snapshots", "tests") for p in (REPO / folder).rglob("*")
             if p.suffix in (".sql", ".py", ".csv")}  # fmt: skip
    names |= {p.name for p in (REPO / "models").iterdir() if p.is_dir()}
    for _, _, entry in reference.node_entries(REPO):
        names.add(entry["name"])
    tags = {f"tag:{p.name}" for p in (REPO / "models").iterdir() if p.is_dir()}
    return names | tags


def shown_nodes(page: str) -> set[str]:
    """The seeds and models a page names as files of the reader's project (`seeds/x.csv`,
    `models/x.sql`): its commands may select them."""
    pattern = r"\b(?:seeds|models|snapshots)/(?:[\w/]*/)?(\w+)\.(?:csv|sql|py)\b"
    return set(re.findall(pattern, (REPO / page).read_text()))


def problems_of_dbt(args: list[str], own: frozenset[str] = frozenset()) -> list[str]:
    if args in (["--version"], ["-v"]):
        return []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            ctx = cli.make_context("dbt", list(args))
            name, command, rest = cli.resolve_command(ctx, [*ctx.protected_args, *ctx.args])
            sub = command.make_context(name, rest, parent=ctx)
            if isinstance(command, click.Group):
                inner, leaf, more = command.resolve_command(sub, [*sub.protected_args, *sub.args])
                leaf.make_context(inner, more, parent=sub)
        except click.ClickException as error:
            return [f"dbt does not accept it: {error.format_message()}"]
    found = []
    params = sub.params
    unknown = sorted(set(params.get("vars") or {}) - known_vars())
    if unknown:
        found.append(f"--vars names no var of the project: {unknown}")
    if name == "run-operation":
        macro = params["macro"]
        if macro not in macro_arguments():
            found.append(f"run-operation {macro}: no such macro in the macros' yml")
        else:
            given = params.get("args") or {}
            given = set(yaml.safe_load(given) if isinstance(given, str) else given)
            if given - macro_arguments()[macro]:
                found.append(
                    f"run-operation {macro}: arguments {sorted(given - macro_arguments()[macro])} are not in its yml"
                )
    for spec in params.get("select") or ():
        for word in spec.replace(",", " ").split():
            bare = word.strip("+")
            if bare.startswith(("path:", "fqn:", "source:", "resource_type:", "config.", "state:")):
                continue
            if not {bare, bare.split(".")[-1]} & (selectable() | own):
                found.append(f"--select {word}: no node, tag or folder of that name")
    return found


def problems_of_script(args: list[str]) -> list[str]:
    """`python -m module ...` or `python path.py ...`: the module or file exists and parses each flag."""
    if args[:1] == ["-m"]:
        module, args = args[1], args[2:]
        path = REPO / (module.replace(".", "/") + ".py")
    else:
        path, args = REPO / args[0], args[1:]
    if not path.exists():
        return [f"{path.relative_to(REPO)} does not exist"]
    source = "\n".join(p.read_text() for p in [path, *imported(path)])
    flags = [a.split("=")[0] for a in args if a.startswith("-")]
    return [f"{path.relative_to(REPO)} parses no flag {flag}" for flag in flags if f'"{flag}"' not in source]


def imported(path: Path) -> list[Path]:
    """The repository's modules that `path` imports (a script's flags may be parsed there)."""
    found = []
    for module in re.findall(r"^(?:from|import) ([\w.]+)", path.read_text(), re.MULTILINE):
        for candidate in (REPO / (module.replace(".", "/") + ".py"), path.parent / (module + ".py")):
            if candidate.exists() and candidate != path:
                found.append(candidate)
    return found


def problems_of_pytest(args: list[str]) -> list[str]:
    paths = [a.split("::")[0] for a in args if not a.startswith("-") and "/" in a]
    return [f"{path} does not exist" for path in paths if not list(REPO.glob(path))]


def problems_of_pip(args: list[str]) -> list[str]:
    """`pip install <checkout> -c <checkout>/constraints.txt`: the checkout is written as one of
    CHECKOUT_PLACEHOLDERS, and what follows it must exist in the repository."""
    found = [] if args[:1] == ["install"] else [f"pip {' '.join(args[:1])}: only `pip install` is documented"]
    for arg in args[1:]:
        checkout = next((p for p in CHECKOUT_PLACEHOLDERS if arg == p or arg.startswith(p + "/")), None)
        if checkout is not None:
            inside = arg[len(checkout) :].strip("/")
            if inside and not (REPO / inside).exists():
                found.append(f"{arg}: the repository has no {inside}")
        elif not arg.startswith("-"):
            found.append(f"pip install {arg}: not this repository's checkout")
    return found


def problems(line: str, own: frozenset[str] = frozenset()) -> list[str]:
    """What is wrong with one command line (a `&&` chain of commands), or []."""
    found: list[str] = []
    for part in re.split(r"\s*&&\s*", line):
        words = shlex.split(part, comments=True)
        if not words:
            continue
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
            words = words[1:]  # VAR=value in front of a command
        if words[:1] == ["timeout"]:
            words = words[2:]
        program, args = words[0], words[1:]
        if program == "eval":
            inner = re.fullmatch(r"\$\((.*)\)", args[0]) if args else None
            found += problems(inner.group(1), own) if inner else []
        elif program in SHELL_BUILTINS:
            continue
        elif program == "make":
            targets = [a for a in args if not a.startswith("-") and "=" not in a]
            found += [f"make {t}: no such target in the Makefile" for t in targets if t not in make_targets()]
        elif program in DBT:
            found += problems_of_dbt(args, own)
        elif program in PYTHON:
            found += problems_of_script(args)
        elif program == "pip":
            found += problems_of_pip(args)
        elif program in PYTEST:
            found += problems_of_pytest(args)
        else:
            found.append(f"{program}: not a command this test knows; teach this test to check it")
    return found


@pytest.mark.parametrize("page", DOCS)
def test_every_command_of_the_page_exists_as_written(page: str) -> None:
    lines = [line for p, line in commands() if p == page]
    own = frozenset(shown_nodes(page))
    failures = [f"{page}: {line}\n    {problem}" for line in lines for problem in problems(line, own)]
    assert not failures, "\n".join(failures)


def test_the_checks_find_what_they_are_for() -> None:
    """Each kind of stale command is caught, with its reason."""
    assert problems("make tset") == ["make tset: no such target in the Makefile"]
    assert problems("dbt run --selec purge+")[0].startswith("dbt does not accept it: No such option")
    assert problems("dbt run --select purge+ --vars '{purge_dryrun: true}'") == [
        "--vars names no var of the project: ['purge_dryrun']"
    ]
    assert problems("dbt run-operation restore --args '{table: a.b, part: x}'") == [
        "run-operation restore: arguments ['part'] are not in its yml"
    ]
    assert problems("dbt run-operation restor") == ["run-operation restor: no such macro in the macros' yml"]
    assert problems("dbt run --select tag:purgee") == [
        "--select tag:purgee: no node, tag or folder of that name"
    ]
    assert problems(".venv/bin/python bench/purge_bench.py --rowz 5") == [
        "bench/purge_bench.py parses no flag --rowz"
    ]
    assert problems(".venv/bin/pytest tests/functional/nothing_here -q") == [
        "tests/functional/nothing_here does not exist"
    ]
    assert problems("curl example.com")[0].startswith("curl: not a command this test knows")
    assert problems('eval "$(make -s hdfs-upp)"') == ["make hdfs-upp: no such target in the Makefile"]
    assert problems("source .cluster/env && cd demo && ../.venv/bin/dbt build") == []
    # a node of the reader's own project, shown as a file on the page
    assert problems("dbt build --select store_locations", frozenset({"store_locations"})) == []
    assert "store_locations" in shown_nodes("docs/adopt.md")
