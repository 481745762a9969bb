"""What the topology picture shows, from the plan: the shared top tier with its fan-out, the
scalable units (rail-optimized, leaf-spine units), pods (three-tier) or groups (dragonfly+) as
blocks, unit 1 opened up with its rail leaves and a few hosts, and the blocks the build-out adds.

Every count comes from the compiled plans (installed and build-out, generator/plan/growth.py):
a block is installed when the installed plan has its hosts, a build-out block only when the
build-out plan has it. Nothing is drawn here (picture.py draws).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass

from generator.plan.model import ROLE_LEAF, ROLE_SPINE, ROLE_SUPER_SPINE, TIER_HOST_LEAF, FabricPlan

HOSTS_SHOWN = 3             # hosts of the opened unit drawn one by one; the rest is a label


@dataclass(frozen=True)
class Block:
    number: int
    installed: bool
    leaves: int
    hosts: int
    spines: int             # the block's own spines: a pod's or a dragonfly+ group's; 0 in two tiers


@dataclass(frozen=True)
class OpenUnit:
    """Block 1 device by device: its spines (pod/group), rail leaves and the first hosts."""
    spines: tuple[str, ...]
    leaves: tuple[tuple[str, int | None], ...]              # (name, rail)
    hosts: tuple[tuple[str, tuple[tuple[int, str], ...]], ...]   # (name, ((rail, leaf), ...))
    more_hosts: int


@dataclass(frozen=True)
class Picture:
    fabric: str
    kind: str
    word: str                       # unit | pod | group
    top_role: str | None            # the shared tier (spine, super-spine); None in dragonfly+
    top: tuple[str, ...]            # its switches, installed plan
    top_model: str
    fanout: str                     # one line: what each top switch connects to
    blocks: tuple[Block, ...]
    open_unit: OpenUnit
    rails: int
    global_links: str = ""          # dragonfly+: the spine-to-spine links between groups

    @property
    def installed(self) -> int:
        return sum(1 for b in self.blocks if b.installed)


def has_blocks(plan: FabricPlan) -> bool:
    """True when the plan's hosts carry a unit, pod or group to draw the picture by."""
    return bool(plan.hosts) and all(h.unit is not None or h.group is not None for h in plan.hosts)


def _block_of(plan: FabricPlan) -> dict[str, int]:
    """device -> its unit/pod/group number (hosts, leaves, block spines)."""
    out = {}
    for h in plan.hosts:
        out[h.name] = h.group if h.unit is None else h.unit
    for sw in plan.switches:
        number = sw.group if sw.group is not None else sw.unit
        if number is not None:
            out[sw.name] = number
    # a leaf without a unit field belongs to the block of the hosts cabled to it
    for h in plan.hosts:
        for nic in h.nics:
            out.setdefault(nic.switch, out[h.name])
    return out


def _blocks(plan: FabricPlan, installed: bool) -> dict[int, Block]:
    where = _block_of(plan)
    roles = {sw.name: sw.role for sw in plan.switches}
    counts: dict[int, Counter] = defaultdict(Counter)
    for name, number in where.items():
        counts[number][roles.get(name, "host")] += 1
    return {n: Block(n, installed, c[ROLE_LEAF], c["host"], c[ROLE_SPINE] if _top_role(plan) != ROLE_SPINE else 0)
            for n, c in counts.items()}


def _top_role(plan: FabricPlan) -> str | None:
    roles = {sw.role for sw in plan.switches}
    if ROLE_SUPER_SPINE in roles:
        return ROLE_SUPER_SPINE
    if plan.kind == "dragonfly-plus":
        return None
    return ROLE_SPINE if ROLE_SPINE in roles else None


def _fanout(plan: FabricPlan, full: FabricPlan, top_role: str | None) -> str:
    if top_role is None:
        return ""

    def per_switch(p: FabricPlan) -> tuple[str, int, int, int]:
        names = sorted(sw.name for sw in p.switches if sw.role == top_role)
        first = names[0]
        links = [lk for lk in p.links if first in (lk.a_device, lk.b_device) and lk.tier != TIER_HOST_LEAF]
        peers = {lk.b_device if lk.a_device == first else lk.a_device for lk in links}
        speed = links[0].speed_g if links else 0
        return first, len(peers), len(links), speed

    first, peers, links, speed = per_switch(plan)
    below = "leaves" if top_role == ROLE_SPINE else "spines"
    line = f"fan-out: each {top_role} has {links} x {speed}G to {peers} {below}"
    if full is not plan:
        _, peers_full, links_full, _ = per_switch(full)
        if links_full != links:
            line += f"; {links_full} x {speed}G to {peers_full} at the build-out (ports reserved)"
    return line


def _global(plan: FabricPlan) -> str:
    if plan.kind != "dragonfly-plus":
        return ""
    roles = {sw.name: sw.role for sw in plan.switches}
    links = [lk for lk in plan.links if roles.get(lk.a_device) == ROLE_SPINE and roles.get(lk.b_device) == ROLE_SPINE]
    if not links:
        return "global links: none until a second group is installed"
    return f"global links: {len(links)} x {links[0].speed_g}G {links[0].cable} {links[0].length_m:g} m between groups' spines"


def _open_unit(plan: FabricPlan, number: int) -> OpenUnit:
    where = _block_of(plan)
    rails = {sw.name: sw.rail for sw in plan.switches}
    hosts = sorted((h for h in plan.hosts if where[h.name] == number), key=lambda h: h.index)
    leaves = sorted({n.switch for h in hosts for n in h.nics}, key=lambda s: (rails.get(s) is None, rails.get(s) or 0, s))
    spines = sorted(sw.name for sw in plan.switches
                    if sw.role == ROLE_SPINE and where.get(sw.name) == number)
    shown = tuple((h.name, tuple((n.rail, n.switch) for n in h.nics)) for h in hosts[:HOSTS_SHOWN])
    return OpenUnit(tuple(spines), tuple((s, rails.get(s)) for s in leaves), shown, len(hosts) - len(shown))


def picture_of(plan: FabricPlan, build_out: FabricPlan | None = None) -> Picture:
    """The picture of PLAN; BUILD_OUT: the build-out plan, whose further blocks are drawn dashed."""
    full = build_out or plan
    top_role = _top_role(plan)
    blocks = _blocks(plan, True)
    for n, b in _blocks(full, False).items():
        if n not in blocks:
            blocks[n] = b
    word = {"dragonfly-plus": "group", "three-tier": "pod"}.get(plan.kind, "unit")
    top = tuple(sorted((sw.name for sw in plan.switches if sw.role == top_role), key=_natural))
    models = {sw.role: sw.model for sw in plan.switches}
    return Picture(plan.fabric, plan.kind, word, top_role, top, models.get(top_role, "") if top_role else "",
                   _fanout(plan, full, top_role), tuple(blocks[n] for n in sorted(blocks)),
                   _open_unit(plan, min(n for n, b in blocks.items() if b.installed)), plan.rails, _global(plan))


def _natural(name: str) -> tuple:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))
