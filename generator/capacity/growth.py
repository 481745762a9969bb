"""Installed vs build-out (`topology.build_out`): the same capacity figures on both plans.

The installed plan (compile_plan of the intent) is the build-out fabric restricted to the
first `topology.nodes` nodes, with its top tier racked in full (generator/plan/growth.py),
so its switch list and links already are what phase 1 buys; the build-out plan is the
compiled `build_out_intent`. Nothing here computes a figure: it pairs the two Analyses'
figures (figures.py, bom.py, cost.py, bisection.py, allreduce.py) row by row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.intent.model import Intent
from generator.plan.model import ROLE_SPINE, ROLE_SUPER_SPINE

if TYPE_CHECKING:
    from generator.capacity.analyze import Analysis
    from generator.plan.bom import BomLine

# the tier racked in full from phase 1, per topology kind (generator/plan/growth.py)
TOP_TIER = {"leaf-spine": ROLE_SPINE, "rail-optimized": ROLE_SPINE, "three-tier": ROLE_SUPER_SPINE}


def grows(intent: Intent) -> bool:
    """True when the intent is the first phase(s) of a larger build-out."""
    b = intent.topology.build_out
    return b is not None and b.nodes != intent.topology.nodes


def role_counts(a: Analysis) -> dict[tuple[str, str], int]:
    """(role, model) -> switch count, from figures.switch_tiers."""
    return {(s.role, s.model): s.count for s in a.figures.switches}


def top_tier_note(a: Analysis) -> str:
    """One line: which tier phase 1 buys for the build-out (a.build_out must be set)."""
    full = a.build_out
    assert full is not None
    kind = a.plan.kind
    if kind == "single-switch":
        return (f"the one switch is bought for the {full.figures.nodes}-node build-out; "
                "later phases add host cables and NICs only")
    role = TOP_TIER.get(kind)
    if role is None:
        return (f"no tier is bought ahead on {kind}: a group's leaves and spines come with its nodes; "
                "links toward later groups are reserved ports")
    have = sum(n for (r, _), n in role_counts(a).items() if r == role)
    total = sum(n for (r, _), n in role_counts(full).items() if r == role)
    return (f"the {role} tier is bought for the {full.figures.nodes}-node build-out: {have} of {total} "
            f"{role}s are in phase 1; later phases add the other switches, their cables and NICs")


def _bom_key(b: BomLine) -> tuple[str, str, str]:
    # a NIC-port line's detail names the host count, which differs between the two sizes
    return (b.category, b.item, "" if b.category == "nic-port" else b.detail)


def bom_pairs(a: Analysis, categories: tuple[str, ...]) -> list[tuple[BomLine, int, int]]:
    """(line, installed quantity, build-out quantity) for the BOM lines of CATEGORIES, in the
    build-out BOM's order; a line only one size has counts 0 at the other."""
    full = a.build_out
    assert full is not None
    installed = {_bom_key(b): b for b in a.bom if b.category in categories}
    out: list[tuple[BomLine, int, int]] = []
    seen = set()
    for b in full.bom:
        if b.category not in categories:
            continue
        key = _bom_key(b)
        seen.add(key)
        mine = installed.get(key)
        out.append((b, mine.quantity if mine else 0, b.quantity))
    out += [(b, b.quantity, 0) for key, b in installed.items() if key not in seen]
    return out
