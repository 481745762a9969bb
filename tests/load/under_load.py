"""Run pytest with every core busy (issue 35): `make test-under-load`.

A test that races a real process must pass on a loaded machine (CI runners, a shared bastion).
This starts one CPU hog per core, runs pytest with the given arguments, and stops the hogs by
their PIDs afterwards. Each hog is bounded on its own too: it exits after --max-seconds, or as
soon as its parent (this script) is gone, so an interrupted run leaves nothing spinning.

    python -m tests.load.under_load [--hogs N] [--max-seconds S] -- PYTEST-ARGS...
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys

HOG = """\
import os, sys, time
parent, end = os.getppid(), time.monotonic() + float(sys.argv[1])
while time.monotonic() < end and os.getppid() == parent:
    for _ in range(100000):
        pass
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hogs", type=int, default=os.cpu_count() or 1, help="CPU hogs (default: one per core)")
    parser.add_argument("--max-seconds", type=float, default=3600, help="a hog's own limit (default 3600)")
    parser.add_argument("pytest_args", nargs="*", help="arguments for pytest (after --)")
    args = parser.parse_args(argv)
    if not 1 <= args.hogs <= 64 or not 0 < args.max_seconds <= 86400:
        parser.error("--hogs 1-64, --max-seconds up to 86400")
    hogs = [subprocess.Popen([sys.executable, "-c", HOG, str(args.max_seconds)], stdin=subprocess.DEVNULL)
            for _ in range(args.hogs)]
    print(f"under load: {len(hogs)} CPU hog(s), PIDs {' '.join(str(h.pid) for h in hogs)}", flush=True)
    try:
        return subprocess.call([sys.executable, "-m", "pytest", *args.pytest_args])
    finally:
        for hog in hogs:
            if hog.poll() is None:
                hog.send_signal(signal.SIGTERM)
        for hog in hogs:
            try:
                hog.wait(timeout=10)
            except subprocess.TimeoutExpired:
                hog.kill()
                hog.wait()


if __name__ == "__main__":
    sys.exit(main())
