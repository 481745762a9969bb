"""Cable runs from the data hall (`layout:` in the intent, or its stated defaults): how far
each NIC is from its leaf and each leaf from the spines, for `fabricgen advise` and FG115.

The placement follows the plan, not a second topology: hosts are grouped by the plan's unit
(rail-optimized and three-tier) or by the leaves they are cabled to (leaf-spine,
single-switch); each group's servers fill racks of `servers_per_rack` in node order, rows of
`racks_per_row`, the group starting a row of its own, as a scalable unit does on a SuperPOD
floor. The group's network rack (all of its leaves) takes one slot in its first row, in the
middle or at the end; the rows behind it keep that slot empty, so racks line up. The spines
stand in a row of their own after the last server row, in its middle.

A run is measured as cables are laid: along the row (rack widths), across rows (row pitch),
plus the rise into and out of the overhead tray at both ends; it is then rounded up to the
next orderable length (LinkX DACs come in 0.5 m steps to 3 m, ACCs to 5 m, fibres in the
usual 1/2/3/5/7/10/15/20/30/50 m patch lengths and above).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.intent.model import Intent, Layout
from generator.plan.model import ROLE_LEAF, FabricPlan

STOCK_M = (0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 7, 10, 15, 20, 25, 30, 40, 50, 70, 100, 150, 200, 300, 500, 1000, 2000)


def stock_length(metres: float) -> float:
    """The shortest orderable length at least METRES long."""
    for length in STOCK_M:
        if metres <= length + 1e-9:
            return float(length)
    return float(math.ceil(metres / 1000) * 1000)


@dataclass(frozen=True, slots=True)
class Runs:
    layout: Layout
    stated: bool                        # True: the intent has no layout:, these are the defaults
    host_leaf: tuple[float, ...]        # one per server (all of a server's rails share its rack)
    leaf_spine: tuple[float, ...]       # one per unit's network rack; () without spines

    @property
    def host_leaf_max(self) -> float:
        return max(self.host_leaf, default=0.0)

    @property
    def leaf_spine_max(self) -> float:
        return max(self.leaf_spine, default=0.0)

    def host_leaf_within(self, metres: float) -> int:
        return sum(r <= metres for r in self.host_leaf)


def _groups(plan: FabricPlan) -> list[list[int]]:
    """Host indexes per group, groups in order of their first host."""
    groups: dict[object, list[int]] = {}
    for host in plan.hosts:
        key = host.unit if host.unit is not None else tuple(sorted({n.switch for n in host.nics}))
        groups.setdefault(key, []).append(host.index)
    return sorted(groups.values(), key=lambda g: g[0])


def runs(intent: Intent, plan: FabricPlan) -> Runs:
    lay = intent.layout or Layout()
    has_spines = any(sw.role != ROLE_LEAF for sw in plan.switches)
    host_runs: list[float] = []
    net_racks: list[tuple[int, float]] = []     # (row, position in rack widths) of each group's network rack
    row0 = 0
    for hosts in _groups(plan):
        racks = math.ceil(len(hosts) / lay.servers_per_rack)
        rows = math.ceil(racks / lay.racks_per_row)
        first_row = min(racks, lay.racks_per_row)
        slot = first_row // 2 if lay.leaf_rack == "middle-of-row" else first_row
        net_racks.append((row0, slot))
        for k in range(len(hosts)):
            rack = k // lay.servers_per_rack
            row, col = divmod(rack, lay.racks_per_row)
            pos = col if col < slot else col + 1
            host_runs.append(abs(pos - slot) * lay.rack_width_m + row * lay.row_pitch_m + lay.rise_m)
        row0 += rows
    spine_runs: list[float] = []
    if has_spines:
        spine_pos = lay.racks_per_row / 2
        spine_runs = [(row0 - row) * lay.row_pitch_m + abs(slot - spine_pos) * lay.rack_width_m + lay.rise_m
                      for row, slot in net_racks]
    return Runs(lay, intent.layout is None, tuple(stock_length(r) for r in host_runs),
                tuple(stock_length(r) for r in spine_runs))
