"""The lab's physical world: wiring files, link state, LLDP, BGP sessions and prefix counts.

The BGP part runs the real rendered NVUE configs of a plan through the lab's config reader
(nvue_oper) and compares the lab's prefix counts with verify's expectations, which are computed
from the plan by separate code: the two must agree on a correctly wired fabric.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest
import yaml

from generator.checks.runner import run_checks
from generator.devices.nvue import load_nvue_document
from generator.intent.loader import load_intent
from generator.lab import nvue_oper
from generator.lab.faults import Faults
from generator.lab.world import (
    FLOW_FRAME_OCTETS,
    OCTETS_PER_PACKET,
    PACKETS_PER_S,
    SESSION_SETTLE_S,
    Cable,
    Fabric,
    Flow,
    WiringError,
    World,
    WorldSource,
    check_devices,
    host_nic_mac,
    parse_wiring,
    with_host_macs,
)
from generator.render.cabling import render_cabling
from generator.render.output import render_files
from generator.verify.expected import expectations

INTENT = """\
fabric: {name: wt}
topology:
  kind: leaf-spine
  nodes: 4
  rails: 2
  nic_speed: 400G
  switches:
    leaf: {model: SN4700}
    spine: {model: SN4700}
"""


# --- wiring files ------------------------------------------------------------------------
def test_plan_cabling_is_a_wiring_file(tmp_path):
    plan = _plan(tmp_path)
    world = parse_wiring(render_cabling(plan), "cabling.csv")
    assert len(world.cables) == len(plan.links)
    first = plan.links[0]
    cable = world.cable_at(first.a_device, first.a_port)
    assert cable.far(first.a_device, first.a_port) == (first.b_device, first.b_port)
    assert cable.state == "up" and cable.crc_errors == 0


@pytest.mark.parametrize("text, line, words", [
    ("a_device,a_port,b_device\nx,1,y\n", 1, "missing column(s) b_port"),
    ("a_device,a_port,b_device,b_port,colour\n", 1, "unknown column(s) colour"),
    ("a_device,a_port,b_device,b_port\nleaf,swp1,gpu1,eth0\n\nleaf,swp1,gpu2,eth0\n", 4,
     "leaf:swp1 already has a cable (line 2)"),
    ("a_device,a_port,b_device,b_port,state\nleaf,swp1,gpu1,eth0,broken\n", 2, "state 'broken'"),
    ("a_device,a_port,b_device,b_port,crc_errors\nleaf,swp1,gpu1,eth0,-3\n", 2, "crc_errors '-3'"),
    ("a_device,a_port,b_device,b_port\nleaf,swp1,leaf,swp1\n", 2, "cabled to itself"),
    ("a_device,a_port,b_device,b_port\nleaf,swp1,gpu1\n", 2, "3 field(s)"),
    ("a_device,a_port,b_device,b_port\nleaf,,gpu1,eth0\n", 2, "a_port is empty"),
    ("", 1, "empty wiring file"),
    ("a_device,a_port,b_device,b_port,lldp_portid\nleaf,swp1,gpu1,eth0,ifalias\n", 2, "lldp_portid 'ifalias'"),
])
def test_a_bad_row_is_one_error_with_file_and_line(text, line, words):
    with pytest.raises(WiringError) as info:
        parse_wiring(text, "w.csv")
    message = str(info.value)
    assert message.startswith(f"w.csv:{line}: ") and words in message
    assert "\n" not in message


def test_state_and_crc_columns_and_comments():
    world = parse_wiring("# installed 2026-12-03\na_device,a_port,b_device,b_port,state,crc_errors\n"
                         "leaf,swp1,gpu1,eth0,down,\nleaf,swp2,gpu2,eth0,,7\n", "w.csv")
    assert world.cable_at("gpu1", "eth0").state == "down"
    assert world.cable_at("leaf", "swp2").crc_errors == 7
    assert world.cable_at("leaf", "swp2").line == 4


def test_rate_column_degrades_a_cable_and_refuses_what_is_not_a_share():
    world = parse_wiring("a_device,a_port,b_device,b_port,rate\nleaf,swp1,gpu1,eth0,0.9\nleaf,swp2,gpu2,eth0,\n", "w.csv")
    assert world.cable_at("gpu1", "eth0").rate == 0.9 and world.cable_at("leaf", "swp2").rate == 1.0
    assert World.from_dict(world.to_dict()).cable_at("leaf", "swp1").rate == 0.9
    for bad in ("0", "1.5", "nan", "fast"):
        with pytest.raises(WiringError, match=rf"^w.csv:2: rate '{bad}': give the share of its speed"):
            parse_wiring(f"a_device,a_port,b_device,b_port,rate\nleaf,swp1,gpu1,eth0,{bad}\n", "w.csv")


def test_unknown_device_is_named_with_its_line():
    world = parse_wiring("a_device,a_port,b_device,b_port\nleaf,swp1,gpu1,eth0\nleaf,swp2,gpu9,eth0\n", "w.csv")
    with pytest.raises(WiringError, match=r"^w.csv:3: 'gpu9' is not a switch or host of the plan$"):
        check_devices(world, {"leaf", "gpu1"}, "w.csv")


def test_lldp_portid_column_is_a_host_ends_and_defaults_to_mac():
    world = parse_wiring("a_device,a_port,b_device,b_port,lldp_portid\nleaf,swp1,gpu1,eth0,IFNAME\n"
                         "leaf,swp2,gpu2,eth0,\nleaf,swp3,spine,swp1,ifname\n", "w.csv")
    assert [c.lldp_portid for c in world.cables] == ["ifname", "mac", "ifname"]
    check_devices(world, {"leaf", "spine", "gpu1", "gpu2"}, "w.csv")
    with pytest.raises(WiringError, match=r"^w.csv:4: lldp_portid ifname is how a host's lldpd .* are switches$"):
        check_devices(world, {"leaf", "spine", "gpu1", "gpu2"}, "w.csv", hosts={"gpu1", "gpu2"})


def test_host_macs_are_stable_locally_administered_and_survive_world_json():
    mac = host_nic_mac("gpu001", "ens1f0np0")
    assert mac == host_nic_mac("gpu001", "ens1f0np0") != host_nic_mac("gpu001", "ens2f0np0")
    first = int(mac.split(":")[0], 16)
    assert first & 0x02 and not first & 0x01                 # locally administered, unicast
    world = with_host_macs(parse_wiring("a_device,a_port,b_device,b_port\nleaf,swp1,gpu1,eth0\n", "w.csv"),
                           {("gpu1", "eth0"): "0C:42:A1:00:00:01"})
    assert world.host_mac("gpu1", "eth0") == "0c:42:a1:00:00:01"
    assert world.host_mac("gpu1", "eth1") == host_nic_mac("gpu1", "eth1")
    again = World.from_dict(world.to_dict())
    assert again.host_macs == world.host_macs and again.host_mac("gpu1", "eth0") == "0c:42:a1:00:00:01"


def test_world_source_rereads_a_changed_file(tmp_path):
    from generator.lab.world import write_world

    source = WorldSource(tmp_path / "world.json")
    assert source.current()[0].cables == ()
    write_world(tmp_path, World((Cable("a", "swp1", "b", "swp1"),)))
    assert source.current()[0].cable_at("b", "swp1") is not None


# --- the fabric: rendered configs + world -------------------------------------------------
class FakeSwitch:
    """What the world asks a lab device, from a rendered NVUE document (as NvueDevice does)."""

    def __init__(self, name: str, config: dict):
        self.name, self.hostname, self.config, self.token = name, name, config, 0
        self.mgmt_ip, self.lldp_description = "192.0.2.1", "Cumulus Linux"

    def config_token(self):
        return self.token

    def oper_ports(self):
        return nvue_oper.ports_of(self.config)

    def oper_bgp(self):
        return nvue_oper.bgp_of(self.config)


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def _plan(tmp_path, intent: str = INTENT):
    path = tmp_path / "fabric.yaml"
    path.write_text(intent)
    return run_checks(load_intent(path)).plan


def _fabric(tmp_path, wiring: str | None = None, intent: str = INTENT):
    plan = _plan(tmp_path, intent)
    files = render_files(plan, intent)
    switches = {sw.name: FakeSwitch(sw.name, load_nvue_document(files[f"switches/{sw.name}/startup.yaml"]))
                for sw in plan.switches}
    world = parse_wiring(wiring or files["cabling.csv"], "w.csv")
    source = WorldSource(None)
    source._world = world
    clock = Clock()
    return plan, Fabric(source, switches, clock=clock), clock, switches


def _settled(fabric: Fabric, clock: Clock, name: str):
    fabric.sessions(name)          # the sessions start connecting now
    clock.now += SESSION_SETTLE_S + 0.1
    return fabric.sessions(name)


def test_correct_wiring_every_link_up_and_hosts_announce_as_lldpd_does_by_default(tmp_path):
    plan, fabric, _, _ = _fabric(tmp_path)
    for port in plan.ports:
        if port.device in {sw.name for sw in plan.switches}:
            assert fabric.link(port.device, port.port).up, port
    host, other = plan.hosts[0], plan.hosts[1]
    nic = host.nics[0]
    neighbor = fabric.lldp(nic.switch, nic.port)
    # lldpd's default (lldpcli(8)): port ID = the NIC's MAC, port description = the netdev
    assert (neighbor.system_name, neighbor.port_id, neighbor.port_id_subtype, neighbor.port_description) == \
        (host.name, host_nic_mac(host.name, nic.netdev), "mac", nic.netdev)
    # one chassis per host, whichever NIC it is heard on
    assert fabric.lldp(host.nics[1].switch, host.nics[1].port).chassis_id == neighbor.chassis_id
    assert fabric.lldp(other.nics[0].switch, other.nics[0].port).chassis_id != neighbor.chassis_id
    uplink = next(p for p in plan.ports if p.device == nic.switch and "spine" in p.peer_device)
    assert fabric.lldp(uplink.device, uplink.port).port_id_subtype == "ifname"       # a Cumulus switch: swp name


def test_a_host_with_portidsubtype_ifname_announces_its_netdev(tmp_path):
    plan = _plan(tmp_path)
    nic = plan.hosts[0].nics[0]
    cabling = render_cabling(plan).splitlines()
    rows = [cabling[0] + ",lldp_portid"] + [row + (",ifname" if plan.hosts[0].name in row.split(",") else ",")
                                            for row in cabling[1:]]
    _, fabric, _, _ = _fabric(tmp_path, "\n".join(rows) + "\n")
    neighbor = fabric.lldp(nic.switch, nic.port)
    assert (neighbor.port_id, neighbor.port_id_subtype, neighbor.port_description) == (nic.netdev, "ifname",
                                                                                       nic.netdev)
    second = plan.hosts[1].nics[0]
    assert fabric.lldp(second.switch, second.port).port_id_subtype == "mac"


NUMBERED_RAIL = """\
fabric: {name: wn}
topology: {kind: rail-optimized, nodes: 64, rails: 2}
addressing: {fabric_links: 10.254.0.0/16}
"""


@pytest.mark.parametrize("intent", [INTENT, NUMBERED_RAIL], ids=["unnumbered-leaf-spine", "numbered-rail-optimized"])
def test_lab_prefix_counts_equal_the_plans_expectations(tmp_path, intent):
    plan, fabric, clock, _ = _fabric(tmp_path, intent=intent)
    exp = expectations(plan)
    counts = set()
    for sw in plan.switches:
        sessions = _settled(fabric, clock, sw.name)
        planned = exp.sessions[sw.name]
        assert set(sessions) == set(planned)
        for neighbor, session in sessions.items():
            assert session.state == "established"
            assert session.rx_prefixes == planned[neighbor].prefixes, (sw.name, neighbor)
            counts.add(session.rx_prefixes)
    assert len(counts) > 1 and 0 not in counts
    if intent != INTENT:
        assert all("." in n for sw in plan.switches for n in exp.sessions[sw.name])   # numbered: peer addresses
        return
    # leaf-spine, 4 hosts x 2 rails on one leaf: a spine hears the leaf's lo + 8 host /31s, the leaf
    # hears each spine's lo only (the other spine's lo comes back through the leaf with AS 65000 in it)
    leaf = next(sw.name for sw in plan.switches if sw.role == "leaf")
    spine = next(sw.name for sw in plan.switches if sw.role == "spine")
    assert {s.rx_prefixes for s in _settled(fabric, clock, spine).values()} == {9}
    assert {s.rx_prefixes for s in _settled(fabric, clock, leaf).values()} == {1}


def test_a_session_connects_before_it_is_established(tmp_path):
    plan, fabric, clock, _ = _fabric(tmp_path)
    leaf = next(sw.name for sw in plan.switches if sw.role == "leaf")
    assert {s.state for s in fabric.sessions(leaf).values()} == {"connect"}
    clock.now += SESSION_SETTLE_S + 0.1
    assert {s.state for s in fabric.sessions(leaf).values()} == {"established"}


def test_unplugged_uplink_downs_both_ends_and_their_session_only(tmp_path):
    plan = _plan(tmp_path)
    uplink = next(lk for lk in plan.links if lk.tier == "leaf-spine")
    plan, fabric, clock, _ = _fabric(tmp_path, _wiring(plan, drop={(uplink.a_device, uplink.a_port)}))
    assert fabric.link(uplink.a_device, uplink.a_port).reason == "no cable"
    assert not fabric.link(uplink.b_device, uplink.b_port).up
    sessions = _settled(fabric, clock, uplink.a_device)
    assert sessions[uplink.a_port].state == "idle"
    assert sum(s.state == "established" for s in sessions.values()) == len(sessions) - 1


def _wiring(plan, *, drop=(), down=(), crc=None) -> str:
    """The plan's cables as a wiring file; drop/down/crc name links by their (a_device, a_port)."""
    rows = ["a_device,a_port,b_device,b_port,state,crc_errors"]
    for lk in plan.links:
        end = (lk.a_device, lk.a_port)
        if end not in drop:
            rows.append(f"{lk.a_device},{lk.a_port},{lk.b_device},{lk.b_port},"
                        f"{'down' if end in down else 'up'},{(crc or {}).get(end, 0)}")
    return "\n".join(rows) + "\n"


def test_host_port_down_withdraws_one_prefix(tmp_path):
    plan = _plan(tmp_path)
    host_link = next(lk for lk in plan.links if lk.tier == "host-leaf")
    plan, fabric, clock, _ = _fabric(tmp_path, _wiring(plan, down={(host_link.a_device, host_link.a_port)}))
    assert fabric.link(host_link.a_device, host_link.a_port).reason == "cable down"
    spine = next(sw.name for sw in plan.switches if sw.role == "spine")
    assert {s.rx_prefixes for s in _settled(fabric, clock, spine).values()} == {8}


def test_asn_mismatch_or_missing_neighbor_keeps_the_session_down(tmp_path):
    plan, fabric, clock, switches = _fabric(tmp_path)
    spine = next(sw.name for sw in plan.switches if sw.role == "spine")
    leaf = next(sw.name for sw in plan.switches if sw.role == "leaf")
    broken = copy.deepcopy(switches[spine].config)
    neighbors = broken["vrf"]["default"]["router"]["bgp"]["neighbor"]
    first, second = sorted(neighbors)[:2]
    neighbors[first]["remote-as"] = "internal"         # the leaf is external: OPEN refused
    del neighbors[second]                              # the leaf's session has no far side
    switches[spine].config, switches[spine].token = broken, 1
    states = {n: s.state for n, s in _settled(fabric, clock, spine).items()}
    assert states[first] == "active" and second not in states
    far_of = {lk.b_port: lk.a_port for lk in plan.links if lk.b_device == spine}
    leaf_states = {n: s.state for n, s in _settled(fabric, clock, leaf).items()}
    assert leaf_states[far_of[first]] == "active" and leaf_states[far_of[second]] == "active"
    assert sum(s == "established" for s in leaf_states.values()) == len(leaf_states) - 2


def test_admin_down_port_is_down_at_both_ends(tmp_path):
    plan, fabric, _, switches = _fabric(tmp_path)
    uplink = next(lk for lk in plan.links if lk.tier == "leaf-spine")
    config = copy.deepcopy(switches[uplink.b_device].config)
    config["interface"][uplink.b_port]["link"]["state"] = {"down": {}}
    switches[uplink.b_device].config, switches[uplink.b_device].token = config, 1
    assert fabric.link(uplink.b_device, uplink.b_port).reason == "admin down"
    assert fabric.link(uplink.a_device, uplink.a_port).reason == "far end admin down"
    assert fabric.lldp(uplink.a_device, uplink.a_port) is None


def test_counters_rise_with_time_and_crc_errors_only_on_the_bad_cable(tmp_path):
    plan = _plan(tmp_path)
    bad, good = plan.links[0], plan.links[1]
    plan, fabric, clock, _ = _fabric(tmp_path, _wiring(plan, crc={(bad.a_device, bad.a_port): 25}))
    first = fabric.counters(bad.a_device, bad.a_port)
    clock.now += 2
    second = fabric.counters(bad.a_device, bad.a_port)
    assert second["rx_fcs_errors"] - first["rx_fcs_errors"] == 50
    assert second["rx_packets"] > first["rx_packets"]
    assert fabric.counters(good.a_device, good.a_port)["rx_fcs_errors"] == 0


def test_a_flow_moves_the_ports_counters_in_its_window_and_a_degraded_cable_corrupts_its_share(tmp_path):
    plan, fabric, clock, _ = _fabric(tmp_path)
    up = next(lk for lk in plan.links if lk.tier == "leaf-spine")
    world = fabric.world()
    start = clock.now + 1
    flows = (Flow(up.a_device, up.a_port, tx_gbps=80, start=start, end=start + 2),
             Flow(up.b_device, up.b_port, rx_gbps=80, start=start, end=start + 2))
    fabric.source._world = World(world.cables, world.host_macs, flows)
    before = fabric.counters(up.b_device, up.b_port)
    clock.now += 10                                   # past the window: 2 s of 80 Gb/s = 20 GB
    after = fabric.counters(up.b_device, up.b_port)
    base = 10 * PACKETS_PER_S * OCTETS_PER_PACKET      # the lab's idle traffic on an up link
    assert after["rx_octets"] - before["rx_octets"] == 20_000_000_000 + base
    assert after["rx_fcs_errors"] == before["rx_fcs_errors"] == 0
    sent = fabric.counters(up.a_device, up.a_port)
    assert sent["tx_octets"] >= 20_000_000_000
    # the same flow over the cable degraded to 90 %: a tenth of its frames arrive corrupted
    cables = tuple(replace(c, rate=0.9) if c is world.cable_at(up.b_device, up.b_port) else c for c in world.cables)
    fabric.source._world = World(cables, world.host_macs, flows)
    fabric._cache_key = None
    degraded = fabric.counters(up.b_device, up.b_port)
    assert degraded["rx_fcs_errors"] == int(20_000_000_000 * 0.1 / FLOW_FRAME_OCTETS)
    assert degraded["rx_octets"] == after["rx_octets"] - 2_000_000_000     # nor received octets (no time passed)


def test_pfc_rates_from_the_fault_file_integrate_monotonically(tmp_path):
    plan, fabric, clock, _ = _fabric(tmp_path)
    faults = Faults.from_dict({"counters": {"swp1": {"pfc_rx_pause": {"3": 100}, "ecn_marked": {"3": 10}}}})
    leaf = next(sw.name for sw in plan.switches if sw.role == "leaf")
    before = nvue_oper.pfc_stats_json(leaf, "swp1", fabric, faults)
    clock.now += 3
    after = nvue_oper.pfc_stats_json(leaf, "swp1", fabric, faults)
    assert after["3"]["rx-pause-frames"] - before["3"]["rx-pause-frames"] == 300
    assert after["2"]["rx-pause-frames"] == 0
    assert nvue_oper.port_stats_json(leaf, "swp1", fabric, faults)["tx-stats"]["ecn-marked-packets"] >= 30


@pytest.mark.parametrize("bad", [{"counters": {"swp1": {"pfc_pause": {"3": 1}}}},
                                 {"counters": {"swp1": {"pfc_rx_pause": {"9": 1}}}},
                                 {"counters": {"swp1": {"ecn_marked": {"3": -1}}}}])
def test_fault_counters_are_validated(bad):
    with pytest.raises(ValueError):
        Faults.from_dict(bad)


def test_route_map_and_prefix_list_decide_what_is_originated():
    document = yaml.safe_load("""
router:
  bgp: {autonomous-system: '65101', enable: 'on', router-id: 10.0.0.1}
  policy:
    prefix-list:
      pl: {rule: {'10': {action: permit, match: {10.255.0.0/16: {max-prefix-len: '32', min-prefix-len: '32'}}}}}
    route-map:
      rm: {rule: {'10': {action: {permit: {}}, match: {ip-prefix-list: pl, type: ipv4}}}}
vrf: {default: {router: {bgp: {enable: 'on', address-family: {ipv4-unicast: {redistribute:
      {connected: {enable: 'on', route-map: rm}}}}}}}}
""")
    bgp = nvue_oper.bgp_of(document)
    assert bgp.announces("10.255.0.1/32") and not bgp.announces("10.254.0.0/31")
    assert not bgp.announces("10.255.0.0/24")       # min-prefix-len 32


def test_lab_up_takes_host_macs_from_the_discovery_file(tmp_path):
    # `lab up` (lab/command.py lab_world): the MACs `hosts discover` recorded are what the lab's hosts announce
    from generator.deploy.discover import discovery_text
    from generator.lab.command import lab_world

    plan = _plan(tmp_path)
    entries = {host.name: {"gpudirect": "nvidia-peermem", "nics": [
        {"netdev": nic.netdev, "mac": f"0C:42:A1:00:{h:02x}:{n:02x}" if h == 1 else None, "rdma": nic.rdma,
         "pci": f"0000:{8 + n:02x}:00.0", "port": 1, "link_layer": "Ethernet", "state": "ACTIVE", "rate_gbps": 400}
        for n, nic in enumerate(host.nics)]} for h, host in enumerate(plan.hosts, 1)}
    (tmp_path / "discovered.yaml").write_text(discovery_text(entries))
    (tmp_path / "fabric.yaml").write_text(INTENT + "hosts: {discovered: discovered.yaml}\n")
    discovered = run_checks(load_intent(tmp_path / "fabric.yaml")).plan
    first, second = discovered.hosts[0], discovered.hosts[1]
    world = lab_world(discovered, None)
    assert world.host_mac(first.name, first.nics[1].netdev) == "0c:42:a1:00:01:01"
    assert world.host_mac(second.name, second.nics[0].netdev) == host_nic_mac(second.name, second.nics[0].netdev)
    assert lab_world(plan, None).host_mac(first.name, first.nics[1].netdev) == \
        host_nic_mac(first.name, first.nics[1].netdev)
