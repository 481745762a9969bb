"""`lab up --faults FILE`: strict validation, one line naming FILE:line and the key path."""

from __future__ import annotations

import pytest

from generator.lab.fault_file import FaultFileError, parse_fault_file
from generator.lab.faults import Faults

SWITCHES = {"leaf-1": {"swp1", "swp17"}, "spine-1": {"swp1"}}
HOSTS = {"gpu001": {"ens1f0np0", "ens2f0np0"}}


def test_a_valid_file_becomes_one_fault_dict_per_switch():
    text = """\
switches:
  leaf-1: {os_version: "5.9", ntp: unsynced, psu: [ok, failed], fans: [ok, ok, failed], temperature_c: 95}
ports:
  "leaf-1:swp17": {rx_power_dbm: -14.0, tx_power_dbm: 1, module_temperature_c: 50, fec_ber: 1.0e-5, link_flaps: 5}
  "spine-1:swp1": {link_flaps: 2}
"""
    found = parse_fault_file(text, "f.yaml", SWITCHES)
    assert found == {
        "leaf-1": {"switch": {"os_version": "5.9", "ntp": "unsynced", "psu": ["ok", "failed"],
                              "fans": ["ok", "ok", "failed"], "temperature_c": 95.0},
                   "ports": {"swp17": {"rx_power_dbm": -14.0, "tx_power_dbm": 1.0, "module_temperature_c": 50.0,
                                       "fec_ber": 1e-5, "link_flaps": 5}}},
        "spine-1": {"switch": {}, "ports": {"swp1": {"link_flaps": 2}}}}
    # what lab up stores per switch is a valid runtime faults file
    assert Faults.from_dict(found["leaf-1"]).switch["psu"] == ["ok", "failed"]
    assert parse_fault_file("", "f.yaml", SWITCHES) == {}


@pytest.mark.parametrize("text, message", [
    ("routers: {}\n", "f.yaml:1: routers: unknown key; the file has `switches:`, `ports:` and `hosts:`"),
    ("hosts:\n  gpu009: {rails_down: [ens1f0np0]}\n", "f.yaml:2: hosts.gpu009: not a GPU server this lab starts"),
    ("hosts:\n  gpu001: {rails_down: [eth9]}\n", "f.yaml:2: hosts.gpu001.rails_down: eth9 is not a rail of this host"),
    ("hosts:\n  gpu001: {trust: pcp}\n", "f.yaml:2: hosts.gpu001.trust: unknown key; use pcp_trust, rails_down"),
    ("hosts:\n  gpu001: {pcp_trust: ens1f0np0}\n", "f.yaml:2: hosts.gpu001.pcp_trust: give a list of the host's"),
    ("switches:\n  leaf-9: {ntp: unsynced}\n", "f.yaml:2: switches.leaf-9: not a switch of the plan"),
    ("switches:\n  leaf-1:\n    ntp: unsynced\n    psus: [ok]\n", "f.yaml:4: switches.leaf-1.psus: unknown key"),
    ("switches:\n  leaf-1: {ntp: maybe}\n", "f.yaml:2: switches.leaf-1.ntp: 'maybe': use synced or unsynced"),
    ("switches:\n  leaf-1: {os_version: 5.9}\n", "f.yaml:2: switches.leaf-1.os_version: give the release as a "
                                                  "quoted string"),
    ("switches:\n  leaf-1: {fans: []}\n", "f.yaml:2: switches.leaf-1.fans: give a list of ok or failed"),
    ("ports:\n  swp1: {link_flaps: 1}\n", "f.yaml:2: ports.swp1: give \"<switch>:<port>\""),
    ("ports:\n  \"leaf-1:swp9\": {link_flaps: 1}\n", "f.yaml:2: ports.leaf-1:swp9: swp9 is not a planned port"),
    ("ports:\n  \"leaf-1:swp1\": {link_flaps: 1.5}\n", "f.yaml:2: ports.leaf-1:swp1.link_flaps: give a whole number"),
    ("ports:\n  \"leaf-1:swp1\": {rx_power_dbm: .nan}\n", "f.yaml:2: ports.leaf-1:swp1.rx_power_dbm: give a number"),
    ("ports:\n  \"leaf-1:swp1\": {fec_ber: 2}\n", "f.yaml:2: ports.leaf-1:swp1.fec_ber: 2 is outside 0..0.5"),
    ("ports: [1, 2]\n", "f.yaml:1: ports: give a mapping"),
    ("switches: {leaf-1: {ntp: [}\n", "f.yaml:1: not YAML"),
])
def test_every_mistake_is_one_line_with_file_line_and_key(text, message):
    with pytest.raises(FaultFileError) as caught:
        parse_fault_file(text, "f.yaml", SWITCHES, HOSTS)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_a_hosts_faults_name_its_rails_and_are_a_valid_runtime_faults_file():
    text = "hosts:\n  gpu001: {rails_down: [ens2f0np0], pcp_trust: [ens1f0np0, ens1f0np0]}\n"
    found = parse_fault_file(text, "f.yaml", SWITCHES, HOSTS)
    assert found == {"gpu001": {"host": {"rails_down": ["ens2f0np0"], "pcp_trust": ["ens1f0np0"]}}}
    assert Faults.from_dict(found["gpu001"]).host == {"rails_down": ["ens2f0np0"], "pcp_trust": ["ens1f0np0"]}
