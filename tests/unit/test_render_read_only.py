"""Rendered files are read-only (issue 27, item 7): host files with the same bytes are hard links to
one inode, so `echo X >> build/medium/hosts/gpu001/nccl.conf` must fail instead of changing every
host; re-rendering, `plan --against DIR` and a deliberate hand edit (chmod +w) keep working."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.render.output import render_files, write_render, write_tree
from tests.cli_runner import run_cli
from tests.conftest import example


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _modes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): stat.S_IMODE(p.lstat().st_mode) for p in root.rglob("*")}


@pytest.mark.parametrize("writer", ["write_render", "write_tree"])
def test_files_0444_scripts_0555_directories_0755(tmp_path, umask_022, writer: str) -> None:
    loaded = load_intent(example("medium"))
    plan = compile_plan(loaded.intent)
    if writer == "write_render":
        out, _ = write_render(plan, loaded.text, tmp_path / "out", 2)
    else:
        out = write_tree(render_files(plan, loaded.text), tmp_path / "out")
    modes = _modes(out)
    dirs = {rel for rel in modes if (out / rel).is_dir()}
    assert {"hosts", "switches", f"hosts/{plan.hosts[0].name}"} <= dirs
    assert {rel: modes[rel] for rel in dirs} == dict.fromkeys(dirs, 0o755)
    assert stat.S_IMODE(out.stat().st_mode) == 0o755
    files = {rel: mode for rel, mode in modes.items() if rel not in dirs}
    scripts = {rel for rel in files if rel.endswith(".sh")}
    assert scripts and {rel: files[rel] for rel in scripts} == dict.fromkeys(scripts, 0o555)
    assert {rel: mode for rel, mode in files.items() if rel not in scripts} == dict.fromkeys(
        set(files) - scripts, 0o444)


def _as_unprivileged(*argv: str) -> list[str]:
    """ARGV without the root override of file modes (CAP_DAC_OVERRIDE): how an operator's shell sees them."""
    if os.geteuid() != 0:
        return list(argv)
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv (util-linux): cannot drop CAP_DAC_OVERRIDE")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--inh-caps=-all", "--", *argv]


def test_an_in_place_edit_of_a_linked_file_fails_and_changes_no_twin(tmp_path) -> None:
    loaded = load_intent(example("medium"))
    plan = compile_plan(loaded.intent)
    out, _ = write_render(plan, loaded.text, tmp_path / "out", 2)
    confs = [out / "hosts" / h.name / "nccl.conf" for h in plan.hosts]
    before = confs[0].read_bytes()
    assert confs[0].stat().st_nlink > 1, "the example's nccl.conf is shared: the case the mode protects"
    done = subprocess.run(_as_unprivileged("sh", "-c", f"echo X >> {confs[0]}"), capture_output=True, text=True)
    assert done.returncode != 0 and "Permission denied" in done.stderr
    assert {c.read_bytes() for c in confs} == {before}


def test_re_render_over_a_read_only_render_and_a_hand_edited_one(tmp_path) -> None:
    """The previous tree's read-only files and directories are replaced; a file someone made writable
    and edited is written anew, not linked, and its twins keep the rendered bytes."""
    loaded = load_intent(example("medium"))
    plan = compile_plan(loaded.intent)
    out, _ = write_render(plan, loaded.text, tmp_path / "out", 2)
    conf = out / "hosts" / plan.hosts[0].name / "nccl.conf"
    rendered = conf.read_bytes()
    conf.chmod(0o644)                                           # the deliberate way to edit it
    with open(conf, "ab") as fh:
        fh.write(b"NCCL_DEBUG=INFO\n")
    out, _ = write_render(plan, loaded.text, tmp_path / "out", 2)
    confs = {(out / "hosts" / h.name / "nccl.conf") for h in plan.hosts}
    assert {c.read_bytes() for c in confs} == {rendered}
    assert {stat.S_IMODE(c.stat().st_mode) for c in confs} == {0o444 & ~_umask()}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")], "temporary dirs left behind"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _plan(*args: str) -> subprocess.CompletedProcess:
    return run_cli("plan", *args)


def test_plan_against_a_directory_shows_a_same_size_hand_edit(tmp_path) -> None:
    intent = str(example("medium"))
    out = tmp_path / "out"
    assert run_cli("render", intent, "-o", str(out)).returncode == 0
    assert _plan(intent, "--against", str(out)).returncode == 0
    switch = sorted((out / "switches").iterdir())[0]
    config = switch / "startup.yaml"
    text = config.read_text()
    assert "9216" in text
    config.chmod(0o644)
    config.write_text(text.replace("9216", "9000", 1))          # same size: the manifest's size check passes
    done = _plan(intent, "--against", str(out), "--format", "json")
    assert done.returncode == 3, done.stdout + done.stderr
    assert switch.name in done.stdout and "9000" in done.stdout
