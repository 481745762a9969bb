"""`fabricgen lab up INTENT --hosts N`: the plan's GPU servers as simulated hosts, without root.

Each answers SSH on 127.0.0.1 (key login of the intent's deploy.hosts.user, host key in the lab's
known_hosts) and runs real commands with its own /sys tree and simulated NIC and scheduler tools
(generator/lab/gpu_host.py). Driven through the real command line and OpenSSH's client.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml
from small_fabric import INTENT

from generator.checks.runner import run_checks
from generator.intent.loader import load_intent
from generator.lab.control import lab_down, set_host_faults
from generator.lab.gpu_host import HOST_TOOLS, SCHEDULER_TOOLS
from generator.lab.host_netplan import netplan_tool
from generator.lab.world import World, host_nic_mac
from generator.render.hosts import INSTALL_PATHS, render_host

SLURM = INTENT.replace("deploy: {concurrency: 4}", """deploy:
  concurrency: 4
  hosts:
    user: fabricgen
    scheduler: slurm
    drain: 'scontrol update NodeName={host} State=DRAIN Reason=fabricgen:deploy'
    undrain: 'scontrol update NodeName={host} State=RESUME'
""")

pytestmark = pytest.mark.skipif(shutil.which("ssh") is None, reason="OpenSSH client not installed")


def lab_up(tmp_path, hosts: str):
    intent = tmp_path / "intent.yaml"
    intent.write_text(SLURM)
    directory = tmp_path / "lab"
    result = subprocess.run([sys.executable, "-m", "generator.cli", "lab", "up", str(intent), "--dir", str(directory),
                             "--hosts", hosts], capture_output=True, text=True, timeout=120)
    return intent, directory, result


def ssh(directory, host: str, command: str, user: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(ssh_argv(directory, host, command, user), capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def ssh_argv(directory, host: str, command: str, user: str | None = None) -> list[str]:
    section = yaml.safe_load((directory / "endpoints.yml").read_text())["hosts"]
    server = section["servers"][host]
    return (
        ["ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
         "-o", f"UserKnownHostsFile={directory / 'known_hosts'}", "-o", "IdentitiesOnly=yes",
         "-i", str(directory / section["ssh_key"]), "-p", str(server["port"]),
         f"{user or section['user']}@{server['host']}", command])


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("lab-hosts")
    intent, directory, result = lab_up(tmp_path, "2")
    try:
        assert result.returncode == 0, result.stdout + result.stderr
        yield run_checks(load_intent(intent)).plan, directory, result
    finally:
        lab_down(directory)


def test_lab_up_lists_the_hosts_in_the_endpoints_file(lab):
    plan, directory, result = lab
    section = yaml.safe_load((directory / "endpoints.yml").read_text())["hosts"]
    assert section["user"] == "fabricgen"
    assert sorted(section["servers"]) == [h.name for h in plan.hosts[:2]]
    assert (directory / section["ssh_key"]).stat().st_mode & 0o077 == 0
    assert "2 GPU servers" in result.stdout


def test_a_host_answers_from_its_own_nics(lab):
    plan, directory, _ = lab
    host = plan.hosts[0]
    nic = host.nics[0]
    r = ssh(directory, host.name, f"ls $FABRICGEN_SYSROOT/sys/class/net; mlnx_qos -i {nic.netdev}; "
                                  f"ibv_devinfo -d {nic.rdma} -i 1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("Priority trust state")[0].split() == sorted(n.netdev for n in host.nics) + ["DCBX", "mode:",
                                                                                                       "OS", "controlled"]
    assert "Priority trust state: pcp" in r.stdout          # mlx5_core's default until deployed
    assert "PORT_ACTIVE (4)" in r.stdout
    # the RoCE v2 GID of the rail address the plan gives the NIC
    mapped = ipaddress.IPv6Address(f"::ffff:{nic.ip.split('/')[0]}").exploded
    r = ssh(directory, host.name, f"cat $FABRICGEN_SYSROOT/sys/class/infiniband/{nic.rdma}/ports/1/gids/*")
    assert mapped in r.stdout.split(), r.stdout + r.stderr


def test_a_command_status_and_input_pass_through(lab):
    plan, directory, _ = lab
    r = ssh(directory, plan.hosts[0].name, "read line; echo got:$line; exit 7")
    assert r.returncode == 7
    assert r.stdout == "got:\n"        # ssh's stdin is empty here: read sees EOF at once
    r = subprocess.run(["sh", "-c", 'echo rail-1 | "$@"', "sh", *ssh_argv(directory, plan.hosts[0].name, "read l; echo got:$l")],
                       capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (0, "got:rail-1\n"), r.stderr


def test_a_drain_on_one_host_is_the_one_controllers_state(lab):
    plan, directory, _ = lab
    first, second = plan.hosts[0].name, plan.hosts[1].name
    r = ssh(directory, first, f"scontrol update NodeName={first} State=DRAIN Reason=fabricgen:deploy")
    assert r.returncode == 0, r.stderr
    shown = ssh(directory, second, f"scontrol show node {first}").stdout
    assert "State=IDLE+DRAIN" in shown and "Reason=fabricgen:deploy [" in shown
    ssh(directory, first, f"scontrol update NodeName={first} State=RESUME")
    assert "DRAIN" not in ssh(directory, second, f"scontrol show node {first}").stdout


def test_a_server_has_only_its_schedulers_client(lab):
    plan, directory, _ = lab
    r = ssh(directory, plan.hosts[0].name, "command -v scontrol; command -v kubectl")
    assert r.returncode != 0 and r.stdout.strip().endswith("/bin/scontrol")
    assert "scontrol" not in HOST_TOOLS and "kubectl" not in SCHEDULER_TOOLS["slurm"]


def test_only_the_deploy_user_with_the_lab_key_logs_in(lab):
    plan, directory, _ = lab
    r = ssh(directory, plan.hosts[0].name, "true", user="root")
    assert r.returncode == 255 and "Permission denied" in r.stderr


def test_more_hosts_than_the_plan_has_is_one_line_and_nothing_started(tmp_path):
    _, directory, result = lab_up(tmp_path, "3")
    assert result.returncode == 1
    assert result.stderr.strip() == "error: lab up: --hosts 3: give 0 (switches only) up to 2 (the plan's hosts)"
    assert not (directory / "lab.pid").exists()


def test_a_lab_with_hosts_starts_again_in_its_directory_but_not_with_a_planted_link(tmp_path):
    intent, directory, result = lab_up(tmp_path, "1")
    lab_down(directory)
    assert result.returncode == 0, result.stderr
    again = subprocess.run([sys.executable, "-m", "generator.cli", "lab", "up", str(intent), "--dir", str(directory),
                            "--hosts", "1"], capture_output=True, text=True, timeout=120)
    try:
        assert again.returncode == 0, again.stderr
    finally:
        lab_down(directory)
    planted = directory / "hosts" / "gpu001" / "bin" / "evil"
    planted.symlink_to(directory / "password")
    refused = subprocess.run([sys.executable, "-m", "generator.cli", "lab", "up", str(intent), "--dir", str(directory),
                              "--hosts", "1"], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1 and f"{planted} is a link" in refused.stderr


def test_hosts_discover_reads_the_lab_hosts(lab, tmp_path):
    """Real ansible-runner over real SSH: the lab's `hosts:` section says where each host listens and
    where its files are (fabricgen_root); discovery reads the simulated /sys and agrees with the render."""
    plan, directory, _ = lab
    out = tmp_path / "discovered.yml"
    r = subprocess.run([sys.executable, "-m", "generator.cli", "hosts", "discover", str(directory.parent / "intent.yaml"),
                        "-o", str(out), "--endpoints", str(directory / "endpoints.yml")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "wrote" in r.stdout and "2 host(s); 0 not read, 0 differ from the render" in r.stdout
    found = yaml.safe_load(out.read_text())["hosts"]
    for host in plan.hosts[:2]:
        assert [(n["netdev"], n["rdma"], n["state"]) for n in found[host.name]["nics"]] == [
            (n.netdev, n.rdma, "ACTIVE") for n in host.nics]


def sysctl_keys(plan) -> list[str]:
    """The /proc/sys paths the render's sysctl.conf sets on the first host (the per-netdev ones only
    where the lab machine has such a netdev)."""
    text = render_host(plan, plan.hosts[0])[f"hosts/{plan.hosts[0].name}/sysctl.conf"]
    return [line.split("=")[0].strip().translate(str.maketrans("./", "/.")) for line in text.splitlines()
            if "=" in line and not line.startswith("#")]


def machine_state(keys: list[str]) -> dict:
    """What a hosts deploy must leave alone on the lab machine: the kernel values of the render's
    sysctls, and each install path of the render with its directory (exists, mtime, inode)."""
    state: dict = {}
    for key in keys:
        path = f"/proc/sys/{key}"
        state[path] = open(path).read() if os.path.exists(path) else None
    # and what the hosts playbook's netplan step writes on a server (files/fabricgen_netplan.py)
    netplan_output = ("/run/systemd/network/x", "/run/udev/rules.d/90-netplan.rules", "/etc/systemd/network/x")
    for dest in (*INSTALL_PATHS.values(), *netplan_output):
        for path in (dest, os.path.dirname(dest)):
            if path != "/etc":          # /etc itself changes with anything else on the machine
                st = os.stat(path) if os.path.lexists(path) else None
                state[path] = st and (st.st_mtime_ns, st.st_ino, st.st_size)
    return state


def deploy_hosts(directory, tmp_path, endpoints) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{directory / 'bin'}:{os.environ['PATH']}",
           "FABRICGEN_PASSWORD": (directory / "password").read_text().strip()}
    return subprocess.run([sys.executable, "-m", "generator.cli", "deploy", str(directory.parent / "intent.yaml"),
                           "--endpoints", str(endpoints), "--only", "hosts", "--yes"],
                          capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)


def test_a_hosts_run_without_the_labs_root_is_refused_before_writing(lab, tmp_path):
    """A playbook run against lab hosts without the endpoints file's fabricgen_root (default /) would
    install into the lab machine's own /etc, as root on CI: pre-flight refuses it, one line per host."""
    plan, directory, _ = lab
    sandbox = directory / "hosts" / plan.hosts[0].name / "root"
    netplan = sandbox / "etc/netplan/60-fabricgen.yaml"
    before = machine_state(sysctl_keys(plan)), netplan.exists() and netplan.stat().st_mtime_ns
    doc = yaml.safe_load((directory / "endpoints.yml").read_text())
    del doc["hosts"]["extravars"]
    for name in ("known_hosts", doc["hosts"]["ssh_key"]):
        shutil.copy(directory / name, tmp_path / name)
    endpoints = tmp_path / "endpoints.yml"
    endpoints.write_text(yaml.safe_dump(doc))
    r = deploy_hosts(directory, tmp_path, endpoints)
    assert r.returncode != 0, r.stdout + r.stderr
    assert f"a lab host, whose files live under {sandbox}, but fabricgen_root is /: nothing written" in r.stderr
    assert (machine_state(sysctl_keys(plan)), netplan.exists() and netplan.stat().st_mtime_ns) == before


@pytest.fixture(scope="module")
def deployed(lab, tmp_path_factory):
    """`deploy --only hosts` of the lab's hosts, once: (its result, the lab machine's state before, after)."""
    plan, directory, _ = lab
    keys = sysctl_keys(plan)
    before = machine_state(keys)
    r = deploy_hosts(directory, tmp_path_factory.mktemp("deploy"), directory / "endpoints.yml")
    return r, before, machine_state(keys)


def test_deploy_hosts_drains_through_the_labs_slurm_and_writes_only_the_sandboxes(lab, deployed):
    """Real ansible-runner over real SSH: `deploy --only hosts` with the intent's Slurm drain hooks,
    which run scontrol on the controller (the lab's DIR/bin, the same slurmctld as the hosts).
    The sysctls land in each host's own /proc/sys, never the lab machine's (which CI, running as
    root, could write): its values and every install path of the render are as they were."""
    plan, directory, _ = lab
    r, before, after = deployed
    assert r.returncode == 0, r.stdout + r.stderr
    assert after == before
    assert "read-only: " not in r.stdout
    for host in plan.hosts[:2]:
        proc = directory / "hosts" / host.name / "root/proc/sys"
        assert (proc / "net/core/rmem_max").read_text().strip() == "67108864"
        assert (proc / f"net/ipv4/conf/{host.nics[0].netdev}/arp_ignore").read_text().strip() == "1"
        shown = ssh(directory, host.name, "sysctl net.ipv4.tcp_rmem net.ipv4.conf.all.rp_filter")
        assert shown.stdout == "net.ipv4.tcp_rmem = 4096 131072 67108864\nnet.ipv4.conf.all.rp_filter = 2\n"
    assert "hosts: successful: 2 host(s)" in r.stdout
    log = (directory / "slurm" / "controller.log").read_text().splitlines()
    for host in plan.hosts[:2]:
        assert f"scontrol update NodeName={host.name} State=DRAIN Reason=fabricgen:deploy" in log
        assert log.index(f"scontrol update NodeName={host.name} State=RESUME") > \
            log.index(f"scontrol update NodeName={host.name} State=DRAIN Reason=fabricgen:deploy")
        root = directory / "hosts" / host.name / "root"
        assert (root / "etc/netplan/60-fabricgen.yaml").read_text().startswith(f"# Generated by fabricgen for {host.name}")
        assert "Priority trust state: dscp" in ssh(directory, host.name, f"mlnx_qos -i {host.nics[0].netdev}").stdout
    assert "DRAIN" not in ssh(directory, plan.hosts[0].name, f"scontrol show node {plan.hosts[0].name}").stdout


def test_verify_host_checks_pass_on_the_deployed_lab_hosts(lab, deployed, tmp_path):
    """verify reaches each lab host where the endpoints file's servers: says it listens; after the
    deploy roce-qos.sh --check, `rdma -j link show` and the counters agree with the plan: exit 0."""
    plan, directory, _ = lab
    assert deployed[0].returncode == 0, deployed[0].stdout + deployed[0].stderr
    out = tmp_path / "verify.json"
    r = subprocess.run([sys.executable, "-m", "generator.cli", "verify", str(directory.parent / "intent.yaml"),
                        "--endpoints", str(directory / "endpoints.yml"), "--only", "hosts", "--format", "json",
                        "-o", str(out), "--interval", "1"], capture_output=True, text=True, timeout=300)
    doc = json.loads(out.read_text())
    assert r.returncode == 0, (r.stdout + r.stderr, doc["findings"])
    assert doc["summary"] == {"checked": 4, "passed": 4, "failed": 0, "unknown": 0}


NETPLAN = pytest.mark.skipif(netplan_tool() is None, reason="netplan.io not installed on this machine")


@NETPLAN
def test_deploy_runs_the_real_netplan_generate_in_each_sandbox(lab, deployed):
    """A stock server has netplan, so the hosts playbook's netplan step runs on a lab host: the real
    netplan generates the rendered file in a stage, and the rails' networkd files land in the host's
    own /run (the lab machine's /run and /etc stay as they were: `deployed`'s machine state)."""
    plan, directory, _ = lab
    r, before, after = deployed
    assert r.returncode == 0, r.stdout + r.stderr
    assert after == before
    extravars = yaml.safe_load((directory / "endpoints.yml").read_text())["hosts"]["extravars"]
    assert extravars["fabricgen_netplan_apply"] is True
    for host in plan.hosts[:2]:
        networkd = directory / "hosts" / host.name / "root/run/systemd/network"
        for nic in host.nics:
            text = (networkd / f"10-netplan-{nic.netdev}.network").read_text()
            assert f"[Match]\nName={nic.netdev}\n" in text and f"Address={nic.ip}\n" in text, text
            assert (networkd / f"10-netplan-{nic.netdev}.link").is_file()


@NETPLAN
def test_a_hosts_netplan_is_the_real_one_rooted_in_its_sandbox(lab, deployed):
    """`netplan generate` without --root-dir writes the server's own /run (its sandbox), and rejects
    what the real netplan rejects, with its message; `netplan apply` (never run by the playbook, and
    it would reconfigure the machine's links) is refused and changes nothing."""
    plan, directory, _ = lab
    host = plan.hosts[1]
    root = directory / "hosts" / host.name / "root"
    bad = root / "etc/netplan/70-typo.yaml"
    r = ssh(directory, host.name, "mkdir -p $FABRICGEN_SYSROOT/etc/netplan && "
                                  "printf 'network: {version: 2, ethernets: {eth9: {addresses: [10.0.0.1/33]}}}\\n' "
                                  "> $FABRICGEN_SYSROOT/etc/netplan/70-typo.yaml && netplan generate")
    try:
        assert r.returncode == 1, r.stdout + r.stderr
        assert "invalid prefix length in address '10.0.0.1/33'" in r.stderr, r.stderr
    finally:
        bad.unlink(missing_ok=True)
    networkd = root / f"run/systemd/network/10-netplan-{host.nics[0].netdev}.network"
    networkd.unlink(missing_ok=True)
    r = ssh(directory, host.name, "netplan generate")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"Address={host.nics[0].ip}\n" in networkd.read_text()
    r = ssh(directory, host.name, "netplan apply")
    assert r.returncode == 1 and r.stderr.startswith("netplan apply: not simulated on a lab server"), r.stderr
    assert ssh(directory, host.name, "command -v systemctl networkctl").stdout == ""


def test_rdma_prints_iproute2s_link_json_from_the_hosts_own_sys(lab):
    plan, directory, _ = lab
    host = plan.hosts[0]
    r = ssh(directory, host.name, "rdma -j link show")
    assert r.returncode == 0, r.stderr
    links = json.loads(r.stdout)
    assert [(e["ifname"], e["port"], e["state"], e["physical_state"], e["netdev"]) for e in links] == sorted(
        (n.rdma, 1, "ACTIVE", "LINK_UP", n.netdev) for n in host.nics)
    text = ssh(directory, host.name, f"rdma link show {host.nics[0].rdma}/1").stdout
    assert text == f"link {host.nics[0].rdma}/1 state ACTIVE physical_state LINK_UP netdev {host.nics[0].netdev} \n"


def test_host_faults_are_found_by_verify_and_by_the_health_check(lab, deployed, tmp_path):
    """Faults through the lab's mechanism on deployed hosts: a rail port without link (the NIC's port
    DOWN, its leaf's end of the cable down with it) and a NIC that keeps falling back to PCP trust.
    verify names each on its host; the installed QoS script's --health (what slurmd runs) fails on
    both and drains the node."""
    plan, directory, _ = lab
    first, second = plan.hosts[0], plan.hosts[1]
    assert deployed[0].returncode == 0, deployed[0].stdout + deployed[0].stderr
    set_host_faults(directory, first.name, rails_down=[first.nics[0].netdev])
    set_host_faults(directory, second.name, pcp_trust=[second.nics[1].netdev])
    try:
        world = World.from_dict(json.loads((directory / "world.json").read_text()))
        assert world.cable_at(first.name, first.nics[0].netdev).state == "down"
        assert world.cable_at(first.name, first.nics[1].netdev).state == "up"
        assert "Priority trust state: pcp" in ssh(directory, second.name,
                                                  f"mlnx_qos -i {second.nics[1].netdev}").stdout
        link = json.loads(ssh(directory, first.name, f"ip -j link show {first.nics[0].netdev}").stdout)[0]
        assert "NO-CARRIER" in link["flags"] and link["operstate"] == "DOWN"

        out = tmp_path / "verify.json"
        r = subprocess.run([sys.executable, "-m", "generator.cli", "verify", str(directory.parent / "intent.yaml"),
                            "--endpoints", str(directory / "endpoints.yml"), "--only", "hosts", "--format", "json",
                            "-o", str(out), "--interval", "1"], capture_output=True, text=True, timeout=300)
        assert r.returncode == 3, r.stdout + r.stderr
        found = {(f["check"], f["device"], f["port"]): f for f in json.loads(out.read_text())["findings"]}
        assert found[("host-roce", first.name, first.nics[0].netdev)]["observed"] == "DOWN DISABLED"
        trust = found[("host-roce", second.name, "")]["observed"]
        assert "differs:" in trust and "trust" in trust and second.nics[1].netdev in trust

        for host in (first, second):
            health = ssh(directory, host.name, f"SLURMD_NODENAME={host.name} "
                                               "sh $FABRICGEN_SYSROOT/usr/local/sbin/fabricgen-roce-qos --health")
            assert health.returncode == 1, health.stdout + health.stderr
            shown = ssh(directory, host.name, f"scontrol show node {host.name}").stdout
            assert "DRAIN" in shown and "Reason=fabricgen-roce-qos" in shown, shown
    finally:
        for host in (first, second):
            set_host_faults(directory, host.name)
            ssh(directory, host.name, f"scontrol update NodeName={host.name} State=RESUME")


def test_a_hosts_macs_and_lldp_ports_are_the_ones_its_leaves_hear(lab):
    """One MAC per NIC across the lab: /sys, the GID table's fe80:: entry, and lldpd's port ID are
    world.host_mac, which the leaves' LLDP answers announce. The leaves of this lab have no config
    yet (ports admin down): lldpd hears no neighbour, as on a real server."""
    plan, directory, _ = lab
    host = plan.hosts[0]
    nic = host.nics[0]
    mac = host_nic_mac(host.name, nic.netdev)
    assert ssh(directory, host.name, f"cat $FABRICGEN_SYSROOT/sys/class/net/{nic.netdev}/address").stdout == mac + "\n"
    gids = ssh(directory, host.name, f"show_gids {nic.rdma}").stdout.splitlines()
    octets = mac.split(":")
    eui = f"{int(octets[0], 16) ^ 2:02x}{octets[1]}:{octets[2]}ff:fe{octets[3]}:{octets[4]}{octets[5]}"
    assert gids[2].split("\t")[:4] == [nic.rdma, "1", "0", f"fe80:0000:0000:0000:{eui}"]
    assert gids[2].split("\t")[-2:] == ["v1", nic.netdev]
    ip = nic.ip.split("/")[0]
    assert any(line.split("\t")[2] == "3" and f"\t{ip}  \tv2\t{nic.netdev}" in line for line in gids), gids
    assert gids[-1] == "n_gids_found=4"
    local = json.loads(ssh(directory, host.name, "lldpcli show interfaces -f json").stdout)["lldp"]["interface"]
    ports = {name: tree["port"]["id"] for entry in local for name, tree in entry.items()}
    assert ports[nic.netdev] == {"type": "mac", "value": mac}
    assert json.loads(ssh(directory, host.name, "lldpcli show neighbors -f json").stdout) == {"lldp": {}}


KUBERNETES = INTENT.replace("deploy: {concurrency: 4}", """deploy:
  concurrency: 4
  hosts:
    user: fabricgen
    scheduler: kubernetes
    drain: 'kubectl drain {host} --ignore-daemonsets --timeout=600s'
    undrain: 'kubectl uncordon {host}'
""")


def test_a_kubernetes_lab_drains_its_hosts_with_kubectl(tmp_path):
    """scheduler kubernetes: the hosts have kubectl and no scontrol; deploy's hooks run the lab's
    kubectl on the controller against the same node list the hosts read (one API server)."""
    intent = tmp_path / "intent.yaml"
    intent.write_text(KUBERNETES)
    directory = tmp_path / "lab"
    up = subprocess.run([sys.executable, "-m", "generator.cli", "lab", "up", str(intent), "--dir", str(directory),
                         "--hosts", "1"], capture_output=True, text=True, timeout=120)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        assert f"Kubernetes client (kubectl): export PATH={directory.resolve() / 'bin'}:$PATH" in up.stdout
        name = run_checks(load_intent(intent)).plan.hosts[0].name
        r = ssh(directory, name, f"command -v scontrol; kubectl get node {name}")
        assert r.returncode == 0 and "scontrol" not in r.stdout, r.stdout + r.stderr
        assert r.stdout.splitlines()[-1].split()[:2] == [name, "Ready"]
        missing = ssh(directory, name, "kubectl get node gpu999")
        assert (missing.returncode, missing.stderr) == (1, 'Error from server (NotFound): nodes "gpu999" not found\n')
        r = deploy_hosts(directory, tmp_path, directory / "endpoints.yml")
        assert r.returncode == 0, r.stdout + r.stderr
        # the plan's second host was not started: not installed, neither reached nor failed
        assert "hosts: 1 not in the endpoints file's hosts.servers (not installed), skipped: gpu002" in r.stdout
        log = (directory / "slurm" / "controller.log").read_text().splitlines()
        assert log == [f"kubectl drain {name} --ignore-daemonsets --timeout=600s", f"kubectl uncordon {name}"]
        assert ssh(directory, name, f"kubectl get node {name} -o jsonpath={{.spec.unschedulable}}").stdout == ""
        subprocess.run([directory / "bin" / "kubectl", "cordon", name], check=True, capture_output=True)
        assert "Ready,SchedulingDisabled" in ssh(directory, name, f"kubectl get node {name}").stdout
    finally:
        lab_down(directory)


def test_lab_up_faults_take_a_hosts_rail_down_at_both_ends(tmp_path):
    """`lab up --faults` with a hosts: entry: the rail's RDMA port is DOWN on the host (rdma, ip) and the
    cable is down in the world the leaves answer from; a typo in it is one line and nothing started."""
    intent = tmp_path / "intent.yaml"
    intent.write_text(SLURM)
    host = run_checks(load_intent(intent)).plan.hosts[0]
    netdev = host.nics[1].netdev
    faults = tmp_path / "faults.yaml"
    faults.write_text(f"hosts:\n  {host.name}: {{rails_down: [{netdev}], pcp_trust: [eth9]}}\n")
    directory = tmp_path / "lab"
    argv = [sys.executable, "-m", "generator.cli", "lab", "up", str(intent), "--dir", str(directory), "--hosts", "1",
            "--faults", str(faults)]
    bad = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and not (directory / "lab.pid").exists()
    assert bad.stderr.startswith(f"error: lab up: {faults}:2: hosts.{host.name}.pcp_trust: eth9 is not a rail")
    faults.write_text(f"hosts:\n  {host.name}: {{rails_down: [{netdev}]}}\n")
    up = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        links = {e["netdev"]: (e["state"], e["physical_state"])
                 for e in json.loads(ssh(directory, host.name, "rdma -j link show").stdout)}
        assert links[netdev] == ("DOWN", "DISABLED") and links[host.nics[0].netdev] == ("ACTIVE", "LINK_UP")
        world = World.from_dict(json.loads((directory / "world.json").read_text()))
        assert world.cable_at(host.name, netdev).state == "down"
        assert world.cable_at(host.name, host.nics[0].netdev).state == "up"
    finally:
        lab_down(directory)
