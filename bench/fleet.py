"""What bench/deploy_scale.py, drift_scale.py and verify_scale.py share: the 128-switch fabric,
a lab started as a person starts it (`fabricgen lab up`), CLI runs timed with their CPU.

The fabric (issue 26): rail-optimized, 120 nodes x 8 rails in scalable units of 8 nodes =
120 leaves + 8 spines, with `management:` (eth0, accounts and NTP in every switch config), so
a deploy has a canary, eight rail waves and two spine halves. `--nos sonic` builds the same
fabric on SONiC 202411 (day 0 is `deploy --provision`). The lab process and the CLI share this
machine's CPUs: every figure says wall time, the CLI's CPU and the simulator's CPU, and
devices/s. Nothing here is a test: the benches print figures and assert nothing about time.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The lab's documented password ("fabricgen-lab", inventories/*/fabric.yaml) and its SHA-512 hash:
# the rendered accounts must let the benchmark's own login back in after the first deploy.
PASSWORD = "fabricgen-lab"
PASSWORD_HASH = ("$6$fabricgenlab$OqKu8s1.iwmcF01KT9u5xm4I.NCIbdtaGpsXRepyozGYW04mGmSCSYv//RyMxZLJ98uk9N"
                 ".Iv8BlED6PdN2T/0")
TOPOLOGY = """\
fabric: {{name: bench128}}
topology:
  kind: rail-optimized
  nodes: 120
  rails: 8
  nodes_per_unit: 8
deploy: {{confirm_timeout: 300, concurrency: 32}}
{os}management:
  ntp: [192.0.2.10]
{users}"""
CUMULUS_USERS = f"""\
  users:
    - name: cumulus
      role: system-admin
      hashed_password: "{PASSWORD_HASH}"
"""
SONIC_OS = 'switch_os: {name: sonic, version: "202411"}\naddressing: {fabric_links: 10.254.0.0/16}\n'


def intent_text(nos: str) -> str:
    if nos == "sonic":           # SONiC keeps its accounts outside config_db (FG503): no users
        return TOPOLOGY.format(os=SONIC_OS, users="")
    return TOPOLOGY.format(os="", users=CUMULUS_USERS)


def cpu_seconds_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Fleet:
    """One work directory: the intent, the lab, the environment every CLI run gets."""

    def __init__(self, work: Path, nos: str):
        self.work, self.nos = work, nos
        self.intent = work / "fabric.yaml"
        self.intent.write_text(intent_text(nos))
        self.lab = work / "lab"
        self.endpoints = self.lab / "endpoints.yml"
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), "FABRICGEN_PASSWORD": PASSWORD,
                    "FABRICGEN_BACKUP_DIR": str(work / "backups")}
        self.lab_pid: int | None = None

    def cli(self, *args: str) -> tuple[subprocess.CompletedProcess, float]:
        started = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "generator.cli", *args], capture_output=True, text=True,
                             env=self.env, cwd=self.work)
        return run, time.perf_counter() - started

    def up(self) -> None:
        run, seconds = self.cli("lab", "up", str(self.intent), "--dir", str(self.lab))
        if run.returncode != 0:
            sys.exit(f"lab up failed (exit {run.returncode}):\n{run.stdout}\n{run.stderr}")
        self.lab_pid = int((self.lab / "lab.pid").read_text())
        print(f"{run.stdout.strip()} ({seconds:.1f}s); {os.cpu_count()} CPUs shared by the simulator and the CLI")

    def down(self) -> None:
        if self.lab.exists():
            self.cli("lab", "down", "--dir", str(self.lab))

    def timed(self, label: str, *args: str, want: int | None = 0, devices: int = 128) -> subprocess.CompletedProcess:
        """Run one CLI command, print `label: wall, devices/s, CPU`; exit if it did not exit `want`
        (None: any exit status, the caller looks)."""
        lab_cpu, cli_cpu = cpu_seconds_of(self.lab_pid), children_cpu()
        run, seconds = self.cli(*args)
        print(f"{label}: {seconds:.1f}s wall, {devices / seconds:.1f} devices/s; CPU: fabricgen "
              f"{children_cpu() - cli_cpu:.1f}s, simulator {cpu_seconds_of(self.lab_pid) - lab_cpu:.1f}s "
              f"(exit {run.returncode})")
        if want is not None and run.returncode != want:
            sys.exit(f"{label}: exit {run.returncode}, wanted {want}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
        return run

    def deploy(self, label: str, *, provision: bool = False, day0: bool = False) -> subprocess.CompletedProcess:
        return self.timed(label, "deploy", str(self.intent), "--endpoints", str(self.endpoints), "--only",
                          "switches", "--yes", *(["--provision"] if provision else []), *(["--day0"] if day0 else []))
