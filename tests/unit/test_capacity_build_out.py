"""`fabricgen capacity` with topology.build_out: installed | build-out side by side, computed by
the existing figure code on the two compiled plans; without build_out nothing changes."""

import csv
import json
from collections import Counter

import pytest

from generator.capacity.advise import advise
from generator.capacity.analyze import analyze
from generator.capacity.bisection import closed_form_gbps
from generator.capacity.command import run_capacity
from generator.capacity.report import render_html
from generator.capacity.shape import capacity_json
from generator.capacity.text import render_text
from generator.capacity.whatif import load_base_data
from generator.intent.loader import LoadedIntent, parse_yaml, validate_data
from generator.plan.compile import compile_plan
from generator.plan.growth import build_out_intent
from generator.plan.model import TIER_HOST_LEAF, TIER_LEAF_SPINE

NODES, BUILD_OUT, RAILS, PER_UNIT, GPUS_PER_NODE, NIC_G = 64, 256, 8, 32, 8, 400
SN5600_PORTS_AT_400G = 128          # 64 x 800G, each split 2x400G

RAIL_OPT = f"""\
fabric: {{name: growth}}
topology:
  kind: rail-optimized
  nodes: {NODES}
  gpus_per_node: {GPUS_PER_NODE}
  gpu: H100
  rails: {RAILS}
  nic_speed: {NIC_G}G
  nodes_per_unit: {PER_UNIT}
  build_out: {{nodes: {BUILD_OUT}}}
workload:
  model_params: 70e9
  gradient_bytes_per_param: 2
  step_compute_ms: 200
  gpu_hour_usd: 2.5
"""
PLAIN = "\n".join(line for line in RAIL_OPT.splitlines() if "build_out" not in line) + "\n"


def intent_of(text: str):
    data, lines = parse_yaml(text, "fabric.yaml")
    return validate_data(data, lines, "fabric.yaml")


@pytest.fixture(scope="module")
def intent():
    return intent_of(RAIL_OPT)


@pytest.fixture(scope="module")
def a(intent):
    return analyze(intent, with_build_out=True)


@pytest.fixture(scope="module")
def plans(intent):
    return compile_plan(intent), compile_plan(build_out_intent(intent))


def roles(plan) -> Counter:
    return Counter(sw.role for sw in plan.switches)


def cli(tmp_path, capsys, text: str, fmt: str, **kw) -> str:
    path = tmp_path / "fabric.yaml"
    path.write_text(text)
    args = dict(message_size=None, what_if=[], fmt=fmt, naive=False, output_dir=None)
    args.update(kw)
    rc = run_capacity(str(path), **args)
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


def row(text: str, label: str) -> list[str]:
    """The cells of the row whose first cell is LABEL in the "Installed vs build-out" table."""
    section = text[text.index("Installed vs build-out"):]
    for line in section[:section.index("\n\n")].splitlines():
        if line.startswith(label + "  "):
            return [c.strip() for c in line[len(label):].split("  ") if c.strip()]
    raise AssertionError(f"no row {label!r} in\n{text}")


def test_switch_counts_are_the_two_plans(a, plans):
    installed, full = plans
    assert a.build_out is not None
    assert len(a.plan.switches) == len(installed.switches)
    assert len(a.build_out.plan.switches) == len(full.switches)
    for analysis, plan in ((a, installed), (a.build_out, full)):
        by_role = Counter()
        for tier in analysis.figures.switches:
            by_role[tier.role] += tier.count
        assert by_role == roles(plan)
        assert sum(b.quantity for b in analysis.bom if b.category == "switch") == len(plan.switches)


def leaves(nodes: int) -> int:
    return RAILS * -(-nodes // PER_UNIT)          # one leaf per rail per unit


def test_counts_from_the_intent_arithmetic(plans):
    installed, full = plans
    # 1:1: a leaf has as many uplinks as hosts; spines take every uplink of the build-out
    spines = leaves(BUILD_OUT) * PER_UNIT // SN5600_PORTS_AT_400G
    assert roles(installed) == {"leaf": leaves(NODES), "spine": spines} == {"leaf": 16, "spine": 16}
    assert roles(full) == {"leaf": leaves(BUILD_OUT), "spine": spines} == {"leaf": 64, "spine": 16}


def test_spine_tier_is_bought_in_full_in_phase_1(a, plans):
    installed, full = plans
    assert roles(installed)["spine"] == roles(full)["spine"]
    assert {s.name for s in installed.switches if s.role == "spine"} == {
        s.name for s in full.switches if s.role == "spine"}
    assert "the spine tier is bought for the 256-node build-out: 16 of 16 spines are in phase 1" in render_text(a, [])


def test_installed_bom_counts_installed_plan_cables(a, plans):
    installed, full = plans
    for analysis, plan in ((a, installed), (a.build_out, full)):
        links = Counter(link.tier for link in plan.links)
        parts = Counter()
        for b in analysis.bom:
            parts[(b.category, b.detail.split(",")[0])] += b.quantity
        # 400G NICs on 800G cages split 2x400G: one splitter DAC per two hosts' rail ports, one
        # fibre per leaf-spine link (a 400G link is one 4-lane optical port: plan/bom.py)
        assert parts[("cable", TIER_HOST_LEAF)] * 2 == links[TIER_HOST_LEAF]
        assert parts[("fibre", TIER_LEAF_SPINE)] == links[TIER_LEAF_SPINE]
    assert Counter(link.tier for link in installed.links) == {
        TIER_HOST_LEAF: NODES * RAILS, TIER_LEAF_SPINE: 16 * PER_UNIT}
    assert Counter(link.tier for link in full.links) == {
        TIER_HOST_LEAF: BUILD_OUT * RAILS, TIER_LEAF_SPINE: 64 * PER_UNIT}


def test_installed_cost_is_below_build_out_cost(a):
    mine, full = a.step, a.build_out.step
    assert mine is not None and full is not None
    assert mine.gpus == NODES * GPUS_PER_NODE and full.gpus == BUILD_OUT * GPUS_PER_NODE
    assert mine.usd_lost(mine.share_no_overlap) < full.usd_lost(full.share_no_overlap)
    assert sum(b.quantity for b in a.bom) < sum(b.quantity for b in a.build_out.bom)


def test_allreduce_and_bisection_run_on_the_installed_plan(a, plans):
    installed, full = plans
    assert a.allreduce.shape.nodes == len(installed.hosts) == NODES
    assert a.build_out.allreduce.shape.nodes == len(full.hosts) == BUILD_OUT
    assert a.bisection_gbps == closed_form_gbps(installed) == NODES // 2 * RAILS * NIC_G
    assert a.build_out.bisection_gbps == closed_form_gbps(full) == BUILD_OUT // 2 * RAILS * NIC_G


def test_text_shows_both_columns(tmp_path, capsys):
    out = cli(tmp_path, capsys, RAIL_OPT, "text")
    assert "Installed vs build-out (64 of 256 nodes)" in out
    header = next(line for line in out.splitlines() if line.startswith("figure") and "build-out" in line)
    assert header.split() == ["figure", "installed", "build-out"]
    assert row(out, "nodes") == ["64", "256"]
    assert row(out, "leaf switches (SN5600)") == ["16", "64"]
    assert row(out, "spine switches (SN5600)") == ["16", "16"]
    assert row(out, "switches total") == ["32", "80"]
    assert row(out, "fibre: multimode MPO-12/APC fibre, leaf-spine, 30 m") == ["512", "2,048"]
    assert row(out, "cable: 800G to 2x400G splitter DAC, host-leaf, 3 m") == ["256", "1,024"]
    assert row(out, "bisection bandwidth") == ["102.4 Tb/s", "409.6 Tb/s"]
    # every other section stays the installed fabric's
    assert "rail-optimized, 64 nodes x 8 H100 = 512 GPUs" in out


def test_markdown_and_html_carry_the_table(a, intent, tmp_path, capsys):
    md = cli(tmp_path, capsys, RAIL_OPT, "markdown")
    assert "## Installed vs build-out (64 of 256 nodes)" in md
    assert "| spine switches (SN5600) | 16 | 16 |" in md
    page = render_html(LoadedIntent(intent=intent, file="fabric.yaml", lines={}, text=RAIL_OPT), a, [])
    assert "<h2>Installed vs build-out (64 of 256 nodes)</h2>" in page
    assert "installed phase of a 256-node build-out" in page


def test_json_build_out_section(tmp_path, capsys, plans):
    installed, full = plans
    doc = json.loads(cli(tmp_path, capsys, RAIL_OPT, "json"))
    b = doc["build_out"]
    assert (b["nodes"], b["installed_nodes"], b["top_tier"]) == (BUILD_OUT, NODES, "spine")
    assert b["installed"]["switch_count"] == len(installed.switches)
    assert b["full"]["switch_count"] == len(full.switches)
    assert b["installed"]["bisection_tbps"] == pytest.approx(102.4)
    assert b["full"]["bisection_tbps"] == pytest.approx(409.6)
    assert b["installed"]["bom"] == doc["bom"]
    assert b["installed"]["step"] == doc["step"]
    assert b["installed"]["step"]["no_overlap"]["usd_lost_per_month"] < b["full"]["step"]["no_overlap"]["usd_lost_per_month"]
    assert list(doc).index("build_out") == list(doc).index("bom") + 1


def test_output_dir_writes_the_build_out_bom(tmp_path, capsys, plans):
    cli(tmp_path, capsys, RAIL_OPT, "text", output_dir=str(tmp_path / "out"))
    with open(tmp_path / "out" / "bom-build-out.csv", encoding="utf-8") as fh:
        switches = [r for r in csv.DictReader(fh) if r["category"] == "switch"]
    assert sum(int(r["quantity"]) for r in switches) == len(plans[1].switches)


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_without_build_out_output_is_unchanged(tmp_path, capsys, fmt):
    plain = intent_of(PLAIN)
    old = analyze(plain)                       # the code path from before build_out existed
    assert old.build_out is None
    advice = advise(old, load_base_data(PLAIN), with_speeds=False)     # issue 38: its section, same either way
    doc = {**capacity_json(old, [], []), "advice": [s.as_dict() for s in advice.suggestions]}
    expected = (json.dumps(doc, indent=2) + "\n" if fmt == "json"
                else render_text(old, [], markdown=fmt == "markdown", advice=advice))
    out = cli(tmp_path, capsys, PLAIN, fmt)
    assert out == expected
    assert "build-out" not in out and "build_out" not in out
    # build_out equal to nodes is no growth: the same bytes
    same = PLAIN.replace("  nodes_per_unit:", f"  build_out: {{nodes: {NODES}}}\n  nodes_per_unit:")
    assert "build_out" in same
    assert cli(tmp_path, capsys, same, fmt) == out


def test_what_if_rows_stay_installed_only(tmp_path, capsys):
    doc = json.loads(cli(tmp_path, capsys, RAIL_OPT, "json", what_if=["nodes=32,128"]))
    rows = {r["value"]: r for r in doc["what_if"]}
    assert rows[32]["ok"] and rows[128]["ok"]
    assert rows[32]["switches"] < rows[128]["switches"]


def test_three_tier_buys_the_super_spines(tmp_path, capsys):
    text = RAIL_OPT.replace("rail-optimized", "three-tier").replace(f"nodes_per_unit: {PER_UNIT}", "nodes_per_unit: 16")
    intent = intent_of(text)
    a = analyze(intent, with_build_out=True)
    installed, full = compile_plan(intent), compile_plan(build_out_intent(intent))
    assert roles(installed)["super-spine"] == roles(full)["super-spine"]
    assert roles(installed)["spine"] < roles(full)["spine"]
    out = render_text(a, [])
    assert row(out, "super-spine switches (SN5600)") == [str(roles(installed)["super-spine"])] * 2
    assert "the super-spine tier is bought for the 256-node build-out" in out
