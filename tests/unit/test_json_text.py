"""generator/common/json_text.py: copy_json copies parsed JSON as copy.deepcopy does."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from generator.common.json_text import config_db_text, copy_json

GOLDEN = Path(__file__).resolve().parents[1] / "golden"

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                    max_leaves=30)


@given(JSON)
def test_a_copy_is_equal_and_prints_the_same(value):
    copied = copy_json(value)
    assert copied == value
    assert json.dumps(copied) == json.dumps(value)          # dict order and types (bool is not 1) kept


def test_a_copy_shares_nothing():
    config = {"PORT": {"Ethernet0": {"mtu": "9100", "lanes": ["0", "1"]}}, "NTP": {}}
    copied = copy_json(config)
    copied["PORT"]["Ethernet0"]["mtu"] = "1500"
    copied["PORT"]["Ethernet0"]["lanes"].append("2")
    copied["NTP"]["global"] = {}
    assert config == {"PORT": {"Ethernet0": {"mtu": "9100", "lanes": ["0", "1"]}}, "NTP": {}}


def test_what_marshal_cannot_carry_is_deep_copied():
    class Field(str):
        pass

    value = {"a": [Field("x")], "b": {"c": 1}}
    copied = copy_json(value)
    assert copied == copy.deepcopy(value) and type(copied["a"][0]) is Field
    assert copied["b"] is not value["b"]


CONFIG_DB = st.dictionaries(
    st.text(max_size=8),
    st.dictionaries(st.text(max_size=8),
                    st.dictionaries(st.text(max_size=8), st.text(max_size=8) | st.lists(st.text(max_size=4), max_size=3),
                                    max_size=4), max_size=4),
    max_size=4)


@given(CONFIG_DB)
def test_config_db_text_is_json_dumps_indented(config):
    assert config_db_text(config) == json.dumps(config, indent=4, sort_keys=True)


@given(JSON)
def test_any_other_shape_is_json_dumps_too(value):
    assert config_db_text(value) == json.dumps(value, indent=4, sort_keys=True)


def test_real_config_dbs_print_as_json_does():
    paths = sorted(GOLDEN.rglob("config_db.json"))
    assert paths
    for path in paths:
        config = json.loads(path.read_text())
        assert config_db_text(config) + "\n" == path.read_text(), path
