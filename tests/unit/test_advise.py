"""`fabricgen advise` (issue 38): every figure of a suggestion is the plan code's on the intent
with the change applied, so the tests compute the expected counts with compile_plan too."""

import json
from collections import Counter

import pytest
import yaml

from generator.capacity.advise import advise, apply_change
from generator.capacity.analyze import analyze
from generator.capacity.command import run_advise
from generator.capacity.whatif import load_base_data
from generator.intent.loader import parse_yaml, validate_data
from generator.plan.compile import compile_plan
from generator.plan.growth import build_out_intent

GROW = """\
fabric: {name: grow}
topology:
  kind: rail-optimized
  nodes: 32
  gpu: H100
  rails: 8
  nic_speed: 400G
  switches: {leaf: {model: SN5600}, spine: {model: SN5600}}
  build_out: {nodes: 128}
"""


def advice_of(text: str, **kw):
    data, lines = parse_yaml(text, "fabric.yaml")
    intent = validate_data(data, lines, "fabric.yaml")
    return advise(analyze(intent, with_build_out=True), load_base_data(text), **kw)


def build_out_switches(text: str, per_unit: int) -> Counter:
    data, lines = parse_yaml(text, "fabric.yaml")
    data["topology"]["nodes_per_unit"] = per_unit
    intent = validate_data(data, lines, "fabric.yaml")
    return Counter(sw.role for sw in compile_plan(build_out_intent(intent)).switches)


def by_id(advice):
    return {s.id: s for s in advice.suggestions}


def figure(s, name: str) -> tuple[str, str]:
    row = next(r for r in s.rows if r[0] == name)
    return row[1], row[2]


@pytest.fixture(scope="module")
def grow():
    return advice_of(GROW, with_speeds=False)


def test_unit_size_fills_the_leaf_with_the_plan_codes_switch_counts(grow):
    s = by_id(grow)["unit-size"]
    assert s.change == (("topology.nodes_per_unit", 64),)
    now, then = build_out_switches(GROW, 32), build_out_switches(GROW, 64)
    assert (sum(now.values()), sum(then.values())) == (40, 24)        # the figures, from compile_plan
    assert figure(s, "switches total at 128 nodes") == (str(sum(now.values())), str(sum(then.values())))
    assert figure(s, "leaf switches at 128 nodes") == (str(now["leaf"]), str(then["leaf"]))
    assert ("switch", "SN5600, leaf, spine", 40, 24) in s.bom_delta
    assert "nodes_per_unit: 64" in s.yaml()


def test_media_by_distance_changes_the_bom(grow):
    s = by_id(grow)["cable-media"]
    assert s.kind == "fix" and s.id == grow.suggestions[0].id          # ranked first: the BOM is wrong
    length = dict(s.change)["topology.cables.host_leaf"]
    assert length == grow.runs.host_leaf_max > 3
    items = {item: (a, b) for _, item, a, b in s.bom_delta}
    dac = next(k for k in items if "DAC" in k)
    assert items[dac] == (512, 0)                                       # no copper where it does not reach
    assert any("SR4" in k and b > 0 for k, (a, b) in items.items())


@pytest.mark.parametrize("which", ["unit-size", "cable-media"])
def test_applying_a_suggestion_makes_it_go_away(grow, which):
    data = apply_change(load_base_data(GROW), by_id(grow)[which].change)
    again = advice_of(yaml.safe_dump(data), with_speeds=False)
    assert which not in by_id(again)
    assert "spines-later" in by_id(again)


def test_media_follows_the_unit_size(grow):
    """64-node units span two rows of the default layout: the runs, hence the media, change with
    the unit, so applying one suggestion can change another (both from the same plan)."""
    data = apply_change(load_base_data(GROW), by_id(grow)["unit-size"].change)
    again = advice_of(yaml.safe_dump(data), with_speeds=False)
    assert again.runs.host_leaf_max > grow.runs.host_leaf_max


def test_spines_later_names_the_recabling_node(grow):
    s = by_id(grow)["spines-later"]
    data = load_base_data(GROW)
    del data["topology"]["build_out"]
    spines = Counter(sw.role for sw in compile_plan(validate_data(data, {}, "f.yaml")).switches)["spine"]
    assert figure(s, "spines bought now (32 nodes)") == ("8", str(spines))
    assert "at node 33" in figure(s, "first re-cabling")[1]


def test_a_layout_where_dac_reaches_keeps_dac():
    text = GROW.replace("  build_out: {nodes: 128}\n", "") + (
        "layout: {servers_per_rack: 8, racks_per_row: 4, rack_width_m: 0.6, rise_m: 1.5}\n")
    advice = advice_of(text, with_speeds=False)
    assert advice.runs.host_leaf_max <= 3 and not advice.runs.stated
    media = by_id(advice).get("cable-media")
    assert media is None or "topology.cables.host_leaf" not in dict(media.change)


def test_cli_formats_and_bad_input(tmp_path, capsys):
    path = tmp_path / "fabric.yaml"
    path.write_text(GROW)
    assert run_advise(str(path), "json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["schema"] == "fabricgen.advise/1"
    assert [s["id"] for s in out["suggestions"]] == ["cable-media", "unit-size", "spines-later"]
    assert {o["nic_speed_g"] for o in out["speed_options"]} >= {400, 800}
    assert run_advise(str(path), "markdown") == 0
    assert "```yaml\ntopology:\n  nodes_per_unit: 64\n```" in capsys.readouterr().out
    path.write_text(GROW.replace("nodes: 32", "nodes: many"))
    assert run_advise(str(path), "text") == 1
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "topology.nodes" in err


def test_capacity_and_the_report_carry_the_advice(tmp_path, capsys):
    from generator.capacity.command import run_capacity, run_report

    path = tmp_path / "fabric.yaml"
    path.write_text(GROW)
    assert run_capacity(str(path), message_size=None, what_if=[], fmt="text", naive=False, output_dir=None) == 0
    text = capsys.readouterr().out
    section = text[text.index("\nDesign advice\n"):]
    assert "topology.nodes_per_unit: 64" in section and "topology.cables.host_leaf: " in section
    assert run_capacity(str(path), message_size=None, what_if=[], fmt="json", naive=False, output_dir=None) == 0
    assert [s["id"] for s in json.loads(capsys.readouterr().out)["advice"]] == [
        "cable-media", "unit-size", "spines-later"]
    assert run_report(str(path), str(tmp_path / "r.html")) == 0
    html = (tmp_path / "r.html").read_text()
    assert html.count('<h3 class="suggestion">') == 3 and "nodes_per_unit: 64" in html
