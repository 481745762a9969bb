"""The kit's Kea config passes the real `kea-dhcp4 -t` (Debian's kea-dhcp4-server) for every
example intent with `management:`, Cumulus and SONiC, switches and GPU servers' NICs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import example
from tests.day0_support import URL, compiled, examples_with_management, write_inventory

KEA = shutil.which("kea-dhcp4") or ("/usr/sbin/kea-dhcp4" if Path("/usr/sbin/kea-dhcp4").exists() else None)
pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(KEA is None, reason="kea-dhcp4 is not installed (apt-get install kea-dhcp4-server)")]


def _check(config: dict, tmp_path: Path) -> subprocess.CompletedProcess:
    # the kit's lease file is Debian's /var/lib/kea/kea-leases4.csv; the test keeps its own
    config["Dhcp4"]["lease-database"]["name"] = str(tmp_path / "leases4.csv")
    path = tmp_path / "kea-check.json"
    path.write_text(json.dumps(config))
    return subprocess.run([KEA, "-t", str(path)], capture_output=True, text=True, timeout=60)


def test_examples_are_what_this_test_covers() -> None:
    names = examples_with_management()
    assert "medium" in names and "medium-sonic" in names, names
    assert {compiled(n)[1].switch_os for n in names} == {"cumulus", "sonic"}


@pytest.mark.parametrize("name", examples_with_management())
def test_kea_accepts_the_kit(name: str, tmp_path: Path) -> None:
    text, plan = compiled(name)
    inv = write_inventory(tmp_path / "inventory.csv", plan, hosts=min(4, len(plan.hosts)))
    out = tmp_path / "kit"
    r = subprocess.run([sys.executable, "-m", "generator.cli", "day0", str(example(name)), "-o", str(out), "--url",
                        URL, "--inventory", str(inv), "--dhcp-interface", "lo"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    config = json.loads((out / "kea-dhcp4.json").read_text())
    assert config["Dhcp4"]["lease-database"]["name"] == "/var/lib/kea/kea-leases4.csv"
    assert len(config["Dhcp4"]["subnet4"][0]["reservations"]) == len(plan.switches) + min(4, len(plan.hosts))
    r = _check(config, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_kea_check_catches_a_broken_config(tmp_path: Path) -> None:
    """The check above can fail: a reservation outside the subnet is refused by Kea."""
    text, plan = compiled("medium")
    from generator.day0.kea import kea_config
    from tests.day0_support import inventory

    config, _ = kea_config(plan, inventory(plan), URL, "lo")
    assert _check(json.loads(json.dumps(config)), tmp_path).returncode == 0
    config["Dhcp4"]["subnet4"][0]["reservations"][0]["ip-address"] = "10.99.0.1"
    r = _check(config, tmp_path)
    assert r.returncode != 0 and "10.99.0.1" in r.stdout + r.stderr
