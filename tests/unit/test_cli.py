"""The CLI contract: exit codes, one actionable line per bad input, nothing written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runner import run_cli
from tests.conftest import EXAMPLES, example

FABRICGEN = [sys.executable, "-m", "generator.cli"]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    # output and exit status only: in this process (tests/cli_runner.py); FABRICGEN for a real one
    return run_cli(*args, cwd=cwd)


MINIMAL = """\
fabric: {name: t}
topology:
  kind: rail-optimized
  nodes: 4
  rails: 2
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fabric.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_validate(name: str) -> None:
    r = run("validate", str(example(name)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 error(s)" in r.stdout


def test_render_writes_contract_layout(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = run("render", str(example("medium")), "-o", str(out))
    assert r.returncode == 0, r.stderr
    for rel in ("manifest.json", "plan.json", "cabling.csv", "inventory.yml"):
        assert (out / rel).is_file(), rel
    plan = json.loads((out / "plan.json").read_text())
    assert {"fabric", "switches", "hosts", "links", "ports"} <= set(plan)
    for sw in plan["switches"]:
        assert (out / "switches" / sw["name"] / "startup.yaml").is_file()
    manifest = json.loads((out / "manifest.json").read_text())
    files = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()} - {"manifest.json"}
    assert set(manifest["files"]) == files
    assert "12 switches" in r.stdout and "32 hosts" in r.stdout


def test_rerender_replaces_output_and_drops_stale_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("render", str(example("medium")), "-o", str(out)).returncode == 0
    # medium's switches are an earlier output (its manifest lists them): they go; a file fabricgen did not
    # write is refused instead (issue 34, tests/unit/test_hostile_outputs.py)
    stale = sorted(p.name for p in (out / "switches").iterdir())
    assert stale and "small-leaf-1" not in stale
    assert run("render", str(example("small")), "-o", str(out)).returncode == 0
    assert not any((out / "switches" / name).exists() for name in stale)
    assert sorted(p.name for p in (out / "switches").iterdir()) == ["small-leaf-1"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")], "temporary dirs left behind"


BAD = {
    "yaml-syntax": ("fabric: {name: t\ntopology: [\n", ":2:", "YAML syntax"),
    "unknown-key": (MINIMAL + "  spines: 4\n", ":6:", "topology.spines: unknown key"),
    "wrong-type": (MINIMAL.replace("nodes: 4", "nodes: four"), ":4:", "topology.nodes"),
    "bad-speed": (MINIMAL + "  nic_speed: 400\n", ":6:", "topology.nic_speed"),
    "unquoted-ratio": (MINIMAL + "  oversubscription: 2:1\n", ":6:", 'write it quoted: "2:1"'),
    "misspelt-key": (MINIMAL + "  nodes_per_su: 16\n", ":6:", "topology.nodes_per_su: unknown key: did you mean "
                                                             "nodes_per_unit?"),
    "misspelt-kind": (MINIMAL.replace("rail-optimized", "rail-optimised"), ":3:",
                      "topology.kind: 'rail-optimised' is not a topology kind: did you mean 'rail-optimized'?"),
    "cumulus-4": (MINIMAL + 'switch_os: {name: cumulus, version: "4.4"}\n', ":6:",
                  "FG270 switch_os.version: Cumulus Linux 4.4 has no NVUE"),
    "sonic-release-under-cumulus": (MINIMAL + 'switch_os: {version: "202411"}\n', ":6:",
                                    "'202411' is a SONiC release name"),
    "unquoted-version": (MINIMAL + "switch_os:\n  name: cumulus\n  version: 5.10\n", ":8:",
                         'got the number 5.1: write it quoted: "5.10"'),
    "python-tag": ("fabric: !!python/object/apply:os.system ['touch /tmp/fabricgen-pwned']\n", ":1:",
                   "never executed"),
    "unknown-kind": (MINIMAL.replace("rail-optimized", "torus"), ":3:", "topology.kind"),
    "missing-topology": ("fabric: {name: t}\n", "", "topology: required key is missing"),
    "duplicate-key": (MINIMAL + "  rails: 4\n", ":6:", "duplicate key"),
    "host-bits": (MINIMAL + "addressing: {rails: 172.16.0.1/12}\n", ":6:", "did you mean 172.16.0.0/12"),
    "pool-too-small": (MINIMAL + "addressing: {rails: 172.16.0.0/30}\n", ":6:", "addressing.rails"),
    "no-400g-ports": (MINIMAL + "  switches: {leaf: {model: SN2201}}\n", ":6:", "SN2201"),
    "unknown-model": (MINIMAL + "  switches: {leaf: {model: SN9999}}\n", ":6:", "unknown switch model"),
    "too-many-nics": (MINIMAL.replace("rail-optimized", "single-switch").replace("nodes: 4", "nodes: 200"),
                      ":4:", "do not fit"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_one_line_exit_1_nothing_written(tmp_path: Path, case: str) -> None:
    text, where, what = BAD[case]
    path = write(tmp_path, text)
    out = tmp_path / "out"
    r = run("render", str(path), "-o", str(out))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists(), "a failed render must write nothing"
    error_lines = [ln for ln in r.stderr.splitlines() if ln.startswith(("error", str(path)))]
    assert any(what in ln and (where in ln) for ln in error_lines), r.stderr
    assert not Path("/tmp/fabricgen-pwned").exists()
    v = run("validate", str(path))
    assert v.returncode == 1 and "Traceback" not in v.stdout + v.stderr


def test_failed_render_keeps_previous_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("render", str(example("small")), "-o", str(out)).returncode == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = write(tmp_path, MINIMAL + "  nic_speed: fast\n")
    assert run("render", str(bad), "-o", str(out)).returncode == 1
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_missing_file_and_usage() -> None:
    r = run("validate", "/nonexistent/fabric.yaml")
    assert r.returncode == 1 and "file not found" in r.stdout + r.stderr
    assert run("render").returncode == 2          # click usage error


def test_schema_is_json_schema() -> None:
    r = run("schema")
    assert r.returncode == 0
    doc = json.loads(r.stdout)
    props = doc["properties"]
    assert {"fabric", "topology", "switch_os", "roce", "addressing", "hosts", "nccl", "deploy"} <= set(props)
    assert doc["required"] == ["fabric", "topology"]
    assert "global" in json.dumps(doc)            # the cables.global alias, not the Python name


def test_validate_json_format(tmp_path: Path) -> None:
    r = run("validate", str(example("small")), "--format", "json")
    assert r.returncode == 0
    doc = json.loads(r.stdout)
    assert doc["ok"] is True and isinstance(doc["findings"], list)
