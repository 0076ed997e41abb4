"""The benchmark rows of docs/benchmarks.md and the README are generated from the records the
benchmarks write (bench/results/*.json, tools/benchmarks.py): a stale page fails, a new record
changes its row and its verdict, and a record is found by the command that wrote it."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import record  # noqa: E402

from tools import benchmarks  # noqa: E402


def test_the_pages_are_what_the_records_give() -> None:
    stale = [str(path) for path, text in benchmarks.pages().items() if (REPO / path).read_text() != text]
    assert stale == [], f"stale: {stale}; run `make benchmarks-page`"


def test_every_record_is_named_by_its_own_command_and_shown_in_a_row() -> None:
    records = record.read_all()
    for key, found in records.items():
        assert record.result_key(shlex.split(found["command"]), found["environment"]) == key
    shown = {row.record for row in benchmarks.ROWS}
    assert sorted(set(records) - shown) == [], "a record no row shows: add its row to tools/benchmarks.py"


def test_the_key_leaves_out_the_repetitions_and_orders_the_options() -> None:
    key = record.result_key(
        shlex.split("bench/purge_bench.py --rows 50000000 --repeat 3 --fs s3a --keep-work")
    )
    assert key == "purge_bench.fs=s3a.rows=50000000"
    assert record.result_key(shlex.split("bench/purge_bench.py --fs=s3a --rows 50000000")) == key
    on_s3 = record.result_key(["bench/purge_bench.py", "--cluster"], {"CLUSTER_WAREHOUSE_FS": "s3a"})
    assert on_s3 == "purge_bench.CLUSTER_WAREHOUSE_FS=s3a.cluster"
    assert record.result_key(["bench/x_bench.py", "--vars", '{"a": false}']) == "x_bench.vars=_a_false_"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The two pages and the records, in a directory of their own."""
    (tmp_path / "docs").mkdir()
    for name in ("README.md", "docs/benchmarks.md"):
        shutil.copy(REPO / name, tmp_path / name)
    shutil.copytree(record.RESULTS, tmp_path / "results")
    return tmp_path


def test_a_new_run_s_record_changes_its_row_and_its_verdict(copy: Path) -> None:
    command = "bench/purge_bench.py --sweep-rows 0 --repeat 7"
    path = record.write(
        {"node_ratio": 1.05, "command_ratio": 1.31, "floor_s": 2.5},
        repetitions=7,
        argv=shlex.split(command),
        results=copy / "results",
    )
    assert path.name == "purge_bench.sweep-rows=0.json"  # the same command's record, replaced
    written = json.loads(path.read_text())
    assert written["commit"] and written["machine"].split(",")[0].endswith("cores")

    pages = benchmarks.pages(copy, copy / "results")
    page, readme = pages[benchmarks.PAGE], pages[benchmarks.README]
    row = next(line for line in page.splitlines() if f"`{command}`" in line)
    # the node's target is met, the command's missed: the verdict names which
    assert "| 1.05× / 1.31× | 2.50 s | ≤ 1.1× / ≤ 1.3×: command **missed** |" in row
    assert f"medians of 7 | `{written['commit']}` |" in row
    # the README shows the same row, less the page's last three columns
    assert row.rsplit(" | ", 3)[0] + " |" in readme.splitlines()
    assert (REPO / benchmarks.PAGE).read_text() != page


def test_a_record_missing_a_figure_names_its_file_and_the_figure(copy: Path) -> None:
    path = copy / "results" / "retention_bench.json"
    found = json.loads(path.read_text())
    found["figures"].pop("floor_s", None)
    path.write_text(json.dumps(found))
    with pytest.raises(benchmarks.StaleRecord, match=r"retention_bench\.json has no figure `floor_s`"):
        benchmarks.pages(copy, copy / "results")
    path.unlink()
    with pytest.raises(benchmarks.StaleRecord, match=r"no bench/results/retention_bench\.json for the row"):
        benchmarks.pages(copy, copy / "results")


def test_an_estimate_says_about_and_a_figure_not_measured_a_dash(copy: Path) -> None:
    audit = copy / "results" / "audit_bench.json"
    found = json.loads(audit.read_text())
    found["figures"]["floor_s"], found["approximate"] = 97, ["floor_s"]
    audit.write_text(json.dumps(found))
    verifier = copy / "results" / "erasure_verify_bench.cluster.fs=hdfs.rows=5000000.json"
    found = json.loads(verifier.read_text())
    found["figures"]["ratio"], found["not_measured"] = 1.75, ["floor_s"]
    found["figures"].pop("floor_s", None)
    verifier.write_text(json.dumps(found))
    page = benchmarks.pages(copy, copy / "results")[benchmarks.PAGE]
    row = next(line for line in page.splitlines() if "`bench/audit_bench.py`" in line)
    assert "one insert per row, about 97 s" in row
    row = next(line for line in page.splitlines() if "erasure_verify_bench.py --cluster --fs hdfs" in line)
    assert "| 1.75× | — |" in row
