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


def test_values_typed_as_the_file_writes_them():
    """Issue 38: `mtu: 9216` is a number in the file and in the plan, `'9216'` a string; NVUE's
    on/off stay words; a quoting-only key (`'3':` vs `3:`) is still one key."""
    old = "a:\n  mtu: 9000\n  enable: on\n  '3': x\n  q: '1'\n  mode: 0755\n"
    new = "a:\n  mtu: 9216\n  enable: off\n  3: y\n  q: '2'\n  mode: 0644\n  n: [1, '1', true, ~]\n"
    d = diff_file("switches/l1/startup.yaml", old, new, typed=True)
    assert d["changes"] == [
        {"op": "changed", "path": "a.3", "old": "x", "new": "y"},
        {"op": "changed", "path": "a.enable", "old": "on", "new": "off"},
        {"op": "changed", "path": "a.mode", "old": "0755", "new": "0644"},
        {"op": "changed", "path": "a.mtu", "old": 9000, "new": 9216},
        {"op": "added", "path": "a.n", "new": [1, "1", True, None]},
        {"op": "changed", "path": "a.q", "old": "1", "new": "2"}]
    # drift and every other caller keep reading strings
    assert diff_file("switches/l1/startup.yaml", old, new)["changes"][3]["new"] == "9216"
    result = compare_renders({"switches/l1/startup.yaml": old}, {"switches/l1/startup.yaml": new}, fabric="f")
    text = format_text(result)
    assert "~ a.mtu: 9000 -> 9216" in text and '~ a.q: "1" -> "2"' in text and "~ a.enable: on -> off" in text
    assert "\n          - 1\n          - '1'\n          - true\n          - null\n" in text


def test_table_summarises_above_its_size_and_full_prints_all():
    old = {f"hosts/h{i}/a.conf": "".join(f"k{n} = 1\n" for n in range(100)) for i in range(3)}
    new = {k: v.replace("= 1", "= 2") for k, v in old.items()}
    result = compare_renders(old, new, fabric="f")
    short, full = format_text(result, limit=500), format_text(result, limit=500, full=True)
    # 3 hosts x (a file line, ---/+++/@@ and 200 changed lines)
    assert "summary: the diff is 612 lines (over 500); --full prints it" in short
    assert "    a.conf: 200 changed line(s)" in short and "-k0 = 1" not in short
    assert "summary:" not in full and full.count("-k0 = 1") == 3
    assert "summary:" not in format_text(result, limit=612)


def test_deploy_diff_values_stay_as_drift_reads_them():
    """deploy --diff prints drift's all-string values through the same lines: never quoted as
    strings ('9216'), as a typed plan would quote a string that reads as a number."""
    from generator.gitops.plan import _change_lines

    assert _change_lines({"op": "changed", "path": "a.mtu", "old": "9000", "new": "9216"}, typed=False) == [
        "~ a.mtu: 9000 -> 9216"]
    assert _change_lines({"op": "added", "path": "a", "new": {"mtu": "9216", "on": "on"}}, typed=False) == [
        "+ a:", "    mtu: 9216", "    on: on"]
    assert _change_lines({"op": "changed", "path": "a.mtu", "old": "9000", "new": "9216"}) == [
        '~ a.mtu: "9000" -> "9216"']
