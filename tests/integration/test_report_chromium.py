"""Open `fabricgen report` output in a real headless Debian Chromium: it must load with
no console errors (a strict CSP turns any network fetch into one), show the key
figures in the DOM, and paint a screenshot that is not blank."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from generator.capacity.command import run_report

pytestmark = pytest.mark.integration

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--enable-logging=stderr", "--v=0"]


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    profile.mkdir()
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120)


def console_errors(stderr: str) -> list[str]:
    # Chromium logs page console messages as "CONSOLE(...)" / ":CONSOLE" lines
    return [line for line in stderr.splitlines() if "CONSOLE" in line or "Refused to" in line]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    assert run_report("inventories/medium/fabric.yaml", str(out)) == 0
    return out


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install chromium)")
def test_report_dom_has_key_figures_and_no_console_errors(report, tmp_path):
    done = chromium(tmp_path, "--dump-dom", report.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    assert console_errors(done.stderr) == []
    dom = done.stdout
    assert "fabricgen report: medium" in dom
    assert re.search(r'id="bisection-tbps".*?25\.6 Tb/s', dom, re.S)
    assert re.search(r'id="allreduce-time".*?1\.4\d\d s', dom, re.S)
    assert re.search(r'id="busbw".*?188\.0 GB/s', dom, re.S)
    assert re.search(r'id="naive-time".*?62\.50 ms', dom, re.S)
    assert "Bill of materials" in dom and "SN5600" in dom
    assert "Validation findings" in dom
    assert dom.count("<svg") >= 3          # topology + two what-if plots


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install chromium)")
def test_report_screenshot_is_not_blank(report, tmp_path):
    from PIL import Image, ImageStat

    shot = tmp_path / "shot.png"
    done = chromium(tmp_path, "--window-size=1280,2000", f"--screenshot={shot}", report.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    assert console_errors(done.stderr) == []
    image = Image.open(shot).convert("L")
    assert image.size == (1280, 2000)
    stddev = ImageStat.Stat(image).stddev[0]
    assert stddev > 20, f"screenshot looks blank (pixel stddev {stddev:.1f})"


def test_report_is_self_contained(report):
    text = report.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert "<script" not in text
    assert "<link" not in text
