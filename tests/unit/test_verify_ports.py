"""verify's one plan<->SONiC port-name mapping (generator/verify/ports.py) and the ECN skip."""

from __future__ import annotations

import textwrap

from generator.checks.runner import run_checks
from generator.intent.loader import load_intent
from generator.verify.checks import SwitchReading
from generator.verify.command import switch_outcomes
from generator.verify.expected import expectations
from generator.verify.ports import sonic_names, to_plan_names

INTENT = textwrap.dedent("""\
    fabric: {name: sv}
    topology:
      kind: leaf-spine
      nodes: 2
      rails: 2
      nic_speed: 400G
      switches:
        leaf: {model: SN5600}
        spine: {model: SN5600}
    switch_os: {name: sonic, version: "202411"}
    addressing: {management: 10.31.0.0/24, rails: 172.16.0.0/24, loopbacks: 10.255.0.0/24,
                 fabric_links: 10.254.0.0/24}
    """)


def _plan(tmp_path):
    path = tmp_path / "fabric.yaml"
    path.write_text(INTENT)
    return run_checks(load_intent(path)).plan


def test_names_follow_the_sku_layout(tmp_path):
    names = sonic_names(_plan(tmp_path))
    # SN5600 front-panel port 1 split 2x400G: Ethernet0/etp1a and Ethernet4/etp1b (sonic_catalog layout)
    assert names["sv-leaf-1"]["Ethernet0"] == names["sv-leaf-1"]["etp1a"] == "swp1s0"
    assert names["sv-leaf-1"]["Ethernet4"] == "swp1s1"
    assert names["sv-spine-1"]["etp1a"] == "swp1s0"


def test_readings_are_renamed_and_a_sonic_neighbours_alias_too(tmp_path):
    plan = _plan(tmp_path)
    up = {"is_up": True, "is_enabled": True, "description": "", "last_flapped": -1.0, "speed": 400000.0,
          "mtu": 9216, "mac_address": ""}
    reading = SwitchReading("sv-leaf-1", interfaces={"Ethernet0": up, "Ethernet16": up},
                            lldp={"Ethernet0": [{"hostname": "gpu001", "port": "ens1f0np0"}],
                                  "Ethernet256": [{"hostname": "sv-spine-1.lab", "port": "etp1a"}]},
                            pfc=({"Ethernet0": {"ecn_marked": -1}}, {"Ethernet0": {"ecn_marked": -1}}))
    renamed = to_plan_names({"sv-leaf-1": reading}, plan)["sv-leaf-1"]
    assert set(renamed.interfaces) == {"swp1s0", "Ethernet16"}       # an unplanned port keeps its name
    assert renamed.lldp["swp1s0"] == [{"hostname": "gpu001", "port": "ens1f0np0"}]
    assert renamed.lldp["swp33s0"] == [{"hostname": "sv-spine-1.lab", "port": "swp1s0"}]
    assert renamed.pfc[1] == {"swp1s0": {"ecn_marked": -1}}
    assert reading.lldp["Ethernet0"]                                  # the original is left as read


def test_ecn_is_skipped_when_the_driver_counts_none(tmp_path):
    plan = _plan(tmp_path)
    counters = {"swp1s0": {"rx_pause": {}, "tx_pause": {}, "ecn_marked": -1, "ecn_marked_by_tc": {}}}
    reading = SwitchReading("sv-leaf-1", interfaces={}, lldp={}, bgp={}, counters=({}, {}),
                            pfc=(counters, counters), interval_s=1.0)
    outcomes = {o.check: o for o in switch_outcomes({"sv-leaf-1": reading}, expectations(plan), pfc_threshold=100,
                                                    ecn_threshold=1000, prefix_tolerance=0.1)}
    assert outcomes["ecn"].status == "skipped" and "202505" in outcomes["ecn"].reason
    assert outcomes["pfc"].status == "passed"
