"""Structured diff and per-device grouping of `fabricgen plan` (no git, no rendering)."""

from __future__ import annotations

from generator.common.structured_diff import diff_file, diff_trees, join_path, parse_structured
from generator.gitops.plan import FABRIC, compare_renders, device_of, format_markdown, format_text

NVUE = """\
- header:
    model: fabricgen
- set:
    interface:
      swp1:
        link: {mtu: 9216, state: {up: {}}}
    qos:
      roce: {enable: on}
"""


def test_paths_quote_keys_that_are_not_plain():
    assert join_path("", "interface") == "interface"
    assert join_path("interface.lo.ip.address", "10.255.0.1/32") == 'interface.lo.ip.address["10.255.0.1/32"]'
    assert join_path("", "a.b") == '["a.b"]'


def test_subtree_on_one_side_is_one_change():
    changes = diff_trees({"a": {"x": 1}}, {"b": {"y": {"z": 2}}, "a": {"x": 2}})
    assert [(c.op, c.path) for c in changes] == [("changed", "a.x"), ("added", "b")]
    assert changes[1].new == {"y": {"z": 2}}


def test_nvue_document_paths_read_like_nv_set():
    after = NVUE.replace("mtu: 9216", "mtu: 1500")
    d = diff_file("switches/leaf1/startup.yaml", NVUE, after)
    assert d == {"status": "changed", "changes": [
        {"op": "changed", "path": "interface.swp1.link.mtu", "old": "9216", "new": "1500"}]}
    assert parse_structured("switches/x/startup.yaml", NVUE)["qos"]["roce"]["enable"] == "on"


def test_reformatting_alone_is_no_change():
    reflowed = NVUE.replace("link: {mtu: 9216, state: {up: {}}}", "link:\n          state: {up: {}}\n          mtu: 9216")
    assert diff_file("switches/leaf1/startup.yaml", NVUE, reflowed) is None


def test_json_records_keyed_by_identity():
    old = '{"ports": [{"device": "l1", "port": "swp1", "cable_m": 2}, {"device": "l1", "port": "swp2", "cable_m": 2}]}'
    new = old.replace('"swp2", "cable_m": 2', '"swp2", "cable_m": 5')
    d = diff_file("plan.json", old, new)
    assert d["changes"] == [{"op": "changed", "path": 'ports["l1:swp2"].cable_m', "old": 2, "new": 5}]


def test_host_files_are_unified_text():
    d = diff_file("hosts/gpu01/sysctl.conf", "a = 1\n", "a = 2\n")
    assert d["status"] == "changed" and "-a = 1" in d["unified"] and "+a = 2" in d["unified"]
    assert diff_file("hosts/gpu01/netplan.yaml", None, "x: 1\n")["status"] == "added"


def test_grouping_and_summary():
    assert device_of("switches/leaf1/startup.yaml") == ("leaf1", "startup.yaml")
    assert device_of("hosts/gpu01/nccl.conf") == ("gpu01", "nccl.conf")
    assert device_of("cabling.csv") == (FABRIC, "cabling.csv")
    old = {"switches/l1/startup.yaml": NVUE, "hosts/g1/a.conf": "x\n", "hosts/g2/a.conf": "y\n",
           "manifest.json": '{"intent_sha256": "1"}'}
    new = {"switches/l1/startup.yaml": NVUE.replace("on}", "off}"), "hosts/g1/a.conf": "x\n",
           "hosts/g3/a.conf": "z\n", "manifest.json": '{"intent_sha256": "2"}'}
    result = compare_renders(old, new, fabric="f", against="HEAD")
    assert {n: d.status for n, d in result.devices.items()} == {"l1": "changed", "g2": "removed", "g3": "added"}
    assert result.summary() == {"added": 1, "removed": 1, "changed": 1, "unchanged": 1}
    text = format_text(result)
    assert "~ qos.roce.enable: on -> off" in text and "- g2 (removed" in text
    md = format_markdown(result)
    assert "**Devices:** 1 added, 1 removed, 1 changed, 1 unchanged" in md and "```diff" in md
    assert compare_renders(old, old).devices == {}
