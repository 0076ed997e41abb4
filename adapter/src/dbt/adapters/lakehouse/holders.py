"""Who holds a warehouse's run lock or lease: the record a holder writes and a refused run reads.

The local lock (`run_lock`) and the lease on the warehouse's filesystem (`warehouse_lease`) write
the same record, so a refused run says the same thing whichever refused it.
"""

from __future__ import annotations

import os
import socket
import sys
from datetime import datetime, timezone
from typing import Any


def identity() -> dict[str, Any]:
    """This process: pid, host and command line, its program by base name (`dbt run --select
    purge+`): a holder's, or a refused run's."""
    command = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))
    return {"pid": os.getpid(), "host": socket.gethostname(), "command": command}


def record() -> dict[str, Any]:
    """This process as a holder: `identity` and when it took the lock (UTC)."""
    return {**identity(), "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def describe(info: dict[str, Any]) -> str:
    """A holder's record in words, for a refusal."""
    return (
        f"pid {info.get('pid')} on {info.get('host')}, running `{info.get('command')}` "
        f"since {info.get('started_at')}"
    )
