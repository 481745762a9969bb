"""Lossless buffer budget per switch: reserved PFC headroom against the ingress lossless pool.

The figure summed is each lossless priority group's headroom `size`, not xoff + xon.
That is what the switch reserves: sonic-swss cfgmgr/buffer_pool_mellanox.lua adds
`size x (number of PGs using the profile)` to the occupied buffer, and only counts
xon + xoff - size separately when a shared headroom pool makes size smaller than
xon + xoff. fabricgen's Cumulus render never builds a shared headroom pool, so size >=
xoff + xon (it also carries the 8-lane speed overhead) and size is the whole reservation.

SONiC switches reserve what their SKU's pg_profile_lookup.ini row says for the port's cable
rounded up to the next row (what the render writes, generator/plan/sonic_catalog.py), against
the ingress_lossless_pool of the SKU's t0 (leaf) / t1 (spine) template. On a SKU with a
shared headroom pool a row's size is only its xon: the xoff parts share the pool's xoff,
which NVIDIA over-subscribes by design, so only the sizes are summed there too.

Pure function of the plan; the FG2xx budget rules and any report read it.
"""

from __future__ import annotations

import operator
import weakref
from dataclasses import dataclass
from itertools import groupby

from generator.plan.headroom import model_pools
from generator.plan.model import FabricPlan, Port, Switch
from generator.plan.sonic_catalog import SkuBuffers, SonicDataError, sku_buffers, switch_hwsku

# what a port's budget share depends on (Port is a tuple row)
_KIND = operator.itemgetter(*map(Port._fields.index, ("tier", "speed_g", "cable_m", "lossless", "headroom")))


@dataclass(frozen=True, slots=True)
class Budget:
    switch: str
    role: str
    model: str
    lossless_pgs: int                   # lossless priority groups holding headroom
    used_bytes: int                     # sum of their headroom size
    pool_bytes: int | None              # ingress lossless pool; None when the model has no sourced figure
    largest_tier: str | None            # link tier contributing the most headroom (what to shorten)
    largest_tier_cable_m: float | None  # longest cable of that tier on this switch

    @property
    def percent(self) -> float | None:
        if not self.pool_bytes:
            return None
        return 100.0 * self.used_bytes / self.pool_bytes

    @property
    def fits(self) -> bool | None:
        return None if self.pool_bytes is None else self.used_bytes <= self.pool_bytes


def _pool_bytes(model: str, cache: dict[str, int | None]) -> int | None:
    if model not in cache:
        try:
            cache[model] = int(model_pools(model)["ingress_lossless_pool_bytes"])
        except ValueError:
            # no sourced pool size: judging against a guess would be worse than not judging
            cache[model] = None
    return cache[model]


def _sonic_sku(plan: FabricPlan, sw: Switch) -> SkuBuffers | None:
    if plan.switch_os != "sonic":
        return None
    hwsku = switch_hwsku(plan, sw)
    try:
        return sku_buffers(hwsku) if hwsku is not None else None
    except SonicDataError:
        return None             # FG252/FG254 report the missing data


# the last plan's budgets: FG220 and FG221 both read them (issue 14: ~0.15 s each at 98k GPUs);
# weakly, so a plan that is gone takes its budgets along
_last: tuple[weakref.ref, tuple[Budget, ...]] | None = None


def switch_budgets(plan: FabricPlan) -> list[Budget]:
    """One Budget per switch of the plan, in plan order."""
    global _last
    if _last is None or _last[0]() is not plan:
        _last = (weakref.ref(plan), tuple(_switch_budgets(plan)))
    return list(_last[1])


def _switch_budgets(plan: FabricPlan) -> list[Budget]:
    # every lossless port holds one PG per PFC priority; the plan has one today
    pgs_per_port = max(1, len(plan.qos.pfc_priorities))
    pools: dict[str, int | None] = {}
    out = []
    for sw in plan.switches:
        sku = _sonic_sku(plan, sw)
        used = 0
        pgs = 0
        by_tier: dict[str, int] = {}
        longest: dict[str, float] = {}
        # ports alike in what the sum reads counted first: a switch has ~128 ports of a few kinds,
        # in runs (host ports, then uplinks), compared in C (issue 14: ~590k ports at 98k GPUs);
        # integer sums, so the order is free
        kinds: dict[tuple, int] = {}
        for kind, run in groupby(map(_KIND, plan.ports_of(sw.name))):
            kinds[kind] = kinds.get(kind, 0) + len(list(run))
        for (tier, speed_g, cable_m, lossless, room), count in kinds.items():
            if not lossless or room is None:
                continue
            # SONiC: the table row the render uses (a cable with no row is FG254's; the formula stands in)
            row = sku.row(speed_g, cable_m) if sku is not None else None
            size = (row.size if row is not None else room.size) * pgs_per_port * count
            used += size
            pgs += pgs_per_port * count
            by_tier[tier] = by_tier.get(tier, 0) + size
            longest[tier] = max(longest.get(tier, 0.0), cable_m)
        top = max(sorted(by_tier), key=lambda t: by_tier[t]) if by_tier else None
        out.append(Budget(switch=sw.name, role=sw.role, model=sw.model, lossless_pgs=pgs, used_bytes=used,
                          pool_bytes=(sku.pools(sw.role)["ingress_lossless_pool"] if sku is not None
                                      else _pool_bytes(sw.model, pools)), largest_tier=top,
                          largest_tier_cable_m=longest.get(top) if top else None))
    return out
