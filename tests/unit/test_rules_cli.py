"""`fabricgen validate` / `render` end to end: the real console script in a subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from generator.checks.registry import RULES
from generator.checks.runner import load_rules
from generator.cli import app
from tests.conftest import example
from tests.unit.test_rules_common import intent

_SCRIPT = Path(sys.executable).with_name("fabricgen")
FINDING = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): (?P<sev>error|warning) (?P<code>FG\d{3}) "
                     r"(?P<path>[a-z_.\[\]0-9]+): (?P<msg>.+)$")


def fabricgen(*args: str) -> subprocess.CompletedProcess:
    cmd = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "generator.cli"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=120)


def write(tmp_path: Path, data: dict, name: str = "fabric.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.fixture
def bad_intent(tmp_path):
    # two errors and two warnings
    return write(tmp_path, intent(**{"roce.dscp": 99, "roce.ecn.enabled": False, "roce.pfc_watchdog": False,
                                     "topology.oversubscription": "2:1"}))


def test_validate_clean_example_exits_0(tmp_path):
    # medium at its final size (build_out = nodes: the next node's re-cabling, FG113, is moot)
    path = write(tmp_path, intent("medium", **{"topology.build_out": {"nodes": 32}}))
    r = fabricgen("validate", str(path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("0 error(s), 0 warning(s) - ok")
    r = fabricgen("validate", str(example("medium")))
    assert r.returncode == 0 and r.stdout.strip().endswith("0 error(s), 1 warning(s) - ok"), r.stdout


def test_validate_errors_exit_1_one_line_each_errors_first(bad_intent):
    r = fabricgen("validate", str(bad_intent))
    assert r.returncode == 1
    assert "Traceback" not in r.stdout + r.stderr
    *lines, summary = r.stdout.strip().splitlines()
    parsed = [FINDING.match(line) for line in lines]
    assert all(parsed), lines
    assert [m["sev"] for m in parsed] == ["error", "error", "warning", "warning"]
    assert {(m["code"], m["path"]) for m in parsed} == {
        ("FG206", "roce.dscp"), ("FG201", "roce.ecn.enabled"),
        ("FG212", "roce.pfc_watchdog"), ("FG106", "topology.oversubscription")}
    text = bad_intent.read_text().splitlines()
    for m in parsed:
        # the line points at the key the path names
        assert m["file"] == str(bad_intent)
        assert m["path"].rsplit(".", 1)[-1] in text[int(m["line"]) - 1]
    assert summary == f"{bad_intent}: 2 error(s), 2 warning(s)"


def test_validate_json(bad_intent):
    r = fabricgen("validate", str(bad_intent), "--format", "json")
    assert r.returncode == 1
    report = json.loads(r.stdout)
    assert report["ok"] is False
    codes = {f["code"]: f for f in report["findings"]}
    assert codes["FG206"]["severity"] == "error" and codes["FG206"]["path"] == "roce.dscp"
    assert isinstance(codes["FG206"]["line"], int)


def test_explain_fg201():
    r = fabricgen("validate", "--explain", "FG201")
    assert r.returncode == 0
    assert r.stdout.startswith("FG201 (error): ECN disabled on a RoCE fabric")
    assert "pause storms" in r.stdout


def test_every_code_of_mine_explains_in_process():
    load_rules()
    runner = CliRunner()
    for code in sorted(c for c in RULES if c[:3] in ("FG1", "FG2", "FG4")):
        r = runner.invoke(app, ["validate", "--explain", code.lower()])
        assert r.exit_code == 0, code
        assert r.output.startswith(f"{code} ({RULES[code].severity}): {RULES[code].title}\n\n")


def test_torus_is_rejected_with_the_reason(tmp_path):
    path = write(tmp_path, intent(**{"topology.kind": "torus"}))
    r = fabricgen("validate", str(path))
    assert r.returncode == 1
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "torus" in t)
    (out,) = r.stdout.strip().splitlines()
    assert out.startswith(f"error: {path}:{line}: FG101 topology.kind: 'torus' is not supported")
    assert "deadlock" in out
    assert "FG101" in fabricgen("validate", "--explain", "FG101").stdout


def test_render_with_errors_writes_nothing(tmp_path, bad_intent):
    out = tmp_path / "out"
    r = fabricgen("render", str(bad_intent), "-o", str(out))
    assert r.returncode == 1
    assert "nothing written" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()
    # an existing output is left exactly as it was, and no temporary sibling remains
    out.mkdir()
    (out / "keep.txt").write_text("previous render\n")
    before = tree(tmp_path)
    r = fabricgen("render", str(bad_intent), "-o", str(out))
    assert r.returncode == 1
    assert tree(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fabric.yaml", "out"]


def test_render_of_unloadable_intent_writes_nothing(tmp_path):
    path = tmp_path / "fabric.yaml"
    path.write_text("fabric: {name: x\ntopology: [\n")
    out = tmp_path / "out"
    r = fabricgen("render", str(path), "-o", str(out))
    assert r.returncode == 1
    assert r.stderr.startswith(f"error: {path}:") and "Traceback" not in r.stderr
    assert not out.exists()
