"""A 3-switch Cumulus fabric in the lab, driven through the real `fabricgen` command line.

Waves with concurrency 4: canary (tiny-leaf-1) | spines. Used by the lock, signal and
pending-drift tests (issue 15, findings 2 and 8).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from generator.checks.runner import run_checks
from generator.devices.nvue import load_nvue_document
from generator.intent.loader import load_intent
from generator.lab.control import LabDevice
from generator.render.managed import managed_set
from generator.render.output import render_files

INTENT = """\
fabric: {name: tiny}
topology:
  kind: leaf-spine
  nodes: 2
  gpus_per_node: 8
  rails: 2
  nic_speed: 400G
  switches:
    leaf: {model: SN4700}
    spine: {model: SN4700}
  cables: {host_leaf: 2, leaf_spine: 30}
switch_os: {name: cumulus, version: "5.11"}
deploy: {concurrency: 4}
"""
CANARY = "tiny-leaf-1"
SWITCHES = ("tiny-leaf-1", "tiny-spine-1", "tiny-spine-2")


@dataclass
class SmallFabric:
    intent: Path
    lab: object                   # conftest.LabHandle
    rendered: dict[str, str]
    env: dict[str, str]

    @property
    def endpoints(self) -> str:
        return str(self.lab.directory / "endpoints.yml")

    @property
    def state_dir(self) -> Path:
        return Path(self.env["FABRICGEN_STATE_DIR"])

    @property
    def lock(self) -> Path:
        return self.state_dir / "tiny" / "deploy.lock"

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "generator.cli", *args]

    def deploy_command(self, *extra: str) -> list[str]:
        return self.command("deploy", str(self.intent), "--endpoints", self.endpoints, "--yes", *extra)

    def run(self, args: list[str], cwd: Path | None = None, env: dict | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                              env=env or self.env)

    def start(self, args: list[str], cwd: Path | None = None, env: dict | None = None) -> subprocess.Popen:
        return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                                env=env or self.env)

    def session(self, name: str):
        driver = self.lab.driver(name)
        driver.open()
        return driver

    def running(self, name: str) -> dict:
        driver = self.session(name)
        try:
            return load_nvue_document(driver.get_config(retrieve="running")["running"])
        finally:
            driver.close()

    def pending(self, name: str) -> bool:
        driver = self.session(name)
        try:
            return driver.has_pending_commit()
        finally:
            driver.close()

    def deployed(self, name: str) -> bool:
        mine, _ = managed_set(False).split(self.running(name))
        return mine == load_nvue_document(self.rendered[name])


def small_fabric(tmp_path: Path, lab_start, *, confirm: int = 30, ssh_timeout: int = 30,
                 time_scale: float = 1.5) -> SmallFabric:
    """confirm: the deploy's timer (the intent's 30 s floor or more); the lab's clock runs
    time_scale times faster, so the default expires after 20 s of wall time."""
    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT)
    plan = run_checks(load_intent(intent)).plan
    rendered = {rel.split("/")[1]: text for rel, text in render_files(plan, INTENT).items()
                if rel.startswith("switches/")}
    lab = lab_start([LabDevice(name, "cumulus", "5.11") for name in SWITCHES], time_scale=time_scale)
    env = {**os.environ, "FABRICGEN_BACKUP_DIR": str(tmp_path / "backups"),
           "FABRICGEN_CONFIRM_TIMEOUT": str(confirm), "FABRICGEN_SSH_TIMEOUT": str(ssh_timeout)}
    return SmallFabric(intent, lab, rendered, env)


def wait_until(predicate, timeout: float, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()


def signal_taken(pid: int, sig: int) -> bool:
    """The kernel delivered SIG to the process: no thread of PID holds it pending any more.

    Delivery runs Python's C-level handler, which flags the signal for the main thread: from then
    on the deploy acts on it before its next step (proc(5): ShdPnd, SigPnd are hex masks)."""
    bit = 1 << (sig - 1)
    try:
        masks = [_status_mask(Path(f"/proc/{pid}/status"), "ShdPnd")]
        masks += [_status_mask(task / "status", "SigPnd") for task in Path(f"/proc/{pid}/task").iterdir()]
    except FileNotFoundError:
        return True                      # the process is gone: it took the signal
    return not any(mask & bit for mask in masks)


def _status_mask(path: Path, key: str) -> int:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return 0                         # a thread that ended meanwhile holds nothing
    for line in text.splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1], 16)
    return 0
