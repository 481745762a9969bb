"""Deploy to 128 simulated switches, then redeploy with nothing to change.

    .venv/bin/python bench/deploy_scale.py [--keep DIR]

The fabric is rail-optimized, 120 nodes x 8 rails in scalable units of 8 nodes:
120 leaves + 8 spines = 128 switches, so the rollout has a canary, eight rail
waves and two spine halves. Both runs go through the `fabricgen deploy` CLI, as a
person would run them; the figures include its start-up time.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generator.checks.runner import run_checks  # noqa: E402
from generator.intent.loader import load_intent  # noqa: E402
from generator.lab.control import LabDevice, lab_down, lab_up  # noqa: E402

INTENT = """\
fabric: {name: bench128}
topology:
  kind: rail-optimized
  nodes: 120
  rails: 8
  nodes_per_unit: 8
deploy: {confirm_timeout: 300, concurrency: 32}
"""


def cpu_seconds_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def deploy(intent: Path, endpoints: Path, env: dict) -> tuple[float, str]:
    started = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "generator.cli", "deploy", str(intent), "--endpoints",
                          str(endpoints), "--only", "switches", "--yes"],
                         capture_output=True, text=True, env=env, cwd=intent.parent)
    seconds = time.perf_counter() - started
    if run.returncode != 0:
        sys.exit(f"deploy failed (exit {run.returncode}):\n{run.stdout}\n{run.stderr}")
    summary = next(line for line in run.stdout.splitlines() if "switch(es):" in line)
    return seconds, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="work in this directory and leave it (the lab is always stopped)")
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="fabricgen-deploy-bench-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    intent = work / "fabric.yaml"
    intent.write_text(INTENT)
    plan = run_checks(load_intent(intent)).plan
    devices = [LabDevice(sw.name, plan.switch_os, ".".join(map(str, plan.switch_os_version)))
               for sw in plan.switches]
    lab_dir = work / "lab"
    env = {**os.environ, "FABRICGEN_BACKUP_DIR": str(work / "backups")}
    try:
        started = time.perf_counter()
        endpoints = lab_up(devices, lab_dir, username=plan.deploy_user, timeout=180)
        print(f"lab up: {len(devices)} switches in {time.perf_counter() - started:.1f}s")
        lab_pid = int((lab_dir / "lab.pid").read_text())
        print(f"{os.cpu_count()} CPUs; the simulator and the deploy share them, so CPU seconds are shown too")
        for label in ("deploy", "redeploy (no changes)"):
            lab_cpu, cli_cpu = cpu_seconds_of(lab_pid), children_cpu()
            seconds, summary = deploy(intent, endpoints, env)
            print(f"{label}: {seconds:.1f}s wall, {len(devices) / seconds:.1f} devices/s; CPU: deploy "
                  f"{children_cpu() - cli_cpu:.1f}s, simulator {cpu_seconds_of(lab_pid) - lab_cpu:.1f}s")
            print(f"  {summary}")
    finally:
        lab_down(lab_dir)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
