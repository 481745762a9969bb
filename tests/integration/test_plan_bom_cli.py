"""Issue 38 item 4, through the real CLI against a real git repository: one scalable unit of growth
(inventories/phased at 32 of 128 nodes on SN5600, grown to 64) gives a PR comment that says what
the change orders (a BOM delta), counts an added device's lines (never "changes"), names what it
left out, and shows values typed as the rendered file writes them; the table format summarises."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

FABRICGEN = str(Path(sys.executable).parent / "fabricgen")
PHASED = Path(__file__).resolve().parents[2] / "inventories" / "phased" / "fabric.yaml"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=600, cwd=cwd)


def git(repo: Path, *args: str) -> None:
    done = run("git", "-C", str(repo), *args)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def grown(tmp_path_factory) -> dict:
    """The repository with the 32-node intent committed and the 64-node one in the work tree, and
    the outputs of `plan --against HEAD` in every format."""
    repo = tmp_path_factory.mktemp("bom") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for key, value in (("user.email", "ci@example.invalid"), ("user.name", "ci"), ("commit.gpgsign", "false")):
        git(repo, "config", key, value)
    text = PHASED.read_text().replace("build_out: {nodes: 256}", "build_out: {nodes: 128}")
    path = repo / "fabric.yaml"
    path.write_text(text.replace("  nodes: 64 ", "  nodes: 32 "))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "unit 1")
    old = run(FABRICGEN, "render", str(path), "-o", str(repo.parent / "old"))
    assert old.returncode == 0, old.stderr
    path.write_text(text)                   # one unit of 32 more
    new = run(FABRICGEN, "render", str(path), "-o", str(repo.parent / "new"))
    assert new.returncode == 0, new.stderr
    out = {"old": repo.parent / "old", "new": repo.parent / "new", "path": path}
    for fmt, extra in (("markdown", ()), ("json", ()), ("table", ()), ("full", ("--full",))):
        done = run(FABRICGEN, "plan", str(path), "--against", "HEAD", "--format",
                   "table" if fmt == "full" else fmt, *extra)
        assert done.returncode == 3, done.stderr
        out[fmt] = done.stdout
    return out


def switch_models(render: Path) -> Counter:
    return Counter(sw["model"] for sw in json.loads((render / "plan.json").read_text())["switches"])


def cabling(render: Path) -> list[dict]:
    import csv
    import io

    return list(csv.DictReader(io.StringIO((render / "cabling.csv").read_text())))


def test_the_pr_comment_carries_the_bom_delta(grown):
    md = grown["markdown"]
    lines = md.splitlines()
    at = lines.index(next(ln for ln in lines if ln.startswith("**Bill of materials:**")))
    # after the risk and cable counts, before the device table
    assert at > lines.index(next(ln for ln in lines if ln.startswith("**Cables:**")))
    assert at < lines.index("| devices | status | size |")
    rows = {}
    for ln in lines[at + 4:]:
        if not ln.startswith("| "):
            break
        part, item, before, after, change = (c.strip() for c in ln.strip("|").split("|"))
        rows[(part, item)] = (int(before.replace(",", "")), int(after.replace(",", "")), int(change))
    # the counts, independently: plan.json's switches by model, cabling.csv's host-leaf DACs
    old_sw, new_sw = switch_models(grown["old"]), switch_models(grown["new"])
    assert rows[("switches", "SN5600, leaf, spine")] == (old_sw["SN5600"], new_sw["SN5600"], 8)

    def splitter_dacs(render: Path) -> int:
        # an 800G leaf cage split 2x400G to two NICs is one splitter cable (plan/bom.py)
        cages = {(r["a_device"], re.sub(r"s\d+$", "", r["a_port"])) for r in cabling(render)
                 if r["cable"] == "DAC" and r["b_device"].startswith("gpu")}
        return len(cages)

    dac = rows[("cables", "800G to 2x400G splitter DAC, host-leaf, 3 m")]
    assert dac == (splitter_dacs(grown["old"]), splitter_dacs(grown["new"]), 128)
    assert ("NIC ports", "400G") in rows and rows[("NIC ports", "400G")][2] == 32 * 8
    assert lines[at].startswith("**Bill of materials:** +8 switches, +256 NIC ports, ")
    doc = json.loads(grown["json"])
    assert {"category": "switch", "item": "SN5600, leaf, spine", "before": 16, "after": 24, "change": 8} \
        in doc["bom"]["delta"]


def test_added_devices_count_lines_not_changes(grown):
    md = grown["markdown"]
    added_rows = [ln for ln in md.splitlines() if ln.startswith("| <code>") and "| added |" in ln]
    assert added_rows and all("line(s)" in ln and "change(s)" not in ln for ln in added_rows)
    added_titles = [ln for ln in md.splitlines() if "</code>: added, " in ln]
    assert added_titles and all(": added, " in t and "change(s)" not in t for t in added_titles)
    # an added host's files by their line counts, as the rendered files have them
    host = grown["new"] / "hosts" / "gpu033"
    for f in ("netplan.yaml", "roce-qos.sh"):
        assert f"- <code>{f}</code>: {len((host / f).read_text().splitlines()):,} line(s)" in md
    doc = json.loads(grown["json"])
    hosts = next(g for g in doc["groups"] if "gpu033" in g["devices"])
    assert hosts["lines"] == sum(len(p.read_text().splitlines()) for p in host.iterdir())


def test_every_group_is_shown_or_named_with_why(grown):
    md = grown["markdown"]
    # the fabric files' 400 KB diff does not fit: its files and sizes stand in its place, with why
    block = md[md.index("<details><summary><code>fabric</code>: changed"):]
    block = block[:block.index("</details>")]
    assert re.search(r"its diff \([\d,]+ characters\) does not fit the [\d,]+ characters left", block)
    assert "- <code>cabling.csv</code>: 512 changed line(s)" in block
    assert "Not shown" not in md          # nothing else was left out of this comment


def test_values_are_typed_as_in_the_file(grown):
    md = grown["markdown"]
    startup = (grown["new"] / "switches" / "phased-spine-1" / "startup.yaml").read_text()
    assert re.search(r"^ +mtu: 9216$", startup, re.M)              # the file writes a number
    assert re.search(r"^ +mtu: 9216$", md, re.M) and "'9216'" not in md
    doc = json.loads(grown["json"])
    change = next(c for c in doc["devices"]["phased-spine-1"]["diff"]["startup.yaml"]["changes"]
                  if c["path"] == "interface.swp17s0")
    assert change["new"]["link"]["mtu"] == 9216 and change["new"]["link"]["speed"] == "400G"


def test_table_summarises_and_full_prints_every_line(grown):
    table, full = grown["table"].splitlines(), grown["full"].splitlines()
    assert len(table) < 60 and len(full) > 10_000
    summary = next(ln for ln in table if ln.startswith("summary: "))
    assert re.fullmatch(r"summary: the diff is ([\d,]+) lines \(over 400\); --full prints it, --format json has "
                        r"every change", summary)
    lines = sum(len(p.read_text().splitlines()) for p in (grown["new"] / "hosts" / "gpu033").iterdir())
    assert f"+ gpu[033-064] (added, {lines:,} line(s) x 32 devices, 32 variants)" in table
    assert any(ln.startswith("bill of materials: +8 switches") for ln in table)
    assert not any(ln.startswith("summary:") for ln in full)
    # the full text has every added host's group
    assert sum(1 for ln in full if re.match(r"^\+ gpu0(3[3-9]|[45]\d|6[0-4]) \(added, ", ln)) == 32
