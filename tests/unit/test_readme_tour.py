"""The README tour's bad inputs run as written (issue 36): each command of the block marked
`<!-- readme-tour: ... -->` runs from a copy of examples/errors/ with this checkout's fabricgen, and
prints exactly the lines the README shows, exit 1, nothing written."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap

from tests.conftest import REPO

MARKER = re.compile(r"^<!-- readme-tour:.*-->\n```console\n(.*?)^```", re.M | re.S)


def tour_steps() -> list[tuple[str, list[str]]]:
    (block,) = MARKER.findall((REPO / "README.md").read_text())
    steps: list[tuple[str, list[str]]] = []
    for line in textwrap.dedent(block).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def test_the_tour_runs_as_written(tmp_path):
    shutil.copytree(REPO / "examples" / "errors", tmp_path / "examples" / "errors")
    steps = tour_steps()
    assert [c.split()[2] for c, _ in steps] == ["examples/errors/bad.yaml", "examples/errors/sn2201.yaml"]
    for command, shown in steps:
        words = command.split()
        assert words[0] == "fabricgen"
        done = subprocess.run([sys.executable, "-m", "generator.cli", *words[1:]], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 1, command
        assert done.stdout == "" and done.stderr.splitlines() == shown, command
    assert not (tmp_path / "build").exists()
