"""What the built fabric should show, read from the plan: ports, cables, BGP sessions, prefix counts.

Prefix counts follow the plan's routing: every switch announces its loopback (/32) and the /31
of each host-facing port (the connected route-map of render/nvue.py and render/sonic.py permits
exactly those), and the announcements flow over the planned eBGP sessions with eBGP loop
prevention (a switch drops a path that already holds its ASN). The count a switch receives on
a session is what its peer holds on a loop-free best path; the check accepts a range around it
(PREFIX_TOLERANCE) so that one host port down, which withdraws one /31, does not flag the spines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from generator.verify.ecmp import expected_widths, session_graph

PREFIX_TOLERANCE = 0.10     # fraction of the expected count
PREFIX_SLACK_MIN = 2        # at least this many either side


@dataclass(frozen=True)
class PlannedPort:
    device: str
    port: str
    peer_device: str
    peer_port: str
    speed_g: int
    peer_is_switch: bool


@dataclass(frozen=True)
class PlannedSession:
    device: str
    neighbor: str              # the port (unnumbered) or the peer's address (numbered): the NVUE/FRR neighbor id
    port: str
    peer_device: str
    peer_port: str
    peer_asn: int
    prefixes: int              # expected received prefixes with every planned link up

    def prefix_range(self, tolerance: float = PREFIX_TOLERANCE) -> tuple[int, int]:
        slack = max(PREFIX_SLACK_MIN, math.ceil(self.prefixes * tolerance))
        return max(0, self.prefixes - slack), self.prefixes + slack


@dataclass(frozen=True)
class Expectations:
    ports: dict[str, dict[str, PlannedPort]]              # switch -> port -> planned port
    sessions: dict[str, dict[str, PlannedSession]]        # switch -> neighbor id -> session
    mtu: int
    lossless_priorities: tuple[int, ...]
    # (host, netdev) -> the NIC's MAC from hosts.discovered (`hosts discover`), where it has one:
    # lldpd announces it as the host port's LLDP port ID by default
    host_macs: dict[tuple[str, str], str] = field(default_factory=dict)
    cables: dict[tuple[str, str], str] = field(default_factory=dict)   # (switch, port) -> DAC | AOC
    switch_os: str = "cumulus"
    switch_os_version: tuple[int, int] = (0, 0)
    ntp_servers: tuple[str, ...] = ()             # management.ntp; empty: any synchronised source
    # switch -> {remote leaf loopback prefix: (ECMP next hops, leaf name)} (ecmp.py)
    ecmp: dict[str, dict[str, tuple[int, str]]] = field(default_factory=dict)
    # what the ECMP widths were derived from, so a finding can be explained by sessions that are
    # down (root_cause.py): switch -> peer per session, switch -> ASN, routing.max_paths
    graph: dict[str, list[str]] = field(default_factory=dict)
    asn: dict[str, int] = field(default_factory=dict)
    max_paths: int | None = None

    def peer_port(self, device: str, port: str) -> PlannedPort | None:
        return self.ports.get(device, {}).get(port)


def expectations(plan, absent_ports: frozenset = frozenset(), present: set[str] | None = None) -> Expectations:
    """What PLAN's fabric shows, without ABSENT_PORTS ((device, port) ends toward devices not
    installed yet: nothing is expected of them, and no prefix or ECMP path runs over them);
    the ECMP targets are the leaves of PRESENT (default: all)."""
    switches = {sw.name: sw for sw in plan.switches}
    ports: dict[str, dict[str, PlannedPort]] = {name: {} for name in switches}
    raw_sessions: list[tuple[str, str, object]] = []
    originated = {name: 1 for name in switches}            # the loopback /32
    for p in plan.ports:
        if p.device not in switches or (p.device, p.port) in absent_ports or (p.peer_device, p.peer_port) in absent_ports:
            continue
        ports[p.device][p.port] = PlannedPort(p.device, p.port, p.peer_device, p.peer_port, p.speed_g,
                                              p.peer_device in switches)
        if p.peer_asn is not None and p.peer_device in switches:
            neighbor = p.peer_ip if p.peer_ip else p.port
            raw_sessions.append((p.device, neighbor, p))
        elif p.peer_device not in switches and p.ip:
            originated[p.device] += 1                      # a host-facing /31
    asn = {name: sw.asn for name, sw in switches.items()}
    edges: dict[str, list[str]] = {name: [] for name in switches}
    for device, _neighbor, p in raw_sessions:
        edges[device].append(p.peer_device)
    received = _received(edges, asn, originated)
    sessions: dict[str, dict[str, PlannedSession]] = {name: {} for name in switches}
    for device, neighbor, p in raw_sessions:
        sessions[device][neighbor] = PlannedSession(device, neighbor, p.port, p.peer_device, p.peer_port,
                                                    p.peer_asn, received[(device, p.peer_device)])
    host_macs: dict[tuple[str, str], str] = {}
    if plan.discovery is not None:
        for host in plan.hosts:
            for nic in host.nics:
                found = plan.discovery.nic(host.name, nic.netdev)
                if found is not None and found.mac:
                    host_macs[(host.name, nic.netdev)] = found.mac
    cables = {}
    for link in plan.links:
        for device, port in ((link.a_device, link.a_port), (link.b_device, link.b_port)):
            if device in switches and (device, port) not in absent_ports:
                cables[(device, port)] = link.cable
    return Expectations(ports, sessions, plan.qos.switch_mtu, tuple(plan.qos.pfc_priorities), host_macs, cables,
                        plan.switch_os, tuple(plan.switch_os_version),
                        tuple(plan.management.ntp) if plan.management is not None else (),
                        expected_widths(plan, absent_ports, present), session_graph(plan, absent_ports), asn,
                        plan.routing.max_paths if plan.routing is not None else None)


def _received(edges: dict[str, list[str]], asn: dict[str, int], originated: dict[str, int]) -> dict:
    """(receiver, sender) -> prefixes the sender advertises that the receiver accepts."""
    out: dict[tuple[str, str], int] = {}
    for receiver, senders in edges.items():
        for sender in senders:
            out[(receiver, sender)] = 0
    for origin in sorted(edges):
        paths = {origin: (asn[origin],)}
        frontier = [origin]
        while frontier:
            nxt = set()
            for holder in frontier:
                for far in sorted(set(edges[holder])):
                    if far in paths or asn[far] in paths[holder]:
                        continue
                    paths[far] = (asn[far], *paths[holder])
                    nxt.add(far)
            frontier = sorted(nxt)
        for (receiver, sender) in out:
            if sender in paths and asn[receiver] not in paths[sender]:
                out[(receiver, sender)] += originated[origin]
    return out
