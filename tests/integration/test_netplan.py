"""Every rendered netplan.yaml of the examples passes the real `netplan generate`."""

from __future__ import annotations

import configparser
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.render.hosts import render_host

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = ("small", "medium", "large")


@pytest.fixture(scope="module")
def netplan() -> str:
    path = shutil.which("netplan") or ("/usr/sbin/netplan" if Path("/usr/sbin/netplan").exists() else None)
    if path is None:
        pytest.skip("netplan not found: apt-get install -y netplan.io")
    return path


def _generate(netplan: str, root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([netplan, "generate", "--root-dir", str(root)], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_host_netplan_generates(netplan, tmp_path, name):
    plan = compile_plan(load_intent(REPO / "inventories" / name / "fabric.yaml").intent)
    roots = []
    for host in plan.hosts:
        root = tmp_path / host.name
        conf = root / "etc/netplan/60-fabricgen.yaml"
        conf.parent.mkdir(parents=True)
        conf.write_text(render_host(plan, host)[f"hosts/{host.name}/netplan.yaml"])
        conf.chmod(0o600)
        roots.append(root)
    # one process per host; they are independent, so run a few at a time
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda r: _generate(netplan, r), roots))
    for host, root, r in zip(plan.hosts, roots, results, strict=True):
        assert r.returncode == 0 and "Error" not in r.stderr, f"{host.name}: {r.stderr}"
        for nic in host.nics:
            network = root / f"run/systemd/network/10-netplan-{nic.netdev}.network"
            text = network.read_text()
            assert f"Address={nic.ip}" in text
            assert "MTUBytes=4200" in (root / f"run/systemd/network/10-netplan-{nic.netdev}.link").read_text()
            cp = configparser.ConfigParser(strict=False)
            cp.read_string(text)
            assert cp["Route"]["Gateway"] == nic.gateway
            assert cp["Route"]["Destination"] == plan.rail_pool
            assert cp["Route"]["Table"] == str(100 + nic.rail)
            assert cp["RoutingPolicyRule"]["From"] == nic.ip.split("/")[0]
            assert cp["RoutingPolicyRule"]["Priority"] == str(100 + nic.rail)
        # the management interface is not touched
        assert not list((root / "run/systemd/network").glob(f"*{plan.mgmt_interface}*"))
