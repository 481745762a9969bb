"""Collectives besides all-reduce, each against its bus-bandwidth bound, bisected when below it
(`acceptance INTENT --collectives -o DIR`, `--judge DIR`; issue 39).

nccl-tests reports busbw = algbw x a factor per collective (doc/PERFORMANCE.md, "Bus
bandwidth"): all_reduce 2(n-1)/n; all_gather, reduce_scatter and alltoall (n-1)/n; sendrecv
1. The factor makes busbw comparable with the hardware's bandwidth, so the bound of each is
the bandwidth its bytes meet on the way, from the capacity model's numbers (capacity/
allreduce.py: node NICs = rails x speed/8 x NIC efficiency, the GPU's NVLink ring rate):

- all_reduce: the capacity model's prediction (expected.py), as `acceptance --results`;
- all_gather, reduce_scatter: a ring, like all-reduce's: min(node NICs, NVLink ring);
- alltoall: a rank sends (n-g)/n of its buffer off its node, the node's NICs carry g ranks'
  share: busbw = node NICs x (n-1) / (g (n-g)) (n ranks, g a node), at most the NVLink ring;
- sendrecv: rank r sends to r+1, so one GPU a node sends off it: one NIC's rate.

Bisection, by the generated script: each collective runs over the fabric first; only when its
Avg bus bandwidth is below MIN_FRACTION of its bound does the script run it again per unit
(the rail groups of runs.py), per rail (every node, NCCL_IB_HCA = that rail's device) and per
node pair (a ring of the nodes: each node in two pairs, with two different peers). The judge
then names: a slow node, the one node whose two pairs were both low while every other pair
cleared their nodes (attribution.py's cover, nodes for cables); a slow rail, a rail run below
its bound while the others met theirs; a slow unit likewise.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from generator.acceptance.attribution import Measured, attribute
from generator.acceptance.runs import RunSet

SCHEMA = "fabricgen.collectives/1"
SCHEDULE_FILE = "collectives.json"
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv")
MIN_FRACTION = 0.85
COMMAND = "{c}_perf -b 1G -e 16G -f 2 -g 1"
FACTOR = {"all_reduce": "2(n-1)/n", "all_gather": "(n-1)/n", "reduce_scatter": "(n-1)/n", "alltoall": "(n-1)/n",
          "sendrecv": "1"}


@dataclass(frozen=True, slots=True)
class Bisect:
    id: str
    kind: str                   # fabric | unit | rail | pair
    hosts: tuple[str, ...]
    rail: int | None = None     # a rail run: the rail whose NIC alone carries it


def bound_GBps(collective: str, predictor, nodes: int, rails: int) -> float:
    """The busbw bound of COLLECTIVE on NODES nodes using RAILS of each node's NICs (module docstring)."""
    s = predictor.shape
    g = s.gpus_per_node
    n = nodes * g
    nic = s.nic_speed_g / 8 * predictor.efficiency
    node = rails * nic
    nvlink = s.gpu.ring_gbps
    if collective == "all_reduce":
        if rails == s.rails:
            return predictor.predict(nodes, 16 << 30).busbw_GBps
        return min(node, nvlink)
    if collective in ("all_gather", "reduce_scatter"):
        return min(node, nvlink) if nodes > 1 else nvlink
    if collective == "alltoall":
        return min(node * (n - 1) / (g * (n - g)), nvlink) if nodes > 1 else nvlink
    if collective == "sendrecv":
        return min(nic, nvlink) if nodes > 1 else nvlink
    raise ValueError(collective)


def bisections(plan, runset: RunSet) -> list[Bisect]:
    hosts = tuple(h.name for h in plan.hosts)
    out = [Bisect("fabric", "fabric", hosts)]
    out += [Bisect(r.id, "unit", r.hosts) for r in runset.runs if r.kind == "rail-group"]
    rails = sorted({nic.rail for h in plan.hosts for nic in h.nics})
    if len(rails) > 1:
        out += [Bisect(f"rail{r}", "rail", hosts, r) for r in rails]
    if len(hosts) > 2:
        out += [Bisect(f"pair-{k + 1:03d}", "pair", (hosts[k], hosts[(k + 1) % len(hosts)]))
                for k in range(len(hosts))]
    return out


def leaf_uplinks(plan) -> dict[str, dict[str, int]]:
    """{leaf: {uplink port: cabling.csv row}}: the switches hosts plug into, and their other cables."""
    from generator.acceptance.burnin import cable_rows

    rows = cable_rows(plan)
    leaves = {nic.switch for h in plan.hosts for nic in h.nics}
    return {leaf: {p.port: rows[(leaf, p.port)] for p in plan.ports_of(leaf)
                   if p.tier != "host-leaf" and (leaf, p.port) in rows}
            for leaf in sorted(leaves)}


def schedule_doc(plan, runset: RunSet, predictor, intent_sha256: str, generator: str) -> dict:
    runs = bisections(plan, runset)
    rails = predictor.shape.rails
    return {
        "uplinks": {leaf: ports for leaf, ports in leaf_uplinks(plan).items() if len(ports) > 1},
        "schema": SCHEMA, "generator": generator, "fabric": plan.fabric, "intent_sha256": intent_sha256,
        "min_fraction": MIN_FRACTION, "gpus_per_node": predictor.shape.gpus_per_node,
        "comment": "bound_GBps: the busbw nccl-tests reports (algbw x the collective's factor, nccl-tests "
                   "doc/PERFORMANCE.md) that the capacity model's NICs and NVLink allow; see "
                   "generator/acceptance/collectives.py",
        "collectives": [{"name": c, "factor": FACTOR[c], "command": COMMAND.format(c=c), "runs": [
            {"id": b.id, "kind": b.kind, "hosts": list(b.hosts), "rail": b.rail,
             "bound_GBps": round(bound_GBps(c, predictor, len(b.hosts), 1 if b.rail is not None else rails), 3),
             "log": f"logs/{c}/{b.id}.log"} for b in runs]} for c in COLLECTIVES],
    }


def _rail_device(plan, rail: int) -> str:
    return next(nic.rdma for nic in plan.hosts[0].nics if nic.rail == rail)


def script(plan, doc: dict, env: list[tuple[str, str]], version: str) -> str:
    """collectives.sh: Open MPI mpirun, one run after the other; the bisection runs of a
    collective only when its fabric run's Avg bus bandwidth is below min_fraction x its bound."""
    gpn = doc["gpus_per_node"]
    forward = " ".join(f"-x {k}" for k, _ in env)
    out = ["#!/bin/sh\n",
           f"# fabricgen collectives for fabric {plan.fabric}: nccl-tests per collective, bisected when slow.\n",
           f"# Generated by {version}; regenerate with `fabricgen acceptance INTENT --collectives -o DIR`, "
           "do not edit.\n",
           "# nccl-tests (MPI=1) must be on PATH on every node. Then: fabricgen acceptance INTENT --judge DIR\n",
           "set -u\ncd \"$(dirname \"$0\")\" || exit 1\n",
           "".join(f"export {k}='{v.replace(chr(39), chr(39) + chr(92) + chr(39) + chr(39))}'\n" for k, v in env),
           "status=0\n",
           "# SNAPSHOT: the command that writes every switch's counters to the file it is given, e.g.\n",
           "#   SNAPSHOT=\"fabricgen acceptance fabric.yaml --endpoints endpoints.yml --snapshot\"\n",
           "# (--judge then names a leaf uplink that carried more than 1.25 x its leaf's mean: load spread)\n",
           "snapshot() { [ -z \"${SNAPSHOT:-}\" ] || $SNAPSHOT \"$1\"; }\n",
           "# below LOG MIN: the log's Avg bus bandwidth (nccl-tests' footer) is under MIN GB/s, or absent\n",
           "below() { awk -v min=\"$2\" '/^# Avg bus bandwidth/ {seen=1; v=$NF+0} "
           "END {exit !(!seen || v < min)}' \"$1\"; }\n",
           "# run COLLECTIVE ID HOSTS [HCA]: one nccl-tests run, its log in logs/COLLECTIVE/ID.log; a rail run\n",
           "# gives NCCL only that rail's NIC (NCCL_IB_HCA, '=' an exact name: NCCL env docs), in a subshell\n",
           "run() (\n",
           "    c=$1 id=$2 hosts=$3 rail=${4:-}\n",
           "    mkdir -p \"logs/$c\" || exit 1\n",
           "    set --\n",
           "    if [ -n \"$rail\" ]; then NCCL_IB_HCA=\"=$rail\"; export NCCL_IB_HCA; set -- -x NCCL_IB_HCA; fi\n",
           f"    ranks=$(( $(echo \"$hosts\" | tr ',' '\\n' | wc -l) * {gpn} ))\n",
           f"    exec mpirun -np \"$ranks\" --host \"$(echo \"$hosts\" | sed 's/\\([^,]*\\)/\\1:{gpn}/g')\" "
           f"--map-by ppr:{gpn}:node -x PATH {forward} \"$@\" \\\n",
           "        \"${c}_perf\" -b 1G -e 16G -f 2 -g 1 > \"logs/$c/$id.log\" 2> \"logs/$c/$id.err\"\n",
           ")\n"]
    for c in doc["collectives"]:
        fabric, rest = c["runs"][0], c["runs"][1:]
        low = round(fabric["bound_GBps"] * doc["min_fraction"], 3)
        out.append(f"\n# {c['name']}: busbw bound {fabric['bound_GBps']} GB/s over the fabric\n")
        out.append(f"mkdir -p logs/{c['name']} && snapshot logs/{c['name']}/counters-before.json || status=1\n")
        out.append(f"run {c['name']} fabric {','.join(fabric['hosts'])} || status=1\n")
        out.append(f"snapshot logs/{c['name']}/counters-after.json || status=1\n")
        out.append(f"if below logs/{c['name']}/fabric.log {low}; then\n")
        for r in rest:
            hca = f" {shlex.quote(_rail_device(plan, r['rail']))}" if r["rail"] is not None else ""
            out.append(f"    run {c['name']} {r['id']} {','.join(r['hosts'])}{hca} || status=1\n")
        out.append("fi\n")
    out.append("\nexit $status\n")
    return "".join(out)


def files(loaded, plan, runset: RunSet, predictor, env: list[tuple[str, str]], generator: str) -> dict[str, str]:
    doc = schedule_doc(plan, runset, predictor, hashlib.sha256(loaded.text.encode()).hexdigest(), generator)
    return {"collectives.sh": script(plan, doc, env, generator), SCHEDULE_FILE: json.dumps(doc, indent=1) + "\n"}


# --- judge ------------------------------------------------------------------------------------
def measured_busbw(path: Path, collective: str) -> float | None:
    """The largest size's busbw (the lower of out-of-place and in-place), None without a log.
    Raises nccl_log.LogError for a log that is not this collective's."""
    from generator.acceptance.nccl_log import parse_log

    if not path.exists():
        return None
    log = parse_log(path, collective)
    row = max(log.rows, key=lambda r: r.size_bytes)
    return min(c.busbw_GBps for c in row.cells)


def judge(directory: Path, doc: dict) -> tuple[list[str], int]:
    """(report lines, findings) of a collectives DIR."""
    lines: list[str] = []
    findings = 0
    host_index = {h: i for c in doc["collectives"][:1] for i, h in enumerate(c["runs"][0]["hosts"])}
    names = {i: h for h, i in host_index.items()}
    for c in doc["collectives"]:
        spread_lines = _spread(directory, doc, c["name"])
        findings += len(spread_lines)
        lines += spread_lines
        runs = {r["id"]: (r, measured_busbw(directory / r["log"], c["name"])) for r in c["runs"]}
        fabric, got = runs["fabric"]
        if got is None:
            lines.append(f"{c['name']}: not run: no {fabric['log']}; run collectives.sh")
            findings += 1
            continue
        share = got / fabric["bound_GBps"] if fabric["bound_GBps"] else 0.0
        if share >= doc["min_fraction"]:
            lines.append(f"{c['name']}: busbw {got:.2f} GB/s, {share:.0%} of its bound {fabric['bound_GBps']:.2f} GB/s")
            continue
        findings += 1
        lines.append(f"{c['name']}: busbw {got:.2f} GB/s is {share:.0%} of its bound {fabric['bound_GBps']:.2f} GB/s "
                     f"(minimum {doc['min_fraction']:.0%}): bisected")
        lines += _bisected(c, runs, doc["min_fraction"], host_index, names)
    return lines, findings


def _spread(directory: Path, doc: dict, collective: str) -> list[str]:
    """Load-spread findings of a collective's fabric run, from the snapshots around it (spread.py)."""
    from generator.acceptance.burnin_judge import JudgeError
    from generator.acceptance.round_counters import load_snapshot
    from generator.acceptance.spread import spread, uplink_tx

    before, after = (directory / "logs" / collective / f"counters-{w}.json" for w in ("before", "after"))
    if not (before.exists() and after.exists()):
        return []
    try:
        sent = uplink_tx(load_snapshot(before), load_snapshot(after), doc.get("uplinks") or {})
    except ValueError as exc:
        raise JudgeError(f"{exc}; take the snapshots again") from None
    rows = doc.get("uplinks") or {}
    return [f"load spread during {collective}: cable cabling.csv:{rows[f.leaf][f.port]} {f.line()}"
            for f in spread(sent)]


def _low(entry, min_fraction: float) -> bool:
    run, got = entry
    return got is not None and run["bound_GBps"] > 0 and got / run["bound_GBps"] < min_fraction


def _pct(entry) -> str:
    run, got = entry
    return f"{run['id']} {got / run['bound_GBps']:.0%}"


def _bisected(c: dict, runs: dict, min_fraction: float, host_index: dict, names: dict) -> list[str]:
    out = []
    measured = {k: v for k, v in runs.items() if k != "fabric" and v[1] is not None}
    if not measured:
        return [f"  {c['name']}: no bisection log: run collectives.sh again (it bisects a slow fabric run)"]
    for kind, word in (("unit", "unit"), ("rail", "rail")):
        group = {k: v for k, v in measured.items() if v[0]["kind"] == kind}
        low = sorted(k for k, v in group.items() if _low(v, min_fraction))
        if low and len(low) < len(group):
            for k in low:
                run = group[k][0]
                what = f"rail {run['rail']}" if kind == "rail" else f"unit {k} ({', '.join(run['hosts'])})"
                out.append(f"  slow {word}: {what}: {_pct(group[k])} of its bound while "
                           f"{len(group) - len(low)} other {word}(s) met theirs")
    pairs = [Measured(k, tuple(host_index[h] for h in v[0]["hosts"]), v[0]["bound_GBps"], v[1])
             for k, v in measured.items() if v[0]["kind"] == "pair"]
    found = attribute(pairs, min_fraction)
    if found.good == 0:         # no pair met its bound: nothing clears a node, so no node is to blame
        found = attribute([], min_fraction)
    for s in found.suspects:
        out.append(f"  slow node: {names[s.cable]}: its pair runs {', '.join(_pct(runs[p]) for p in s.pairs)} "
                   "were below their bound and every other pair cleared its nodes")
    for p in found.unexplained:
        out.append(f"  slow pair: {p} ({', '.join(runs[p][0]['hosts'])}): {_pct(runs[p])} while both nodes "
                   "met their bound with another peer: look at the path between them")
    if not out:
        out.append(f"  {c['name']}: every bisection run met its bound: the slowness needs the whole fabric "
                   "(the spine tier or the collective's own scaling)")
    return out
