"""`deploy --day0`'s proof (generator/deploy/day0_evidence.py): what counts as traffic evidence.

The factory files are the lab's, which model NVUE's (flat_files.py); the production ones are what an
Ansible role writes (flat_files.automation_files, and hand-written variants). The driver here is a
stand-in for pure logic; the real reads over SSH are in tests/integration/test_deploy_rollout.py.
"""

from __future__ import annotations

import contextlib

import pytest

from generator.deploy import day0_evidence as ev
from generator.lab import factory, flat_files
from generator.lab.factory import Management, lease_for
from generator.lab.world import BgpConfig, NeighborConfig, PortConfig

STATIC = Management("192.168.0.10/24", "192.168.0.1")
DHCP = Management("192.168.0.10/24", mode="dhcp")
ROUTED = {"swp1": PortConfig(True, "400G", 9216, ("10.0.0.0/31",)), "lo": PortConfig(True, None, 65536, ("10.255.0.1/32",))}
BGP = BgpConfig(65101, "10.255.0.1", True, {"swp1": NeighborConfig("swp1", False, "external")}, True, lambda p: True)


@pytest.mark.parametrize("mgmt", [STATIC, DHCP])
def test_nvue_factory_files_are_no_evidence(mgmt):
    files = {ev.INTERFACES_FILE: flat_files.interfaces_file(mgmt, {}), ev.FRR_CONF: flat_files.frr_conf("sw1", None)}
    assert ev.flat_file_evidence(files) == []


def test_mgmt_vrf_default_route_in_frr_is_management():
    text = "frr version 8.4.3\nhostname sw1\nvrf mgmt\n ip route 0.0.0.0/0 192.168.0.1\nexit-vrf\n!\nline vty\n"
    assert ev.frr_conf_extra(text) == []


def test_automation_written_files_are_evidence():
    tree = {"interface": {"swp1": {"type": "swp", "ip": {"address": {"10.0.0.0/31": {}}}},
                          "lo": {"type": "loopback", "ip": {"address": {"10.255.0.1/32": {}}}}},
            "router": {"bgp": {"autonomous-system": 65101, "router-id": "10.255.0.1"}},
            "vrf": {"default": {"router": {"bgp": {"neighbor": {"swp1": {"type": "unnumbered",
                                                                           "remote-as": "external"}}}}}}}
    files = flat_files.automation_files(tree, STATIC, "sw1")
    assert ev.flat_file_evidence(files) == ["/etc/network/interfaces has lo address 10.255.0.1/32, iface swp1",
                                           "/etc/frr/frr.conf has router bgp 65101"]


@pytest.mark.parametrize("text,extra", [
    ("auto swp1\niface swp1\n", ["iface swp1"]),
    ("auto bond0\n", ["iface bond0"]),                       # named by `auto` alone, its stanza elsewhere
    ("source /etc/network/ansible.d/*\n", ["source /etc/network/ansible.d/*"]),
    ("source-directory /etc/network/x\n", ["source-directory /etc/network/x"]),
    ("iface lo inet loopback\n    address 10.1.1.1/32\n", ["lo address 10.1.1.1/32"]),
    ("iface lo inet loopback\n    address 127.0.0.1/8\n", []),
    ("# iface swp1 (commented out)\n", []),
])
def test_interfaces_file_beyond_the_factory(text, extra):
    assert ev.interfaces_file_extra(text) == extra


@pytest.mark.parametrize("text,extra", [
    ("interface swp1\n ip address 10.0.0.0/31\n", ["interface swp1", "ip address 10.0.0.0/31"]),
    ("ip route 10.0.0.0/8 10.1.1.1\n", ["ip route 10.0.0.0/8"]),
    ("vrf blue\n ip route 0.0.0.0/0 1.1.1.1\nexit-vrf\n", ["vrf blue", "ip route 0.0.0.0/0"]),
    ("interface eth0\n description mgmt\n", []),
    ("! router bgp 1\n", []),
])
def test_frr_conf_beyond_the_factory(text, extra):
    assert ev.frr_conf_extra(text) == extra


def test_frr_bgp_summary():
    assert ev.bgp_evidence({}) == []
    configured = {"ipv4Unicast": {"peers": {"swp1": {"state": "Active"}, "swp2": {"state": "Idle"},
                                            "swp3": {"state": "Connect"}}}}
    assert ev.bgp_evidence(configured) == ["BGP peer(s) configured in FRR: swp1, swp2 and 1 more"]
    configured["ipv6Unicast"] = {"peers": {"swp9": {"state": "Established"}}}
    assert ev.bgp_evidence(configured) == ["BGP peer(s) established in FRR: swp9"]
    assert ev.bgp_evidence([]) == ["FRR's BGP summary is not a JSON object"]


def test_snippets_in_the_nvue_tree():
    tree = factory.factory_config("5.11", "sw1", lease_for(3), {})
    assert ev.snippet_evidence(tree) == []
    tree["system"]["config"] = {"snippet": {"frr.conf": "router bgp 65101\n", "ifupdown2.conf": "x"}}
    assert ev.snippet_evidence(tree) == ["NVUE snippet frr.conf, ifupdown2.conf"]


def test_data_ports():
    def data(port: str) -> bool:
        return port.startswith("swp")

    quiet = ev.port_evidence({"swp1": {"is_up": False}, "eth0": {"is_up": True}},
                             {"eth0": {"ipv4": {"192.168.0.10": {"prefix_length": 24}}}},
                             {}, {"swp1": {"rx_octets": 0, "tx_unicast_packets": 0, "rx_errors": 0}},
                             is_data_port=data)
    assert quiet == [], "eth0 is management, not a data port"
    busy = ev.port_evidence({"swp1": {"is_up": True}}, {"swp1": {"ipv4": {"10.0.0.0": {"prefix_length": 31}}}},
                            {"swp1": [{"hostname": "spine01", "port": "swp9"}]}, {"swp1": {"rx_octets": 64}},
                            is_data_port=data)
    assert busy == ["address on swp1", "carrier on swp1", "LLDP neighbour on swp1 (swp1: spine01)",
                    "non-zero counters on swp1"]
    assert ev.port_evidence({}, {"lo": {"ipv4": {"10.255.0.1": {"prefix_length": 32}}}}, {}, {},
                            is_data_port=data) == ["address on lo"]


class Reads:
    """A driver's day-0 reads for the pure logic of evidence(): each answer or exception given."""

    def __init__(self, **answers):
        self.answers = answers

    def __getattr__(self, name):
        answer = self.answers[name]

        def read():
            if isinstance(answer, Exception):
                raise answer
            return answer
        return read

    @contextlib.contextmanager
    def snapshot(self):
        yield self


FACTORY_READS = dict(frr_bgp_summary={}, get_interfaces={}, get_interfaces_ip={}, get_lldp_neighbors={},
                     get_interfaces_counters={},
                     flat_files={ev.INTERFACES_FILE: flat_files.interfaces_file(STATIC, {}),
                                 ev.FRR_CONF: flat_files.frr_conf("sw1", None)})


def test_a_factory_switch_shows_nothing_and_a_failed_read_is_evidence():
    tree = factory.factory_config("5.11", "sw1", lease_for(3), {})
    assert ev.evidence("cumulus", Reads(**FACTORY_READS), tree) == []
    failed = Reads(**(FACTORY_READS | {"frr_bgp_summary": OSError("vtysh: permission denied")}))
    assert ev.evidence("cumulus", failed, tree) == ["could not read FRR's BGP summary (vtysh: permission denied)"]
    assert ev.evidence("cumulus", Reads(**FACTORY_READS), None) == ["running config has running config not read"]


def test_sonic_reads_config_db_and_frr_only():
    """Carrier and LLDP are a factory SONiC switch's normal state (the t1 preset's ports are up)."""
    from generator.lab import sonic_factory

    config = sonic_factory.factory_config_db("SN5600", "sw1", "202411", lease_for(3))
    assert ev.evidence("sonic", Reads(frr_bgp_summary={}), config) == []
    peers = {"ipv4Unicast": {"peers": {"10.0.0.1": {"state": "Established"}}}}
    assert ev.evidence("sonic", Reads(frr_bgp_summary=peers), config) == [
        "BGP peer(s) established in FRR: 10.0.0.1"]
    config["INTERFACE"] = {"Ethernet0|10.0.0.0/31": {}}
    assert ev.evidence("sonic", Reads(frr_bgp_summary={}), config) == ["running config has INTERFACE"]
