"""Wave planning: what may be down together, checked on real plans and synthetic sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.checks.runner import run_checks
from generator.deploy.waves import WaveDevice, natural_key, plan_waves
from generator.intent.loader import load_intent


def plan_of(tmp_path: Path, kind: str, nodes: int, rails: int, extra: str = "") -> list[WaveDevice]:
    path = tmp_path / "fabric.yaml"
    path.write_text(f"fabric: {{name: w}}\ntopology:\n  kind: {kind}\n  nodes: {nodes}\n  rails: {rails}\n{extra}")
    result = run_checks(load_intent(path))
    assert result.plan is not None, [f.one_line() for f in result.errors]
    return [WaveDevice(s.name, s.role, s.rail, s.unit, s.group) for s in result.plan.switches]


def check_invariants(devices: list[WaveDevice], concurrency: int) -> list:
    waves = plan_waves(devices, concurrency)
    by_name = {d.name: d for d in devices}
    seen = [n for w in waves for n in w.devices]
    assert sorted(seen) == sorted(by_name), "every device exactly once"
    assert [w.index for w in waves] == list(range(1, len(waves) + 1))
    for wave in waves:
        members = [by_name[n] for n in wave.devices]
        assert 1 <= len(members) <= concurrency
        assert len({d.role for d in members}) == 1, wave
        if members[0].role == "leaf":
            assert len({d.rail for d in members}) == 1, f"more than one rail in {wave}"
        else:
            sets: dict[tuple, list[str]] = {}
            for d in devices:
                if d.role == members[0].role:
                    sets.setdefault((d.unit, d.group), []).append(d.name)
            for key, names in sets.items():
                inside = [n for n in wave.devices if n in names]
                if len(names) > 1:
                    assert len(inside) <= len(names) // 2, f"more than half of spine set {key} in {wave}"
                ordered = sorted(names, key=natural_key)
                for a, b in zip(ordered[0::2], ordered[1::2], strict=False):
                    assert not (a in wave.devices and b in wave.devices), f"pair {a}/{b} together in {wave}"
    roles = [by_name[w.devices[0]].role for w in waves]
    order = {"leaf": 0, "spine": 1, "super-spine": 2}
    assert roles == sorted(roles, key=order.__getitem__), "leaves, then spines, then super-spines"
    if any(d.role == "leaf" for d in devices):
        assert waves[0].label == "canary" and len(waves[0].devices) == 1
        assert by_name[waves[0].devices[0]].role == "leaf"
    return waves


@pytest.mark.parametrize("kind,nodes,rails,extra", [
    ("rail-optimized", 4, 2, ""),
    ("rail-optimized", 256, 8, ""),
    ("three-tier", 128, 2, "  nodes_per_unit: 32\n"),
    ("dragonfly-plus", 32, 4, "  groups: 2\n"),
    ("leaf-spine", 64, 2, ""),
    ("single-switch", 4, 2, ""),
])
@pytest.mark.parametrize("concurrency", [1, 3, 32])
def test_real_plans_keep_the_invariants(tmp_path, kind, nodes, rails, extra, concurrency):
    check_invariants(plan_of(tmp_path, kind, nodes, rails, extra), concurrency)


def test_small_rail_optimized_order(tmp_path):
    waves = plan_waves(plan_of(tmp_path, "rail-optimized", 64, 2), 32)
    assert [(w.label, w.devices) for w in waves] == [
        ("canary", ("w-leaf-su1-r0",)),
        ("leaves rail 0", ("w-leaf-su2-r0",)),
        ("leaves rail 1", ("w-leaf-su1-r1", "w-leaf-su2-r1")),
        ("spines half 1", ("w-spine-1",)),
        ("spines half 2", ("w-spine-2",)),
    ]


def test_canary_prefers_a_device_that_changes():
    devices = [WaveDevice(f"leaf-{i}", "leaf", rail=i % 2, unit=1) for i in range(1, 5)]
    waves = plan_waves(devices, 8, prefer_canary=["leaf-3"])
    assert waves[0].devices == ("leaf-3",)
    assert "leaf-3" not in [n for w in waves[1:] for n in w.devices]


def test_pairs_split_across_units():
    spines = [WaveDevice(f"s-u{u}-{i}", "spine", unit=u) for u in (1, 2) for i in (1, 2, 3, 4)]
    waves = check_invariants(spines, 32)
    assert [w.devices for w in waves] == [("s-u1-1", "s-u1-3", "s-u2-1", "s-u2-3"),
                                         ("s-u1-2", "s-u1-4", "s-u2-2", "s-u2-4")]


def test_concurrency_splits_large_waves():
    leaves = [WaveDevice(f"leaf-{i}", "leaf", rail=0, unit=i) for i in range(1, 12)]
    waves = plan_waves(leaves, 4)
    assert [len(w.devices) for w in waves] == [1, 4, 4, 2]


def test_natural_order():
    assert sorted(["leaf-10", "leaf-2", "leaf-1"], key=natural_key) == ["leaf-1", "leaf-2", "leaf-10"]


def test_bad_arguments():
    with pytest.raises(ValueError, match="concurrency"):
        plan_waves([], 0)
    with pytest.raises(ValueError, match="roles"):
        plan_waves([WaveDevice("x", "router")], 1)
    assert plan_waves([], 4) == []


def test_day0_is_the_canary_then_waves_of_the_concurrency(tmp_path):
    """No switch carries traffic yet: no rail or spine pair to keep up, the waves only bound how many
    commits a failure rolls back. 128 switches at concurrency 32: canary + 32 + 32 + 32 + 31."""
    devices = plan_of(tmp_path, "rail-optimized", 120, 8, "  nodes_per_unit: 8\n")
    assert len(devices) == 128
    waves = plan_waves(devices, 32, carries_traffic=False)
    assert [(w.label, len(w.devices)) for w in waves] == [
        ("canary", 1), ("day 0", 32), ("day 0", 32), ("day 0", 32), ("day 0", 31)]
    assert sorted(n for w in waves for n in w.devices) == sorted(d.name for d in devices)
    in_service = plan_waves(devices, 32)
    assert waves[0] == in_service[0], "the same canary"
    # the same order as the in-service rollout, only cut by the concurrency
    assert [n for w in waves for n in w.devices] == [n for w in in_service for n in w.devices]
    assert len(in_service) == 11


def test_day0_without_leaves_has_no_canary():
    spines = [WaveDevice(f"s-{i}", "spine", unit=1) for i in range(1, 6)]
    waves = plan_waves(spines, 2, carries_traffic=False)
    assert [(w.label, w.devices) for w in waves] == [
        ("day 0", ("s-1", "s-3")), ("day 0", ("s-5", "s-2")), ("day 0", ("s-4",))]
