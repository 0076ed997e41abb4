"""The purge's commit check on each filesystem: what tells a file written again under its name
from the one fingerprinted before the rewrite (docs/safety.md, "A concurrent writer").

A second writer (tests/functional/purge/writer.py's client, not Hadoop's) writes a data file,
the purge's listing (FileFacts) fingerprints it, the writer writes it again under the same name
with the same size and other bytes and, where the store lets it, puts the old modification time
back; then the listing fingerprints it again.  On HDFS the file has a new id, on S3 a new entity
tag: the fingerprints differ, whatever the times.  The local disk has neither: the fingerprints
are equal, the limit the documentation states.
"""

from __future__ import annotations

import os

from python_hooks.catalog.file_facts import FileFacts
from tests.conftest import TEST_FS, beside_warehouse
from tests.functional.purge.writer import store_for


def test_a_file_written_again_with_its_size_and_time_is_told_apart_where_the_store_can(spark, tmp_path):
    directory = beside_warehouse(f"versions-{tmp_path.name}")
    store = store_for(directory)
    where = store.path(directory)
    if TEST_FS == "file":
        os.makedirs(where)
    path = f"{where}/part-00000.parquet"
    store.write(path, b"A" * 64)
    facts = FileFacts(spark)
    before = facts.list([directory])[directory]
    # listed again, unchanged: the same version, the same fingerprint (no false alarm)
    again = FileFacts(spark).list([directory])[directory]
    assert again.files == before.files and again.fingerprint() == before.fingerprint()
    _, mtime = store.stat(path)
    store.write(path, b"B" * 64, replace=True)
    if store.keeps_mtime:
        store.set_mtime(path, mtime)
    after = facts.list([directory])[directory]

    assert [(f.size, f.path.rsplit("/", 1)[1]) for f in after.files] == [(64, "part-00000.parquet")]
    assert store.read(path) == b"B" * 64
    if store.keeps_mtime:
        assert after.files[0].modified == before.files[0].modified  # the time put back
    if TEST_FS == "file":
        # no version on the local disk: the replacement passes the commit check (the stated limit)
        assert before.files[0].version is None and after.files[0].version is None
        assert after.fingerprint() == before.fingerprint() and after.changes_since(before.files) == ""
    else:
        prefix = {"hdfs": "id:", "s3a": "etag:"}[TEST_FS]
        assert before.files[0].version.startswith(prefix), before.files[0]
        assert after.files[0].version.startswith(prefix) and after.files[0].version != before.files[0].version
        assert after.fingerprint() != before.fingerprint()
        said = after.changes_since(before.files)  # what the commit check's FAILED reason says
        assert said.startswith("part-00000.parquet written again ("), said
        assert said.endswith("version changed)"), said
        if store.keeps_mtime:
            assert said == "part-00000.parquet written again (version changed)"
