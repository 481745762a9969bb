"""Drift check of 128 simulated switches: all in sync, then one hand-edited device.

    .venv/bin/python bench/drift_scale.py [--nos cumulus|sonic] [--keep DIR]

The fabric of bench/fleet.py, deployed with `fabricgen deploy --yes` (SONiC: `--provision`),
then `fabricgen drift --only switches --format json` timed through the CLI (start-up time
included): once in sync (exit 0), then, on Cumulus, after an MTU change by hand on one leaf
(exit 3, only that leaf drifted). The lab is always stopped.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fleet import PASSWORD, Fleet  # noqa: E402


def hand_edit(fleet: Fleet, name: str, *commands: str) -> None:
    import yaml
    from netmiko import ConnectHandler

    entry = yaml.safe_load(fleet.endpoints.read_text())["switches"][name]
    conn = ConnectHandler(device_type="cumulus_linux", host="127.0.0.1", port=int(entry["port"]),
                          username=entry["username"], password=PASSWORD, ssh_strict=True, system_host_keys=False,
                          alt_host_keys=True, alt_key_file=str(fleet.lab / "known_hosts"), allow_agent=False,
                          use_keys=False, fast_cli=True)
    try:
        for command in commands:
            output = conn.send_command(command, expect_string=r"[$#]\s*$", read_timeout=30)
            if "Error" in output:
                sys.exit(f"{name}: {command}: {output}")
    finally:
        conn.disconnect()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nos", choices=("cumulus", "sonic"), default="cumulus")
    parser.add_argument("--keep", help="work in this directory and leave it (the lab is always stopped)")
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="fabricgen-drift-bench-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    fleet = Fleet(work, args.nos)
    failed = False
    try:
        fleet.up()
        fleet.deploy("deploy", provision=args.nos == "sonic", day0=True)
        victim = "bench128-leaf-su1-r0"
        steps = [("drift, all in sync", 0)] + ([(f"drift, {victim} hand-edited", 3)] if args.nos == "cumulus" else [])
        for label, want in steps:
            if want == 3:
                hand_edit(fleet, victim, "nv set interface swp1s0 link mtu 1500", "nv config apply -y")
            report = work / f"drift-{want}.json"
            fleet.timed(label, "drift", str(fleet.intent), "--endpoints", str(fleet.endpoints), "--only", "switches",
                        "--format", "json", "--output", str(report), want=want)
            doc = json.loads(report.read_text())
            drifted = sorted(n for n, d in doc["devices"].items() if d["status"] == "drift")
            print(f"  summary: {doc['summary']}" + (f"; drifted: {', '.join(drifted)}" if drifted else ""))
            for name, device in doc["devices"].items():
                if device["status"] == "unknown":
                    print(f"  unknown: {name}: {device.get('error')}")
            if drifted != ([victim] if want == 3 else []):
                print("  UNEXPECTED: wanted " + (f"only {victim} drifted" if want == 3 else "no drift"))
                failed = True
    finally:
        fleet.down()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
