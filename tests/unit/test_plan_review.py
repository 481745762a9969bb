"""The reviewer's view of `fabricgen plan` (generator/gitops/review.py and the markdown format):
risk summary, exact grouping, name ranges, escaping, the comment size cap. No rendering."""

from __future__ import annotations

import json
import re

from generator.gitops.plan import compare_renders, format_markdown, format_text
from generator.gitops.review import abbreviate
from generator.safe_text import markdown_text

LEAF = """\
- set:
    qos:
      roce: {enable: on}
    system:
      aaa:
        user:
          cumulus: {role: system-admin}
"""


def plan_json(switches: list[dict], hosts: list[dict] | None = None) -> str:
    return json.dumps({"fabric": "f", "switches": switches, "hosts": hosts or []})


def switch(name: str, mgmt: str, loopback: str, asn: int) -> dict:
    return {"name": name, "role": "leaf", "mgmt_ip": mgmt, "loopback": loopback, "asn": asn}


def test_ranges_are_lossless_and_respect_zero_padding():
    assert abbreviate([f"spine-{i}" for i in (3, 1, 2, 16, 10, 11)]) == ["spine-[1-3]", "spine-[10-11]", "spine-16"]
    # gpu099 is padded to 3 digits, gpu100 is not padded: one range would be ambiguous to expand
    assert abbreviate(["gpu098", "gpu099", "gpu100", "gpu101"]) == ["gpu[098-099]", "gpu[100-101]"]
    assert abbreviate(["leaf-su1-r0", "leaf-su1-r1", "leaf-su2-r0", "fabric"]) == [
        "fabric", "leaf-su1-r[0-1]", "leaf-su2-r0"]
    assert abbreviate(["x1y", "x2y", "x3z"]) == ["x[1-2]y", "x3z"]


def test_md_text_leaves_no_markup():
    # the plan's markdown goes through safe_text.markdown_text: entities for the characters that
    # start code spans, cells and tags; a newline shown as its escape (one visible backslash)
    assert markdown_text("a`b|c<d>&e\nf") == "a&#96;b&#124;c&lt;d&gt;&amp;e\\\\x0af"


def test_identical_changes_are_one_group_and_every_device_is_in_one():
    old = {f"switches/leaf{i}/startup.yaml": LEAF for i in range(1, 81)}
    new = {k: v.replace("on}", "off}") for k, v in old.items()}
    new["switches/leaf7/startup.yaml"] = LEAF.replace("system-admin", "nvue-monitor")
    result = compare_renders(old, new, fabric="f", against="HEAD")
    groups = result.as_json()["groups"]
    assert [(g["status"], g["changes"], len(g["devices"])) for g in groups] == [("changed", 1, 79), ("changed", 1, 1)]
    assert groups[1]["devices"] == ["leaf7"]
    text = format_text(result)
    assert "~ leaf[1-6], leaf[8-80] (changed, 1 change(s) x 79 devices)" in text
    assert text.count("~ qos.roce.enable: on -> off") == 1
    md = format_markdown(result)
    assert md.count("qos.roce.enable") == 1
    assert r"| <code>leaf\[1-6\], leaf\[8-80\]</code> | changed | 1 change(s) x 79 |" in md


def test_risk_counts_devices_on_both_sides_only():
    before = plan_json([switch("leaf1", "192.168.0.10", "10.255.0.1", 65101),
                        switch("leaf2", "192.168.0.11", "10.255.0.2", 65102),
                        switch("leaf3", "192.168.0.12", "10.255.0.3", 65103)],
                       [{"name": "gpu01", "mgmt_ip": "192.168.1.1"}])
    after = plan_json([switch("leaf1", "192.168.0.20", "10.255.0.1", 65101),      # eth0 moves
                       switch("leaf2", "192.168.0.11", "10.255.0.9", 65109),      # router-id and ASN
                       switch("leaf4", "192.168.0.13", "10.255.0.4", 65104)],     # new: nothing at risk
                      [{"name": "gpu01", "mgmt_ip": "192.168.1.2"}])
    old = {"plan.json": before, "switches/leaf1/startup.yaml": LEAF, "switches/leaf3/startup.yaml": LEAF}
    new = {"plan.json": after, "switches/leaf1/startup.yaml": LEAF.replace("{role: system-admin}", "{role: x}"),
           "switches/leaf4/startup.yaml": LEAF}
    result = compare_renders(old, new, fabric="f", against="HEAD")
    risk = result.as_json()["risk"]
    assert {k: v["devices"] for k, v in risk.items() if isinstance(v, dict) and "devices" in v} == {
        "management_address": ["gpu01", "leaf1"], "loopback": ["leaf2"], "asn": ["leaf2"], "users": ["leaf1"],
        "extra": [], "override": []}
    assert risk["users"]["accounts"] == ["cumulus"]
    assert risk["devices_removed"] == 1 and risk["cables"] == {"moved": 0, "removed": 0}
    md = format_markdown(result).splitlines()
    assert md[2] == "**Risk:**"
    assert md[4] == "- 2 management address(es): <code>gpu01, leaf1</code>"
    assert "- 1 switch(es) with user account changes (account(s): cumulus): <code>leaf1</code>" in md
    assert "- 1 device(s) removed" in md
    text = format_text(result).splitlines()
    assert text[2] == ("risk: 2 management address(es); 1 loopback/router-id(s); 1 ASN(s); 1 switch(es) with "
                       "user account changes (account(s): cumulus); 1 device(s) removed")


def test_a_diff_line_with_backticks_cannot_close_the_fence():
    old = {"hosts/g1/nccl.conf": "A=1\n"}
    new = {"hosts/g1/nccl.conf": "A=1\n# ```` and ``` inside\n"}
    md = format_markdown(compare_renders(old, new, fabric="f", against="HEAD"))
    assert "`````diff" in md and "\n`````\n" in md + "\n"
    body = md[md.index("`````diff"):]
    assert "+# ```` and ``` inside" in body.split("\n`````")[0]


def test_hostile_names_are_escaped_everywhere():
    old = {"switches/le<b>af|1/startup.yaml": LEAF}
    new = {"switches/le<b>af|1/startup.yaml": LEAF.replace("on}", "off}")}
    md = format_markdown(compare_renders(old, new, fabric="f`x", against="HEAD"))
    assert "<b>" not in md and "f`x" not in md
    assert "le&lt;b&gt;af&#124;1" in md and "<code>f&#96;x</code>" in md
    row = next(ln for ln in md.splitlines() if ln.startswith("| <code>le"))
    assert row.count("|") == 4


def test_cap_keeps_the_risk_summary_and_says_where_the_rest_is():
    old = {"plan.json": plan_json([switch(f"leaf{i}", f"192.168.0.{i}", "10.255.0.1", 65101) for i in range(1, 41)])}
    new = {"plan.json": plan_json([switch(f"leaf{i}", f"192.168.1.{i}", "10.255.0.1", 65101) for i in range(1, 41)])}
    # 40 switches with 40 different diffs of 200 lines each: far more than the cap
    for i in range(1, 41):
        old[f"hosts/h{i}/a.conf"] = "".join(f"k{n} = {i}\n" for n in range(200))
        new[f"hosts/h{i}/a.conf"] = "".join(f"k{n} = {i + 1}\n" for n in range(200))
    result = compare_renders(old, new, fabric="f", against="origin/main:fabric.yaml")
    md = format_markdown(result, limit=8_000)
    assert len(md) <= 8_000
    lines = md.splitlines()
    assert lines[2] == "**Risk:**" and lines[4] == r"- 40 management address(es): <code>leaf\[1-40\]</code>"
    assert lines[-1].startswith("_Not shown, no room left in the 8,000-character comment: <code>h")
    assert "<code>fabricgen plan INTENT --against origin/main --format json</code>" in lines[-1]
    # issue 38: every group is in the comment, either as a block (its diff, or its files and sizes
    # with why the diff is not shown) or named in the footer with its size, or counted there
    shown = re.findall(r"<summary><code>(h\d+|fabric)</code>", md) + re.findall(r"^\*\*<code>(h\d+|fabric)</code>", md, re.M)
    named = re.findall(r"<code>(h\d+|fabric)</code> \(changed, \d+ change\(s\)\)", lines[-1])
    more = re.search(r"; (\d+) more group\(s\)\. Run", lines[-1])
    assert set(shown).isdisjoint(named) and len(shown) + len(named) + (int(more.group(1)) if more else 0) == 41
    assert "does not fit the" in md          # the plan.json block: files and sizes in place of its diff
    full = format_markdown(result, limit=10**7)
    assert len(full) > 8_000 and "Not shown" not in full and "does not fit" not in full


def test_extra_entries_on_changed_switches_are_a_risk_and_overrides_are_named():
    """Issue 36: switches that carry `extra:` config (plan.json `extra`) and change in this plan are
    listed, and those where an entry overrides what the plan derives are listed apart."""
    switches = [switch(f"leaf{i}", f"192.168.0.{10 + i}", f"10.255.0.{i}", 65100 + i) for i in (1, 2, 3)]
    before = plan_json(switches)
    after = json.loads(plan_json(switches))
    after["extra"] = [{"entry": 0, "override": False, "switches": ["leaf1", "leaf2"]},
                      {"entry": 1, "override": True, "switches": ["leaf2", "leaf3"]}]
    old = {"plan.json": before, **{f"switches/leaf{i}/startup.yaml": LEAF for i in (1, 2, 3)}}
    new = {"plan.json": json.dumps(after), "switches/leaf1/startup.yaml": LEAF + "- set:\n    system: {x: y}\n",
           "switches/leaf2/startup.yaml": LEAF.replace("on}", "off}"), "switches/leaf3/startup.yaml": LEAF}
    result = compare_renders(old, new, fabric="f", against="HEAD")
    risk = result.as_json()["risk"]
    # leaf3 carries an override entry but does not change here: nothing of it is at risk
    assert risk["extra"] == {"count": 2, "devices": ["leaf1", "leaf2"]}
    assert risk["override"] == {"count": 1, "devices": ["leaf2"]}
    assert "1 switch(es) where `extra:` overrides what the plan derives" in format_text(result)
