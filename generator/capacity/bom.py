"""Bill of materials from the plan: switches, cables, NIC ports, optics.

An AOC is an optical cable with its transceivers bonded on, so each AOC link also
counts two optical ends; order discrete transceivers plus fibre instead when runs
are longer than AOC assemblies come (about 100 m) or patch panels sit in between.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass

from generator.plan.model import TIER_GLOBAL, TIER_HOST_LEAF, TIER_LEAF_SPINE, TIER_SPINE_SUPER, FabricPlan

OPTICAL = {"AOC"}
_TIER_ORDER = {t: i for i, t in enumerate((TIER_HOST_LEAF, TIER_LEAF_SPINE, TIER_SPINE_SUPER, TIER_GLOBAL))}


@dataclass(frozen=True, slots=True)
class BomLine:
    category: str       # switch | cable | nic-port | transceiver
    item: str
    detail: str
    quantity: int

    def as_dict(self) -> dict:
        return {"category": self.category, "item": self.item, "detail": self.detail, "quantity": self.quantity}


def _length(m: float) -> str:
    return f"{m:g} m"


def bill_of_materials(plan: FabricPlan) -> tuple[BomLine, ...]:
    lines: list[BomLine] = []
    for model, n in sorted(Counter(sw.model for sw in plan.switches).items()):
        roles = sorted({sw.role for sw in plan.switches if sw.model == model})
        lines.append(BomLine("switch", model, ", ".join(roles), n))
    cables = Counter((link.tier, link.cable, link.length_m, link.speed_g) for link in plan.links)
    for (tier, cable, length, speed), n in sorted(cables.items(), key=lambda kv: (_TIER_ORDER[kv[0][0]], kv[0][1:])):
        lines.append(BomLine("cable", f"{speed}G {cable}", f"{tier}, {_length(length)}", n))
    nic_ports = Counter(link.speed_g for link in plan.links if link.tier == TIER_HOST_LEAF)
    for speed, n in sorted(nic_ports.items()):
        lines.append(BomLine("nic-port", f"{speed}G", f"{len(plan.hosts)} hosts x {plan.rails} rails", n))
    optics = Counter((link.speed_g, link.tier) for link in plan.links if link.cable in OPTICAL)
    for (speed, tier), n in sorted(optics.items(), key=lambda kv: (_TIER_ORDER[kv[0][1]], kv[0][0])):
        lines.append(BomLine("transceiver", f"{speed}G optical end", f"{tier}, integrated in AOC", 2 * n))
    return tuple(lines)


def bom_csv(lines: tuple[BomLine, ...]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["category", "item", "detail", "quantity"])
    for line in lines:
        w.writerow([line.category, line.item, line.detail, line.quantity])
    return buf.getvalue()
