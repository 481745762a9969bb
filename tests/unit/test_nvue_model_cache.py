"""FG260's NVUE model verdicts on disk (generator/render/nvue_model_cache.py).

Real parts: real rendered documents, nvueschema's real models on a miss, a fresh interpreter to
see that a hit never imports the model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.render import nvue_model_cache as cache
from generator.render.nvue import render_switch
from generator.render.nvue_model import validate_nvue
from tests.cli_runner import run_cli
from tests.conftest import REPO, example


@pytest.fixture(scope="module")
def small_text() -> str:
    plan = compile_plan(load_intent(example("small")).intent)
    return render_switch(plan, plan.switches[0])


@pytest.fixture()
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "c"))
    return tmp_path / "c" / "nvue-model"


def _entries(directory) -> list:
    """The verdicts in DIRECTORY (its HMAC key aside)."""
    return sorted(p.name for p in directory.iterdir() if p.name != cache.KEY_FILE) if directory.is_dir() else []


def _stored(path):
    """What the cache answers from the entry at PATH, under its directory's key."""
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return cache._read(fd, cache._read_key(fd), path.name)
    finally:
        os.close(fd)


def test_a_miss_stores_the_models_verdict_and_a_hit_returns_it(small_text, cache_dir):
    bad = small_text.replace("mtu: 9216\n", "mtu: 99999\n", 1)
    assert bad != small_text
    expected = validate_nvue(bad, "5.11")
    assert expected and all(p.kind == "value" for p in expected)
    assert cache.validate_nvue_cached(bad, "5.11") == expected
    (name,) = _entries(cache_dir)
    entry = cache_dir / name
    assert entry.stat().st_mode & 0o777 == 0o600
    assert (cache_dir / cache.KEY_FILE).stat().st_mode & 0o777 == 0o600
    assert cache_dir.stat().st_mode & 0o777 == cache_dir.parent.stat().st_mode & 0o777 == 0o700
    stored = json.loads(entry.read_text())["problems"]
    assert [(tuple(p), m, k) for p, m, k in stored] == [(p.path, p.message, p.kind) for p in expected]
    assert cache.validate_nvue_cached(bad, "5.11") == expected          # the hit
    assert cache.validate_nvue_cached(small_text, "5.11") == [] == validate_nvue(small_text, "5.11")
    assert len(_entries(cache_dir)) == 2                                  # one per document


def test_the_key_holds_document_release_and_model(small_text, cache_dir):
    cache.validate_nvue_cached(small_text, "5.11")
    cache.validate_nvue_cached(small_text + "\n", "5.11")
    cache.validate_nvue_cached(small_text, "5.12")
    assert len(_entries(cache_dir)) == 3
    assert cache._fingerprint("5.11") != cache._fingerprint("5.12")
    # a release with no model of its own is checked, and kept, under the model it uses
    assert cache._entry(cache_dir, "5.18", "x") == cache._entry(cache_dir, "5.18", "x")
    cache.validate_nvue_cached(small_text, "5.99")
    cache.validate_nvue_cached(small_text, "5.18")
    assert len(_entries(cache_dir)) == 4


@pytest.mark.parametrize("garbage", ["", "{", '{"problems": "x"}', '{"problems": [["a", "b", "value"]]}',
                                     '{"problems": [[["a"], "b", "bogus"]]}', '[]'])
def test_an_entry_not_ours_is_a_miss_and_is_replaced(small_text, cache_dir, garbage):
    bad = small_text.replace("mtu: 9216\n", "mtu: 99999\n", 1)
    path = cache._entry(cache_dir, "5.11", bad)
    path.parent.mkdir(parents=True)
    path.write_text(garbage)
    assert cache.validate_nvue_cached(bad, "5.11") == validate_nvue(bad, "5.11")
    assert _stored(path) == validate_nvue(bad, "5.11")


def test_off_and_unwritable(small_text, tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, "off")
    assert cache.cache_dir() is None
    assert cache.validate_nvue_cached(small_text, "5.11") == []
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(cache.CACHE_ENV, str(blocker))                   # nvue-model/ cannot be made
    assert cache.validate_nvue_cached(small_text, "5.11") == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_default_location_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv(cache.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.cache_dir() == tmp_path / "fabricgen" / "nvue-model"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")                # invalid per the spec: ignored
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "fabricgen" / "nvue-model"


def test_a_hit_does_not_import_the_model(tmp_path):
    """The point of the cache: `fabricgen validate` on a fabric checked before never builds the
    ~630 pydantic classes of a release's model."""
    env = {**os.environ, cache.CACHE_ENV: str(tmp_path)}
    script = ("import sys\n"
              "from generator.cli import app\n"
              "from typer.testing import CliRunner\n"
              f"r = CliRunner().invoke(app, ['validate', {str(example('large'))!r}])\n"
              "assert r.exit_code == 0, r.output\n"
              "print(sorted(m for m in sys.modules if m.startswith('nvueschema.models.v')))\n")
    runs = [subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
                           check=True).stdout.strip() for _ in range(2)]
    assert runs == ["['nvueschema.models.v5_15']", "[]"]                # large: Cumulus 5.15
    assert len(list((tmp_path / "nvue-model").iterdir())) >= 1


# --- trust (issue 25 item 5): a cache others can write, or an entry we did not write, is never believed ---

@pytest.fixture()
def bad_text(small_text) -> str:
    """A document NVUE refuses (link mtu 99999): a planted `no problems` entry would hide that."""
    return small_text.replace("mtu: 9216\n", "mtu: 99999\n", 1)


def _plant_clean_verdict(cache_dir, text, hmac_value=None) -> None:
    path = cache._entry(cache_dir, "5.11", text)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"problems": []} if hmac_value is None else {"hmac": hmac_value, "problems": []}
    path.write_text(json.dumps(doc))


def _warning_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning: NVUE model cache")]


@pytest.mark.parametrize("mode, words", [(0o777, "mode 0777 lets others write in it"),
                                         (0o770, "mode 0770 lets others write in it"),
                                         (0o702, "mode 0702 lets others write in it")])
def test_a_directory_others_can_write_is_refused_with_one_warning(bad_text, cache_dir, capsys, mode, words):
    expected = validate_nvue(bad_text, "5.11")
    assert expected
    _plant_clean_verdict(cache_dir, bad_text)
    os.chmod(cache_dir, mode)
    before = _entries(cache_dir)
    for _ in range(3):                                                  # once per process, not per document
        assert cache.validate_nvue_cached(bad_text, "5.11") == expected
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (f"warning: NVUE model cache {cache_dir}: {words} (want 0700); not used (checks run without "
                    f"it, same results): remove the directory or set {cache.CACHE_ENV}=off")
    assert _entries(cache_dir) == before and not (cache_dir / cache.KEY_FILE).exists()   # nothing written


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch):
    monkeypatch.setattr(cache, "_warned", set())


def _other_uid() -> int:
    if os.geteuid() != 0:
        pytest.skip("making a file another user owns needs root")
    return 65534                                                        # nobody


def test_a_directory_of_another_user_is_refused(bad_text, cache_dir, capsys):
    uid = _other_uid()
    cache_dir.mkdir(parents=True, mode=0o700)
    os.chown(cache_dir, uid, uid)
    assert cache.validate_nvue_cached(bad_text, "5.11") == validate_nvue(bad_text, "5.11")
    assert _warning_lines(capsys.readouterr().err) == [
        f"warning: NVUE model cache {cache_dir}: owned by uid {uid}, not by this user (uid 0); not used (checks "
        f"run without it, same results): remove the directory or set {cache.CACHE_ENV}=off"]
    assert _entries(cache_dir) == []


def test_a_link_in_place_of_the_directory_is_refused(bad_text, cache_dir, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    cache_dir.parent.mkdir(parents=True)
    cache_dir.symlink_to(elsewhere)
    assert cache.validate_nvue_cached(bad_text, "5.11") == validate_nvue(bad_text, "5.11")
    assert [line.split(": ", 2)[2] for line in _warning_lines(capsys.readouterr().err)] == [
        "it is a symbolic link; not used (checks run without it, same results): remove the directory or set "
        f"{cache.CACHE_ENV}=off"]
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("spoil, words", [
    (lambda key: key.chmod(0o644), "key has mode 0644 (want 0600)"),
    (lambda key: key.chmod(0o400), "key has mode 0400 (want 0600)"),
    (lambda key: key.write_bytes(b"short"), "key holds 5 bytes, not 32"),
    (lambda key: (key.unlink(), key.symlink_to("/dev/null")), "key is a symbolic link"),
    (lambda key: (key.unlink(), os.mkfifo(key, 0o600)), "key is not a regular file"),
])
def test_a_key_not_ours_alone_is_refused(bad_text, cache_dir, capsys, spoil, words):
    expected = validate_nvue(bad_text, "5.11")
    cache.validate_nvue_cached(bad_text, "5.11")                        # makes the key and an entry
    assert capsys.readouterr().err == ""
    spoil(cache_dir / cache.KEY_FILE)
    _plant_clean_verdict(cache_dir, bad_text)
    assert cache.validate_nvue_cached(bad_text, "5.11") == expected
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"warning: NVUE model cache {cache_dir}: {words}; not used")


def test_a_key_of_another_user_is_refused(bad_text, cache_dir, capsys):
    uid = _other_uid()
    cache.validate_nvue_cached(bad_text, "5.11")
    os.chown(cache_dir / cache.KEY_FILE, uid, uid)
    assert cache.validate_nvue_cached(bad_text, "5.11") == validate_nvue(bad_text, "5.11")
    (line,) = capsys.readouterr().err.splitlines()
    assert f": key is owned by uid {uid}, not by this user; not used" in line


def test_a_planted_entry_is_ignored_and_replaced(bad_text, small_text, cache_dir, capsys):
    expected = validate_nvue(bad_text, "5.11")
    cache.validate_nvue_cached(small_text, "5.11")                      # the key and a real (empty) verdict
    key = (cache_dir / cache.KEY_FILE).read_bytes()
    good_name = cache._entry(cache_dir, "5.11", small_text).name
    bad_name = cache._entry(cache_dir, "5.11", bad_text).name
    real_for_small = json.loads((cache_dir / good_name).read_text())["hmac"]
    other_key = bytes(32)
    for planted in (None,                                               # no hmac at all
                    "0" * 64,                                           # a made-up one
                    cache._mac(other_key, bad_name, []),                 # signed with another cache's key
                    real_for_small,                                     # copied from another document's entry
                    "é" * 64):                                          # not even ASCII
        _plant_clean_verdict(cache_dir, bad_text, planted)
        assert cache.validate_nvue_cached(bad_text, "5.11") == expected
        assert _stored(cache_dir / bad_name) == expected                # replaced by the real verdict
    assert cache._mac(key, bad_name, []) != real_for_small
    assert capsys.readouterr().err == ""                                # a planted entry is only a miss


def test_concurrent_first_runs_agree_on_one_key(cache_dir):
    """Two processes making the key at once: the link makes one of them the key, never half of each."""
    cache_dir.mkdir(parents=True, mode=0o700)
    script = ("import os, sys\n"
              "from generator.render import nvue_model_cache as c\n"
              "fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)\n"
              "print(c._key(fd).hex())\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(cache_dir)], cwd=REPO, stdout=subprocess.PIPE,
                              text=True) for _ in range(4)]
    keys = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert len(keys) == 1 and keys == {(cache_dir / cache.KEY_FILE).read_bytes().hex()}
    assert sorted(p.name for p in cache_dir.iterdir()) == [cache.KEY_FILE]      # no temporary left


def test_render_with_a_refused_cache_warns_once_and_writes_the_same(tmp_path):
    """Through the command line's app (tests/cli_runner.py: judged by output and files alone, so
    in this process; two interpreters, each importing the 5.11 model, took 3.3 s): the same files
    as with the cache off, and one stderr line."""
    shared = tmp_path / "shared"
    (shared / "nvue-model").mkdir(parents=True)
    os.chmod(shared / "nvue-model", 0o777)

    def render(cache_env: str, out: str) -> subprocess.CompletedProcess:
        env = {**os.environ, cache.CACHE_ENV: cache_env}
        return run_cli("render", str(example("small")), "-o", str(tmp_path / out), cwd=REPO, env=env)

    off, refused = render("off", "a"), render(str(shared), "b")
    assert off.returncode == refused.returncode == 0, refused.stderr
    assert _warning_lines(off.stderr) == []
    assert refused.stderr.replace(off.stderr, "", 1).splitlines() == [
        f"warning: NVUE model cache {shared / 'nvue-model'}: mode 0777 lets others write in it (want 0700); not "
        f"used (checks run without it, same results): remove the directory or set {cache.CACHE_ENV}=off"]
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)
    assert list((shared / "nvue-model").iterdir()) == []
