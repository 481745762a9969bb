"""`fabricgen verify --only switches` of 128 simulated switches, correctly wired, several runs.

    .venv/bin/python bench/verify_scale.py [--nos cumulus|sonic] [--runs 10] [--keep DIR]

The fabric of bench/fleet.py, cabled as planned (`lab up` uses the plan's cabling), deployed
with `fabricgen deploy --yes` (SONiC: `--provision`), then verified `--runs` times in a row
through the CLI with its defaults (5 s counter interval, 30 s BGP settle). Each run must exit
0 with no finding: a finding on this fabric is a false one, and is printed. Wall, CPU and
devices/s per run, then the slowest and the median.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fleet import Fleet  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nos", choices=("cumulus", "sonic"), default="cumulus")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--keep", help="work in this directory and leave it (the lab is always stopped)")
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="fabricgen-verify-bench-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    fleet = Fleet(work, args.nos)
    false_findings = 0
    walls = []
    try:
        fleet.up()
        fleet.deploy("deploy", provision=args.nos == "sonic", day0=True)
        for index in range(1, args.runs + 1):
            report = work / f"verify-{index}.json"
            started = time.perf_counter()
            run = fleet.timed(f"verify {index}/{args.runs}", "verify", str(fleet.intent), "--endpoints",
                              str(fleet.endpoints), "--only", "switches", "--format", "json", "--output",
                              str(report), want=None)
            walls.append(time.perf_counter() - started)
            findings = json.loads(report.read_text())["findings"] if report.is_file() else []
            false_findings += len(findings)
            for finding in findings[:5]:
                print(f"  FALSE FINDING: {finding}")
            if run.returncode != 0 and not findings:
                print(f"  exit {run.returncode}: {run.stderr.strip()[-500:]}")
                false_findings += 1
        print(f"{args.runs} runs: median {statistics.median(walls):.1f}s, slowest {max(walls):.1f}s; "
              f"false findings: {false_findings}")
    finally:
        fleet.down()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if false_findings else 0


if __name__ == "__main__":
    sys.exit(main())
