"""Rendered NVUE documents against NVIDIA's object model (nvueschema), values and keys.

Real parts: the real templates (Jinja) render real plans; nvueschema's generated pydantic
models of each release judge them. The negative cases mutate a real rendered document.
"""

from __future__ import annotations

import copy
import functools
import glob
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from generator.checks.nvue_model_rules import shape_key
from generator.checks.registry import CheckContext
from generator.checks.runner import load_rules
from generator.cli import app
from generator.intent.loader import parse_yaml, validate_data
from generator.plan.compile import compile_plan
from generator.render import nvue as nvue_render
from generator.render.nvue import render_switch, switch_context
from generator.render.nvue_model import (
    available_releases,
    is_known_path,
    load_set_body,
    model_release,
    validate_nvue,
)
from tests.conftest import REPO, example

VERSIONS = ("5.9", "5.11", "5.14", "5.15", "5.16", "5.18")
CUMULUS_EXAMPLES = ("small", "medium", "large")


@functools.cache
def _parsed(name: str) -> tuple[dict, dict]:
    """An example's YAML as parse_yaml reads it, once: parsed for each of the ~100 plans built
    here, it was 0.5 s. The data is changed for each plan: callers take a copy."""
    return parse_yaml(example(name).read_text(), f"{name}.yaml")


def plan_of(name: str, version: str | None = None, **extra):
    parsed, lines = _parsed(name)
    data = copy.deepcopy(parsed)
    if version:
        data.setdefault("switch_os", {})["version"] = version
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return compile_plan(validate_data(data, lines, f"{name}.yaml"))


def version_of(plan) -> str:
    return ".".join(str(v) for v in plan.switch_os_version)


def problems_by_shape(plan) -> dict[str, list[str]]:
    """Each distinct switch shape rendered and validated once (as FG260 does)."""
    seen: dict[object, str] = {}
    for sw in plan.switches:
        seen.setdefault(shape_key(switch_context(plan, sw)), sw.name)
    by_name = {sw.name: sw for sw in plan.switches}
    out = {}
    for name in seen.values():
        problems = validate_nvue(render_switch(plan, by_name[name]), version_of(plan))
        if problems:
            out[name] = [p.line() for p in problems]
    return out


@pytest.fixture(scope="module")
def small_doc() -> tuple[str, dict]:
    """The small example's leaf at 5.11 with ECN thresholds off NVIDIA's defaults, so that the
    congestion-control partial is rendered; (text, set-tree as NVUE reads it)."""
    plan = plan_of("small", "5.11", roce={"mode": "lossless", "ecn": {"min_threshold": "200KB",
                                                                        "max_threshold": "1600KB", "probability": 90}})
    text = render_switch(plan, plan.switches[0])
    return text, load_set_body(text)


# --- every rendered document ----------------------------------------------------------------

@pytest.mark.parametrize("name", CUMULUS_EXAMPLES)
def test_examples_are_valid_at_their_release(name):
    plan = plan_of(name)
    for sw in plan.switches:
        assert validate_nvue(render_switch(plan, sw), version_of(plan)) == [], sw.name


@pytest.mark.parametrize("version", ["5.11", "5.15"])
@pytest.mark.parametrize("name", CUMULUS_EXAMPLES)
def test_examples_are_valid_in_both_generations(name, version):
    assert problems_by_shape(plan_of(name, version)) == {}


GOLDEN = sorted(glob.glob(str(REPO / "tests" / "golden" / "*" / "switches" / "*" / "startup.yaml")))


def test_golden_startup_files_are_valid():
    assert GOLDEN, "no golden startup.yaml found"
    for path in GOLDEN:
        text = Path(path).read_text()
        # the header item alone: the whole file read here for it was ~0.9 s of YAML (93 files,
        # 2.9 MB) next to validate_nvue's own reading; a header not first is a KeyError
        head = text.split("\n- set:", 1)[0]
        header = yaml.load(head, Loader=getattr(yaml, "CBaseLoader", yaml.BaseLoader))[0]["header"]
        version = header["version"].removeprefix("Cumulus Linux ").strip()
        assert validate_nvue(text, version) == [], path


ECN_OFF_DEFAULTS = {"ecn": {"min_threshold": "200KB", "max_threshold": "1600KB", "probability": 90}}
VARIANTS = {
    "as-is": {},
    "lossy": {"roce": {"mode": "lossy"}},
    "ecn-thresholds": {"roce": ECN_OFF_DEFAULTS},
    "ecn-and-bandwidth": {"roce": {**ECN_OFF_DEFAULTS, "bandwidth_percent": 60}},
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", CUMULUS_EXAMPLES)
def test_generated_intents_are_valid(name, version, variant):
    plan = plan_of(name, version, **VARIANTS[variant])
    assert problems_by_shape(plan) == {}


@pytest.mark.parametrize("version", ["5.11", "5.15"])
@pytest.mark.parametrize("name,links", [("medium", "10.254.0.0/16"), ("large", "unnumbered")])
def test_numbered_and_unnumbered_fabric_links_are_valid(name, links, version):
    parsed, lines = _parsed(name)
    data = copy.deepcopy(parsed)
    data["switch_os"]["version"] = version
    data["addressing"]["fabric_links"] = links
    plan = compile_plan(validate_data(data, lines, f"{name}.yaml"))
    assert any(n["type"] == ("numbered" if links != "unnumbered" else "unnumbered")
               for sw in plan.switches for n in switch_context(plan, sw)["neighbors"])
    assert problems_by_shape(plan) == {}


MANAGEMENT = {
    "gateway": "192.168.0.254", "ntp": ["192.0.2.10", "ntp.example.net"], "dns": ["192.0.2.53"],
    "syslog": ["192.0.2.99"], "timezone": "Europe/Berlin", "banner": "lab: authorised use only",
    "users": [{"name": "cumulus", "role": "system-admin", "hashed_password": "$6$fabricgenlab$x1y2z3w4v5",
               "ssh_keys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFab ops@example"]},
              {"name": "viewer", "role": "nvue-monitor", "ssh_keys": ["ecdsa-sha2-nistp256 AAAAE2VjZHNh"]}],
}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", ["medium", "large"])
def test_management_bfd_and_adaptive_routing_are_valid(name, version):
    """Management plane, BFD and adaptive routing (SN5600 at 400G) rendered and valid."""
    plan = plan_of(name, version, management=MANAGEMENT,
                   routing={"bfd": True, "adaptive_routing": True, "max_paths": 64})
    tree = load_set_body(render_switch(plan, plan.switches[0]))
    assert "eth0" in tree["interface"] and "aaa" in tree["system"]     # the partials were rendered
    assert problems_by_shape(plan) == {}


# --- the defect the model found, and the other refusals ---------------------------------------

def test_ecn_is_enable_not_enabled(small_doc):
    text, tree = small_doc
    tcs = tree["qos"]["congestion-control"]["default-global"]["traffic-class"]
    assert tcs and all(tc["ecn"] == "enable" for tc in tcs.values())
    bad = text.replace("ecn: enable\n", "ecn: enabled\n")
    assert bad != text
    lines = [p.line() for p in validate_nvue(bad, "5.11")]
    assert lines == [f"qos congestion-control default-global traffic-class {tc} ecn: 'enabled' is not one of "
                     "enable|disable" for tc in tcs]
    # the same refusal in the 5.15+ generation (rendered for 5.16)
    plan16 = plan_of("small", "5.16", roce={"mode": "lossless", **ECN_OFF_DEFAULTS})
    text16 = render_switch(plan16, plan16.switches[0])
    assert "ecn: enable\n" in text16 and validate_nvue(text16, "5.16") == []
    assert [p.line() for p in validate_nvue(text16.replace("ecn: enable\n", "ecn: enabled\n"), "5.16")] == lines


def _mutated(tree: dict, path: tuple[str, ...], value) -> dict:
    out = copy.deepcopy(tree)
    node = out
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    return out


def _first_port(tree: dict) -> str:
    return next(name for name, body in tree["interface"].items() if "mtu" in body.get("link", {}))


def test_mtu_out_of_range(small_doc):
    _, tree = small_doc
    port = _first_port(tree)
    problems = validate_nvue(_mutated(tree, ("interface", port, "link", "mtu"), "99999"), "5.11")
    assert [p.line() for p in problems] == [f"interface {port} link mtu: '99999' is not an integer 552-9216"]


def test_unknown_key_found_by_round_trip(small_doc):
    _, tree = small_doc
    port = _first_port(tree)
    problems = validate_nvue(_mutated(tree, ("interface", port, "link", "mtuu"), "9216"), "5.11")
    assert [(p.path, p.kind) for p in problems] == [(("interface", port, "link", "mtuu"), "unknown-key")]
    assert "known keys here:" in problems[0].message and "mtu" in problems[0].message


def test_unknown_key_found_next_to_a_bad_value(small_doc):
    """No model object to dump when a value fails: unknown keys are found by walking the model."""
    _, tree = small_doc
    port = _first_port(tree)
    bad = _mutated(_mutated(tree, ("interface", port, "link", "mtu"), "99999"), ("qos", "roce", "bogus"), "1")
    assert {(p.path, p.kind) for p in validate_nvue(bad, "5.11")} == {
        (("interface", port, "link", "mtu"), "value"), (("qos", "roce", "bogus"), "unknown-key")}


def test_on_off_are_strings_as_nvue_reads_them():
    """`enable: on` is NVUE's spelling before 5.15; a YAML 1.1 reader would make it True.
    `enable: true` (what a boolean written back looks like) is refused."""
    good = "- set:\n    qos:\n      roce:\n        enable: on\n        mode: lossless\n"
    assert validate_nvue(good, "5.11") == []
    assert [p.line() for p in validate_nvue(good.replace(": on", ": true"), "5.11")] == [
        "qos roce enable: 'true' is not one of on|off"]
    # the 5.15 generation: `state: enabled`; the old spelling is an unknown key there
    assert validate_nvue("- set:\n    qos:\n      roce:\n        state: enabled\n", "5.15") == []
    assert [p.kind for p in validate_nvue(good, "5.15")] == ["unknown-key"]


def test_coerced_values_and_enum_keys_are_no_false_positives():
    """Strings the model turns into ints, `{}` maps used as enum keys and ids: all known."""
    doc = {"interface": {"swp1": {"link": {"mtu": "9216", "speed": "400G", "state": {"up": {}},
                                           "breakout": {"2x": {}}},
                                  "ip": {"address": {"10.0.0.1/31": {}}}}},
           "qos": {"pfc": {"p": {"switch-priority": {"3": {}}, "cable-length": "5", "rx": "enable"}}}}
    assert validate_nvue(doc, "5.11") == []
    doc["interface"]["swp1"]["link"]["state"]["sideways"] = {}
    assert [p.path for p in validate_nvue(doc, "5.11")] == [("interface", "swp1", "link", "state", "sideways")]


def test_not_a_document():
    assert [p.kind for p in validate_nvue("- set: [1, 2\n", "5.11")] == ["document"]


# --- which model, and which paths exist ---------------------------------------------------------

def test_model_release_choice():
    assert available_releases()[0] == "5.0" and "5.18" in available_releases()
    assert model_release("5.11") .release == "5.11" and model_release("5.11").note is None
    assert model_release((5, 15)).release == "5.15"
    assert model_release("5.11.1").release == "5.11"
    newest = available_releases()[-1]
    later = model_release("5.99")
    assert later.release == newest and "5.99" in later.note and newest in later.note
    with pytest.raises(ValueError, match="no NVUE object model"):
        model_release("4.4")


def test_is_known_path():
    assert is_known_path("5.11", ("interface", "swp7", "link", "mtu"))
    assert is_known_path("5.11", ("interface", "swp7", "link", "state", "up"))
    assert is_known_path("5.11", ("interface", "swp7", "ip", "address", "10.0.0.1/31"))
    assert not is_known_path("5.11", ("interface", "swp7", "ipv4", "address"))     # the 5.15 spelling
    assert is_known_path("5.15", ("interface", "swp7", "ipv4", "address"))
    assert not is_known_path("5.11", ("interface", "swp7", "link", "mtuu"))
    assert not is_known_path("5.11", ("qos", "roce", "state"))                      # 5.15+ only
    assert is_known_path("5.15", ("qos", "roce", "state"))
    assert is_known_path((5, 15), ("system", "hostname"))


# --- FG260 ---------------------------------------------------------------------------------------

def test_shape_key_ignores_identities_only():
    plan = plan_of("medium")
    leaves = [sw for sw in plan.switches if sw.role == "leaf"]
    spines = [sw for sw in plan.switches if sw.role == "spine"]
    keys = {shape_key(switch_context(plan, sw)) for sw in leaves}
    assert len(keys) == 1                                  # same ports, other names/addresses/ASNs
    assert shape_key(switch_context(plan, spines[0])) not in keys
    ctx = switch_context(plan, leaves[0])
    other = copy.deepcopy(ctx)
    next(i for i in other["interfaces"] if i.get("speed"))["speed"] = "800G"
    assert shape_key(other) != shape_key(ctx)             # every non-identity value is kept


def _rule():
    load_rules()
    from generator.checks.registry import RULES
    return RULES["FG260"]


def test_fg260_silent_on_a_valid_plan():
    plan = plan_of("medium")
    assert list(_rule().func(CheckContext(None, plan))) == []


def test_fg260_reports_a_rejected_document(monkeypatch, tmp_path):
    real = nvue_render.render_switch
    monkeypatch.setattr(nvue_render, "render_switch",
                        lambda plan, sw: real(plan, sw).replace("mtu: 9216", "mtu: 99999"))
    plan = plan_of("medium")
    findings = list(_rule().func(CheckContext(None, plan)))
    assert findings and {path for path, _ in findings} == {"switch_os.version"}
    leaf = next(sw.name for sw in plan.switches if sw.role == "leaf")
    msg = next(m for _, m in findings if m.startswith(leaf))
    assert "link mtu: '99999' is not an integer 552-9216 [NVUE 5.11 object model]" in msg
    assert "switch(es) of the same shape" in msg


def test_fg260_through_the_cli(monkeypatch, tmp_path):
    real = nvue_render.render_switch
    monkeypatch.setattr(nvue_render, "render_switch",
                        lambda plan, sw: real(plan, sw).replace("mode: lossless", "mode: lossles"))
    result = CliRunner().invoke(app, ["validate", str(example("small"))])
    assert result.exit_code == 1
    lines = [ln for ln in result.output.splitlines() if "FG260" in ln]
    assert len(lines) == 1 and "qos roce mode: 'lossles' is not one of lossy|lossless" in lines[0]
    assert lines[0].startswith(f"{example('small')}:")         # file:line of switch_os
    out = CliRunner().invoke(app, ["render", str(example("small")), "-o", str(tmp_path / "out")])
    assert out.exit_code == 1 and not (tmp_path / "out").exists()


def test_fg260_explained():
    result = CliRunner().invoke(app, ["validate", "--explain", "FG260"])
    assert result.exit_code == 0
    assert "NVUE-Object-Model" in result.output and "enable|disable" in result.output
