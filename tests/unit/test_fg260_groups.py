"""FG260 groups switches by shape through a cheaper input key first (issue 14); the groups
must be exactly those of shape_key(switch_context(...)) on every switch."""

from __future__ import annotations

import dataclasses

import pytest

from generator.checks.nvue_model_rules import shape_groups, shape_key
from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.render.nvue import switch_context
from tests.conftest import example


def _direct(plan) -> list[list[str]]:
    groups: dict[object, list[str]] = {}
    for sw in plan.switches:
        groups.setdefault(shape_key(switch_context(plan, sw)), []).append(sw.name)
    return list(groups.values())


@pytest.mark.parametrize("name", ["small", "medium", "large"])
def test_groups_equal_shape_key_groups(name: str) -> None:
    plan = compile_plan(load_intent(example(name)).intent)
    got = [[sw.name for sw in members] for members in shape_groups(plan)]
    assert got == _direct(plan)
    assert sum(map(len, got)) == len(plan.switches)


def test_a_changed_port_value_splits_its_switch_off() -> None:
    plan = compile_plan(load_intent(example("large")).intent)
    leaf = next(sw for sw in plan.switches if sw.role == "leaf")
    ports = plan.ports_of(leaf.name)
    changed = (ports[0]._replace(speed_g=100),) + ports[1:]             # Port is a tuple row
    odd = dataclasses.replace(plan, _ports_by_device={**plan._ports_by_device, leaf.name: changed})
    got = [[sw.name for sw in members] for members in shape_groups(odd)]
    assert got == _direct(odd)
    assert [leaf.name] in got


@pytest.mark.parametrize("field, value", [
    ("peer_port", "swp1\ns0"),      # the column separator inside a value: value by value
    ("peer_port", "swp99"),         # another port number: digits only
])
def test_input_key_columns_keep_the_groups(field: str, value) -> None:
    """input_key reads the ports column by column (one join/translate per column; medium's
    unnumbered ports mix None and strings in the address column); a value that forces its
    value-by-value path, or differs only in digits, still gives shape_key's groups."""
    plan = compile_plan(load_intent(example("large")).intent)
    spine = next(sw for sw in plan.switches if sw.role == "spine")
    ports = plan.ports_of(spine.name)
    i = next(i for i, p in enumerate(ports) if p.peer_asn is not None)
    changed = ports[:i] + (ports[i]._replace(**{field: value}),) + ports[i + 1:]
    odd = dataclasses.replace(plan, _ports_by_device={**plan._ports_by_device, spine.name: changed})
    got = [[sw.name for sw in members] for members in shape_groups(odd)]
    assert got == _direct(odd)
    if "\n" in value:
        assert [spine.name] in got
