"""The ECMP width the plan gives each switch toward other leaves' loopbacks (the `ecmp` check).

Every switch announces its loopback /32 over the planned eBGP sessions (one session per
switch-to-switch link, so parallel links are parallel next hops). A switch installs as ECMP next
hops the sessions whose neighbor's best path is the shortest loop-free one, and, because the
rendered BGP has no `bgp bestpath as-path multipath-relax`, only paths with exactly the best
path's AS path (FRR's multipath rule; `multipaths ebgp` = routing.max_paths caps the group).

That is derived per topology from the session graph, not per kind: a leaf of a 2-tier
leaf/spine or rail-optimized fabric reaches another leaf over every uplink to a spine that has
a link to that leaf (the spines share one ASN, so every such path reads spine-ASN, leaf-ASN);
a spine reaches a leaf over its parallel links to it; in three-tier and dragonfly+ fabrics the
same rule runs through the super-spines / global links. Where the width is not derivable from
the plan (a neighbor whose equal-length paths differ in AS sequence, so which one BGP picks
depends on router-id tie-breaks), that switch/prefix pair is left out rather than guessed.

Cost: a breadth-first search per target leaf. Large fabrics check a deterministic spread of at
most MAX_TARGETS leaves' loopbacks: a missing uplink or session narrows every route of the leaf
that lost it, so any remote target shows it.
"""

from __future__ import annotations

MAX_TARGETS = 32
_AMBIGUOUS = object()


def _shortest_paths(origin: str, edges: dict[str, set[str]], asn: dict[str, int]) -> dict[str, set[tuple[int, ...]]]:
    """switch -> every AS path of the shortest loop-free length it can advertise for ORIGIN's loopback."""
    best: dict[str, set[tuple[int, ...]]] = {origin: {(asn[origin],)}}
    frontier = [origin]
    while frontier:
        offers: dict[str, set[tuple[int, ...]]] = {}
        for holder in frontier:
            for far in edges[holder]:
                if far in best:
                    continue
                for path in best[holder]:
                    if asn[far] not in path:          # eBGP loop prevention
                        offers.setdefault(far, set()).add((asn[far], *path))
        best.update(offers)
        frontier = sorted(offers)
    return best


def _targets(leaves: list[str]) -> list[str]:
    if len(leaves) <= MAX_TARGETS:
        return leaves
    step = len(leaves) / MAX_TARGETS
    return [leaves[int(i * step)] for i in range(MAX_TARGETS)]


def session_graph(plan, absent_ports: frozenset = frozenset()) -> dict[str, list[str]]:
    """switch -> the peer of each of its planned eBGP sessions (parallel links: repeated), without
    the sessions on ABSENT_PORTS ((device, port) ends not installed yet)."""
    sessions: dict[str, list[str]] = {sw.name: [] for sw in plan.switches}
    for p in plan.ports:
        if p.device in sessions and p.peer_device in sessions and p.peer_asn is not None and not (
                absent_ports and ((p.device, p.port) in absent_ports or (p.peer_device, p.peer_port) in absent_ports)):
            sessions[p.device].append(p.peer_device)
    return sessions


def widths_toward(origin: str, sessions: dict[str, list[str]], asn: dict[str, int],
                  max_paths: int | None) -> dict[str, int]:
    """{switch: ECMP next hops toward ORIGIN's loopback} for every switch where it is derivable
    and not zero, over the session graph SESSIONS (session_graph)."""
    best = _shortest_paths(origin, {name: set(fars) for name, fars in sessions.items()}, asn)
    out = {}
    for name in sessions:
        if name == origin:
            continue
        width = _width(best, sessions[name], asn[name])
        if width is _AMBIGUOUS or not width:
            continue
        out[name] = min(width, max_paths) if max_paths else width
    return out


def expected_widths(plan, absent_ports: frozenset = frozenset(),
                    present: set[str] | None = None) -> dict[str, dict[str, tuple[int, str]]]:
    """{switch: {leaf loopback prefix: (next hops, that leaf's name)}} for every derivable pair;
    the targets are the leaves of PRESENT (default: every leaf of the plan)."""
    switches = {sw.name: sw for sw in plan.switches}
    asn = {name: sw.asn for name, sw in switches.items()}
    sessions = session_graph(plan, absent_ports)
    max_paths = plan.routing.max_paths if plan.routing is not None else None
    out: dict[str, dict[str, tuple[int, str]]] = {name: {} for name in switches}
    leaves = sorted(n for n, sw in switches.items() if sw.role == "leaf" and (present is None or n in present))
    for origin in _targets(leaves):
        prefix = f"{switches[origin].loopback}/32"
        for name, width in widths_toward(origin, sessions, asn, max_paths).items():
            out[name][prefix] = (width, origin)
    return out


def _width(best: dict, neighbors: list[str], my_asn: int):
    """Next hops toward one origin: one offer per session, (AS path, length); the path is None when
    the neighbor holds several shortest paths, so which it advertises is a tie-break."""
    offers: list[tuple[tuple[int, ...] | None, int]] = []
    for far in neighbors:
        paths = best.get(far, set())
        valid = {p for p in paths if my_asn not in p}
        if valid:
            length = len(next(iter(valid)))
            offers.append((next(iter(valid)) if valid == paths and len(valid) == 1 else None, length))
    if not offers:
        return 0
    shortest = min(length for _path, length in offers)
    at_best = [path for path, length in offers if length == shortest]
    if None in at_best or len(set(at_best)) > 1:
        return _AMBIGUOUS              # a tie-break decides, or equal length with different AS paths
    return len(at_best)
