"""`fabricgen plan --against DIR` cable accounting on real renders: growing a rail-optimized fabric
by one node without a build-out re-plugs spine cables (the spine count changes); with
topology.build_out the same growth only adds cables."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

FABRICGEN = str(Path(sys.executable).parent / "fabricgen")

INTENT = """\
fabric: {name: grow}
topology:
  kind: rail-optimized
  nodes: NODES
  rails: 8
  nodes_per_unit: 32
  nic_speed: 400G
  oversubscription: "1:1"
BUILD_OUT"""


def intent(nodes: int, build_out: int | None = None) -> str:
    extra = f"  build_out: {{nodes: {build_out}}}\n" if build_out else ""
    return INTENT.replace("NODES", str(nodes)).replace("BUILD_OUT", extra)


def fabricgen(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([FABRICGEN, *args], capture_output=True, text=True, timeout=300)


def cables(path: Path) -> set[frozenset[tuple[str, str]]]:
    with path.open(newline="") as fh:
        return {frozenset({(r["a_device"], r["a_port"]), (r["b_device"], r["b_port"])}) for r in csv.DictReader(fh)}


def expected(old: set, new: set) -> dict[str, int]:
    """The accounting, independently: an old cable not kept moves when an end is still cabled."""
    new_ends = {end for cable in new for end in cable}
    old_ends = {end for cable in old for end in cable}
    gone = old - new
    moved = sum(1 for cable in gone if cable & new_ends)
    return {"kept": len(old & new), "added": sum(1 for cable in new - old if not cable & old_ends),
            "moved": moved, "removed": len(gone) - moved}


def render(path: Path, out: Path) -> Path:
    done = fabricgen("render", str(path), "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


def grow(tmp_path: Path, build_out: int | None) -> tuple[Path, Path, Path]:
    """Render 64 nodes to tmp_path/old, then write (and render to tmp_path/new, for the expected
    counts) the 65-node intent; returns (intent, old render, new render)."""
    path = tmp_path / "fabric.yaml"
    path.write_text(intent(64, build_out))
    old = render(path, tmp_path / "old")
    path.write_text(intent(65, build_out))
    return path, old, render(path, tmp_path / "new")


def rendered_64(tmp_path: Path) -> tuple[Path, Path]:
    path = tmp_path / "fabric.yaml"
    path.write_text(intent(64, 256))
    return path, render(path, tmp_path / "old")


def plan(path: Path, against: Path, fmt: str) -> subprocess.CompletedProcess:
    done = fabricgen("plan", str(path), "--against", str(against), "--format", fmt)
    assert done.returncode == 3, done.stderr
    return done


def test_growth_without_build_out_moves_spine_cables(tmp_path):
    path, old, new = grow(tmp_path, None)
    want = expected(cables(old / "cabling.csv"), cables(new / "cabling.csv"))
    assert want["moved"] > 0
    assert want["kept"] + want["moved"] + want["removed"] == len(cables(old / "cabling.csv"))

    doc = json.loads(plan(path, old, "json").stdout)
    assert doc["summary"]["cables"] == want
    assert len(doc["cables"]["moved"]) == min(want["moved"], 1000)
    # every listed cable is an old cable whose two ends are no longer cabled to each other
    old_cables, new_cables = cables(old / "cabling.csv"), cables(new / "cabling.csv")
    for m in doc["cables"]["moved"]:
        cable = frozenset({(m["a"]["device"], m["a"]["port"]), (m["b"]["device"], m["b"]["port"])})
        assert cable in old_cables and cable not in new_cables
        assert any(now is not None for now in m["now"])

    lines = plan(path, old, "text").stdout.splitlines()
    assert lines[1] == (f"floor work: this change moves {want['moved']} and removes {want['removed']} "
                        "existing cables; they must be re-plugged on the floor")
    assert lines[2] == (f"cables: {want['kept']} kept, {want['added']} added, {want['moved']} moved, "
                        f"{want['removed']} removed")

    md = plan(path, old, "markdown").stdout.splitlines()
    assert md[0].startswith("### fabricgen plan: <code>grow</code>")
    assert md[2].startswith(f"> **Floor work:** this change moves {want['moved']} and removes")
    assert sum(len(ln) + 1 for ln in md) < 65_536


def test_growth_within_build_out_only_adds_cables(tmp_path):
    path, old, new = grow(tmp_path, 256)
    want = expected(cables(old / "cabling.csv"), cables(new / "cabling.csv"))
    assert want["added"] > 0 and want["moved"] == want["removed"] == 0

    doc = json.loads(plan(path, old, "json").stdout)
    assert doc["summary"]["cables"] == want
    assert doc["cables"] == {"moved": [], "removed": []}
    text = plan(path, old, "text").stdout
    assert "floor work" not in text
    md = plan(path, old, "markdown").stdout
    assert "Floor work" not in md
    assert f"**Cables:** {want['kept']} kept, {want['added']} added, 0 moved, 0 removed" in md


def test_unchanged_cabling_left_out_by_the_manifest_counts_as_kept(tmp_path):
    path, old = rendered_64(tmp_path)
    # only a switch setting changes: cabling.csv keeps its sha256 and is read from neither side
    path.write_text(intent(64, 256) + "roce:\n  mtu: {switch: 9000}\n")
    doc = json.loads(plan(path, old, "json").stdout)
    n = len(cables(old / "cabling.csv"))
    assert doc["summary"]["cables"] == {"kept": n, "added": 0, "moved": 0, "removed": 0}
    assert "cabling.csv" not in doc["devices"].get("fabric", {}).get("diff", {})


def test_first_render_against_a_render_without_cabling_is_all_added(tmp_path):
    path, old = rendered_64(tmp_path)
    n = len(cables(old / "cabling.csv"))
    (old / "cabling.csv").unlink()          # an old render that never had the file: every cable is new
    doc = json.loads(plan(path, old, "json").stdout)
    assert doc["summary"]["cables"] == {"kept": 0, "added": n, "moved": 0, "removed": 0}


def test_hand_edited_old_cabling_is_one_line_error(tmp_path):
    path, old = rendered_64(tmp_path)
    with (old / "cabling.csv").open("a") as fh:
        fh.write("only,three,fields\n")
    done = fabricgen("plan", str(path), "--against", str(old), "--format", "json")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "cabling.csv" in done.stderr and "Traceback" not in done.stderr
