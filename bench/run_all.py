"""`make bench`: run every benchmark in bench/ (each prints its figures and ratios)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    scripts = sorted(HERE.glob("*_bench.py"))
    failed = 0
    for script in scripts:
        print(f"\n##### {script.name}", flush=True)
        failed += subprocess.call([sys.executable, str(script), *sys.argv[1:]]) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
