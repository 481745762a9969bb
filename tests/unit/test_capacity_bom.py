"""Bill of materials counted from cages and splits, against counts reasoned by hand, and the
naive estimate quoting the field guide only for the guide's own example."""

from __future__ import annotations

import pytest

from generator.capacity.analyze import analyze
from generator.capacity.text import render_text
from generator.intent.loader import validate_data

# 64 nodes x 8 rails x 400G, 1:1, SN5600 (64 x 800G cages) everywhere, no build-out
COPPER_AND_SR4 = {
    "fabric": {"name": "bom"},
    "topology": {"kind": "rail-optimized", "nodes": 64, "rails": 8, "nic_speed": "400G", "gpu": "H100",
                 "oversubscription": "1:1", "switches": {"leaf": {"model": "SN5600"}, "spine": {"model": "SN5600"}},
                 "cables": {"host_leaf": 3, "leaf_spine": 30}},
}
# 32 nodes x 2 rails x 200G: 4x200G splits; 10 m host runs (optical), 100 m to the spines
SPLIT_200G = {
    "fabric": {"name": "b200"},
    "topology": {"kind": "rail-optimized", "nodes": 32, "rails": 2, "nic_speed": "200G",
                 "switches": {"leaf": {"model": "SN5600"}, "spine": {"model": "SN5600"}},
                 "cables": {"host_leaf": 10, "leaf_spine": 100}},
}


def bom_of(data: dict) -> dict[tuple[str, str, str], int]:
    a = analyze(validate_data(data, {}, "fabric.yaml"))
    return {(b.category, b.item, b.detail): b.quantity for b in a.bom}


def test_400g_copper_hosts_and_multimode_uplinks():
    bom = bom_of(COPPER_AND_SR4)
    # 512 NIC ports; two 400G NICs per 800G cage -> 256 host cages, each ONE 1:2 splitter DAC
    # (3 m is passive copper reach); 512 uplinks (1:1), two per cage at the leaf (a cage split to
    # two spines) and two per cage at the spine -> 256 + 256 twin-port transceivers, SR4 (30 m is
    # within multimode's 50 m), and one MPO fibre per 400G link; no AOC
    assert bom == {
        ("switch", "SN5600", "leaf, spine"): 64 // 32 * 8 + 4,   # 16 leaves, 512 uplinks / 128 ports
        ("nic-port", "400G", "64 hosts x 8 rails"): 512,
        ("transceiver", "800G twin-port OSFP 2x400G SR4 transceiver", "leaf-spine, switch cage"): 512,
        ("cable", "800G to 2x400G splitter DAC", "host-leaf, 3 m"): 256,
        ("fibre", "multimode MPO-12/APC fibre", "leaf-spine, 30 m"): 512,
    }


def test_200g_splits_optical_hosts_and_single_mode_uplinks():
    bom = bom_of(SPLIT_200G)
    # 64 NIC ends at 200G, four per 800G cage -> 16 host cages: 16 twin-port SR4 (10 m), 64 NIC
    # transceivers (400G parts on two lanes), two 1:2 splitter fibres per cage -> 32.
    # 64 uplinks at 200G, four per cage at both ends -> 16 + 16 cages with DR4 (100 m > 50 m);
    # each link a fibre path through a breakout panel
    assert bom == {
        ("switch", "SN5600", "leaf, spine"): 4,
        ("nic-port", "200G", "32 hosts x 2 rails"): 64,
        ("transceiver", "400G SR4 NIC transceiver, at 200G", "host-leaf, host end"): 64,
        ("transceiver", "800G twin-port OSFP 2x400G SR4 transceiver", "host-leaf, switch cage"): 16,
        ("transceiver", "800G twin-port OSFP 2x400G DR4 transceiver", "leaf-spine, switch cage"): 32,
        ("fibre", "multimode MPO-12/APC 1:2 splitter fibre", "host-leaf, 10 m"): 32,
        ("fibre", "single-mode MPO-12/APC fibre path via breakout panel, 200G", "leaf-spine, 100 m"): 64,
    }


def text_of(data: dict, message: int | None = None) -> str:
    return render_text(analyze(validate_data(data, {}, "fabric.yaml"), message), [])


def naive_rows(text: str) -> dict[str, str]:
    section = text[text.index("Naive estimate"):]
    rows = {}
    for line in section.split("\n\n")[0].splitlines()[3:]:
        key, _, value = line.partition("  ")
        rows[key] = value.strip()
    return rows


def test_guide_quoted_only_for_the_guides_example():
    # the guide's example: 256 GPUs with 200 Gb/s each (32 x 8 GPUs, 8 rails x 200G), 140 GB
    guide = {"fabric": {"name": "guide"},
             "topology": {"kind": "rail-optimized", "nodes": 32, "gpus_per_node": 8, "gpu": "H100", "rails": 8,
                          "nic_speed": "200G"}}
    rows = naive_rows(text_of(guide, 140_000_000_000))
    # bisection 32/2 x 8 x 200G = 25.6 Tb/s: 1,120 Gb / (25.6 Tb/s x 0.7) = 62.5 ms, printed "62 ms"
    assert rows["naive time"] == "62.50 ms (the field guide's example; it prints 62 ms)"
    assert rows["worked"].endswith("= 62 ms")
    # any other fabric or message: its own figure, nothing about the guide
    small = text_of(guide, 1_000_000)
    rows = naive_rows(small)
    # 8 Mb / (25.6 Tb/s x 0.7) = 446.4 ns
    assert rows["naive time"] == "0.4 us"
    assert rows["worked"].endswith("= 0.0004464 ms") and "guide" not in small[small.index("Naive"):]


@pytest.mark.parametrize("data", [COPPER_AND_SR4, SPLIT_200G])
def test_no_link_is_an_aoc(data):
    assert not any("AOC" in item for _, item, _ in bom_of(data))
