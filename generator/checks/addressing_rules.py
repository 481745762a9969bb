"""FG4xx: addressing rules (IPv4 pools, BGP ASNs).

Each rule is one function; its docstring is what `fabricgen validate --explain CODE`
prints. FG401/FG402 only document codes the compiler raises.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from generator.checks.registry import ERROR, WARNING, CheckContext, rule
from generator.plan.model import ROLE_LEAF

ASN_MAX = 4294967295
# RFC 6793 AS_TRANS, RFC 7300 last 2-byte and last 4-byte ASN, RFC 7607 AS 0
RESERVED_ASNS = {0: "AS 0 (RFC 7607)", 23456: "AS_TRANS (RFC 6793)", 65535: "reserved (RFC 7300)",
                 ASN_MAX: "reserved (RFC 7300)"}
PRIVATE_ASN_RANGES = ((64512, 65534), (4200000000, 4294967294))   # RFC 6996

_POOLS = ("loopbacks", "fabric_links", "rails", "management")


@rule("FG401", ERROR, "address pool too small", stage="compile")
def pool_too_small(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """An addressing pool has fewer addresses than the compiled fabric needs: loopbacks
    one per switch (plus the network address), management one per switch and host (hosts
    start at the next /24 boundary in pools of /22 or larger), rails one /31 per NIC port
    carved into one equal subnet per rail (rounded up to a power of two), numbered
    fabric_links one /31 per switch-to-switch link. The message gives the prefix length
    that fits; widen the pool under addressing.<pool>."""
    return iter(())


@rule("FG402", ERROR, "a host name equals a switch name", stage="compile")
def host_switch_name_clash(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """hosts.name (a format string over n = 1..nodes) produced a name that is also a
    switch name (<fabric>-leaf-..., <fabric>-spine-...). Names key the inventory, the
    output directories and DNS, so they must be unique: change hosts.name."""
    return iter(())


def _pools(ctx: CheckContext) -> list[tuple[str, ipaddress.IPv4Network]]:
    a = ctx.intent.addressing
    out = []
    for key in _POOLS:
        value = getattr(a, key)
        if key == "fabric_links" and value == "unnumbered":
            continue
        out.append((key, ipaddress.IPv4Network(value)))
    return out


@rule("FG403", ERROR, "address pools overlap", stage="intent")
def pools_overlap(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """addressing.loopbacks, addressing.fabric_links (when numbered), addressing.rails and
    addressing.management are allocated independently; when two overlap, the same address
    is handed out twice (a leaf loopback equal to a host NIC, a management address inside
    a rail subnet). BGP then advertises duplicate prefixes, ECMP sends RDMA traffic to the
    wrong device, and management reachability breaks. Make every pool a separate prefix."""
    pools = _pools(ctx)
    for i, (key_a, net_a) in enumerate(pools):
        for key_b, net_b in pools[i + 1:]:
            if net_a.overlaps(net_b):
                yield f"addressing.{key_b}", (f"{net_b} overlaps addressing.{key_a} {net_a}: every pool needs its "
                                              "own prefix")


def _asn_path(role: str) -> str:
    return "addressing.asn.leaf_base" if role == ROLE_LEAF else "addressing.asn.spine"


@rule("FG404", ERROR, "a leaf ASN collides with a spine ASN", stage="plan")
def asn_collision(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """RFC 7938 numbering: spines of a tier (or of a pod / dragonfly group) share an ASN
    (addressing.asn.spine, +pod for three-tier pod spines, +group-1 for dragonfly groups),
    and leaf i gets addressing.asn.leaf_base + i. When a leaf ends up with an ASN that a
    spine or super-spine uses, eBGP between them either refuses to come up (the session
    becomes iBGP with the wrong peer type) or drops every route on AS-path loop detection:
    the leaf's hosts are unreachable. Move addressing.asn.leaf_base so leaf_base+1 ..
    leaf_base+<leaves> stays clear of the spine ASNs."""
    leaf_asns: dict[int, str] = {}
    other_asns: dict[int, str] = {}
    for sw in ctx.plan.switches:
        (leaf_asns if sw.role == ROLE_LEAF else other_asns).setdefault(sw.asn, sw.name)
    clash = sorted(set(leaf_asns) & set(other_asns))
    if clash:
        asn = clash[0]
        more = f" ({len(clash) - 1} more ASN(s) collide)" if len(clash) > 1 else ""
        leaves = sum(1 for sw in ctx.plan.switches if sw.role == ROLE_LEAF)
        yield "addressing.asn.leaf_base", (f"leaf {leaf_asns[asn]} and {other_asns[asn]} both get ASN {asn}{more}: "
                                           f"leaves use leaf_base+1..leaf_base+{leaves}; move leaf_base clear of "
                                           "the spine ASNs")


@rule("FG405", ERROR, "ASN outside 1-4294967295 or reserved", stage="plan")
def asn_range(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """BGP ASNs are 32-bit: 1-4294967295 (RFC 6793). Within that, 0 is invalid (RFC 7607),
    23456 is AS_TRANS (a placeholder 2-byte speakers see for 4-byte ASNs), and 65535 and
    4294967295 are reserved (RFC 7300); a switch configured with any of them is rejected
    or misbehaves with peers. The check covers the ASNs actually assigned: leaves count
    up from addressing.asn.leaf_base + 1, so a base near a boundary can run past it on a
    large fabric."""
    seen: set[str] = set()
    for sw in ctx.plan.switches:
        path = _asn_path(sw.role)
        if path in seen:
            continue
        asn = sw.asn
        if not 1 <= asn <= ASN_MAX or asn in RESERVED_ASNS:
            seen.add(path)
            why = RESERVED_ASNS.get(asn, "outside 1-4294967295")
            yield path, (f"{sw.name} gets ASN {asn}, which is {why}: choose a private ASN range "
                         "(64512-65534 or 4200000000-4294967294)")


@rule("FG406", WARNING, "ASN outside the private ranges", stage="plan")
def asn_not_private(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """A fabric underlay is a private routing domain: RFC 7938 numbers it from the private
    ASN ranges 64512-65534 and 4200000000-4294967294 (RFC 6996). A public ASN belongs to
    somebody else and leaks into AS paths if the fabric ever peers out (and some border
    filters strip only private ASNs). Large fabrics outgrow the 2-byte private range:
    1023 ASNs in all, so a leaf_base of 65100 leaves room for 434 leaves; use a 4-byte
    private base such as 4200000000 for more."""
    seen: set[str] = set()
    for sw in ctx.plan.switches:
        path = _asn_path(sw.role)
        asn = sw.asn
        if path in seen or not 1 <= asn <= ASN_MAX or asn in RESERVED_ASNS:
            continue   # FG405 reports those
        if not any(lo <= asn <= hi for lo, hi in PRIVATE_ASN_RANGES):
            seen.add(path)
            yield path, (f"{sw.name} gets public ASN {asn}: use the private ranges 64512-65534 or "
                         "4200000000-4294967294")
