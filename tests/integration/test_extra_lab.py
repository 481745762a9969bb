"""The `extra:` escape hatch (issue 36 item 3) through the CLI against the lab.

An SNMP subtree for the leaves renders as the document's last `set` item, validates against the
release's NVUE object model (FG260), deploys, is in sync, and shows as drift when someone removes
it by hand on the switch; the next deploy puts it back. An entry that touches `qos` without
`override: true` is refused in one line naming the file, line and key path, and nothing is written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from netmiko import ConnectHandler

from generator.lab.control import lab_down

pytestmark = pytest.mark.integration

PASSWORD = "lab-Secret-7f3"
BASE = """\
fabric: {name: ex}
topology:
  kind: leaf-spine
  nodes: 4
  rails: 2
  nic_speed: 400G
  switches:
    leaf: {model: SN4700}
    spine: {model: SN4700}
deploy: {confirm_timeout: 60, concurrency: 4}
"""
SNMP = BASE + """\
extra:
  - match: {role: leaf}
    nvue:
      system:
        snmp-server:
          state: enabled
          listening-address: {localhost: {}}
          system-location: rack 12
"""
LEAF = "ex-leaf-1"


def fabricgen(tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "FABRICGEN_PASSWORD": PASSWORD, "FABRICGEN_BACKUP_DIR": str(tmp_path / "backups"),
           "FABRICGEN_CONFIRM_TIMEOUT": "30", "FABRICGEN_SSH_TIMEOUT": "6"}
    return subprocess.run([sys.executable, "-m", "generator.cli", *args], capture_output=True, text=True,
                          timeout=300, env=env, cwd=tmp_path)


def hand_edit(lab, name: str, *commands: str) -> None:
    import yaml

    switch = yaml.safe_load((lab / "endpoints.yml").read_text())["switches"][name]
    conn = ConnectHandler(device_type="cumulus_linux", host="127.0.0.1", port=switch["port"],
                          username=switch["username"], password=PASSWORD, ssh_strict=True, system_host_keys=False,
                          alt_host_keys=True, alt_key_file=str(lab / "known_hosts"), allow_agent=False,
                          use_keys=False, fast_cli=True)
    try:
        for command in commands:
            output = conn.send_command(command, expect_string=r"[$#]\s*$", read_timeout=10)
            assert "Error" not in output, output
    finally:
        conn.disconnect()


def test_an_snmp_subtree_renders_deploys_and_drifts_when_removed_by_hand(tmp_path):
    (tmp_path / "fabric.yaml").write_text(SNMP)
    rendered = fabricgen(tmp_path, "render", "fabric.yaml", "-o", "out")
    assert rendered.returncode == 0, rendered.stderr
    leaf = (tmp_path / "out" / "switches" / LEAF / "startup.yaml").read_text()
    assert leaf.endswith("- set:\n    system:\n      snmp-server:\n        state: enabled\n"
                         "        listening-address:\n          localhost: {}\n        system-location: rack 12\n")
    assert "snmp-server" not in (tmp_path / "out" / "switches" / "ex-spine-1" / "startup.yaml").read_text()
    plan = json.loads((tmp_path / "out" / "plan.json").read_text())
    assert plan["extra"] == [{"entry": 0, "override": False, "switches": [LEAF]}]

    lab = tmp_path / "lab"
    endpoints = str(lab / "endpoints.yml")
    up = fabricgen(tmp_path, "lab", "up", "fabric.yaml", "--dir", str(lab), "--time-scale", "3.75")
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        deployed = fabricgen(tmp_path, "deploy", "fabric.yaml", "--endpoints", endpoints, "--yes")
        assert deployed.returncode == 0, deployed.stdout + deployed.stderr
        in_sync = fabricgen(tmp_path, "drift", "fabric.yaml", "--endpoints", endpoints, "--only", "switches",
                            "--format", "json")
        assert in_sync.returncode == 0, in_sync.stdout + in_sync.stderr

        hand_edit(lab, LEAF, "nv unset system snmp-server", "nv config apply -y")
        drifted = fabricgen(tmp_path, "drift", "fabric.yaml", "--endpoints", endpoints, "--only", "switches",
                            "--format", "json")
        assert drifted.returncode == 3, drifted.stdout + drifted.stderr
        devices = json.loads(drifted.stdout)["devices"]
        assert {n: d["status"] for n, d in devices.items()} == {LEAF: "drift", "ex-spine-1": "in_sync",
                                                                "ex-spine-2": "in_sync"}
        assert "snmp-server" in json.dumps(devices[LEAF])

        again = fabricgen(tmp_path, "deploy", "fabric.yaml", "--endpoints", endpoints, "--yes")
        assert again.returncode == 0, again.stdout + again.stderr
        assert fabricgen(tmp_path, "drift", "fabric.yaml", "--endpoints", endpoints, "--only", "switches"
                         ).returncode == 0
    finally:
        lab_down(lab)


def test_an_entry_touching_qos_without_override_is_refused_in_one_line(tmp_path):
    (tmp_path / "fabric.yaml").write_text(BASE + """\
extra:
  - match: {device: "ex-spine-*"}
    nvue:
      qos:
        roce: {mode: lossy}
""")
    result = fabricgen(tmp_path, "render", "fabric.yaml", "-o", "out")
    assert result.returncode == 1
    refusals = [line for line in result.stderr.splitlines() if "FG280" in line]
    assert refusals == ["fabric.yaml:14: error FG280 extra[0].nvue.qos: sets qos roce mode on ex-spine-1, inside "
                        "QoS and buffers, which the plan derives: change the intent key behind it, or mark this "
                        "entry `override: true`"]
    assert not (tmp_path / "out").exists()

    (tmp_path / "fabric.yaml").write_text((tmp_path / "fabric.yaml").read_text().replace(
        "    nvue:\n", "    override: true\n    nvue:\n"))
    overridden = fabricgen(tmp_path, "validate", "fabric.yaml")
    assert "FG280" not in overridden.stderr + overridden.stdout
