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
    return sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []


def test_a_miss_stores_the_models_verdict_and_a_hit_returns_it(small_text, cache_dir):
    bad = small_text.replace("mtu: 9216\n", "mtu: 99999\n", 1)
    assert bad != small_text
    expected = validate_nvue(bad, "5.11")
    assert expected and all(p.kind == "value" for p in expected)
    assert cache.validate_nvue_cached(bad, "5.11") == expected
    (entry,) = cache_dir.iterdir()
    assert entry.stat().st_mode & 0o777 == 0o600
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
    assert cache._read(path) == validate_nvue(bad, "5.11")


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
