"""The rollout plan (generator/deploy/rollout_plan.py), pure: a real fabric plan, the statuses backup +
diff would leave, no switch and no SSH. Expected waves are worked out by hand from the intent: four
rail leaves in two units (su1, su2) x two rails (r0, r1) and one spine pair."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.checks.runner import run_checks
from generator.common.selection import matching
from generator.deploy.report import FAILED, UNCHANGED, WOULD_CHANGE, DeviceResult
from generator.deploy.rollout_plan import day0_refusals, plan_rollout
from generator.deploy.waves import natural_key
from generator.intent.loader import load_intent

S1R0, S1R1, S2R0, S2R1 = "w-leaf-su1-r0", "w-leaf-su1-r1", "w-leaf-su2-r0", "w-leaf-su2-r1"


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    path: Path = tmp_path_factory.mktemp("rollout") / "fabric.yaml"
    path.write_text("fabric: {name: w}\ntopology:\n  kind: rail-optimized\n  nodes: 4\n  rails: 2\n"
                    "  nodes_per_unit: 2\n")
    result = run_checks(load_intent(path))
    assert result.plan is not None, [f.one_line() for f in result.errors]
    return result.plan


def selected(plan, limit=None) -> list[str]:
    # as run_deploy selects: --limit, then natural order
    return sorted(matching((sw.name for sw in plan.switches), limit), key=natural_key)


def results(names, **status) -> dict[str, DeviceResult]:
    return {n: DeviceResult(n, status=status.get(n.replace("-", "_"), WOULD_CHANGE)) for n in names}


def waves(rollout) -> list[tuple[str, tuple[str, ...]]]:
    return [(w.label, w.devices) for w in rollout.waves]


def test_rail_safe_waves_one_rail_then_one_spine_of_the_pair_at_a_time(plan):
    names = selected(plan)
    rollout = plan_rollout(plan, names, results(names), 8)
    assert waves(rollout) == [("canary", (S1R0,)), ("leaves rail 0", (S2R0,)), ("leaves rail 1", (S1R1, S2R1)),
                              ("spines half 1", ("w-spine-1",)), ("spines half 2", ("w-spine-2",))]
    assert [w.index for w in rollout.waves] == [1, 2, 3, 4, 5]
    assert (rollout.failed, rollout.unchanged(len(names))) == ([], 0)


def test_concurrency_bounds_a_rail_wave(plan):
    names = selected(plan)
    assert waves(plan_rollout(plan, names, results(names), 1))[2:4] == [("leaves rail 1", (S1R1,)),
                                                                         ("leaves rail 1", (S2R1,))]


def test_the_canary_is_a_leaf_that_really_changes(plan):
    names = selected(plan)
    unchanged = {n.replace("-", "_"): UNCHANGED for n in names if n != S2R1}
    rollout = plan_rollout(plan, names, results(names, **unchanged), 8)
    assert rollout.waves[0].label == "canary" and rollout.waves[0].devices == (S2R1,)
    assert waves(rollout)[1:3] == [("leaves rail 0", (S1R0, S2R0)), ("leaves rail 1", (S1R1,))]
    assert (rollout.changed, rollout.unchanged(len(names))) == ([S2R1], 5)


def test_limit_plans_only_the_selected_switches(plan):
    names = selected(plan, "*-r1")
    assert names == [S1R1, S2R1]
    rollout = plan_rollout(plan, names, results(names), 8)
    assert waves(rollout) == [("canary", (S1R1,)), ("leaves rail 1", (S2R1,))]


def test_a_refused_switch_is_failed_before_any_push(plan):
    names = selected(plan)
    res = results(names)
    res["w-spine-2"] = DeviceResult("w-spine-2", status=FAILED, message="refused before apply: eth0", refused=True)
    rollout = plan_rollout(plan, names, res, 8)
    assert rollout.failed == ["w-spine-2"]
    assert "w-spine-2" not in rollout.changed and len(rollout.changed) == 5
    assert rollout.unchanged(len(names)) == 0


def test_day0_refuses_on_traffic_and_on_a_switch_it_could_not_read(plan):
    names = selected(plan)
    res = results(names)
    res["w-spine-1"] = DeviceResult("w-spine-1", status=FAILED, message="cannot connect: timed out")
    traffic = {n: [] for n in names if n not in ("w-spine-1", S2R0)} | {S2R0: ["FRR BGP: 2 peers established"]}
    assert day0_refusals(names, traffic, res) == [(S2R0, ["FRR BGP: 2 peers established"]),
                                                  ("w-spine-1", ["not read (cannot connect: timed out)"])]
    rollout = plan_rollout(plan, names, results(names), 8, day0=True)
    assert waves(rollout) == [("canary", (S1R0,)), ("day 0", (S2R0, S1R1, S2R1, "w-spine-1", "w-spine-2"))]
