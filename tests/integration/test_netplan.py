"""Every rendered netplan.yaml of the examples passes the real `netplan generate`, and what
networkd gets carries the issue 16 keys: RequiredForOnline=no (optional), ConfigureWithoutCarrier=yes
(ignore-carrier); the rails stay with networkd and the management NIC with NetworkManager when
another file makes NetworkManager the global renderer (issue 24, item 1)."""

from __future__ import annotations

import configparser
import re
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
            # two [Route] sections (configparser merges same-named ones): the rail's table, and the
            # main table at metric 100+rail so traffic without a rail source still takes a rail
            routes = [dict(line.split("=", 1) for line in block.strip().splitlines()[1:] if "=" in line)
                      for block in re.split(r"\n(?=\[)", text) if block.strip().startswith("[Route]")]
            assert sorted(routes, key=str) == sorted([
                {"Destination": plan.rail_pool, "Gateway": nic.gateway, "Table": str(100 + nic.rail)},
                {"Destination": plan.rail_pool, "Gateway": nic.gateway, "Metric": str(100 + nic.rail)}], key=str), text
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


# What Ubuntu desktop images ship (network-manager's netplan default) and what cloud-init writes
# for the management NIC: NM is the global renderer and the NIC has no renderer of its own.
NM_GLOBAL = "network:\n  version: 2\n  renderer: NetworkManager\n"
CLOUD_INIT_MGMT = "network:\n  version: 2\n  ethernets:\n    {mgmt}:\n      dhcp4: true\n"


@pytest.mark.parametrize("nm_file", ["01-network-manager-all.yaml", "99-desktop.yaml"])
def test_rails_go_to_networkd_and_the_management_nic_stays_with_networkmanager(netplan, tmp_path, nm_file):
    """netplan's global renderer is last-file-wins and applies to every device without its own
    (netplan src/parse.c); a device's own renderer wins over it (netplan "YAML configuration":
    renderer is valid per device). Before or after our 60-fabricgen.yaml, a file that makes NM
    global must keep the management NIC on NM, and must not take the rails (NM's backend drops
    the routing-policy rule)."""
    plan = compile_plan(load_intent(REPO / "inventories" / "small" / "fabric.yaml").intent)
    host = plan.hosts[0]
    mgmt = plan.mgmt_interface
    etc = tmp_path / "etc/netplan"
    etc.mkdir(parents=True)
    (etc / nm_file).write_text(NM_GLOBAL)
    (etc / "50-cloud-init.yaml").write_text(CLOUD_INIT_MGMT.format(mgmt=mgmt))
    (etc / "60-fabricgen.yaml").write_text(render_host(plan, host)[f"hosts/{host.name}/netplan.yaml"])
    for f in etc.iterdir():
        f.chmod(0o600)
    r = _generate(netplan, tmp_path)
    assert r.returncode == 0, r.stderr
    networkd = sorted(p.name for p in (tmp_path / "run/systemd/network").glob("*.network"))
    assert networkd == sorted(f"10-netplan-{nic.netdev}.network" for nic in host.nics)
    # netplan's NM backend writes one keyfile per device it hands to NM: the management NIC only
    keyfiles = sorted(p.name for p in tmp_path.glob("run/NetworkManager/system-connections/*"))
    assert keyfiles == [f"netplan-{mgmt}.nmconnection"]
    keyfile = configparser.ConfigParser(interpolation=None)
    keyfile.read(tmp_path / f"run/NetworkManager/system-connections/netplan-{mgmt}.nmconnection")
    assert keyfile["connection"]["interface-name"] == mgmt
    assert keyfile["ipv4"]["method"] == "auto"
