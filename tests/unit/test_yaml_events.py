"""Plain YAML data from libyaml's events (generator/common/yaml_events.py) is what PyYAML's own
BaseLoader builds, or a NotPlain that names why not; nvue_model reads what is not plain again
with yaml.load, so FG260 sees the same data either way."""

from __future__ import annotations

import pytest
import yaml

from generator.common.yaml_events import HAS_LIBYAML, NotPlain, load, plain_data
from generator.render.nvue_model import _LOADER
from tests.conftest import REPO


def _load(text: str):
    """What nvue_model reads a document as."""
    return load(text, _LOADER)


pytestmark = pytest.mark.skipif(not HAS_LIBYAML, reason="PyYAML built without libyaml")

PLAIN = ["", "a", "- a\n- b\n", "a: 1\na: 2\nb: 3\n", "{a: 1, a: 2}", "a: [1, {b: c}, [], {}]", "a: !!int 3",
         "x: 'q'\ny: \"d\"\n", "a:\n  - b\n  -\n  - {}\n", "a: |\n  x\n  y\n", "? a\n", "null", "~", "a: ~",
         "- !tag [1, 2]", "&x a: 1", "a: &x [1]", "%YAML 1.1\n--- a\n", "[" * 60 + "]" * 60]
NOT_PLAIN = {"alias": "a: &x [1]\nb: *x\n", "key": "? [a]\n: 1\n", "documents": "--- a\n--- b\n",
             "deep": "[" * 70 + "]" * 70}


@pytest.mark.parametrize("text", PLAIN + sorted(str(p) for p in (REPO / "tests" / "golden" / "small").rglob("*.yaml")))
def test_the_same_data_as_base_loader(text):
    if text.endswith(".yaml"):
        with open(text) as f:
            text = f.read()
    expected = yaml.load(text, Loader=yaml.BaseLoader)     # the pure-Python loader: another parser
    got = plain_data(text, 64)
    assert got == expected and repr(got) == repr(expected)  # repr: the key order too


@pytest.mark.parametrize("why", sorted(NOT_PLAIN))
def test_what_is_not_plain_says_why_and_nvue_reads_it_as_yaml_load_does(why):
    text = NOT_PLAIN[why]
    with pytest.raises(NotPlain) as caught:
        plain_data(text, 64)
    assert caught.value.why == why and caught.value.line
    try:
        expected = yaml.load(text, Loader=yaml.CBaseLoader)
    except yaml.YAMLError as exc:
        with pytest.raises(type(exc)):
            _load(text)
        return
    assert _load(text) == expected


def test_an_alias_still_shares_one_object_through_nvue_load():
    data = _load("a: &x [1]\nb: *x\n")
    assert data["a"] is data["b"]


def test_not_yaml_is_the_parsers_error():
    with pytest.raises(yaml.YAMLError):
        plain_data("a: [unclosed", 64)
    with pytest.raises(yaml.YAMLError):
        _load("a: [unclosed")


def _typed(value):
    """VALUE with the type of every scalar: 3 and '3', 1.0 and 1 are told apart."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}, list(value)
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return type(value).__name__, repr(value)


TYPED = ["a: 1", "a: -0", "a: +5", "a: 007", "a: 0x1F", "a: 1_000", "a: 1.5", "a: -0.0", "a: .5", "a: 1e5",
         "a: -.5e-3", "a: .inf", "a: true", "a: TRUE", "a: yes", "a: on", "a: ~", "a: Null", "a:", "a: ''",
         "a: '3'", 'a: "3"', "3: x", "'3': y", "a: [1, '2', true, ~, 1.0]", "<<: {b: 1}", "a: !!int '3'",
         "a: !!str 3", "a: &x 1\nb: *x", "a: 2001-12-14", "a: 12:30", "a: {b: {c: [1, {d: off}]}}", "a: |\n  1\n",
         "a: 1\na: 2", "a: 1.", "a: 00"]


@pytest.mark.parametrize("text", TYPED + sorted(str(p) for p in (REPO / "tests" / "golden" / "small").rglob("*.yaml")))
def test_plans_typed_reading_types_as_its_yaml_loader_does(text):
    from generator.common.structured_diff import _load_yaml, _TypedLoader

    if text.endswith(".yaml"):
        with open(text) as f:
            text = f.read()
    assert _typed(_load_yaml(text, typed=True)) == _typed(yaml.load(text, Loader=_TypedLoader))
    assert _typed(_load_yaml(text, typed=False)) == _typed(yaml.load(text, Loader=yaml.BaseLoader))


def test_a_tag_is_not_plain_for_a_typed_reading():
    with pytest.raises(NotPlain) as caught:
        plain_data("a: !!int '3'\n", 64, lambda value, plain: value)
    assert caught.value.why == "tag"
    assert plain_data("a: !!int '3'\n", 64) == {"a": "3"}          # BaseLoader ignores tags
