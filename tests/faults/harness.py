"""The crash-safety harness: real dbt processes on a private warehouse, killed at a chosen step.

A `Lake` is one warehouse and Derby metastore at a fixed path (locations in the metastore are
absolute, so a scenario's prepared state is saved once as a template and copied back to the same
path before each case).  `Lake.dbt(...)` runs dbt through `tests.faults.launcher` in a process
group of its own (`start_new_session=True`); with a `Fault`, the launcher freezes at the n-th
marker matching the fault's pattern, and the harness kills the whole group (the dbt process and
its Spark JVM) with SIGKILL.  `Lake.inspect(...)` reads the warehouse back with a separate Spark
process (`tests.faults.warehouse_tool`), never beside a dbt process.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests import warehouse_fs
from tests.conftest import REPO, TEST_FS, WAREHOUSE, WAREHOUSE_ROOT, assertion_session
from tests.functional.processes import DBT, environment

# one directory per pytest-xdist worker (two workers may prepare the same scenario: the purge
# lake serves the purge, restore and retention cases), under this process's own WAREHOUSE_ROOT unless
# FAULTS_TMP says where: two test runs at once (two worktrees, or `make test-long` beside
# `make test-hdfs`) must never share a lake
ROOT = Path(os.environ.get("FAULTS_TMP") or WAREHOUSE_ROOT / "faults") / (
    os.environ.get("PYTEST_XDIST_WORKER") or "main"
)
# on HDFS or an object store (LAKEHOUSE_TEST_FS) a lake's warehouse lives there, beside the tests'
# own warehouse; its metastore, logs and target stay under ROOT
REMOTE_ROOT = f"{WAREHOUSE.rsplit('/', 1)[0]}/faults/{os.environ.get('PYTEST_XDIST_WORKER') or 'main'}"
TIMEOUT = float(os.environ.get("FAULTS_TIMEOUT") or 900)
SCHEMA = "faults"


@dataclass(frozen=True)
class Fault:
    """Kill at the `nth` marker matching `pattern` (a regex over launcher markers); with `after`,
    the n-th among the markers that follow the first one matching `after`."""

    pattern: str
    nth: int = 1
    after: str | None = None


@dataclass(frozen=True)
class Interrupt:
    """Send `signal` when the command's output first matches `pattern` (a regex): SIGINT to the
    process group, as a terminal's Ctrl-C does (the Spark JVM ignores it), anything else to the
    dbt process alone, as `kill <pid>` does.  With `again`, the same signal once more that many
    seconds after the first (a user pressing Ctrl-C twice)."""

    pattern: str
    signal: int
    again: float | None = None


@dataclass
class Outcome:
    returncode: int | None
    output: str
    killed_at: str | None  # the marker the process was killed at; None when it ran to its end
    # with an Interrupt: when the signal went, how many went, and how long the process took to
    # end after the last
    signalled_at: str | None = None
    seconds_to_exit: float | None = None
    signals: int = 0

    @property
    def ok(self) -> bool:
        return self.killed_at is None and self.returncode == 0


class Remote:
    """A location on the filesystem under test (`hdfs://`, `s3a://`), seen through Hadoop by this
    process's own Spark session: as much of `Path` as the kill tests use."""

    def __init__(self, uri: str) -> None:
        self.uri = uri.rstrip("/")

    def __truediv__(self, part: str) -> Remote:
        return Remote(f"{self.uri}/{part}")

    def __str__(self) -> str:
        return self.uri

    @property
    def name(self) -> str:
        return self.uri.rsplit("/", 1)[1]

    def exists(self) -> bool:
        return warehouse_fs.exists(assertion_session(), self.uri)

    def iterdir(self) -> list[Remote]:
        return [self / name for name in warehouse_fs.listdir(assertion_session(), self.uri)]

    def rglob(self, pattern: str) -> list[Remote]:
        assert pattern == "*", pattern
        return [Remote(uri) for uri in warehouse_fs.walk(assertion_session(), self.uri)]


# dbt commands run per lake root (their output files are numbered), whichever `Lake` ran them
RUNS: Counter[Path] = Counter()


class Lake:
    def __init__(self, name: str, template: str = "template") -> None:
        self.name = name
        self.root = ROOT / name
        self.live = self.root / "live"
        self.template = self.root / template
        self.metastore = self.live / "metastore_db"
        self.warehouse: Path | Remote = self.live / "warehouse"
        self.remote: Remote | None = None
        if TEST_FS != "file":
            self.remote = Remote(f"{REMOTE_ROOT}/{name}")
            self.warehouse = self.remote / "live" / "warehouse"
        # what `inspect` saw of the saved template, by databases: every case restores the same
        # template, so its "before" is read once (a Spark process less per case)
        self.template_views: dict[tuple[str, ...], dict[str, dict[str, Any]]] = {}

    def variant(self, template: str) -> Lake:
        """The same warehouse and metastore with a template of its own (a later state of this
        lake's scenario, made from this lake's template: locations are absolute, so a copy could
        not move elsewhere); a case restores the template it needs, so the two never mix."""
        return Lake(self.name, template)

    # ---- state -------------------------------------------------------------------------------
    def reset(self) -> None:
        """An empty warehouse and metastore (every template of the lake is gone)."""
        self.template_views.clear()
        for path in (self.live, *self.root.glob("template*")):
            shutil.rmtree(path, ignore_errors=True)
        if self.remote is not None:
            warehouse_fs.delete(assertion_session(), str(self.remote))
        self.live.mkdir(parents=True)

    def save(self) -> None:
        self.template_views.clear()
        shutil.rmtree(self.template, ignore_errors=True)
        shutil.copytree(self.live, self.template, symlinks=True)
        if self.remote is not None:
            warehouse_fs.replace_tree(
                assertion_session(), str(self.warehouse), str(self.remote / self.template.name)
            )

    def restore(self) -> None:
        shutil.rmtree(self.live, ignore_errors=True)
        shutil.copytree(self.template, self.live, symlinks=True)
        if self.remote is not None:
            warehouse_fs.replace_tree(
                assertion_session(), str(self.remote / self.template.name), str(self.warehouse)
            )

    def env(self) -> dict[str, str]:
        return environment(
            self.warehouse,
            self.metastore,
            DBT_SCHEMA=SCHEMA,
            SPARK_SHUFFLE_PARTITIONS="2",
            SPARK_DRIVER_MEMORY="1g",
        )

    # ---- processes -----------------------------------------------------------------------------
    def dbt(
        self,
        *args: str,
        fault: Fault | None = None,
        census: Path | None = None,
        interrupt: Interrupt | None = None,
        stop_with: int = signal.SIGKILL,
        project: Path = REPO,
    ) -> Outcome:
        """One dbt command; with `fault`, killed (process group, SIGKILL) at that step, or sent
        `stop_with` (SIGINT, as Ctrl-C in a terminal does: the whole group gets it, then runs on to
        its end, or is killed after FAULTS_INTERRUPT_GRACE seconds); with `interrupt`, signalled
        when its output shows the pattern, then left to end on its own.  `project`: the dbt
        project (the repository, or `overriding_project`'s)."""
        RUNS[self.root] += 1
        tag = f"{RUNS[self.root]:03d}"
        hit = self.root / f"hit-{tag}"
        hit.unlink(missing_ok=True)
        env = self.env()
        if fault is not None:
            env.update(FAULT_AT=fault.pattern, FAULT_NTH=str(fault.nth), FAULT_HIT=str(hit))
            if fault.after is not None:
                env["FAULT_AFTER"] = fault.after
            if stop_with != signal.SIGKILL:
                env["FAULT_THEN"] = "continue"
        if census is not None:
            env["FAULT_CENSUS"] = str(census)
        log = self.root / f"dbt-{tag}.out"
        # the launcher only where a fault or a census needs its markers; else dbt itself
        launcher = (
            [sys.executable, "-m", "tests.faults.launcher"]
            if fault is not None or census is not None
            else [DBT]
        )
        command = [
            *launcher, "--no-use-colors", *args,
            "--project-dir", str(project), "--profiles-dir", str(REPO),
            "--target-path", str(self.root / "target"), "--log-path", str(self.root / "logs"),
        ]  # fmt: skip
        with open(log, "w") as out:
            proc = subprocess.Popen(
                command, cwd=self.root, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
            killed_at = signalled_at = None
            signalled, signals = 0.0, 0
            deadline = time.time() + TIMEOUT
            while proc.poll() is None:
                if interrupt is not None and signalled_at is None:
                    found = re.search(interrupt.pattern, log.read_text(), re.MULTILINE)
                    if found:
                        signalled_at, signalled = found.group(0), time.monotonic()
                        signals = send(proc, interrupt.signal, signals)
                elif (
                    interrupt is not None
                    and interrupt.again is not None
                    and signals == 1
                    and time.monotonic() - signalled >= interrupt.again
                ):
                    signalled = time.monotonic()
                    signals = send(proc, interrupt.signal, signals)
                if hit.exists():
                    killed_at = hit.read_text()
                    if stop_with == signal.SIGKILL:
                        kill_group(proc)
                    else:
                        interrupt_group(proc, stop_with)
                    break
                if time.time() > deadline:
                    kill_group(proc)
                    raise AssertionError(f"dbt {' '.join(args)} ran over {TIMEOUT:.0f}s; output in {log}")
                time.sleep(0.05)
            proc.wait()
            took = time.monotonic() - signalled if signalled_at is not None else None
            wait_group_gone(proc.pid)
        output = log.read_text()
        if interrupt is not None and signalled_at is None:
            raise AssertionError(f"dbt {' '.join(args)} never printed {interrupt.pattern!r}; output in {log}")
        if fault is not None and killed_at is None:
            raise AssertionError(
                f"dbt {' '.join(args)} never reached the fault point {fault} (exit {proc.returncode}); "
                f"output in {log}:\n{output[-3000:]}"
            )
        return Outcome(proc.returncode, output, killed_at, signalled_at, took, signals)

    def tool(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run the harness's own Spark process on this warehouse (`warehouse_tool`)."""
        proc = subprocess.run(
            [sys.executable, "-m", "tests.faults.warehouse_tool", str(self.warehouse), str(self.metastore)],
            input=json.dumps(request),
            cwd=self.root,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            start_new_session=True,
        )
        if proc.returncode != 0 or "--- result ---" not in proc.stdout:
            raise AssertionError(
                f"warehouse tool failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
            )
        return json.loads(proc.stdout.split("--- result ---", 1)[1])

    def sql(self, statements: list[str]) -> None:
        self.tool({"sql": statements})

    def inspect_template(self, *databases: str) -> dict[str, dict[str, Any]]:
        """`inspect` of the saved template, as `restore` puts it back: read once per template."""
        if databases not in self.template_views:
            self.restore()
            self.template_views[databases] = self.inspect(*databases)
        return self.template_views[databases]

    def inspect(self, *databases: str) -> dict[str, dict[str, Any]]:
        """{`db.table`: what the tool saw} for every table of `databases`."""
        found = self.tool({"inspect": list(databases)})
        return {f"{t['database']}.{t['table']}": t for t in found["tables"]}

    # ---- the filesystem ----------------------------------------------------------------------
    def leftovers(self, tables: dict[str, dict[str, Any]], under: list[Path] | list[Remote]) -> list[str]:
        """Files and directories under `under` that no table or partition of `tables` references.

        Whatever lies inside a partition's location or an unpartitioned table's location is
        referenced; a partitioned table's own directory references only itself (its data is in
        its partitions), as retention sees it.  Directories on the way to a referenced location
        and Spark's `_SUCCESS` markers (and their checksum files) are not counted.  On HDFS or an
        object store the paths are the filesystem's URIs, as the metastore spells locations.
        """
        covering, anchors = set(), set()
        for table in tables.values():
            partitions = [local_path(p) for p in (table.get("partitions") or {}).values()]
            if table.get("location"):
                (anchors if table.get("partition_columns") else covering).add(local_path(table["location"]))
            covering.update(partitions)
        left = []
        for base in under:
            if not base.exists():
                continue
            for path in sorted(base.rglob("*"), key=str):
                text = str(path)
                if path.name in ("_SUCCESS", "._SUCCESS.crc") or any(
                    text == c or text.startswith(c + "/") for c in covering
                ):
                    continue
                if any(text == a or a.startswith(text + "/") for a in anchors | covering):
                    continue
                left.append(text)
        # the topmost unreferenced paths only
        return [p for p in left if not any(p.startswith(q + "/") for q in left)]


def overriding_project(root: Path, macros: dict[str, str]) -> Path:
    """The repository's dbt project as a user's copy with macros of their own (file name ->
    text): under `root`, every part of the project linked, `macros/` a copy of the repository's
    macros (dbt follows no link below a path it searches) with these added: a root project's
    macro wins over the package's dispatch default."""
    project = root / "project"
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    for part in ("dbt_project.yml", "models", "seeds", "snapshots", "tests"):
        (project / part).symlink_to(REPO / part)
    shutil.copytree(REPO / "macros", project / "macros")
    for name, text in macros.items():
        (project / "macros" / name).write_text(text)
    return project


def local_path(location: str) -> str:
    for prefix in ("file://", "file:"):
        if location.startswith(prefix):
            location = location[len(prefix) :]
            break
    return location.rstrip("/")


def send(proc: subprocess.Popen, signum: int, sent: int) -> int:
    """`signum` as an `Interrupt` sends it (SIGINT and SIGKILL to the process group, anything else
    to the dbt process alone); the number of signals sent so far."""
    try:
        if signum in (signal.SIGINT, signal.SIGKILL):
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)
    except ProcessLookupError:
        return sent
    return sent + 1


def interrupt_group(proc: subprocess.Popen, signum: int) -> None:
    """`signum` to the stopped process group, which is then let run until it ends (a grace period,
    then SIGKILL)."""
    try:
        os.killpg(proc.pid, signum)
        os.killpg(proc.pid, signal.SIGCONT)
        proc.wait(timeout=float(os.environ.get("FAULTS_INTERRUPT_GRACE") or 120))
    except subprocess.TimeoutExpired:
        kill_group(proc)
    except ProcessLookupError:
        pass


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def wait_group_gone(pgid: int, timeout: float = 60) -> None:
    """Wait until no process of the group is left (the Spark JVM included)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        except PermissionError:
            return
        time.sleep(0.1)
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            return
    raise AssertionError(f"process group {pgid} still has processes {timeout:.0f}s after SIGKILL")


# ---- rows --------------------------------------------------------------------------------------
def canonical(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, default=str)


def multiset(rows: list[dict[str, Any]]) -> Counter:
    return Counter(canonical(r) for r in rows)


def describe_difference(expected: Counter, actual: Counter) -> str:
    missing = expected - actual
    extra = actual - expected
    lines = []
    for row, n in sorted(missing.items())[:10]:
        lines.append(f"  missing x{n}: {row}")
    for row, n in sorted(extra.items())[:10]:
        lines.append(f"  extra   x{n}: {row}")
    return "\n".join(lines)
