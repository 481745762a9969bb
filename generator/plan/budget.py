"""Lossless buffer budget per switch: reserved PFC headroom against the ingress lossless pool.

The figure summed is each lossless priority group's headroom `size`, not xoff + xon.
That is what the switch reserves: sonic-swss cfgmgr/buffer_pool_mellanox.lua adds
`size x (number of PGs using the profile)` to the occupied buffer, and only counts
xon + xoff - size separately when a shared headroom pool makes size smaller than
xon + xoff. fabricgen never builds a shared headroom pool, so size >= xoff + xon
(it also carries the 8-lane speed overhead) and size is the whole reservation.

Pure function of the plan; the FG2xx budget rules and any report read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.plan.headroom import model_pools
from generator.plan.model import FabricPlan, Port


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


def switch_budgets(plan: FabricPlan) -> list[Budget]:
    """One Budget per switch of the plan, in plan order."""
    # every lossless port holds one PG per PFC priority; the plan has one today
    pgs_per_port = max(1, len(plan.qos.pfc_priorities))
    pools: dict[str, int | None] = {}
    out = []
    for sw in plan.switches:
        used = 0
        pgs = 0
        by_tier: dict[str, int] = {}
        longest: dict[str, float] = {}
        ports: tuple[Port, ...] = plan.ports_of(sw.name)
        for p in ports:
            if not p.lossless or p.headroom is None:
                continue
            size = p.headroom.size * pgs_per_port
            used += size
            pgs += pgs_per_port
            by_tier[p.tier] = by_tier.get(p.tier, 0) + size
            longest[p.tier] = max(longest.get(p.tier, 0.0), p.cable_m)
        top = max(sorted(by_tier), key=lambda t: by_tier[t]) if by_tier else None
        out.append(Budget(switch=sw.name, role=sw.role, model=sw.model, lossless_pgs=pgs, used_bytes=used,
                          pool_bytes=_pool_bytes(sw.model, pools), largest_tier=top,
                          largest_tier_cable_m=longest.get(top) if top else None))
    return out
