"""Fault injection and host-key checking, seen through the napalm drivers."""

from __future__ import annotations

import time

import pytest
from napalm.base.exceptions import (
    CommitError,
    ConnectAuthError,
    ConnectionClosedException,
    ConnectionException,
)

from generator.deploy.candidate import build_candidate
from generator.lab.control import LabDevice
from generator.render.managed import managed_set

pytestmark = pytest.mark.integration

CANDIDATE = "- set:\n    interface:\n      swp1:\n        link:\n          mtu: 9216\n"


def keeping_management(device, rendered: str) -> str:
    """The candidate as the deploy builds it: a bare file would delete the logged-in cumulus
    user of the factory-default switch, which NVUE refuses."""
    return build_candidate(rendered, device.get_config(retrieve="running")["running"], managed_set(False)).text


def test_auth_refused_without_leaking_the_password(lab_start):
    lab = lab_start([LabDevice("leaf01", "cumulus")], faults={"leaf01": {"refuse_auth": True}})
    device = lab.driver("leaf01")
    with pytest.raises(ConnectAuthError) as info:
        device.open()
    assert lab.password not in str(info.value)
    lab.set_faults("leaf01")  # runtime change: the next login works
    device.open()
    device.close()


def test_wrong_password_refused(lab_nvue):
    device = lab_nvue.driver("leaf01", password="not-the-password")
    with pytest.raises(ConnectAuthError) as info:
        device.open()
    assert "not-the-password" not in str(info.value)


def test_drop_after_n_commands(lab_start):
    # three lines pass: the no-op that syncs the shell at login (ssh.py _sync), then two commands
    lab = lab_start([LabDevice("leaf01", "cumulus")], faults={"leaf01": {"drop_after_commands": 3}})
    # netmiko notices a dead channel only when its read times out: keep that short.
    device = lab.driver("leaf01", timeout=2)
    device.open()
    device.compare_config()
    device.has_pending_commit()
    with pytest.raises(ConnectionClosedException, match="connection lost"):
        device.compare_config()
    device.close()


def test_a_session_the_switch_closes_ends_the_read_at_once(lab_start):
    # The login's sync no-op passes; the next line (the reload watcher's `systemctl show` probe) is
    # cut before its echo comes back, as a SONiC `config reload` cuts the watching session when
    # eth0 restarts. netmiko alone waited its fixed 10 s for that echo, whatever the read timeout
    # (a wave of 32 waited for it: issue 32).
    lab = lab_start([LabDevice("sonic01", "sonic", "202411")], username="admin",
                    faults={"sonic01": {"drop_after_commands": 1}})
    device = lab.driver("sonic01", "sonic_fabric", timeout=30)
    device.open()
    started = time.monotonic()
    with pytest.raises(ConnectionClosedException, match="connection lost: the switch closed the session"):
        device.has_pending_commit()
    assert time.monotonic() - started < 8, "the closed session was read until a timeout"
    assert not device.is_alive()["is_alive"]
    device.close()


def test_apply_failure_keeps_pending(lab_nvue):
    device = lab_nvue.driver("leaf01")
    device.open()
    try:
        device.load_replace_candidate(config=keeping_management(device, CANDIDATE))
        lab_nvue.set_faults("leaf01", apply_error="Switchd failed to apply the config")
        with pytest.raises(CommitError, match="Switchd failed to apply the config"):
            device.commit_config()
        assert "mtu: 9216" in device.compare_config()
        lab_nvue.set_faults("leaf01")
        device.commit_config()
        assert device.compare_config() == ""
    finally:
        device.close()


def test_sonic_replace_failure(lab_sonic):
    device = lab_sonic.driver("sonic01", "sonic_fabric")
    device.open()
    try:
        # The switch boots from its factory CONFIG_DB: the failed commit must leave it exactly so.
        before = device.get_config()["running"]
        lab_sonic.set_faults("sonic01", apply_error="Patch Applier: failed")
        device.load_merge_candidate(config='{"PORT": {"Ethernet0": {"mtu": "9216"}}}')
        with pytest.raises(CommitError, match="Patch Applier"):
            device.commit_config()
        assert device.get_config()["running"] == before
    finally:
        device.close()


def test_slow_device_still_works(lab_nvue):
    lab_nvue.set_faults("leaf01", delay=0.4)
    device = lab_nvue.driver("leaf01")
    device.open()
    try:
        started = time.monotonic()
        device.load_replace_candidate(config=keeping_management(device, CANDIDATE))
        device.commit_config()
        assert time.monotonic() - started >= 0.8
        assert "9216" in device.get_config()["running"]
    finally:
        device.close()


def test_slower_than_timeout_is_an_error(lab_nvue):
    device = lab_nvue.driver("leaf01", timeout=1)
    device.open()
    lab_nvue.set_faults("leaf01", delay=2.5)
    try:
        with pytest.raises(ConnectionClosedException, match="no prompt"):
            device.compare_config()
    finally:
        lab_nvue.set_faults("leaf01")
        device.close()


def test_host_key_mismatch_refused(lab_nvue, tmp_path):
    other = tmp_path / "known_hosts_other"
    port = lab_nvue.port("leaf01")
    # A valid ed25519 key that is not the device's.
    other.write_text(f"[127.0.0.1]:{port} ssh-ed25519 "
                     "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n")
    device = lab_nvue.driver("leaf01", known_hosts=str(other))
    with pytest.raises(ConnectionException, match="does not match"):
        device.open()
    device = lab_nvue.driver("leaf01", known_hosts=str(other), accept_new_host_keys=True)
    with pytest.raises(ConnectionException, match="does not match"):
        device.open()


def test_unknown_host_key_refused_unless_accepted(lab_nvue, tmp_path):
    empty = tmp_path / "known_hosts_empty"
    empty.write_text("")
    with pytest.raises(ConnectionException, match="unknown"):
        lab_nvue.driver("leaf01", known_hosts=str(empty)).open()
    missing = tmp_path / "nope" / "known_hosts"
    with pytest.raises(ConnectionException, match="does not exist"):
        lab_nvue.driver("leaf01", known_hosts=str(missing)).open()
    device = lab_nvue.driver("leaf01", known_hosts=str(missing), accept_new_host_keys=True)
    device.open()
    device.close()
    assert f"[127.0.0.1]:{lab_nvue.port('leaf01')}" in missing.read_text()
    strict = lab_nvue.driver("leaf01", known_hosts=str(missing))
    strict.open()
    strict.close()
