"""The rendered per-NIC QoS unit passes the real `systemd-analyze verify` for every rail
instance of every example (unit syntax, the %i/%I specifiers, the device dependency and the
ExecStart binary), in a root holding only the unit, the script and the distribution's
targets and slices (verify needs sysinit.target and friends to build the start job)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.render.hosts import (
    INSTALL_PATHS,
    RECONCILE_SERVICE,
    RECONCILE_TIMER,
    SCHEDULER_DROPINS,
    SCRIPT_PATH,
    render_host,
    systemd_escape,
)
from tests.golden.examples import GOLDEN

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
UNIT = "fabricgen-roce-qos@.service"
SYSTEM_UNITS = Path("/lib/systemd/system")


@pytest.fixture(scope="module")
def analyze() -> str:
    path = shutil.which("systemd-analyze")
    if path is None or not (SYSTEM_UNITS / "sysinit.target").exists():
        pytest.skip("systemd-analyze and the systemd unit files are needed (apt-get install -y systemd)")
    return path


def _root(tmp_path: Path, files: dict[str, str], host: str) -> Path:
    root = tmp_path / "root"
    lib = root / "usr/lib/systemd/system"
    lib.mkdir(parents=True)
    for pattern in ("*.target", "*.slice"):
        for unit in SYSTEM_UNITS.glob(pattern):
            if unit.is_file():
                shutil.copy(unit, lib / unit.name)
    for name in (UNIT, "roce-qos.sh"):
        dest = root / INSTALL_PATHS[name].lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(files[f"hosts/{host}/{name}"])
        dest.chmod(0o755 if name == "roce-qos.sh" else 0o644)
    return root


def _verify(analyze: str, root: Path, instance: str) -> subprocess.CompletedProcess:
    return subprocess.run([analyze, "verify", "--man=no", f"--root={root}", f"fabricgen-roce-qos@{instance}.service"],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name", GOLDEN)
def test_unit_verifies_for_every_rail_instance(analyze, tmp_path, name):
    plan = compile_plan(load_intent(REPO / "inventories" / name / "fabric.yaml").intent)
    host = plan.hosts[0]
    root = _root(tmp_path, render_host(plan, host), host.name)
    assert INSTALL_PATHS["roce-qos.sh"] == SCRIPT_PATH
    for nic in host.nics:
        r = _verify(analyze, root, systemd_escape(nic.netdev))
        assert r.returncode == 0 and r.stderr == "", (nic.netdev, r.stderr)


def test_verify_catches_a_broken_unit(analyze, tmp_path):
    """The check above can fail: a misspelt key and a missing script are both reported."""
    plan = compile_plan(load_intent(REPO / "inventories" / "small" / "fabric.yaml").intent)
    host = plan.hosts[0]
    root = _root(tmp_path, render_host(plan, host), host.name)
    unit = root / INSTALL_PATHS[UNIT].lstrip("/")
    unit.write_text(unit.read_text().replace("TimeoutStartSec=", "TimeoutStartSek="))
    r = _verify(analyze, root, systemd_escape(host.nics[0].netdev))
    assert "Unknown key 'TimeoutStartSek'" in r.stderr
    (root / SCRIPT_PATH.lstrip("/")).unlink()
    r = _verify(analyze, root, systemd_escape(host.nics[0].netdev))
    assert r.returncode != 0 and "fabricgen-roce-qos" in r.stderr


def _with_schedulers(tmp_path: Path, files: dict[str, str], host: str) -> Path:
    """_root plus the reconcile service and timer, and slurmd/kubelet as their packages install them
    (a unit calling its daemon), with fabricgen's drop-ins where the playbook puts them."""
    root = _root(tmp_path, files, host)
    for name in (RECONCILE_SERVICE, RECONCILE_TIMER, *SCHEDULER_DROPINS):
        dest = root / INSTALL_PATHS[name].lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(files[f"hosts/{host}/{name}"])
    for unit, daemon in (("slurmd.service", "usr/sbin/slurmd"), ("kubelet.service", "usr/bin/kubelet")):
        (root / daemon).parent.mkdir(parents=True, exist_ok=True)
        (root / daemon).write_text("#!/bin/sh\n")
        (root / daemon).chmod(0o755)
        (root / "usr/lib/systemd/system" / unit).write_text(
            f"[Unit]\nDescription={unit}\n\n[Service]\nExecStart=/{daemon}\n\n[Install]\nWantedBy=multi-user.target\n")
    return root


def _verify_units(analyze: str, root: Path, *units: str) -> subprocess.CompletedProcess:
    return subprocess.run([analyze, "verify", "--man=no", f"--root={root}", *units],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name", GOLDEN)
def test_reconcile_timer_and_scheduler_dropins_verify(analyze, tmp_path, name):
    """The timer, its service and slurmd/kubelet with the drop-ins that pull every rail instance in
    (Wants=) and start behind them (After=): verify loads each unit with its drop-ins and builds
    its start job, so an instance name it cannot load is an error here."""
    plan = compile_plan(load_intent(REPO / "inventories" / name / "fabric.yaml").intent)
    host = plan.hosts[0]
    files = render_host(plan, host)
    root = _with_schedulers(tmp_path, files, host.name)
    r = _verify_units(analyze, root, RECONCILE_TIMER, RECONCILE_SERVICE, "slurmd.service", "kubelet.service")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    instances = " ".join(f"fabricgen-roce-qos@{systemd_escape(nic.netdev)}.service" for nic in host.nics)
    for dropin in SCHEDULER_DROPINS:
        lines = files[f"hosts/{host.name}/{dropin}"].splitlines()
        assert lines[lines.index("[Unit]") + 1:] == [f"Wants={instances}", f"After={instances}"]


def test_verify_reads_the_dropins_and_the_timer(analyze, tmp_path):
    """The check above can fail: a misspelt key in a drop-in and in the timer are reported, so verify
    did read the drop-in where the playbook installs it."""
    plan = compile_plan(load_intent(REPO / "inventories" / "small" / "fabric.yaml").intent)
    host = plan.hosts[0]
    root = _with_schedulers(tmp_path, render_host(plan, host), host.name)
    dropin = root / INSTALL_PATHS["slurmd-roce-qos.conf"].lstrip("/")
    dropin.write_text(dropin.read_text().replace("After=", "Afterr="))
    timer = root / INSTALL_PATHS[RECONCILE_TIMER].lstrip("/")
    timer.write_text(timer.read_text().replace("OnUnitInactiveSec=", "OnUnitInactiveSek="))
    r = _verify_units(analyze, root, RECONCILE_TIMER, "slurmd.service")
    assert "Unknown key 'Afterr'" in r.stderr and "fabricgen-roce-qos.conf" in r.stderr, r.stderr
    assert "Unknown key 'OnUnitInactiveSek'" in r.stderr, r.stderr
