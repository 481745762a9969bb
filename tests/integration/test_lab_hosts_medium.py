"""The operator's loop on inventories/medium (12 switches, 32 GPU servers), without root (issue 36):
`lab up --hosts 4`, `deploy` of switches and hosts with a Slurm drain flow, `verify` with host
checks, `hosts discover`: each exits 0. The 28 servers not started are not installed: deploy,
verify and discover say so and leave them alone. Then each started host's lldpd hears the leaf the
plan cables its rail to, from the same world the leaves answer from.

Real CLI, real netmiko/napalm sessions to the lab's switches, real ansible-runner over real SSH to
its hosts. About 2-4 minutes on a loaded 2-core machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator.checks.runner import run_checks
from generator.intent.loader import load_intent
from generator.lab.control import lab_down

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900),
              pytest.mark.skipif(shutil.which("ssh") is None, reason="OpenSSH client not installed")]

MEDIUM = Path(__file__).resolve().parents[2] / "inventories" / "medium" / "fabric.yaml"
# The lab password the medium intent's management.users hash stands for (its comment says so)
PASSWORD = "fabricgen-lab"
SLURM = """deploy:
  user: cumulus
  hosts:
    user: fabricgen
    scheduler: slurm
    canary: 1
    batch: "50%"
    drain: 'scontrol update NodeName={host} State=DRAIN Reason=fabricgen:deploy'
    undrain: 'scontrol update NodeName={host} State=RESUME'
"""
STARTED = 4


def fabricgen(*args: str, env: dict, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "generator.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=cwd)


def test_medium_lab_with_hosts_deploys_verifies_and_discovers(tmp_path):
    intent = tmp_path / "fabric.yaml"
    text = MEDIUM.read_text()
    assert "deploy:\n  user: cumulus\n" in text
    intent.write_text(text.replace("deploy:\n  user: cumulus\n", SLURM))
    plan = run_checks(load_intent(intent)).plan
    directory = tmp_path / "lab"
    env = {**os.environ, "FABRICGEN_PASSWORD": PASSWORD}
    up = fabricgen("lab", "up", str(intent), "--dir", str(directory), "--hosts", str(STARTED), env=env, cwd=tmp_path)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        env["PATH"] = f"{directory / 'bin'}:{os.environ['PATH']}"      # the lab's scontrol for the drain hooks
        endpoints = str(directory / "endpoints.yml")
        started = [h.name for h in plan.hosts[:STARTED]]

        deploy = fabricgen("deploy", str(intent), "--endpoints", endpoints, "--yes", env=env, cwd=tmp_path)
        assert deploy.returncode == 0, deploy.stdout[-3000:] + deploy.stderr[-3000:]
        assert f"hosts: successful: {STARTED} host(s)" in deploy.stdout
        assert f"hosts: {len(plan.hosts) - STARTED} not in the endpoints file's hosts.servers (not installed)" \
            in deploy.stdout
        log = (directory / "slurm" / "controller.log").read_text().splitlines()
        for name in started:
            drain = f"scontrol update NodeName={name} State=DRAIN Reason=fabricgen:deploy"
            assert log.index(f"scontrol update NodeName={name} State=RESUME") > log.index(drain)

        report = tmp_path / "verify.json"
        verify = fabricgen("verify", str(intent), "--endpoints", endpoints, "--format", "json", "-o", str(report),
                           "--interval", "1", env=env, cwd=tmp_path)
        doc = json.loads(report.read_text())
        assert verify.returncode == 0, (verify.stdout[-2000:] + verify.stderr[-2000:], doc["findings"][:6])
        assert doc["summary"]["failed"] == 0 and doc["summary"]["unknown"] == 0, doc["summary"]

        out = tmp_path / "discovered.yml"
        discover = fabricgen("hosts", "discover", str(intent), "-o", str(out), "--endpoints", endpoints,
                             env=env, cwd=tmp_path)
        assert discover.returncode == 0, discover.stdout + discover.stderr
        assert f"{STARTED} host(s); 0 not read, 0 differ from the render" in discover.stdout
        assert sorted(yaml.safe_load(out.read_text())["hosts"]) == started

        # lldpd on a started host hears, on each rail, the leaf port the plan cables it to
        host = plan.hosts[0]
        cables = {(c.a_device, c.a_port): (c.b_device, c.b_port) for c in plan.links} | \
                 {(c.b_device, c.b_port): (c.a_device, c.a_port) for c in plan.links}
        section = yaml.safe_load((directory / "endpoints.yml").read_text())["hosts"]
        r = subprocess.run(
            ["ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
             "-o", f"UserKnownHostsFile={directory / 'known_hosts'}", "-o", "IdentitiesOnly=yes",
             "-i", str(directory / section["ssh_key"]), "-p", str(section["servers"][host.name]["port"]),
             f"{section['user']}@127.0.0.1", "lldpcli show neighbors -f json"],
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        heard = {name: (next(iter(tree["chassis"])), tree["port"]["id"]["value"])
                 for entry in json.loads(r.stdout)["lldp"]["interface"] for name, tree in entry.items()}
        assert heard == {nic.netdev: cables[(host.name, nic.netdev)] for nic in host.nics}
    finally:
        lab_down(directory)
