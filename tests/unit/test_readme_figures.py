"""The README's render samples state what `fabricgen render` writes today: each sample line is
rendered again from its inventory and must match, except the seconds it took."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

# "$ fabricgen render inventories/medium/fabric.yaml -o build/medium" (or .venv/bin/fabricgen),
# then the summary line; the time in "(1 warning(s), 0.13 s)" is the only part left out
_SAMPLE = re.compile(r"^(?:\$ )?(?:\.venv/bin/)?fabricgen render (inventories/[\w-]+/fabric\.yaml) -o (build/[\w-]+)\n"
                     r"(.* files -> build/[\w-]+ \(\d+ warning\(s\)), [\d.]+ s\)$", re.MULTILINE)
SAMPLES = _SAMPLE.findall((REPO / "README.md").read_text())


def test_the_readme_has_render_samples() -> None:
    # the medium example of "A short tour" and the phased growth example at least
    assert {intent for intent, _, _ in SAMPLES} >= {"inventories/medium/fabric.yaml", "inventories/phased/fabric.yaml"}


@pytest.mark.parametrize("intent,out,stated", SAMPLES, ids=[s[0].split("/")[1] for s in SAMPLES])
def test_readme_render_sample_matches_a_render(tmp_path: Path, intent: str, out: str, stated: str) -> None:
    r = subprocess.run([sys.executable, "-m", "generator.cli", "render", str(REPO / intent), "-o", out],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    # the CLI prints the output directory resolved; the README shows it relative to the checkout
    line = next(ln for ln in r.stdout.splitlines() if " files -> " in ln).replace(f"{tmp_path}/", "")
    assert line.rsplit(", ", 1)[0] == stated
    # the file count is what is on disk, not only what the summary says
    written = sum(1 for p in (tmp_path / out).rglob("*") if p.is_file())
    assert f", {written} files -> " in stated
