"""The acceptance runs of a plan: one per rail group, then one over the whole fabric.

A rail group is the set of nodes whose rail NICs all land on the same leaves (NVIDIA's
DGX SuperPOD reference architecture: the nodes of a scalable unit connect NIC r to the
rail-r leaf of that unit). A run inside a rail group keeps all-reduce traffic on those
leaves, so a group that passes while the fabric run fails points at the tiers above.

Groups are skipped where they prove nothing: a group of one node (its all-reduce never
leaves NVLink) and a group that holds every node (the fabric run already is that run,
and two runs on the same hosts could not be told apart by their logs).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from generator.plan.model import FabricPlan

FABRIC_RUN = "fabric"
# The plan's word for a block of nodes behind one set of rail leaves, by topology kind
# (the same labels the leaf names carry: leaf-pod1-r0, leaf-su1-r0, leaf-g1-r0).
_BLOCK_WORD = {"three-tier": "pod", "rail-optimized": "su", "dragonfly-plus": "group"}


@dataclass(frozen=True, slots=True)
class Run:
    id: str                     # file-name safe: logs/<id>.log, hostfile.<id>
    kind: str                   # rail-group | fabric
    hosts: tuple[str, ...]      # plan order
    leaves: tuple[str, ...]     # the rail group's leaves (sorted); () for the fabric run
    gpus_per_node: int

    @property
    def nodes(self) -> int:
        return len(self.hosts)

    @property
    def ranks(self) -> int:
        return self.nodes * self.gpus_per_node


@dataclass(frozen=True, slots=True)
class RunSet:
    runs: tuple[Run, ...]
    skipped: tuple[str, ...]    # one sentence per rail group not run, and why

    def by_id(self, run_id: str) -> Run:
        return next(r for r in self.runs if r.id == run_id)


def plan_runs(plan: FabricPlan, gpus_per_node: int) -> RunSet:
    sets: dict[tuple[str, ...], list] = defaultdict(list)
    for host in plan.hosts:
        sets[tuple(sorted({nic.switch for nic in host.nics}))].append(host)
    word = _BLOCK_WORD.get(plan.kind)
    labels: list[str] = []
    for leaves, hosts in sets.items():
        first = hosts[0]
        block = first.group if plan.kind == "dragonfly-plus" else first.unit
        if word and block is not None:
            labels.append(f"{word}{block}")
        elif len(leaves) == 1:
            labels.append(leaves[0])
        else:
            labels.append(f"leaves{len(labels) + 1}")
    # a block split over several leaf sets (more nodes than one leaf's host ports) numbers them
    total = {label: labels.count(label) for label in labels}
    seen: dict[str, int] = defaultdict(int)
    runs: list[Run] = []
    skipped: list[str] = []
    for (leaves, hosts), label in zip(sets.items(), labels, strict=True):
        seen[label] += 1
        run_id = f"{label}-{seen[label]}" if total[label] > 1 else label
        names = tuple(h.name for h in hosts)
        if len(names) == len(plan.hosts):
            skipped.append(f"rail group {run_id} holds every node: the fabric run covers it")
        elif len(names) < 2:
            skipped.append(f"rail group {run_id} has one node ({names[0]}): its all-reduce stays on NVLink")
        else:
            runs.append(Run(run_id, "rail-group", names, leaves, gpus_per_node))
    runs.append(Run(FABRIC_RUN, "fabric", tuple(h.name for h in plan.hosts), (), gpus_per_node))
    return RunSet(tuple(runs), tuple(skipped))
