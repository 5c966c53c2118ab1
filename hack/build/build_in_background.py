#!/usr/bin/env python3
"""Run hack/build/ scripts one after another in a detached background process.

    python hack/build/build_in_background.py build_kueue.py build_scheduler_plugins.py

Returns at once. The scripts (file names in ``hack/build/``) run in order with this
interpreter, their output appended to ``$KUBERAY_CACHE/background-builds.log`` (default
``~/.cache/kuberay``). Each script's
``build()`` holds a lock in its own cache directory while it builds, so a test that calls
``build()`` meanwhile waits for that build instead of starting a second one, and gets the
cached binary; if the background build failed, the test's own ``build()`` tries again and
reports the error. Scripts whose outputs are already cached return in well under a second.
The chain runs at ``nice 19`` so the tests running beside it keep the CPU they need.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BUILD = Path(__file__).resolve().parent  # hack/build/: the scripts named on the command line


def main(argv: list[str]) -> int:
    scripts = [BUILD / name for name in argv]
    missing = [str(s) for s in scripts if not s.is_file()]
    if missing:
        print(f"build_in_background: no such script: {', '.join(missing)}", file=sys.stderr)
        return 2
    root = Path(os.environ.get("KUBERAY_CACHE") or Path.home() / ".cache" / "kuberay")
    root.mkdir(parents=True, exist_ok=True)
    log = root / "background-builds.log"
    chain = "; ".join(f"'{sys.executable}' '{s}'" for s in scripts)
    with open(log, "ab") as out:
        subprocess.Popen(
            # lowest CPU priority: the tests running meanwhile come first (a test waiting
            # for one of these builds leaves the CPU to it)
            ["nice", "-n", "19", "/bin/sh", "-c", chain],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    print(f"building in the background: {', '.join(argv)} (log: {log})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
