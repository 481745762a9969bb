"""Ansible's SSH ControlPath directory is each run's own (deploy's and verify's host runs).

A fixed /tmp/fgcp belonged to whoever ran first: every other user of a shared bastion (and a lab
run as a normal user after one as root) failed with "Cannot write to ControlPath /tmp/fgcp".
ansible-runner is replaced by a recorder: what matters is the environment each run gets.
"""

from __future__ import annotations

import os
import stat
import sys
import types
from pathlib import Path

import pytest

from generator.deploy import hosts as deploy_hosts
from generator.deploy.hosts import run_playbook
from generator.verify.hosts import read_hosts


@pytest.fixture
def recorded(monkeypatch):
    seen: list[dict] = []

    def run(**kwargs):
        path = Path(kwargs["envvars"]["ANSIBLE_SSH_CONTROL_PATH_DIR"])
        seen.append({"dir": path, "existed": path.is_dir(), "mode": path.is_dir() and stat.S_IMODE(path.stat().st_mode),
                     "owner": path.is_dir() and path.stat().st_uid})
        return types.SimpleNamespace(status="successful", rc=0, stats={}, events=[], stdout=None)

    fake = types.SimpleNamespace(run=run)
    monkeypatch.setitem(sys.modules, "ansible_runner", fake)          # verify imports it when it runs
    monkeypatch.setattr(deploy_hosts, "ansible_runner", fake)
    return seen


def test_each_deploy_run_gets_its_own_private_control_path_dir(tmp_path, recorded):
    inventory = tmp_path / "inventory.yml"
    inventory.write_text("all: {}\n")
    run_playbook(tmp_path / "hosts.yml", inventory)
    run_playbook(tmp_path / "hosts.yml", inventory)
    first, second = recorded
    assert first["dir"] != second["dir"]
    for run in recorded:
        assert run["existed"] and run["mode"] == 0o700 and run["owner"] == os.geteuid()
        assert len(str(run["dir"] / ("x" * 40))) < 108            # a socket path's limit, unix(7)
        assert not run["dir"].exists()                            # removed with the run


def test_verify_host_reads_use_their_own_control_path_dir(tmp_path, recorded):
    inventory = tmp_path / "inventory.yml"
    inventory.write_text("all: {}\n")
    read_hosts(tmp_path, inventory, known_hosts=None, extravars={}, ssh_key=None)
    (run,) = recorded
    assert run["dir"] != Path("/tmp/fgcp") and not run["dir"].exists()
