"""verify's report formats and exit codes (DESIGN.md: `verify --format json` and exit codes)."""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

import pytest

from generator.verify.model import Finding, Outcome, VerifyReport, outcome
from generator.verify.report import format_json, format_junit, format_prometheus, format_table

CROSSED = Finding("cabling", "leaf-1", "swp1,swp3", "swp1->gpu01, swp3->gpu02", "swp1->gpu02, swp3->gpu01 (crossed)",
                  "error", "swp1 and swp3 on leaf-1 are crossed")


def _report(*, unknown: bool = False, failed: bool = True) -> VerifyReport:
    outcomes = [outcome("cabling", "leaf-1", [CROSSED] if failed else []), outcome("cabling", "spine-1", []),
                outcome("link", "leaf-1", []),
                Outcome("host-roce", "gpu01", "skipped", reason="endpoints.yml lists no hosts")]
    if unknown:
        outcomes.append(Outcome("bgp", "spine-1", "unknown", reason="connect: authentication failed"))
    return VerifyReport("vf", outcomes, 100.0, 103.5)


@pytest.mark.parametrize("kwargs, code", [({"failed": False}, 0), ({}, 3), ({"unknown": True}, 1),
                                          ({"unknown": True, "failed": False}, 1)])
def test_exit_codes(kwargs, code):
    assert _report(**kwargs).exit_code == code


def test_json_is_exactly_the_contract():
    doc = json.loads(format_json(_report(unknown=True)))
    assert set(doc) == {"summary", "findings"}
    assert doc["summary"] == {"checked": 4, "passed": 2, "failed": 1, "unknown": 1}
    for finding in doc["findings"]:
        assert set(finding) == {"check", "device", "port", "expected", "observed", "severity"}
        assert finding["check"] in {"cabling", "link", "speed", "mtu", "bgp", "errors", "pfc", "ecn", "host-roce"}
        assert finding["severity"] in {"error", "warning"}
    assert doc["findings"][0]["port"] == "swp1,swp3"
    assert doc["findings"][1] == {"check": "bgp", "device": "spine-1", "port": "", "expected": "checked",
                                  "observed": "could not check: connect: authentication failed", "severity": "error"}


def test_json_lists_nothing_when_all_passed():
    assert json.loads(format_json(_report(failed=False)))["findings"] == []


def test_junit_one_testcase_per_check_and_device_read_by_junitparser(tmp_path):
    junitparser = pytest.importorskip("junitparser")
    path = tmp_path / "verify.xml"
    path.write_text(format_junit(_report(unknown=True)))
    xml = junitparser.JUnitXml.fromfile(str(path))
    cases = {(suite.name, case.name): case for suite in xml for case in suite}
    assert set(cases) == {("cabling", "leaf-1"), ("cabling", "spine-1"), ("link", "leaf-1"), ("bgp", "spine-1"),
                          ("host-roce", "gpu01")}
    assert isinstance(cases[("cabling", "leaf-1")].result[0], junitparser.Failure)
    assert cases[("cabling", "leaf-1")].result[0].message == "swp1 and swp3 on leaf-1 are crossed"
    assert isinstance(cases[("bgp", "spine-1")].result[0], junitparser.Error)
    assert isinstance(cases[("host-roce", "gpu01")].result[0], junitparser.Skipped)
    assert cases[("cabling", "spine-1")].is_passed


def test_junit_counts_match_its_testcases():
    root = ET.fromstring(format_junit(_report(unknown=True)))
    assert root.tag == "testsuites"
    for suite in root.iter("testsuite"):
        cases = list(suite.iter("testcase"))
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(c.find("failure") is not None for c in cases)
        assert int(suite.get("errors")) == sum(c.find("error") is not None for c in cases)
        assert int(suite.get("skipped")) == sum(c.find("skipped") is not None for c in cases)


def test_prometheus_textfile():
    text = format_prometheus(_report(unknown=True))
    assert 'fabricgen_verify_checks{fabric="vf",check="cabling",status="failed"} 1' in text
    assert 'fabricgen_verify_findings{fabric="vf",check="cabling",severity="error"} 1' in text
    assert 'fabricgen_verify_success{fabric="vf"} 0' in text
    assert 'fabricgen_verify_duration_seconds{fabric="vf"} 3.500' in text
    for line in text.splitlines():
        assert line.startswith("# ") or line.startswith("fabricgen_verify_")


def test_table_names_the_finding_and_the_summary():
    text = format_table(_report(), width=160)
    assert "swp1 and swp3 on leaf-1 are crossed" in text
    assert "3 check(s): 2 passed, 1 failed, 0 unknown" in text


def test_same_report_same_bytes():
    assert format_json(_report()) == format_json(_report())
    assert format_junit(_report()) == format_junit(_report())
