"""A concurrent writer for the purge's commit check: a second OS process that changes a partition's
files between the rewrite and the swap.

`run` is called in the dbt process just before the purge's commit check, by the test's wrapper of
that step (tests/functional/purge/conftest.py `before_commit_check`); it starts this file as a
separate Python process (plain file operations and
pyarrow, no Spark, no metastore) and waits for it.  The child appends one JSON line per change to
the report file, which the test reads:

- `append`: a new parquet file with two rows (4242, and 1001, a purged id);
- `replace`: the first data file rewritten in place, same name, same size, other bytes (one value
  of `payload` changed to another of the same length; the table is uncompressed parquet, so the
  bytes are there to patch); its modification time is the time of the write;
- `replace_keep_mtime`: the same, then the old modification time put back (`os.utime`);
- `delete`: the first data file removed.

A writer that is not Hadoop must also remove the `.crc` sidecar of a file it changes: Hadoop's
local filesystem checks every read against it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import uuid
from typing import Any
from urllib.parse import unquote, urlparse

ACTIONS = ("append", "replace", "replace_keep_mtime", "delete")
APPENDED_IDS = (4242, 1001)


def local(location: str) -> str:
    return unquote(urlparse(location).path) if location.startswith("file:") else location


def run(spark: Any, action: str, location: str, report: str) -> dict[str, Any]:
    """Start the writer process on `location` and wait for it (called from the purge's hook)."""
    del spark  # the writer shares nothing with the dbt process
    if action not in ACTIONS:
        raise ValueError(f"unknown writer action {action!r}")
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), action, local(location), report],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the concurrent writer failed: {done.stderr}")
    return {"ok": True, "pid": int(done.stdout.strip() or 0)}


def sha256(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def data_files(directory: str) -> list[str]:
    """The data files directly in `directory` (Spark's rule: no `_` or `.` names)."""
    names = sorted(n for n in os.listdir(directory) if not n.startswith(("_", ".")))
    return [os.path.join(directory, n) for n in names if os.path.isfile(os.path.join(directory, n))]


def drop_checksum(path: str) -> None:
    crc = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.crc")
    if os.path.exists(crc):
        os.remove(crc)


def rows(path: str) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


def append(directory: str) -> dict[str, Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.read_schema(data_files(directory)[0])
    added = [{"guestid": i, "payload": f"late{i}"} for i in APPENDED_IDS]
    path = os.path.join(directory, f"part-concurrent-{uuid.uuid4().hex}.parquet")
    pq.write_table(pa.Table.from_pylist(added, schema=schema), path, compression="none")
    return {"file": path, "removed": [], "added": added}


def replace(directory: str, keep_mtime: bool) -> dict[str, Any]:
    path = data_files(directory)[0]
    before = rows(path)
    stat = os.stat(path)
    old = before[0]["payload"]
    new = "q" + old[1:]
    assert new != old and len(new.encode()) == len(old.encode())
    with open(path, "rb") as handle:
        content = handle.read()
    patched = content.replace(old.encode(), new.encode())
    assert patched != content and len(patched) == len(content)
    with open(path, "r+b") as handle:  # in place: same name, same inode, same size
        handle.write(patched)
    drop_checksum(path)
    if keep_mtime:
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    after = rows(path)
    assert os.path.getsize(path) == stat.st_size
    return {
        "file": path,
        "removed": [r for r in before if r not in after],
        "added": [r for r in after if r not in before],
        "mtime_before": stat.st_mtime_ns,
        "mtime_after": os.stat(path).st_mtime_ns,
    }


def delete(directory: str) -> dict[str, Any]:
    path = data_files(directory)[0]
    removed = rows(path)
    os.remove(path)
    drop_checksum(path)
    return {"file": path, "removed": removed, "added": []}


def main(action: str, directory: str, report: str) -> None:
    if action == "append":
        change = append(directory)
    elif action == "delete":
        change = delete(directory)
    else:
        change = replace(directory, keep_mtime=action == "replace_keep_mtime")
    if os.path.exists(change["file"]):
        change["sha256"] = sha256(change["file"])
        change["size"] = os.path.getsize(change["file"])
    change.update(action=action, directory=directory, pid=os.getpid())
    with open(report, "a") as handle:
        handle.write(json.dumps(change) + "\n")
    print(os.getpid())


if __name__ == "__main__":
    main(*sys.argv[1:4])
