"""`fabricgen lab up INTENT`: every switch boots with its plan eth0 (static, mgmt VRF) and the
deploy user, with the password from FABRICGEN_PASSWORD when set (never printed)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import paramiko
import pytest
import yaml

from generator.checks.runner import run_checks
from generator.intent.loader import load_intent
from generator.lab.control import lab_down

pytestmark = pytest.mark.integration

INTENT = """\
fabric: {name: lc}
topology:
  kind: rail-optimized
  nodes: 8
  rails: 1
addressing:
  management: 10.20.0.0/22
"""
MANAGED = INTENT + """\
management:
  gateway: 10.20.3.254
  users:
    - {name: cumulus, role: system-admin, hashed_password: "$6$abcdefgh$yAZqZrP1EjPpKumk.AADT1SzpnetlIH1GmPytlMxCyPJGINv35vR1C.MbdYEBDHj8GVUVGQM/bT6YBWCm.4C9/"}
"""


def lab_up(tmp_path, text: str, env_password: str | None):
    intent = tmp_path / "fabric.yaml"
    intent.write_text(text)
    directory = tmp_path / "lab"
    env = {k: v for k, v in os.environ.items() if k != "FABRICGEN_PASSWORD"}
    if env_password is not None:
        env["FABRICGEN_PASSWORD"] = env_password
    result = subprocess.run([sys.executable, "-m", "generator.cli", "lab", "up", str(intent), "--dir", str(directory)],
                            capture_output=True, text=True, timeout=120, env=env)
    return intent, directory, result


def eth0_of(directory, name: str, password: str) -> dict:
    endpoints = yaml.safe_load((directory / "endpoints.yml").read_text())["switches"]
    client = paramiko.SSHClient()
    client.load_host_keys(str(directory / "known_hosts"))
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    client.connect("127.0.0.1", endpoints[name]["port"], endpoints[name]["username"], password,
                   allow_agent=False, look_for_keys=False, timeout=5)
    try:
        _, stdout, _ = client.exec_command("nv config show -o yaml")
        return yaml.load(stdout.read(), Loader=yaml.BaseLoader)[1]["set"]["interface"]["eth0"]
    finally:
        client.close()


@pytest.mark.parametrize("text, gateway", [(INTENT, "10.20.0.1"), (MANAGED, "10.20.3.254")],
                         ids=["no-management", "management-gateway"])
def test_lab_up_gives_every_switch_its_plan_eth0(tmp_path, text, gateway):
    intent, directory, result = lab_up(tmp_path, text, "fabricgen-lab")
    try:
        assert result.returncode == 0, result.stdout + result.stderr
        assert "fabricgen-lab" not in result.stdout + result.stderr
        password_file = directory / "password"
        assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
        assert password_file.read_text().strip() == "fabricgen-lab"
        plan = run_checks(load_intent(intent)).plan
        for switch in (plan.switches[0], plan.switches[-1]):
            assert eth0_of(directory, switch.name, "fabricgen-lab") == {
                "ip": {"address": {f"{switch.mgmt_ip}/22": {}}, "gateway": {gateway: {}}, "vrf": "mgmt"},
                "type": "eth"}
    finally:
        lab_down(directory)


def test_lab_up_without_env_password_makes_a_random_one(tmp_path):
    intent, directory, result = lab_up(tmp_path, INTENT, None)
    try:
        assert result.returncode == 0, result.stdout + result.stderr
        password = (directory / "password").read_text().strip()
        assert len(password) >= 16 and password not in result.stdout + result.stderr
        name = run_checks(load_intent(intent)).plan.switches[0].name
        assert eth0_of(directory, name, password)["ip"]["vrf"] == "mgmt"
        with pytest.raises(paramiko.AuthenticationException):
            eth0_of(directory, name, "fabricgen-lab")
    finally:
        lab_down(directory)
