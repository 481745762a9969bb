"""The switch management plane and routing knobs, compiled once from `management:` / `routing:`.

Every switch gets the same management plane except its own eth0 address (`Switch.mgmt_ip`).
`widest_ecmp` is the largest set of equal-cost next hops any switch of the plan has toward
one destination: BGP `multipaths` below it silently drops paths (and bandwidth).
"""

from __future__ import annotations

import ipaddress
from collections import Counter

from generator.plan.model import (
    ROLE_LEAF,
    ROLE_SPINE,
    ROLE_SUPER_SPINE,
    ManagementPlan,
    MgmtUser,
    Port,
    RoutingPlan,
    Switch,
)

# NVUE `vrf <v> router bgp address-family ipv4-unicast multipaths ebgp`: 1-128, default 64
DEFAULT_MAX_PATHS = 128
_RANK = {ROLE_LEAF: 0, ROLE_SPINE: 1, ROLE_SUPER_SPINE: 2}


def build_management(intent) -> ManagementPlan | None:
    m = intent.management
    if m is None:
        return None
    pool = ipaddress.IPv4Network(intent.addressing.management)
    gateway = m.gateway or str(pool.network_address + 1)
    return ManagementPlan(
        prefix_len=pool.prefixlen, gateway=gateway, ntp=tuple(m.ntp), dns=tuple(m.dns), syslog=tuple(m.syslog),
        timezone=m.timezone,
        users=tuple(MgmtUser(u.name, u.role, u.hashed_password, tuple(u.ssh_keys)) for u in m.users),
        banner=m.banner,
    )


def widest_ecmp(switches: tuple[Switch, ...], ports_by_device: dict[str, tuple[Port, ...]]) -> int:
    """Next hops toward one destination: all uplinks, or every link into one lower switch,
    pod (super-spine) or remote group (dragonfly global links)."""
    by_name = {sw.name: sw for sw in switches}
    widest = 1
    for sw in switches:
        up = 0
        domains: Counter = Counter()
        for p in ports_by_device.get(sw.name, ()):
            peer = by_name.get(p.peer_device)
            if peer is None:        # a host: one /31, one next hop
                continue
            if _RANK[peer.role] > _RANK[sw.role]:
                up += 1
            elif _RANK[peer.role] == _RANK[sw.role]:
                domains[("group", peer.group)] += 1
            elif sw.role == ROLE_SUPER_SPINE:
                domains[("pod", peer.unit)] += 1
            else:
                domains[("switch", peer.name)] += 1
        widest = max(widest, up, *domains.values()) if domains else max(widest, up)
    return widest


def build_routing(intent, switches, ports_by_device) -> RoutingPlan:
    r = intent.routing
    return RoutingPlan(max_paths=r.max_paths or DEFAULT_MAX_PATHS, max_paths_set=r.max_paths is not None,
                       bfd=r.bfd, adaptive_routing=r.adaptive_routing,
                       widest_ecmp=widest_ecmp(switches, ports_by_device))
