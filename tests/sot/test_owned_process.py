"""Stopping a service's processes by PID: exactly the ones started, even what a leader forked, and
never a process that merely holds a recorded PID's number."""

from __future__ import annotations

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
