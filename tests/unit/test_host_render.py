"""Per-host render and inventory: layout, determinism, kernel sysctl tree, ansible-inventory."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from generator.intent.loader import load_intent
from generator.intent.model import Nccl
from generator.plan.compile import compile_plan
from generator.render.hosts import HOST_FILES, INSTALL_PATHS, render_host
from generator.render.inventory import render_inventory

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = ("small", "medium", "large")


def _plan(name):
    return compile_plan(load_intent(REPO / "inventories" / name / "fabric.yaml").intent)


@pytest.mark.parametrize("name", EXAMPLES)
def test_host_files_layout_and_determinism(name):
    plan = _plan(name)
    host = plan.hosts[-1]
    files = render_host(plan, host)
    assert sorted(files) == sorted(f"hosts/{host.name}/{f}" for f in HOST_FILES)
    assert files == render_host(_plan(name), host)
    assert all(text.endswith("\n") for text in files.values())


def test_hosts_lldpd_renders_lldpds_drop_in_and_the_inventory_switch():
    intent = load_intent(REPO / "inventories" / "small" / "fabric.yaml").intent
    off = compile_plan(intent)
    on = compile_plan(intent.model_copy(update={"hosts": intent.hosts.model_copy(update={"lldpd": True})}))
    host = on.hosts[0]
    files = render_host(on, host)
    assert sorted(files) == sorted(f"hosts/{host.name}/{f}" for f in (*HOST_FILES, "lldpd.conf"))
    conf = files[f"hosts/{host.name}/lldpd.conf"]
    # lldpcli(8): the command that makes the port ID the interface name; every other line a comment
    assert [line for line in conf.splitlines() if not line.startswith("#")] == ["configure lldp portidsubtype ifname"]
    assert conf == render_host(on, on.hosts[-1])[f"hosts/{on.hosts[-1].name}/lldpd.conf"]
    assert INSTALL_PATHS["lldpd.conf"] == "/etc/lldpd.d/fabricgen.conf"
    assert yaml.safe_load(render_inventory(on))["all"]["children"]["hosts"]["vars"]["fabricgen_lldpd"] is True
    # off (the default): no file, no inventory variable, so no byte of the render changes
    assert not any(name.endswith("lldpd.conf") for name in render_host(off, off.hosts[0]))
    assert "lldpd" not in render_inventory(off)


def test_netplan_content_matches_plan():
    plan = _plan("medium")
    host = plan.hosts[5]
    doc = yaml.safe_load(render_host(plan, host)[f"hosts/{host.name}/netplan.yaml"])
    eths = doc["network"]["ethernets"]
    assert list(eths) == [n.netdev for n in host.nics]
    assert plan.mgmt_interface not in eths
    for nic in host.nics:
        e = eths[nic.netdev]
        assert e["mtu"] == plan.qos.host_mtu and e["addresses"] == [nic.ip]
        # the rail's table, and the main table (metric 100+rail) for traffic without a rail source yet
        assert e["routes"] == [{"to": plan.rail_pool, "via": nic.gateway, "table": 100 + nic.rail},
                               {"to": plan.rail_pool, "via": nic.gateway, "metric": 100 + nic.rail}]
        assert e["routing-policy"] == [{"from": nic.ip.split("/")[0], "table": 100 + nic.rail,
                                        "priority": 100 + nic.rail}]


@pytest.mark.parametrize("name", EXAMPLES)
def test_sysctl_keys_exist_in_the_kernel_tree(name):
    proc = Path("/proc/sys/net/ipv4/conf/lo")
    if not proc.exists():
        pytest.skip("no /proc/sys here")
    plan = _plan(name)
    host = plan.hosts[0]
    text = render_host(plan, host)[f"hosts/{host.name}/sysctl.conf"]
    netdevs = {n.netdev for n in host.nics}
    keys = [line.split("=")[0].strip() for line in text.splitlines() if line and not line.startswith("#")]
    assert keys and all(k.startswith("net.") for k in keys)
    assert len(keys) == len(set(keys))
    for key in keys:
        parts = key.split(".")
        if parts[:3] == ["net", "ipv4", "conf"] and parts[3] in netdevs:
            parts[3] = "lo"          # the rail NICs are not on this machine; same per-interface tree
        assert Path("/proc/sys", *parts).exists(), key
    for netdev in netdevs:
        for leaf in ("arp_ignore = 1", "arp_announce = 2", "rp_filter = 2"):
            assert f"net.ipv4.conf.{netdev}.{leaf}" in text
    assert "net.ipv4.conf.all.rp_filter = 2" in text


def test_roce_qos_script_carries_the_qos_plan():
    plan = _plan("large")             # nic_tooling: dcb
    host = plan.hosts[0]
    files = render_host(plan, host)
    script = files[f"hosts/{host.name}/roce-qos.sh"]
    assert script.startswith("#!/bin/sh\n")
    assert "TOOLING=dcb" in script and f"TOS={plan.qos.tos}" in script
    assert 'DSCP_MAP="26:3 48:6"' in script and 'PFC_PRIOS="3"' in script
    assert 'PFC_VECTOR="0,0,0,1,0,0,0,0"' in script
    assert "NICS=\"" + " ".join(f"{n.netdev}:{n.rdma}" for n in host.nics) + '"' in script
    unit = files[f"hosts/{host.name}/fabricgen-roce-qos@.service"]
    assert "Type=oneshot" in unit and "BindsTo=sys-subsystem-net-devices-%i.device" in unit
    assert "ExecStart=/usr/local/sbin/fabricgen-roce-qos --interface %I" in unit and "\n[Install]" not in unit


def _with_nccl(nccl: dict):
    loaded = load_intent(REPO / "inventories/small/fabric.yaml")
    return compile_plan(loaded.intent.model_copy(update={"nccl": Nccl(**nccl)}))


@pytest.mark.parametrize(("nccl", "conf_line", "script_index"), [
    ({}, "NCCL_IB_GID_INDEX=3", "3"),
    ({"min_version": "2.18.3"}, "NCCL_IB_GID_INDEX=3", "3"),
    ({"min_version": "2.21"}, None, ""),
    ({"min_version": "2.23.4", "settings": {"NCCL_IB_GID_INDEX": 7}}, "NCCL_IB_GID_INDEX=7", "7"),
    ({"settings": {"NCCL_IB_GID_INDEX": -1}}, "NCCL_IB_GID_INDEX=-1", ""),
])
def test_roce_qos_script_checks_the_gid_index_nccl_conf_pins(nccl, conf_line, script_index):
    plan = _with_nccl(nccl)
    host = plan.hosts[0]
    files = render_host(plan, host)
    conf = [line for line in files[f"hosts/{host.name}/nccl.conf"].splitlines() if "GID_INDEX" in line]
    assert conf == ([conf_line] if conf_line else [])
    script = files[f"hosts/{host.name}/roce-qos.sh"]
    assert [line for line in script.splitlines() if line.startswith("GID_INDEX=")] == [f'GID_INDEX="{script_index}"']


@pytest.mark.parametrize("name", EXAMPLES)
def test_inventory_groups_and_host_vars(name, tmp_path):
    plan = _plan(name)
    text = render_inventory(plan)
    assert text == render_inventory(_plan(name))
    inv = yaml.safe_load(text)["all"]
    children = inv["children"]
    roles = set(children["switches"]["children"])
    assert roles == {{"leaf": "leaf", "spine": "spine", "super-spine": "super_spine"}[s.role] for s in plan.switches}
    hosts = children["hosts"]["hosts"]
    assert list(hosts) == [h.name for h in plan.hosts]
    h0 = plan.hosts[0]
    assert hosts[h0.name]["ansible_host"] == h0.mgmt_ip
    assert [r["netdev"] for r in hosts[h0.name]["fabricgen_rails"]] == [n.netdev for n in h0.nics]
    rails = {s.rail for s in plan.switches if s.rail is not None}
    assert {f"rail{r}" for r in rails} <= set(children)
    if any(h.unit for h in plan.hosts):
        assert h0.name in children[f"unit{h0.unit}"]["hosts"]
    if any(h.group for h in plan.hosts):
        assert h0.name in children[f"group{h0.group}"]["hosts"]

    binary = shutil.which("ansible-inventory") or str(Path(sys.executable).parent / "ansible-inventory")
    if not Path(binary).exists():
        pytest.skip("ansible-inventory not installed")
    path = tmp_path / "inventory.yml"
    path.write_text(text)
    r = subprocess.run([binary, "-i", str(path), "--list"], capture_output=True, text=True, timeout=120,
                       env={"PATH": "/usr/bin:/bin", "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True",
                            "HOME": str(tmp_path), "LC_ALL": "C.UTF-8"})
    assert r.returncode == 0, r.stderr
    listed = json.loads(r.stdout)
    assert sorted(listed["hosts"]["hosts"]) == sorted(h.name for h in plan.hosts)
    assert listed["_meta"]["hostvars"][h0.name]["fabricgen_rails"][0]["table"] == 100


def test_large_render_is_fast_enough():
    # 2,048 hosts: the large example's hosts repeated under new names (render_host
    # only reads the host and the shared plan values)
    plan = _plan("large")
    hosts = tuple(dataclasses.replace(plan.hosts[i % len(plan.hosts)], name=f"gpu{i + 1:04d}", index=i + 1)
                  for i in range(2048))
    plan = dataclasses.replace(plan, hosts=hosts)
    start = time.perf_counter()
    total = 0
    for host in plan.hosts:
        total += len(render_host(plan, host))
    elapsed = time.perf_counter() - start
    assert total == 2048 * len(HOST_FILES)
    print(f"rendered {total} host files in {elapsed:.2f}s")     # figures only; tests never assert timings
