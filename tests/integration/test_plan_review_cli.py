"""`fabricgen plan` on the two changes of issue 27, real renders through the real CLI: an ECN
threshold change on a 256-node rail-optimized fabric (80 switches, the same 8 lines each) and 8
more nodes on inventories/phased, with and without its build-out. The PR comment must fit the
65,536-character comment limit with the risk summary first; the JSON must keep every change."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

FABRICGEN = str(Path(sys.executable).parent / "fabricgen")
PHASED = Path(__file__).resolve().parents[2] / "inventories" / "phased" / "fabric.yaml"
GITHUB_COMMENT_LIMIT = 65_536


def fabricgen(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([FABRICGEN, *args], capture_output=True, text=True, timeout=600)


def render(path: Path, out: Path) -> Path:
    done = fabricgen("render", str(path), "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


def plan(path: Path, against: Path, fmt: str) -> str:
    done = fabricgen("plan", str(path), "--against", str(against), "--format", fmt)
    assert done.returncode == 3, done.stderr
    return done.stdout


def expand(ranges: str) -> list[str]:
    """The device names of a markdown cell such as `leaf-r[0-7], spine-[1-16]`, written
    independently of review.abbreviate."""
    names = []
    for part in ranges.split(", "):
        m = re.fullmatch(r"(.*)\[(\d+)-(\d+)\](.*)", part)
        if not m:
            names.append(part)
            continue
        prefix, lo, hi, suffix = m.groups()
        width = len(lo) if lo.startswith("0") else 0
        names += [f"{prefix}{str(n).zfill(width)}{suffix}" for n in range(int(lo), int(hi) + 1)]
    return names


def table_devices(md: str) -> list[str]:
    rows = [ln for ln in md.splitlines() if re.match(r"^\| <code>", ln)]
    # a markdown renderer drops the backslash of an escaped punctuation character (`leaf\[1-6\]`)
    cells = [re.sub(r"\\(.)", r"\1", re.match(r"^\| <code>(.*?)</code> \|", row).group(1)) for row in rows]
    return [name for cell in cells for name in expand(cell)]


def assert_exact_groups(doc: dict) -> None:
    """Every changed device in exactly one group, and a group's devices have equal diffs."""
    grouped = [name for g in doc["groups"] for name in g["devices"]]
    assert sorted(grouped) == sorted(doc["devices"])
    for g in doc["groups"]:
        first = doc["devices"][g["devices"][0]]
        assert all(doc["devices"][name] == first for name in g["devices"])
        assert all(first["status"] == g["status"] for name in g["devices"])


@pytest.fixture(scope="module")
def rail_256(tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("rail256")
    path = tmp / "fabric.yaml"
    path.write_text(PHASED.read_text().replace("  nodes: 64 ", "  nodes: 256 "))
    return path, render(path, tmp / "old")


def test_ecn_change_on_80_switches_is_one_block(rail_256):
    path, old = rail_256
    text = path.read_text()
    path.write_text(text.replace("switch_os:", "roce:\n  ecn: {min_threshold: 200000, max_threshold: 2000000}\n"
                                 "switch_os:", 1))
    try:
        doc = json.loads(plan(path, old, "json"))
        md = plan(path, old, "markdown")
    finally:
        path.write_text(text)
    switches = [n for n in doc["devices"] if n != "fabric"]
    # 8 rail leaves x 8 units + 16 spines, all with the same ECN lines
    assert len(switches) == 80 and all(n.startswith("phased-") for n in switches)
    assert_exact_groups(doc)
    assert [len(g["devices"]) for g in doc["groups"]] == [80, 1]
    assert doc["risk"]["management_address"]["count"] == 0 and doc["risk"]["cables"] == {"moved": 0, "removed": 0}

    assert len(md) < 60_000
    lines = md.splitlines()
    assert lines[2].startswith("**Risk:** no management address")
    assert md.count("min-threshold: 200000") == 1            # the block once, not 80 times
    assert "'200000'" not in md                               # typed as the file writes it (issue 38)
    assert sorted(table_devices(md)) == sorted(doc["devices"])
    assert "changed, 1 change(s) x 80 devices</summary>" in md


@pytest.mark.parametrize("build_out", [True, False])
def test_eight_more_nodes_fit_a_comment_with_the_risk_first(tmp_path, build_out):
    path = tmp_path / "fabric.yaml"
    text = PHASED.read_text() if build_out else re.sub(r"\n  build_out: .*\n", "\n", PHASED.read_text())
    path.write_text(text)
    old = render(path, tmp_path / "old")
    path.write_text(text.replace("  nodes: 64 ", "  nodes: 72 "))
    new = render(path, tmp_path / "new")
    doc = json.loads(plan(path, old, "json"))
    md = plan(path, old, "markdown")
    full = plan(path, old, "text")

    assert_exact_groups(doc)
    assert len(md) < GITHUB_COMMENT_LIMIT and len(md) <= 60_001    # print() adds the last newline
    # the risk figures, independently: switches and hosts on both sides whose eth0 address moves
    before, after = (json.loads((d / "plan.json").read_text()) for d in (old, new))

    def mgmt(p: dict) -> dict:
        return {r["name"]: r["mgmt_ip"] for r in p["switches"] + p["hosts"]}

    moved = sorted(n for n, ip in mgmt(before).items() if n in mgmt(after) and mgmt(after)[n] != ip)
    assert sorted(doc["risk"]["management_address"]["devices"]) == moved
    lines = md.splitlines()
    risk_at = next(i for i, ln in enumerate(lines) if ln.startswith("**Risk:**"))
    assert risk_at <= 4 and risk_at < next(i for i, ln in enumerate(lines) if ln.startswith("**Cables:**"))
    if build_out:
        # the phased inventory's promise: growth inside the build-out moves nothing
        assert moved == [] and doc["summary"]["cables"]["moved"] == 0
        assert sorted(table_devices(md)) == sorted(doc["devices"])
    else:
        assert moved and f"- {len(moved)} management address(es): " in md
        assert doc["summary"]["cables"]["moved"] > 0 and "**Floor work:**" in lines[2]
        assert "--format json</code> or read the plan artifact" in md
    # text keeps every group: its headers name every changed device once
    headers = [m.group(1) for m in re.finditer(r"^[~+-] (.*) \((?:changed|added|removed), ", full, re.M)]
    assert sorted(name for h in headers for name in expand(h)) == sorted(doc["devices"])
