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
from generator.render.hosts import INSTALL_PATHS, SCRIPT_PATH, render_host, systemd_escape
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
