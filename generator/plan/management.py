"""The switch management plane and routing knobs, compiled once from `management:` / `routing:`.

Every switch gets the same management plane except its own eth0 address (`Switch.mgmt_ip`).
`widest_ecmp` is the largest set of equal-cost next hops any switch of the plan has toward
one destination: BGP `multipaths` below it silently drops paths (and bandwidth).
"""

from __future__ import annotations

import ipaddress
import operator
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
_PEER_DEVICE = operator.itemgetter(Port._fields.index("peer_device"))


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
    # per role of the switch: peer switch name -> the set of next hops its links join; hosts are
    # absent (one /31, one next hop). Links are then counted per set in C (~590k ports at 98k GPUs).
    domain_of: dict[str, dict[str, object]] = {role: {} for role in _RANK}
    for role, table in domain_of.items():
        for peer in switches:
            if _RANK[peer.role] > _RANK[role]:
                table[peer.name] = "up"
            elif _RANK[peer.role] == _RANK[role]:
                table[peer.name] = ("group", peer.group)
            elif role == ROLE_SUPER_SPINE:
                table[peer.name] = ("pod", peer.unit)
            else:
                table[peer.name] = ("switch", peer.name)
    widest = 1
    for sw in switches:
        links = Counter(map(domain_of[sw.role].get, map(_PEER_DEVICE, ports_by_device.get(sw.name, ()))))
        links.pop(None, None)
        widest = max(widest, *links.values()) if links else widest
    return widest


def build_routing(intent, switches, ports_by_device) -> RoutingPlan:
    r = intent.routing
    return RoutingPlan(max_paths=r.max_paths or DEFAULT_MAX_PATHS, max_paths_set=r.max_paths is not None,
                       bfd=r.bfd, adaptive_routing=r.adaptive_routing,
                       widest_ecmp=widest_ecmp(switches, ports_by_device))
