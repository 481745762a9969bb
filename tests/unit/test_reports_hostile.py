"""Every format of drift, verify and acceptance with hostile text in every field that can carry
it (issue 25 item 2): no traceback, no raw control character on a terminal, well-formed JUnit,
markdown tables intact, Prometheus samples that parse, JSON without lone surrogates."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.common.atomic_write import write_atomic
from generator.drift.compare import FeatureResult
from generator.drift.report import RENDERERS as DRIFT_RENDERERS
from generator.drift.report import DeviceResult, DriftReport, report_text
from generator.verify.model import Finding, Outcome, VerifyReport, outcome
from generator.verify.report import RENDERERS as VERIFY_RENDERERS
from tests.conftest import example
from tests.hostile_text import (
    HOSTILE,
    assert_json_clean,
    assert_junit_well_formed,
    assert_markdown_intact,
    assert_prometheus_parses,
    assert_terminal_clean,
)
from tests.nccl_tests_log import nccl_log
from tests.unit.test_acceptance_expected import host_names

CHECKS = {"table": assert_terminal_clean, "markdown": assert_markdown_intact, "junit": assert_junit_well_formed,
          "prometheus": assert_prometheus_parses, "json": assert_json_clean}
FABRIC = "fab[/]x\x1b[31m|`<b>"


def drift_report() -> DriftReport:
    devices = []
    for i, text in enumerate(HOSTILE):
        feature = FeatureResult("interfaces", extra=[{"path": f"interface.swp{i}.description", "actual": text}],
                                changed=[{"path": f"interface.{text}.link.mtu", "intended": 9216, "actual": text}])
        devices.append(DeviceResult(f"leaf-{i}{text}", "switch", "drift", {"interfaces": feature}))
        devices.append(DeviceResult(f"spine-{i}{text}", "switch", "unknown", error=f"connect: {text}"))
        devices.append(DeviceResult(f"pend-{i}{text}", "switch", "pending", error=f"confirm: {text}"))
    return DriftReport(FABRIC, devices, 100.0, 101.0, notes=list(HOSTILE))


def verify_report() -> VerifyReport:
    outcomes = []
    for i, text in enumerate(HOSTILE):
        observed = f"swp{i}->{text}:ens1f0np0"
        outcomes.append(outcome("cabling", f"leaf{text}", [Finding("cabling", f"leaf{text}", f"swp{i}{text}",
                                                                    "swp->gpu001", observed)]))
        outcomes.append(Outcome("bgp", f"spine{text}", "unknown", reason=f"connect: {text}"))
        outcomes.append(Outcome("host-roce", f"gpu{text}", "skipped", reason=text))
    # the same device twice in a check (and a name only escaping makes equal): still unique testcases
    outcomes += [outcome("link", "dup", []), outcome("link", "dup", []), outcome("link", "dup #2", [])]
    return VerifyReport(FABRIC, outcomes, 100.0, 102.0)


@pytest.mark.parametrize("fmt", list(DRIFT_RENDERERS))
def test_drift_formats_survive_hostile_text(fmt):
    text = DRIFT_RENDERERS[fmt](drift_report())
    CHECKS[fmt](text)


@pytest.mark.parametrize("fmt", list(VERIFY_RENDERERS))
def test_verify_formats_survive_hostile_text(fmt):
    text = VERIFY_RENDERERS[fmt](verify_report())
    CHECKS[fmt](text)


def test_drift_shows_the_text_escaped_not_interpreted():
    table = DRIFT_RENDERERS["table"](drift_report(), width=400)
    assert "leaf-0[/]x" in table and "[link=http://x]y[/link]" in table and "\\x1b[31mred\\x1b[0m" in table
    md = DRIFT_RENDERERS["markdown"](drift_report())
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in md and "&#96;code&#96; &#124; pipe" in md
    # machines get the device's text as it was; only what JSON cannot carry (a lone surrogate) is shown escaped
    doc = json.loads(DRIFT_RENDERERS["json"](drift_report()))
    extra = doc["devices"]["leaf-2\x1b[31mred\x1b[0m"]["features"]["interfaces"]["extra"]
    assert extra == [{"path": "interface.swp2.description", "actual": "\x1b[31mred\x1b[0m"}]
    assert "lone \\ud800 surrogate" in doc["notes"]


def test_verify_junit_keeps_one_suite_per_check_and_the_text_readable():
    root = assert_junit_well_formed(VERIFY_RENDERERS["junit"](verify_report()))
    assert [s.get("name") for s in root.iter("testsuite")] == ["cabling", "link", "bgp", "host-roce"]
    link = next(s for s in root.iter("testsuite") if s.get("name") == "link")
    assert sorted(c.get("name") for c in link.iter("testcase")) == ["dup", "dup #2", "dup #2 #2"]
    cabling = next(s for s in root.iter("testsuite") if s.get("name") == "cabling")
    names = {c.get("name") for c in cabling.iter("testcase")}
    assert {"leaf<script>alert(1)</script>", "leaf]]>", "leafnul\\x00byte", "leaflone \\ud800 surrogate"} <= names
    script = next(c for c in cabling.iter("testcase") if c.get("name") == "leaf<script>alert(1)</script>")
    assert script.find("failure").text == ("swp7<script>alert(1)</script> on leaf<script>alert(1)</script>: "
                                           "expected swp->gpu001, observed swp7-><script>alert(1)</script>:ens1f0np0")


def test_verify_prometheus_fabric_label_is_escaped():
    text = VERIFY_RENDERERS["prometheus"](verify_report())
    assert 'fabricgen_verify_success{fabric="fab[/]x\\\\x1b[31m|`<b>"} 0' in text


def test_output_file_is_replaced_whole(tmp_path):
    target = tmp_path / "verify.xml"
    write_atomic(target, VERIFY_RENDERERS["junit"](verify_report()))
    assert_junit_well_formed(target.read_text(encoding="utf-8"))
    write_atomic(tmp_path / "drift.prom", report_text(drift_report(), "prometheus"))
    assert_prometheus_parses((tmp_path / "drift.prom").read_text(encoding="utf-8"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["drift.prom", "verify.xml"]


# --- acceptance, through the real entry point ------------------------------------------------
SMALL = str(example("small"))
NIC_BOUND = 2 * 400 / 8 * 0.94          # small: 2 rails x 400G (test_acceptance_cli.py)


def acceptance(cwd: Path, *args: str | bytes) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run([sys.executable, "-m", "generator.cli", "acceptance", SMALL, *args], capture_output=True,
                          timeout=120, cwd=cwd, env=env)


def test_acceptance_table_and_measured_json_survive_hostile_log_names_and_hosts(tmp_path: Path):
    # host names come from the log's "# Rank ... on <host>" lines; a file name can hold any byte
    # but / and NUL, and bytes that are not UTF-8 reach Python as lone surrogates (PEP 383)
    hosts = [f"[/]x\x1b]52;c;aGk=\x07<i>|`&{n}" for n in host_names("small")]
    log = b"fabric-\x1b[31m[link=http:x]y[b]|`<script>&\xff.log"     # relative: the title fits one line
    with open(os.fsencode(tmp_path) + b"/" + log, "w", encoding="utf-8") as fh:
        fh.write(nccl_log(hosts, 8, 0.5 * NIC_BOUND))
    r = acceptance(tmp_path, "--results", log)
    assert r.returncode == 3, r.stderr
    out = r.stdout.decode("utf-8")
    assert_terminal_clean(out)
    assert "fabric-\\x1b[31m[link=http:x]y[b]|`<script>&\\udcff.log (matched by file name)" in out
    doc = assert_json_clean((tmp_path / "measured.json").read_text(encoding="utf-8"))
    assert doc["runs"][0]["hosts"] == hosts
    assert doc["runs"][0]["log"] == "fabric-\x1b[31m[link=http:x]y[b]|`<script>&\\udcff.log"


def test_acceptance_error_line_is_terminal_safe(tmp_path: Path):
    log = os.fsencode(tmp_path) + b"/notes-\x1b]52;c;aGk=\x07\xff.txt"
    with open(log, "w", encoding="utf-8") as fh:
        fh.write("all good, trust me\n")
    r = acceptance(tmp_path, "--results", log)
    assert r.returncode == 1 and r.stdout == b""
    err = r.stderr.decode("utf-8")
    assert err.count("\n") == 1 and "notes-\\x1b]52;c;aGk=\\x07\\udcff.txt" in err
    assert_terminal_clean(err)


def test_a_write_that_fails_keeps_the_last_good_file(tmp_path):
    target = tmp_path / "verify.xml"
    write_atomic(target, VERIFY_RENDERERS["junit"](verify_report()))
    good = target.read_bytes()
    with pytest.raises(UnicodeEncodeError):
        write_atomic(target, "<half a report \ud800")          # text no escaping guarded: UTF-8 refuses it
    assert target.read_bytes() == good
    assert [p.name for p in tmp_path.iterdir()] == ["verify.xml"]      # no temporary file left
