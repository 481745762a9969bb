"""verify's physical-layer and control-plane checks on readings built by hand (pure logic)."""

from __future__ import annotations

from dataclasses import replace

from generator.devices import oper
from generator.verify import control_plane as CP
from generator.verify import physical as P
from generator.verify.checks import SwitchReading
from generator.verify.expected import Expectations, PlannedPort

LEAF = "leaf-1"


def _exp(**changes) -> Expectations:
    ports = {LEAF: {"swp1": PlannedPort(LEAF, "swp1", "gpu01", "ens1f0np0", 400, False),
                    "swp17": PlannedPort(LEAF, "swp17", "spine-1", "swp1", 400, True)}}
    exp = Expectations(ports, {LEAF: {}}, 9216, (3,), cables={(LEAF, "swp1"): "DAC", (LEAF, "swp17"): "AOC"},
                       switch_os="cumulus", switch_os_version=(5, 11))
    return replace(exp, **changes)


def _aoc(rx=-1.5, tx=1.0, temperature=40.0, thresholds=None) -> dict:
    return oper.transceiver(present=True, media="AOC", rx_power_dbm=[rx] * 4, tx_power_dbm=[tx] * 4,
                            temperature_c=temperature, thresholds=thresholds)


def _optics(**modules) -> list:
    transceivers = {"swp1": oper.transceiver(present=True, media="DAC"), "swp17": _aoc()} | modules
    return P.check_optics(SwitchReading(LEAF, transceivers=transceivers), _exp())


# --- optics ----------------------------------------------------------------------------------
def test_healthy_modules_of_the_planned_type_pass():
    assert _optics() == []


def test_a_missing_module_and_the_wrong_cable_type_are_findings():
    found = _optics(swp1=oper.transceiver(present=False), swp17=oper.transceiver(present=True, media="DAC"))
    assert [(f.port, f.observed) for f in found] == [("swp1", "no transceiver"), ("swp17", "DAC")]
    assert found[1].line() == "swp17 on leaf-1: a DAC is plugged in, the plan has a AOC"


def test_a_module_that_names_no_media_is_not_judged_on_type():
    assert _optics(swp17=oper.transceiver(present=True, media="")) == []


def test_power_is_judged_by_the_modules_own_thresholds_when_it_reports_them():
    # -11 dBm: inside this module's -12..3 dBm window, outside the default -10 dBm floor
    own = {"rx_power_dbm": (-12.0, 3.0)}
    assert _optics(swp17=_aoc(rx=-11.0, thresholds=own)) == []
    module = _aoc(thresholds=own) | {"rx_power_dbm": [-1.0, -12.5, -12.6, -1.0]}
    found = _optics(swp17=module)
    assert [(f.expected, f.observed) for f in found] == [
        ("Rx power -12..3 dBm", "-12.5 dBm (lane 2), -12.6 dBm (lane 3)")]
    same = _optics(swp17=_aoc(rx=-12.5, thresholds=own))
    assert [f.observed for f in same] == ["-12.5 dBm (lanes 1, 2, 3, 4)"]


def test_without_module_thresholds_the_documented_defaults_apply():
    assert P.DEFAULT_LIMITS["rx_power_dbm"] == (-10.0, 4.0)
    assert _optics(swp17=_aoc(rx=-9.9)) == []
    found = _optics(swp17=_aoc(rx=-10.5, tx=-9.0, temperature=80.0))
    assert [f.expected for f in found] == ["Rx power -10..4 dBm", "Tx power -8..4 dBm", "module temperature -5..75 C"]
    assert found[2].observed == "80 C"


# --- fec / flaps -----------------------------------------------------------------------------
def _phy(corrected=0, uncorrected=0, ber=1e-9, transitions=1) -> dict:
    return {"swp17": oper.phy_counters(fec_corrected=corrected, fec_uncorrected=uncorrected, pre_fec_ber=ber,
                                       carrier_transitions=transitions)}


def _phy_reading(first: dict, second: dict) -> SwitchReading:
    return SwitchReading(LEAF, phy=(first, second), interval_s=2.0)


def test_uncorrected_codewords_rising_is_an_error_and_corrected_alone_is_not():
    assert P.check_fec(_phy_reading(_phy(corrected=10), _phy(corrected=900)), _exp()) == []
    found = P.check_fec(_phy_reading(_phy(uncorrected=3), _phy(uncorrected=5)), _exp())
    assert [(f.port, f.severity, f.observed) for f in found] == [
        ("swp17", "error", "+2 uncorrected FEC codewords in 2.0s")]


def test_pre_fec_ber_above_the_threshold_is_a_warning():
    assert P.check_fec(_phy_reading(_phy(ber=1e-7), _phy(ber=1e-7)), _exp()) == []
    found = P.check_fec(_phy_reading(_phy(ber=1e-5, corrected=0), _phy(ber=1e-5, corrected=8000)), _exp())
    assert [(f.severity, f.observed) for f in found] == [
        ("warning", "pre-FEC BER 1.0e-05 (+8000 corrected codewords in 2.0s)")]


def test_flaps_while_checked_or_above_the_count_are_findings():
    assert P.check_flaps(_phy_reading(_phy(transitions=1), _phy(transitions=1)), _exp()) == []
    assert P.check_flaps(_phy_reading(_phy(transitions=4), _phy(transitions=4)), _exp()) == []
    rising = P.check_flaps(_phy_reading(_phy(transitions=1), _phy(transitions=3)), _exp())
    assert [f.observed for f in rising] == ["2 carrier changes in 2.0s"]
    many = P.check_flaps(_phy_reading(_phy(transitions=5), _phy(transitions=5)), _exp())
    assert [f.observed for f in many] == ["5 carrier changes since the counters were cleared"]


# --- hardware --------------------------------------------------------------------------------
def test_failed_psu_fan_and_hot_sensor_are_findings():
    env = oper.environment(fans={"FAN1/1": True, "FAN2/1": False}, psus={"PSU1": False, "PSU2": True},
                           temperatures={"ASIC": (110.0, True, False), "Ambient": (30.0, False, False)})
    found = P.check_hardware(SwitchReading(LEAF, environment=env))
    assert [(f.port, f.observed) for f in found] == [("PSU1", "failed"), ("FAN2/1", "failed"),
                                                     ("ASIC", "110 C, above its alarm limit")]


# --- os-version, ntp -------------------------------------------------------------------------
def _facts(version: str) -> SwitchReading:
    return SwitchReading("x", facts={"os_version": version})


def test_a_switch_on_another_release_is_an_error_and_another_build_a_warning():
    readings = {n: replace(_facts(v), name=n) for n, v in
                (("a", "5.11.0"), ("b", "5.11.0"), ("c", "5.11.1"), ("d", "5.9.2"))}
    found = CP.check_os_versions(readings, _exp())
    assert {n: [(f.severity, f.observed) for f in fs] for n, fs in found.items()} == {
        "c": [("warning", "5.11.1")], "d": [("error", "5.9.2")]}
    assert found["d"][0].line().startswith("d: the switch runs Cumulus Linux 5.9.2, the intent renders 5.11")


def test_sonic_release_is_the_branch_of_the_build():
    exp = _exp(switch_os="sonic", switch_os_version=(2024, 11))
    readings = {"a": replace(_facts("SONiC.202411.12-abc"), name="a"),
                "b": replace(_facts("SONiC.202405.3-def"), name="b")}
    found = CP.check_os_versions(readings, exp)
    assert list(found) == ["b"] and found["b"][0].expected == "202411"


def test_ntp_synchronised_to_an_intent_server_passes_and_anything_else_fails():
    def reading(*peers):
        return SwitchReading(LEAF, ntp=[oper.ntp_peer(remote=r, synchronized=s) for r, s in peers])

    exp = _exp(ntp_servers=("10.0.0.10", "10.0.0.11"))
    assert CP.check_ntp(reading(("10.0.0.10", False), ("10.0.0.11", True)), exp) == []
    unsynced = CP.check_ntp(reading(("10.0.0.10", False)), exp)
    assert unsynced[0].observed == "unsynchronised (10.0.0.10)"
    other = CP.check_ntp(reading(("192.0.2.1", True)), exp)
    assert other[0].observed == "synchronised to 192.0.2.1"
    assert CP.check_ntp(reading(("192.0.2.1", True)), _exp()) == []          # no servers in the intent
    assert CP.check_ntp(reading(), _exp())[0].observed == "unsynchronised (no server configured)"


def test_ecmp_counts_bgp_next_hops_against_the_plan():
    exp = _exp(ecmp={LEAF: {"10.255.0.2/32": (4, "leaf-2"), "10.255.0.3/32": (4, "leaf-3")}})
    routes = {"10.255.0.2/32": oper.route(protocol="bgp", next_hops=["swp17", "swp18", "swp19", "swp20"]),
              "10.255.0.3/32": oper.route(protocol="bgp", next_hops=["swp17", "swp18", "swp19"])}
    found = CP.check_ecmp(SwitchReading(LEAF, routes=routes), exp)
    assert [(f.port, f.observed) for f in found] == [("10.255.0.3/32", "3 BGP next hops")]
    missing = CP.check_ecmp(SwitchReading(LEAF, routes={}), exp)
    assert [f.observed for f in missing] == ["no route", "no route"]


def test_a_getter_that_failed_leaves_only_its_checks_unknown_and_a_missing_one_skips_them():
    from generator.verify.command import switch_outcomes

    exp = _exp(ecmp={LEAF: {"10.255.0.2/32": (1, "leaf-2")}})
    ports = exp.ports[LEAF]
    counters = {p: oper.counters() for p in ports}
    pfc = {p: oper.pfc_ecn(rx_pause={}, tx_pause={}, ecn_marked=0) for p in ports}
    reading = SwitchReading(
        LEAF, interfaces={p: oper.interface(is_up=True, is_enabled=True, speed=400000.0, mtu=9216) for p in ports},
        lldp={"swp1": [{"hostname": "gpu01", "port": "ens1f0np0"}], "swp17": [{"hostname": "spine-1", "port": "swp1"}]},
        bgp={}, counters=(counters, counters), pfc=(pfc, pfc), interval_s=1.0,
        facts={"os_version": "5.11.0"}, environment=oper.environment(fans={}, psus={}, temperatures={}),
        ntp=[oper.ntp_peer(remote="10.0.0.10", synchronized=True)],
        routes={"10.255.0.2/32": oper.route(protocol="bgp", next_hops=["swp17"])},
        errors={"transceivers": "`nv show platform transceiver -o json`: not JSON"},
        unsupported={"phy": "this switch OS's driver has no get_phy_counters"})
    status = {o.check: o.status for o in switch_outcomes({LEAF: reading}, exp, pfc_threshold=100, ecn_threshold=1000,
                                                         prefix_tolerance=0.1)}
    assert status["optics"] == "unknown"
    assert status["fec"] == status["flaps"] == "skipped"
    assert {c: s for c, s in status.items() if c not in ("optics", "fec", "flaps")} == dict.fromkeys(
        ("cabling", "link", "speed", "mtu", "bgp", "errors", "pfc", "ecn", "hardware", "os-version", "ntp", "ecmp"),
        "passed")


def test_flaps_without_a_carrier_counter_are_not_judged():
    # SONiC: FEC counters but no carrier changes (None): no finding from the port; the command skips the check
    phy = {"swp17": oper.phy_counters(fec_corrected=0, fec_uncorrected=0, pre_fec_ber=None, carrier_transitions=None)}
    assert P.check_flaps(_phy_reading(phy, phy), _exp()) == []
    from generator.verify.command import _flaps_uncounted

    assert _flaps_uncounted(_phy_reading(phy, phy)) and not _flaps_uncounted(_phy_reading(_phy(), _phy()))
