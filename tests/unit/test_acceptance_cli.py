"""`fabricgen acceptance` through the real entry point: exit 0 as expected, 3 below
expectation, 1 unreadable (one line naming the file, nothing written), 2 usage."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.cli_runner import run_cli
from tests.conftest import example
from tests.nccl_tests_log import nccl_log
from tests.unit.test_acceptance_expected import host_names

SMALL = str(example("small"))
NIC_BOUND = 2 * 400 / 8 * 0.94          # small: 2 rails x 400G, single switch
HOSTS = host_names("small")


def fabricgen(*args: str) -> subprocess.CompletedProcess:
    # output and exit status only: in this process (tests/cli_runner.py)
    return run_cli("acceptance", *args)


def test_write_then_judge(tmp_path: Path) -> None:
    out = tmp_path / "acc"
    r = fabricgen(SMALL, "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert {p.name for p in out.iterdir()} == {"expected.json", "hostfile", "nccl.env", "acceptance.sbatch",
                                               "run-mpi.sh"}
    logs = out / "logs"
    logs.mkdir()
    (logs / "fabric.log").write_text(nccl_log(HOSTS, 8, 0.93 * NIC_BOUND))
    r = fabricgen(SMALL, "--results", str(logs / "fabric.log"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "fabric: 4 nodes, 32 ranks" in r.stdout and "1 passed, 0 below" in r.stdout
    assert (logs / "measured.json").is_file()
    # rewriting into the earlier output (logs inside) is allowed and keeps the logs
    assert fabricgen(SMALL, "-o", str(out)).returncode == 0 and (logs / "fabric.log").is_file()


def test_below_expectation_exits_3(tmp_path: Path) -> None:
    good, slow = tmp_path / "good.log", tmp_path / "slow.log"
    good.write_text(nccl_log(HOSTS, 8, 0.93 * NIC_BOUND))
    slow.write_text(nccl_log(HOSTS, 8, 0.5 * NIC_BOUND))
    measured = tmp_path / "m" / "points.json"
    # --results LOG LOG...: the shell's glob expands to several words after one --results
    r = fabricgen(SMALL, "--results", str(good), str(slow), "--measured", str(measured))
    assert r.returncode == 3, r.stdout + r.stderr
    assert "FAIL" in r.stdout and "1 passed, 1 below expectation" in r.stdout
    assert measured.is_file()
    assert fabricgen(SMALL, "--results", str(slow), "--min-fraction", "0.4").returncode == 0


def test_corrupt_data_exits_3(tmp_path: Path) -> None:
    bad = tmp_path / "fabric.log"
    bad.write_text(nccl_log(HOSTS, 8, NIC_BOUND, wrong=(3, 0)))
    r = fabricgen(SMALL, "--results", str(bad))
    assert r.returncode == 3 and "data corruption" in r.stdout


def test_truncated_or_foreign_log_exits_1_with_one_line(tmp_path: Path) -> None:
    full = nccl_log(HOSTS, 8, NIC_BOUND)
    truncated = tmp_path / "fabric.log"
    truncated.write_text(full[:full.index("# Out of bounds")])
    foreign = tmp_path / "notes.txt"
    foreign.write_text("all good, trust me\n")
    for path, words in ((truncated, "truncated"), (foreign, "not an nccl-tests log")):
        r = fabricgen(SMALL, "--results", str(path))
        assert r.returncode == 1
        assert r.stderr.count("\n") == 1 and str(path) in r.stderr and words in r.stderr
        assert r.stdout == ""
    assert not (tmp_path / "measured.json").exists()


def test_output_dir_guard_and_usage(tmp_path: Path) -> None:
    (tmp_path / "precious.txt").write_text("keep")
    r = fabricgen(SMALL, "-o", str(tmp_path))
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "not empty" in r.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["precious.txt"]
    assert fabricgen(SMALL).returncode == 2
    assert fabricgen(SMALL, "-o", str(tmp_path / "x"), "--results", "a.log").returncode == 2
    assert fabricgen(SMALL, "--results", "a.log", "--min-fraction", "1.5").returncode == 2
    assert fabricgen(SMALL, "--results", "a.log", "--min-size", "big").returncode == 2
