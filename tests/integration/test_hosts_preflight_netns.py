"""Pre-flight and `fabricgen hosts discover` against namespace hosts with a real sshd each (issue 16).

Three hosts as rendered from an intent that guesses the rail RDMA names: gpu01 is as rendered;
gpu02's second rail is RDMA device mlx5_7 (as on a DGX, whose compute NICs skip names); gpu03's
first port runs InfiniBand. One playbook run configures gpu01 and stops the other two at
pre-flight, each with one line. With -e fabricgen_set_link_type=true pre-flight only reads, and
gpu03 gets `mlxconfig set LINK_TYPE_P1=2` in its own batch, drained, then stops there, left
drained (a firmware reset is due); a second run writes nothing. After the reset, `fabricgen hosts
discover` writes the discovery file, the intent names it, the re-render takes mlx5_7 for gpu02,
and the next run configures all three.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

pytest.importorskip("ansible_runner", reason="the host playbook runs through ansible-runner")

from fake_nic import firmware_reset, write_fake_gids  # noqa: E402
from netns import free_mgmt_octet, netns_hosts, write_fake_nic_tools, write_fake_sysfs  # noqa: E402,F401  (fixture)
from test_hosts_netns import HOOK, INTENT, _lab_vars  # noqa: E402

from generator.checks.runner import run_checks  # noqa: E402
from generator.deploy.discover import run_discover  # noqa: E402
from generator.deploy.hosts import APPLY_PLAY, run_hosts_playbook  # noqa: E402
from generator.intent.discovery import read_discovery  # noqa: E402
from generator.intent.loader import load_intent  # noqa: E402
from generator.render.output import render_files, write_tree  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.root, pytest.mark.timeout(600)]


def _render(intent: Path, out: Path):
    loaded = load_intent(intent)
    plan = run_checks(loaded).plan
    assert plan is not None
    return plan, write_tree(render_files(plan, loaded.text), out)


def test_preflight_stops_mismatched_hosts_and_discovery_fixes_the_render(netns_hosts, tmp_path):  # noqa: F811
    octet = free_mgmt_octet()
    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT.format(octet=octet, extra=""))
    plan, render = _render(intent, tmp_path / "render")
    gpu01, gpu02, gpu03 = (h.name for h in plan.hosts)
    netdevs = ["ens1f0np0", "ens2f0np0"]

    lab = netns_hosts(plan, f"198.18.{octet}.254")
    fakes = write_fake_nic_tools(lab.directory / "fakebin")
    sysroot = {h.name: lab.directory / "sys" / h.name for h in plan.hosts}
    write_fake_sysfs(sysroot[gpu01], netdevs)
    write_fake_sysfs(sysroot[gpu02], netdevs, rdma=["mlx5_0", "mlx5_7"])
    write_fake_sysfs(sysroot[gpu03], netdevs, link_layer={"ens1f0np0": "InfiniBand"})
    nic_log = lab.directory / "nic.log"
    extravars = _lab_vars(lab, fakes)

    def run(render_dir, **extra):
        return run_hosts_playbook(render_dir, render_dir / "inventory.yml", extravars={**extravars, **extra},
                                  ssh_key=lab.key, known_hosts=lab.known_hosts, private_data_dir=tmp_path / "runner")

    first = run(render)
    assert not first.ok
    assert sorted(first.failures) == [
        (gpu02, "Pre-flight failed", f"{gpu02}: rail 1 ens2f0np0 is RDMA device mlx5_7, the render says mlx5_1: "
                                     "run `fabricgen hosts discover` and re-render"),
        (gpu03, "Pre-flight failed", f"{gpu03}: rail 0 ens1f0np0 (mlx5_0, 0000:08:00.0): the port runs InfiniBand, "
                                     "the fabric needs Ethernet: run the playbook with -e fabricgen_set_link_type=true "
                                     "(mlxconfig -y -d 0000:08:00.0 set LINK_TYPE_P1=2), then `mlxfwreset -d "
                                     "0000:08:00.0 reset -y` or a reboot")]
    # gpu01 went on, alone, and is configured; the stopped hosts were not touched
    assert [hosts for play, hosts in first.batches if play == APPLY_PLAY] == [[gpu01]]
    assert first.hosts[gpu01].changed > 0 and first.hosts[gpu01].failed == 0
    assert "inet 172.16." in lab.hosts[gpu01].sh("ip -o -4 addr show dev ens1f0np0").stdout
    for name in (gpu02, gpu03):
        assert first.hosts[name].changed == 0
        assert not (lab.hosts[name].root / "etc").exists()
        assert " inet " not in lab.hosts[name].sh("ip -o -4 addr show dev ens1f0np0").stdout
    assert not nic_log.exists() or "mlxconfig" not in nic_log.read_text()

    # the explicit flag: pre-flight only reads (mlxconfig q) and admits gpu03; its batch drains it, sets
    # Ethernet for the next firmware load, and stops it there, left drained (issue 33 item 7)
    hook = tmp_path / "hook.sh"
    hook.write_text(HOOK.format(log=nic_log))
    hook.chmod(0o755)
    flagged = run(render, fabricgen_set_link_type=True, fabricgen_hosts_serial=[1, 1],
                  fabricgen_hosts_drain=f"{hook} drain {{host}}", fabricgen_hosts_undrain=f"{hook} undrain {{host}}")
    failures = {h: (task, m) for h, task, m in flagged.failures}
    assert failures[gpu03] == (
        "Stop until the NIC firmware is reset",
        f"{gpu03}: rail 0 ens1f0np0 (mlx5_0, 0000:08:00.0): mlxconfig -y -d 0000:08:00.0 set LINK_TYPE_P1=2; the "
        "port runs InfiniBand until `mlxfwreset -d 0000:08:00.0 reset -y` or a reboot; the host stays drained: "
        "reset it, then run the playbook again")
    assert failures[gpu02][0] == "Pre-flight failed"
    # in the batches: the canary gpu01 first (nothing to change, not drained), then gpu03 alone, drained first
    assert [hosts for play, hosts in flagged.batches if play == APPLY_PLAY] == [[gpu01], [gpu03]]
    assert flagged.hosts[gpu01].changed == 0
    log = nic_log.read_text().splitlines()
    sets = [c for c in log if c.startswith("mlxconfig") and " set " in c]
    assert sets == ["mlxconfig -y -d 0000:08:00.0 set LINK_TYPE_P1=2"]
    assert log.index(f"drain {gpu03}") < log.index(sets[0]) and f"undrain {gpu03}" not in log
    assert f"{gpu03}: left drained" in flagged.stdout
    # again before the reset: the next-boot value is Ethernet already, so nothing is written twice and
    # pre-flight says what is due
    again = run(render, fabricgen_set_link_type=True)
    assert dict((h, m) for h, _, m in again.failures)[gpu03] == (
        f"{gpu03}: rail 0 ens1f0np0 (mlx5_0, 0000:08:00.0): the port runs InfiniBand; LINK_TYPE_P1=2 (Ethernet) "
        "is already set for the next firmware load: `mlxfwreset -d 0000:08:00.0 reset -y` or a reboot, then run "
        "the playbook again")
    assert [c for c in nic_log.read_text().splitlines() if c.startswith("mlxconfig") and " set " in c] == sets
    # mlxfwreset: the port comes back as Ethernet; the kernel rebuilds its GID table as RoCE
    firmware_reset(sysroot[gpu03], lab.directory / "nicstate" / gpu03, "0000:08:00.0")
    write_fake_gids(sysroot[gpu03], "mlx5_0", "ens1f0np0", 0, ["192.0.2.1"])

    # discovery over the same SSH access the deploy uses (the endpoints file's hosts section)
    endpoints = lab.directory / "endpoints.yml"
    endpoints.write_text(yaml.safe_dump({"hosts": {"user": lab.user, "ssh_key": lab.key.name,
                                                    "extravars": _lab_vars(lab, fakes)}}))
    discovered = tmp_path / "discovered.yaml"
    # the operator names the file in the intent first: it does not exist yet, and discovery still runs
    data = yaml.safe_load(intent.read_text())
    data["hosts"]["discovered"] = "discovered.yaml"
    intent.write_text(yaml.safe_dump(data, sort_keys=False))
    out, err = io.StringIO(), io.StringIO()
    assert run_discover(str(intent), out=str(discovered), endpoints=str(endpoints), stdout=out, stderr=err) == 0, \
        err.getvalue()
    assert err.getvalue().startswith("note: ") and "file not found" in err.getvalue()
    assert err.getvalue().endswith("; discovering against the intent's own rails\n")
    assert out.getvalue().splitlines() == [
        f"{gpu01}: 2 RDMA netdev(s), GPUDirect nvidia-peermem: rails as the render says",
        f"{gpu02}: 2 RDMA netdev(s), GPUDirect nvidia-peermem: rail 1 ens2f0np0 is mlx5_7, the render says mlx5_1",
        f"{gpu03}: 2 RDMA netdev(s), GPUDirect nvidia-peermem: rails as the render says",
        f"wrote {discovered}: 3 host(s); 0 not read, 1 differ from the render (name it in the intent as "
        "hosts.discovered and re-render)"]
    found = read_discovery(discovered)
    assert found.nic(gpu02, "ens2f0np0").rdma == "mlx5_7" and found.nic(gpu02, "ens2f0np0").pci == "0000:09:00.0"
    assert found.nic(gpu03, "ens1f0np0").link_layer == "Ethernet"
    # the MAC lldpd announces as the LLDP port ID by default, read from /sys/class/net/<netdev>/address
    assert found.nic(gpu01, "ens1f0np0").mac == "0c:42:a1:00:00:00"
    first_bytes = discovered.read_bytes()
    # again, now that the intent reads the file: the render already says mlx5_7, and the bytes stay
    out = io.StringIO()
    assert run_discover(str(intent), out=str(discovered), endpoints=str(endpoints), stdout=out,
                        stderr=io.StringIO()) == 0
    assert discovered.read_bytes() == first_bytes, "same hosts, same bytes"
    assert out.getvalue().splitlines()[-1] == f"wrote {discovered}: 3 host(s); 0 not read, 0 differ from the render"

    # the re-render takes gpu02's real device name everywhere
    plan2, render2 = _render(intent, tmp_path / "render2")
    assert [n.rdma for n in plan2.hosts[1].nics] == ["mlx5_0", "mlx5_7"]
    assert "mlx5_7" in (render2 / "hosts" / gpu02 / "nccl.env").read_text()

    final = run(render2)
    assert final.ok, (final.failures, final.stdout[-4000:])
    assert final.hosts[gpu01].changed == 0, final.changes
    assert final.hosts[gpu02].changed > 0 and final.hosts[gpu03].changed > 0
    assert "cma_roce_tos -d mlx5_7 -t 104" in nic_log.read_text().splitlines()
    for name in (gpu02, gpu03):
        assert (lab.hosts[name].root / "etc/fabricgen/nccl.env").read_bytes() == \
            (render2 / "hosts" / name / "nccl.env").read_bytes()


def test_a_failed_canary_stops_the_rollout(netns_hosts, tmp_path):  # noqa: F811
    """The canary's rail trains at 200 Gb/s: pre-flight cannot tell while the rail is still down
    (a fresh host), the check after the apply does, and max_fail_percentage 0 ends the rollout
    there: the other hosts are not touched."""
    octet = free_mgmt_octet()
    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT.format(octet=octet, extra="deploy: {hosts: {canary: 1, batch: 2}}"))
    plan, render = _render(intent, tmp_path / "render")
    canary, *rest = (h.name for h in plan.hosts)
    lab = netns_hosts(plan, f"198.18.{octet}.254")
    fakes = write_fake_nic_tools(lab.directory / "fakebin")
    for host in plan.hosts:
        write_fake_sysfs(lab.directory / "sys" / host.name, ["ens1f0np0", "ens2f0np0"],
                         rate_gbps={"ens2f0np0": 200} if host.name == canary else 400)
    result = run_hosts_playbook(render, render / "inventory.yml", extravars=_lab_vars(lab, fakes), ssh_key=lab.key,
                                known_hosts=lab.known_hosts, private_data_dir=tmp_path / "runner")
    assert not result.ok
    assert result.failures == [(canary, "Rail port check failed",
                                f"{canary}: rail 1 ens2f0np0 (mlx5_1) runs at 200 Gb/s, the plan needs 400: check the "
                                "transceiver, the cable and the leaf port speed")]
    assert [hosts for play, hosts in result.batches if play == APPLY_PLAY] == [[canary]]
    for name in rest:
        assert result.hosts[name].changed == 0 and not (lab.hosts[name].root / "etc").exists()
