#!/usr/bin/env python3
"""Keep the machine's cores busy while a command runs (``make test-stress``).

``python hack/benchmarks/cpu_hog.py [--procs N] [--max-seconds S] -- CMD ...`` starts N busy-loop
processes (default: one per core) at normal priority, runs CMD, then stops them. The hogs
also stop on their own after ``--max-seconds`` (default 2 h), so a killed parent never
leaves them behind. Exits with CMD's exit code.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time


def _burn(max_seconds: float) -> None:
    deadline = time.monotonic() + max_seconds
    parent = os.getppid()
    x = 0
    while time.monotonic() < deadline:
        for _ in range(200_000):
            x = (x * 31 + 7) & 0xFFFFFFFF
        if os.getppid() != parent:  # the parent died: stop
            return


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--max-seconds", type=float, default=7200.0)
    parser.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        parser.error("no command given")
    hogs = [
        multiprocessing.Process(target=_burn, args=(args.max_seconds,), daemon=True)
        for _ in range(args.procs)
    ]
    for hog in hogs:
        hog.start()
    print(f"cpu_hog: {len(hogs)} busy processes while running: {' '.join(cmd)}", flush=True)
    try:
        return subprocess.call(cmd)
    finally:
        for hog in hogs:
            hog.terminate()
        for hog in hogs:
            hog.join(5)


if __name__ == "__main__":
    sys.exit(main())
