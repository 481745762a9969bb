"""`fabricgen drift` against the lab: in sync, hand edit, redeploy, unreachable device."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest
from netmiko import ConnectHandler

from generator.checks.runner import run_checks
from generator.deploy.candidate import build_candidate
from generator.drift.command import drift_stdout, run_drift
from generator.intent.loader import load_intent
from generator.lab.control import LabDevice, lab_down
from generator.render.managed import managed_set
from generator.render.output import render_files
from tests.cli_runner import run_cli
from tests.hostile_text import (
    assert_json_clean,
    assert_markdown_intact,
    assert_prometheus_parses,
    assert_terminal_clean,
)

pytestmark = pytest.mark.integration

INTENT = """\
fabric: {name: tiny}
topology:
  kind: leaf-spine
  nodes: 2
  gpus_per_node: 8
  rails: 2
  nic_speed: 400G
  switches:
    leaf: {model: SN4700}
    spine: {model: SN4700}
  cables: {host_leaf: 2, leaf_spine: 30}
switch_os: {name: cumulus, version: "5.11"}
hosts:
  name: "gpu{n:02d}"
  mgmt_interface: eno1
  rails:
    - {netdev: ens1f0np0, rdma: mlx5_0}
    - {netdev: ens2f0np0, rdma: mlx5_1}
deploy: {concurrency: 4}
"""
SWITCHES = ("tiny-leaf-1", "tiny-spine-1", "tiny-spine-2")


@pytest.fixture
def fabric(tmp_path, lab_start):
    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT)
    loaded = load_intent(intent)
    files = render_files(run_checks(loaded).plan, loaded.text)
    lab = lab_start([LabDevice(name, "cumulus", "5.11") for name in SWITCHES])
    return intent, files, lab


def push(lab, files, names=SWITCHES):
    for name in names:
        driver = lab.driver(name)
        driver.open()
        try:
            # as the deploy does: the rendered file plus the switch's own management
            running = driver.get_config(retrieve="running")["running"]
            driver.load_replace_candidate(config=build_candidate(files[f"switches/{name}/startup.yaml"], running,
                                                                 managed_set(False)).text)
            driver.commit_config(message="test deploy")
        finally:
            driver.close()


def hand_edit(lab, name: str, *commands: str) -> None:
    conn = ConnectHandler(device_type="cumulus_linux", host="127.0.0.1", port=lab.port(name),
                          username=lab.username(name), password=lab.password, ssh_strict=True,
                          system_host_keys=False, alt_host_keys=True, alt_key_file=str(lab.known_hosts),
                          allow_agent=False, use_keys=False, fast_cli=True)
    try:
        for command in commands:
            output = conn.send_command(command, expect_string=r"[$#]\s*$", read_timeout=10)
            assert "Error" not in output, output
    finally:
        conn.disconnect()


def drift(intent, lab, fmt="json", output=None):
    """`fabricgen drift` as the user runs it: (exit code, its stdout and stderr as .out, .err)."""
    args = ["-o", output] if output else []
    done = run_cli("drift", str(intent), "--endpoints", str(lab.directory / "endpoints.yml"), "--only", "switches",
                   "--format", fmt, *args)
    return done.returncode, SimpleNamespace(out=done.stdout, err=done.stderr)


def test_drift_round_trip(fabric, capsys, tmp_path):
    intent, files, lab = fabric
    started = time.monotonic()
    push(lab, files)

    code, out = drift(intent, lab)
    assert code == 0, out
    doc = json.loads(out.out)
    assert doc["summary"] == {"devices": 3, "in_sync": 3, "drift": 0, "pending": 0, "unknown": 0}
    assert all(f["compliant"] for f in doc["devices"]["tiny-leaf-1"]["features"].values())

    hand_edit(lab, "tiny-spine-2", "nv set interface swp1 link mtu 1500", "nv config apply -y")
    code, out = drift(intent, lab)
    assert code == 3
    doc = json.loads(out.out)
    assert doc["summary"]["drift"] == 1
    spine = doc["devices"]["tiny-spine-2"]
    assert spine["status"] == "drift"
    assert spine["features"]["interfaces"]["changed"] == [
        {"path": "interface.swp1.link.mtu", "intended": 9216, "actual": 1500}]
    assert spine["features"]["bgp"]["compliant"] and spine["features"]["qos"]["compliant"]
    assert lab.password not in out.out + out.err

    code, out = drift(intent, lab, fmt="table")
    assert code == 3
    assert "tiny-spine-2" in out.out and "interface.swp1.link.mtu" in out.out and "DRIFT" in out.out

    push(lab, files, ["tiny-spine-2"])
    code, out = drift(intent, lab, fmt="markdown")
    assert code == 0, out
    assert "3 in sync" in out.out

    lab.set_faults("tiny-leaf-1", refuse_auth=True)
    textfile = tmp_path / "textfile" / "fabricgen_drift.prom"
    code, out = drift(intent, lab, fmt="prometheus", output=str(textfile))
    assert code == 1
    assert out.out == ""
    prom = textfile.read_text()
    assert 'fabricgen_drift_check_success{fabric="tiny"} 0' in prom
    assert 'fabricgen_drift_devices{fabric="tiny",feature="interfaces"} 0' in prom
    assert 'fabricgen_drift_devices_total{fabric="tiny",status="unknown"} 1' in prom
    stamp = [ln for ln in prom.splitlines() if ln.startswith("fabricgen_drift_last_run_timestamp_seconds")]
    assert len(stamp) == 1 and abs(float(stamp[0].split()[-1]) - time.time()) < 120
    assert not [p for p in textfile.parent.iterdir() if p.name != textfile.name]    # no temp file left

    code, out = drift(intent, lab)
    doc = json.loads(out.out)
    assert code == 1
    assert doc["devices"]["tiny-leaf-1"]["status"] == "unknown"
    assert "authentication failed" in doc["devices"]["tiny-leaf-1"]["error"]
    assert doc["summary"] == {"devices": 3, "in_sync": 2, "drift": 0, "pending": 0, "unknown": 1}

    # drift on one device and another unknown: exit 1 (3 only when every device was checked)
    hand_edit(lab, "tiny-spine-1", "nv set interface swp2 link mtu 9000", "nv config apply -y")
    code, out = drift(intent, lab)
    assert code == 1
    assert json.loads(out.out)["devices"]["tiny-spine-1"]["status"] == "drift"

    lab_down(lab.directory)                       # every device gone: connection refused
    code, out = drift(intent, lab)
    assert code == 1
    assert json.loads(out.out)["summary"]["unknown"] == 3
    assert time.monotonic() - started < 60


def test_only_hosts_without_host_access_is_unknown(fabric, capsys):
    intent, files, lab = fabric
    run = run_drift(str(intent), endpoints=str(lab.directory / "endpoints.yml"), only="hosts", fmt="json",
                    output=None)
    assert capsys.readouterr() == ("", "")      # the library reports; only the CLI prints
    doc = json.loads(drift_stdout(run))
    assert run.exit_code == 1 and run.report.count("unknown") == 2
    assert doc["summary"] == {"devices": 2, "in_sync": 0, "drift": 0, "pending": 0, "unknown": 2}
    assert "lists no hosts" in doc["devices"]["gpu01"]["error"]


def test_drift_reports_survive_a_hostile_port_description(fabric, capsys, tmp_path):
    """A switch whose port description holds markup, escape sequences, HTML and a table break
    (issue 25): every format prints it escaped, and the JSON carries the device's text as it is."""
    intent, files, lab = fabric
    # each kind of hostile text (tests/hostile_text.py) within the 80 characters a report cell
    # shows; a lone surrogate cannot travel in UTF-8 YAML over SSH
    hostile = "[/]x<script>|`\x1b[31m\x1b]52;c;aGk=\x07[link=http://x]y[/link]&]]>\x00\n\x9b\u202e"
    leaf = files["switches/tiny-leaf-1/startup.yaml"]
    assert 'description: "gpu01:ens1f0np0"' in leaf
    edited = leaf.replace('description: "gpu01:ens1f0np0"', f"description: {json.dumps(hostile)}", 1)
    push(lab, files, [n for n in SWITCHES if n != "tiny-leaf-1"])
    push(lab, {**files, "switches/tiny-leaf-1/startup.yaml": edited}, ["tiny-leaf-1"])

    code, out = drift(intent, lab)
    assert code == 3, out
    changed = json.loads(out.out)["devices"]["tiny-leaf-1"]["features"]["interfaces"]["changed"]
    assert changed == [{"path": "interface.swp1.description", "intended": "gpu01:ens1f0np0", "actual": hostile}]
    assert_json_clean(out.out)

    code, out = drift(intent, lab, fmt="table")
    assert code == 3 and "interface.swp1.description" in out.out and "[/]x<script>|`\\x1b[31m" in out.out
    assert_terminal_clean(out.out + out.err)
    code, out = drift(intent, lab, fmt="markdown")
    assert code == 3 and "\\[/\\]x&lt;script&gt;&#124;&#96;\\\\x1b\\[31m" in out.out
    assert_markdown_intact(out.out)
    textfile = tmp_path / "drift.prom"
    code, out = drift(intent, lab, fmt="prometheus", output=str(textfile))
    assert code == 3 and out.out == ""
    assert_prometheus_parses(textfile.read_text(encoding="utf-8"))
