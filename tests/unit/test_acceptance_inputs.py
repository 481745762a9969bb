"""`acceptance --results` on hostile inputs (issue 25 item 3): real FIFOs, devices, symlinks
and oversized files; numbers no nccl-tests run prints; planned runs without a log.

The FIFO and symlink cases go through the real entry point in a subprocess, so a hang is a
TimeoutExpired and not a stuck test session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.acceptance.command import _prepare, run_results
from generator.acceptance.compare import compare, not_run
from generator.acceptance.nccl_log import MAX_LOG_BYTES, LogError, parse_log, parse_text
from tests.cli_runner import run_cli
from tests.conftest import example
from tests.nccl_tests_log import nccl_log
from tests.unit.test_acceptance_expected import host_names
from tests.unit.test_acceptance_log import OLD_LOG

SMALL, MEDIUM = str(example("small")), str(example("medium"))
SMALL_BOUND = 2 * 400 / 8 * 0.94        # small: 2 rails x 400G
MEDIUM_BOUND = 4 * 400 / 8 * 0.94       # medium: 4 rails x 400G; 2 rail groups of 16 nodes + fabric
SMALL_HOSTS, MEDIUM_HOSTS = host_names("small"), host_names("medium")


def fabricgen(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "generator.cli", "acceptance", *args], capture_output=True,
                          text=True, timeout=timeout)


def acceptance(*args: str) -> subprocess.CompletedProcess:
    """`fabricgen acceptance ARGS` in this process: for a refusal judged by its output alone."""
    return run_cli("acceptance", *args)


# --- what is read ---------------------------------------------------------------------------

def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "fabric.log"
    os.mkfifo(fifo)
    # a blocking open would never return; 120 s is a loaded machine's start-up, not a wait for a writer
    r = fabricgen(SMALL, "--results", str(fifo), timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stderr == f"error: {fifo}: a FIFO, not a regular file: give the file all_reduce_perf's output was " \
                       "saved to\n"
    assert r.stdout == "" and not (tmp_path / "measured.json").exists()


@pytest.mark.parametrize("path, kind", [("/dev/zero", "a character device"), ("/dev/null", "a character device")])
def test_a_device_is_refused_before_a_byte_is_read(path: str, kind: str) -> None:
    with pytest.raises(LogError) as exc:
        parse_log(path)
    assert str(exc.value) == f"{path}: {kind}, not a regular file: give the file all_reduce_perf's output was saved to"


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LogError, match=r": a directory, not a regular file"):
        parse_log(tmp_path)


def test_a_file_over_the_cap_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "core.log"
    with open(big, "wb") as fh:             # sparse: the cap is checked without writing 64 MiB
        fh.truncate(MAX_LOG_BYTES + 1)
    with pytest.raises(LogError) as exc:
        parse_log(big)
    assert str(exc.value).startswith(f"{big}: {MAX_LOG_BYTES + 1} bytes, more than the 64 MiB")


def test_a_log_at_the_cap_is_read(tmp_path: Path) -> None:
    """The cap refuses what is larger, not a log padded with NCCL INFO lines up to it."""
    text = nccl_log(SMALL_HOSTS, 8, 90.0)
    filler = "gpu001:1:1 [0] NCCL INFO chatter\n"
    room = MAX_LOG_BYTES - len(text)
    path = tmp_path / "fabric.log"
    path.write_text(filler * (room // len(filler)) + "x" * (room % len(filler) - 1) + "\n" + text)
    assert path.stat().st_size == MAX_LOG_BYTES
    assert len(parse_log(path).rows) == 5


def test_a_link_to_a_log_is_read(tmp_path: Path) -> None:
    real = tmp_path / "real.log"
    real.write_text(OLD_LOG)
    link = tmp_path / "fabric.log"
    link.symlink_to(real)
    assert parse_log(link).rows == parse_log(real).rows


# --- numbers no run prints --------------------------------------------------------------------
# OLD_LOG: line 13 is the 1 GiB row, 14 the 2 GiB row, 15 the 4 GiB row, 17 the average.

@pytest.mark.parametrize("old, new, where", [
    ("47.96   71.93", "47.96     inf", "13: data row busbw 'inf'"),
    ("48.14   72.21", "48.14  1e999", "14: data row busbw '1e999'"),       # overflows to inf
    ("48.19   72.29", "48.19    nan", "15: data row busbw 'nan'"),
    ("48.19   72.29", "48.19   -nan", "15: data row busbw '-nan'"),
    ("44610   48.14", "-44610  48.14", "14: data row time '-44610'"),
    ("   48.15   72.23", "  -48.15   72.23", "14: data row algbw '-48.15'"),
    ("72.29      0", "72.29     -3", "15: data row #wrong '-3'"),
    ("72.1383", "inf", "17: '# Avg bus bandwidth' 'inf'"),
])
def test_non_finite_or_negative_values_are_refused_with_file_and_line(old: str, new: str, where: str) -> None:
    assert OLD_LOG.count(old) == 1
    with pytest.raises(LogError) as exc:
        parse_text(OLD_LOG.replace(old, new), "logs/fabric.log")
    text = str(exc.value)
    assert text.startswith(f"logs/fabric.log:{where} is not a finite number of 0 or more: ")
    assert "\n" not in text


def test_root_minus_one_is_not_a_negative_measure() -> None:
    """all_reduce_perf prints root -1 (no root for all-reduce): a column, not a measurement."""
    assert {r.root for r in parse_text(OLD_LOG, "a.log").rows} == {-1}


def test_inf_busbw_through_the_cli_writes_nothing(tmp_path: Path) -> None:
    lines = nccl_log(SMALL_HOSTS, 8, 0.93 * SMALL_BOUND).splitlines(keepends=True)
    # 5 header lines, 32 rank lines (4 nodes x 8 GPUs), "#", 3 column header lines: row 1 is line 42
    first = lines[41].split()
    assert first[0] == str(1 << 30)
    first[7] = "inf"                                    # out-of-place busbw
    lines[41] = "  ".join(first) + "\n"
    log = tmp_path / "fabric.log"
    log.write_text("".join(lines))
    r = acceptance(SMALL, "--results", str(log))
    assert r.returncode == 1 and r.stderr.count("\n") == 1
    assert r.stderr.startswith(f"error: {log}:42: data row busbw 'inf' is not a finite number of 0 or more")
    assert not (tmp_path / "measured.json").exists()


# --- measured.json ------------------------------------------------------------------------------

def test_measured_json_is_never_written_through_a_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "fabric.log").write_text(nccl_log(SMALL_HOSTS, 8, 0.93 * SMALL_BOUND))
    # the temporary name the command used to write through, and the target itself
    (logs / ".measured.json.tmp").symlink_to(victim)
    (logs / "measured.json").symlink_to(victim)
    r = fabricgen(SMALL, "--results", str(logs / "fabric.log"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert victim.read_text() == "precious\n"
    measured = logs / "measured.json"
    assert not measured.is_symlink() and json.loads(measured.read_text())["not_run"] == []
    # nothing left behind but the planted link (not ours to remove)
    assert sorted(p.name for p in logs.iterdir()) == [".measured.json.tmp", "fabric.log", "measured.json"]


def test_measured_json_into_an_unwritable_place_is_one_line(tmp_path: Path) -> None:
    log = tmp_path / "fabric.log"
    log.write_text(nccl_log(SMALL_HOSTS, 8, 0.93 * SMALL_BOUND))
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = acceptance(SMALL, "--results", str(log), "--measured", str(blocker / "m.json"))
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "cannot write the measured points" in r.stderr


# --- every planned run is judged --------------------------------------------------------------

@pytest.fixture(scope="module")
def medium():
    _, _, runs, predictor = _prepare(MEDIUM)
    return runs, predictor


def _log(name: str, hosts: list[str], fraction: float = 0.95):
    return parse_text(nccl_log(hosts, 8, fraction * MEDIUM_BOUND), name)


def test_runs_without_a_log_are_not_run(medium) -> None:
    runs, predictor = medium
    assert [r.id for r in runs.runs] == ["group1", "group2", "fabric"]
    results = compare([_log("f.log", MEDIUM_HOSTS)], runs, predictor)
    assert [r.id for r in not_run(results, runs)] == ["group1", "group2"]
    every = compare([_log("a.log", MEDIUM_HOSTS[:16]), _log("b.log", MEDIUM_HOSTS[16:]),
                     _log("c.log", MEDIUM_HOSTS)], runs, predictor)
    assert not_run(every, runs) == []
    # the same run twice still leaves the other group not run
    twice = compare([_log("a.log", MEDIUM_HOSTS[:16]), _log("a2.log", MEDIUM_HOSTS[:16])], runs, predictor)
    assert [r.id for r in not_run(twice, runs)] == ["group2", "fabric"]


def test_logs_matched_by_rank_count_cover_one_run_of_their_size_each(medium) -> None:
    runs, predictor = medium
    strangers = [f"node{i}" for i in range(16)]
    one = compare([_log("x.log", strangers)], runs, predictor)
    assert one[0].matched_by == "rank count (any of group1, group2)"
    assert [r.id for r in not_run(one, runs)] == ["group2", "fabric"]
    two = compare([_log("x.log", strangers), _log("y.log", strangers)], runs, predictor)
    assert [r.id for r in not_run(two, runs)] == ["fabric"]
    # a group named by its hosts is not covered twice by a stranger of its size
    named = compare([_log("g2.log", MEDIUM_HOSTS[16:]), _log("x.log", strangers)], runs, predictor)
    assert [r.id for r in not_run(named, runs)] == ["fabric"]


def test_two_of_three_runs_without_a_log_exit_3(tmp_path: Path, capsys) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "fabric.log").write_text(nccl_log(MEDIUM_HOSTS, 8, 0.95 * MEDIUM_BOUND))
    assert run_results(MEDIUM, [str(logs / "fabric.log")]) == 3
    out = capsys.readouterr().out
    assert "1 passed, 0 below expectation" in out
    assert "not run: group1: 16 nodes, 128 ranks: no log given; run it with the generated script and pass " \
           "logs/group1.log to --results" in out
    assert "not run: group2: 16 nodes, 128 ranks" in out and "not run: fabric" not in out
    assert json.loads((logs / "measured.json").read_text())["not_run"] == ["group1", "group2"]
    for name, hosts in (("group1.log", MEDIUM_HOSTS[:16]), ("group2.log", MEDIUM_HOSTS[16:])):
        (logs / name).write_text(nccl_log(hosts, 8, 0.95 * MEDIUM_BOUND))
    assert run_results(MEDIUM, [str(p) for p in sorted(logs.glob("*.log"))]) == 0
    assert "not run" not in capsys.readouterr().out
    assert json.loads((logs / "measured.json").read_text())["not_run"] == []
