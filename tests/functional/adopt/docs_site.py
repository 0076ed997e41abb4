"""The docs site `dbt docs generate` wrote, as a user opens it: served over HTTP on the loopback
and rendered by a real headless Chromium (Debian's `chromium`; `make chromium` installs it).

`render(site, fragment)` serves `site` (a copy of target/: index.html, manifest.json,
catalog.json) with Python's http.server on a free port of 127.0.0.1, loads
`index.html#!/<fragment>` in a fresh headless Chromium profile, lets the page's scripts fetch the
artifacts and render (`--virtual-time-budget`), and returns the DOM Chromium dumps.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
import threading
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def browser() -> str | None:
    return next((path for path in map(shutil.which, BROWSERS) if path), None)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's name
        pass


@contextmanager
def served(site: Path) -> Iterator[str]:
    """`site` on http://127.0.0.1:<free port>/ while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def dump_dom(url: str, budget_ms: int = 15000, timeout: float = 120) -> str:
    """The DOM of `url` after the page's scripts ran for `budget_ms` of virtual time."""
    chromium = browser()
    if chromium is None:
        raise RuntimeError("no Chromium on PATH: `make chromium` installs Debian's package")
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        done = subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                f"--user-data-dir={profile}",
                f"--virtual-time-budget={budget_ms}",
                "--dump-dom",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    if done.returncode != 0 or "<html" not in done.stdout:
        raise RuntimeError(f"chromium could not render {url}: {done.stderr[-3000:]}")
    return done.stdout


def render(site: Path, fragment: str) -> str:
    with served(site) as root:
        return dump_dom(f"{root}index.html#!/{fragment}")
