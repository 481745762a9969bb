"""Per-switch lossless buffer budget: headroom size summed over lossless PGs vs the model's pool."""

from __future__ import annotations

import dataclasses

from generator.intent.loader import load_intent
from generator.plan.budget import Budget, switch_budgets
from generator.plan.compile import compile_plan
from generator.plan.headroom import model_pools, port_headroom
from tests.conftest import example
from tests.unit.test_rules_common import check, intent


def plan_of(name):
    return compile_plan(load_intent(example(name)).intent)


def test_one_budget_per_switch_in_plan_order():
    plan = plan_of("medium")
    budgets = switch_budgets(plan)
    assert [b.switch for b in budgets] == [s.name for s in plan.switches]
    assert all(isinstance(b, Budget) for b in budgets)


def test_used_is_the_sum_of_headroom_size_over_lossless_ports():
    plan = plan_of("large")
    for b in switch_budgets(plan):
        ports = plan.ports_of(b.switch)
        assert b.used_bytes == sum(p.headroom.size for p in ports)
        assert b.lossless_pgs == len(ports)
        assert b.pool_bytes == model_pools(b.model)["ingress_lossless_pool_bytes"]
        assert b.percent == 100 * b.used_bytes / b.pool_bytes


def test_sums_size_not_xoff_plus_xon():
    # SN4700 400G ports are 8 SerDes lanes: size carries one extra port-MTU frame beyond xoff + xon,
    # and that is what the switch reserves per PG (sonic-swss buffer_pool_mellanox.lua)
    plan = plan_of("small")
    (b,) = switch_budgets(plan)
    h = port_headroom("spectrum-3", 400, 2, 9216)
    assert h.size > h.xoff + h.xon
    assert b.used_bytes == 8 * h.size
    assert (b.switch, b.role, b.model, b.lossless_pgs) == ("small-leaf-1", "leaf", "SN4700", 8)
    assert (b.largest_tier, b.largest_tier_cable_m) == ("host-leaf", 2)


def test_sn5600_by_hand():
    # one SN5600 leaf, 8 x 400G hosts at 5 m: the ROCE.md row, 250880 B each
    data = intent("small", **{"topology.switches.leaf.model": "SN5600", "topology.cables.host_leaf": 5})
    (b,) = switch_budgets(check(data).plan)
    assert b.used_bytes == 8 * 250880
    assert b.pool_bytes == 52161690
    assert round(b.percent, 3) == round(100 * 8 * 250880 / 52161690, 3)
    assert b.fits is True


def test_largest_tier_names_the_cable_to_shorten():
    plan = plan_of("large")
    by_role = {b.role: b for b in switch_budgets(plan)}
    assert (by_role["super-spine"].largest_tier, by_role["super-spine"].largest_tier_cable_m) == \
        ("spine-super-spine", 100)
    assert by_role["leaf"].largest_tier == "leaf-spine"


def test_lossy_fabric_reserves_no_headroom():
    plan = check(intent("large", **{"roce.mode": "lossy"})).plan
    for b in switch_budgets(plan):
        assert (b.used_bytes, b.lossless_pgs, b.largest_tier) == (0, 0, None)
        assert b.percent == 0.0


def test_every_pfc_priority_holds_its_own_headroom():
    plan = plan_of("small")
    two = dataclasses.replace(plan, qos=dataclasses.replace(plan.qos, pfc_priorities=(3, 4)))
    (one_b,), (two_b,) = switch_budgets(plan), switch_budgets(two)
    assert two_b.used_bytes == 2 * one_b.used_bytes
    assert two_b.lossless_pgs == 16


def test_model_without_a_sourced_pool_is_not_judged():
    plan = plan_of("small")
    sw = dataclasses.replace(plan.switches[0], model="SN9999-unsourced")
    odd = dataclasses.replace(plan, switches=(sw,))
    (b,) = switch_budgets(odd)
    assert b.pool_bytes is None and b.percent is None and b.fits is None
    assert b.used_bytes > 0


def test_over_the_pool_does_not_fit():
    data = intent("small", **{"topology.switches.leaf.model": "SN2700", "topology.nic_speed": "100G",
                              "topology.nodes": 16, "topology.cables.host_leaf": 100})
    (b,) = switch_budgets(check(data).plan)
    assert b.fits is False and b.percent > 100
