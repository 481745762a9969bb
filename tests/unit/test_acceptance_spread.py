"""Load spread across a leaf's uplinks: above 1.25 x the mean is a finding with the hashing hint."""

from __future__ import annotations

from generator.acceptance.spread import spread


def test_an_uplink_above_the_limit_is_named_with_the_hint():
    # 4 uplinks, 8 flows of 10 GB hashed 3/2/2/1: the mean is 20 GB, swp1 carries 1.5 x
    found = spread({"leaf1": {"swp1": 30, "swp2": 20, "swp3": 20, "swp4": 10}, "leaf2": {"swp1": 5, "swp2": 5}})
    assert [(f.leaf, f.port, round(f.ratio, 2)) for f in found] == [("leaf1", "swp1", 1.5)]
    assert "NCCL_IB_QPS_PER_CONNECTION" in found[0].line() and "UDP source port" in found[0].line()


def test_even_or_idle_uplinks_are_clean_and_the_limit_is_strict():
    assert spread({"leaf1": {"swp1": 25, "swp2": 15, "swp3": 20, "swp4": 20}}) == []    # 1.25 x: not above
    assert spread({"leaf1": {"swp1": 0, "swp2": 0}, "leaf2": {"swp1": 100}}) == []
