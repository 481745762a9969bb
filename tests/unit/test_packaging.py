"""The wheel ships every package and the templates: a non-editable install must render."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO, example

SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def _folders(root: Path, package: str) -> set[str]:
    """Every folder below root that holds a file, as the dotted package setuptools sees."""
    return {".".join((package, *d.relative_to(root).parts)).rstrip(".")
            for d in [root, *root.rglob("*")] if d.is_dir() and d.name != "__pycache__"
            and any(f.is_file() for f in d.iterdir()) and not d.is_symlink()}


def test_every_package_is_listed() -> None:
    """setuptools warns about (and will stop shipping) any importable folder not listed, code
    or data alike: every folder of generator/ and templates/ must be in `packages`."""
    listed = set(SETUPTOOLS["packages"])
    found = _folders(REPO / "generator", "generator") - {"generator.templates"}   # the symlink, below
    found |= _folders(REPO / "templates", "generator.templates")
    found |= {p.parent.name for p in REPO.glob("napalm_*/__init__.py")}
    assert found <= listed, f"add to pyproject.toml [tool.setuptools] packages: {sorted(found - listed)}"


def _source_copy(dest: Path) -> None:
    """The files a fresh clone has that the build reads; the build writes build/ and *.egg-info
    beside them, never into the checkout. generator/templates (a local symlink to ../templates,
    git-excluded) is left out, as in a clone: package-dir maps templates/ itself."""
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, dest / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("templates", "napalm_nvue", "napalm_sonic_fabric"):
        shutil.copytree(REPO / name, dest / name, ignore=skip)
    shutil.copytree(REPO / "generator", dest / "generator", ignore=skip, symlinks=True)
    (dest / "generator" / "templates").unlink(missing_ok=True)


# Python warnings setuptools emits (SetuptoolsDeprecationWarning, BuildBackendWarning, "Package
# ... is absent from the `packages` configuration", "Installing ... as data is deprecated")
_WARNING = re.compile(r"\w*Warning\b|absent from the `packages`|as data is deprecated|would be ignored",
                      re.IGNORECASE)


def test_wheel_and_editable_builds_print_no_warning(tmp_path: Path) -> None:
    """What `pip install .` and `pip install -e .` run (the PEP 517 build_wheel and build_editable
    hooks, without build isolation as `make setup` has setuptools already): no warning, and the
    wheel holds every template and data file."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    _source_copy(src)
    code = ("import sys; from setuptools import build_meta as b;"
            "print(b.build_wheel(sys.argv[1])); print(b.build_editable(sys.argv[1]))")
    # PYTHONDONTWRITEBYTECODE makes build_py log "byte-compiling is disabled": not a packaging issue
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    r = subprocess.run([sys.executable, "-c", code, str(out)], cwd=src, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    log = r.stdout + r.stderr
    warnings = sorted({line.strip() for line in log.splitlines() if _WARNING.search(line)})
    assert warnings == [], "\n".join(warnings)
    wheel = next(out.glob("fabricgen-*-py3-none-any.whl"))
    shipped = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"generator/templates/{p.relative_to(REPO / 'templates').as_posix()}"
                for p in (REPO / "templates").rglob("*.j2")}
    expected |= {p.relative_to(REPO).as_posix() for d in ("generator/data", "generator/lab/data")
                 for p in (REPO / d).iterdir() if p.suffix in (".yaml", ".tsv", ".txt")}
    assert len(expected) > 30 and expected <= shipped, sorted(expected - shipped)


@pytest.mark.integration
def test_wheel_install_renders(tmp_path: Path) -> None:
    """Build a wheel, install it without the source tree, render the medium example."""
    wheel_dir = tmp_path / "wheel"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(wheel_dir), str(REPO)], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {r.stderr.strip()[-200:]}")
    site = tmp_path / "site"
    wheel = next(wheel_dir.glob("fabricgen-*.whl"))
    # --no-compile: pip byte-compiled all 249 modules (0.4 s) in its temporary target, under make's
    # PYTHONPYCACHEPREFIX into .venv/pycache where no run looks; the runs below compile what they import
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile", "-q", "--target", str(site),
                    str(wheel)], check=True, timeout=300)
    out = tmp_path / "out"
    # PYTHONPATH puts the installed wheel ahead of the editable checkout; dependencies come from this venv
    code = ("import generator, sys; assert generator.__file__.startswith(sys.argv[1]), generator.__file__;"
            "from generator.cli import app; app(['render', sys.argv[2], '-o', sys.argv[3]])")
    r = subprocess.run([sys.executable, "-c", code, str(site), str(example("medium")), str(out)],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path, env={"PYTHONPATH": str(site)})
    assert (out / "switches").is_dir(), r.stdout + r.stderr
    assert "generator/templates" not in r.stderr
    # the day-0 templates ship too (templates/day0)
    kit = tmp_path / "kit"
    code = ("from generator.cli import app; import sys;"
            "app(['day0', sys.argv[1], '-o', sys.argv[2], '--url', 'http://192.0.2.1:8080'])")
    r = subprocess.run([sys.executable, "-c", code, str(example("medium")), str(kit)],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path, env={"PYTHONPATH": str(site)})
    assert (kit / "http/ztp/cumulus-ztp.sh").is_file(), r.stdout + r.stderr
