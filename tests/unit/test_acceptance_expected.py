"""expected.json for the three examples: the runs follow from the intent (node count,
groups, pod size, host naming) and the predicted busbw from rails x NIC speed.

The values are derived here from the intent, not read back from the code under test:
- a rail group is the nodes behind one set of rail leaves: the single-switch fabric has
  one (all nodes, so only the fabric run), medium's dragonfly-plus groups split 32 nodes
  16 + 16, large's three-tier pods take nodes_per_unit = 32 each;
- H100 NVLink (370 GB/s ring, 480 GB/s NVLS) is above every example's NICs, so at 16 GiB
  the busbw is bounded by the NICs: rails x 400 Gb/s / 8 x 0.94 (NCCL's "46-48 GB/s per
  NDR NIC", AddyLaddy in NVIDIA/nccl-tests#290, the efficiency allreduce.py cites), and the
  latency term costs under 1 %.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from generator.acceptance.command import run_write
from tests.conftest import EXAMPLES, example

GIB = 1 << 30


def intent_of(name: str) -> dict:
    return yaml.safe_load(example(name).read_text())


def host_names(name: str) -> list[str]:
    doc = intent_of(name)
    return [doc["hosts"]["name"].format(n=n) for n in range(1, doc["topology"]["nodes"] + 1)]


def planned_runs(name: str) -> dict[str, list[str]]:
    """run id -> hosts, from the intent alone."""
    doc, hosts = intent_of(name), host_names(name)
    t = doc["topology"]
    runs: dict[str, list[str]] = {}
    if t["kind"] == "dragonfly-plus":
        size = t["nodes"] // t["groups"]
        runs = {f"group{g + 1}": hosts[g * size:(g + 1) * size] for g in range(t["groups"])}
    elif t["kind"] == "three-tier":
        size = t["nodes_per_unit"]
        runs = {f"pod{p + 1}": hosts[p * size:(p + 1) * size] for p in range(t["nodes"] // size)}
    runs["fabric"] = hosts
    return runs


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, Path]:
    out = {}
    for name in EXAMPLES:
        d = tmp_path_factory.mktemp(name) / "acc"
        assert run_write(str(example(name)), str(d)) == 0
        out[name] = d
    return out


@pytest.mark.parametrize("name", EXAMPLES)
def test_runs_per_rail_group_and_fabric(outputs, name: str) -> None:
    doc = json.loads((outputs[name] / "expected.json").read_text())
    gpn = intent_of(name)["topology"]["gpus_per_node"]
    want = planned_runs(name)
    assert [r["id"] for r in doc["runs"]] == list(want)          # rail groups first, then the fabric
    for run in doc["runs"]:
        assert run["hosts"] == want[run["id"]]
        assert run["nodes"] == len(want[run["id"]]) and run["ranks"] == len(want[run["id"]]) * gpn
        assert run["log"] == f"logs/{run['id']}.log"
    assert doc["command"] == "all_reduce_perf -b 1G -e 16G -f 2 -g 1"
    assert doc["schema"] == "fabricgen.acceptance/1" and "2(n-1)/n" in doc["comment"]


def test_single_switch_group_is_the_fabric(outputs) -> None:
    doc = json.loads((outputs["small"] / "expected.json").read_text())
    assert [r["id"] for r in doc["runs"]] == ["fabric"]
    assert len(doc["skipped"]) == 1 and "every node" in doc["skipped"][0]


@pytest.mark.parametrize("name", EXAMPLES)
def test_predicted_busbw_is_the_nic_bound(outputs, name: str) -> None:
    t = intent_of(name)["topology"]
    nic_bound = t["rails"] * int(str(t["nic_speed"]).rstrip("G")) / 8 * 0.94
    doc = json.loads((outputs[name] / "expected.json").read_text())
    for run in doc["runs"]:
        sizes = [e["size_bytes"] for e in run["expected"]]
        assert sizes == [GIB, 2 * GIB, 4 * GIB, 8 * GIB, 16 * GIB]
        assert [e["count"] for e in run["expected"]] == [s // 4 for s in sizes]      # float
        busbw = [e["busbw_GBps"] for e in run["expected"]]
        assert busbw == sorted(busbw)                       # latency matters less as size grows
        assert 0.99 * nic_bound <= busbw[-1] <= nic_bound
        assert 0.95 * nic_bound <= busbw[0] <= busbw[-1]
        for e in run["expected"]:
            # nccl-tests' definitions: algbw = S / t, busbw = algbw * 2(n-1)/n
            n = run["ranks"]
            assert e["algbw_GBps"] == pytest.approx(e["size_bytes"] / 1e9 / (e["time_us"] / 1e6), rel=1e-5)
            assert e["busbw_GBps"] == pytest.approx(e["algbw_GBps"] * 2 * (n - 1) / n, rel=1e-6)


@pytest.mark.parametrize("name", ["medium", "large"])
def test_fabric_prediction_is_what_fabricgen_capacity_says(outputs, name: str, capsys) -> None:
    """The same model, not a fork: `capacity --message-size` gives the fabric run's figure."""
    from generator.capacity.command import run_capacity

    doc = json.loads((outputs[name] / "expected.json").read_text())
    fabric = next(r for r in doc["runs"] if r["id"] == "fabric")
    for e in (fabric["expected"][0], fabric["expected"][-1]):
        assert run_capacity(str(example(name)), message_size=str(e["size_bytes"]), what_if=[], fmt="json",
                            naive=False, output_dir=None) == 0
        cap = json.loads(capsys.readouterr().out)["allreduce"]
        assert (cap["algorithm"], cap["busbw_GBps"]) == (e["algorithm"], pytest.approx(e["busbw_GBps"], abs=1e-5))


def test_same_intent_same_bytes(outputs, tmp_path: Path) -> None:
    again = tmp_path / "again"
    assert run_write(str(example("large")), str(again)) == 0
    first = {p.name: p.read_bytes() for p in outputs["large"].iterdir()}
    assert first == {p.name: p.read_bytes() for p in again.iterdir()}
