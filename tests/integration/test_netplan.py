"""Every rendered netplan.yaml of the examples passes the real `netplan generate`, and what
networkd gets carries the issue 16 keys: RequiredForOnline=no (optional), ConfigureWithoutCarrier=yes
(ignore-carrier) and the rails stay with networkd even when another file makes NetworkManager the
global renderer."""

from __future__ import annotations

import configparser
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.render.hosts import INSTALL_PATHS, render_host
from tests.golden.examples import GOLDEN

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = GOLDEN                   # every example under inventories/


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
        conf = root / INSTALL_PATHS["netplan.yaml"].lstrip("/")
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
            # optional: true -> boot does not wait for the rail (systemd-networkd-wait-online)
            assert cp["Link"]["RequiredForOnline"] == "no"
            # ignore-carrier: true -> the /31 (and the RoCEv2 GID on it) survives a link flap;
            # IgnoreCarrierLoss= follows ConfigureWithoutCarrier= unless set (systemd.network(5))
            assert cp["Network"]["ConfigureWithoutCarrier"] == "yes"
            assert cp["Network"].get("IgnoreCarrierLoss", "yes") in ("yes", "infinity")
        # the management interface is not touched
        assert not list((root / "run/systemd/network").glob(f"*{plan.mgmt_interface}*"))


def test_rails_stay_on_networkd_under_a_global_networkmanager(netplan, tmp_path):
    """Another netplan file that makes NetworkManager the global renderer (a later file wins the
    global key) must not take the rails: NetworkManager's backend drops the routing-policy rule."""
    plan = compile_plan(load_intent(REPO / "inventories" / "small" / "fabric.yaml").intent)
    host = plan.hosts[0]
    etc = tmp_path / "etc/netplan"
    etc.mkdir(parents=True)
    (etc / "60-fabricgen.yaml").write_text(render_host(plan, host)[f"hosts/{host.name}/netplan.yaml"])
    (etc / "99-desktop.yaml").write_text("network:\n  version: 2\n  renderer: NetworkManager\n")
    for f in etc.iterdir():
        f.chmod(0o600)
    r = _generate(netplan, tmp_path)
    assert r.returncode == 0, r.stderr
    for nic in host.nics:
        assert (tmp_path / f"run/systemd/network/10-netplan-{nic.netdev}.network").is_file()
    assert not list(tmp_path.glob("run/NetworkManager/system-connections/*"))
