"""The communication share states its model and takes workload.comm_overlap (issue 38)."""

import json

import pytest

from generator.capacity.command import run_capacity
from generator.capacity.cost import StepCost

INTENT = """\
fabric: {name: dp}
topology: {kind: rail-optimized, nodes: 32, gpu: H100, rails: 8, nic_speed: 400G}
workload: {model_params: 70e9, gradient_bytes_per_param: 2, step_compute_ms: 200, gpu_hour_usd: 2.5%s}
"""


@pytest.mark.parametrize("compute, comm", [(0.2, 0.5), (0.5, 0.2)])
def test_overlap_zero_and_one_are_the_two_schedules(compute, comm):
    s = StepCost(compute, comm, 256, None)
    assert s.share_at(0) == pytest.approx(s.share_no_overlap)
    assert s.share_at(1) == pytest.approx(s.share_overlap)
    assert s.share_no_overlap >= s.share_at(0.5) >= s.share_overlap


def run(tmp_path, capsys, extra: str, fmt: str) -> str:
    path = tmp_path / "fabric.yaml"
    path.write_text(INTENT % extra)
    rc = run_capacity(str(path), message_size=None, what_if=[], fmt=fmt, naive=False, output_dir=None)
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


def test_the_share_names_its_model_and_the_intents_overlap(tmp_path, capsys):
    plain = run(tmp_path, capsys, "", "text")
    assert "model: data-parallel all-reduce" in plain and "comm_overlap" not in plain
    text = run(tmp_path, capsys, ", comm_overlap: 0.5", "text")
    assert "50% overlap (workload.comm_overlap)" in text
    step = json.loads(run(tmp_path, capsys, ", comm_overlap: 0.5", "json"))["step"]
    assert step["intent_overlap"]["overlap"] == 0.5
    assert step["no_overlap"]["comm_share"] > step["intent_overlap"]["comm_share"] >= step["overlap"]["comm_share"]
    assert step["model"].startswith("data-parallel")


def test_an_overlap_above_one_is_refused(tmp_path, capsys):
    path = tmp_path / "fabric.yaml"
    path.write_text(INTENT % ", comm_overlap: 1.5")
    assert run_capacity(str(path), message_size=None, what_if=[], fmt="text", naive=False, output_dir=None) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "workload.comm_overlap" in err
