"""The adapter's filesystem methods, called from macros, on real files."""

import json
import os
import time

import pytest
from dbt.tests.util import run_dbt

from python_hooks.errors import LakehouseError

FS_MACROS = """
{% macro fs_probe(op, path, other=none) %}
    {% if op == 'list' %}{% set result = adapter.fs_list(path, recursive=true) %}
    {% elif op == 'exists' %}{% set result = adapter.fs_exists(path) %}
    {% elif op == 'summary' %}{% set result = adapter.fs_summary(path) %}
    {% elif op == 'move' %}{% set result = adapter.fs_move(path, other) %}
    {% elif op == 'delete' %}{% set result = adapter.fs_delete(path) %}
    {% elif op == 'fingerprint' %}{% set result = adapter.fs_fingerprint(path) %}
    {% elif op == 'within' %}{% set result = adapter.fs_is_within(path, other) %}
    {% elif op == 'mkdirs' %}{% set result = adapter.fs_mkdirs(path) %}
    {% elif op == 'qualify' %}{% set result = adapter.fs_qualify(path) %}
    {% endif %}
    {% do log('FS_RESULT=' ~ tojson(result), info=true) %}
{% endmacro %}
"""


def probe(op, path, other=None):
    args = {"op": op, "path": str(path)}
    if other is not None:
        args["other"] = str(other)
    captured = []

    def grab(event):
        msg = getattr(event.info, "msg", "") or ""
        if msg.startswith("FS_RESULT="):
            captured.append(json.loads(msg[len("FS_RESULT=") :]))

    run_dbt(["run-operation", "fs_probe", "--args", json.dumps(args)], callbacks=[grab])
    assert captured, "the macro logged no result"
    return captured[-1]


class TestFilesystemMethods:
    @pytest.fixture(scope="class")
    def macros(self):
        from tests.conftest import repo_files

        return {**repo_files("macros"), "fs_probe.sql": FS_MACROS}

    def test_every_method(self, project, tmp_path):
        root = tmp_path / "data"
        (root / "p=1").mkdir(parents=True)
        (root / "p=1" / "part-0.parquet").write_bytes(b"x" * 100)
        (root / "p=1" / "_SUCCESS").write_bytes(b"")
        (root / "top.txt").write_bytes(b"y" * 7)
        old = time.time() - 3600
        os.utime(root / "top.txt", (old, old))

        listing = {os.path.basename(e["path"]): e for e in probe("list", root)}
        assert listing["part-0.parquet"]["size"] == 100
        assert listing["top.txt"]["size"] == 7 and listing["p=1"]["is_dir"] is True
        assert abs(listing["top.txt"]["modification_time"] / 1000 - old) < 2

        assert probe("exists", root / "top.txt") is True
        assert probe("exists", root / "nope") is False
        assert probe("summary", root) == {"files": 3, "dirs": 2, "bytes": 107}
        assert probe("within", root / "p=1" / "part-0.parquet", root) is True
        assert probe("within", tmp_path / "data2", root) is False
        # a bare path is qualified with the warehouse's default filesystem (here the local one),
        # without a trailing slash; `..` is resolved
        assert probe("qualify", f"{root}/p=1/../") == f"file:{root}"

        assert probe("mkdirs", root / "made" / "deeper") is True
        assert (root / "made" / "deeper").is_dir()
        assert probe("summary", root) == {"files": 3, "dirs": 4, "bytes": 107}
        (root / "made" / "deeper").rmdir()
        (root / "made").rmdir()

        before = probe("fingerprint", root)
        (root / "p=1" / "part-1.parquet").write_bytes(b"z")
        assert probe("fingerprint", root) != before

        assert probe("move", root / "p=1", tmp_path / "moved" / "p=1") is True
        assert not (root / "p=1").exists()
        assert (tmp_path / "moved" / "p=1" / "part-0.parquet").read_bytes() == b"x" * 100

        gone = probe("delete", tmp_path / "moved")
        assert gone == {"deleted": True, "files": 3, "bytes": 101}
        assert not (tmp_path / "moved").exists()
        assert probe("delete", tmp_path / "moved") == {"deleted": False, "files": 0, "bytes": 0}

    def test_move_refuses_to_overwrite(self, project, spark, tmp_path):
        from python_hooks.catalog import filesystem

        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        (tmp_path / "b" / "keep").write_text("keep me")
        with pytest.raises(LakehouseError, match="the destination exists"):
            filesystem.move(spark, str(tmp_path / "a"), str(tmp_path / "b"))
        assert (tmp_path / "b" / "keep").read_text() == "keep me"
        assert (tmp_path / "a").is_dir()
