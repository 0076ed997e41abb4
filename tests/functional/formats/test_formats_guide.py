"""docs/formats.md runs as written: its SQL creates and onboards the tables, its shell commands
run in the page's order, and each output the page shows (`You will see:`) is what they print.

The page's `sql` blocks that are statements (not a model or a macro of a user's project) run
first, the tables' `create`s before their onboarding `alter`s; the test's own rows go in between
(the page does not show a table's data) and the id table lists one id of each table.  Then every
command of its `bash` blocks runs, in order, in a dbt project of the product's models and macros.
Two placeholders are the reader's: the directory of the jars (`/path/to/jars`: the checkout's
`.jars/formats`) and a snapshot id (`5412...`: the one before the first purge, from `purge_log`).

An output the page shows is read as a pattern: `...` stands for any text, and each number for any
number, since a reader's versions and snapshot ids are their own.  So the words and the shape of
each line are held to the product's, not the figures.  In `make test-long` (about two minutes).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, local_only
from tests.functional.erasure.conftest import dbt_log, models, project_config, seeds  # noqa: F401
from tests.markdown_blocks import SHELL_FENCES

pytestmark = [local_only, pytest.mark.slow]

PAGE = REPO / "docs" / "formats.md"
IDS = "formats_guide_ids.requests"
DELTA_ID, ICEBERG_ID = 9101, 9201
# the page's placeholders, and what the story puts in their place
JARS_PLACEHOLDER = "/path/to/jars"
SNAPSHOT_PLACEHOLDER = "5412..."


def blocks(markdown: str) -> list[tuple[str, str, str]]:
    """(language, text, the prose since the previous block) of every fenced block, in order."""
    found, prose, language, body = [], [], None, []
    for line in markdown.splitlines():
        fence = line.strip()
        if language is None and fence.startswith("```"):
            language, body = fence[3:].strip() or "text", []
        elif language is not None and fence == "```":
            found.append((language, "\n".join(body), "\n".join(prose)))
            language, prose = None, []
        elif language is not None:
            body.append(line)
        else:
            prose.append(line)
    return found


def statements(markdown: str) -> list[str]:
    """The page's SQL statements, the `create`s first: the blocks that are no model or macro."""
    sql = [text.strip().rstrip(";") for language, text, _ in blocks(markdown) if language == "sql"]
    sql = [s for s in sql if "{{" not in s and "{%" not in s]
    return sorted(sql, key=lambda s: not s.lower().startswith("create"))


def story(markdown: str) -> list[tuple[str, list[str]]]:
    """Each shell command in order, with the outputs the page shows for it: a `text` block right
    after the command's block, or after a `You will see:` line."""
    steps: list[tuple[str, list[str]]] = []
    for language, text, prose in blocks(markdown):
        if f"```{language}" in SHELL_FENCES:
            for line in text.splitlines():
                if line.strip() and not line.strip().startswith("#"):
                    steps.append((line.strip(), []))
        elif language == "text" and steps and (not prose.strip() or prose.strip().endswith("You will see:")):
            steps[-1][1].append(text)
    return steps


def shown(text: str) -> re.Pattern[str]:
    """A pattern of an output the page shows: its words as written (lines joined), `...` any text,
    each number any number."""
    pattern = ""
    for part in re.split(r"(\.\.\.|\d+)", " ".join(text.split())):
        if part == "...":
            pattern += ".*?"
        elif part.isdigit():
            pattern += r"\d+"
        else:
            pattern += re.escape(part)
    return re.compile(pattern)


def test_the_page_s_story_has_what_this_test_runs() -> None:
    markdown = PAGE.read_text()
    commands = [command for command, _ in story(markdown)]
    assert sum(c.startswith("dbt ") for c in commands) >= 6, commands
    assert any(JARS_PLACEHOLDER in c for c in commands) and any(SNAPSHOT_PLACEHOLDER in c for c in commands)
    # the outputs the page promises after a command: the purges', the restore's, the onboarding's
    outputs = [text for _, texts in story(markdown) for text in texts]
    assert len(outputs) >= 4, outputs
    assert shown("version 1 -> 2 (delete); its log (file:/...)").search(
        "version 12 -> 13 (delete); its log (file:/tmp/x/_delta_log)"
    )
    assert not shown("version 1 -> 2").search("version a -> 2")


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return project_config("sales", IDS)


@pytest.fixture(scope="class")
def lake(project: Any, spark: Any) -> Any:
    for database in ("sales", "formats_guide_ids"):
        spark.sql(f"drop database if exists {database} cascade")
        spark.sql(f"create database {database}")
    for statement in statements(PAGE.read_text()):
        if statement.lower().startswith("alter"):
            # the page's tables hold rows of the reader's; here, these
            spark.sql(
                f"insert into sales.events values ({DELTA_ID}, 'a', 'd1'), (7, 'b', 'd1'), (8, 'c', 'd2')"
            )
            spark.sql(
                "insert into iceberg.sales.clicks select /*+ REPARTITION(1) */ * from values"
                f" ({ICEBERG_ID}, 'u1', 'd1'), (17, 'u2', 'd1'), (18, 'u3', 'd2')"
            )
            break
        spark.sql(statement)
    for statement in statements(PAGE.read_text()):
        if statement.lower().startswith("alter"):
            spark.sql(statement)
    stamp = f"{dt.datetime.now() - dt.timedelta(days=1):%Y-%m-%d %H:%M:%S}"
    spark.sql(f"create table {IDS} (guestid bigint, request_id string, requested_at timestamp) using parquet")
    spark.sql(
        f"insert into {IDS} values ({DELTA_ID}, 'GUIDE-1', timestamp'{stamp}'), ({ICEBERG_ID}, 'GUIDE-1', timestamp'{stamp}')"
    )
    yield
    spark.sql("drop table if exists iceberg.sales.clicks purge")
    for database in ("sales", "formats_guide_ids"):
        spark.sql(f"drop database if exists {database} cascade")


class TestTheFormatsGuide:
    def test_every_command_runs_and_prints_what_the_page_shows(
        self, project: Any, lake: Any, spark: Any
    ) -> None:
        snapshot_before = None
        logs: dict[str, list[str]] = {}  # each command's logs: the page repeats one ("the same command")
        for command, outputs in story(PAGE.read_text()):
            words = shlex.split(command.split("  #", 1)[0])
            if words[0] == "export":
                name, value = words[1].split("=", 1)
                assert name == "LAKEHOUSE_DELTA_JARS" and value == JARS_PLACEHOLDER, command
                # the session has them already (tests/conftest.py): the jars the page names are there
                jars = Path(os.environ[name])
                named = re.findall(r"[\w.-]+\.jar", command)
                assert named and all((jars / jar).is_file() for jar in named), (named, sorted(jars.iterdir()))
                continue
            assert words[0] == "dbt", command
            if SNAPSHOT_PLACEHOLDER in command:
                assert snapshot_before, "no Iceberg purge ran before the restore"
                words = [w.replace(SNAPSHOT_PLACEHOLDER, snapshot_before) for w in words]
            log = dbt_log(words[1:])
            logs.setdefault(command, []).append(" ".join(log.split()))
            for text in outputs:
                assert any(shown(text).search(earlier) for earlier in logs[command]), (
                    f"{command} did not print:\n{text}\n\n{log[-4000:]}"
                )
            if snapshot_before is None and "purge+" in command:
                reason = spark.sql(
                    f"select reason from {project.test_schema}.purge_log"
                    " where table_name = 'clicks' and state = 'COMMITTED'"
                ).collect()
                if reason:
                    snapshot_before = re.search(r"snapshot (\d+) ->", reason[0][0]).group(1)
        # the story's end: the Delta table purged again after its restore, the Iceberg table back
        # at the snapshot before its purge, each as the page says
        assert sorted(r.guestid for r in spark.table("sales.events").collect()) == [7, 8]
        assert sorted(r.guestid for r in spark.table("iceberg.sales.clicks").collect()) == [
            17,
            18,
            ICEBERG_ID,
        ]
