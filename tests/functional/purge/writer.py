"""A concurrent writer for the purge's commit check: a second OS process that changes a partition's
files between the rewrite and the swap, with a client of its own on the warehouse's filesystem.

`run` is called in the dbt process just before the purge's commit check, by the test's wrapper of
that step (tests/functional/purge/conftest.py `before_commit_check`); it starts this file as a
separate Python process (no Spark, no metastore, no Hadoop) and waits for it.  The child reaches
the files as another writer would (`store_for`):

- the local disk: the OS's own calls;
- HDFS: the NameNode's WebHDFS REST API (`LAKEHOUSE_TEST_WEBHDFS`, its http://host:port, which
  the storage and cluster test scripts export);
- S3: pyarrow's S3 client, with the endpoint and credentials the adapter reads
  (`LAKEHOUSE_S3_ENDPOINT`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`).

It appends one JSON line per change to the report file, which the test reads (the location it
was given, and the file it changed under that location):

- `append`: a new parquet file with two rows (4242, and 1001, a purged id);
- `replace`: the first data file written again under its name with the same size and other bytes
  (one value of `payload` changed to another of the same length; the table is uncompressed
  parquet, so the bytes are there to patch).  On the local disk in place (same inode); on HDFS a
  new file under the old name (HDFS files are written once); on S3 a new object under the key;
- `replace_keep_mtime`: the same, then the old modification time put back (`os.utime`, WebHDFS
  SETTIMES).  S3 sets an object's Last-Modified itself: there the action is refused;
- `delete`: the first data file removed.

A writer that is not Hadoop must also remove the `.crc` sidecar of a file it changes on the local
disk: Hadoop's local filesystem checks every read against it.
"""

from __future__ import annotations

import getpass
import hashlib
import io
import json
import os
import subprocess
import sys
import uuid
from typing import Any
from urllib.error import HTTPError
from urllib.parse import quote, urlencode, urlparse
from urllib.request import Request, urlopen

ACTIONS = ("append", "replace", "replace_keep_mtime", "delete")
APPENDED_IDS = (4242, 1001)


def local(location: str) -> str:
    # a catalog location is a Hadoop path: an escaped partition value (`ds=10%3A00`) is the
    # directory's own name, never to be unquoted
    return urlparse(location).path if location.startswith("file:") else location


class LocalStore:
    """The local disk, by the OS's calls; paths are plain paths."""

    keeps_mtime = True

    def path(self, location: str) -> str:
        return local(location)

    def data_files(self, directory: str) -> list[str]:
        """The data files directly in `directory` (Spark's rule: no `_` or `.` names)."""
        names = sorted(n for n in os.listdir(directory) if not n.startswith(("_", ".")))
        return [os.path.join(directory, n) for n in names if os.path.isfile(os.path.join(directory, n))]

    def read(self, path: str) -> bytes:
        with open(path, "rb") as handle:
            return handle.read()

    def write(self, path: str, content: bytes, replace: bool = False) -> None:
        # a replacement in place: same name, same inode, same size
        with open(path, "r+b" if replace else "wb") as handle:
            handle.write(content)
        self._drop_checksum(path)

    def delete(self, path: str) -> None:
        os.remove(path)
        self._drop_checksum(path)

    @staticmethod
    def _drop_checksum(path: str) -> None:
        crc = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.crc")
        if os.path.exists(crc):
            os.remove(crc)

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def stat(self, path: str) -> tuple[int, int]:
        """(size, modification time in the store's own unit: ns here, to be put back exactly)."""
        found = os.stat(path)
        return found.st_size, found.st_mtime_ns

    def set_mtime(self, path: str, mtime: int) -> None:
        os.utime(path, ns=(os.stat(path).st_atime_ns, mtime))


class WebHdfsStore:
    """HDFS through its NameNode's REST API; paths are the HDFS paths (`/lakehouse/...`)."""

    keeps_mtime = True

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")
        self.user = getpass.getuser()

    def path(self, location: str) -> str:
        return urlparse(location).path

    def _url(self, path: str, op: str, **params: Any) -> str:
        query = urlencode({"op": op, "user.name": self.user, **params})
        return f"{self.base}/webhdfs/v1{quote(path)}?{query}"

    def _call(self, method: str, url: str, data: bytes | None = None) -> bytes:
        request = Request(url, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/octet-stream")
        try:
            with urlopen(request, timeout=60) as response:  # noqa: S310 - the loopback NameNode
                return response.read()
        except HTTPError as exc:
            # WebHDFS says why in its body (a RemoteException as JSON)
            raise RuntimeError(f"WebHDFS {method} {url}: HTTP {exc.code}: {exc.read()[:500]!r}") from exc

    def data_files(self, directory: str) -> list[str]:
        listed = json.loads(self._call("GET", self._url(directory, "LISTSTATUS")))
        names = sorted(
            s["pathSuffix"]
            for s in listed["FileStatuses"]["FileStatus"]
            if s["type"] == "FILE" and not s["pathSuffix"].startswith(("_", "."))
        )
        return [f"{directory.rstrip('/')}/{n}" for n in names]

    def read(self, path: str) -> bytes:
        return self._call("GET", self._url(path, "OPEN"))  # redirected to the DataNode

    def write(self, path: str, content: bytes, replace: bool = False) -> None:
        # two steps: the NameNode names the DataNode to send the bytes to
        where = json.loads(self._call("PUT", self._url(path, "CREATE", overwrite="true", noredirect="true")))
        self._call("PUT", where["Location"], content)

    def delete(self, path: str) -> None:
        if not json.loads(self._call("DELETE", self._url(path, "DELETE")))["boolean"]:
            raise RuntimeError(f"WebHDFS did not delete {path}")

    def exists(self, path: str) -> bool:
        try:
            with urlopen(self._url(path, "GETFILESTATUS"), timeout=60):  # noqa: S310 - the loopback NameNode
                return True
        except HTTPError as exc:
            if exc.code == 404:
                return False
            raise

    def stat(self, path: str) -> tuple[int, int]:
        """(size, modification time in ms, HDFS's unit)."""
        status = json.loads(self._call("GET", self._url(path, "GETFILESTATUS")))["FileStatus"]
        return int(status["length"]), int(status["modificationTime"])

    def set_mtime(self, path: str, mtime: int) -> None:
        self._call("PUT", self._url(path, "SETTIMES", modificationtime=mtime, accesstime=-1))


class S3Store:
    """An S3 bucket through pyarrow's client; paths are `bucket/key`."""

    keeps_mtime = False  # Last-Modified is the store's, set by every write

    def __init__(self, endpoint: str) -> None:
        from pyarrow import fs

        missing = [k for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY") if not os.environ.get(k)]
        if not endpoint or missing:
            raise RuntimeError(
                "the concurrent writer reaches S3 with the adapter's settings: set LAKEHOUSE_S3_ENDPOINT,"
                " AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (scripts/storage/test.sh s3a does);"
                f" missing: {', '.join(missing + ([] if endpoint else ['LAKEHOUSE_S3_ENDPOINT']))}"
            )
        parsed = urlparse(endpoint)
        self.fs = fs.S3FileSystem(
            access_key=os.environ["AWS_ACCESS_KEY_ID"],
            secret_key=os.environ["AWS_SECRET_ACCESS_KEY"],
            endpoint_override=parsed.netloc,
            scheme=parsed.scheme or "http",
            region="us-east-1",
            allow_bucket_creation=False,
        )

    def path(self, location: str) -> str:
        parsed = urlparse(location)
        return f"{parsed.netloc}{parsed.path}"

    def data_files(self, directory: str) -> list[str]:
        from pyarrow import fs

        found = self.fs.get_file_info(fs.FileSelector(directory.rstrip("/")))
        return sorted(
            f.path for f in found if f.type == fs.FileType.File and not f.base_name.startswith(("_", "."))
        )

    def read(self, path: str) -> bytes:
        with self.fs.open_input_stream(path) as handle:
            return handle.read()

    def write(self, path: str, content: bytes, replace: bool = False) -> None:
        with self.fs.open_output_stream(path) as handle:
            handle.write(content)

    def delete(self, path: str) -> None:
        self.fs.delete_file(path)

    def exists(self, path: str) -> bool:
        from pyarrow import fs

        return self.fs.get_file_info(path).type != fs.FileType.NotFound

    def stat(self, path: str) -> tuple[int, int]:
        """(size, Last-Modified in ns)."""
        info = self.fs.get_file_info(path)
        return int(info.size), int(info.mtime_ns)

    def set_mtime(self, path: str, mtime: int) -> None:
        raise NotImplementedError("S3 sets an object's Last-Modified itself: it cannot be put back")


def store_for(location: str) -> LocalStore | WebHdfsStore | S3Store:
    """The writer's own client for the filesystem of `location`."""
    scheme = urlparse(location).scheme
    if scheme in ("", "file"):
        return LocalStore()
    if scheme == "hdfs":
        base = os.environ.get("LAKEHOUSE_TEST_WEBHDFS")
        if not base:
            raise RuntimeError(
                f"the concurrent writer reaches HDFS ({location}) through WebHDFS: set"
                " LAKEHOUSE_TEST_WEBHDFS to the NameNode's http://host:port (scripts/storage/test.sh does)"
            )
        return WebHdfsStore(base)
    if scheme == "s3a":
        return S3Store(os.environ.get("LAKEHOUSE_S3_ENDPOINT", ""))
    raise RuntimeError(f"the concurrent writer has no client for {scheme}:// (the location {location})")


def run(spark: Any, action: str, location: str, report: str) -> dict[str, Any]:
    """Start the writer process on `location` and wait for it (called from the purge's hook)."""
    del spark  # the writer shares nothing with the dbt process
    if action not in ACTIONS:
        raise ValueError(f"unknown writer action {action!r}")
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), action, location, report],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the concurrent writer failed: {done.stderr}")
    return {"ok": True, "pid": int(done.stdout.strip() or 0)}


def sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def rows(content: bytes) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(content), use_threads=False).to_pylist()


def append(store: Any, directory: str) -> dict[str, Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.read_schema(io.BytesIO(store.read(store.data_files(directory)[0])))
    added = [{"guestid": i, "payload": f"late{i}"} for i in APPENDED_IDS]
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(added, schema=schema), buffer, compression="none")
    path = f"{directory.rstrip('/')}/part-concurrent-{uuid.uuid4().hex}.parquet"
    store.write(path, buffer.getvalue())
    return {"file": path, "removed": [], "added": added}


def replace(store: Any, directory: str, keep_mtime: bool) -> dict[str, Any]:
    path = store.data_files(directory)[0]
    content = store.read(path)
    size, mtime = store.stat(path)
    before = rows(content)
    old = before[0]["payload"]
    new = "q" + old[1:]
    assert new != old and len(new.encode()) == len(old.encode())
    patched = content.replace(old.encode(), new.encode())
    assert patched != content and len(patched) == len(content)
    store.write(path, patched, replace=True)
    if keep_mtime:
        store.set_mtime(path, mtime)
    after = rows(store.read(path))
    assert store.stat(path)[0] == size
    return {
        "file": path,
        "removed": [r for r in before if r not in after],
        "added": [r for r in after if r not in before],
        "mtime_before": mtime,
        "mtime_after": store.stat(path)[1],
    }


def delete(store: Any, directory: str) -> dict[str, Any]:
    path = store.data_files(directory)[0]
    removed = rows(store.read(path))
    store.delete(path)
    return {"file": path, "removed": removed, "added": []}


def main(action: str, location: str, report: str) -> None:
    store = store_for(location)
    directory = store.path(location)
    if action == "append":
        change = append(store, directory)
    elif action == "delete":
        change = delete(store, directory)
    else:
        change = replace(store, directory, keep_mtime=action == "replace_keep_mtime")
    if store.exists(change["file"]):
        content = store.read(change["file"])
        change["sha256"] = sha256(content)
        change["size"] = len(content)
    # the file as the catalog spells its directory, for the test's own reads through Hadoop
    change["file"] = f"{location.rstrip('/')}/{change['file'].rsplit('/', 1)[1]}"
    change.update(action=action, location=location, pid=os.getpid())
    with open(report, "a") as handle:
        handle.write(json.dumps(change) + "\n")
    print(os.getpid(), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
    # done, and said so: out before the interpreter's teardown, where pyarrow's threads aborted
    # one run in five here ("terminate called without an active exception", exit 134)
    os._exit(0)
