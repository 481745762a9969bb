"""FG2xx lossless/QoS rules: each triggered by one intent and silent on a close one."""

from __future__ import annotations

import dataclasses

import pytest

from generator.checks.qos_rules import pfc_multiple_priorities, roce_active_mtu
from generator.checks.registry import CheckContext
from tests.unit.test_rules_common import check, codes, findings, intent


def lossy(**changes):
    return intent(**{"roce.mode": "lossy", **changes})


# FG201 ECN disabled --------------------------------------------------------------------------

def test_fg201_ecn_off_with_pfc():
    (f,) = findings(intent(**{"roce.ecn.enabled": False}), "FG201")
    assert (f.severity, f.path) == ("error", "roce.ecn.enabled")
    assert "PFC" in f.message and "pause" in f.message


def test_fg201_ecn_off_in_lossy_mode():
    (f,) = findings(lossy(**{"roce.ecn.enabled": False}), "FG201")
    assert "lossy" in f.message


def test_fg201_silent_with_ecn_on():
    assert "FG201" not in codes(intent())
    assert "FG201" not in codes(lossy())


# FG202 / FG203 ECN thresholds and probability -----------------------------------------------

@pytest.mark.parametrize(("lo", "hi"), [("1500KB", "150KB"), ("150KB", "150KB"), (200000, "200KB")])
def test_fg202_min_not_below_max(lo, hi):
    (f,) = findings(intent(**{"roce.ecn.min_threshold": lo, "roce.ecn.max_threshold": hi}), "FG202")
    assert (f.severity, f.path) == ("error", "roce.ecn.min_threshold")


def test_fg202_silent_with_a_ramp():
    assert "FG202" not in codes(intent(**{"roce.ecn.min_threshold": "100KB", "roce.ecn.max_threshold": "101KB"}))


@pytest.mark.parametrize("p", [0, -5, 101, 1000])
def test_fg203_probability_out_of_range(p):
    (f,) = findings(intent(**{"roce.ecn.probability": p}), "FG203")
    assert (f.severity, f.path) == ("error", "roce.ecn.probability")
    assert str(p) in f.message


@pytest.mark.parametrize("p", [1, 50, 100])
def test_fg203_silent_in_range(p):
    assert "FG203" not in codes(intent(**{"roce.ecn.probability": p}))


# FG204 ECN min vs smallest xoff --------------------------------------------------------------

def test_fg204_ecn_min_above_smallest_xoff():
    result = check(intent(**{"roce.ecn.min_threshold": "300KB"}))
    (f,) = [f for f in result.findings if f.code == "FG204"]
    assert (f.severity, f.path) == ("warning", "roce.ecn.min_threshold")
    smallest = min(p.headroom.xoff for p in result.plan.ports if p.lossless)
    assert f"smallest PFC xoff {smallest} B" in f.message


def test_fg204_silent_with_nvidia_defaults_at_400g_and_in_lossy_mode():
    assert "FG204" not in codes(intent())
    assert "FG204" not in codes(lossy(**{"roce.ecn.min_threshold": "300KB"}))


def test_fg204_boundary_is_the_xoff_itself():
    plan = check(intent()).plan
    smallest = min(p.headroom.xoff for p in plan.ports if p.lossless)
    assert "FG204" in codes(intent(**{"roce.ecn.min_threshold": smallest}))
    assert "FG204" not in codes(intent(**{"roce.ecn.min_threshold": smallest - 1}))


# FG205 .. FG207 priorities and DSCPs --------------------------------------------------------

def test_fg205_cnp_on_the_roce_priority():
    (f,) = findings(intent(**{"roce.cnp_priority": 3}), "FG205")
    assert (f.severity, f.path) == ("error", "roce.cnp_priority")


def test_fg205_cnp_on_the_roce_dscp():
    (f,) = findings(intent(**{"roce.cnp_dscp": 26}), "FG205")
    assert f.path == "roce.cnp_dscp"


def test_fg205_silent_when_apart():
    assert "FG205" not in codes(intent(**{"roce.cnp_dscp": 46, "roce.cnp_priority": 5}))


@pytest.mark.parametrize(("key", "value"), [("dscp", 64), ("dscp", -1), ("cnp_dscp", 100)])
def test_fg206_dscp_out_of_range(key, value):
    (f,) = findings(intent(**{f"roce.{key}": value}), "FG206")
    assert (f.severity, f.path) == ("error", f"roce.{key}")


@pytest.mark.parametrize("value", [0, 24, 63])
def test_fg206_silent_in_range(value):
    assert "FG206" not in codes(intent(**{"roce.dscp": value}))


@pytest.mark.parametrize(("key", "value"), [("priority", 8), ("priority", -1), ("cnp_priority", 15)])
def test_fg207_priority_out_of_range(key, value):
    result = check(intent(**{f"roce.{key}": value}))
    (f,) = [f for f in result.findings if f.code == "FG207"]
    assert (f.severity, f.path) == ("error", f"roce.{key}")
    assert result.plan is None     # never compiled into a QoS map


@pytest.mark.parametrize("value", [1, 5, 7])
def test_fg207_silent_in_range(value):
    assert "FG207" not in codes(intent(**{"roce.priority": value}))


# FG208 bandwidth share -----------------------------------------------------------------------

def test_fg208_small_roce_share():
    (f,) = findings(intent(**{"roce.bandwidth_percent": 30}), "FG208")
    assert (f.severity, f.path) == ("warning", "roce.bandwidth_percent")
    assert "70%" in f.message


@pytest.mark.parametrize("bw", [50, 80, 99])
def test_fg208_silent_at_half_or_more(bw):
    assert "FG208" not in codes(intent(**{"roce.bandwidth_percent": bw}))


# FG209 / FG210 MTU ---------------------------------------------------------------------------

def test_fg209_host_mtu_above_switch():
    (f,) = findings(intent(**{"roce.mtu": {"switch": 9000, "host": 9216}}), "FG209")
    assert (f.severity, f.path) == ("error", "roce.mtu.host")


def test_fg209_silent_when_equal_or_below():
    assert "FG209" not in codes(intent(**{"roce.mtu": {"switch": 9000, "host": 9000}}))


@pytest.mark.parametrize(("host", "active"), [(4200, 4096), (9000, 4096), (4192, 4096), (4191, 2048),
                                              (4000, 2048), (1500, 1024), (576, 256)])
def test_roce_active_mtu_follows_the_kernel(host, active):
    assert roce_active_mtu(host) == active


@pytest.mark.parametrize("host", [4191, 4000, 1500])
def test_fg210_roce_mtu_below_4096(host):
    (f,) = findings(intent(**{"roce.mtu.host": host}), "FG210")
    assert (f.severity, f.path) == ("warning", "roce.mtu.host")


@pytest.mark.parametrize("host", [4192, 4200, 9000])
def test_fg210_silent_at_4096(host):
    assert "FG210" not in codes(intent(**{"roce.mtu.host": host}))


# FG211 PFC priorities (the intent has one RoCE priority today: exercise the rule on a plan) ---

def test_fg211_more_than_one_pfc_priority():
    result = check(intent())
    plan = dataclasses.replace(result.plan, qos=dataclasses.replace(result.plan.qos, pfc_priorities=(3, 4)))
    ((path, message),) = list(pfc_multiple_priorities(CheckContext(None, plan)))
    assert path == "roce.priority" and "3, 4" in message


def test_fg211_silent_with_one_or_none():
    assert "FG211" not in codes(intent())
    assert "FG211" not in codes(lossy())


# FG212 watchdog ------------------------------------------------------------------------------

def test_fg212_watchdog_off():
    (f,) = findings(intent(**{"roce.pfc_watchdog": False}), "FG212")
    assert (f.severity, f.path) == ("warning", "roce.pfc_watchdog")


def test_fg212_silent_when_on_or_lossy():
    assert "FG212" not in codes(intent())
    assert "FG212" not in codes(lossy(**{"roce.pfc_watchdog": False}))


# FG213 priority 0 ----------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["priority", "cnp_priority"])
def test_fg213_priority_zero(key):
    (f,) = findings(intent(**{f"roce.{key}": 0}), "FG213")
    assert (f.severity, f.path) == ("error", f"roce.{key}")


def test_fg213_silent_otherwise():
    assert "FG213" not in codes(intent())


# FG220 / FG221 buffer budget -----------------------------------------------------------------

def sn2700(host_leaf_m):
    """16 nodes x 2 x 100G on one SN2700 (32 ports, 3.3 MB lossless pool)."""
    return intent("small", **{"topology.switches.leaf.model": "SN2700", "topology.nic_speed": "100G",
                              "topology.nodes": 16, "topology.cables.host_leaf": host_leaf_m})


def test_fg220_headroom_over_the_pool():
    result = check(sn2700(100))
    (f,) = [f for f in result.findings if f.code == "FG220"]
    assert (f.severity, f.path) == ("error", "topology.switches.leaf.model")
    assert "small-leaf-1 (SN2700)" in f.message and "100 m" in f.message
    assert "FG221" not in {f.code for f in result.findings}


def test_fg221_headroom_above_80_percent():
    result = check(sn2700(30))
    (f,) = [f for f in result.findings if f.code == "FG221"]
    assert (f.severity, f.path) == ("warning", "topology.switches.leaf.model")
    assert "small-leaf-1" in f.message
    assert "FG220" not in {f.code for f in result.findings}


def test_fg221_groups_a_tier_into_one_line_naming_the_worst_switch():
    findings_ = [f for f in check(intent("large")).findings if f.code == "FG221"]
    by_path = {f.path: f.message for f in findings_}
    assert by_path["topology.switches.super_spine.model"].startswith("large-super-spine-1 (SN5600)")
    assert "3 more super-spine switch(es)" in by_path["topology.switches.super_spine.model"]


def test_budget_rules_silent_within_80_percent_and_in_lossy_mode():
    assert not {"FG220", "FG221"} & codes(intent())
    assert not {"FG220", "FG221"} & codes(intent("small"))
    assert not {"FG220", "FG221"} & codes(intent("large", **{"roce.mode": "lossy"}))
