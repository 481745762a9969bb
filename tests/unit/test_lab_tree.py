"""Config-tree operations of the lab simulator: load, merge, unset, diff, dump."""

from __future__ import annotations

import pytest
import yaml

from generator.lab import tree

DOC = """\
- header: {model: SN5600}
- set:
    qos: {roce: {enable: on, mode: lossless}}
    interface:
      swp1: {link: {mtu: 9216}, ip: {address: {10.0.0.0/31: {}}}}
      lo: {type: loopback}
- unset:
    interface: {lo: {}}
"""


def test_load_keeps_on_off_and_numbers_as_strings():
    config = tree.apply_document({}, tree.load_document(DOC))
    assert config == {"qos": {"roce": {"enable": "on", "mode": "lossless"}},
                      "interface": {"swp1": {"link": {"mtu": "9216"}, "ip": {"address": {"10.0.0.0/31": {}}}}}}


def test_dump_is_plain_and_round_trips():
    config = tree.apply_document({}, tree.load_document(DOC))
    text = tree.dump_yaml([{"set": config}])
    assert "enable: on" in text and "mtu: 9216" in text
    assert yaml.load(text, Loader=yaml.BaseLoader) == [{"set": config}]


@pytest.mark.parametrize("bad", ["- set: [1, 2]", "- bogus: {}", "{a: [", "- {set: {}, unset: {}}"])
def test_bad_documents_refused(bad):
    with pytest.raises(tree.DocumentError):
        tree.load_document(bad)


def test_diff_and_commands():
    old = {"interface": {"swp1": {"link": {"mtu": "9216"}}, "lo": {"type": "loopback"}}}
    new = {"interface": {"swp1": {"link": {"mtu": "9000"}}}, "qos": {"roce": {"mode": "lossless"}}}
    items = tree.diff_document(old, new)
    assert tree.apply_document(old, items) == new
    assert tree.document_commands(items) == [
        "nv unset interface lo", "nv set interface swp1 link mtu 9000", "nv set qos roce mode lossless"]
    assert tree.diff_document(new, new) == []


def test_nest_expands_comma_lists():
    assert tree.nest(["qos", "x", "traffic-class", "0,3"], {}) == {
        "qos": {"x": {"traffic-class": {"0": {}, "3": {}}}}}
