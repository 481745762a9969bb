"""Closed-form bisection equals networkx max-flow min-cut, on small fabrics of every kind.

Tiny fabrics use SN2201 at 100G/50G (4 ports, or 8 with 2x breakout) so a handful of
nodes already needs several leaves, spines, pods or groups; up to 10 hosts every
balanced split is tried, so the max-flow side is the true bisection.
"""

import pytest

from generator.capacity.bisection import closed_form_gbps, maxflow_bisection_gbps
from generator.intent.model import Intent
from generator.plan.compile import compile_plan


def tiny(kind, nodes, rails=1, speed="100G", ratio="1:1", per_unit=2, groups=2, model="SN2201"):
    return Intent.model_validate({
        "fabric": {"name": "t"},
        "topology": {"kind": kind, "nodes": nodes, "rails": rails, "nic_speed": speed, "oversubscription": ratio,
                     "nodes_per_unit": per_unit, "groups": groups,
                     "switches": {t: {"model": model} for t in ("leaf", "spine", "super_spine")}}})


CASES = [
    ("single-switch", dict(nodes=4)),
    ("single-switch", dict(nodes=3)),
    ("leaf-spine", dict(nodes=4)),
    ("leaf-spine", dict(nodes=8, speed="50G")),
    ("leaf-spine", dict(nodes=6)),
    ("rail-optimized", dict(nodes=4, rails=2)),
    ("rail-optimized", dict(nodes=4, rails=2, ratio="2:1")),
    ("rail-optimized", dict(nodes=8, rails=2, speed="50G", ratio="3:1")),
    ("three-tier", dict(nodes=4)),
    ("three-tier", dict(nodes=8, rails=2, speed="50G", per_unit=4)),
    ("dragonfly-plus", dict(nodes=4)),
    ("dragonfly-plus", dict(nodes=8, speed="50G", groups=4)),
    ("dragonfly-plus", dict(nodes=8, rails=2, speed="50G")),
    ("dragonfly-plus", dict(nodes=8, speed="50G", ratio="3:1")),
]


@pytest.mark.parametrize(("kind", "kw"), CASES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(CASES)])
def test_closed_form_equals_max_flow(kind, kw):
    plan = compile_plan(tiny(kind, **kw))
    assert closed_form_gbps(plan) == pytest.approx(maxflow_bisection_gbps(plan))


def test_every_kind_is_covered():
    from generator.intent.model import TOPOLOGY_KINDS

    assert {k for k, _ in CASES} == set(TOPOLOGY_KINDS)


def test_oversubscription_halves_the_bisection():
    full = compile_plan(tiny("rail-optimized", 4, rails=2))
    half = compile_plan(tiny("rail-optimized", 4, rails=2, ratio="2:1"))
    assert closed_form_gbps(half) == closed_form_gbps(full) / 2


@pytest.mark.parametrize(("name", "tbps"), [("small", 1.6), ("medium", 25.6), ("large", 102.4)])
def test_examples_match_max_flow_on_the_unit_split(name, tbps):
    from generator.intent.loader import load_intent

    plan = compile_plan(load_intent(f"inventories/{name}/fabric.yaml").intent)
    assert closed_form_gbps(plan) / 1000 == pytest.approx(tbps)
    assert maxflow_bisection_gbps(plan) / 1000 == pytest.approx(tbps)
