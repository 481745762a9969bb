"""Device answers are hostile until parsed (issue 23, item 9): generator/device_data.py and its users.

The hostile texts are built here the way an attacker would write them; the good ones are the
lab's and the golden files' real documents, so a cap that refuses a real config fails a test.
"""

from __future__ import annotations

import json
import resource
from pathlib import Path

import pytest
import yaml

from generator import device_data
from generator.device_data import MAX_DEVICE_DEPTH, DeviceDataError, parse_json, parse_yaml
from generator.drift.command import compare_texts

GOLDEN = Path(__file__).resolve().parents[1] / "golden"

# "billion laughs": nine levels of ten aliases each expand to 10**9 strings
ALIAS_BOMB = "- set:\n    a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n" + "".join(
    f"    {chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(9))


def _nested_yaml(depth: int) -> str:
    return "- set:\n" + "".join("  " * (i + 2) + f"k{i}:\n" for i in range(depth)) + "  " * (depth + 2) + "v: 1\n"


def test_alias_bomb_is_refused_before_it_expands():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(DeviceDataError, match="alias"):
        parse_yaml(ALIAS_BOMB, "nv config show")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000   # KiB: nothing expanded


def test_deep_yaml_is_one_line_not_a_recursion_error():
    with pytest.raises(DeviceDataError, match=f"deeper than {MAX_DEVICE_DEPTH}") as exc:
        parse_yaml(_nested_yaml(5000), "nv config show")
    assert "\n" not in str(exc.value)
    assert parse_yaml(_nested_yaml(MAX_DEVICE_DEPTH - 4), "ok")       # the cap counts the list, `set` and the scalar


@pytest.mark.parametrize("depth", [MAX_DEVICE_DEPTH + 5, 100_000])
def test_deep_json_is_refused(depth):
    """100,000 levels make the C decoder raise RecursionError; 69 levels parse and are caught by the walk."""
    with pytest.raises(DeviceDataError, match="deeper than"):
        parse_json("[" * depth + "]" * depth, "show runningconfiguration all")


@pytest.mark.parametrize(("text", "depth"), [
    ('{"a": "[[[{{{", "b": ["]]]"]}', 2),                         # brackets inside strings do not count
    ('{"a": "say \\"[[[\\" twice", "b": {"c": "\\\\"}}', 2),       # an escaped quote does not end the string
    ('{"a": "\\\\", "b": [[["x"]]]}', 4),                          # an escaped backslash does not escape the quote
    ('["\\u005b", {"k": "]}"}]', 2),
])
def test_json_depth_counts_brackets_outside_strings(text, depth):
    json.loads(text)                     # each is real JSON
    assert device_data._json_depth(text) == depth


def test_oversized_answer_is_refused(monkeypatch):
    monkeypatch.setattr(device_data, "MAX_DEVICE_BYTES", 1000)
    with pytest.raises(DeviceDataError, match="above the 1,000"):
        parse_json(json.dumps({"PORT": {f"Ethernet{i}": {"mtu": "9216"} for i in range(100)}}), "config_db")


def test_not_yaml_and_not_json_say_so():
    with pytest.raises(DeviceDataError, match="not YAML"):
        parse_yaml("- set: [unclosed", "x")
    with pytest.raises(DeviceDataError, match="not JSON"):
        parse_json("{'single': 'quotes'}", "x")


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*/switches/*/startup.yaml"))[:40], ids=str)
def test_real_nvue_documents_parse_as_base_loader_does(path):
    text = path.read_text()
    assert parse_yaml(text, "golden") == yaml.load(text, Loader=yaml.BaseLoader)


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*/switches/*/config_db.json"))[:20], ids=str)
def test_real_config_db_parses(path):
    text = path.read_text()
    assert parse_json(text, "golden") == json.loads(text)


@pytest.mark.parametrize("running", [ALIAS_BOMB, _nested_yaml(5000), "x" * 10 + "\0"])
def test_drift_marks_a_hostile_switch_unknown(running):
    intended = next(iter(sorted(GOLDEN.glob("*/switches/*/startup.yaml")))).read_text()
    result = compare_texts("cumulus", "leaf-1", intended, running)
    assert result.status == "unknown"
    assert result.error.startswith("running config unreadable:") and "\n" not in result.error


def test_drift_marks_a_hostile_sonic_switch_unknown():
    intended = next(iter(sorted(GOLDEN.glob("*/switches/*/config_db.json")))).read_text()
    result = compare_texts("sonic", "leaf-1", intended, '{"PORT":' * 50_000)
    assert result.status == "unknown" and "running config unreadable" in result.error


@pytest.mark.parametrize("libyaml", [True, False], ids=["libyaml", "pure-python"])
def test_both_yaml_parsers_keep_the_caps_and_the_answer(monkeypatch, libyaml):
    """libyaml is used when PyYAML has it (speed, issue 26); without it the pure-Python loader
    runs. Both refuse an alias and a nesting past the cap, and read a real config alike."""
    if libyaml and not yaml.__with_libyaml__:
        pytest.skip("PyYAML built without libyaml")
    monkeypatch.setattr(yaml, "__with_libyaml__", libyaml)
    with pytest.raises(DeviceDataError, match="alias at line 3"):
        parse_yaml(ALIAS_BOMB, "nv config show")
    with pytest.raises(DeviceDataError, match=f"deeper than {MAX_DEVICE_DEPTH}"):
        parse_yaml(_nested_yaml(MAX_DEVICE_DEPTH), "nv config show")
    text = sorted(GOLDEN.glob("*/switches/*/startup.yaml"))[0].read_text()
    assert parse_yaml(text, "golden") == yaml.load(text, Loader=yaml.BaseLoader)
