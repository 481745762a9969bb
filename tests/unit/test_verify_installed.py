"""What verify counts as not installed (issue 36, generator/verify/installed.py): a planned port
toward a switch not listed is excused only while the switch shows it dark."""

from __future__ import annotations

from generator.verify.checks import SwitchReading
from generator.verify.installed import absent_ports, dark, toward


class _Port:
    def __init__(self, device, port, peer_device, peer_port):
        self.device, self.port, self.peer_device, self.peer_port = device, port, peer_device, peer_port


class _Plan:
    ports = (_Port("spine-1", "swp1", "leaf-1", "swp17"), _Port("spine-1", "swp2", "leaf-2", "swp17"),
             _Port("spine-1", "swp3", "leaf-2", "swp18"), _Port("leaf-2", "swp17", "spine-1", "swp2"))


def test_only_dark_ports_toward_a_switch_not_installed_are_excused():
    absent = {"leaf-2": "not listed in lab/endpoints.yml"}
    planned = toward(_Plan, absent)
    assert planned == {"spine-1": {"swp2": "leaf-2", "swp3": "leaf-2"}}     # not leaf-2's own ports
    up = {"is_up": True, "is_enabled": True, "speed": 400000.0, "mtu": 9216}
    down = {**up, "is_up": False}
    reading = SwitchReading("spine-1", interfaces={"swp1": down, "swp2": down, "swp3": down},
                            lldp={"swp3": [{"hostname": "leaf-2", "port": "swp18"}]})
    # swp1 is down toward an installed leaf: a finding, not excused; swp3 shows its neighbour over
    # LLDP though its carrier is down: the leaf is there, so it is checked
    assert absent_ports({"spine-1": reading}, planned, absent) == [
        ("spine-1", "swp2", "toward leaf-2: not listed in lab/endpoints.yml")]
    reading.interfaces["swp2"] = up
    assert absent_ports({"spine-1": reading}, planned, absent) == []


def test_a_switch_that_could_not_be_read_excuses_nothing():
    assert not dark(SwitchReading("spine-1"), "swp2")          # interfaces not read: unknown, not absent
    sonic = SwitchReading("spine-1", interfaces={"Ethernet8": {"is_up": False}}, lldp={})
    assert dark(sonic, "swp2", {"Ethernet8": "swp2"})          # the settle loop reads SONiC names
