"""generator/devices/config_db_diff.py: a unified diff of two printed config_dbs, matched row by row,
that turns the one file into the other (checked here by applying it, as `patch` would)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.common.json_text import config_db_text
from generator.devices.config_db_diff import config_db_diff
from tests.conftest import examples

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "medium-sonic" / "switches"
HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n")


def apply(old: str, diff: str) -> str:
    """`patch` of a unified diff: every context and removed line must be where the hunk says."""
    lines, out, at = old.splitlines(keepends=True), [], 0
    body = (diff + "\n").splitlines(keepends=True)
    assert body[:2] == ["--- running\n", "+++ candidate\n"]
    i = 2
    while i < len(body):
        hunk = HUNK.fullmatch(body[i])
        assert hunk, body[i]
        start, length = int(hunk.group(1)), int(hunk.group(2) or 1)
        new_start, new_length = int(hunk.group(3)), int(hunk.group(4) or 1)
        start = start - 1 if length else start
        assert start >= at
        out += lines[at:start]
        assert (new_start - 1 if new_length else new_start) == len(out)
        at, i, taken, given_ = start, i + 1, 0, 0
        while i < len(body) and not body[i].startswith("@@"):
            kind, text = body[i][0], body[i][1:]
            if kind in " -":
                assert lines[at] == text, (at, lines[at], text)
                at, taken = at + 1, taken + 1
            if kind in " +":
                out.append(text)
                given_ += 1
            i += 1
        assert (taken, given_) == (length, new_length)
    return "".join(out + lines[at:])


def printed(config: dict) -> str:
    return config_db_text(config) + "\n"


def golden(name: str) -> dict:
    return json.loads((GOLDEN / name / "config_db.json").read_text())


def changed(config: dict) -> dict:
    out = copy.deepcopy(config)
    port = sorted(out["PORT"])[0]
    out["PORT"][port]["mtu"] = "1500"                 # one field of one row
    out.pop(sorted(out)[1])                           # a whole table gone
    out["AAA_NEW"] = {"authentication": {"login": "local"}}
    out["PORT"]["Ethernet999"] = {"lanes": "1,2", "alias": "etp99"}
    return out


def pairs():
    leaves = sorted(p.name for p in GOLDEN.iterdir())
    a, b = golden(leaves[0]), golden(leaves[-1])
    return [(a, b), (b, a), (a, changed(a)), (changed(a), a), ({}, a), (a, {}), ({"PORT": {}}, {"PORT": {"E0": {}}})]


@pytest.mark.parametrize("index", range(len(pairs())))
def test_the_diff_turns_the_running_file_into_the_candidate(index):
    running, candidate = pairs()[index]
    diff = config_db_diff(running, candidate)
    assert diff and apply(printed(running), diff) == printed(candidate)


def test_a_changed_field_shows_its_row_and_nothing_of_the_equal_rows():
    running = golden(sorted(p.name for p in GOLDEN.iterdir())[0])
    candidate = copy.deepcopy(running)
    port = sorted(candidate["PORT"])[0]
    candidate["PORT"][port]["mtu"] = "1500"
    diff = config_db_diff(running, candidate)
    assert '+            "mtu": "1500",' in diff and f'-            "mtu": "{running["PORT"][port]["mtu"]}",' in diff
    assert diff.count("@@ -") == 1 and len(diff.splitlines()) < 3 + 2 * 20 + 6


def test_the_same_config_is_no_diff():
    config = golden(sorted(p.name for p in GOLDEN.iterdir())[0])
    assert config_db_diff(config, copy.deepcopy(config)) == ""


CONFIG_DB = st.dictionaries(
    st.sampled_from(["PORT", "NTP", "QUEUE", "VLAN"]),
    st.dictionaries(st.sampled_from(["E0", "E4", "E8", "global"]),
                    st.dictionaries(st.sampled_from(["mtu", "lanes", "admin_status"]),
                                    st.sampled_from(["1", "2", "x"]) | st.lists(st.sampled_from(["a", "b"]), max_size=2),
                                    max_size=3), max_size=3),
    max_size=4)


@settings(max_examples=examples(200))
@given(CONFIG_DB, CONFIG_DB)
def test_any_two_config_dbs(running, candidate):
    diff = config_db_diff(running, candidate)
    if printed(running) == printed(candidate):
        assert diff == ""
    else:
        assert apply(printed(running), diff) == printed(candidate)
