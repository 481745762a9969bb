"""A simulated Cumulus switch's /etc/network/interfaces and frr.conf (generator/lab/flat_files.py):
NVUE writes them at boot and on every apply; files someone else wrote configure the switch (the
kernel's and bgpd's view) while `nv config show` stays factory; the next apply rewrites them."""

from __future__ import annotations

import asyncio
import json

from generator.lab import flat_files
from generator.lab.faults import FaultSource
from generator.lab.nvue import NvueDevice

ANSIBLE_INTERFACES = "auto swp1\niface swp1\n    address 10.0.0.0/31\n    mtu 9216\n"
ANSIBLE_FRR = "router bgp 65101\n bgp router-id 10.255.0.1\n neighbor swp1 interface remote-as external\n!\n"


class Io:
    def __init__(self):
        self.out = []

    def write(self, text):
        self.out.append(text)

    async def ask(self, prompt):
        return None


def run(device, argv) -> tuple[int, str]:
    io = Io()
    status = asyncio.run(device.run(argv, io))
    return status, "".join(io.out)


def make(tmp_path) -> NvueDevice:
    return NvueDevice("leaf01", "5.11", tmp_path / "root", FaultSource(tmp_path / "faults.json"))


def test_the_factory_files_are_nvues_and_configure_nothing_more(tmp_path):
    device = make(tmp_path)
    for path in (flat_files.INTERFACES, flat_files.FRR_CONF):
        assert flat_files.nvue_written(device.read_file(path)), path
    assert device.running == device.applied
    assert run(device, ["vtysh", "-c", "show bgp summary json"]) == (0, "{}\n")


def test_files_someone_else_wrote_make_the_switch_route_until_the_next_apply(tmp_path):
    device = make(tmp_path)
    factory_tree = json.dumps(device.applied, sort_keys=True)
    device.write_file(flat_files.INTERFACES, device.read_file(flat_files.INTERFACES) + ANSIBLE_INTERFACES)
    device.write_file(flat_files.FRR_CONF, ANSIBLE_FRR)
    assert device.oper_ports()["swp1"].addresses == ("10.0.0.0/31",)
    assert device.oper_bgp().asn == 65101
    summary = json.loads(run(device, ["vtysh", "-c", "show bgp summary json"])[1])
    assert summary["ipv4Unicast"]["peers"]["swp1"]["state"] == "Idle"      # no world: no far end
    status, out = run(device, ["nv", "show", "interface", "-o", "json"])
    assert status == 0 and "10.0.0.0/31" in json.loads(out)["swp1"]["ip"]["address"]
    assert json.dumps(device.applied, sort_keys=True) == factory_tree, "NVUE's tree is untouched"
    token = device.config_token()
    assert run(device, ["nv", "config", "apply", "-y"])[0] == 0
    assert device.config_token() != token
    assert flat_files.nvue_written(device.read_file(flat_files.FRR_CONF))
    assert "swp1" not in device.oper_ports() and device.oper_bgp() is None, "the apply rewrote the files"
