"""Issue 16, the pure side: what the host files, the inventory and the checks say for a real fleet.

netplan keys per rail, the per-NIC QoS unit and its udev rule (instance names escaped as the real
`systemd-escape` does), nccl.env read by a real shell as nccl.conf's keys, a discovery file that
changes one host's RDMA names (and only that host's files), deploy.hosts in the intent and the
inventory (read back by the real ansible-inventory), and the FG308/309/313/330 findings.
"""

from __future__ import annotations

import configparser
import dataclasses
import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from generator.checks.runner import run_checks
from generator.cli import app
from generator.deploy.discover import discovery_text
from generator.intent.loader import IntentError, load_intent
from generator.render.hosts import HOST_FILES, INSTALL_MODES, INSTALL_PATHS, render_host, systemd_escape
from generator.render.inventory import render_inventory
from generator.render.output import render_files
from tests.conftest import example

EXAMPLES = ("small", "medium", "large", "medium-sonic")
BIN = Path(sys.executable).parent


def _write(tmp_path: Path, name: str = "small", **changes) -> Path:
    data = yaml.safe_load(example(name).read_text())
    for dotted, value in changes.items():
        node = data
        *parents, leaf = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    path = tmp_path / "fabric.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _checked(path: Path):
    loaded = load_intent(path)
    result = run_checks(loaded)
    assert not result.errors, [f.one_line() for f in result.errors]
    return loaded, result


def _plan(name: str):
    return run_checks(load_intent(example(name))).plan


def test_install_table_is_the_contract():
    assert INSTALL_PATHS == {
        "netplan.yaml": "/etc/netplan/60-fabricgen.yaml",
        "sysctl.conf": "/etc/sysctl.d/90-fabricgen.conf",
        "roce-qos.sh": "/usr/local/sbin/fabricgen-roce-qos",
        "fabricgen-roce-qos@.service": "/etc/systemd/system/fabricgen-roce-qos@.service",
        "81-fabricgen-roce-qos.rules": "/etc/udev/rules.d/81-fabricgen-roce-qos.rules",
        "fabricgen-roce-qos-reconcile.service": "/etc/systemd/system/fabricgen-roce-qos-reconcile.service",
        "fabricgen-roce-qos-reconcile.timer": "/etc/systemd/system/fabricgen-roce-qos-reconcile.timer",
        "slurmd-roce-qos.conf": "/etc/systemd/system/slurmd.service.d/fabricgen-roce-qos.conf",
        "kubelet-roce-qos.conf": "/etc/systemd/system/kubelet.service.d/fabricgen-roce-qos.conf",
        "nccl.conf": "/etc/nccl.conf",
        "nccl.env": "/etc/fabricgen/nccl.env",
        "lldpd.conf": "/etc/lldpd.d/fabricgen.conf",        # only with hosts.lldpd
    }
    assert set(INSTALL_MODES) == set(INSTALL_PATHS) == {*HOST_FILES, "lldpd.conf"}
    assert INSTALL_MODES["netplan.yaml"] == 0o600
    assert INSTALL_MODES["roce-qos.sh"] == 0o755


@pytest.mark.parametrize("name", EXAMPLES)
def test_netplan_rails_are_networkd_optional_and_ignore_carrier(name):
    plan = _plan(name)
    for host in (plan.hosts[0], plan.hosts[-1]):
        doc = yaml.safe_load(render_host(plan, host)[f"hosts/{host.name}/netplan.yaml"])["network"]
        # no global renderer: it is last-file-wins and would take the management NIC off NM
        assert doc["version"] == 2 and "renderer" not in doc
        assert list(doc["ethernets"]) == [nic.netdev for nic in host.nics]
        for eth in doc["ethernets"].values():
            assert eth["renderer"] == "networkd"
            assert eth["optional"] is True and eth["ignore-carrier"] is True


def _unit(text: str) -> configparser.ConfigParser:
    cp = configparser.ConfigParser(strict=True, interpolation=None, comment_prefixes=("#",))
    cp.optionxform = str
    cp.read_string(text)
    return cp


def test_qos_unit_is_bound_to_its_netdev():
    plan = _plan("medium")
    files = render_host(plan, plan.hosts[0])
    unit = _unit(files["hosts/gpu001/fabricgen-roce-qos@.service"])
    assert unit.sections() == ["Unit", "Service"]          # no [Install]: udev starts it
    assert dict(unit["Unit"]) == {
        "Description": "fabricgen RoCE NIC QoS on %I (trust DSCP, PFC, ECN, RoCE ToS)",
        "BindsTo": "sys-subsystem-net-devices-%i.device",
        "After": "sys-subsystem-net-devices-%i.device",
        "Before": "slurmd.service kubelet.service",
    }
    assert dict(unit["Service"]) == {"Type": "oneshot", "RemainAfterExit": "yes", "TimeoutStartSec": "120",
                                      "ExecStart": "/usr/local/sbin/fabricgen-roce-qos --interface %I"}
    # systemd must not kill a run still within its own waits: the lock, then (--interface) the
    # RDMA device and the GID, as the script's defaults say, plus time for the NIC tools
    script = files["hosts/gpu001/roce-qos.sh"]
    lock_wait = int(re.search(r"lock_wait=\$\{FABRICGEN_LOCK_WAIT:-(\d+)\}; fi", script).group(1))
    device_wait = int(re.search(r"WAIT_LEFT=\$\{FABRICGEN_WAIT:-(\d+)\}; else", script).group(1))
    from generator.render.hosts import APPLY_LOCK_WAIT_S, DEVICE_WAIT_S

    assert (lock_wait, device_wait) == (APPLY_LOCK_WAIT_S, DEVICE_WAIT_S)
    assert int(unit["Service"]["TimeoutStartSec"]) >= lock_wait + device_wait + 20
    # --health runs under slurmd, which kills it after 60 s: a few seconds for the lock, 2 between counter reads
    assert "lock_wait=${FABRICGEN_LOCK_WAIT:-5}" in script and "COUNTER_INTERVAL=${FABRICGEN_COUNTER_INTERVAL:-2}" \
        in script
    # the same text for every host of the plan, rendered once
    assert render_host(plan, plan.hosts[-1])[f"hosts/{plan.hosts[-1].name}/fabricgen-roce-qos@.service"] is \
        files["hosts/gpu001/fabricgen-roce-qos@.service"]


_RULE = re.compile(r'(?P<key>[A-Z]+(?:\{[A-Z_]+\})?)(?P<op>==|\+=|=)"(?P<value>[^"]*)"')


def _rules(text: str) -> list[list[tuple[str, str, str]]]:
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        pairs = [m.group("key", "op", "value") for m in _RULE.finditer(line)]
        assert ", ".join(f'{k}{o}"{v}"' for k, o, v in pairs) == line, line     # nothing else on the line
        out.append(pairs)
    return out


def test_udev_rule_wants_one_instance_per_rail_netdev():
    plan = _plan("medium")
    host = plan.hosts[3]
    rules = _rules(render_host(plan, host)[f"hosts/{host.name}/81-fabricgen-roce-qos.rules"])
    # udev renames after all rules ran: the final name (NAME, set by 80-net-setup-link.rules) is
    # matched, and the kernel name only when no rule names the netdev
    tail = [("DRIVERS", "==", "mlx5_core"), ("TAG", "+=", "systemd")]
    want = []
    for nic in host.nics:
        wants = ("ENV{SYSTEMD_WANTS}", "+=", f"fabricgen-roce-qos@{nic.netdev}.service")
        want.append([("ACTION", "==", "add"), ("SUBSYSTEM", "==", "net"), ("NAME", "==", nic.netdev), *tail, wants])
        want.append([("ACTION", "==", "add"), ("SUBSYSTEM", "==", "net"), ("NAME", "==", ""),
                     ("KERNEL", "==", nic.netdev), *tail, wants])
    # the rail's RDMA device registering again (mlx5 suspend/resume) restarts the same instance
    for nic in host.nics:
        want.append([("ACTION", "==", "add|move"), ("SUBSYSTEM", "==", "infiniband"), ("KERNEL", "==", nic.rdma),
                     ("DRIVERS", "==", "mlx5_core"),
                     ("RUN", "+=", f"/bin/systemctl --no-block restart fabricgen-roce-qos@{nic.netdev}.service")])
    assert rules == want


NAMES = ["ens1f0np0", "eth-1", ".hidden", "a.b", "ens1f0np0.100", "rail_0", "x:y", "-lead", "a-b-c", "é", "a b",
         "a/b", "a\\b"]


@pytest.mark.parametrize("name", NAMES)
def test_escape_is_systemd_escape(name):
    tool = shutil.which("systemd-escape")
    if tool is None:
        pytest.skip("systemd-escape not installed")
    real = subprocess.run([tool, "--", name], capture_output=True, text=True, check=True).stdout.strip()
    assert systemd_escape(name) == real


def test_netdev_with_a_dash_is_escaped_in_the_rule_and_warned_about(tmp_path):
    rails = [{"netdev": "rail-0", "rdma": "mlx5_0"}, {"netdev": "ens2f0np0", "rdma": "mlx5_1"}]
    _, result = _checked(_write(tmp_path, **{"hosts.rails": rails}))
    host = result.plan.hosts[0]
    rules = _rules(render_host(result.plan, host)[f"hosts/{host.name}/81-fabricgen-roce-qos.rules"])
    assert rules[0][2] == ("NAME", "==", "rail-0") and rules[1][3] == ("KERNEL", "==", "rail-0")
    assert rules[0][5] == rules[1][6] == ("ENV{SYSTEMD_WANTS}", "+=", "fabricgen-roce-qos@rail\\x2d0.service")
    fg330 = [f for f in result.warnings if f.code == "FG330"]
    assert [f.path for f in fg330] == ["hosts.rails[0].netdev"] and "rail\\x2d0" in fg330[0].message


def _env_lines(text: str) -> list[tuple[str, str]]:
    body = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert all(re.fullmatch(r"[A-Z_][A-Z0-9_]*=[^\s\"'\\]+", line) for line in body), body
    return [tuple(line.split("=", 1)) for line in body]


@pytest.mark.parametrize("name", EXAMPLES)
def test_nccl_env_has_nccl_conf_keys_and_a_shell_reads_them(name, tmp_path):
    plan = _plan(name)
    host = plan.hosts[0]
    files = render_host(plan, host)
    env = _env_lines(files[f"hosts/{host.name}/nccl.env"])
    conf = _env_lines(files[f"hosts/{host.name}/nccl.conf"])
    assert env == conf == list(plan.nccl.settings)
    assert dict(env)["NCCL_SOCKET_IFNAME"] == f"={plan.mgmt_interface},eth0"
    # a Slurm TaskProlog or `set -a; . nccl.env` in a job script: POSIX sh assigns each value verbatim
    path = tmp_path / "nccl.env"
    path.write_text(files[f"hosts/{host.name}/nccl.env"])
    out = subprocess.run(["sh", "-c", f'set -a; . "{path}"; env'], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"}, check=True).stdout
    seen = dict(line.split("=", 1) for line in out.splitlines() if line.startswith("NCCL_"))
    assert seen == dict(env)


def test_quote_or_backslash_in_an_nccl_value_is_a_warning(tmp_path):
    result = run_checks(load_intent(_write(tmp_path, **{"nccl.settings": {
        "NCCL_TOPO_FILE": "/opt/topo/it's.xml", "NCCL_DEBUG_SUBSYS": "INIT,NET"}})))
    assert not result.errors
    assert [(f.code, f.path) for f in result.warnings if f.code == "FG331"] == [
        ("FG331", "nccl.settings.NCCL_TOPO_FILE")]


def _discovered(tmp_path: Path, entries: dict) -> Path:
    (tmp_path / "discovered.yaml").write_text(discovery_text(entries))
    return _write(tmp_path, **{"hosts.discovered": "discovered.yaml"})


def _nic(netdev, rdma, **extra):
    return {"netdev": netdev, "rdma": rdma, "pci": "0000:08:00.0", "port": 1, "link_layer": "Ethernet",
            "state": "ACTIVE", "rate_gbps": 400, **extra}


def test_discovery_changes_one_hosts_rdma_names_and_only_its_files(tmp_path):
    entries = {"gpu01": {"gpudirect": "nvidia-peermem", "nics": [_nic("ens1f0np0", "mlx5_0"),
                                                                  _nic("ens2f0np0", "mlx5_1")]},
               "gpu02": {"gpudirect": "nvidia-peermem", "nics": [_nic("ens1f0np0", "mlx5_4"),
                                                                  _nic("ens2f0np0", "mlx5_7"),
                                                                  _nic("ens9f0np0", "mlx5_1")]},
               "gpu03": {"gpudirect": "dmabuf", "nics": [_nic("ens1f0np0", "mlx5_0"), _nic("ens2f0np0", "mlx5_1")]},
               "gpu04": {"gpudirect": "dmabuf", "nics": [_nic("ens1f0np0", "mlx5_0"), _nic("ens2f0np0", "mlx5_1")]}}
    loaded, result = _checked(_discovered(tmp_path, entries))
    assert not [f for f in result.findings if f.code == "FG313"]
    plan = result.plan
    assert [[n.rdma for n in h.nics] for h in plan.hosts] == [["mlx5_0", "mlx5_1"], ["mlx5_4", "mlx5_7"],
                                                              ["mlx5_0", "mlx5_1"], ["mlx5_0", "mlx5_1"]]
    assert list(plan.host_nccl) == ["gpu02"]

    base_loaded = load_intent(example("small"))
    base = render_files(run_checks(base_loaded).plan, base_loaded.text)
    files = render_files(plan, loaded.text)
    changed = sorted(rel for rel in files if files[rel] != base.get(rel))
    # the udev rule too: it matches each rail's RDMA device by its name
    assert changed == ["hosts/gpu02/81-fabricgen-roce-qos.rules", "hosts/gpu02/nccl.conf", "hosts/gpu02/nccl.env",
                       "hosts/gpu02/roce-qos.sh", "inventory.yml", "manifest.json", "plan.json"]
    assert 'KERNEL=="mlx5_7"' in files["hosts/gpu02/81-fabricgen-roce-qos.rules"]
    for rel in ("nccl.conf", "nccl.env"):
        assert dict(_env_lines(files[f"hosts/gpu02/{rel}"]))["NCCL_IB_HCA"] == "=mlx5_4:1,mlx5_7:1"
        assert "gpu02 reported" in files[f"hosts/gpu02/{rel}"]
    assert 'NICS="ens1f0np0:mlx5_4 ens2f0np0:mlx5_7"' in files["hosts/gpu02/roce-qos.sh"]
    inv = yaml.safe_load(files["inventory.yml"])["all"]["children"]["hosts"]["hosts"]
    assert [r["rdma"] for r in inv["gpu02"]["fabricgen_rails"]] == ["mlx5_4", "mlx5_7"]
    assert [r["rdma"] for r in inv["gpu01"]["fabricgen_rails"]] == ["mlx5_0", "mlx5_1"]
    doc = json.loads(files["plan.json"])
    assert [[n["rdma"] for n in h["nics"]] for h in doc["hosts"]][1] == ["mlx5_4", "mlx5_7"]
    manifest = json.loads(files["manifest.json"])
    raw = (tmp_path / "discovered.yaml").read_bytes()
    assert manifest["discovered_sha256"] == hashlib.sha256(raw).hexdigest()
    assert "discovered_sha256" not in json.loads(base["manifest.json"])


def test_discovery_problems_are_one_warning_per_host(tmp_path):
    entries = {"gpu01": {"gpudirect": "none", "nics": [_nic("ens1f0np0", "mlx5_0")]},
               "gpu02": {"gpudirect": "nvidia-peermem", "nics": [
                   _nic("ens1f0np0", "mlx5_0", link_layer="InfiniBand", pci="0000:1a:00.0"),
                   _nic("ens2f0np0", "mlx5_1", state="DOWN")]},
               "gpu03": {"gpudirect": "dmabuf", "nics": [_nic("ens1f0np0", "mlx5_0", rate_gbps=200),
                                                         _nic("ens2f0np0", "mlx5_1")]}}
    _, result = _checked(_discovered(tmp_path, entries))
    fg313 = [f for f in result.findings if f.code == "FG313"]
    assert all(f.severity == "warning" and f.path == "hosts.discovered" and f.line for f in fg313)
    by_host = {f.message.split(":")[0].split(" ")[0]: f.message for f in fg313}
    assert sorted(by_host) == ["gpu01", "gpu02", "gpu03", "gpu04"]
    assert "rail 1 ens2f0np0 not found (the host reported ens1f0np0)" in by_host["gpu01"]
    assert "no GPUDirect RDMA path" in by_host["gpu01"]
    assert "rail 0 ens1f0np0 (mlx5_0) is InfiniBand" in by_host["gpu02"]
    assert "mlxconfig -d 0000:1a:00.0 set LINK_TYPE_P1=2" in by_host["gpu02"]
    assert "rail 1 ens2f0np0 (mlx5_1) is DOWN, not ACTIVE" in by_host["gpu02"]
    assert by_host["gpu03"] == "gpu03: rail 0 ens1f0np0 (mlx5_0) runs at 200 Gb/s, below the plan's 400G"
    assert by_host["gpu04"].startswith("gpu04 not in ") and "discovered.yaml" in by_host["gpu04"]
    relaxed = _write(tmp_path, **{"hosts.discovered": "discovered.yaml", "deploy.hosts": {"require_gpudirect": False}})
    _, result = _checked(relaxed)
    assert not any("GPUDirect" in f.message for f in result.findings if f.code == "FG313")


def test_nccl_hca_pinned_in_the_intent_misses_a_hosts_discovered_names(tmp_path):
    entries = {"gpu02": {"gpudirect": "dmabuf", "nics": [_nic("ens1f0np0", "mlx5_4"), _nic("ens2f0np0", "mlx5_1")]}}
    path = _discovered(tmp_path, entries)
    data = yaml.safe_load(path.read_text())
    data["nccl"] = {"settings": {"NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1"}}
    path.write_text(yaml.safe_dump(data))
    _, result = _checked(path)
    assert not result.plan.host_nccl               # the pinned list goes to every host
    fg315 = [f.message for f in result.findings if f.code == "FG315"]
    assert len(fg315) == 1 and "gpu02's discovered rail device(s) mlx5_4" in fg315[0]


@pytest.mark.parametrize(("hosts", "path", "words"), [
    ({"batch": "0%"}, "deploy.hosts.batch", "percentage"),
    ({"batch": "ten"}, "deploy.hosts.batch", "percentage"),
    ({"batch": 0}, "deploy.hosts.batch", "host count"),
    ({"canary": -1}, "deploy.hosts.canary", "greater than or equal to 0"),
    ({"max_fail_percentage": 101}, "deploy.hosts.max_fail_percentage", "less than or equal to 100"),
    ({"user": "{{ lookup('pipe','id') }}"}, "deploy.hosts.user", "pattern"),
    ({"drain": "scontrol update State=DRAIN"}, "deploy.hosts.drain", "must contain {host}"),
    ({"undrain": "kubectl uncordon {{ inventory_hostname }} {host}"}, "deploy.hosts.undrain", "Jinja"),
    ({"drain": "a {host}\nb"}, "deploy.hosts.drain", "one line"),
    ({"canary_hosts": 1}, "deploy.hosts.canary_hosts", "unknown key"),
])
def test_deploy_hosts_errors_are_one_line_with_the_key(tmp_path, hosts, path, words):
    intent = _write(tmp_path, **{"deploy.hosts": hosts})
    with pytest.raises(IntentError) as exc:
        load_intent(intent)
    assert len(exc.value.problems) == 1
    problem = exc.value.problems[0]
    assert problem.path == path and problem.line is not None and words in problem.message
    assert str(problem).startswith(f"{intent}:{problem.line}: {path}: ")


def test_inventory_carries_the_rollout_and_preflight_vars(tmp_path):
    drain = 'scontrol update NodeName={host} State=DRAIN Reason="fabricgen: rollout"'
    undrain = "scontrol update NodeName={host} State=RESUME"
    loaded, result = _checked(_write(tmp_path, "medium", **{"deploy.hosts": {
        "user": "ubuntu", "canary": 2, "batch": 8, "max_fail_percentage": 10, "drain": drain, "undrain": undrain,
        "require_gpudirect": False, "scheduler": "slurm", "forks": 20}}))
    text = render_inventory(result.plan)
    assert "!unsafe " + json.dumps(drain) in text         # a space and quotes: never templated
    inv = yaml.load(text, Loader=_UnsafeLoader)["all"]
    assert inv["vars"]["fabricgen_nic_speed_gbps"] == 400
    assert inv["vars"]["fabricgen_roce_mtu"] == 4096                 # 4200 - 96 B of RoCEv2 headers
    assert inv["vars"]["fabricgen_gid_index"] == "3"
    group = inv["children"]["hosts"]["vars"]
    assert group == {"ansible_user": "ubuntu", "fabricgen_hosts_serial": [2, 8],
                     "fabricgen_hosts_max_fail_percentage": 10, "fabricgen_hosts_drain": drain,
                     "fabricgen_hosts_undrain": undrain, "fabricgen_require_gpudirect": False,
                     "fabricgen_hosts_scheduler": "slurm", "fabricgen_hosts_drain_timeout": 3600,
                     "fabricgen_hosts_forks": 20}
    default = yaml.safe_load(render_inventory(_plan("small")))["all"]
    assert default["children"]["hosts"]["vars"] == {
        "ansible_user": "root", "fabricgen_hosts_serial": [1, "10%"], "fabricgen_hosts_max_fail_percentage": 0,
        "fabricgen_hosts_drain": "", "fabricgen_hosts_undrain": "", "fabricgen_require_gpudirect": True}

    binary = shutil.which("ansible-inventory") or str(BIN / "ansible-inventory")
    if not Path(binary).exists():
        pytest.skip("ansible-inventory not installed")
    path = tmp_path / "inventory.yml"
    path.write_text(text)
    r = subprocess.run([binary, "-i", str(path), "--list"], capture_output=True, text=True, timeout=120,
                       env={"PATH": f"{BIN}:/usr/bin:/bin", "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True",
                            "HOME": str(tmp_path), "LC_ALL": "C.UTF-8"})
    assert r.returncode == 0, r.stderr
    listed = json.loads(r.stdout)
    hostvars = listed["_meta"]["hostvars"]["gpu001"]
    for key, value in group.items():
        got = hostvars[key]
        if isinstance(got, dict):               # --list shows an !unsafe string as {"__ansible_unsafe": ...}
            got = got["__ansible_unsafe"]
        assert got == value, key
    assert hostvars["fabricgen_roce_mtu"] == 4096 and hostvars["fabricgen_gid_index"] == "3"


class _UnsafeLoader(yaml.SafeLoader):
    pass


_UnsafeLoader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def test_gid_index_is_empty_when_nccl_picks_it(tmp_path):
    _, result = _checked(_write(tmp_path, **{"nccl.min_version": "2.21.5"}))
    assert yaml.safe_load(render_inventory(result.plan))["all"]["vars"]["fabricgen_gid_index"] == ""


def test_rails_omitted_is_a_warning_naming_the_key(tmp_path):
    path = _write(tmp_path)
    data = yaml.safe_load(path.read_text())
    del data["hosts"]["rails"]
    path.write_text(yaml.safe_dump(data))
    _, result = _checked(path)
    fg308 = [f for f in result.warnings if f.code == "FG308"]
    assert [f.path for f in fg308] == ["hosts.rails"] and "ens1f0np0..ens2f0np0 / mlx5_0..mlx5_1" in fg308[0].message


@pytest.mark.parametrize(("name", "hosts", "found"), [
    ("small", {}, set()),
    ("medium", {}, set()),
    ("small", {"canary": 4}, {"deploy.hosts.canary"}),
    ("small", {"canary": 0, "batch": "100%"}, {"deploy.hosts.canary"}),
    ("medium", {"batch": "100%"}, {"deploy.hosts.batch"}),
    ("medium", {"batch": 31}, {"deploy.hosts.batch"}),
    ("medium", {"batch": 30}, set()),
    ("medium", {"drain": "kubectl cordon {host}", "idle": True}, {"deploy.hosts.undrain"}),
    ("medium", {"drain": "kubectl cordon {host}", "undrain": "kubectl uncordon {host}", "idle": True}, set()),
])
def test_rollout_findings(tmp_path, name, hosts, found):
    _, result = _checked(_write(tmp_path, name, **{"deploy.hosts": hosts}))
    assert {f.path for f in result.warnings if f.code == "FG309"} == found


@pytest.mark.parametrize("code", ["FG308", "FG309", "FG313", "FG330", "FG331"])
def test_new_codes_explain(code):
    r = CliRunner().invoke(app, ["validate", "--explain", code])
    assert r.exit_code == 0 and r.output.startswith(f"{code} (warning): ") and len(r.output) > 300


def test_shared_host_files_are_rendered_once_per_plan():
    plan = _plan("large")
    hosts = tuple(dataclasses.replace(plan.hosts[i % len(plan.hosts)], name=f"gpu{i + 1:04d}", index=i + 1)
                  for i in range(256))
    plan = dataclasses.replace(plan, hosts=hosts)
    first = render_host(plan, plan.hosts[0])
    last = render_host(plan, plan.hosts[-1])
    for rel in ("nccl.conf", "nccl.env", "fabricgen-roce-qos@.service", "81-fabricgen-roce-qos.rules"):
        assert first[f"hosts/gpu0001/{rel}"] is last[f"hosts/gpu0256/{rel}"], rel


def test_acceptance_scripts_leave_per_host_nccl_keys_to_each_hosts_files(tmp_path):
    """A job exporting the first host's NCCL_IB_HCA would override gpu02's own names (the
    environment wins over nccl.conf): keys that differ per host are not exported."""
    from generator.acceptance.runs import plan_runs
    from generator.acceptance.scripts import per_host_keys, script_files

    entries = {"gpu02": {"gpudirect": "nvidia-peermem", "nics": [_nic("ens1f0np0", "mlx5_4"),
                                                                  _nic("ens2f0np0", "mlx5_7")]}}
    _, result = _checked(_discovered(tmp_path, entries))
    assert per_host_keys(result.plan) == {"NCCL_IB_HCA"}
    files = script_files(result.plan, plan_runs(result.plan, 8), "test")
    assert "NCCL_IB_HCA" not in files["nccl.env"] and "NCCL_IB_TC=" in files["nccl.env"]
    assert "NCCL_IB_HCA" not in files["acceptance.sbatch"] + files["run-mpi.sh"]
    base = load_intent(example("small"))
    assert per_host_keys(run_checks(base).plan) == frozenset()
    assert "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1" in script_files(run_checks(base).plan,
                                                             plan_runs(run_checks(base).plan, 8), "t")["nccl.env"]
