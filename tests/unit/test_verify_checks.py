"""verify's checks on napalm-shaped readings built by hand (pure logic: no device involved)."""

from __future__ import annotations

import copy

import pytest

from generator.devices import oper
from generator.verify import checks as C
from generator.verify.expected import Expectations, PlannedPort, PlannedSession

LEAF, SPINE = "leaf-1", "spine-1"


def _exp(sessions_prefixes: int = 9) -> Expectations:
    ports = {
        LEAF: {f"swp{i}": PlannedPort(LEAF, f"swp{i}", f"gpu0{i}", "ens1f0np0", 400, False) for i in (1, 2, 3)}
        | {"swp17": PlannedPort(LEAF, "swp17", SPINE, "swp1", 400, True),
           "swp18": PlannedPort(LEAF, "swp18", SPINE, "swp2", 400, True)},
        SPINE: {"swp1": PlannedPort(SPINE, "swp1", LEAF, "swp17", 400, True),
                "swp2": PlannedPort(SPINE, "swp2", LEAF, "swp18", 400, True)},
    }
    sessions = {LEAF: {p: PlannedSession(LEAF, p, p, SPINE, f"swp{i}", 65000, 1)
                       for i, p in ((1, "swp17"), (2, "swp18"))},
                SPINE: {p: PlannedSession(SPINE, p, p, LEAF, q, 65101, sessions_prefixes)
                        for p, q in (("swp1", "swp17"), ("swp2", "swp18"))}}
    return Expectations(ports, sessions, 9216, (3,))


def _interfaces(ports, **overrides) -> dict:
    out = {p: oper.interface(is_up=True, is_enabled=True, speed=400000.0, mtu=9216) for p in ports}
    for port, change in overrides.items():
        out[port] = {**out[port], **change}
    return out


def _readings(exp: Expectations, lldp_overrides: dict | None = None) -> dict[str, C.SwitchReading]:
    readings = {}
    for name, ports in exp.ports.items():
        lldp = {p: [oper.lldp_neighbor(pp.peer_device, pp.peer_port)] for p, pp in ports.items()}
        lldp.update((lldp_overrides or {}).get(name, {}))
        readings[name] = C.SwitchReading(name, interfaces=_interfaces(ports), lldp=lldp)
    return readings


# --- cabling -----------------------------------------------------------------------------
def test_correct_cabling_has_no_finding():
    exp = _exp()
    assert C.check_cabling(_readings(exp), exp) == {}


def test_two_crossed_host_cables_are_one_finding():
    exp = _exp()
    readings = _readings(exp, {LEAF: {"swp1": [oper.lldp_neighbor("gpu03.cluster.local", "ens1f0np0")],
                                      "swp3": [oper.lldp_neighbor("gpu01", "ens1f0np0")]}})
    findings = C.check_cabling(readings, exp)
    assert list(findings) == [LEAF] and len(findings[LEAF]) == 1
    finding = findings[LEAF][0]
    assert finding.line() == "swp1 and swp3 on leaf-1 are crossed"
    assert finding.port == "swp1,swp3" and finding.check == "cabling"


def test_swapped_uplinks_are_one_finding_not_one_per_end():
    exp = _exp()
    readings = _readings(exp, {LEAF: {"swp17": [oper.lldp_neighbor(SPINE, "swp2")],
                                      "swp18": [oper.lldp_neighbor(SPINE, "swp1")]},
                               SPINE: {"swp1": [oper.lldp_neighbor(LEAF, "swp18")],
                                       "swp2": [oper.lldp_neighbor(LEAF, "swp17")]}})
    findings = [f for fs in C.check_cabling(readings, exp).values() for f in fs]
    assert [f.line() for f in findings] == ["swp17 and swp18 on leaf-1 are crossed"]


def test_a_wrong_neighbour_without_a_partner_is_named_with_what_lldp_shows():
    exp = _exp()
    readings = _readings(exp, {LEAF: {"swp2": [oper.lldp_neighbor("gpu09", "ens1f0np0")]}})
    (finding,) = C.check_cabling(readings, exp)[LEAF]
    assert finding.line() == "swp2 on leaf-1: expected gpu02:ens1f0np0, LLDP shows gpu09:ens1f0np0"


def test_a_dark_port_is_left_to_the_link_check_but_an_up_port_without_lldp_is_not():
    exp = _exp()
    readings = _readings(exp, {LEAF: {"swp2": [], "swp3": []}})
    readings[LEAF].interfaces["swp2"]["is_up"] = False
    (finding,) = C.check_cabling(readings, exp)[LEAF]
    assert finding.port == "swp3" and finding.observed == "no LLDP neighbour"


# --- cabling: host ports as lldpd announces them ----------------------------------------
MACS = {(f"gpu0{i}", "ens1f0np0"): f"0c:42:a1:00:00:0{i}" for i in (1, 2, 3)}


def _lldpd(host: str, mac: str, description: str = "ens1f0np0") -> dict:
    """A host port as get_lldp_neighbors_detail reads lldpd's default: port ID = MAC, description = netdev."""
    return {"hostname": host, "port": mac, "port_description": description}


def _with_macs(exp: Expectations) -> Expectations:
    return Expectations(exp.ports, exp.sessions, exp.mtu, exp.lossless_priorities, dict(MACS))


@pytest.mark.parametrize("discovered", [False, True], ids=["no-discovery", "discovered-macs"])
def test_host_ports_announced_with_their_mac_pass_by_description_or_mac(discovered):
    exp = _with_macs(_exp()) if discovered else _exp()
    readings = _readings(exp, {LEAF: {f"swp{i}": [_lldpd(f"gpu0{i}", MACS[(f"gpu0{i}", "ens1f0np0")])]
                                      for i in (1, 2, 3)}})
    assert C.check_cabling(readings, exp) == {}


def test_the_discovered_mac_alone_identifies_the_nic():
    # a host not yet renamed (lldpd sends the kernel's host name) or a description set by hand
    # (`configure ports ens1f0np0 lldp portdescription ...`): the MAC hosts discover read is the NIC
    exp = _with_macs(_exp())
    readings = _readings(exp, {LEAF: {"swp1": [_lldpd("localhost", "0C-42-A1-00-00-01", "rail 0")]}})
    assert C.check_cabling(readings, exp) == {}
    # without the discovery file there is nothing to recognise it by
    (finding,) = C.check_cabling(_readings(_exp(), {LEAF: {"swp1": [_lldpd("localhost", "0c:42:a1:00:00:01",
                                                                              "rail 0")]}}), _exp())[LEAF]
    assert finding.observed == "localhost:rail 0 (MAC 0c:42:a1:00:00:01)"


def test_an_ifname_port_id_passes_and_a_switch_port_is_still_matched_by_port_id():
    exp = _with_macs(_exp())
    readings = _readings(exp, {LEAF: {"swp1": [{"hostname": "gpu01", "port": "ens1f0np0",
                                                "port_description": "rail 0 uplink"}],     # ifalias: lldpd sends ifname
                                      # a switch port's description does not stand in for its port ID
                                      "swp17": [{"hostname": SPINE, "port": "swp9", "port_description": "swp1"}]}})
    (finding,) = C.check_cabling(readings, exp)[LEAF]
    assert finding.line() == "swp17 on leaf-1: expected spine-1:swp1, LLDP shows spine-1:swp9"


def test_a_wrong_mac_is_a_finding_naming_both_ends():
    exp = _with_macs(_exp())
    # gpu02's port, a MAC nobody discovered, described as another netdev
    readings = _readings(exp, {LEAF: {"swp2": [_lldpd("gpu02", "02:aa:bb:cc:dd:ee", "ens2f0np0")]}})
    (finding,) = C.check_cabling(readings, exp)[LEAF]
    assert (finding.expected, finding.observed) == ("gpu02:ens1f0np0 (MAC 0c:42:a1:00:00:02)",
                                                    "gpu02:ens2f0np0 (MAC 02:aa:bb:cc:dd:ee)")
    assert finding.line() == ("swp2 on leaf-1: expected gpu02:ens1f0np0 (MAC 0c:42:a1:00:00:02), "
                              "LLDP shows gpu02:ens2f0np0 (MAC 02:aa:bb:cc:dd:ee)")


def test_a_mac_of_another_discovered_nic_names_that_nic():
    exp = _with_macs(_exp())
    readings = _readings(exp, {LEAF: {"swp2": [_lldpd("gpu09", MACS[("gpu03", "ens1f0np0")])]}})
    (finding,) = C.check_cabling(readings, exp)[LEAF]
    assert finding.observed == "gpu03:ens1f0np0 (MAC 0c:42:a1:00:00:03)"


@pytest.mark.parametrize("discovered", [False, True], ids=["no-discovery", "discovered-macs"])
def test_two_crossed_host_cables_seen_by_mac_are_one_finding(discovered):
    exp = _with_macs(_exp()) if discovered else _exp()
    readings = _readings(exp, {LEAF: {"swp1": [_lldpd("gpu03", MACS[("gpu03", "ens1f0np0")])],
                                      "swp3": [_lldpd("gpu01", MACS[("gpu01", "ens1f0np0")])]}})
    findings = C.check_cabling(readings, exp)
    assert [f.line() for f in findings[LEAF]] == ["swp1 and swp3 on leaf-1 are crossed"]


# --- link ------------------------------------------------------------------------------
def test_link_speed_and_mtu_findings_are_separate_and_named():
    exp = _exp()
    reading = _readings(exp)[LEAF]
    reading.interfaces["swp1"].update(is_up=False)
    reading.interfaces["swp2"].update(speed=200000.0)
    reading.interfaces["swp3"].update(mtu=1500)
    del reading.interfaces["swp18"]
    out = C.check_link(reading, exp)
    assert [f.line() for f in out["link"]] == [
        "swp1 on leaf-1 is down (planned up to gpu01:ens1f0np0)",
        "swp18 on leaf-1: not configured (planned to spine-1:swp2)"]
    assert [f.line() for f in out["speed"]] == ["swp2 on leaf-1 runs at 200G, planned 400G"]
    assert [f.line() for f in out["mtu"]] == ["swp3 on leaf-1 has MTU 1500, planned 9216"]


# --- bgp -------------------------------------------------------------------------------
def _bgp(peers: dict) -> dict:
    return oper.bgp_neighbors("10.255.0.1", {
        name: oper.bgp_peer(local_as=65000, remote_as=65101, remote_id="10.255.0.3", is_up=up, received=rx,
                            accepted=rx, sent=1) for name, (up, rx) in peers.items()})


def test_bgp_down_session_and_prefix_count_outside_the_range():
    exp = _exp(sessions_prefixes=30)
    reading = C.SwitchReading(SPINE, bgp=_bgp({"swp1": (False, 0), "swp2": (True, 20)}))
    lines = [f.line() for f in C.check_bgp(reading, exp)]
    assert lines == ["BGP swp1 on spine-1 is not established (planned with leaf-1:swp17 (AS 65101))",
                     "BGP swp2 on spine-1 receives 20 prefixes, expected 27-33 (plan: 30)"]
    assert C.pending_sessions(reading, exp) == ["swp1"]


@pytest.mark.parametrize("received", [7, 8, 9, 11])
def test_one_host_port_down_does_not_flag_a_spine(received):
    exp = _exp(sessions_prefixes=9)
    reading = C.SwitchReading(SPINE, bgp=_bgp({"swp1": (True, received), "swp2": (True, 9)}))
    assert C.check_bgp(reading, exp) == []


def test_missing_planned_neighbor():
    exp = _exp()
    (finding,) = C.check_bgp(C.SwitchReading(SPINE, bgp=_bgp({"swp2": (True, 9)})), exp)
    assert finding.observed == "not configured" and finding.port == "swp1"


# --- counters --------------------------------------------------------------------------
def _counters(errors: dict[str, int]) -> dict:
    return {p: oper.counters(rx_errors=n) for p, n in errors.items()}


def test_rising_errors_are_named_and_static_ones_are_not():
    exp = _exp()
    reading = C.SwitchReading(LEAF, counters=(_counters({"swp1": 5, "swp2": 100}),
                                              _counters({"swp1": 5, "swp2": 140})), interval_s=2.0)
    (finding,) = C.check_errors(reading, exp)
    assert finding.port == "swp2" and finding.observed == "+40 rx, +0 tx errors in 2.0s"


def _pfc(rx3: int = 0, rx0: int = 0, ecn: int = 0) -> dict:
    rx = {p: 0 for p in range(8)} | {3: rx3, 0: rx0}
    return {"swp17": oper.pfc_ecn(rx_pause=rx, tx_pause={p: 0 for p in range(8)}, ecn_marked=ecn)}


def test_pfc_pause_rate_per_priority_beyond_the_threshold():
    exp = _exp()
    reading = C.SwitchReading(LEAF, pfc=(_pfc(rx3=0, rx0=0), _pfc(rx3=1000, rx0=50)), interval_s=2.0)
    (finding,) = C.check_pfc(reading, exp, threshold_per_s=100)
    assert finding.observed == "500 rx pause frames/s on priority 3"
    reading = C.SwitchReading(LEAF, pfc=(_pfc(), _pfc(rx0=1000)), interval_s=2.0)
    (finding,) = C.check_pfc(reading, exp, threshold_per_s=100)
    assert finding.observed.endswith("on priority 0 (a lossy priority)")


def test_ecn_marks_beyond_the_threshold_are_a_warning():
    exp = _exp()
    reading = C.SwitchReading(LEAF, pfc=(_pfc(ecn=0), _pfc(ecn=10000)), interval_s=2.0)
    (finding,) = C.check_ecn(reading, exp, threshold_per_s=1000)
    assert finding.severity == "warning" and finding.observed == "5000 ECN-marked packets/s"
    assert C.check_ecn(copy.deepcopy(reading), exp, threshold_per_s=6000) == []


def test_napalm_models_hold_for_the_builders():
    from napalm.base import models
    from napalm.base.test.helpers import test_model as model_ok

    assert model_ok(models.InterfaceDict, oper.interface(is_up=True, is_enabled=True))
    assert model_ok(models.InterfaceCounterDict, oper.counters())
    assert model_ok(models.LLDPNeighborDetailDict, oper.lldp_neighbor_detail(remote_port="a", remote_system_name="b"))
    peer = oper.bgp_peer(local_as=1, remote_as=2, remote_id="1.1.1.1", is_up=True)
    assert model_ok(models.PeerDict, peer) and model_ok(models.AFDict, peer["address_family"]["ipv4"])
    assert oper.speed_mbps("400G") == 400000.0 and oper.speed_mbps("auto") == -1.0
    with pytest.raises(ValueError):
        oper.counters(rx_crc=1)


# --- what verify reads over LLDP -------------------------------------------------------
class _Detail:
    def get_lldp_neighbors_detail(self):
        return {"swp1": [oper.lldp_neighbor_detail(remote_port="0c:42:a1:00:00:01", remote_system_name="gpu01",
                                                   remote_port_description="ens1f0np0")]}

    def get_lldp_neighbors(self):
        raise AssertionError("the detail getter carries the port description")


class _Basic:
    def get_lldp_neighbors_detail(self):
        raise NotImplementedError

    def get_lldp_neighbors(self):
        return {"swp1": [oper.lldp_neighbor("gpu01", "ens1f0np0")]}


def test_verify_reads_the_port_description_from_the_detail_getter():
    from generator.verify.collect import lldp_neighbors

    assert lldp_neighbors(_Detail()) == {"swp1": [{"hostname": "gpu01", "port": "0c:42:a1:00:00:01",
                                                   "port_description": "ens1f0np0"}]}
    assert lldp_neighbors(_Basic()) == {"swp1": [{"hostname": "gpu01", "port": "ens1f0np0"}]}
