"""Issue 34 findings 5, 7 and 8: outputs never eat a user's file, and `plan --against DIR` reads a
listed path only when it is a regular file within the size limit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.common.bounded_read import ReadRefused, read_bounded
from tests.cli_runner import run_cli
from tests.conftest import example

FABRICGEN = [sys.executable, "-m", "generator.cli"]
SMALL = str(example("small"))


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("FABRICGEN_")}


def run(*args: str) -> subprocess.CompletedProcess:
    """`fabricgen ARGS` in this process (tests/cli_runner.py): judged by exit code, output and files."""
    return run_cli(*args, env=_env())


def run_process(*args: str, timeout: float) -> subprocess.CompletedProcess:
    """In a process of its own, under a timeout: for a read that used to hang or exhaust memory."""
    return subprocess.run([*FABRICGEN, *args], capture_output=True, text=True, timeout=timeout, env=_env())


def _render(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    done = run("render", SMALL, "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("device_dir", ["switches/small-leaf-1", "hosts"])
def test_rerender_refuses_a_users_file_in_a_device_directory(tmp_path, device_dir):
    out = _render(tmp_path)
    where = out / device_dir
    if device_dir == "hosts":
        where = next(p for p in where.iterdir() if p.is_dir())
    notes = where / "NOTES.txt"
    notes.write_text("cable 3 is loose\n")
    done = run("render", SMALL, "-o", str(out))
    assert done.returncode == 1 and f"{notes} is not part of the fabricgen output" in done.stderr
    assert done.stderr.count("\n") == 1
    assert notes.read_text() == "cable 3 is loose\n"


def test_a_fifo_at_a_listed_path_is_refused_at_once(tmp_path):
    out = _render(tmp_path)
    listed = out / "plan.json"
    listed.unlink()
    os.mkfifo(listed)
    done = run_process("plan", SMALL, "--against", str(out), timeout=60)     # hung forever before
    assert done.returncode == 1 and "cannot read plan.json: not a regular file" in done.stderr


def test_a_huge_sparse_file_is_refused_by_its_size_unread(tmp_path):
    out = _render(tmp_path)
    listed = out / "plan.json"
    listed.unlink()
    with open(listed, "wb") as fh:
        fh.truncate(3 << 30)          # 3 GB of hole: MemoryError traceback before
    done = run_process("plan", SMALL, "--against", str(out), timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"cannot read plan.json: {3 << 30} bytes, more than the" in done.stderr


def test_read_bounded_refuses_by_type_size_and_link_before_reading(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ReadRefused) as caught:
        read_bounded(fifo, 10)
    assert caught.value.kind == "type"
    big = tmp_path / "big"
    big.write_bytes(b"x" * 11)
    with pytest.raises(ReadRefused) as caught:
        read_bounded(big, 10)
    assert (caught.value.kind, caught.value.size) == ("size", 11)
    link = tmp_path / "link"
    link.symlink_to(big)
    assert read_bounded(link, 20) == b"x" * 11
    with pytest.raises(ReadRefused) as caught:
        read_bounded(link, 20, follow_symlinks=False)
    assert caught.value.kind == "link"
    with pytest.raises(FileNotFoundError):
        read_bounded(tmp_path / "gone", 10)


def test_capacity_o_refuses_a_foreign_directory_and_its_bom(tmp_path):
    foreign = tmp_path / "quotes"
    foreign.mkdir()
    (foreign / "bom.csv").write_text("the vendor's quote\n")
    done = run("capacity", SMALL, "-o", str(foreign))
    assert done.returncode != 0 and done.stderr.count("\n") == 1 and "not empty" in done.stderr
    assert (foreign / "bom.csv").read_text() == "the vendor's quote\n"


def test_capacity_o_replaces_its_own_earlier_output(tmp_path):
    out = tmp_path / "cap"
    assert run("capacity", SMALL, "-o", str(out)).returncode == 0
    first = (out / "bom.csv").read_text()
    done = run("capacity", SMALL, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert (out / "bom.csv").read_text() == first and (out / "manifest.json").is_file()
