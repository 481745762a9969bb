"""Attribution at fleet size without SSH (issue 39): the rail-optimized example (16 leaves + 4
spines, 64 hosts x 8 rails, 1,024 cables), every burn-in pair's ib_write_bw output produced by the
lab's stand-in (lab/perftest.py) in a world built from the plan's cables, read back by the
perftest parser and attributed. Seeded: each seed degrades another host-leaf cable to 90 %."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

from generator.acceptance.attribution import Measured, attribute
from generator.acceptance.burnin_judge import judge_lines
from generator.acceptance.command import run_burnin, run_judge
from generator.acceptance.perftest_log import parse_bw
from generator.lab.perftest import ib_write_bw_output
from generator.lab.world import Cable, World
from tests.conftest import example


def _plan(name: str):
    from generator.checks.runner import run_checks
    from generator.intent.loader import load_intent

    return run_checks(load_intent(str(example(name)))).plan


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    out = tmp_path_factory.mktemp("fleet") / "burn"
    assert run_burnin(str(example("rail-optimized")), str(out)) == 0
    return _plan("rail-optimized"), json.loads((out / "burnin.json").read_text())


def world_of(plan, degraded: dict[int, float]) -> World:
    """The plan's cables as installed; cabling.csv row -> rate for the degraded ones."""
    return World(tuple(Cable(lk.a_device, lk.a_port, lk.b_device, lk.b_port, rate=degraded.get(n, 1.0))
                       for n, lk in enumerate(plan.links, 2)))


def outputs(plan, doc: dict, world: World, seed: int) -> dict[str, str]:
    hosts = {h.name for h in plan.hosts}
    return {p["output"]: ib_write_bw_output(world, hosts, client=(p["client"]["host"], p["client"]["netdev"]),
                                            server=(p["server"]["host"], p["server"]["netdev"]),
                                            rdma=p["client"]["rdma"], qps=p["qps"], nic_gbps=plan.nic_speed_g,
                                            efficiency=doc["nic_efficiency"], seed=seed)
            for rnd in doc["rounds"] for p in rnd["pairs"]}


def measured(doc: dict, texts: dict[str, str]) -> list[Measured]:
    out = []
    for rnd in doc["rounds"]:
        for p in rnd["pairs"]:
            rows = parse_bw(texts[p["output"]], p["output"])
            out.append(Measured(p["id"], tuple(p["cables"]), p["expected_gbps"], rows[-1].average_gbps))
    return out


@pytest.mark.parametrize("seed", range(10))
def test_a_degraded_host_leaf_cable_is_named(fleet, seed):
    plan, doc = fleet
    host_leaf = sorted(int(n) for n, c in doc["cables"].items() if c["tier"] == "host-leaf")
    bad = random.Random(seed).choice(host_leaf)
    texts = outputs(plan, doc, world_of(plan, {bad: 0.9}), seed)
    found = attribute(measured(doc, texts))
    assert [s.cable for s in found.suspects] == [bad] and not found.unexplained
    lines, findings = judge_lines(doc, measured(doc, texts), [])
    lk = plan.links[bad - 2]
    assert findings == 1
    assert f"cable cabling.csv:{bad} {lk.a_device}:{lk.a_port} <-> {lk.b_device}:{lk.b_port} (host-leaf)" in lines[1]


@pytest.mark.parametrize("seed", range(10))
def test_a_clean_fabric_has_no_finding(fleet, seed):
    plan, doc = fleet
    found = attribute(measured(doc, outputs(plan, doc, world_of(plan, {}), seed)))
    assert not found.suspects and not found.unexplained and not found.low
    if seed == 0:         # the counters of a clean round move no error counter (one seed: the world has no seed)
        from generator.acceptance.round_counters import round_findings

        rnd = next(r for r in doc["rounds"] if r["kind"] == "leaf-spine")
        before, after = round_counters(plan, doc, world_of(plan, {}), rnd)
        assert round_findings(doc["cables"], rnd["id"], {c for p in rnd["pairs"] for c in p["cables"]},
                              before, after) == []


def test_a_low_pair_over_cleared_cables_is_named_as_a_pair():
    good = [Measured("a", (1, 2), 100, 99), Measured("b", (2, 3), 100, 99), Measured("c", (3, 1), 100, 99)]
    found = attribute([*good, Measured("x", (1, 3), 100, 50)])
    assert found.suspects == () and found.unexplained == ("x",)
    failed = attribute([*good[:2], Measured("y", (3, 4), 100, None)])
    assert [(s.cable, s.pairs, s.worst_fraction) for s in failed.suspects] == [(4, ("y",), 0.0)]


def test_judge_cli_names_the_cable_from_output_files(tmp_path, capsys):
    plan = _plan("small")
    out = tmp_path / "burn"
    assert run_burnin(str(example("small")), str(out)) == 0
    doc = json.loads((out / "burnin.json").read_text())
    assert run_judge(str(example("small")), str(out)) == 3          # nothing run yet: every pair not run
    assert "not run: hl1-0001" in capsys.readouterr().out
    bad = 3
    for rel, text in outputs(plan, doc, world_of(plan, {bad: 0.9}), 1).items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    assert run_judge(str(example("small")), str(out)) == 3
    lk = plan.links[bad - 2]
    text = capsys.readouterr().out
    assert f"cable cabling.csv:{bad} {lk.a_device}:{lk.a_port} <-> {lk.b_device}:{lk.b_port}" in text
    for rel, text in outputs(plan, doc, world_of(plan, {}), 1).items():
        (out / rel).write_text(text)
    assert run_judge(str(example("small")), str(out)) == 0
    assert run_judge(str(example("medium")), str(out)) == 1
    assert "written from another intent" in capsys.readouterr().err


def test_judge_refuses_a_directory_without_a_schedule(tmp_path, capsys):
    assert run_judge(str(example("small")), str(tmp_path)) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--burn-in -o" in err
    assert not any(Path(tmp_path).iterdir())


FRAME = 4096 + 78          # the lab's RoCE frame (world.py FLOW_FRAME_OCTETS)


def round_counters(plan, doc: dict, world: World, rnd: dict) -> tuple[dict, dict]:
    """Before/after snapshots of the switch ports a round used, as the lab's switches count them:
    every QP's bytes over a degraded cable arrive a (1 - rate) share corrupted at the receiving
    switch end (world.py Fabric._with_flows), read as napalm's rx_errors."""
    from generator.lab.perftest import qp_paths

    hosts = {h.name for h in plan.hosts}
    before: dict = {}
    # the round's pairs share their cables: each row once, first seen first (the same dict as
    # row by row, where ~3 M lookups were half of each leaf-spine test)
    for row in dict.fromkeys(row for p in rnd["pairs"] for row in p["cables"]):
        for end in (doc["cables"][str(row)]["a"], doc["cables"][str(row)]["b"]):
            device, port = end.split(":", 1)
            if device not in hosts:
                before.setdefault(device, {})[port] = {"rx_errors": 0, "tx_errors": 0}
    after = json.loads(json.dumps(before))
    degraded = {id(c) for c in world.cables if c.rate < 1}
    for p in rnd["pairs"]:
        client, server = (p["client"]["host"], p["client"]["netdev"]), (p["server"]["host"], p["server"]["netdev"])
        per_qp = plan.nic_speed_g * 1e9 / 8 * doc["nic_efficiency"] / p["qps"] * doc["duration_s"]
        # only a path over a degraded cable moves a counter, and QPs hashed onto the same cables
        # count alike: each such path walked once, times its QPs (a walk a QP was the other half)
        paths = qp_paths(world, hosts, client, server, p["qps"])
        if degraded.isdisjoint(map(id, itertools.chain.from_iterable(paths))):
            continue
        qps_of: dict[tuple[int, ...], list] = {}
        for path in paths:
            if not degraded.isdisjoint(key := tuple(map(id, path))):
                qps_of.setdefault(key, [path, 0])[1] += 1
        for path, n in qps_of.values():
            here = client
            for i, cable in enumerate(path):         # walk client -> server: each cable's far end receives
                device, port = cable.far(*here)
                if cable.rate < 1 and device not in hosts:
                    after[device][port]["rx_errors"] += n * int(per_qp * (1 - cable.rate) / FRAME)
                # the next cable of the path leaves this switch on another port
                nxt = path[i + 1] if i + 1 < len(path) else None
                if nxt is not None:
                    here = (device, nxt.a_port if nxt.a_device == device else nxt.b_port)
    return before, after


@pytest.mark.parametrize("seed", range(10))
def test_a_degraded_leaf_spine_cable_is_named_by_the_round_counters(fleet, seed, tmp_path):
    from generator.acceptance.burnin_judge import counter_evidence

    plan, doc = fleet
    leaf_spine = sorted(int(n) for n, c in doc["cables"].items() if c["tier"] == "leaf-spine")
    bad = random.Random(100 + seed).choice(leaf_spine)
    world = world_of(plan, {bad: 0.9})
    for rnd in doc["rounds"]:
        if rnd["kind"] != "leaf-spine":
            continue
        before, after = round_counters(plan, doc, world, rnd)
        base = tmp_path / "burnin" / rnd["id"]
        base.mkdir(parents=True)
        (base / "counters-before.json").write_text(json.dumps(before))
        (base / "counters-after.json").write_text(json.dumps(after))
    evidence = counter_evidence(tmp_path, doc)
    results = measured(doc, outputs(plan, doc, world, seed))
    lines, findings = judge_lines(doc, results, [], counters=evidence)
    lk = plan.links[bad - 2]
    assert findings == 1, lines
    assert lines[1].startswith(f"cable cabling.csv:{bad} {lk.a_device}:{lk.a_port} <-> {lk.b_device}:{lk.b_port} "
                               "(leaf-spine): errors while the burn-in ran")


def flow_snapshots(plan, doc: dict, world: World, rnd: dict, qps: int | None = None) -> tuple[dict, dict]:
    """Before/after tx/rx octets of every switch port a round's pairs crossed, from the flows the
    lab's ib_write_bw stand-in puts through them (lab/perftest.py pair_flows, the Flow objects a
    running lab counts; Flow.octets is the world's own integration). QPS: run every pair with that
    many QPs instead of the schedule's (an operator's `-q 1`)."""
    from generator.lab.perftest import pair_flows

    hosts = {h.name for h in plan.hosts}
    after: dict = {}
    for port in plan.ports:                     # a switch counts every port, traffic or not
        if port.device not in hosts:
            after.setdefault(port.device, {})[port.port] = {"tx_octets": 0, "rx_octets": 0}
    for p in rnd["pairs"]:
        for flow in pair_flows(world, hosts, client=(p["client"]["host"], p["client"]["netdev"]),
                               server=(p["server"]["host"], p["server"]["netdev"]), qps=qps or p["qps"],
                               nic_gbps=plan.nic_speed_g, efficiency=doc["nic_efficiency"],
                               start=0.0, end=float(doc["duration_s"])):
            tx, rx = flow.octets(0.0, float(doc["duration_s"]))
            row = after.setdefault(flow.device, {}).setdefault(flow.port, {"tx_octets": 0, "rx_octets": 0})
            row["tx_octets"] += int(tx)
            row["rx_octets"] += int(rx)
    before = {d: {p: {"tx_octets": 0, "rx_octets": 0} for p in ports} for d, ports in after.items()}
    return before, after


def _write_round_snapshots(base: Path, plan, doc: dict, world: World, qps: int | None) -> None:
    for rnd in doc["rounds"]:
        if rnd["kind"] != "leaf-spine":
            continue
        before, after = flow_snapshots(plan, doc, world, rnd, qps)
        (base / "burnin" / rnd["id"]).mkdir(parents=True, exist_ok=True)
        (base / "burnin" / rnd["id"] / "counters-before.json").write_text(json.dumps(before))
        (base / "burnin" / rnd["id"] / "counters-after.json").write_text(json.dumps(after))


def test_the_schedules_flows_spread_evenly_over_every_leafs_uplinks(fleet, tmp_path):
    """256 flows an uplink (burnin.FLOWS_PER_UPLINK) hashed per QP: no uplink of any leaf above
    1.25 x its leaf's mean, so the clean burn-in gives no spread finding."""
    from generator.acceptance.burnin_judge import spread_evidence

    plan, doc = fleet
    _write_round_snapshots(tmp_path, plan, doc, world_of(plan, {}), None)
    assert spread_evidence(tmp_path, doc) == []
    lines, findings = judge_lines(doc, measured(doc, outputs(plan, doc, world_of(plan, {}), 0)), [],
                                  spread=spread_evidence(tmp_path, doc))
    assert findings == 0, lines


def test_few_qps_leave_uplinks_unevenly_loaded_and_the_judge_says_how_to_spread_them(fleet, tmp_path):
    """The same rounds run with one QP a pair (one flow: one uplink each): the hash leaves some
    uplinks with two or three flows and others with none; each uplink above 1.25 x its leaf's mean
    is named with its cabling.csv row, the round and the hashing hint."""
    from generator.acceptance.burnin_judge import spread_evidence

    plan, doc = fleet
    _write_round_snapshots(tmp_path, plan, doc, world_of(plan, {}), 1)
    found = spread_evidence(tmp_path, doc)
    assert found and all(f.ratio > 1.25 for _r, _row, f in found)
    round_id, row, worst = max(found, key=lambda x: x[2].ratio)
    lk = plan.links[row - 2]
    assert (worst.leaf, worst.port) in {(lk.a_device, lk.a_port), (lk.b_device, lk.b_port)}
    assert lk.tier == "leaf-spine"
    lines, findings = judge_lines(doc, measured(doc, outputs(plan, doc, world_of(plan, {}), 0)), [],
                                  spread=found)
    assert findings == len(found)
    line = next(x for x in lines if f"cabling.csv:{row} " in x)
    assert line.startswith(f"load spread in round {round_id}: cable cabling.csv:{row} {worst.leaf} {worst.port}: ")
    assert "NCCL_IB_QPS_PER_CONNECTION" in line and "UDP source port" in line
