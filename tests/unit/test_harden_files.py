"""Issue 15, findings 1 and 5 (last bullet): `render -o DIR` only replaces a new, empty or earlier
fabricgen output, and `plan --against DIR` only reads one. Each test runs the issue's command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from generator.render import output
from generator.render.output import OutputError, check_target
from tests.cli_runner import run_cli
from tests.conftest import example

FABRICGEN = [sys.executable, "-m", "generator.cli"]
REPO = Path(__file__).resolve().parents[2]
HASH = "$6$fabricgenlab$OqKu8s1.iwmcF01KT9u5xm4I.NCIbdtaGpsXRepyozGYW04mGmSCSYv//RyMxZLJ98uk9N.Iv8BlED6PdN2T/0"
# `openssl passwd -6 -salt fabricgenlab other`
OTHER_HASH = ("$6$fabricgenlab$SeIvw9Auxq9YEHzWFFH6MH1B39MUStyoDryuX7fsdGomepLEAR12FGHVcdbxvFQDe9JJCFYiwL4k1aoH"
              "PvI430")


def run(*args: str, cwd: Path | None = None, user: int | None = None) -> subprocess.CompletedProcess:
    if user is None:             # output and exit status only: in this process (tests/cli_runner.py)
        return run_cli(*args, cwd=cwd or REPO)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([*FABRICGEN, *args], capture_output=True, text=True, timeout=120, cwd=cwd or REPO,
                          env=env, user=user)


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under root (links not followed) with its type, mode and content."""
    out = {}
    for path in sorted([root, *root.rglob("*")]):
        st = path.lstat()
        body = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        link = os.readlink(path) if path.is_symlink() else None
        out[str(path.relative_to(root))] = (st.st_mode, body, link)
    return out


def home_like(tmp_path: Path) -> Path:
    home = tmp_path / "work"
    (home / "projects" / "thesis").mkdir(parents=True)
    (home / "notes.txt").write_text("do not lose this\n")
    (home / "projects" / "thesis" / "ch1.tex").write_text("\\chapter{One}\n")
    subprocess.run(["git", "init", "-q", str(home)], check=True)
    return home


def refused(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error")]
    assert len(errors) == 1, r.stderr
    return errors[0]


def no_leftovers(parent: Path) -> None:
    assert not [p.name for p in parent.iterdir() if ".tmp-" in p.name or ".old-" in p.name]


SMALL = str(example("small"))


def test_home_like_directory_is_refused_and_untouched(tmp_path):
    home = home_like(tmp_path)
    before = snapshot(home)
    line = refused(run("render", SMALL, "-o", str(home)))
    assert "not an earlier fabricgen output" in line and str(home) in line
    assert snapshot(home) == before
    no_leftovers(tmp_path)


@pytest.mark.parametrize("target", [".", "", ".."])
def test_dot_empty_and_dotdot_are_refused(tmp_path, target):
    home = home_like(tmp_path)
    cwd = home / "projects"
    before = snapshot(tmp_path)
    refused(run("render", SMALL, "-o", target, cwd=cwd))
    assert snapshot(tmp_path) == before


def test_current_directory_is_refused_even_when_it_is_an_earlier_output(tmp_path):
    out = tmp_path / "out"
    assert run("render", SMALL, "-o", str(out)).returncode == 0
    before = snapshot(out)
    assert "current directory" in refused(run("render", SMALL, "-o", ".", cwd=out))
    assert snapshot(out) == before


def test_repository_checkout_is_refused(tmp_path):
    checkout = tmp_path / "checkout"
    shutil.copytree(REPO / "inventories", checkout / "inventories")
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    before = snapshot(checkout)
    refused(run("render", SMALL, "-o", str(checkout)))
    assert snapshot(checkout) == before


def test_symlink_resolves_and_faces_the_same_rule(tmp_path):
    home = home_like(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(home)
    before = snapshot(home)
    refused(run("render", SMALL, "-o", str(link)))
    assert snapshot(home) == before and link.is_symlink()

    # a link to an earlier output: the output it points to is replaced, the link stays
    out = tmp_path / "real-out"
    assert run("render", SMALL, "-o", str(out)).returncode == 0
    link2 = tmp_path / "current"
    link2.symlink_to(out)
    r = run("render", str(example("medium")), "-o", str(link2))
    assert r.returncode == 0, r.stderr
    assert link2.is_symlink() and (out / "switches" / "medium-spine-g1-1").is_dir()
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    refused(run("render", SMALL, "-o", str(dangling)))
    assert not (tmp_path / "nowhere").exists()
    no_leftovers(tmp_path)


def test_regular_file_is_not_replaced_by_a_directory(tmp_path):
    target = tmp_path / "fabric.conf"
    target.write_text("keep me\n")
    assert "is a file" in refused(run("render", SMALL, "-o", str(target)))
    assert target.read_text() == "keep me\n"
    refused(run("render", SMALL, "-o", str(target / "sub")))
    assert target.read_text() == "keep me\n"


def test_etc_is_refused():
    # the pure check first: if it ever let /etc through, the CLI below must not run
    with pytest.raises(OutputError, match="not an earlier fabricgen output"):
        check_target("/etc")
    before = sorted(os.listdir("/etc"))
    refused(run("render", SMALL, "-o", "/etc"))
    assert sorted(os.listdir("/etc")) == before


def test_force_is_no_way_around(tmp_path):
    home = home_like(tmp_path)
    before = snapshot(home)
    r = run("render", SMALL, "-o", str(home), "--force")
    assert r.returncode != 0
    assert snapshot(home) == before


def test_new_empty_and_earlier_output_are_written(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run("render", SMALL, "-o", str(empty)).returncode == 0
    assert json.loads((empty / "manifest.json").read_text())["generator"].startswith("fabricgen ")
    nested = tmp_path / "a" / "b" / "out"
    assert run("render", SMALL, "-o", str(nested)).returncode == 0
    r = run("render", str(example("medium")), "-o", str(empty))
    assert r.returncode == 0, r.stderr
    assert not (empty / "switches" / "small-leaf-1").exists() and (empty / "switches" / "medium-spine-g1-1").is_dir()
    no_leftovers(tmp_path)


def test_earlier_output_with_a_users_file_or_a_forged_manifest_is_refused(tmp_path):
    out = tmp_path / "out"
    assert run("render", SMALL, "-o", str(out)).returncode == 0
    (out / "my-notes.md").write_text("mine\n")
    before = snapshot(out)
    assert "my-notes.md" in refused(run("render", SMALL, "-o", str(out)))
    assert snapshot(out) == before

    forged = tmp_path / "forged"
    forged.mkdir()
    (forged / "thesis.tex").write_text("x\n")
    (forged / "manifest.json").write_text('{"generator": "someone else"}\n')
    refused(run("render", SMALL, "-o", str(forged)))
    assert (forged / "thesis.tex").read_text() == "x\n"


def test_root_and_a_mount_point_are_refused():
    assert "root directory" in refused(run("render", SMALL, "-o", "/"))
    mount = Path("/dev/shm")
    if not os.path.ismount(mount):
        pytest.skip("no /dev/shm mount point here")
    before = sorted(os.listdir(mount))
    refused(run("render", SMALL, "-o", str(mount)))
    if not before:
        with pytest.raises(OutputError, match="mount point"):
            check_target(mount)


@pytest.mark.skipif(os.geteuid() != 0, reason="runs the CLI as nobody: needs root to switch user")
def test_as_nobody_unwritable_target_is_one_line_without_leftovers():
    # The "running as nobody": a root-owned earlier output in a root-owned directory.
    try:
        subprocess.run([sys.executable, "-c", "import generator"], user=65534, capture_output=True, check=True,
                       cwd="/", env={"PYTHONPATH": str(REPO)})
    except (PermissionError, subprocess.CalledProcessError):
        pytest.skip("nobody cannot run this interpreter or read the repository here")
    base = Path(tempfile.mkdtemp(prefix="fabricgen-nobody-"))
    try:
        base.chmod(0o755)
        out = base / "out"
        assert run("render", SMALL, "-o", str(out)).returncode == 0
        for path in [out, *out.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        before = snapshot(base)
        line = refused(run("render", SMALL, "-o", str(out), user=65534))
        assert "permission" in line
        line = refused(run("render", SMALL, "-o", str(base / "new" / "out"), user=65534))
        assert "permission" in line
        assert snapshot(base) == before
    finally:
        shutil.rmtree(base)


def test_unwritable_parent_is_one_line_even_as_root(monkeypatch):
    # /proc/sys is r-x for everyone, root included (procfs refuses the mkdir)
    parent = Path("/proc/sys")
    if os.access(parent, os.W_OK):
        pytest.skip("/proc/sys is writable here")
    assert "permission" in refused(run("render", SMALL, "-o", str(parent / "fabricgen-out")))
    with pytest.raises(OutputError, match="cannot write"):       # past the check: still one line
        monkeypatch.setattr(output, "check_target", lambda out_dir, command=None: Path(out_dir))
        output.write_tree({"manifest.json": "{}\n"}, parent / "fabricgen-out")
    assert not (parent / "fabricgen-out").exists()


def test_failed_rename_restores_the_previous_output(tmp_path, monkeypatch):
    out = tmp_path / "out"
    assert run("render", SMALL, "-o", str(out)).returncode == 0
    before = snapshot(out)
    real = os.rename

    def rename(src, dst):
        if ".tmp-" in str(src) and Path(dst) == out:       # the swap, not the marker inside the tree
            raise OSError(16, "Device or resource busy", str(dst))
        return real(src, dst)

    monkeypatch.setattr(output.os, "rename", rename)
    with pytest.raises(OutputError, match="previous output is unchanged"):
        output.write_tree({"manifest.json": "{}\n"}, out)
    assert snapshot(out) == before
    no_leftovers(tmp_path)


# --- plan --against DIR ----------------------------------------------------------------------
def test_plan_against_a_non_render_directory_prints_nothing_of_it(tmp_path):
    home = home_like(tmp_path)
    (home / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY----- topsecret\n")
    for target in (str(home), "/etc"):
        r = run("plan", SMALL, "--against", target)
        line = refused(r)
        assert "not a `fabricgen render` output" in line
        assert "topsecret" not in r.stdout + r.stderr and "root:" not in r.stdout + r.stderr
        assert r.stdout == ""


def test_plan_against_a_render_reads_only_its_files(tmp_path):
    out = tmp_path / "out"
    assert run("render", SMALL, "-o", str(out)).returncode == 0
    (out / "switches" / "planted").mkdir()
    (out / "switches" / "planted" / "startup.yaml").write_text("- set: {secret: topsecret}\n")
    r = run("plan", SMALL, "--against", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "topsecret" not in r.stdout

    listed = out / "plan.json"
    listed.unlink()
    listed.symlink_to("/etc/passwd")
    r = run("plan", SMALL, "--against", str(out))
    refused(r)
    assert "root:" not in r.stdout + r.stderr


def test_plan_shows_a_changed_password_hash_only_as_hashes(tmp_path):
    out = tmp_path / "out"
    assert run("render", str(example("medium")), "-o", str(out)).returncode == 0
    intent = tmp_path / "fabric.yaml"
    intent.write_text(example("medium").read_text().replace(HASH, OTHER_HASH))
    for fmt in ("text", "json", "markdown"):
        r = run("plan", str(intent), "--against", str(out), "--format", fmt)
        assert r.returncode == 3, r.stderr
        assert HASH not in r.stdout and OTHER_HASH not in r.stdout
        assert "hashed-password" in r.stdout and r.stdout.count("<redacted sha256:") >= 2
