"""Design advice (`fabricgen advise`, issue 38): what an architect would change in the intent,
each suggestion with its figures side by side and the intent change that applies it.

No second model: every figure of a suggestion comes from running the same loader, plan
compiler and analysis (`analyze`, which holds the BOM) on the intent with the change applied,
exactly as `--what-if` does; this module only chooses which changes to try and compares.
Suggestions are ranked by kind: a fix (the intent's cables do not reach: the BOM is wrong),
then a saving (fewer switches for the same fabric), then a trade-off (spines now or later).
Speed and breakout options follow as a table, not as advice.
"""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from generator.capacity.analyze import Analysis, analyze
from generator.capacity.growth import grows, role_counts
from generator.intent.model import Intent
from generator.plan.bom import bom_delta as plan_bom_delta
from generator.plan.bom import optics_type
from generator.plan.catalog import get_model
from generator.plan.compile import DAC_MAX_M, compile_plan
from generator.plan.layout import Runs, runs
from generator.plan.model import ROLE_LEAF, ROLE_SPINE, TIER_HOST_LEAF
from generator.plan.topology import CompileError, leaf_capacity

KIND_RANK = {"fix": 0, "saving": 1, "trade-off": 2}
LEAF_FILL_WARN = 0.60           # FG114: below this share of leaf host ports used at the build-out
UNIT_KINDS = ("rail-optimized", "three-tier")


@dataclass(frozen=True)
class Suggestion:
    id: str                     # stable: unit-size | cable-media | spines-later
    kind: str                   # fix | saving | trade-off
    title: str
    why: str
    rows: tuple[tuple[str, str, str], ...]      # (figure, now, with the change)
    change: tuple[tuple[str, Any], ...]         # (dotted intent key path, value; None removes the key)
    bom_delta: tuple[tuple[str, str, int, int], ...] = ()   # (category, item, now, with)
    rules: tuple[str, ...] = ()
    bom_scope: str = ""                 # which BOM bom_delta compares: "128 nodes"

    def yaml(self) -> str:
        """The change as YAML, nested by key path, ready to merge into the intent."""
        lines: list[str] = []
        done: list[str] = []
        for path, value in self.change:
            parts = path.split(".")
            common = 0
            while common < min(len(done), len(parts) - 1) and done[common] == parts[common]:
                common += 1
            for depth in range(common, len(parts) - 1):
                lines.append("  " * depth + parts[depth] + ":")
            lines.append("  " * (len(parts) - 1) + f"{parts[-1]}: {yaml_value(value)}"
                         + ("   # delete this key" if value is None else ""))
            done = parts[:-1]
        return "\n".join(lines) + "\n"

    def as_dict(self) -> dict:
        return {"id": self.id, "kind": self.kind, "title": self.title, "why": self.why,
                "figures": [{"figure": f, "now": a, "with_change": b} for f, a, b in self.rows],
                "change": {path: value for path, value in self.change}, "change_yaml": self.yaml(),
                "bom_delta": {"scope": self.bom_scope,
                              "lines": [{"category": c, "item": i, "now": a, "with_change": b}
                                        for c, i, a, b in self.bom_delta]},
                "rules": list(self.rules)}


@dataclass(frozen=True)
class SpeedOption:
    nic_speed_g: int
    breakout: str
    switches_build_out: int | None
    bisection_tbps: float | None
    allreduce_ms: float | None
    error: str | None = None


@dataclass(frozen=True)
class Advice:
    fabric: str
    runs: Runs
    suggestions: tuple[Suggestion, ...]
    speeds: tuple[SpeedOption, ...] = field(default=())

    def as_dict(self) -> dict:
        lay = self.runs.layout
        return {"schema": "fabricgen.advise/1", "fabric": self.fabric,
                "layout": {"stated_defaults": self.runs.stated, **lay.model_dump()},
                "runs": {"host_leaf_max_m": self.runs.host_leaf_max, "leaf_spine_max_m": self.runs.leaf_spine_max,
                         "host_leaf_within_dac": self.runs.host_leaf_within(DAC_MAX_M),
                         "host_leaf_total": len(self.runs.host_leaf)},
                "suggestions": [s.as_dict() for s in self.suggestions],
                "speed_options": [{"nic_speed_g": o.nic_speed_g, "breakout": o.breakout,
                                   "switches_build_out": o.switches_build_out, "bisection_tbps": o.bisection_tbps,
                                   "allreduce_ms": o.allreduce_ms, "error": o.error} for o in self.speeds]}


def yaml_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    return str(value)


def apply_change(data: dict, change: tuple[tuple[str, Any], ...]) -> dict:
    """A copy of the intent's DATA with CHANGE applied (None deletes the key)."""
    out = copy.deepcopy(data)
    for path, value in change:
        parts = path.split(".")
        node = out
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        if value is None:
            node.pop(parts[-1], None)
        else:
            node[parts[-1]] = value
    return out


def _variant(data: dict, change: tuple[tuple[str, Any], ...]) -> Analysis | None:
    """The analysis of the intent with CHANGE applied; None when the loader or compiler refuses it."""
    try:
        intent = Intent.model_validate(apply_change(data, change))
        return analyze(intent, with_build_out=True)
    except (ValidationError, CompileError):
        return None


def _full(a: Analysis) -> Analysis:
    return a.build_out if a.build_out is not None else a


def _count(a: Analysis, role: str | None = None) -> int:
    return sum(n for (r, _), n in role_counts(a).items() if role is None or r == role)


def leaf_fill(a: Analysis) -> float:
    """Share of the leaves' host ports used (ports the ratio leaves for hosts, at the NIC speed)."""
    t = a.intent.topology
    tiers = [s for s in a.figures.switches if s.role == ROLE_LEAF]
    host_ports = sum(leaf_capacity(s.ports_total // s.count, t.oversubscription) * s.count for s in tiers)
    used = sum(1 for lk in a.plan.links if lk.tier == TIER_HOST_LEAF)
    return used / host_ports if host_ports else 1.0


def leaf_host_ports(a: Analysis) -> int:
    """Host ports of one leaf at the NIC speed and the intent's ratio: the unit size that fills it."""
    tier = next(s for s in a.figures.switches if s.role == ROLE_LEAF)
    return leaf_capacity(tier.ports_total // tier.count, a.intent.topology.oversubscription)


def bom_delta(now: Analysis, then: Analysis) -> tuple[tuple[str, str, int, int], ...]:
    """(category, item, now, with) per BOM item whose quantity differs (plan/bom.py's bom_delta)."""
    return plan_bom_delta(now.bom, then.bom)


def _pct(x: float) -> str:
    return f"{x * 100:.0f} %"


def unit_size(a: Analysis, data: dict) -> Suggestion | None:
    t = a.intent.topology
    if t.kind not in UNIT_KINDS:
        return None
    fill = leaf_host_ports(a)
    target = min(fill, t.build_out_nodes)
    if target == t.nodes_per_unit:
        return None
    change = (("topology.nodes_per_unit", target),)
    b = _variant(data, change)
    if b is None:
        return None
    fa, fb = _full(a), _full(b)
    fewer = _count(fb) < _count(fa)
    fuller = _count(fb) == _count(fa) and leaf_fill(fb) > leaf_fill(fa)
    split = t.nodes_per_unit > fill
    if not (fewer or fuller or split):
        return None
    n = t.build_out_nodes
    rows = (
        ("nodes per unit", str(t.nodes_per_unit), str(target)),
        (f"leaf switches at {n} nodes", str(_count(fa, ROLE_LEAF)), str(_count(fb, ROLE_LEAF))),
        (f"spine switches at {n} nodes", str(_count(fa, ROLE_SPINE)), str(_count(fb, ROLE_SPINE))),
        (f"switches total at {n} nodes", str(_count(fa)), str(_count(fb))),
        (f"leaf host ports used at {n} nodes", _pct(leaf_fill(fa)), _pct(leaf_fill(fb))),
        (f"switches now ({t.nodes} nodes)", str(_count(a)), str(_count(b))),
    )
    leaf_model = next(s.model for s in a.figures.switches if s.role == ROLE_LEAF)
    why = (f"a {leaf_model} leaf takes {fill} servers per rail at {t.nic_speed}G and {t.oversubscription[0]}:{t.oversubscription[1]}; "
           + (f"units of {t.nodes_per_unit} split each rail over several leaves" if split else
              f"units of {t.nodes_per_unit} leave {_pct(1 - leaf_fill(fa))} of its host ports empty at {n} nodes"))
    rules = ("FG116",) if split else ("FG114",) if leaf_fill(fa) < LEAF_FILL_WARN else ()
    return Suggestion("unit-size", "saving", f"units of {target} nodes: one leaf per rail, filled", why, rows,
                      change, bom_delta(fa, fb), rules, bom_scope=f"{n} nodes")


def cable_media(a: Analysis, data: dict, r: Runs) -> Suggestion | None:
    t = a.intent.topology
    change: list[tuple[str, Any]] = []
    wants = [("host_leaf", r.host_leaf_max)]
    if r.leaf_spine:
        wants.append(("leaf_spine", r.leaf_spine_max))
    for tier, metres in wants:
        have = getattr(t.cables, tier)
        # a longer run than the intent's cable never reaches; a shorter one matters when a cheaper medium does
        if metres and (metres > have or media_class(metres) != media_class(have)):
            change.append((f"topology.cables.{tier}", metres))
    if not change:
        return None
    b = _variant(data, tuple(change))
    if b is None:
        return None
    fa, fb = _full(a), _full(b)

    def medium(x: Analysis, tier: str) -> str:
        types = sorted({lk.cable for lk in x.plan.links if lk.tier == tier})
        return "/".join(types) or "-"

    too_short = any(metres > getattr(t.cables, path.rsplit(".", 1)[1]) for path, metres in change)
    rows = []
    for path, metres in change:
        tier = path.rsplit(".", 1)[1]
        plan_tier = tier.replace("_", "-")
        rows.append((f"{plan_tier} cable length", f"{getattr(t.cables, tier):g} m", f"{metres:g} m (longest run)"))
        rows.append((f"{plan_tier} medium", medium(a, plan_tier), medium(b, plan_tier)))
    rows.append(("host-leaf runs within DAC reach", "",
                 f"{r.host_leaf_within(DAC_MAX_M)} of {len(r.host_leaf)} servers (<= {DAC_MAX_M:g} m)"))
    why = ("the layout's runs are longer than the intent's cables: passive copper at 100G-PAM4 reaches "
           f"{DAC_MAX_M:g} m (NVIDIA LinkX; IEEE 802.3ck specifies 2 m), so the BOM orders parts that do not reach"
           if too_short else "the layout's runs are shorter than the intent's cables: a cheaper medium reaches")
    return Suggestion("cable-media", "fix" if too_short else "saving", "cable lengths and media from the rack layout",
                      why, tuple(rows), tuple(change), bom_delta(fa, fb), ("FG115",) if too_short else (),
                      bom_scope=f"{t.build_out_nodes} nodes")


def media_class(metres: float) -> str:
    """What a run of METRES is built of, by the plan's and BOM's reach figures."""
    return "DAC" if metres <= DAC_MAX_M else optics_type(metres)


def _spines_at(intent: Intent, nodes: int) -> int:
    topo = intent.topology.model_copy(update={"nodes": nodes, "build_out": None})
    plan = compile_plan(intent.model_copy(update={"topology": topo}))
    return sum(sw.role == ROLE_SPINE for sw in plan.switches)


def spines_later(a: Analysis, data: dict) -> Suggestion | None:
    """Spines for the build-out now (no cable ever moves) against spines for today (fewer
    switches now, a re-cabling at the node count where the spine count first grows)."""
    t = a.intent.topology
    if not grows(a.intent) or t.kind not in ("leaf-spine", "rail-optimized"):
        return None
    change = (("topology.build_out", None),)
    b = _variant(data, change)
    if b is None:
        return None
    now_spines, later_spines = _count(a, ROLE_SPINE), _count(b, ROLE_SPINE)
    if later_spines >= now_spines:
        return None
    try:
        lo, hi = t.nodes + 1, t.build_out_nodes      # first node count with more spines than today
        while lo < hi:
            mid = (lo + hi) // 2
            if _spines_at(b.intent, mid) > later_spines:
                hi = mid
            else:
                lo = mid
                lo += 1
        from generator.plan.growth import next_node_cost

        before = b.intent.model_copy(update={"topology": b.intent.topology.model_copy(update={"nodes": lo - 1})})
        moved = next_node_cost(before, compile_plan(before)).moved_links
    except CompileError:
        return None
    spine_model = next(s.model for s in a.figures.switches if s.role == ROLE_SPINE)
    rows = (
        (f"spines bought now ({t.nodes} nodes)", str(now_spines), str(later_spines)),
        ("switches bought now", str(_count(a)), str(_count(b))),
        ("spines at the build-out", str(_count(_full(a), ROLE_SPINE)), str(_count(_full(a), ROLE_SPINE))),
        ("first re-cabling", "never (up to the build-out)", f"at node {lo}: {moved} switch-to-switch cables move"),
    )
    why = (f"{now_spines - later_spines} {spine_model} spines are bought before they carry traffic; without them, "
           f"growing past {lo - 1} nodes re-deals every leaf's uplinks (an outage and floor work)")
    return Suggestion("spines-later", "trade-off", f"buy {later_spines} spines now, the rest at node {lo}", why, rows,
                      change, bom_delta(a, b), ("FG113",), bom_scope=f"{t.nodes} nodes, bought now")


def speed_options(a: Analysis, data: dict) -> tuple[SpeedOption, ...]:
    model = get_model(a.intent.topology.switches.leaf.model)
    if model is None:
        return ()
    out = []
    for speed in model.speeds():
        if speed < 100:
            continue
        b = _variant(data, (("topology.nic_speed", f"{speed}G"),))
        if b is None:
            out.append(SpeedOption(speed, "-", None, None, None, "does not build"))
            continue
        splits = Counter(p.breakout or "1x" for p in b.plan.ports if p.tier == TIER_HOST_LEAF)
        breakout = splits.most_common(1)[0][0] if splits else "-"
        fb = _full(b)
        out.append(SpeedOption(speed, breakout, _count(fb), round(fb.bisection_gbps / 1000, 1),
                               round(b.allreduce.chosen.time_s * 1000, 2)))
    return tuple(out)


def advise(a: Analysis, data: dict, with_speeds: bool = True) -> Advice:
    """Suggestions for the analysed intent A; DATA is its parsed text (what a change edits).
    WITH_SPEEDS: also the NIC speed options (one more analysis per speed the leaf runs)."""
    r = runs(a.intent, _full(a).plan)
    found = [s for s in (cable_media(a, data, r), unit_size(a, data), spines_later(a, data)) if s is not None]
    found.sort(key=lambda s: KIND_RANK[s.kind])
    return Advice(a.intent.fabric.name, r, tuple(found), speed_options(a, data) if with_speeds else ())
