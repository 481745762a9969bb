"""FG114-FG116 (issue 38): the design warnings, each silent once the change it asks for is made."""

import pytest

from generator.checks.registry import RULES
from generator.checks.runner import run_checks
from generator.intent.loader import LoadedIntent, parse_yaml, validate_data

GROW = """\
fabric: {name: grow}
topology:
  kind: rail-optimized
  nodes: 32
  rails: 8
  nic_speed: 400G
  build_out: {nodes: 128}
"""


def codes(text: str) -> dict[str, str]:
    data, lines = parse_yaml(text, "fabric.yaml")
    intent = validate_data(data, lines, "fabric.yaml")
    result = run_checks(LoadedIntent(intent=intent, file="fabric.yaml", lines=lines, text=text))
    return {f.code: f.message for f in result.findings if f.code in ("FG114", "FG115", "FG116")}


def with_topology(line: str, text: str = GROW) -> str:
    return text.replace("  nodes: 32\n", f"  nodes: 32\n  {line}\n")


def test_half_empty_leaves_at_the_build_out_warn_until_the_unit_fills_them():
    assert "nodes_per_unit: 64" in codes(GROW)["FG114"]
    assert "FG114" not in codes(with_topology("nodes_per_unit: 64"))
    assert "FG114" not in codes(GROW.replace("  build_out: {nodes: 128}\n", ""))     # 32 nodes: one unit, no growth


def test_a_unit_larger_than_a_leaf_splits_its_rails():
    assert "2 leaves per rail" in codes(with_topology("nodes_per_unit: 128"))["FG116"]
    assert "FG116" not in codes(with_topology("nodes_per_unit: 64"))


@pytest.mark.parametrize("layout, warns", [
    ("layout: {servers_per_rack: 2}\n", True),                      # 16 racks for a unit: 7 m runs
    ("layout: {servers_per_rack: 8, racks_per_row: 4, rise_m: 1.5}\n", False),   # 2.7 m: DAC reaches
])
def test_dac_beyond_the_layouts_runs(layout, warns):
    found = codes(GROW + layout)
    assert ("FG115" in found) is warns
    if warns:
        assert "topology.cables.host_leaf: 7" in found["FG115"]
        assert "FG115" not in codes(with_topology("cables: {host_leaf: 7}", GROW + layout))


def test_without_layout_fg115_is_silent():
    assert "FG115" not in codes(GROW)


def test_the_rules_explain_themselves():
    for code in ("FG114", "FG115", "FG116"):
        assert RULES[code].explanation and "fabricgen advise" in RULES[code].explanation
