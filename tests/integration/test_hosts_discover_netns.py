"""`fabricgen hosts discover` with one hostile host and one that hangs, over namespace hosts with a
real sshd each and real ansible-runner (issue 24, item 7).

gpu01 is a DGX H100 cut to two GPUs (tests/integration/fake_gpu.py: each GPU behind a PCIe switch
it shares with one compute NIC, storage NICs on root ports between them); gpu02's python3 is
compromised and answers with 200,000 nested brackets; gpu03's python3 never returns. The run still
writes gpu01, with its rails in GPU order (mlx5_0, mlx5_3: not mlx5_0, mlx5_1 by name or PCI
address), prints one "not read" line for each of the others and exits 1.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
import yaml

pytest.importorskip("ansible_runner", reason="the discover playbook runs through ansible-runner")

from fake_gpu import write_fake_dgx_h100  # noqa: E402
from netns import free_mgmt_octet, netns_hosts, write_fake_nic_tools, write_fake_sysfs  # noqa: E402,F401  (fixture)
from test_hosts_netns import INTENT, _lab_vars  # noqa: E402

from generator.checks.runner import run_checks  # noqa: E402
from generator.deploy.discover import STALE, run_discover  # noqa: E402
from generator.intent.discovery import read_discovery  # noqa: E402
from generator.intent.loader import load_intent  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.root, pytest.mark.timeout(600)]

# a compromised or broken host's python3: what it prints is all the controller gets
HOSTILE = """#!/bin/sh
exec /usr/bin/python3 -c 'import sys; sys.stdout.write("[" * 200000 + "\\\\n")'
"""
HANGS = """#!/bin/sh
exec sleep 600
"""


def test_discover_with_one_hostile_host_writes_the_others(netns_hosts, tmp_path):  # noqa: F811
    octet = free_mgmt_octet()
    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT.format(octet=octet, extra=""))
    plan = run_checks(load_intent(intent)).plan
    assert plan is not None
    gpu01, gpu02, gpu03 = (h.name for h in plan.hosts)
    lab = netns_hosts(plan, f"198.18.{octet}.254")
    fakes = write_fake_nic_tools(lab.directory / "fakebin")
    write_fake_dgx_h100(lab.directory / "sys" / gpu01, gpus=2)
    for name in (gpu02, gpu03):
        write_fake_sysfs(lab.directory / "sys" / name, ["ens1f0np0", "ens2f0np0"])
    for name, script in ((gpu02, HOSTILE), (gpu03, HANGS)):
        python = lab.directory / "hostbin" / name / "python3"
        python.parent.mkdir(parents=True)
        python.write_text(script)
        python.chmod(0o755)
    extravars = _lab_vars(lab, fakes)
    env = extravars["fabricgen_qos_environment"]
    env["PATH"] = f"{lab.directory}/hostbin/{{{{ inventory_hostname }}}}:{env['PATH']}"
    extravars["fabricgen_discover_timeout"] = 20
    endpoints = lab.directory / "endpoints.yml"
    endpoints.write_text(yaml.safe_dump({"hosts": {"user": lab.user, "ssh_key": lab.key.name,
                                                    "extravars": extravars}}))
    discovered = tmp_path / "discovered.yaml"

    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    assert run_discover(str(intent), out=str(discovered), endpoints=str(endpoints), stdout=out, stderr=err) == 1
    assert time.monotonic() - started < 120, "the hung host is bounded by the task timeout"
    # the task timeout's own words (ansible-core 2.17's TaskExecutor)
    assert err.getvalue().splitlines() == [
        f"{gpu02}: not read: the NIC probe's JSON: nested deeper than 64 levels: refused; it is not in the file",
        f"{gpu03}: not read: The ansible.builtin.script action failed to execute in the expected time frame (20) "
        "and was terminated; it is not in the file"]
    assert out.getvalue().splitlines() == [
        f"{gpu01}: 12 RDMA netdev(s), 2 GPU(s), GPUDirect nvidia-peermem: rails by GPU (rail r = GPU r's nearest "
        "NIC) are enp24s0f0np0,enp64s0f0np0, the render has ens1f0np0,ens2f0np0",
        f"wrote {discovered}: 1 host(s); 2 not read, 1 differ from the render (name it in the intent as "
        "hosts.discovered and re-render)"]
    found = read_discovery(discovered)
    assert list(found.hosts) == [gpu01]
    assert [found.hosts[gpu01].nics[g.nic].rdma for g in found.hosts[gpu01].gpus] == ["mlx5_0", "mlx5_3"]
    first = discovered.read_bytes()

    # the intent names the file: gpu01's rails are its GPUs' NICs in the next plan
    data = yaml.safe_load(intent.read_text())
    data["hosts"]["discovered"] = "discovered.yaml"
    intent.write_text(yaml.safe_dump(data, sort_keys=False))
    plan2 = run_checks(load_intent(intent)).plan
    assert [(n.netdev, n.rdma) for n in plan2.hosts[0].nics] == [("enp24s0f0np0", "mlx5_0"),
                                                                ("enp64s0f0np0", "mlx5_3")]

    # gpu01 turns hostile too: its entry is kept, marked; gpu02 is healed and written
    (lab.directory / "hostbin" / gpu01).mkdir()
    (lab.directory / "hostbin" / gpu02 / "python3").rename(lab.directory / "hostbin" / gpu01 / "python3")
    out, err = io.StringIO(), io.StringIO()
    assert run_discover(str(intent), out=str(discovered), endpoints=str(endpoints), stdout=out, stderr=err) == 1
    assert err.getvalue().splitlines()[0] == (
        f"{gpu01}: not read: the NIC probe's JSON: nested deeper than 64 levels: refused; its entry from the "
        "previous file is kept, marked as not read")
    text = discovered.read_text()
    assert f"  {STALE}\n  {gpu01}:\n" in text
    found = read_discovery(discovered)
    assert sorted(found.hosts) == [gpu01, gpu02]
    assert found.hosts[gpu01] == read_discovery_bytes(first, tmp_path).hosts[gpu01]


def read_discovery_bytes(raw: bytes, tmp_path: Path):
    path = tmp_path / "first.yaml"
    path.write_bytes(raw)
    return read_discovery(path)
