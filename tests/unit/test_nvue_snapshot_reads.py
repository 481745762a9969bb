"""Inside NVUEDriver.snapshot() the per-port operational getters answer from the one interface-tree
read (issue 26: one structured read per feature per switch), the PHY counters verify added included;
a port whose subtree the tree lacks is still read with its own command. Pure logic: the driver's
_json is replaced by a recorder, no SSH."""

from __future__ import annotations

from generator.devices.nvue import NVUEDriver

PHY = {"raw-ber": "1.00e-09", "fec-corrected-codewords": 12, "fec-uncorrected-codewords": 0}


class Recorded(NVUEDriver):
    def __init__(self, tree: dict, per_port: dict[str, dict]):
        super().__init__("leaf1", "cumulus", "x", optional_args={"cumulus_version": "5.12"})
        self.tree, self.per_port, self.sent = tree, per_port, []

    def _json(self, command: str) -> dict:
        self.sent.append(command)
        return self.tree if command == self.commands.show_interface_json else self.per_port[command]


def port(phy: dict | None, transitions: int) -> dict:
    link = {"oper-status": "up", "state": {"up": {}}}
    if phy is not None:
        link["phy-detail"] = phy
    return {"type": "swp", "link": link, "counters": {"carrier-transitions": transitions}}


def test_phy_counters_come_from_the_one_interface_read_inside_a_snapshot():
    driver = Recorded({"swp1": port(PHY, 3), "swp2": port(PHY, 5), "eth0": {"type": "eth", "link": {}}}, {})
    with driver.snapshot():
        phy = driver.get_phy_counters()
    assert driver.sent == [driver.commands.show_interface_json]
    assert sorted(phy) == ["swp1", "swp2"]
    assert phy["swp2"]["carrier_transitions"] == 5 and phy["swp1"]["fec_corrected"] == 12


def test_a_port_whose_tree_lacks_phy_detail_is_read_with_its_own_command():
    own = "nv show interface swp2 link phy-detail -o json"
    driver = Recorded({"swp1": port(PHY, 0), "swp2": port(None, 0)}, {own: dict(PHY, **{"raw-ber": "2.00e-05"})})
    with driver.snapshot():
        phy = driver.get_phy_counters()
    assert driver.sent == [driver.commands.show_interface_json, own]
    assert phy["swp2"]["pre_fec_ber"] == 2e-05


def test_pfc_watchdog_storms_per_port_and_priority_and_none_before_5_6():
    """`qos pfc-watchdog` (QoS page, 5.6+): deadlock-count per switch-priority where the port's
    watchdog is enabled; outside a snapshot each port is read with its own command; a release
    before 5.6 has no watchdog to read (no command sent)."""
    own = "nv show interface swp{} qos pfc-watchdog -o json"
    tree = {"swp1": port(PHY, 0), "swp2": port(PHY, 0)}
    answers = {own.format(1): {"state": "enable", "switch-priority": {"3": {"deadlock-count": 4}}},
               own.format(2): {"state": "disable"}}
    driver = Recorded(tree, answers)
    assert driver.get_pfc_watchdog_counters() == {"swp1": {3: {"storm_detected": 4, "storm_restored": None}},
                                                  "swp2": {}}
    assert driver.sent == [driver.commands.show_interface_json, own.format(1), own.format(2)]
    old = Recorded(tree, answers)
    old.optional_args["cumulus_version"] = "5.5"
    assert old.get_pfc_watchdog_counters() == {} and old.sent == []
