"""FG4xx addressing rules: each triggered by one intent and silent on a close one."""

from __future__ import annotations

import pytest

from tests.unit.test_rules_common import check, codes, findings, intent

# FG401 / FG402 (compiler) --------------------------------------------------------------------


def test_fg401_pool_too_small_comes_from_the_compiler():
    result = check(intent(**{"addressing.loopbacks": "10.255.0.0/29"}))
    (f,) = result.errors
    assert (f.code, f.path) == ("FG401", "addressing.loopbacks")
    assert "/28" in f.message


def test_fg402_host_named_like_a_switch():
    (f,) = check(intent(**{"hosts.name": "medium-spine-g1-{n}"})).errors
    assert (f.code, f.path) == ("FG402", "hosts.name")


# FG403 overlapping pools ---------------------------------------------------------------------

@pytest.mark.parametrize(("key", "value", "other"), [
    ("rails", "10.0.0.0/8", "loopbacks"),
    ("management", "172.16.8.0/24", "rails"),
    ("management", "10.255.128.0/20", "loopbacks"),
])
def test_fg403_overlap(key, value, other):
    result = check(intent(**{f"addressing.{key}": value}))
    (f,) = [f for f in result.findings if f.code == "FG403"]
    assert f.severity == "error"
    assert f.path == f"addressing.{key}"
    assert f"addressing.{other}" in f.message
    assert result.plan is None


def test_fg403_numbered_fabric_links_count_unnumbered_do_not():
    (f,) = findings(intent(**{"addressing.fabric_links": "10.255.128.0/17"}), "FG403")
    assert "loopbacks" in f.message
    assert "FG403" not in codes(intent(**{"addressing.fabric_links": "10.254.0.0/16"}))
    assert "FG403" not in codes(intent())


def test_fg403_adjacent_pools_do_not_overlap():
    assert "FG403" not in codes(intent(**{"addressing.loopbacks": "10.0.0.0/16",
                                          "addressing.management": "10.1.0.0/20"}))


# FG404 ASN collisions ------------------------------------------------------------------------

def test_fg404_leaf_asn_equals_a_spine_asn():
    # dragonfly group spines use spine and spine+1; leaves leaf_base+1..+8
    (f,) = findings(intent(**{"addressing.asn.leaf_base": 64999}), "FG404")
    assert (f.severity, f.path) == ("error", "addressing.asn.leaf_base")
    assert "65000" in f.message and "1 more" in f.message


def test_fg404_three_tier_pod_spines():
    # super-spines get spine, pod spines spine+pod: 65000..65002; 16 leaves from leaf_base+1
    (f,) = findings(intent("large", **{"addressing.asn.leaf_base": 64995}), "FG404")
    assert "65000" in f.message and "2 more" in f.message
    (f,) = findings(intent("large", **{"addressing.asn.leaf_base": 65001}), "FG404")
    assert "large-spine-pod2-1 both get ASN 65002" in f.message


def test_fg404_silent_when_ranges_are_apart():
    assert "FG404" not in codes(intent())
    assert "FG404" not in codes(intent("large"))
    # spine ASN just past the last leaf
    assert "FG404" not in codes(intent(**{"addressing.asn.leaf_base": 64991}))


# FG405 ASN range / reserved ------------------------------------------------------------------

@pytest.mark.parametrize(("key", "value", "why"), [
    ("spine", 0, "AS 0"),
    ("spine", 23456, "AS_TRANS"),
    ("spine", 65535, "reserved"),
    ("spine", -7, "outside"),
    ("spine", 4294967296, "outside"),
    ("leaf_base", 4294967295, "outside"),      # leaf 1 is already past 2^32-1
    ("leaf_base", 4294967290, "reserved"),     # leaf 5 lands on 4294967295
    ("leaf_base", 23450, "AS_TRANS"),          # the 6th leaf lands on 23456
])
def test_fg405_asn_out_of_range_or_reserved(key, value, why):
    result = check(intent(**{f"addressing.asn.{key}": value}))
    fs = [f for f in result.findings if f.code == "FG405"]
    assert len(fs) == 1
    assert (fs[0].severity, fs[0].path) == ("error", f"addressing.asn.{key}")
    assert why in fs[0].message


@pytest.mark.parametrize(("key", "value"), [("spine", 1), ("spine", 4294967000), ("leaf_base", 4294967200)])
def test_fg405_silent_in_range(key, value):
    assert "FG405" not in codes(intent(**{f"addressing.asn.{key}": value}))


# FG406 public ASN ----------------------------------------------------------------------------

def test_fg406_public_asn_warns_once_per_key():
    result = check(intent(**{"addressing.asn.spine": 100, "addressing.asn.leaf_base": 200}))
    fs = [f for f in result.findings if f.code == "FG406"]
    assert {f.path for f in fs} == {"addressing.asn.spine", "addressing.asn.leaf_base"}
    assert all(f.severity == "warning" for f in fs)
    assert result.errors == []


def test_fg406_leaf_base_running_out_of_the_2_byte_private_range():
    (f,) = findings(intent(**{"addressing.asn.leaf_base": 65530}), "FG405")   # 65535 reserved
    (g,) = findings(intent(**{"addressing.asn.leaf_base": 65530}), "FG406")   # 65536.. public
    assert f.path == g.path == "addressing.asn.leaf_base"


def test_fg406_silent_for_private_asns():
    assert "FG406" not in codes(intent())
    assert "FG406" not in codes(intent(**{"addressing.asn.spine": 4200000000,
                                          "addressing.asn.leaf_base": 4200000100}))
