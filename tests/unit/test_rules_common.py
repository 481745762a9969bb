"""The rule catalog as a whole, and the helpers the other test_rules_* modules share.

Intents are built as dicts from the medium example and go through the real loader
(validate_data) and the real runner (run_checks: intent rules, compile, plan rules).
"""

from __future__ import annotations

import copy
import re
from functools import cache
from typing import Any

import pytest
import yaml

from generator.checks.registry import ERROR, RULES, WARNING
from generator.checks.runner import CheckResult, load_rules, run_checks
from generator.intent.loader import LoadedIntent, validate_data
from tests.conftest import EXAMPLES, example

DELETE = object()


@cache
def _example_dict(name: str) -> str:
    return example(name).read_text()


def base(name: str = "medium") -> dict[str, Any]:
    return copy.deepcopy(yaml.safe_load(_example_dict(name)))


def intent(name: str = "medium", **changes: Any) -> dict[str, Any]:
    """An example as a dict with dotted-path changes: intent(**{"roce.dscp": 70})."""
    data = base(name)
    for dotted, value in changes.items():
        node = data
        *parents, leaf = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        if value is DELETE:
            node.pop(leaf, None)
        else:
            node[leaf] = value
    return data


def check(data: dict[str, Any]) -> CheckResult:
    loaded = LoadedIntent(intent=validate_data(data, {}, "t.yaml"), file="t.yaml", lines={}, text="")
    return run_checks(loaded)


def findings(data: dict[str, Any], code: str) -> list:
    return [f for f in check(data).findings if f.code == code]


def codes(data: dict[str, Any]) -> set[str]:
    return {f.code for f in check(data).findings}


# ---------------------------------------------------------------------------------------------

def test_catalog_codes_are_well_formed():
    load_rules()
    mine = {c: r for c, r in RULES.items() if c[:3] in ("FG1", "FG2", "FG4")}
    assert len(mine) >= 25
    for code, r in mine.items():
        assert re.fullmatch(r"FG[124]\d\d", code)
        assert r.severity in (ERROR, WARNING)
        assert r.stage in ("intent", "plan", "compile")
        assert r.title and "\n" not in r.title
        # the explanation must say why, not just restate the title
        assert len(r.explanation) > 150, code


def test_compiler_codes_are_documented():
    load_rules()
    for code in ("FG100", "FG101", "FG102", "FG104", "FG401", "FG402"):
        assert code in RULES
    # documentation-only entries never produce findings themselves
    for code in ("FG100", "FG101", "FG104", "FG401", "FG402"):
        assert RULES[code].stage == "compile"
        assert list(RULES[code].func(None)) == []


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_have_no_errors(name):
    result = check(base(name))
    assert result.errors == []
    assert result.plan is not None


def _mine(findings_):
    return [f for f in findings_ if f.code[:3] in ("FG1", "FG2", "FG4")]


def test_example_warnings_are_the_known_ones():
    # small: 8 GPUs on 2 NICs; large: 100 m 400G spine/super-spine links fill the SN5600 pool;
    # medium and large have no build_out and the next node re-cables them (FG113); large's 32-node
    # pods leave its SN5600 leaves half empty (FG114, issue 38)
    assert {f.code for f in _mine(check(base("small")).findings)} == {"FG111"}
    assert [(f.code, f.path) for f in _mine(check(base("medium")).findings)] == [("FG113", "topology.nodes")]
    assert _mine(check(intent("medium", **{"topology.build_out": {"nodes": 32}})).findings) == []
    large = _mine(check(base("large")).findings)
    assert {(f.code, f.path) for f in large} == {("FG221", "topology.switches.spine.model"),
                                                 ("FG221", "topology.switches.super_spine.model"),
                                                 ("FG113", "topology.nodes"),
                                                 ("FG114", "topology.nodes_per_unit")}


def test_findings_are_one_line_and_name_a_key_path():
    data = intent(**{"roce.dscp": 99, "roce.ecn.enabled": False, "topology.oversubscription": "4:1",
                     "addressing.rails": "10.0.0.0/8"})
    result = check(data)
    assert len(result.errors) >= 4
    for f in result.findings:
        assert "\n" not in f.one_line()
        assert re.fullmatch(r"[a-z_]+(\.[a-z_]+)*(\[\d+\])?(\.[a-z_]+)*", f.path), f.path


def test_line_numbers_come_from_the_file(tmp_path):
    from generator.intent.loader import load_intent

    text = _example_dict("medium").replace("dscp: 26", "dscp: 77")
    path = tmp_path / "fabric.yaml"
    path.write_text(text)
    result = run_checks(load_intent(path))
    (f,) = [f for f in result.findings if f.code == "FG206"]
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "dscp: 77" in t)
    assert (f.file, f.line) == (str(path), line)
    assert f.one_line().startswith(f"{path}:{line}: error FG206 roce.dscp: ")
