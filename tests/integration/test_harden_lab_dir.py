"""Issue 15, finding 4: `lab up --dir` never follows a planted link and never overwrites files that
are not a previous lab's own. The original command: `fabricgen lab up INTENT --dir DIR`."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from generator.lab.control import LabDevice, LabError, lab_down, lab_up

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
INTENT = """\
fabric: {name: t}
topology:
  kind: single-switch
  nodes: 2
  gpus_per_node: 8
  rails: 2
  nic_speed: 400G
  switches:
    leaf: {model: SN4700}
switch_os: {name: cumulus, version: "5.11"}
hosts:
  name: "gpu{n:02d}"
  mgmt_interface: eno1
  rails:
    - {netdev: ens1f0np0, rdma: mlx5_0}
    - {netdev: ens2f0np0, rdma: mlx5_1}
"""


def cli_lab_up(tmp_path: Path, directory: Path) -> subprocess.CompletedProcess:
    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT)
    env = {k: v for k, v in os.environ.items() if k != "FABRICGEN_PASSWORD"}
    return subprocess.run([sys.executable, "-m", "generator.cli", "lab", "up", str(intent), "--dir", str(directory)],
                          capture_output=True, text=True, timeout=120, env=env, cwd=REPO)


def one_error(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 1, r.stdout + r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: lab up:"), r.stderr
    return lines[0]


@pytest.mark.parametrize("name", ["password", "lab.json", "known_hosts", "endpoints.yml", "lab.log"])
def test_planted_link_is_refused_and_its_target_untouched(tmp_path, name):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    victim.chmod(0o644)
    directory = tmp_path / "lab"
    directory.mkdir()
    (directory / name).symlink_to(victim)
    try:
        line = one_error(cli_lab_up(tmp_path, directory))
        assert "not a previous lab" in line or "link" in line
    finally:
        lab_down(directory)
    assert victim.read_text() == "precious\n"
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644


@pytest.mark.parametrize("name", ["known_hosts", "password", "endpoints.yml"])
def test_existing_files_are_refused_not_overwritten(tmp_path, name):
    directory = tmp_path / "lab"
    directory.mkdir()
    (directory / name).write_text("mine\n")
    try:
        one_error(cli_lab_up(tmp_path, directory))
    finally:
        lab_down(directory)
    assert (directory / name).read_text() == "mine\n"
    assert sorted(os.listdir(directory)) == [name]


def test_new_directory_is_0700_and_a_previous_lab_is_reused(tmp_path):
    directory = tmp_path / "a" / "lab"
    try:
        r = cli_lab_up(tmp_path, directory)
        assert r.returncode == 0, r.stderr
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        for name in ("password", "lab.json", "endpoints.yml", "known_hosts"):
            assert stat.S_IMODE((directory / name).lstat().st_mode) == 0o600, name
    finally:
        lab_down(directory)
    r = cli_lab_up(tmp_path, directory)          # a previous lab's own directory, no lab running
    try:
        assert r.returncode == 0, r.stderr
    finally:
        lab_down(directory)


def test_link_planted_in_a_previous_labs_directory_is_refused(tmp_path):
    directory = tmp_path / "lab"
    devices = [LabDevice("leaf01", "cumulus")]
    try:
        lab_up(devices, directory, password="pw-one")
    finally:
        lab_down(directory)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (directory / "password").unlink()
    (directory / "password").symlink_to(victim)
    (directory / "notes.txt").write_text("x\n")
    with pytest.raises(LabError, match="notes.txt is not a lab file"):
        lab_up(devices, directory, password="pw-two")
    (directory / "notes.txt").unlink()
    with pytest.raises(LabError, match="is a link"):
        lab_up(devices, directory, password="pw-two")
    assert victim.read_text() == "precious\n"


def test_a_file_as_directory_is_refused(tmp_path):
    target = tmp_path / "lab"
    target.write_text("not a dir\n")
    one_error(cli_lab_up(tmp_path, target))
    assert target.read_text() == "not a dir\n"
