"""playbooks/files/fabricgen_rails.py in a real network namespace (iproute2, the kernel's FIB rules).

The state networkd leaves behind is made with `ip ... protocol static`, as systemd-networkd
installs routing-policy rules (`ip rule show` prints "proto static"); the script must take it
as equal (issue 16) and still converge from drift, extra addresses and duplicate rules.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.root, pytest.mark.timeout(120)]

SCRIPT = Path(__file__).resolve().parents[2] / "playbooks/files/fabricgen_rails.py"
ETHERNETS = {"ens1f0np0": {"renderer": "networkd", "optional": True, "ignore-carrier": True, "dhcp4": False,
                           "mtu": 4200, "addresses": ["172.16.0.1/31"],
                           "routes": [{"to": "172.16.0.0/24", "via": "172.16.0.0", "table": 101}],
                           "routing-policy": [{"from": "172.16.0.1", "table": 101, "priority": 101}]}}


@pytest.fixture
def netns():
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("network namespaces need root and iproute2")
    name = f"fgrails{secrets.token_hex(3)}"
    if subprocess.run(["ip", "netns", "add", name], capture_output=True).returncode != 0:
        pytest.skip("cannot create a network namespace here")
    try:
        subprocess.run(["ip", "-n", name, "link", "add", "ens1f0np0", "type", "veth", "peer", "name", "leaf0"],
                       check=True)
        subprocess.run(["ip", "-n", name, "link", "set", "leaf0", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def ns(name: str, *cmd: str) -> str:
    return subprocess.run(["ip", "netns", "exec", name, *cmd], capture_output=True, text=True, check=True,
                          timeout=30).stdout


def rails(name: str, check: bool = False) -> tuple[int, list[str]]:
    env = {**os.environ, "FG_RAILS": json.dumps({"ethernets": ETHERNETS, "check": check})}
    done = subprocess.run(["ip", "netns", "exec", name, sys.executable, str(SCRIPT)], capture_output=True,
                          text=True, env=env, timeout=60)
    return done.returncode, done.stdout.splitlines()


def rules(name: str) -> list[dict]:
    return [r for r in json.loads(ns(name, "ip", "-j", "-4", "rule", "show")) if r.get("priority") == 101]


def test_rails_converge_and_stay(netns):
    rc, out = rails(netns, check=True)
    assert rc == 0 and out == [
        "change: ip link set dev ens1f0np0 mtu 4200",
        "change: ip link set dev ens1f0np0 up",
        "change: ip addr add 172.16.0.1/31 dev ens1f0np0",
        "change: ip route replace 172.16.0.0/24 via 172.16.0.0 dev ens1f0np0 table 101",
        "change: ip rule add from 172.16.0.1/32 table 101 priority 101 protocol static"]
    assert "172.16.0.1" not in ns(netns, "ip", "-4", "addr"), "check mode changes nothing"

    assert rails(netns)[0] == 0
    assert rails(netns) == (0, ["ok: ens1f0np0"])
    # added as networkd adds it, so networkd finds it in place instead of adding a second one
    assert [(r["src"], r["table"], r.get("protocol")) for r in rules(netns)] == [("172.16.0.1", "101", "static")]


def test_networkd_rule_with_proto_static_is_equal(netns):
    rails(netns)
    # what networkd leaves: the same rule, protocol static instead of ours
    ns(netns, "ip", "rule", "del", "priority", "101")
    ns(netns, "ip", "rule", "add", "from", "172.16.0.1", "table", "101", "priority", "101", "protocol", "static")
    assert "proto static" in ns(netns, "ip", "-4", "rule", "show", "priority", "101")
    assert rails(netns) == (0, ["ok: ens1f0np0"])
    assert rails(netns, check=True) == (0, ["ok: ens1f0np0"])
    # an earlier release's duplicate next to networkd's (the kernel keeps both: their protocols differ)
    ns(netns, "ip", "rule", "add", "from", "172.16.0.1", "table", "101", "priority", "101", "protocol", "boot")
    assert len(rules(netns)) == 2
    rc, out = rails(netns)
    assert rc == 0 and out == ["change: ip rule del priority 101 from 172.16.0.1/32 table 101"] * 2 + [
        "change: ip rule add from 172.16.0.1/32 table 101 priority 101 protocol static"]
    assert [r.get("protocol") for r in rules(netns)] == ["static"] and rails(netns) == (0, ["ok: ens1f0np0"])
    # networkd adding its rule again now meets the same rule: the kernel refuses a duplicate
    again = subprocess.run(["ip", "netns", "exec", netns, "ip", "rule", "add", "from", "172.16.0.1", "table", "101",
                            "priority", "101", "protocol", "static"], capture_output=True, text=True)
    assert again.returncode != 0 and "File exists" in again.stderr


def test_foreign_rule_and_extra_address_are_replaced(netns):
    rails(netns)
    ns(netns, "ip", "rule", "del", "priority", "101")
    ns(netns, "ip", "rule", "add", "from", "172.16.0.9", "table", "101", "priority", "101")
    # an address another tool put on the rail: it would take RoCE GID 2/3 ahead of ours
    ns(netns, "ip", "addr", "add", "10.9.9.9/24", "dev", "ens1f0np0")
    rc, out = rails(netns, check=True)
    assert rc == 0 and "change: ip addr del 10.9.9.9/24 dev ens1f0np0" in out
    assert "10.9.9.9" in ns(netns, "ip", "-4", "addr", "show", "dev", "ens1f0np0")
    rc, out = rails(netns)
    assert rc == 0
    assert out[:3] == ["change: ip addr del 172.16.0.1/31 dev ens1f0np0",
                       "change: ip addr del 10.9.9.9/24 dev ens1f0np0",
                       "change: ip addr add 172.16.0.1/31 dev ens1f0np0"]
    # the route through the dropped address went with it: the next pass put it back in the same run
    assert "change: ip route replace 172.16.0.0/24 via 172.16.0.0 dev ens1f0np0 table 101" in out
    addrs = json.loads(ns(netns, "ip", "-j", "-4", "addr", "show", "dev", "ens1f0np0"))[0]["addr_info"]
    assert [(a["local"], a["prefixlen"]) for a in addrs] == [("172.16.0.1", 31)]
    assert [(r["src"], r["table"]) for r in rules(netns)] == [("172.16.0.1", "101")]
    assert "172.16.0.0/24 via 172.16.0.0 dev ens1f0np0" in ns(netns, "ip", "-4", "route", "show", "table", "101")
    assert rails(netns) == (0, ["ok: ens1f0np0"])


def test_two_rails_keep_their_main_table_routes_to_the_rail_pool_apart(netns):
    """The rendered netplan routes the rail pool in the main table from every rail, metric
    100+rail: `ip route replace` matches destination, table and metric, so without the metric
    each rail would replace the other's route and never converge (the script gives up after
    three passes)."""
    ns(netns, "ip", "link", "add", "ens2f0np0", "type", "veth", "peer", "name", "leaf1")
    ns(netns, "ip", "link", "set", "leaf1", "up")
    two = {"ens1f0np0": {**ETHERNETS["ens1f0np0"],
                         "routes": [*ETHERNETS["ens1f0np0"]["routes"],
                                    {"to": "172.16.0.0/24", "via": "172.16.0.0", "metric": 100}]},
           "ens2f0np0": {"mtu": 4200, "addresses": ["172.16.0.129/31"],
                         "routes": [{"to": "172.16.0.0/24", "via": "172.16.0.128", "table": 102},
                                    {"to": "172.16.0.0/24", "via": "172.16.0.128", "metric": 101}],
                         "routing-policy": [{"from": "172.16.0.129", "table": 102, "priority": 102}]}}
    env = {**os.environ, "FG_RAILS": json.dumps({"ethernets": two, "check": False})}

    def run() -> tuple[int, list[str]]:
        done = subprocess.run(["ip", "netns", "exec", netns, sys.executable, str(SCRIPT)], capture_output=True,
                              text=True, env=env, timeout=60)
        return done.returncode, done.stdout.splitlines()

    rc, out = run()
    assert rc == 0, out
    assert "change: ip route replace 172.16.0.0/24 via 172.16.0.128 dev ens2f0np0 table 254 metric 101" in out
    main = json.loads(ns(netns, "ip", "-j", "-4", "route", "show", "172.16.0.0/24"))
    assert sorted((r["dev"], r["gateway"], r.get("metric", 0)) for r in main) == [
        ("ens1f0np0", "172.16.0.0", 100), ("ens2f0np0", "172.16.0.128", 101)]
    assert run() == (0, ["ok: ens1f0np0", "ok: ens2f0np0"])
    # no source address: the main table picks rail 0 and its address
    got = ns(netns, "ip", "-4", "route", "get", "172.16.0.77")
    assert "dev ens1f0np0" in got and "src 172.16.0.1" in got, got
