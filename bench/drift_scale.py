"""Drift check of 128 simulated switches: all in sync, then one hand-edited device.

    .venv/bin/python bench/drift_scale.py [--keep DIR]

The fabric is the one of bench/deploy_scale.py: rail-optimized, 120 nodes x 8 rails in
scalable units of 8 nodes = 120 leaves + 8 spines. The rendered configs are pushed with
`fabricgen deploy --yes` (FABRICGEN_CONFIRM_TIMEOUT=60), then `fabricgen drift --only
switches --format json` is timed twice through the CLI (start-up time included): once
in sync (exit 0), once after an MTU change by hand on one leaf (exit 3, only that leaf
drifted). The lab is always stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# the same 128-switch fabric and CPU accounting as the deploy benchmark (bench/ is on sys.path)
from deploy_scale import INTENT, children_cpu, cpu_seconds_of  # noqa: E402

from generator.checks.runner import run_checks  # noqa: E402
from generator.intent.loader import load_intent  # noqa: E402
from generator.lab.control import LabDevice, lab_down, lab_up  # noqa: E402


def cli(*args: str, env: dict, cwd: Path) -> tuple[subprocess.CompletedProcess, float]:
    started = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "generator.cli", *args], capture_output=True, text=True,
                         env=env, cwd=cwd)
    return run, time.perf_counter() - started


def hand_edit(endpoints: dict, lab_dir: Path, name: str, *commands: str) -> None:
    from netmiko import ConnectHandler

    entry = endpoints["switches"][name]
    conn = ConnectHandler(device_type="cumulus_linux", host="127.0.0.1", port=int(entry["port"]),
                          username=entry["username"], password=(lab_dir / "password").read_text().strip(),
                          ssh_strict=True, system_host_keys=False, alt_host_keys=True,
                          alt_key_file=str(lab_dir / "known_hosts"), allow_agent=False, use_keys=False,
                          fast_cli=True)
    try:
        for command in commands:
            output = conn.send_command(command, expect_string=r"[$#]\s*$", read_timeout=30)
            if "Error" in output:
                sys.exit(f"{name}: {command}: {output}")
    finally:
        conn.disconnect()


def main() -> int:
    import yaml

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="work in this directory and leave it (the lab is always stopped)")
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="fabricgen-drift-bench-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    intent = work / "fabric.yaml"
    intent.write_text(INTENT)
    plan = run_checks(load_intent(intent)).plan
    devices = [LabDevice(sw.name, plan.switch_os, ".".join(map(str, plan.switch_os_version)))
               for sw in plan.switches]
    leaves = [sw.name for sw in plan.switches if sw.role == "leaf"]
    print(f"{len(devices)} switches ({len(leaves)} leaves), {plan.switch_os}; {os.cpu_count()} CPUs shared "
          "by the simulator and the CLI")
    lab_dir = work / "lab"
    env = {**os.environ, "FABRICGEN_BACKUP_DIR": str(work / "backups"), "FABRICGEN_CONFIRM_TIMEOUT": "60"}
    failed = False
    try:
        started = time.perf_counter()
        endpoints_path = lab_up(devices, lab_dir, username=plan.deploy_user, timeout=180)
        print(f"lab up: {time.perf_counter() - started:.1f}s")
        endpoints = yaml.safe_load(endpoints_path.read_text())
        lab_pid = int((lab_dir / "lab.pid").read_text())

        run, seconds = cli("deploy", str(intent), "--endpoints", str(endpoints_path), "--only", "switches",
                           "--yes", env=env, cwd=work)
        if run.returncode != 0:
            sys.exit(f"deploy failed (exit {run.returncode}):\n{run.stdout}\n{run.stderr}")
        print(f"deploy: {seconds:.1f}s")

        victim = leaves[0]
        for label, want in (("drift, all in sync", 0), (f"drift, {victim} hand-edited", 3)):
            if want == 3:
                hand_edit(endpoints, lab_dir, victim, "nv set interface swp1 link mtu 1500", "nv config apply -y")
            report = work / f"drift-{want}.json"
            lab_cpu, cli_cpu = cpu_seconds_of(lab_pid), children_cpu()
            run, seconds = cli("drift", str(intent), "--endpoints", str(endpoints_path), "--only", "switches",
                               "--format", "json", "--output", str(report), env=env, cwd=work)
            if not report.is_file():
                sys.exit(f"{label}: exit {run.returncode}, no report:\n{run.stdout}\n{run.stderr}")
            doc = json.loads(report.read_text())
            drifted = sorted(n for n, d in doc["devices"].items() if d["status"] == "drift")
            print(f"{label}: exit {run.returncode}, {seconds:.1f}s wall, {len(devices) / seconds:.1f} devices/s; "
                  f"CPU: drift {children_cpu() - cli_cpu:.1f}s, simulator {cpu_seconds_of(lab_pid) - lab_cpu:.1f}s")
            print(f"  summary: {doc['summary']}" + (f"; drifted: {', '.join(drifted)}" if drifted else ""))
            for name, device in doc["devices"].items():
                if device["status"] == "unknown":
                    print(f"  unknown: {name}: {device.get('error')}")
            if run.returncode != want or drifted != ([victim] if want == 3 else []):
                print(f"  UNEXPECTED: wanted exit {want}" + (f" with only {victim} drifted" if want == 3 else ""))
                failed = True
    finally:
        lab_down(lab_dir)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
