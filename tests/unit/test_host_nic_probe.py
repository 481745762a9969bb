"""playbooks/files/fabricgen_nics.py run as the playbooks run it, against fake /sys trees.

The trees come from tests/integration/fake_nic.py (the kernel's sysfs layout: netdev ->
PCI function -> RDMA device, ports/1/{link_layer,state,rate}); mlxconfig is the fake of
the same module. Expected values are the kernel's and the tools' formats, not the probe's
output copied back.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from fake_gpu import write_fake_dgx_h100  # noqa: E402
from fake_nic import firmware_reset, write_fake_nic_tools, write_fake_sysfs  # noqa: E402

PROBE = Path(__file__).resolve().parents[2] / "playbooks/files/fabricgen_nics.py"
RAILS = [{"rail": 0, "netdev": "ens1f0np0", "rdma": "mlx5_0"}, {"rail": 1, "netdev": "ens2f0np0", "rdma": "mlx5_1"}]


def _probe_module():
    spec = importlib.util.spec_from_file_location("fabricgen_nics", PROBE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def probe(root: Path, mode: str, args: dict | None = None, *, tools: Path | None = None,
          state: Path | None = None) -> subprocess.CompletedProcess:
    env = {"PATH": (f"{tools}:" if tools else "") + os.environ.get("PATH", ""), "FABRICGEN_SYSROOT": str(root),
           "FAKE_NIC_STATE": str(state or root / "state"), "FAKE_NIC_LOG": str(root / "nic.log")}
    if args is not None:
        env[{"preflight": "FG_PREFLIGHT", "linktype": "FG_LINKTYPE"}.get(mode, "FG_ROCE")] = json.dumps(args)
    return subprocess.run([sys.executable, str(PROBE), mode], capture_output=True, text=True, env=env, timeout=60)


def preflight_args(**kw) -> dict:
    return {"host": "gpu02", "rails": RAILS, "speed_gbps": 400, "require_gpudirect": True,
            "set_link_type": False, "check": False, "root": "", **kw}


@pytest.mark.parametrize(("mtu", "active"), [(4200, 4096), (4192, 4096), (4191, 2048), (9000, 4096),
                                             (1500, 1024), (1120, 1024), (1119, 512), (300, 0)])
def test_roce_active_mtu_is_the_kernels(mtu, active):
    # iboe_get_mtu (include/rdma/ib_addr.h): mtu - (GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4),
    # then the largest IB MTU (4096/2048/1024/512/256) that fits
    assert _probe_module().iboe_mtu(mtu) == active


def test_discover_reads_the_device_model(tmp_path):
    write_fake_sysfs(tmp_path, ["ens1f0np0", "ens2f0np0", "ens3f0np0"], rdma=["mlx5_0", "mlx5_3", "mlx5_4"],
                     pci=["0000:08:00.0", "0000:18:00.0", "0000:29:00.1"], state={"ens3f0np0": "DOWN"},
                     rate_gbps={"ens2f0np0": 200}, link_layer={"ens3f0np0": "InfiniBand"})
    (tmp_path / "sys/class/net/eno1").mkdir(parents=True)         # management NIC: no RDMA device
    done = probe(tmp_path, "discover")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"gpudirect": "nvidia-peermem", "nics": [
        {"netdev": "ens1f0np0", "mac": "0c:42:a1:00:00:00", "rdma": "mlx5_0", "pci": "0000:08:00.0", "port": 1,
         "link_layer": "Ethernet", "state": "ACTIVE", "rate_gbps": 400},
        {"netdev": "ens2f0np0", "mac": "0c:42:a1:00:00:01", "rdma": "mlx5_3", "pci": "0000:18:00.0", "port": 1,
         "link_layer": "Ethernet", "state": "ACTIVE", "rate_gbps": 200},
        {"netdev": "ens3f0np0", "mac": "0c:42:a1:00:00:02", "rdma": "mlx5_4", "pci": "0000:29:00.1", "port": 1,
         "link_layer": "InfiniBand", "state": "DOWN", "rate_gbps": 400}],
        "gpus": [], "affinity": "none"}         # no NVIDIA function under /sys/bus/pci/devices


@pytest.mark.parametrize(("written", "reported"), [("0C:42:A1:0A:0B:0C\n", "0c:42:a1:0a:0b:0c"), (None, ""),
                                                  ("80:00:02:08:fe:80:00:00:00:00:00:00:0c:42:a1:ff:ff:00:00:01\n",
                                                   "")])
def test_discover_reports_the_mac_lldpd_announces(tmp_path, written, reported):
    # /sys/class/net/<netdev>/address: lldpd's default LLDP port ID; an IPoIB netdev's 20-byte
    # address or an unreadable file is no Ethernet MAC and is reported as ""
    write_fake_sysfs(tmp_path, ["ens1f0np0"])
    address = tmp_path / "sys/class/net/ens1f0np0/address"
    if written is None:
        address.unlink()
    else:
        address.write_text(written)
    assert json.loads(probe(tmp_path, "discover").stdout)["nics"][0]["mac"] == reported


@pytest.mark.parametrize(("flavour", "expected"), [("nvidia-peermem", "nvidia-peermem"), ("none", "none"),
                                                   ("dmabuf", "dmabuf")])
def test_discover_gpudirect_path(tmp_path, flavour, expected):
    release = tuple(int(x) for x in os.uname().release.split(".")[:2] if x.isdigit())
    if flavour == "dmabuf" and release < (5, 12):
        expected = "none"           # DMA-BUF needs Linux >= 5.12 (NVIDIA GPUDirect RDMA guide)
    write_fake_sysfs(tmp_path, ["ens1f0np0"], gpudirect=flavour)
    assert json.loads(probe(tmp_path, "discover").stdout)["gpudirect"] == expected


def test_preflight_passes_a_host_as_rendered(tmp_path):
    write_fake_sysfs(tmp_path, ["ens1f0np0", "ens2f0np0"])
    done = probe(tmp_path, "preflight", preflight_args())
    assert (done.returncode, done.stdout) == (0, "ok: gpu02: 2 rail(s) ready\n"), done.stderr


def test_preflight_one_line_for_another_rdma_device(tmp_path):
    write_fake_sysfs(tmp_path, ["ens1f0np0", "ens2f0np0"], rdma=["mlx5_0", "mlx5_7"])
    done = probe(tmp_path, "preflight", preflight_args())
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "error: gpu02: rail 1 ens2f0np0 is RDMA device mlx5_7, the render says mlx5_1: run `fabricgen hosts "
        "discover` and re-render"]


def test_preflight_missing_netdev_names_what_is_there(tmp_path):
    write_fake_sysfs(tmp_path, ["ens1f0np0", "enp9s0f0np0"], rdma=["mlx5_0", "mlx5_1"])
    done = probe(tmp_path, "preflight", preflight_args())
    assert done.returncode == 1
    # the netdevs that have an RDMA device, sorted by name
    assert done.stdout == ("error: gpu02: rail 1 ens2f0np0 does not exist (RDMA netdevs here: enp9s0f0np0=mlx5_1, "
                           "ens1f0np0=mlx5_0): set hosts.rails or run `fabricgen hosts discover` and re-render\n")


def test_preflight_gpudirect(tmp_path):
    write_fake_sysfs(tmp_path, ["ens1f0np0", "ens2f0np0"], gpudirect="none")
    done = probe(tmp_path, "preflight", preflight_args())
    assert done.returncode == 1 and "no GPUDirect RDMA path" in done.stdout
    assert len(done.stdout.splitlines()) == 1
    assert probe(tmp_path, "preflight", preflight_args(require_gpudirect=False)).returncode == 0


def test_preflight_port_state_and_rate_once_the_link_is_up(tmp_path):
    write_fake_sysfs(tmp_path, ["ens1f0np0", "ens2f0np0"], state={"ens1f0np0": "DOWN"},
                     rate_gbps={"ens2f0np0": 200})
    # admin down (a fresh host; no such link in this namespace, sysfs flags 0x1002): judged after the apply
    for netdev in ("ens1f0np0", "ens2f0np0"):
        (tmp_path / f"sys/class/net/{netdev}/flags").write_text("0x1002\n")
    assert probe(tmp_path, "preflight", preflight_args()).returncode == 0
    for netdev in ("ens1f0np0", "ens2f0np0"):
        (tmp_path / f"sys/class/net/{netdev}/flags").write_text("0x1003\n")      # IFF_UP
    done = probe(tmp_path, "preflight", preflight_args())
    assert done.returncode == 4, "only ports: the playbook stops the host only if the run would change it"
    assert done.stdout == ("error: gpu02: rail 0 ens1f0np0 (mlx5_0) port is DOWN (Disabled): check the cable and "
                           "the leaf port; rail 1 ens2f0np0 (mlx5_1) runs at 200 Gb/s, the plan needs 400: check "
                           "the transceiver, the cable and the leaf port speed\n")


def test_preflight_other_netplan_file_claiming_a_rail(tmp_path):
    write_fake_sysfs(tmp_path, ["ens1f0np0", "ens2f0np0"])
    (tmp_path / "sys/class/net/ens2f0np0/address").write_text("0c:42:a1:00:00:01\n")
    netplan = tmp_path / "etc/netplan"
    netplan.mkdir(parents=True)
    (netplan / "60-fabricgen.yaml").write_text("network: {version: 2, ethernets: {ens1f0np0: {dhcp4: false}}}\n")
    (netplan / "01-mgmt.yaml").write_text("network: {version: 2, ethernets: {eno1: {dhcp4: true}}}\n")
    assert probe(tmp_path, "preflight", preflight_args(root=str(tmp_path))).returncode == 0
    (netplan / "50-cloud-init.yaml").write_text(
        "network:\n  version: 2\n  ethernets:\n    ens1f0np0:\n      addresses: [10.1.1.1/24]\n"
        "    rail2:\n      match: {macaddress: '0C:42:A1:00:00:01'}\n      set-name: ens2f0np0\n")
    done = probe(tmp_path, "preflight", preflight_args(root=str(tmp_path) + "/"))
    assert done.returncode == 1
    assert done.stdout == (
        "error: gpu02: rail 0 ens1f0np0 is also configured by /etc/netplan/50-cloud-init.yaml (ethernets.ens1f0np0): "
        "remove it there (netplan merges the files, and another address moves the RoCE GID); rail 1 ens2f0np0 is "
        "also configured by /etc/netplan/50-cloud-init.yaml (ethernets.rail2): remove it there (netplan merges the "
        "files, and another address moves the RoCE GID)\n")
    (netplan / "50-cloud-init.yaml").write_text(
        "network:\n  version: 2\n  ethernets:\n    all-en:\n      match: {name: 'en*'}\n      dhcp4: true\n")
    done = probe(tmp_path, "preflight", preflight_args(root=str(tmp_path)))
    assert done.returncode == 1 and done.stdout.count("(ethernets.all-en)") == 2


def test_preflight_infiniband_port_needs_the_flag_and_a_firmware_reset(tmp_path):
    tools = write_fake_nic_tools(tmp_path / "bin")
    write_fake_sysfs(tmp_path, ["ens1f0np0", "ens2f0np0"], link_layer={"ens2f0np0": "InfiniBand"})
    done = probe(tmp_path, "preflight", preflight_args(), tools=tools)
    assert done.returncode == 1
    assert done.stdout == (
        "error: gpu02: rail 1 ens2f0np0 (mlx5_1, 0000:09:00.0): the port runs InfiniBand, the fabric needs "
        "Ethernet: run the playbook with -e fabricgen_set_link_type=true (mlxconfig -y -d 0000:09:00.0 set "
        "LINK_TYPE_P1=2), then `mlxfwreset -d 0000:09:00.0 reset -y` or a reboot\n")
    assert not (tmp_path / "nic.log").exists(), "no mlxconfig without the flag"

    # with the flag pre-flight only reads (it runs on every host at once): the port is handed to the
    # host's batch, which sets it drained (issue 33 item 7)
    pending = {"label": "rail 1 ens2f0np0 (mlx5_1, 0000:09:00.0)", "n": 1, "pci": "0000:09:00.0"}
    for check in (True, False):
        done = probe(tmp_path, "preflight", preflight_args(set_link_type=True, check=check), tools=tools)
        assert done.returncode == 0, done.stdout
        assert done.stdout.splitlines() == ["linktype: " + json.dumps(pending, sort_keys=True),
                                            "ok: gpu02: 2 rail(s) ready"]
    assert [c for c in (tmp_path / "nic.log").read_text().splitlines() if " set " in c] == []

    # the batch's step: check mode says what it would do; a real run sets the next-boot value once
    done = probe(tmp_path, "linktype", {"ports": [pending], "check": True}, tools=tools)
    assert (done.returncode, done.stdout) == (0, "changed: rail 1 ens2f0np0 (mlx5_1, 0000:09:00.0): would run "
                                                 "mlxconfig -y -d 0000:09:00.0 set LINK_TYPE_P1=2\n")
    done = probe(tmp_path, "linktype", {"ports": [pending]}, tools=tools)
    assert (done.returncode, done.stdout) == (0, "changed: rail 1 ens2f0np0 (mlx5_1, 0000:09:00.0): "
                                                 "mlxconfig -y -d 0000:09:00.0 set LINK_TYPE_P1=2\n")
    done = probe(tmp_path, "linktype", {"ports": [pending]}, tools=tools)
    assert done.stdout == ("ok: rail 1 ens2f0np0 (mlx5_1, 0000:09:00.0): LINK_TYPE_P1=2 already set for the next "
                           "firmware load\n")
    assert (tmp_path / "nic.log").read_text().count(" set ") == 1

    # pending until the firmware reset: pre-flight says so and hands nothing to the batch
    done = probe(tmp_path, "preflight", preflight_args(set_link_type=True), tools=tools)
    assert done.returncode == 1 and "already set for the next firmware load" in done.stdout
    assert "linktype: " not in done.stdout

    firmware_reset(tmp_path, tmp_path / "state", "0000:09:00.0")
    done = probe(tmp_path, "preflight", preflight_args(set_link_type=True), tools=tools)
    assert done.returncode == 0 and "linktype: " not in done.stdout, done.stdout


def test_linktype_without_mft_is_one_error(tmp_path):
    tools = write_fake_nic_tools(tmp_path / "bin", without=["mlxconfig"])
    write_fake_sysfs(tmp_path, ["ens1f0np0"], link_layer={"ens1f0np0": "InfiniBand"})
    done = probe(tmp_path, "linktype", {"ports": [{"label": "rail 0", "pci": "0000:08:00.0", "n": 1}]},
                 tools=tools)
    assert (done.returncode, done.stdout) == (1, "error: rail 0: mlxconfig cannot run (install NVIDIA MFT), "
                                                 "then run again\n")


def test_roce_check_after_the_apply(tmp_path):
    write_fake_sysfs(tmp_path, ["ens1f0np0", "ens2f0np0"])
    args = {"host": "gpu02", "rails": RAILS, "speed_gbps": 400, "roce_mtu": 4096, "wait": 0}
    for netdev in ("ens1f0np0", "ens2f0np0"):      # no such link in this namespace: sysfs mtu
        (tmp_path / f"sys/class/net/{netdev}/mtu").write_text("4200\n")
    done = probe(tmp_path, "roce", args)
    assert (done.returncode, done.stdout) == (0, "ok: gpu02: 2 rail(s) up\n"), done.stderr
    (tmp_path / "sys/class/net/ens2f0np0/mtu").write_text("1500\n")
    done = probe(tmp_path, "roce", args)
    assert done.returncode == 1
    assert done.stdout == ("error: gpu02: rail 1 ens2f0np0 (mlx5_1) RoCE active MTU is 1024 (netdev MTU 1500), "
                           "the plan needs 4096: give the rail the rendered MTU (roce.mtu.host; the playbook's netplan tag sets "
                           "it)\n")


# --- GPU <-> NIC affinity -------------------------------------------------------------------

DGX_RAILS = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]


def _gpu_rdma(answer: dict) -> list:
    by_netdev = {n["netdev"]: n["rdma"] for n in answer["nics"]}
    return [by_netdev.get(g["nic"], g["nic"]) for g in answer["gpus"]]


def test_dgx_h100_gpus_take_the_nic_behind_their_own_pcie_switch(tmp_path):
    # each GPU shares a PCIe switch with one compute NIC; the storage NICs sit on root ports of the same
    # NUMA node with PCI addresses between them (sorting by name, by PCI address or by NUMA node alone
    # gives mlx5_1/mlx5_2 to GPU1/GPU2)
    write_fake_dgx_h100(tmp_path)
    done = probe(tmp_path, "discover")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["affinity"] == "sysfs"
    assert [g["pci"] for g in answer["gpus"]] == ["0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0",
                                                  "0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0"]
    assert [g["numa_node"] for g in answer["gpus"]] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert _gpu_rdma(answer) == DGX_RAILS
    assert len(answer["nics"]) == 12                  # the storage NICs are still reported


def test_the_deepest_shared_switch_beats_the_same_host_bridge_and_a_lower_address():
    # pure logic: GPU 0000:1b:00.0 behind switch 16:00.0; NIC a (a lower address, on its own root port)
    # shares only the host bridge; NIC b shares the switch; NIC c is on another NUMA node
    nearest = _probe_module().nearest_by_path
    gpu = {"pci": "0000:1b:00.0", "numa_node": 0, "bridge": "pci0000:15",
           "path": ["0000:15:01.0", "0000:16:00.0", "0000:17:03.0", "0000:1b:00.0"]}
    a = {"netdev": "a", "pci": "0000:15:02.0", "numa_node": 0, "bridge": "pci0000:15",
         "path": ["0000:15:02.0"]}
    b = {"netdev": "b", "pci": "0000:18:00.0", "numa_node": 0, "bridge": "pci0000:15",
         "path": ["0000:15:01.0", "0000:16:00.0", "0000:17:00.0", "0000:18:00.0"]}
    c = {"netdev": "c", "pci": "0000:01:00.0", "numa_node": 1, "bridge": "pci0000:00", "path": ["0000:00:01.0"]}
    assert nearest([gpu], [a, b, c]) == ["b"]
    assert nearest([gpu, dict(gpu, pci="0000:1c:00.0")], [a, b, c]) == ["b", "a"]   # one NIC per GPU
    assert nearest([gpu], [c, dict(a, numa_node=1, bridge="pci0000:99")]) == ["c"]   # lower address on a tie
    assert nearest([gpu], [c, dict(a, bridge="pci0000:99")]) == ["a"]                # same NUMA node first
    assert nearest([gpu], []) == [""]


def test_a_missing_gpu_leaves_fewer_gpus_than_compute_nics(tmp_path):
    write_fake_dgx_h100(tmp_path, gpus=7)
    answer = json.loads(probe(tmp_path, "discover").stdout)
    assert _gpu_rdma(answer) == DGX_RAILS[:7]


# `nvidia-smi topo -m` on a (cut-down) DGX H100, as drivers since 2023 print it: NIC columns named
# NIC<j> with a "NIC Legend" (older drivers name the column after the RDMA device)
TOPO = """\
\tGPU0\tGPU1\tNIC0\tNIC1\tNIC2\tNIC3\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV18\tPIX\tNODE\tNODE\tNODE\t0-55,112-167\t0\t\tN/A
GPU1\tNV18\t X \tNODE\tNODE\tNODE\tPIX\t0-55,112-167\t0\t\tN/A
NIC0\tPIX\tNODE\t X \tNODE\tNODE\tNODE\t\t\t\t
NIC1\tNODE\tNODE\tNODE\t X \tPIX\tNODE\t\t\t\t

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
  NIC1: mlx5_1
  NIC2: mlx5_2
  NIC3: mlx5_3
"""
TOPO_NICS = [{"netdev": f"enp{i}", "rdma": f"mlx5_{i}", "pci": f"0000:{0x18 + i:02x}:00.0"} for i in range(4)]


def test_nvidia_smi_topo_matrix_is_read_through_the_nic_legend():
    module = _probe_module()
    matrix = module.parse_topo(TOPO, TOPO_NICS)
    assert matrix == {0: {"mlx5_0": 1, "mlx5_1": 4, "mlx5_2": 4, "mlx5_3": 4},
                      1: {"mlx5_0": 4, "mlx5_1": 4, "mlx5_2": 4, "mlx5_3": 1}}
    assert module.nearest_by_topo(matrix, 2, TOPO_NICS) == ["enp0", "enp3"]
    assert module.nearest_by_topo(matrix, 3, TOPO_NICS) == []        # a GPU the matrix lacks: not used
    # an older driver: the RDMA devices are the column names
    old = TOPO.replace("NIC0\tNIC1\tNIC2\tNIC3", "mlx5_0\tmlx5_1\tmlx5_2\tmlx5_3").split("NIC0\tPIX")[0]
    assert module.parse_topo(old, TOPO_NICS) == matrix


def test_nvidia_smi_wins_over_sysfs_when_it_answers(tmp_path):
    # a fake nvidia-smi that pairs GPU0 with mlx5_3 and GPU1 with mlx5_0 (the PCIe paths say the opposite)
    write_fake_dgx_h100(tmp_path, gpus=2)
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\ncat <<'EOF'\n" + TOPO.replace("NIC3: mlx5_3", "NIC3: mlx5_0").replace(
        "NIC0: mlx5_0", "NIC0: mlx5_3") + "EOF\n")
    smi.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "FABRICGEN_SYSROOT": str(tmp_path), "FABRICGEN_NVIDIA_SMI": str(smi)}
    done = subprocess.run([sys.executable, str(PROBE), "discover"], capture_output=True, text=True, env=env,
                          timeout=60)
    answer = json.loads(done.stdout)
    assert answer["affinity"] == "nvidia-smi"
    assert _gpu_rdma(answer) == ["mlx5_3", "mlx5_0"]
    smi.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.'"
                   "\nexit 9\n")
    answer = json.loads(subprocess.run([sys.executable, str(PROBE), "discover"], capture_output=True, text=True,
                                       env=env, timeout=60).stdout)
    assert (answer["affinity"], _gpu_rdma(answer)) == ("sysfs", ["mlx5_0", "mlx5_3"])


def test_sysfs_text_is_read_one_page_at_most(tmp_path):
    write_fake_dgx_h100(tmp_path, gpus=1)
    (tmp_path / "sys/bus/pci/devices/0000:1b:00.0/numa_node").write_text("0" * 10_000_000)
    (tmp_path / "sys/class/net/enp24s0f0np0/address").write_text("a" * 10_000_000)
    done = probe(tmp_path, "discover")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert len(done.stdout) < 10_000
    assert answer["gpus"] == [{"pci": "0000:1b:00.0", "numa_node": None, "nic": "enp24s0f0np0"}]
