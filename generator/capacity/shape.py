"""The stable JSON shape of `fabricgen capacity --format json` (documented in
command.py and docs/capacity.md). Add keys; never rename or remove one."""

from __future__ import annotations

from typing import Any

from generator.capacity.analyze import Analysis
from generator.capacity.growth import TOP_TIER, top_tier_note
from generator.capacity.naive import WHY
from generator.capacity.whatif import Variant
from generator.intent.units import format_ratio

SCHEMA = "fabricgen.capacity/1"


def _r(x: float | None, digits: int = 6) -> float | None:
    # rounded so the JSON is stable across platforms' last-bit float differences
    return None if x is None else round(float(x), digits)


def capacity_json(a: Analysis, what_ifs: list[list[Variant]] | None = None, plots: list[str] | None = None) -> dict[str, Any]:
    f, ar = a.figures, a.allreduce
    chosen = ar.chosen
    naive = a.naive
    return {
        "schema": SCHEMA,
        "fabric": a.plan.fabric,
        "kind": a.plan.kind,
        "gpu": {"model": a.gpu.name, "assumed": a.gpu_assumed, "nvlink_GBps": a.gpu.nvlink_gbps,
                "nvls": a.gpu.nvls},
        "nodes": f.nodes,
        "gpus": f.gpus,
        "gpus_per_node": f.gpus_per_node,
        "rails": f.rails,
        "nic_speed_gbps": f.nic_speed_g,
        "injection": {"per_gpu_gbps": _r(f.per_gpu_gbps), "per_node_gbps": f.per_node_gbps},
        "switches": [s.as_dict() for s in f.switches],
        "oversubscription": {"intent": format_ratio(a.intent.topology.oversubscription),
                             "per_tier": {k: _r(v) for k, v in f.oversubscription.items()}},
        "hops": {"min": f.hops_min, "max": f.hops_max},
        "bisection_tbps": _r(a.bisection_gbps / 1000),
        "allreduce": {
            "message_bytes": ar.message_bytes,
            "message_source": a.message_source,
            "algorithm": chosen.algorithm,
            "time_s": _r(chosen.time_s, 9),
            "algbw_GBps": _r(chosen.algbw_GBps),
            "busbw_GBps": _r(chosen.busbw_GBps),
            "node_injection_GBps": _r(ar.node_injection_GBps),
            "nic_efficiency": ar.efficiency,
            "algorithms": [{k: (_r(v, 9) if isinstance(v, float) else v) for k, v in e.as_dict().items()}
                           for e in ar.estimates],
        },
        "step": None if a.step is None else _round_tree(a.step.as_dict()),
        "naive": {"time_s": _r(naive.time_s, 9), "bisection_tbps": _r(naive.bisection_gbps / 1000),
                  "efficiency": naive.efficiency, "guide_mode": a.naive_guide,
                  "guide_example": naive.guide_example,
                  "ratio": _r(chosen.time_s / naive.time_s) if naive.time_s else None,
                  "worked": naive.worked(), "why_wrong": WHY},
        "bom": [b.as_dict() for b in a.bom],
        # only with topology.build_out != nodes, so the JSON of every other intent keeps its bytes
        **({} if a.build_out is None else {"build_out": build_out_json(a)}),
        "what_if": [_round_tree(v.as_dict()) for rows in (what_ifs or []) for v in rows],
        "plots": list(plots or []),
    }


def _phase(a: Analysis) -> dict[str, Any]:
    f, chosen = a.figures, a.allreduce.chosen
    return {
        "nodes": f.nodes,
        "gpus": f.gpus,
        "switch_count": len(a.plan.switches),
        "switches": [s.as_dict() for s in f.switches],
        "bom": [b.as_dict() for b in a.bom],
        "bisection_tbps": _r(a.bisection_gbps / 1000),
        "allreduce": {"algorithm": chosen.algorithm, "time_s": _r(chosen.time_s, 9),
                      "algbw_GBps": _r(chosen.algbw_GBps), "busbw_GBps": _r(chosen.busbw_GBps)},
        "step": None if a.step is None else _round_tree(a.step.as_dict()),
    }


def build_out_json(a: Analysis) -> dict[str, Any]:
    """The `build_out` section: the same figures on the installed and the build-out plan."""
    full = a.build_out
    assert full is not None
    return {"nodes": full.figures.nodes, "installed_nodes": a.figures.nodes,
            "top_tier": TOP_TIER.get(a.plan.kind), "note": top_tier_note(a),
            "installed": _phase(a), "full": _phase(full)}


def _round_tree(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out[k] = _round_tree(v)
        elif isinstance(v, float):
            out[k] = _r(v, 9)
        else:
            out[k] = v
    return out
