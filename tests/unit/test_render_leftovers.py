"""Temporary trees of killed renders (generator/render/leftovers.py, issue 25 item 4).

Real parts: a real render in a subprocess killed with SIGKILL while its forked workers run,
real flock(2) locks held by live processes, the real `fabricgen render` entry point removing
what is left. Planted trees cover each rule a leftover must meet before it is removed."""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator.render import leftovers
from generator.render.output import manifest_text, write_tree
from tests.conftest import REPO, example

_CONTENT = {"a.txt": "a\n", "switches/s1/startup.yaml": "b\n"}
# with a manifest, as render writes one: a later render may replace it
FILES = {**_CONTENT, "manifest.json": manifest_text(
    "t", "", {rel: hashlib.sha256(text.encode()).hexdigest() for rel, text in _CONTENT.items()})}


def _plant(parent: Path, name: str, *, marker: bool = True) -> Path:
    tree = parent / name
    (tree / "switches").mkdir(parents=True)
    (tree / "switches" / "startup.yaml").write_text("x" * 4096)
    if marker:
        (tree / leftovers.MARKER).write_text("fabricgen render in progress, pid 1\n")
    return tree


def _siblings(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir())


def test_a_planted_leftover_with_marker_and_no_lock_is_removed(tmp_path: Path) -> None:
    stale = _plant(tmp_path, ".out.tmp-abc_1234")
    out = write_tree(FILES, tmp_path / "out")
    assert not stale.exists()
    assert _siblings(tmp_path) == ["out"]
    assert leftovers.MARKER not in {p.name for p in out.rglob("*")}       # the render's own marker is gone


@pytest.mark.parametrize("name", [
    ".out.tmp-nomarker",            # right name, no marker: kept below
    ".other.tmp-abcd1234",          # another output's tree
    ".out.tmp-abcd12345",           # not a name mkdtemp makes (9 characters)
    ".out.tmp-ABCD1234",            # nor this (upper case)
    "out.tmp-abcd1234",             # nor this (no leading dot)
    ".out.new-abcd1234",            # nor this kind
])
def test_trees_not_provably_a_leftover_of_this_output_are_kept(tmp_path: Path, name: str) -> None:
    tree = _plant(tmp_path, name, marker=name != ".out.tmp-nomarker")
    write_tree(FILES, tmp_path / "out")
    assert tree.is_dir() and (tree / "switches" / "startup.yaml").is_file()


def test_a_marker_that_is_a_link_or_not_a_file_is_not_a_marker(tmp_path: Path) -> None:
    linked = _plant(tmp_path, ".out.tmp-linked01", marker=False)
    real_marker = tmp_path / "elsewhere"
    real_marker.write_text("x")
    (linked / leftovers.MARKER).symlink_to(real_marker)
    dir_marker = _plant(tmp_path, ".out.tmp-dirmark1", marker=False)
    (dir_marker / leftovers.MARKER).mkdir()
    write_tree(FILES, tmp_path / "out")
    assert linked.is_dir() and dir_marker.is_dir() and real_marker.read_text() == "x"


def test_a_link_named_like_a_leftover_is_not_followed(tmp_path: Path) -> None:
    target = _plant(tmp_path / "precious", "data")
    (tmp_path / ".out.tmp-link1234").symlink_to(target)
    write_tree(FILES, tmp_path / "out")
    assert (target / "switches" / "startup.yaml").is_file() and (target / leftovers.MARKER).is_file()
    assert (tmp_path / ".out.tmp-link1234").is_symlink()


def test_a_tree_locked_by_a_live_process_is_kept(tmp_path: Path) -> None:
    tree = _plant(tmp_path, ".out.tmp-live1234")
    holder = subprocess.Popen([sys.executable, "-c",
                               "import fcntl, os, sys\n"
                               "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
                               "fcntl.flock(fd, fcntl.LOCK_EX)\n"
                               "print('locked', flush=True)\n"
                               "sys.stdin.read()\n", str(tree / leftovers.MARKER)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        write_tree(FILES, tmp_path / "out")
        assert tree.is_dir()
    finally:
        holder.stdin.close()                    # the holder exits, its lock goes with it
        holder.wait(timeout=30)
    write_tree(FILES, tmp_path / "out")
    assert not tree.exists()


def test_an_old_tree_is_removed_only_while_the_output_exists(tmp_path: Path) -> None:
    """Without OUTPUT, `.old-` may hold the only copy of the previous render (killed between renames)."""
    old = _plant(tmp_path, ".out.old-abcd1234")
    assert leftovers.remove_stale(tmp_path / "out") == []
    assert old.is_dir()
    write_tree(FILES, tmp_path / "out")         # OUTPUT did not exist when this render began
    assert old.is_dir()
    write_tree(FILES, tmp_path / "out")         # now it does
    assert not old.exists() and _siblings(tmp_path) == ["out"]


def test_a_tree_of_another_user_is_kept(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a tree another user owns needs root")
    tree = _plant(tmp_path, ".out.tmp-nobody12")
    os.chown(tree, 65534, 65534)
    write_tree(FILES, tmp_path / "out")
    assert tree.is_dir()


def test_claim_holds_the_lock_until_released(tmp_path: Path) -> None:
    tree = tmp_path / ".out.tmp-claimed1"
    tree.mkdir()
    fd = leftovers.claim(tree)
    try:
        assert sorted(p.name for p in tree.iterdir()) == [leftovers.MARKER]
        other = os.open(tree / leftovers.MARKER, os.O_RDONLY)
        with pytest.raises(BlockingIOError):
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(other)
        assert leftovers.remove_stale(tmp_path / "out") == []
    finally:
        os.close(fd)
    assert leftovers.remove_stale(tmp_path / "out") == [tree] and not tree.exists()


def test_without_flock_a_tree_gets_no_marker_and_the_render_goes_on(tmp_path: Path, monkeypatch) -> None:
    """A file system without flock(2) (ENOLCK): an unlocked marker would make a live tree look like
    a leftover to another render, so there is none; the render itself is unaffected."""
    def no_locks(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(leftovers.fcntl, "flock", no_locks)
    tree = tmp_path / ".out.tmp-nolocks1"
    tree.mkdir()
    assert leftovers.claim(tree) is None and list(tree.iterdir()) == []
    stale = _plant(tmp_path, ".out.tmp-abcd1234")
    out = write_tree(FILES, tmp_path / "out")
    assert (out / "a.txt").read_text() == "a\n"
    assert stale.is_dir()                       # unprovable without a lock: kept


# The harness: a real `write_render` (claim, fork, PR_SET_PDEATHSIG) whose device jobs record
# their worker's pid and then never finish, as a render of a huge fabric would be mid-way.
_STUCK_RENDER = """
import os, sys, time
from pathlib import Path
from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.render import output, stream

intent, out, pids = sys.argv[1], sys.argv[2], Path(sys.argv[3])

def stuck():
    (pids / str(os.getpid())).write_text("")
    time.sleep(3600)
    return ()

stream._device_jobs = lambda plan: [stuck] * 4
loaded = load_intent(intent)
output.write_render(compile_plan(loaded.intent), loaded.text, out, workers=2)
"""


def _fabricgen_render(out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "generator.cli", "render", str(example("small")), "-o", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for a reaper (PID 1 of a container may never reap it)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return False
    return fields[0] != "Z"


def _wait_until(condition, what: str, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_killed_render_takes_its_workers_and_the_next_render_removes_its_tree(tmp_path: Path) -> None:
    out, pids = tmp_path / "build" / "small", tmp_path / "pids"
    pids.mkdir()
    (tmp_path / "build").mkdir()
    render = subprocess.Popen([sys.executable, "-c", _STUCK_RENDER, str(example("small")), str(out), str(pids)],
                              cwd=REPO, stderr=subprocess.PIPE, text=True)
    workers: list[int] = []
    try:
        _wait_until(lambda: len(list(pids.iterdir())) == 2 or render.poll() is not None, "two render workers")
        assert render.poll() is None, render.stderr.read()
        workers = [int(p.name) for p in pids.iterdir()]
        (stuck_tree,) = (tmp_path / "build").glob(".small.tmp-*")
        assert (stuck_tree / leftovers.MARKER).is_file()
        # while it lives, another render into the same output leaves its tree alone
        r = _fabricgen_render(out)
        assert r.returncode == 0, r.stderr
        assert stuck_tree.is_dir()
        render.send_signal(signal.SIGKILL)
        render.wait(timeout=30)
        # the workers die with it (without PR_SET_PDEATHSIG they would sleep on, holding the lock)
        _wait_until(lambda: not any(_alive(pid) for pid in workers), "the workers to die with the render")
        r = _fabricgen_render(out)
        assert r.returncode == 0, r.stderr
        assert _siblings(tmp_path / "build") == ["small"]
        assert (out / "manifest.json").is_file() and not (out / leftovers.MARKER).exists()
    finally:
        for pid in workers:                     # only the processes this test started
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if render.poll() is None:
            render.kill()
            render.wait(timeout=30)
        render.stderr.close()
