"""FG1xx topology rules: each triggered by one intent and silent on a close one."""

from __future__ import annotations

import pytest

from generator.intent.loader import IntentError, validate_data
from tests.unit.test_rules_common import DELETE, check, codes, findings, intent


def single(**changes):
    """The small example (single SN4700): a fabric with no uplinks."""
    return intent("small", **changes)


# FG102 / FG103 -------------------------------------------------------------------------------

def test_fg102_sn2201_with_400g_nics_names_the_model():
    (f,) = findings(single(**{"topology.switches.leaf.model": "SN2201"}), "FG102")
    assert f.severity == "error"
    assert f.path == "topology.switches.leaf.model"
    assert "SN2201" in f.message and "400G" in f.message and "100G" in f.message


def test_fg102_unknown_spine_model():
    (f,) = findings(intent(**{"topology.switches.spine.model": "SN9999"}), "FG102")
    assert f.path == "topology.switches.spine.model"
    assert "unknown switch model 'SN9999'" in f.message and "SN5600" in f.message


def test_fg102_model_without_the_speed_even_by_breakout():
    # SN5600 splits 800G into 400/200/100G, never 50G; 50G is not above its fastest port
    result = check(intent(**{"topology.nic_speed": "50G"}))
    assert {f.code for f in result.errors} == {"FG102"}
    assert {f.path for f in result.errors} == {"topology.switches.leaf.model", "topology.switches.spine.model"}


def test_fg102_only_checks_tiers_the_kind_uses():
    # a single switch never builds spines, so an unusable spine model does not matter
    assert "FG102" not in codes(single(**{"topology.switches.spine": {"model": "SN2201"}}))


def test_fg102_silent_on_a_model_with_the_speed():
    assert "FG102" not in codes(single())
    assert "FG102" not in codes(intent(**{"topology.nic_speed": "200G"}))   # SN5600 800G as 4 x 200G
    assert "FG102" not in codes(intent(**{"topology.nic_speed": "100G"}))


def test_fg103_nic_faster_than_leaf():
    (f,) = findings(single(**{"topology.switches.leaf.model": "SN2201"}), "FG103")
    assert f.path == "topology.nic_speed"
    assert "SN2201" in f.message and "100G" in f.message
    (f,) = findings(single(**{"topology.nic_speed": "800G"}), "FG103")
    assert "SN4700" in f.message


def test_fg103_silent_when_the_leaf_is_fast_enough():
    assert "FG103" not in codes(single())
    assert "FG103" not in codes(intent(**{"topology.nic_speed": "800G"}))   # SN5600 has native 800G ports


# FG104 (compiler) ----------------------------------------------------------------------------

def test_fg104_single_switch_out_of_ports():
    result = check(single(**{"topology.nodes": 17}))   # 34 NICs, 32 ports on an SN4700
    (f,) = result.errors
    assert (f.code, f.path) == ("FG104", "topology.nodes")
    assert "SN4700" in f.message
    assert result.plan is None


def test_fg104_silent_when_it_fits():
    assert "FG104" not in codes(single(**{"topology.nodes": 16}))


# FG105 / FG106 oversubscription --------------------------------------------------------------

def test_fg105_above_2_to_1_is_an_error():
    (f,) = findings(intent(**{"topology.oversubscription": "3:1"}), "FG105")
    assert (f.severity, f.path) == ("error", "topology.oversubscription")
    assert "3:1" in f.message


@pytest.mark.parametrize("ratio", ["2:1", "3:2", "1:1", "1:2"])
def test_fg105_silent_up_to_2_to_1(ratio):
    assert "FG105" not in codes(intent(**{"topology.oversubscription": ratio}))


@pytest.mark.parametrize("ratio", ["2:1", "3:2"])
def test_fg106_above_1_to_1_is_a_warning(ratio):
    result = check(intent(**{"topology.oversubscription": ratio}))
    (f,) = [f for f in result.findings if f.code == "FG106"]
    assert f.severity == "warning"
    assert result.errors == []


@pytest.mark.parametrize("ratio", ["1:1", "1:2", "3:1"])
def test_fg106_silent_at_1_to_1_and_when_fg105_fires(ratio):
    assert "FG106" not in codes(intent(**{"topology.oversubscription": ratio}))


def test_oversubscription_ignored_on_a_single_switch():
    assert not {"FG105", "FG106"} & codes(single(**{"topology.oversubscription": "4:1"}))


# FG107 DAC -----------------------------------------------------------------------------------

def test_fg107_forced_dac_over_3m():
    (f,) = findings(intent(**{"topology.cable_types": {"leaf_spine": "DAC"}}), "FG107")
    assert (f.severity, f.path) == ("error", "topology.cable_types.leaf_spine")
    assert "20 m" in f.message


def test_fg107_forced_dac_on_the_global_tier_uses_the_yaml_key():
    (f,) = findings(intent(**{"topology.cable_types": {"global": "DAC"}}), "FG107")
    assert f.path == "topology.cable_types.global"


def test_fg107_silent_for_short_dac_aoc_and_derived_choice():
    assert "FG107" not in codes(intent(**{"topology.cable_types": {"host_leaf": "DAC", "leaf_spine": "AOC"}}))
    assert "FG107" not in codes(intent(**{"topology.cable_types": {"host_leaf": "DAC"},
                                          "topology.cables.host_leaf": 3}))
    result = check(intent(**{"topology.cables.host_leaf": 3.5}))
    assert "FG107" not in {f.code for f in result.findings}
    # and the compiler itself never produces a long DAC
    assert all(lk.cable == "AOC" for lk in result.plan.links if lk.length_m > 3)


# FG110 keys the kind ignores -----------------------------------------------------------------

def test_fg110_nodes_per_unit_on_dragonfly():
    (f,) = findings(intent(**{"topology.nodes_per_unit": 16}), "FG110")
    assert (f.severity, f.path) == ("warning", "topology.nodes_per_unit")


def test_fg110_tiers_the_kind_does_not_build():
    data = single(**{"topology.switches.super_spine": {"model": "SN5600"},
                     "topology.cables.leaf_spine": 10, "topology.groups": 3})
    paths = {f.path for f in findings(data, "FG110")}
    assert paths == {"topology.switches.super_spine", "topology.cables.leaf_spine", "topology.groups"}


def test_fg110_silent_on_used_and_default_keys():
    assert "FG110" not in codes(intent())                  # groups on dragonfly-plus
    assert "FG110" not in codes(intent("large"))           # nodes_per_unit, super_spine on three-tier
    assert "FG110" not in codes(single(**{"topology.nodes_per_unit": DELETE}))


# FG111 GPUs per NIC --------------------------------------------------------------------------

def test_fg111_many_gpus_per_nic():
    (f,) = findings(single(), "FG111")    # 8 GPUs, 2 NICs
    assert (f.severity, f.path) == ("warning", "topology.rails")
    assert "100G per GPU" in f.message


def test_fg111_silent_at_two_gpus_per_nic():
    assert "FG111" not in codes(intent())   # 8 GPUs, 4 NICs
    assert "FG111" not in codes(single(**{"topology.rails": 8, "hosts.rails": DELETE}))


# FG101 unsupported kind: rejected at load, explained by the catalog ---------------------------

@pytest.mark.parametrize("kind", ["torus", "mesh", "fat-tree-3d"])
def test_fg101_unsupported_kind_is_rejected_with_the_reason(kind):
    with pytest.raises(IntentError) as exc:
        validate_data(intent(**{"topology.kind": kind}), {}, "t.yaml")
    (p,) = exc.value.problems
    assert p.path == "topology.kind"
    assert "not supported" in p.message and "deadlock" in p.message


def test_switch_model_in_any_case_is_the_catalog_model():
    # issue 36: `sn5600` was unknown; it is the SN5600, spelled as the catalog spells it from then on
    result = check(intent(**{"topology.switches.spine.model": "sn5600", "topology.switches.leaf.model": "Sn5600"}))
    assert not result.errors, [f.one_line() for f in result.errors]
    assert {sw.model for sw in result.plan.switches} == {"SN5600"}


def test_fg102_a_misspelt_model_says_did_you_mean():
    (f,) = findings(intent(**{"topology.switches.spine.model": "sn5060"}), "FG102")
    assert "unknown switch model 'sn5060': did you mean SN5600" in f.message
