"""Collectives with attribution (issue 39 item 3): each collective's busbw bound from the capacity
model with nccl-tests' busbw factors, and the generated script's bisection run for real (sh) with
an `mpirun` stand-in on PATH that writes what nccl-tests prints (the printf layout of
tests/nccl_tests_log.nccl_log): a slow node in an all_gather run is named, a slow rail
is named, and a fabric that meets every bound runs no bisection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.acceptance.collectives import COLLECTIVES
from generator.acceptance.command import run_collectives, run_judge
from tests.conftest import example

MPIRUN = """#!{python}
# Stand-in for Open MPI's mpirun running an nccl-tests binary: writes the log nccl-tests would
# print for the hosts given, at a busbw that is low when a slow node is among them or when the
# run's NICs (NCCL_IB_HCA: the rendered list, or the one rail of a rail run) include the slow rail's.
import json, os, sys
sys.path.insert(0, {repo!r})
from tests.nccl_tests_log import nccl_log
args = sys.argv[1:]
hosts = [h.split(":")[0] for h in args[args.index("--host") + 1].split(",")]
binary = next(a for a in args if a.endswith("_perf"))
collective = binary[:-len("_perf")]
doc = json.load(open("collectives.json"))
runs = next(c for c in doc["collectives"] if c["name"] == collective)["runs"]
hca = os.environ.get("NCCL_IB_HCA", "")
rail = next((r for r in runs if r["kind"] == "rail" and hca == "=" + os.environ["RAIL_DEVICE_" + str(r["rail"])]),
            None)
run = rail or next(r for r in runs if sorted(r["hosts"]) == sorted(hosts) and r["kind"] != "rail")
slow_node, slow_rail = os.environ.get("SLOW_NODE"), os.environ.get("SLOW_RAIL_HCA")
slow = (collective == os.environ["SLOW_COLLECTIVE"]
        and ((slow_node in hosts) if slow_node else slow_rail.lstrip("=") in hca))
with open("mpirun.calls", "a") as f:
    f.write(collective + " " + run["id"] + "\\n")
sys.stdout.write(nccl_log(hosts, doc["gpus_per_node"], run["bound_GBps"] * (0.6 if slow else 0.98),
                          program=binary))
"""


def _write(tmp_path: Path, name: str) -> tuple[Path, dict]:
    out = tmp_path / "coll"
    assert run_collectives(str(example(name)), str(out)) == 0
    return out, json.loads((out / "collectives.json").read_text())


def _run_script(out: Path, tmp_path: Path, doc: dict, name: str = "small", **env: str) -> list[str]:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    fake = bindir / "mpirun"
    fake.write_text(MPIRUN.format(python=sys.executable, repo=str(Path(__file__).resolve().parents[2])))
    fake.chmod(0o755)
    from generator.checks.runner import run_checks
    from generator.intent.loader import load_intent

    plan = run_checks(load_intent(str(example(name)))).plan
    rails = {f"RAIL_DEVICE_{nic.rail}": nic.rdma for nic in plan.hosts[0].nics}
    done = subprocess.run(["sh", str(out / "collectives.sh")], env={**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}",
                          **rails, **env}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return (out / "mpirun.calls").read_text().split("\n")[:-1]


def test_bounds_follow_nccl_tests_busbw_factors(tmp_path):
    out, doc = _write(tmp_path, "small")
    fabric = {c["name"]: c["runs"][0]["bound_GBps"] for c in doc["collectives"]}
    assert tuple(fabric) == COLLECTIVES
    # 2 x 400G at 0.94: a ring (all_gather, reduce_scatter) is bound by the node's NICs
    assert fabric["all_gather"] == fabric["reduce_scatter"] == pytest.approx(2 * 50 * 0.94)
    # sendrecv: one GPU a node sends off it, over one NIC
    assert fabric["sendrecv"] == pytest.approx(50 * 0.94)
    # alltoall: node NICs x (n-1) / (g (n-g)), n = 32 ranks, g = 8
    assert fabric["alltoall"] == pytest.approx(2 * 50 * 0.94 * 31 / (8 * 24), rel=1e-3)
    assert {c["factor"] for c in doc["collectives"] if c["name"] != "all_reduce"} == {"(n-1)/n", "1"}


def test_a_slow_node_in_an_all_gather_run_is_named_by_the_bisection(tmp_path, capsys):
    out, doc = _write(tmp_path, "small")
    calls = _run_script(out, tmp_path, doc, SLOW_COLLECTIVE="all_gather", SLOW_NODE="gpu03")
    # only the slow collective was bisected: every other collective ran its fabric run alone
    assert [c for c in calls if not c.startswith("all_gather ")] == [f"{c} fabric" for c in COLLECTIVES
                                                                      if c != "all_gather"]
    assert {c.split()[1] for c in calls if c.startswith("all_gather ")} == {r["id"] for r in doc["collectives"][1]["runs"]}
    assert run_judge(str(example("small")), str(out)) == 3
    text = capsys.readouterr().out
    assert "all_gather: busbw" in text and "bisected" in text
    assert "slow node: gpu03: its pair runs pair-002 60%, pair-003 60% were below their bound" in text
    assert text.count("slow node") == 1 and "slow rail" not in text


def test_a_slow_rail_is_named_and_no_node_is_blamed(tmp_path, capsys):
    out, doc = _write(tmp_path, "small")
    _run_script(out, tmp_path, doc, SLOW_COLLECTIVE="alltoall", SLOW_RAIL_HCA="=mlx5_1")
    assert run_judge(str(example("small")), str(out)) == 3
    text = capsys.readouterr().out
    assert "slow rail: rail 1: rail1 60% of its bound while 1 other rail(s) met theirs" in text
    assert "slow node" not in text


def test_a_fabric_at_its_bounds_runs_no_bisection_and_judges_clean(tmp_path, capsys):
    out, doc = _write(tmp_path, "small")
    calls = _run_script(out, tmp_path, doc, SLOW_COLLECTIVE="none")
    assert calls == [f"{c} fabric" for c in COLLECTIVES]
    assert run_judge(str(example("small")), str(out)) == 0
    assert "bisected" not in capsys.readouterr().out


def test_a_log_of_another_collective_is_one_error_line(tmp_path, capsys):
    out, doc = _write(tmp_path, "small")
    _run_script(out, tmp_path, doc, SLOW_COLLECTIVE="none")
    (out / "logs/all_gather/fabric.log").write_text((out / "logs/alltoall/fabric.log").read_text())
    assert run_judge(str(example("small")), str(out)) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "alltoall_perf log, not all_gather_perf" in err


SNAPSHOT = """#!{python}
# Stand-in for `fabricgen acceptance ... --snapshot FILE`: every leaf uplink's tx_octets, 0 before a
# run; after it, 10 GB on each uplink, and 20 GB on HOT_PORT of HOT_LEAF during HOT_COLLECTIVE.
import json, os, sys
target = sys.argv[1]
doc = json.load(open("collectives.json"))
after = target.endswith("counters-after.json")
hot = after and "/" + os.environ["HOT_COLLECTIVE"] + "/" in target
counters = {{leaf: {{port: {{"tx_octets": (20 if hot and (leaf, port) == (os.environ["HOT_LEAF"], os.environ["HOT_PORT"])
                                            else 10) * 10**9 if after else 0}}
                   for port in ports}} for leaf, ports in doc["uplinks"].items()}}
open(target, "w").write(json.dumps(counters))
"""


def test_load_spread_during_a_collective_names_the_hot_uplink(tmp_path, capsys):
    out, doc = _write(tmp_path, "medium")
    leaf, ports = next(iter(doc["uplinks"].items()))
    port, row = next(iter(ports.items()))
    snap = tmp_path / "snapshot"
    snap.write_text(SNAPSHOT.format(python=sys.executable))
    snap.chmod(0o755)
    _run_script(out, tmp_path, doc, "medium", SLOW_COLLECTIVE="none", SNAPSHOT=str(snap),
                HOT_COLLECTIVE="alltoall", HOT_LEAF=leaf, HOT_PORT=port)
    assert run_judge(str(example("medium")), str(out)) == 3
    text = capsys.readouterr().out
    spread = [line for line in text.splitlines() if line.startswith("load spread")]
    assert len(spread) == 1 and spread[0].startswith(f"load spread during alltoall: cable cabling.csv:{row} {leaf} {port}: ")
    assert "NCCL_IB_QPS_PER_CONNECTION" in spread[0]


def test_a_fabric_run_with_wrong_results_is_a_finding(tmp_path, capsys):
    """The real FAILED all_gather (tests/data/nccl, '# Out of bounds values : 4 FAILED') as the
    fabric run's log: wrong results are named besides the busbw, never hidden behind it."""
    out, doc = _write(tmp_path, "small")
    _run_script(out, tmp_path, doc, SLOW_COLLECTIVE="none")
    real = Path(__file__).resolve().parents[1] / "data" / "nccl" / "all_gather_v100_dgx2_2019_failed.txt"
    (out / "logs/all_gather/fabric.log").write_text(real.read_text())
    assert run_judge(str(example("small")), str(out)) == 3
    text = capsys.readouterr().out
    assert "all_gather: '# Out of bounds values : 4' in logs/all_gather/fabric.log: nccl-tests found wrong results" in text
    assert "all_reduce: busbw" in text and "Out of bounds" not in text.replace("all_gather: '# Out of bounds", "")
