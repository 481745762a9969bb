"""The operator's loop on inventories/medium (12 switches, 32 GPU servers), without root (issue 36):
`lab up --hosts 4`, `deploy` of switches and hosts with a Slurm drain flow, `verify` with host
checks, `hosts discover`: each exits 0. The 28 servers not started are not installed: deploy,
verify and discover say so and leave them alone. Then each started host's lldpd hears the leaf the
plan cables its rail to, from the same world the leaves answer from. Last, the lab starts again with
`--faults` (one host's rail port down, another's NIC back on PCP trust): verify names both, and the
installed QoS script's --health fails on both hosts and drains them.

Every command runs as an unprivileged user: as itself when the suite is not root, else through
util-linux setpriv(1) as nobody (65534), in a work directory nobody owns. Real CLI, real
netmiko/napalm sessions to the lab's switches, real ansible-runner over real SSH to its hosts.
About 3-4 minutes on a loaded 2-core machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import unprivileged
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


def fabricgen(python: str, *args: str, env: dict, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([*unprivileged.prefix(), python, "-m", "generator.cli", *args], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=cwd)


def ssh(directory: Path, host: str, command: str, env: dict) -> subprocess.CompletedProcess:
    section = yaml.safe_load((directory / "endpoints.yml").read_text())["hosts"]
    return subprocess.run(
        [*unprivileged.prefix(), "ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
         "-o", f"UserKnownHostsFile={directory / 'known_hosts'}", "-o", "IdentitiesOnly=yes",
         "-i", str(directory / section["ssh_key"]), "-p", str(section["servers"][host]["port"]),
         f"{section['user']}@127.0.0.1", command],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, env=env)


@pytest.fixture
def work():
    """A work directory the unprivileged user owns (pytest's tmp_path sits below root's 0700 one)."""
    path = unprivileged.give(Path(tempfile.mkdtemp(prefix="fabricgen-medium-")))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def uids(pid: int) -> set[int]:
    """The real, effective, saved and file-system uids of a process (proc(5), /proc/PID/status Uid:)."""
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("Uid:"))
    return {int(u) for u in line.split()[1:]}


def test_medium_lab_with_hosts_deploys_verifies_and_discovers(work):
    intent = work / "fabric.yaml"
    text = MEDIUM.read_text()
    assert "deploy:\n  user: cumulus\n" in text
    intent.write_text(text.replace("deploy:\n  user: cumulus\n", SLURM))
    plan = run_checks(load_intent(intent)).plan
    directory = work / "lab"
    (work / "home").mkdir()
    home = unprivileged.give(work / "home")
    python, scripts = unprivileged.interpreter(work)
    os.chmod(intent, 0o644)
    # HOME: Ansible's local tmp and ControlPath; the suite's state, backup and cache directories (tests/
    # conftest.py) are the suite user's: the unprivileged user gets its own below the work directory
    env = {**os.environ, "FABRICGEN_PASSWORD": PASSWORD, "HOME": str(home), "FABRICGEN_STATE_DIR": str(work / "state"),
           "FABRICGEN_BACKUP_DIR": str(work / "backups"), "FABRICGEN_CACHE_DIR": str(work / "cache"),
           "PATH": f"{scripts}:{os.environ['PATH']}"}
    if unprivileged.dropping():
        # the controller's own tasks (the drain hooks, delegated to localhost) get Ansible's remote tmp
        # below ~nobody, which passwd gives as /nonexistent (Ansible expands `~<remote user>`)
        env["ANSIBLE_REMOTE_TMP"] = str(home / ".ansible" / "tmp")
    up = fabricgen(python, "lab", "up", str(intent), "--dir", str(directory), "--hosts", str(STARTED), env=env, cwd=work)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        pid = int((directory / "lab.pid").read_text())
        assert 0 not in uids(pid), "the lab must run without root"
        env["PATH"] = f"{directory / 'bin'}:{env['PATH']}"      # the lab's scontrol for the drain hooks
        endpoints = str(directory / "endpoints.yml")
        started = [h.name for h in plan.hosts[:STARTED]]
        # a lab host's commands run as the lab's user, never root; sudo is root in a user namespace only
        assert ssh(directory, started[0], "id -u; sudo -n id -u", env).stdout.split() == \
            [str(os.geteuid() or unprivileged.NOBODY), "0"]

        deploy = fabricgen(python, "deploy", str(intent), "--endpoints", endpoints, "--yes", env=env, cwd=work)
        assert deploy.returncode == 0, deploy.stdout[-3000:] + deploy.stderr[-3000:]
        assert f"hosts: successful: {STARTED} host(s)" in deploy.stdout
        assert f"hosts: {len(plan.hosts) - STARTED} not in the endpoints file's hosts.servers (not installed)" \
            in deploy.stdout
        log = (directory / "slurm" / "controller.log").read_text().splitlines()
        for name in started:
            drain = f"scontrol update NodeName={name} State=DRAIN Reason=fabricgen:deploy"
            assert log.index(f"scontrol update NodeName={name} State=RESUME") > log.index(drain)

        report = work / "verify.json"
        verify = fabricgen(python, "verify", str(intent), "--endpoints", endpoints, "--format", "json", "-o", str(report),
                           "--interval", "1", env=env, cwd=work)
        doc = json.loads(report.read_text())
        assert verify.returncode == 0, (verify.stdout[-2000:] + verify.stderr[-2000:], doc["findings"][:6])
        assert doc["summary"]["failed"] == 0 and doc["summary"]["unknown"] == 0, doc["summary"]

        out = work / "discovered.yml"
        discover = fabricgen(python, "hosts", "discover", str(intent), "-o", str(out), "--endpoints", endpoints,
                             env=env, cwd=work)
        assert discover.returncode == 0, discover.stdout + discover.stderr
        assert f"{STARTED} host(s); 0 not read, 0 differ from the render" in discover.stdout
        assert sorted(yaml.safe_load(out.read_text())["hosts"]) == started

        # lldpd on a started host hears, on each rail, the leaf port the plan cables it to
        host = plan.hosts[0]
        cables = {(c.a_device, c.a_port): (c.b_device, c.b_port) for c in plan.links} | \
                 {(c.b_device, c.b_port): (c.a_device, c.a_port) for c in plan.links}
        r = ssh(directory, host.name, "lldpcli show neighbors -f json", env)
        heard = {name: (next(iter(tree["chassis"])), tree["port"]["id"]["value"])
                 for entry in json.loads(r.stdout)["lldp"]["interface"] for name, tree in entry.items()}
        assert heard == {nic.netdev: cables[(host.name, nic.netdev)] for nic in host.nics}

        # host faults through `lab up --faults` on the deployed hosts (their sandboxes kept, as disks are)
        down, pcp = plan.hosts[0], plan.hosts[1]
        faults = work / "faults.yaml"
        faults.write_text(f"hosts:\n  {down.name}: {{rails_down: [{down.nics[0].netdev}]}}\n"
                          f"  {pcp.name}: {{pcp_trust: [{pcp.nics[1].netdev}]}}\n")
        os.chmod(faults, 0o644)
        stop = fabricgen(python, "lab", "down", "--dir", str(directory), env=env, cwd=work)
        assert stop.returncode == 0 and not (directory / "lab.pid").exists(), stop.stdout + stop.stderr
        up = fabricgen(python, "lab", "up", str(intent), "--dir", str(directory), "--hosts", str(STARTED),
                       "--faults", str(faults), env=env, cwd=work)
        assert up.returncode == 0, up.stdout + up.stderr
        report = work / "verify-faults.json"
        verify = fabricgen(python, "verify", str(intent), "--endpoints", endpoints, "--only", "hosts", "--format", "json",
                           "-o", str(report), "--interval", "1", env=env, cwd=work)
        assert verify.returncode == 3, verify.stdout[-2000:] + verify.stderr[-2000:]
        found = {(f["check"], f["device"], f["port"]): f for f in json.loads(report.read_text())["findings"]}
        assert found[("host-roce", down.name, down.nics[0].netdev)]["observed"] == "DOWN DISABLED"
        trust = found[("host-roce", pcp.name, "")]["observed"]
        assert "trust" in trust and pcp.nics[1].netdev in trust, trust
        assert {device for _, device, _ in found} == {down.name, pcp.name}, sorted(found)
        for faulty in (down, pcp):
            health = ssh(directory, faulty.name, f"SLURMD_NODENAME={faulty.name} "
                                                 "sh $FABRICGEN_SYSROOT/usr/local/sbin/fabricgen-roce-qos --health", env)
            assert health.returncode == 1, health.stdout + health.stderr
            shown = ssh(directory, faulty.name, f"scontrol show node {faulty.name}", env).stdout
            assert "DRAIN" in shown and "Reason=fabricgen-roce-qos" in shown, shown
        healthy = ssh(directory, plan.hosts[2].name, f"SLURMD_NODENAME={plan.hosts[2].name} "
                                                     "sh $FABRICGEN_SYSROOT/usr/local/sbin/fabricgen-roce-qos --health",
                      env)
        assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    finally:
        lab_down(directory)
