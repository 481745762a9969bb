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


# --- issue 38: the topology picture -------------------------------------------------------------
PHASED = Path(__file__).resolve().parents[2] / "inventories" / "phased" / "fabric.yaml"


def svg_group(dom: str, gid: str) -> str:
    """The markup of the SVG group with id GID (matplotlib writes one <g id=...> per element)."""
    m = re.search(rf'<g id="{re.escape(gid)}">(.*?)</g>', dom, re.S)
    assert m, f"no element {gid} in the topology"
    return m.group(1)


@pytest.fixture(scope="module")
def grown_report(tmp_path_factory):
    """inventories/phased at 64 installed nodes of a 128-node build-out: units 1-2 installed, 3-4 not."""
    tmp = tmp_path_factory.mktemp("grown")
    intent = tmp / "fabric.yaml"
    intent.write_text(PHASED.read_text().replace("build_out: {nodes: 256}", "build_out: {nodes: 128}"))
    out = tmp / "report.html"
    assert run_report(str(intent), str(out)) == 0
    return out


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install chromium)")
def test_topology_draws_installed_units_and_the_build_out(grown_report, tmp_path):
    done = chromium(tmp_path, "--dump-dom", grown_report.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    assert console_errors(done.stderr) == []
    dom = done.stdout
    svg = dom[dom.index('<svg class="topology"'):]
    svg = svg[:svg.index("</svg>")]
    # units 1 and 2 are installed (solid frames), 3 and 4 only in the build-out (dashed)
    for unit in (1, 2):
        assert "stroke-dasharray" not in svg_group(svg, f"topo-unit-{unit}")
    for unit in (3, 4):
        assert "stroke-dasharray" in svg_group(svg, f"topo-unit-{unit}")
    assert "unit 3 (build-out)" in svg and "unit 2 (installed)" in svg
    assert "x 2 units installed, 2 more in the build-out (dashed)" in svg
    # the 8 spines one by one, with their fan-out: 2 units' leaves now, 4 units' at the build-out
    spines = re.findall(r'<g id="topo-spine-(phased-spine-\d+)">', svg)
    assert spines == [f"phased-spine-{i}" for i in range(1, 9)]
    assert re.search(r"fan-out: each spine has \d+ x 400G to 16 leaves; \d+ x 400G to 32 at the build-out", svg)
    # unit 1's 8 rail leaves, each in its own colour
    fills = [re.search(r"fill: (#[0-9a-f]{6})", svg_group(svg, f"topo-leaf-phased-leaf-su1-r{r}")).group(1)
             for r in range(8)]
    assert len(set(fills)) == 8
    # summary text is a label (text, no box), never a device box
    for label in ("topo-label-units", "topo-label-fanout", "topo-label-more-hosts", "topo-label-unit-3"):
        group = svg_group(svg, label)
        assert "<text" in group and "<path" not in group

    shot = tmp_path / "shot.png"
    done = chromium(tmp_path, "--window-size=1280,1400", f"--screenshot={shot}", grown_report.as_uri())
    assert done.returncode == 0 and console_errors(done.stderr) == []
    from PIL import Image

    image = Image.open(shot).convert("RGB")
    # the rails' colours are painted (rail 0 blue, rail 1 orange of picture.RAIL_COLOURS)
    colours = {c for _, c in image.getcolors(1280 * 1400)}
    assert (0x1F, 0x77, 0xB4) in colours and (0xFF, 0x7F, 0x0E) in colours


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install chromium)")
def test_dragonfly_picture_draws_its_groups(report, tmp_path):
    done = chromium(tmp_path, "--dump-dom", report.as_uri())
    assert done.returncode == 0 and console_errors(done.stderr) == []
    dom = done.stdout
    assert 'id="topo-group-1"' in dom and 'id="topo-group-2"' in dom
    assert re.findall(r'<g id="topo-spine-(medium-spine-g1-\d)">', dom) == ["medium-spine-g1-1", "medium-spine-g1-2"]
    assert "global links: 64 x 400G AOC 50 m between groups' spines" in dom
    assert "group 2 (installed)" in dom and "4 leaves, 16 hosts, 2 spines" in dom
