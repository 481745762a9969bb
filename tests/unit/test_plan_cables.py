"""Cable accounting of `fabricgen plan` (generator/gitops/plan_compare.py) on hand-written cabling.csv texts:
kept / added / moved / removed as the module docstring defines them, and where the formats show them."""

from __future__ import annotations

import json

import pytest

from generator.gitops.plan_compare import CABLE_LIST_LIMIT, CABLING, PlanError, cable_changes, compare_renders
from generator.gitops.plan_format import CABLE_MARKDOWN_BUDGET, MARKDOWN_LIMIT, format_markdown, format_text

HEADER = "a_device,a_port,b_device,b_port,speed,length_m,cable\n"


def csv_of(*cables: tuple[str, str, str, str]) -> str:
    return HEADER + "".join(f"{a},{ap},{b},{bp},400G,3,DAC\n" for a, ap, b, bp in cables)


BASE = csv_of(("leaf1", "swp1", "gpu01", "eth0"),
              ("leaf1", "swp2", "gpu02", "eth0"),
              ("leaf1", "swp31", "spine1", "swp1"),
              ("leaf1", "swp32", "spine2", "swp1"))


def counts(old: str | None, new: str | None, **kw) -> dict[str, int]:
    return cable_changes(old, new, **kw).counts()


def test_identical_cabling_is_all_kept():
    assert counts(BASE, BASE) == {"kept": 4, "added": 0, "moved": 0, "removed": 0}


def test_swapped_ends_are_the_same_cable():
    swapped = csv_of(("gpu01", "eth0", "leaf1", "swp1"),
                     ("leaf1", "swp2", "gpu02", "eth0"),
                     ("spine1", "swp1", "leaf1", "swp31"),
                     ("leaf1", "swp32", "spine2", "swp1"))
    assert counts(BASE, swapped) == {"kept": 4, "added": 0, "moved": 0, "removed": 0}


def test_new_cables_on_free_ports_are_added():
    grown = BASE + "leaf1,swp3,gpu03,eth0,400G,3,DAC\nleaf1,swp33,spine3,swp1,400G,30,AOC\n"
    assert counts(BASE, grown) == {"kept": 4, "added": 2, "moved": 0, "removed": 0}


def test_one_end_replugged_is_one_move():
    # the spine end of leaf1:swp32 goes to spine3: one cable moves, nothing is added or removed
    moved = BASE.replace("leaf1,swp32,spine2,swp1", "leaf1,swp32,spine3,swp1")
    changes = cable_changes(BASE, moved)
    assert changes.counts() == {"kept": 3, "added": 0, "moved": 1, "removed": 0}
    (m,) = changes.moved
    assert (m.a, m.b, m.now) == (("leaf1", "swp32"), ("spine2", "swp1"), (("spine3", "swp1"), None))


def test_both_ends_reused_elsewhere():
    # leaf1:swp31 and spine1:swp1 both stay cabled, each to somebody else: the old cable moves once,
    # and the two new cables are where its ends went, not additions
    after = csv_of(("leaf1", "swp1", "gpu01", "eth0"),
                   ("leaf1", "swp2", "gpu02", "eth0"),
                   ("leaf1", "swp31", "spine3", "swp1"),
                   ("leaf2", "swp31", "spine1", "swp1"),
                   ("leaf1", "swp32", "spine2", "swp1"))
    changes = cable_changes(BASE, after)
    assert changes.counts() == {"kept": 3, "added": 0, "moved": 1, "removed": 0}
    assert changes.moved[0].now == (("spine3", "swp1"), ("leaf2", "swp31"))


def test_two_cables_swapping_partners():
    # the spines trade leaf ports: both old cables move, both new cables are their destinations
    after = csv_of(("leaf1", "swp1", "gpu01", "eth0"),
                   ("leaf1", "swp2", "gpu02", "eth0"),
                   ("leaf1", "swp31", "spine2", "swp1"),
                   ("leaf1", "swp32", "spine1", "swp1"))
    assert counts(BASE, after) == {"kept": 2, "added": 0, "moved": 2, "removed": 0}


def test_cable_with_no_end_left_is_removed():
    shrunk = BASE.replace("leaf1,swp2,gpu02,eth0,400G,3,DAC\n", "")
    changes = cable_changes(BASE, shrunk)
    assert changes.counts() == {"kept": 3, "added": 0, "moved": 0, "removed": 1}
    assert changes.removed == [(("leaf1", "swp2"), ("gpu02", "eth0"))]


def test_old_side_every_cable_accounted_once():
    after = csv_of(("leaf1", "swp1", "gpu09", "eth0"),        # moved: leaf1:swp1 re-used
                   ("leaf1", "swp31", "spine1", "swp1"),      # kept
                   ("leaf3", "swp1", "gpu03", "eth0"))        # added
    c = counts(BASE, after)
    assert c == {"kept": 1, "added": 1, "moved": 1, "removed": 2}
    assert c["kept"] + c["moved"] + c["removed"] == 4


def test_no_old_cabling_is_all_added():
    assert counts(None, BASE) == {"kept": 0, "added": 4, "moved": 0, "removed": 0}


def test_left_out_of_both_sides_is_all_kept():
    assert counts(None, None, unchanged=BASE) == {"kept": 4, "added": 0, "moved": 0, "removed": 0}
    assert counts(None, None) == {"kept": 0, "added": 0, "moved": 0, "removed": 0}


@pytest.mark.parametrize("text", [
    HEADER + "leaf1,swp1,gpu01\n",                                        # too few fields
    HEADER + "leaf1,swp1,gpu01,eth0,400G,3,DAC,extra\n",                  # too many
    HEADER + "leaf1,,gpu01,eth0,400G,3,DAC\n",                            # empty port
    HEADER + "leaf1,swp1,leaf1,swp1,400G,3,DAC\n",                        # cabled to itself
    HEADER + "leaf1,swp1,gpu01,eth0,400G,3,DAC\nleaf1,swp1,gpu02,eth0,400G,3,DAC\n",   # port twice
    HEADER + '"leaf1\x1b[2J",swp1,gpu01,eth0,400G,3,DAC\n',              # terminal escape
    HEADER + '"leaf1\nevil",swp1,gpu01,eth0,400G,3,DAC\n',               # newline in a quoted field
    HEADER + 'leaf1,"swp1,gpu01,eth0,400G,3,DAC\n',                      # unterminated quote
    "device,port\nleaf1,swp1\n",                                          # not a cabling header
    "",                                                                   # empty file
    HEADER + "x" * 200_000 + ",swp1,gpu01,eth0,400G,3,DAC\n",             # field beyond csv's limit
])
def test_malformed_old_cabling_is_one_line_plan_error(text):
    with pytest.raises(PlanError) as info:
        cable_changes(text, BASE, old_label="cabling.csv of /r")
    message = str(info.value)
    assert message.startswith("cabling.csv of /r")
    assert "\n" not in message and "\x1b" not in message and len(message) < 300


def test_malformed_new_side_names_the_new_file():
    with pytest.raises(PlanError, match="^new cabling.csv: line 2"):
        cable_changes(BASE, HEADER + "leaf1,swp1\n")


def test_malformed_cabling_through_compare_renders():
    with pytest.raises(PlanError, match="^cabling.csv of /old/render: line 2: 3 field"):
        compare_renders({CABLING: HEADER + "a,b,c\n"}, {CABLING: BASE}, against="/old/render")


# --- where the formats show it --------------------------------------------
def plan_of(old_csv: str | None, new_csv: str):
    old = {} if old_csv is None else {CABLING: old_csv}
    return compare_renders(old, {CABLING: new_csv}, fabric="f", against="/r")


MOVED = BASE.replace("leaf1,swp32,spine2,swp1", "leaf1,swp32,spine3,swp1")
GROWN = BASE + "leaf1,swp3,gpu03,eth0,400G,3,DAC\n"


def test_json_counts_and_lists():
    doc = json.loads(json.dumps(plan_of(BASE, MOVED).as_json()))
    assert doc["summary"]["cables"] == {"kept": 3, "added": 0, "moved": 1, "removed": 0}
    assert {k: v for k, v in doc["summary"].items() if k != "cables"} == {
        "added": 0, "removed": 0, "changed": 1, "unchanged": 0}
    assert doc["cables"] == {"moved": [{"a": {"device": "leaf1", "port": "swp32"},
                                        "b": {"device": "spine2", "port": "swp1"},
                                        "now": [{"device": "spine3", "port": "swp1"}, None]}],
                             "removed": []}


def test_json_lists_are_capped_counts_exact():
    n = CABLE_LIST_LIMIT + 5
    old = csv_of(*[("leaf1", f"swp{i}", f"gpu{i}", "eth0") for i in range(n)])
    new = csv_of(("leaf9", "swp1", "gpu-new", "eth0"))
    doc = plan_of(old, new).as_json()
    assert doc["summary"]["cables"]["removed"] == n
    assert len(doc["cables"]["removed"]) == CABLE_LIST_LIMIT
    assert doc["cables"]["truncated"] == {"removed": 5}


def test_text_counts_first_and_floor_work_only_when_needed():
    for new, floor in ((MOVED, True), (GROWN, False), (BASE.replace("leaf1,swp2,gpu02,eth0,400G,3,DAC\n", ""), True)):
        lines = format_text(plan_of(BASE, new)).splitlines()
        assert lines[0].startswith("plan: f against /r")
        assert lines[1].startswith("floor work: ") == floor
        cables = lines[2 if floor else 1]
        assert cables.startswith("cables: ") and lines.index(cables) < next(
            i for i, ln in enumerate(lines) if ln.startswith("~ fabric"))
    lines = format_text(plan_of(BASE, MOVED)).splitlines()
    assert lines[1] == ("floor work: this change moves 1 and removes 0 existing cables; "
                        "they must be re-plugged on the floor")
    assert lines[2] == "cables: 3 kept, 0 added, 1 moved, 0 removed"
    assert "    leaf1:swp32 <-> spine2:swp1, now: leaf1:swp32 -> spine3:swp1, spine2:swp1 -> free" in lines


def test_markdown_flag_right_after_title_and_counts_before_devices():
    md = format_markdown(plan_of(BASE, MOVED)).splitlines()
    assert md[0].startswith("### fabricgen plan:") and md[1] == ""
    assert md[2] == ("> **Floor work:** this change moves 1 and removes 0 existing cables; "
                     "they must be re-plugged on the floor.")
    assert md.index("**Cables:** 3 kept, 0 added, 1 moved, 0 removed") < next(
        i for i, ln in enumerate(md) if ln.startswith("**Devices:**"))
    assert ("| moved | <code>leaf1:swp32</code> | <code>spine2:swp1</code> | <code>leaf1:swp32</code> → "
            "<code>spine3:swp1</code>, <code>spine2:swp1</code> → free |") in md
    grown = format_markdown(plan_of(BASE, GROWN))
    assert "Floor work" not in grown and "<details><summary>0 moved" not in grown
    assert "**Cables:** 4 kept, 1 added, 0 moved, 0 removed" in grown


def test_markdown_escapes_names_and_keeps_within_the_limit():
    hostile = csv_of(("le`af|1", "swp1", "gpu01", "eth0"))
    md = format_markdown(plan_of(hostile, csv_of(("x", "y", "gpu01", "eth0"))))
    row = next(ln for ln in md.splitlines() if ln.startswith("| moved |"))
    # the backtick and pipe of the name as entities: no code span, no extra cell
    assert "<code>le&#96;af&#124;1:swp1</code>" in row and row.count("|") == 5
    many = csv_of(*[(f"leaf{i}", "swp1", f"spine{i}", "swp1") for i in range(20_000)])
    rewired = csv_of(*[(f"leaf{i}", "swp1", f"spine{i + 1}", "swp1") for i in range(20_000)])
    md = format_markdown(plan_of(many, rewired))
    assert len(md) < MARKDOWN_LIMIT
    table = [ln for ln in md.splitlines() if ln.startswith("| moved |")]
    assert 0 < len(table) and sum(len(ln) + 1 for ln in table) <= CABLE_MARKDOWN_BUDGET
    assert f"_{20_000 - len(table)} more not shown" in md
