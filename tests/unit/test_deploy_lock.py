"""Lock file and environment-override logic (the lab tests run the commands end to end)."""

from __future__ import annotations

import json
import os
import socket
import subprocess

import pytest

from generator.deploy.lock import DeployLock, LockError, break_lock, lock_path, read_holder, state_dir
from generator.deploy.overrides import confirm_timeout
from generator.devices.credentials import CredentialsError


def test_second_acquire_fails_at_once_naming_the_holder(tmp_path):
    path = tmp_path / "f" / "deploy.lock"
    first = DeployLock(path, "f")
    first.acquire()
    try:
        data = json.loads(path.read_text())
        assert data["pid"] == os.getpid() and data["host"] == socket.gethostname()
        assert data["run_id"] == first.run_id and data["fabric"] == "f" and data["user"]
        with pytest.raises(LockError, match=rf"another deploy of fabric 'f' is running: .* pid {os.getpid()}"):
            DeployLock(path, "f").acquire()
        assert [p.name for p in path.parent.iterdir()] == ["deploy.lock"], "no temporary files left"
    finally:
        assert first.release()
    assert not path.exists()


def test_release_leaves_a_lock_that_is_not_ours(tmp_path):
    path = tmp_path / "deploy.lock"
    lock = DeployLock(path, "f")
    lock.acquire()
    path.write_text('{"pid": 1, "host": "elsewhere"}\n')      # broken and retaken by someone else
    assert not lock.release()
    assert path.exists()


def test_stale_lock_is_reported_and_break_removes_only_what_was_read(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    path = tmp_path / "deploy.lock"
    path.write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname(), "user": "u", "started": "t"}))
    with pytest.raises(LockError, match="stale deploy lock"):
        DeployLock(path, "f").acquire()
    holder = read_holder(path, "f")
    assert holder.stale
    path.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname()}))   # a new deploy meanwhile
    with pytest.raises(LockError, match="changed meanwhile"):
        break_lock(holder)
    assert path.exists()
    break_lock(read_holder(path, "f"))
    assert not path.exists()


def test_state_dir_order(tmp_path, monkeypatch):
    monkeypatch.setenv("FABRICGEN_STATE_DIR", str(tmp_path / "s"))
    assert state_dir() == tmp_path / "s"
    monkeypatch.delenv("FABRICGEN_STATE_DIR")
    monkeypatch.setattr("generator.deploy.lock.SHARED_STATE_DIR", tmp_path / "var-lib-fabricgen")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_dir() == tmp_path / "xdg" / "fabricgen"
    (tmp_path / "var-lib-fabricgen").mkdir()
    assert state_dir() == tmp_path / "var-lib-fabricgen"
    with pytest.raises(LockError):
        lock_path("../etc")


@pytest.mark.parametrize("value", ["1", "29", "3601", "-1", "1e3", " "])
def test_confirm_timeout_override_follows_the_intent_rule(monkeypatch, value):
    monkeypatch.setenv("FABRICGEN_CONFIRM_TIMEOUT", value)
    with pytest.raises(CredentialsError, match="FABRICGEN_CONFIRM_TIMEOUT"):
        confirm_timeout(300)


def test_confirm_timeout_override_accepted(monkeypatch):
    assert confirm_timeout(300) == 300
    monkeypatch.setenv("FABRICGEN_CONFIRM_TIMEOUT", "30")
    assert confirm_timeout(300) == 30
