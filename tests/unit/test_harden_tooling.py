"""Issue 15, "Playbooks to the ecosystem's bar" and "A reproducible install".

ansible-lint at the production profile on playbooks/ (as `make lint` and .ci/run run it),
and constraints.txt still pinning every dependency pyproject.toml declares, inside its
specifier: a pyproject edit without `make lock` fails here instead of on a bastion.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def test_playbooks_pass_ansible_lint_production(tmp_path):
    tool = shutil.which("ansible-lint", path=f"{BIN}:{os.environ.get('PATH', '')}")
    if tool is None:
        pytest.skip("ansible-lint not installed (it comes with the dev extras: make setup)")
    env = {**os.environ, "PATH": f"{BIN}:{os.environ.get('PATH', '')}", "HOME": str(tmp_path), "NO_COLOR": "1"}
    r = subprocess.run([tool, "--offline", "--nocolor", "--profile", "production", "playbooks/"], cwd=REPO,
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Profile 'production' was required, and it passed" in r.stdout + r.stderr


def _pins() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)$", line.strip())
        if m:
            pins[re.sub(r"[-_.]+", "-", m[1]).lower()] = m[2]
    return pins


def test_constraints_pin_every_declared_dependency():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = list(project["dependencies"])
    for extra in ("dev", "sonic"):
        declared += project["optional-dependencies"][extra]
    pins = _pins()
    missing, outside = [], []
    for text in declared:
        req = Requirement(text)
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        if name not in pins:
            missing.append(name)
        elif not req.specifier.contains(pins[name], prereleases=True):
            outside.append(f"{name}=={pins[name]} not {req.specifier}")
    assert not missing and not outside, f"run `make lock`: missing {missing}, outside {outside}"
