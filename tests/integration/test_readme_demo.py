"""The README's lab demo runs as written (issue 27, item 9): every console block marked
`<!-- readme-demo: ... -->` is run verbatim, in order, in one shell, in a fresh `git clone` of this
repository, with the shared venv's fabricgen on PATH; each command must succeed and print the lines
the README shows (`...` alone: lines left out; `...` inside a line: a part that varies)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from generator.lab.control import lab_down
from tests.conftest import REPO

pytestmark = pytest.mark.integration

MARKER = re.compile(r"^[ \t]*<!-- readme-demo:.*-->[ \t]*\n([ \t]*)```console\n(.*?)^[ \t]*```", re.M | re.S)
SENTINEL = "@@fabricgen-readme-demo@@"


def demo_steps(readme: str) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) of the marked console blocks, in README order."""
    steps: list[tuple[str, list[str]]] = []
    for match in MARKER.finditer(readme):
        for line in textwrap.dedent(match.group(2)).splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
    return steps


def _matches(expected: list[str], actual: list[str]) -> str | None:
    """None if EXPECTED (with `...`) is a subsequence of ACTUAL, else the first line not found."""
    at = 0
    for line in expected:
        if line.strip() == "...":
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in line.rstrip().split("...")))
        while at < len(actual) and not pattern.fullmatch(actual[at].rstrip()):
            at += 1
        if at == len(actual):
            return line
        at += 1
    return None


def test_the_marked_blocks_are_the_lab_demo() -> None:
    steps = demo_steps((REPO / "README.md").read_text())
    commands = [c for c, _ in steps]
    assert commands[0] == "export FABRICGEN_PASSWORD=fabricgen-lab"
    assert any(c.startswith("fabricgen deploy ") for c in commands) and commands[-1].startswith("fabricgen lab down")
    assert _matches(["a", "...", "c ... e"], ["a", "b", "c d e"]) is None
    assert _matches(["c ... e", "a"], ["a", "c d e"]) == "a"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_readme_lab_demo_runs_verbatim_in_a_fresh_clone(tmp_path) -> None:
    clone = tmp_path / "fabricgen"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True, timeout=120)
    if not (clone / "generator" / "templates").exists():
        # `make setup` installs the package editable, templates/ as generator.templates; here the
        # clone is imported through PYTHONPATH, so the link a development checkout has
        (clone / "generator" / "templates").symlink_to("../templates")
    steps = demo_steps((clone / "README.md").read_text())
    assert steps, "no <!-- readme-demo: ... --> console block in README.md"
    script = "set -e\n" + "".join(f"{command}\necho {SENTINEL}\n" for command, _ in steps)
    # only the venv's tools and the system's; no FABRICGEN_* from the caller: the README must say them
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRICGEN_")}
    env |= {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', os.defpath)}",
            "PYTHONPATH": str(clone), "FABRICGEN_STATE_DIR": str(tmp_path / "state"), "COLUMNS": "120"}
    try:
        # stderr into stdout, as a terminal shows them
        done = subprocess.run(["bash", "-c", script], cwd=clone, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=600)
    finally:
        lab_down(clone / "build" / "lab")         # whatever the demo got to
    ran = done.stdout.count(SENTINEL)
    assert ran == len(steps) and done.returncode == 0, (
        f"README demo stopped at `{steps[min(ran, len(steps) - 1)][0]}` (exit {done.returncode}):\n"
        f"{done.stdout[-4000:]}")
    outputs = done.stdout.split(SENTINEL + "\n")
    for (command, expected), output in zip(steps, outputs, strict=False):
        missing = _matches(expected, output.splitlines())
        assert missing is None, f"`{command}` did not print {missing!r}; it printed:\n{output}"
