"""verify after a spines-first change toward a unit not racked yet (issue 36), through the CLI.

The fabric is built toward 16 nodes (`topology.build_out`); 8 are racked: one leaf, two spines,
as `lab up` of that phase starts them. The next phase (16 nodes) adds gr-leaf-2, and its change
goes to the spines first (`deploy --limit 'gr-spine-*'`): each spine now carries 8 ports and
sessions for a leaf that is not there. verify of the grown intent must not fail for it: the leaf
the endpoints file does not list is "not installed", and so are the spine ports toward it, dark
as they are; everything racked is checked as usual.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from generator.lab.control import lab_down

pytestmark = pytest.mark.integration

PASSWORD = "lab-Secret-7f3"
PHASE1 = """\
fabric: {name: gr}
topology:
  kind: leaf-spine
  nodes: 8
  build_out: {nodes: 16}
  rails: 2
  nic_speed: 400G
  switches:
    leaf: {model: SN4700}
    spine: {model: SN4700}
deploy: {confirm_timeout: 60, concurrency: 4}
"""
PHASE2 = PHASE1.replace("nodes: 8\n", "nodes: 16\n")
FAST = ["--interval", "1.5", "--settle", "3"]


def test_spines_first_toward_an_unracked_leaf_is_not_installed_not_failed(tmp_path):
    env = {**os.environ, "FABRICGEN_PASSWORD": PASSWORD, "FABRICGEN_BACKUP_DIR": str(tmp_path / "backups"),
           "FABRICGEN_CONFIRM_TIMEOUT": "30", "FABRICGEN_SSH_TIMEOUT": "6"}
    (tmp_path / "phase1.yaml").write_text(PHASE1)
    (tmp_path / "phase2.yaml").write_text(PHASE2)
    lab = tmp_path / "lab"
    endpoints = str(lab / "endpoints.yml")

    def fabricgen(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "generator.cli", *args], capture_output=True, text=True,
                              timeout=300, env=env, cwd=tmp_path)

    up = fabricgen("lab", "up", "phase1.yaml", "--dir", str(lab), "--time-scale", "3.75")
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        first = fabricgen("deploy", "phase1.yaml", "--endpoints", endpoints, "--yes")
        assert first.returncode == 0, first.stdout + first.stderr
        spines = fabricgen("deploy", "phase2.yaml", "--endpoints", endpoints, "--limit", "gr-spine-*", "--yes")
        assert spines.returncode == 0, spines.stdout + spines.stderr

        result = fabricgen("verify", "phase2.yaml", "--endpoints", endpoints, "--only", "switches", *FAST,
                           "--format", "json")
        assert result.returncode == 0, result.stdout + result.stderr
        doc = json.loads(result.stdout)
        assert doc["findings"] == []
        assert doc["summary"]["unknown"] == 0 and doc["summary"]["failed"] == 0
        assert doc["not_installed"]["switches"] == ["gr-leaf-2"]
        ports = doc["not_installed"]["ports"]
        # each spine's 8 ports planned to gr-leaf-2, dark: nothing there yet
        assert sorted((p["device"], p["port"]) for p in ports) == sorted(
            (spine, f"swp{n}") for spine in ("gr-spine-1", "gr-spine-2") for n in range(9, 17))
        assert {p["reason"] for p in ports} == {f"toward gr-leaf-2: not listed in {endpoints}"}
        # the racked part is checked in full: 3 switches x 15 checks (leaf-1's ECMP has no other leaf
        # installed to reach, so it is skipped), the unracked leaf's 15 not counted
        assert doc["summary"]["checked"] == 44

        table = fabricgen("verify", "phase2.yaml", "--endpoints", endpoints, "--only", "switches", *FAST)
        assert table.returncode == 0, table.stdout + table.stderr
        assert "not installed (not checked): 1 device(s) (gr-leaf-2), 16 dark port(s) toward them" in table.stdout
    finally:
        lab_down(lab)
