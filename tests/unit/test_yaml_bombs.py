"""Issue 34 finding 3: every YAML file fabricgen reads is held to the same bounds (the common
loader, generator/common/bounded_yaml.py). The same bombs go to each entry point: one error line,
a non-zero exit, no MemoryError, nothing started. The commands run under a 2 GiB address-space
limit, so a bound that regresses shows as a failure here, not as a swapping machine."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from generator.common.bounded_yaml import MAX_DEPTH, YamlRefused, load_bounded
from tests.conftest import example

FABRICGEN = [sys.executable, "-m", "generator.cli"]

# 9 levels of 10 aliases: 10^9 leaves from ~600 bytes
LAUGHS = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 10))
DEEP = "a: " + "[" * 5000 + "]" * 5000 + "\n"
BOMBS = {
    "laughs": (LAUGHS, "aliases are expanded"),
    "deep": (DEEP, f"more than {MAX_DEPTH} levels"),
    "huge": ("# " + "x" * (5 * 1024 * 1024) + "\n", "bytes"),
}


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRICGEN_")}
    return subprocess.run([*FABRICGEN, *args], capture_output=True, text=True, timeout=120, cwd=cwd, env=env,
                          preexec_fn=_limit_memory)


def _one_line(done: subprocess.CompletedProcess, where: str, words: str) -> str:
    said = done.stdout + done.stderr            # validate reports on stdout, the others on stderr
    assert done.returncode != 0, said[-2000:]
    assert "Traceback" not in said and "MemoryError" not in said, said[-2000:]
    errors = [line for line in said.splitlines() if "error" in line or where in line]
    assert len(errors) == 1, said[-2000:]
    assert where in errors[0] and words in errors[0], errors[0]
    return errors[0]


def _intent(tmp_path: Path, name: str = "small", extra: str = "") -> Path:
    intent = tmp_path / "fabric.yaml"
    intent.write_text(example(name).read_text() + extra)
    return intent


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_the_loader_refuses_each_bomb_in_one_line(bomb):
    text, words = BOMBS[bomb]
    with pytest.raises(YamlRefused) as caught:
        load_bounded(text)
    assert words in caught.value.message and "\n" not in caught.value.message


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_intent(tmp_path, bomb):
    text, words = BOMBS[bomb]
    (tmp_path / "fabric.yaml").write_text(text)
    _one_line(run("validate", "fabric.yaml", cwd=tmp_path), "fabric.yaml", words if bomb != "huge" else "limit")


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_endpoints(tmp_path, bomb):
    text, words = BOMBS[bomb]
    _intent(tmp_path)
    (tmp_path / "endpoints.yml").write_text(text)
    done = run("deploy", "fabric.yaml", "--endpoints", "endpoints.yml", "--yes", "--dry-run", cwd=tmp_path)
    _one_line(done, "endpoints.yml", words)


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_faults(tmp_path, bomb):
    text, words = BOMBS[bomb]
    _intent(tmp_path)
    (tmp_path / "faults.yaml").write_text(text)
    done = run("lab", "up", "fabric.yaml", "--dir", str(tmp_path / "lab"), "--faults", "faults.yaml", cwd=tmp_path)
    _one_line(done, "faults.yaml", words)
    assert not (tmp_path / "lab" / "endpoints.yml").exists()


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_discovery(tmp_path, bomb):
    # the discovery file's own streaming reader (intent/discovery.py) refuses aliases outright and
    # nests at most 6 levels; the bombs are held here all the same
    text, _ = BOMBS[bomb]
    medium = example("medium").read_text()
    assert "\nhosts:\n" in medium
    (tmp_path / "fabric.yaml").write_text(medium.replace("\nhosts:\n", "\nhosts:\n  discovered: discovered.yaml\n", 1))
    (tmp_path / "discovered.yaml").write_text(text)
    _one_line(run("validate", "fabric.yaml", cwd=tmp_path), "discovered.yaml", "")


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_hosts_discover_reads_its_earlier_file_bounded(tmp_path, bomb):
    # `hosts discover -o FILE` reads what FILE held before (to keep stale entries): a bomb there is
    # no earlier entries, in the discovery reader's bounds, never a MemoryError
    from generator.deploy.discover import previous_entries

    path = tmp_path / "discovered.yaml"
    path.write_text("version: 1\nhosts:\n" + "".join(f"  {line}\n" for line in BOMBS[bomb][0].splitlines()[:20]))
    assert previous_entries(path) == {}
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    assert previous_entries(fifo) == {}         # no writer ever comes: refused at once, not waited on
