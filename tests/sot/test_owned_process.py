"""Stopping a service's processes by PID: exactly the ones started, even what a leader forked, and
never a process that merely holds a recorded PID's number."""

from __future__ import annotations

import json
import os
import signal
import subprocess

from tests.support.owned_process import OwnedProcess, start_ticks, stop, stop_session


def _spawn(script: str) -> subprocess.Popen:
    return subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, text=True, start_new_session=True)


def test_stop_ends_the_process_and_reaps_it():
    child = _spawn("echo up; exec sleep 300")
    assert child.stdout.readline() == "up\n"
    proc = OwnedProcess.of("sleeper", child.pid)
    stop(proc, timeout=10)
    assert child.wait(timeout=10) in (-signal.SIGTERM, 0)  # 0: _reap collected the status first
    assert not proc.alive()


def test_a_recorded_pid_whose_start_time_differs_is_left_alone():
    child = _spawn("echo up; exec sleep 300")
    try:
        assert child.stdout.readline() == "up\n"
        impostor = OwnedProcess("other", child.pid, start_ticks(child.pid) - 1)
        stop(impostor, signal.SIGKILL, timeout=1)
        assert child.poll() is None and OwnedProcess.of("sleeper", child.pid).alive()
    finally:
        child.kill()
        child.wait(timeout=10)


def test_stop_session_ends_what_the_leader_forked():
    leader = _spawn("sleep 300 & echo $!; wait")
    orphan_pid = int(leader.stdout.readline())
    proc = OwnedProcess.of("leader", leader.pid)
    orphan = OwnedProcess.of("orphan", orphan_pid)
    stop(proc, timeout=10)
    leader.wait(timeout=10)
    assert orphan.alive(), "sh's background job outlives sh: the case stop_session exists for"
    stop_session(proc)
    assert not orphan.alive()
    assert os.getpid() != orphan_pid


def test_a_session_id_reused_by_a_newer_leader_is_not_swept():
    """A recorded leader long gone, its PID now leading another session: that session's
    processes started after the new leader, so none of them is taken for ours."""
    newer = _spawn("sleep 300 & echo $!; wait")
    member = OwnedProcess.of("member", int(newer.stdout.readline()))
    try:
        gone = OwnedProcess("old leader", newer.pid, start_ticks(newer.pid) - 100)
        stop_session(gone, timeout=1)
        assert member.alive()
    finally:
        stop(member, signal.SIGKILL)
        newer.kill()
        newer.wait(timeout=10)


def test_a_service_whose_test_run_died_is_stopped_and_others_are_not(tmp_path):
    """stop_abandoned (the fixture calls it first) on records shaped as the service writes them:
    one whose owner is gone, one whose owner (this test) lives, one left running on purpose."""
    from tests.support.nautobot_service import stop_abandoned

    owner = _spawn("echo up; exec sleep 300")
    assert owner.stdout.readline() == "up\n"
    owners = {"fg-dead": OwnedProcess.of("owner", owner.pid).to_json(),
              "fg-live": OwnedProcess.of("owner", os.getpid()).to_json(), "fg-detached": None}
    services = {}
    for name, owner_record in owners.items():
        server = _spawn("echo up; exec sleep 300")
        assert server.stdout.readline() == "up\n"
        services[name] = (server, OwnedProcess.of("nautobot", server.pid))
        (tmp_path / name).mkdir()
        record = {"owner": owner_record, "processes": [services[name][1].to_json()]}
        (tmp_path / name / "service.json").write_text(json.dumps(record))
    try:
        assert stop_abandoned(tmp_path, "fg-") == []
        owner.kill()
        owner.wait(timeout=10)
        assert stop_abandoned(tmp_path, "fg-") == [tmp_path / "fg-dead"]
        assert not services["fg-dead"][1].alive() and not (tmp_path / "fg-dead").exists()
        assert services["fg-live"][1].alive() and services["fg-detached"][1].alive()
    finally:
        for server, _ in services.values():
            server.kill()
            server.wait(timeout=10)
