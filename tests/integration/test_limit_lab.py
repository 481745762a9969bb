"""`drift --limit` and `verify --limit` against the lab (issue 27): only the devices the glob names are
read and reported; the endpoints come from fabricgen.toml beside the intent, not the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from generator.checks.runner import run_checks
from generator.intent.loader import load_intent
from generator.lab.control import LabDevice
from generator.render.output import render_files
from generator.verify.model import SWITCH_CHECKS
from tests.integration.conftest import LAB_PASSWORD
from tests.integration.test_drift_lab import INTENT, SWITCHES, hand_edit, push

pytestmark = pytest.mark.integration


def test_limit_filters_drift_and_verify(tmp_path, lab_start) -> None:
    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT)
    loaded = load_intent(intent)
    lab = lab_start([LabDevice(name, "cumulus", "5.11") for name in SWITCHES])
    push(lab, render_files(run_checks(loaded).plan, loaded.text))
    hand_edit(lab, "tiny-spine-2", "nv set interface swp1 link mtu 1500", "nv config apply -y")
    (tmp_path / "fabricgen.toml").write_text('endpoints = "lab/endpoints.yml"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRICGEN_")} | {"FABRICGEN_PASSWORD": LAB_PASSWORD}

    def fabricgen(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "generator.cli", *args], capture_output=True, text=True,
                              timeout=180, env=env, cwd=tmp_path)

    # no --only: the hosts (gpu01, gpu02) do not match either, so not even a "hosts not checked" note
    leaf = fabricgen("drift", str(intent), "--limit", "tiny-leaf-*", "--format", "json")
    assert leaf.returncode == 0, leaf.stdout + leaf.stderr
    assert set(json.loads(leaf.stdout)["devices"]) == {"tiny-leaf-1"}
    config_line = f"fabricgen: using config {tmp_path / 'fabricgen.toml'}\n"     # the config applied, named
    assert leaf.stderr == config_line

    spines = fabricgen("drift", str(intent), "--only", "switches", "--limit", "tiny-spine-*", "--format", "json")
    assert spines.returncode == 3, spines.stdout + spines.stderr
    devices = json.loads(spines.stdout)["devices"]
    assert {name: d["status"] for name, d in devices.items()} == {"tiny-spine-1": "in_sync", "tiny-spine-2": "drift"}

    nothing = fabricgen("drift", str(intent), "--only", "switches", "--limit", "gpu*")
    assert nothing.returncode == 1 and nothing.stdout == ""
    assert nothing.stderr == config_line + "error: --limit 'gpu*' matches no switches of fabric tiny\n"

    verify = fabricgen("verify", str(intent), "--only", "switches", "--limit", "tiny-spine-1", "--interval", "1",
                       "--settle", "0", "--format", "json")
    assert verify.returncode in (0, 3), verify.stdout + verify.stderr
    doc = json.loads(verify.stdout)
    # one switch: each switch check once, whatever it found, but ecmp: this lab has no cables, so the
    # spine's ports toward the leaf --limit leaves out are dark, not installed (issue 36), and no
    # path to another leaf is left to check
    assert doc["summary"]["checked"] == len(SWITCH_CHECKS) - 1
    assert {f["device"] for f in doc["findings"]} <= {"tiny-spine-1"}
    ports = doc["not_installed"]["ports"]
    assert ports and {(p["device"], p["reason"]) for p in ports} == {
        ("tiny-spine-1", "toward tiny-leaf-1: left out by --limit tiny-spine-1")}
