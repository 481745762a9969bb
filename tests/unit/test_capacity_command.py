"""run_capacity end to end: JSON shape, --naive, what-if rows, bad input exits 1 with one line."""

import json

import pytest

from generator.capacity.command import run_capacity

GUIDE = """\
fabric: {name: guide}
topology:
  kind: rail-optimized
  nodes: 32
  gpus_per_node: 8
  gpu: H100
  rails: 8
  nic_speed: 200G
workload:
  model_params: 70e9
  gradient_bytes_per_param: 2
  step_compute_ms: 200
  gpu_hour_usd: 2.5
"""


@pytest.fixture
def guide(tmp_path):
    p = tmp_path / "fabric.yaml"
    p.write_text(GUIDE)
    return str(p)


def run(path, capsys, **kw):
    args = dict(message_size=None, what_if=[], fmt="json", naive=False, output_dir=None)
    args.update(kw)
    rc = run_capacity(path, **args)
    out, err = capsys.readouterr()
    return rc, out, err


def test_json_shape(guide, capsys):
    rc, out, err = run(guide, capsys)
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["schema"] == "fabricgen.capacity/1"
    assert doc["bisection_tbps"] == pytest.approx(25.6)
    assert doc["oversubscription"]["intent"] == "1:1"
    ar = doc["allreduce"]
    assert ar["message_bytes"] == 140_000_000_000
    assert set(ar) >= {"algorithm", "time_s", "algbw_GBps", "busbw_GBps"}
    assert ar["algbw_GBps"] == pytest.approx(140 / ar["time_s"], rel=1e-6)
    assert {"time_s"} <= set(doc["naive"])
    assert {b["category"] for b in doc["bom"]} >= {"switch", "cable", "nic-port"}
    assert doc["step"]["no_overlap"]["comm_share"] > 0.5


def test_naive_flag_reproduces_62_ms_and_shows_the_real_figure(guide, capsys):
    rc, out, _ = run(guide, capsys, fmt="text", naive=True)
    assert rc == 0
    assert "= 62 ms" in out
    assert "likely NCCL choice" in out
    rc, out, _ = run(guide, capsys, naive=True)
    doc = json.loads(out)
    assert doc["naive"]["time_s"] == pytest.approx(0.0625)
    assert doc["naive"]["guide_mode"] is True
    assert doc["allreduce"]["time_s"] > 1.3          # ~1.4 s: about 23x the naive figure
    assert doc["naive"]["ratio"] > 20


def test_what_if_rows_and_plots(guide, capsys, tmp_path):
    # two scalable units of 16 nodes, so the leaf uplinks sit in the cut
    two_units = tmp_path / "two.yaml"
    two_units.write_text(GUIDE.replace("  nic_speed: 200G", "  nic_speed: 200G\n  nodes_per_unit: 16"))
    rc, out, err = run(str(two_units), capsys, what_if=["nic_speed=200G,400G,800G", "oversubscription=1:1,2:1"],
                       output_dir=str(tmp_path / "out"))
    assert rc == 0, err
    rows = json.loads(out)["what_if"]
    speeds = [r for r in rows if r["key"] == "topology.nic_speed"]
    assert [r["value"] for r in speeds] == ["200G", "400G", "800G"]
    times = [r["time_s"] for r in speeds]
    assert times[0] > times[1] > times[2]
    over = [r for r in rows if r["key"] == "topology.oversubscription"]
    assert over[1]["bisection_tbps"] == pytest.approx(over[0]["bisection_tbps"] / 2)
    for ext in ("png", "svg"):
        assert (tmp_path / "out" / f"what-if-topology-nic-speed.{ext}").stat().st_size > 1000
    assert (tmp_path / "out" / "bom.csv").read_text().startswith("category,item,detail,quantity")


def test_plots_are_byte_stable(guide, capsys, tmp_path):
    for d in ("a", "b"):
        run(guide, capsys, what_if=["rails=2,4,8"], output_dir=str(tmp_path / d))
    for ext in ("png", "svg"):
        name = f"what-if-topology-rails.{ext}"
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


@pytest.mark.parametrize(("kw", "needle"), [
    (dict(message_size="12XB"), "--message-size '12XB' is not a size"),
    (dict(what_if=["colour=red"]), "--what-if key 'colour' is not in the intent"),
    (dict(what_if=["nic_speed=fast"]), "topology.nic_speed"),
    (dict(fmt="yaml"), "--format 'yaml'"),
])
def test_bad_input_exits_1_with_one_line(guide, capsys, kw, needle):
    rc, out, err = run(guide, capsys, **kw)
    assert rc == 1
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert needle in err


def test_unknown_gpu_names_it_and_lists_known(tmp_path, capsys):
    p = tmp_path / "fabric.yaml"
    p.write_text(GUIDE.replace("gpu: H100", "gpu: Z900"))
    rc, _, err = run(str(p), capsys)
    assert rc == 1
    assert len(err.strip().splitlines()) == 1
    assert "'Z900'" in err and "H100" in err and "A100" in err
    assert f"{p}:6: topology.gpu" in err


def test_message_size_override(guide, capsys):
    rc, out, _ = run(guide, capsys, message_size="1GiB")
    assert json.loads(out)["allreduce"]["message_bytes"] == 1 << 30
    rc, out, _ = run(guide, capsys, message_size="1.4e11")
    assert json.loads(out)["allreduce"]["message_bytes"] == 140_000_000_000


@pytest.mark.parametrize("name", ["small", "medium", "large"])
def test_examples_render_in_every_format(name, capsys):
    for fmt in ("text", "markdown", "json"):
        rc, out, err = run(f"inventories/{name}/fabric.yaml", capsys, fmt=fmt)
        assert rc == 0, err
        assert out
