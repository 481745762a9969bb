"""Shared test helpers: paths of the examples and of ../shared reference data."""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
EXAMPLES = ("small", "medium", "large")


def example(name: str) -> Path:
    return REPO / "inventories" / name / "fabric.yaml"


# `make test-quick` runs with --hypothesis-profile=quick: each property test tries at most
# QUICK_EXAMPLES examples, from a fixed seed, so the editing loop is the same run every time and
# ~13 CPU-seconds shorter; `make test` (CI) tries every test's full count from a random seed
# (Hypothesis's documented pattern of a "dev" and a "ci" profile, settings.register_profile).
QUICK_EXAMPLES = 50
hypothesis_settings.register_profile("quick", max_examples=QUICK_EXAMPLES, derandomize=True)


def examples(count: int) -> int:
    """A property test's example count: COUNT, or at most QUICK_EXAMPLES under the quick profile
    (an explicit max_examples overrides the profile's, so it asks here)."""
    if hypothesis_settings.get_current_profile_name() == "quick":
        return min(count, QUICK_EXAMPLES)
    return count


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"reference material not found at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def _session_cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")


_PROCESS_STATE: list[str] = []


# A test process keeps far more alive than one fabricgen command (every module, the nvueschema
# models of several releases, the plans and renders the caches hold), and CPython's default
# thresholds (700, 10, 10) walked all of it again and again: measured with gc.callbacks over
# `make test-quick`, 25-51 s of collector time per xdist worker, 84 % of it in full collections.
# A larger first threshold keeps the same three generations and the same cycle collection, ~200
# times fewer collections (8-21 s per worker, mostly the full ones code asks for with gc.collect()).
GC_THRESHOLDS = (50_000, 20, 20)


def pytest_configure(config):
    gc.set_threshold(*GC_THRESHOLDS)
    _private_process_state()


def _private_process_state():
    """Deploy locks and backups of this test process (each xdist worker is one) in a directory of its
    own, from the start: a module- or session-scoped fixture that deploys runs before the per-test
    _private_state_dir below, and two workers deploying fabrics of one name would otherwise meet at
    one lock in ~/.local/state (and write ./backups of the checkout)."""
    root = tempfile.mkdtemp(prefix="fabricgen-tests-")
    _PROCESS_STATE.append(root)
    os.environ["FABRICGEN_STATE_DIR"] = os.path.join(root, "state")
    os.environ.setdefault("FABRICGEN_BACKUP_DIR", os.path.join(root, "backups"))


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config):
    for root in _PROCESS_STATE:
        shutil.rmtree(root, ignore_errors=True)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # The worker is done and its results are with the controller, which waits for it to exit.
        # Its ~1.4 M live objects were walked three more times on the way out (pytest's two
        # unraisable-exception sweeps, gc.collect() each, and the interpreter's final collection):
        # ~5 s of `make test-quick` after its last test. Frozen, the collector leaves them alone;
        # a cycle whose __del__ raises and that no collection in the run reached goes unreported.
        gc.freeze()


@pytest.fixture(autouse=True)
def _private_state_dir(tmp_path_factory, monkeypatch, _session_cache_dir):
    """Deploy locks (generator/deploy/lock.py) in a directory of this test, never the user's
    ~/.local/state or a bastion's /var/lib/fabricgen."""
    monkeypatch.setenv("FABRICGEN_STATE_DIR", str(tmp_path_factory.mktemp("state")))
    # FG260's model verdicts (generator/render/nvue_model_cache.py): one directory per session,
    # never the user's ~/.cache
    monkeypatch.setenv("FABRICGEN_CACHE_DIR", str(_session_cache_dir))
