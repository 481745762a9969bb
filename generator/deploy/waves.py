"""Rollout order: which switches may be down together (pure logic, no I/O).

A wave is the blast radius of one failure, so it is built from what the fabric can
lose at once: one canary leaf; then leaves one rail at a time (a rail-aligned leaf
carries one NIC of many nodes, and NCCL survives one rail degrading, not two); then
spines and super-spines in halves of every redundant set, so the two spines of a
pair are never down together. No wave is larger than the concurrency limit, which
also bounds how many commits can be pending when a wave has to be rolled back.
A fabric where no switch carries traffic yet (`deploy --day0`, proven from each switch) has no
rail to protect: the canary, then waves of the concurrency limit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

LEAF = "leaf"
SPINE = "spine"
SUPER_SPINE = "super-spine"
DAY0 = "day 0"        # the waves after the canary on a fabric that carries no traffic yet


@dataclass(frozen=True, slots=True)
class WaveDevice:
    name: str
    role: str                 # leaf | spine | super-spine
    rail: int | None = None
    unit: int | None = None
    group: int | None = None


@dataclass(frozen=True, slots=True)
class Wave:
    index: int                # 1-based, in rollout order
    label: str
    devices: tuple[str, ...]


def natural_key(name: str) -> tuple:
    """leaf-2 before leaf-10: numbers compare as numbers."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def _chunks(names: list[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(names), size):
        yield names[start:start + size]


def _halves(devices: list[WaveDevice]) -> tuple[list[str], list[str]]:
    """Split every redundant set (same role, unit and group) into alternating halves.

    Sets are sorted by name, and spine i is paired with spine i+1, so alternating
    positions put the two members of each pair on different halves.
    """
    sets: dict[tuple, list[WaveDevice]] = {}
    for d in devices:
        sets.setdefault((d.unit or 0, d.group or 0), []).append(d)
    first: list[str] = []
    second: list[str] = []
    for key in sorted(sets):
        members = sorted((d.name for d in sets[key]), key=natural_key)
        first += members[0::2]
        second += members[1::2]
    return first, second


def plan_waves(devices: Iterable[WaveDevice], concurrency: int, *,
               prefer_canary: Iterable[str] = (), carries_traffic: bool = True) -> list[Wave]:
    """Waves in rollout order; `prefer_canary` names devices that will really change,
    so the canary proves something rather than being a no-op.

    carries_traffic=False: no switch of the fabric forwards anything yet (`--day0`, day0_evidence.py),
    so there is no rail and no spine pair to keep up: after the canary, the rest in the same order
    in waves of `concurrency`, which still bounds how many commits a failed wave rolls back."""
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    devices = list(devices)
    unknown = {d.role for d in devices} - {LEAF, SPINE, SUPER_SPINE}
    if unknown:
        raise ValueError(f"unknown switch roles {sorted(unknown)}")
    leaves = sorted((d for d in devices if d.role == LEAF),
                    key=lambda d: (d.rail if d.rail is not None else -1, d.unit or 0, d.group or 0,
                                   natural_key(d.name)))
    waves: list[tuple[str, list[str]]] = []

    if leaves:
        preferred = set(prefer_canary)
        canary = next((d for d in leaves if d.name in preferred), leaves[0])
        waves.append(("canary", [canary.name]))
        rest = [d for d in leaves if d.name != canary.name]
        by_rail: dict[int | None, list[str]] = {}
        for d in rest:
            by_rail.setdefault(d.rail, []).append(d.name)
        for rail in sorted(by_rail, key=lambda r: -1 if r is None else r):
            label = "leaves" if rail is None else f"leaves rail {rail}"
            for chunk in _chunks(by_rail[rail], concurrency):
                waves.append((label, chunk))

    for role, label in ((SPINE, "spines"), (SUPER_SPINE, "super-spines")):
        first, second = _halves([d for d in devices if d.role == role])
        for half, names in ((1, first), (2, second)):
            for chunk in _chunks(names, concurrency):
                waves.append((f"{label} half {half}", chunk))

    if not carries_traffic:
        head = waves[:1] if waves and waves[0][0] == "canary" else []
        rest = [name for _, names in waves[len(head):] for name in names]
        waves = head + [(DAY0, chunk) for chunk in _chunks(rest, concurrency)]
    return [Wave(i, label, tuple(names)) for i, (label, names) in enumerate(waves, start=1)]
