"""lab_up / lab_down: files written, one lab per directory, only our process is stopped."""

from __future__ import annotations

import os
import stat

import pytest
import yaml

from generator.lab.control import LabDevice, LabError, lab_down, lab_up

pytestmark = pytest.mark.integration


def test_lab_up_writes_endpoints_password_known_hosts(lab_start):
    lab = lab_start([LabDevice("leaf01", "cumulus"), LabDevice("leaf02", "cumulus", "5.15"),
                     LabDevice("sonic01", "sonic", "202311")])
    endpoints = yaml.safe_load((lab.directory / "endpoints.yml").read_text())
    assert set(endpoints["switches"]) == {"leaf01", "leaf02", "sonic01"}
    for entry in endpoints["switches"].values():
        assert entry["host"] == "127.0.0.1" and entry["username"] == "cumulus" and entry["port"] > 0
    password_file = lab.directory / "password"
    assert endpoints["password_file"] == str(password_file)
    assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
    assert password_file.read_text().strip() == lab.password
    lines = (lab.directory / "known_hosts").read_text().splitlines()
    assert sorted(line.split()[0] for line in lines) == sorted(
        f"[127.0.0.1]:{e['port']}" for e in endpoints["switches"].values())
    assert all(line.split()[1] == "ssh-ed25519" for line in lines)
    assert (lab.directory / "lab.pid").read_text().strip().isdigit()


def test_second_lab_in_same_directory_refused(lab_start):
    lab = lab_start([LabDevice("leaf01", "cumulus")])
    with pytest.raises(LabError, match="already running"):
        lab_up([LabDevice("leaf01", "cumulus")], lab.directory)


def test_lab_down_stops_and_is_idempotent(tmp_path):
    directory = tmp_path / "lab"
    lab_up([LabDevice("leaf01", "cumulus")], directory)
    pid = int((directory / "lab.pid").read_text())
    try:
        assert lab_down(directory) is True
        assert not os.path.exists(f"/proc/{pid}") or "Z" in open(f"/proc/{pid}/stat").read().split(")")[-1][:3]
        assert not (directory / "lab.pid").exists()
        assert lab_down(directory) is False
    finally:
        lab_down(directory)


def test_lab_down_leaves_foreign_pid_alone(tmp_path):
    directory = tmp_path / "lab"
    directory.mkdir()
    (directory / "lab.pid").write_text(f"{os.getpid()}\n")
    assert lab_down(directory) is False
    assert not (directory / "lab.pid").exists()


def test_host_key_persists_across_restart(tmp_path):
    directory = tmp_path / "lab"
    devices = [LabDevice("leaf01", "cumulus")]
    try:
        lab_up(devices, directory)
        first = (directory / "known_hosts").read_text().split()[1:]
        lab_down(directory)
        lab_up(devices, directory)
        assert (directory / "known_hosts").read_text().split()[1:] == first
    finally:
        lab_down(directory)


def test_bad_device_spec_refused(tmp_path):
    with pytest.raises(LabError, match="os must be"):
        lab_up([LabDevice("x", "junos")], tmp_path / "lab")
    with pytest.raises(LabError, match="unique"):
        lab_up([LabDevice("x", "cumulus"), LabDevice("x", "sonic")], tmp_path / "lab")
