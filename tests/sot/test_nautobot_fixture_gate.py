"""Without a Nautobot to run, the sot tests skip saying what is missing, except where CI requires
them (FABRICGEN_REQUIRE_NAUTOBOT=1): there they fail. Run as a pytest of its own, no server starts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SMOKE = "tests/sot/test_nautobot_service.py"


def _smoke_tests() -> int:
    """How many tests the smoke module holds: each must skip (or fail under CI's gate), none may run."""
    return len(re.findall(r"^def test_", (REPO / SMOKE).read_text(encoding="utf-8"), re.M))


def _pytest(tmp_path, **env) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "FABRICGEN_REQUIRE"))}
    environ.update(FABRICGEN_NAUTOBOT_VENV=str(tmp_path / "no-venv"), **env)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "no:xdist",
                           SMOKE], cwd=REPO, env=environ, capture_output=True, text=True, timeout=300)


def test_missing_nautobot_skips_naming_the_fix(tmp_path):
    run = _pytest(tmp_path)
    assert run.returncode == 0, run.stdout[-2000:]
    assert f"{_smoke_tests()} skipped" in run.stdout and "passed" not in run.stdout
    assert f"no Nautobot venv at {tmp_path / 'no-venv'}: run `make setup-nautobot`" in run.stdout


def test_missing_nautobot_fails_where_ci_requires_it(tmp_path):
    run = _pytest(tmp_path, FABRICGEN_REQUIRE_NAUTOBOT="1")
    assert run.returncode == 1, run.stdout[-2000:]
    assert f"{_smoke_tests()} errors" in run.stdout and "skipped" not in run.stdout
    assert "FABRICGEN_REQUIRE_NAUTOBOT=1 but no Nautobot venv at" in run.stdout
