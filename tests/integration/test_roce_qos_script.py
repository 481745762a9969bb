"""roce-qos.sh against fake mlnx_qos / dcb / cma_roce_tos and a fake /sys tree."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from netns import ROCE_V1, write_fake_gids, write_fake_nic_tools, write_fake_sysfs

from generator.intent.loader import parse_yaml, validate_data
from generator.plan.compile import compile_plan
from generator.render.hosts import render_host

pytestmark = pytest.mark.integration

INTENT = """
fabric: {{name: qos}}
topology: {{kind: single-switch, nodes: 2, rails: 2, nic_speed: 400G, switches: {{leaf: {{model: SN4700}}}}}}
roce: {{mode: {mode}, dscp: {dscp}}}
addressing: {{loopbacks: 10.255.0.0/24, rails: 172.16.0.0/24, management: 192.168.0.0/24}}
hosts:
  rails:
    - {{netdev: ens1f0np0, rdma: mlx5_0}}
    - {{netdev: ens2f0np0, rdma: mlx5_1}}
  nic_tooling: {tooling}
{nccl}"""


def _script(tmp_path: Path, tooling: str, mode: str = "lossless", dscp: int = 26, nccl: str = "") -> Path:
    text = INTENT.format(tooling=tooling, mode=mode, dscp=dscp, nccl=nccl)
    data, lines = parse_yaml(text, "qos.yaml")
    plan = compile_plan(validate_data(data, lines, "qos.yaml"))
    host = plan.hosts[0]
    script = tmp_path / "roce-qos.sh"
    script.write_text(render_host(plan, host)[f"hosts/{host.name}/roce-qos.sh"])
    script.chmod(0o755)
    return script


@pytest.fixture
def fake_env(tmp_path):
    if shutil.which("python3") is None or not Path("/usr/bin/python3").exists():
        pytest.skip("the fake NIC tools need /usr/bin/python3")
    bin_dir = write_fake_nic_tools(tmp_path / "bin")
    log = tmp_path / "calls.log"
    log.write_text("")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "FABRICGEN_SYSROOT": str(tmp_path / "root"),
           "FAKE_NIC_STATE": str(tmp_path / "state"), "FAKE_NIC_LOG": str(log), "LC_ALL": "C"}
    return env, log


def _run(script: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["/bin/sh", str(script), *args], env=env, capture_output=True, text=True, timeout=60)


def _calls(log: Path) -> list[str]:
    return [c for c in log.read_text().splitlines() if not c.endswith(" -i ens1f0np0")
            and not c.endswith(" -i ens2f0np0") and " show " not in c]


def test_mlnx_qos_mode_applies_once_and_check_reports(tmp_path, fake_env):
    env, log = fake_env
    write_fake_sysfs(Path(env["FABRICGEN_SYSROOT"]), ["ens1f0np0", "ens2f0np0"], ofed=True)
    # DSCP 34 is not in priority 3 by default (34 >> 3 = 4): the map must be set
    script = _script(tmp_path, "mlnx_qos", dscp=34)
    sys_net = Path(env["FABRICGEN_SYSROOT"]) / "sys/class/net"

    before = _run(script, env, "--check")
    assert before.returncode == 1
    assert "differs: ens1f0np0 trust: have 'pcp', want 'dscp'" in before.stdout
    assert "differs: ens2f0np0 pfc:" in before.stdout
    assert "differs: mlx5_0 roce tos" in before.stdout
    assert _calls(log) == [], "--check must not change anything"
    assert (sys_net / "ens1f0np0/ecn/roce_np/enable/3").read_text() == "0\n"

    applied = _run(script, env)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert _calls(log) == [
        "mlnx_qos -i ens1f0np0 --trust dscp",
        "mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,0,0,0,0",
        "mlnx_qos -i ens1f0np0 --dscp2prio set,34,3",       # 48 -> 6 is already the default map
        "cma_roce_tos -d mlx5_0 -t 136",
        "mlnx_qos -i ens2f0np0 --trust dscp",
        "mlnx_qos -i ens2f0np0 --pfc 0,0,0,1,0,0,0,0",
        "mlnx_qos -i ens2f0np0 --dscp2prio set,34,3",
        "cma_roce_tos -d mlx5_1 -t 136",
    ]
    for ifc in ("ens1f0np0", "ens2f0np0"):
        assert (sys_net / ifc / "ecn/roce_np/enable/3").read_text().strip() == "1"
        assert (sys_net / ifc / "ecn/roce_rp/enable/3").read_text().strip() == "1"
        assert (sys_net / ifc / "ecn/roce_np/enable/0").read_text().strip() == "0"
        assert (sys_net / ifc / "ecn/roce_np/cnp_dscp").read_text().strip() == "48"
        assert (sys_net / ifc / "ecn/roce_np/cnp_802p_prio").read_text().strip() == "6"
    assert "changed: ens1f0np0 trust" in applied.stdout

    log.write_text("")
    again = _run(script, env)
    assert again.returncode == 0 and "changed:" not in again.stdout
    assert _calls(log) == []
    assert _run(script, env, "--check").returncode == 0

    (sys_net / "ens2f0np0/ecn/roce_rp/enable/3").write_text("0\n")
    drift = _run(script, env, "--check")
    assert drift.returncode == 1
    assert [line for line in drift.stdout.splitlines() if line.startswith("differs:")] == [
        "differs: ens2f0np0 ecn roce_rp priority 3: have '0', want '1'"]


def test_dcb_mode_with_upstream_debugfs(tmp_path, fake_env):
    env, log = fake_env
    write_fake_sysfs(Path(env["FABRICGEN_SYSROOT"]), ["ens1f0np0", "ens2f0np0"], ofed=False)
    script = _script(tmp_path, "dcb")
    assert _run(script, env, "--check").returncode == 1
    applied = _run(script, env)
    assert applied.returncode == 0, applied.stdout
    assert _calls(log) == [
        "dcb app replace dev ens1f0np0 dscp-prio 26:3",
        "dcb app replace dev ens1f0np0 dscp-prio 48:6",
        "dcb pfc set dev ens1f0np0 prio-pfc all:off 3:on",
        "cma_roce_tos -d mlx5_0 -t 104",
        "dcb app replace dev ens2f0np0 dscp-prio 26:3",
        "dcb app replace dev ens2f0np0 dscp-prio 48:6",
        "dcb pfc set dev ens2f0np0 prio-pfc all:off 3:on",
        "cma_roce_tos -d mlx5_1 -t 104",
    ]
    cc = Path(env["FABRICGEN_SYSROOT"]) / "sys/kernel/debug/mlx5/0000:08:00.0/cc_params/np_cnp_dscp"
    assert cc.read_text().strip() == "48"
    assert _run(script, env, "--check").returncode == 0


def test_lossy_mode_turns_pfc_off(tmp_path, fake_env):
    env, log = fake_env
    write_fake_sysfs(Path(env["FABRICGEN_SYSROOT"]), ["ens1f0np0", "ens2f0np0"], ofed=True)
    script = _script(tmp_path, "dcb", mode="lossy")
    assert _run(script, env).returncode == 0
    assert "dcb pfc set dev ens1f0np0 prio-pfc all:off" not in _calls(log)   # already off: nothing to do
    assert _run(script, env, "--check").returncode == 0


def test_missing_tools_and_interfaces_are_reported(tmp_path, fake_env):
    env, _ = fake_env
    script = _script(tmp_path, "mlnx_qos")
    empty = {**env, "PATH": "/usr/bin:/bin", "FABRICGEN_SYSROOT": str(tmp_path / "nothing")}
    check = _run(script, empty, "--check")
    assert check.returncode == 1 and "differs: ens1f0np0: cannot read (no such network interface)" in check.stdout
    write_fake_sysfs(tmp_path / "nothing", ["ens1f0np0", "ens2f0np0"])
    applied = _run(script, empty)
    assert applied.returncode == 1 and "mlnx_qos not found" in applied.stdout
    assert _run(script, env, "--bogus").returncode == 2


def test_script_is_posix_sh(tmp_path):
    script = _script(tmp_path, "mlnx_qos")
    for shell in ("dash", "bash"):
        path = shutil.which(shell)
        if path:
            args = [path, "--posix", "-n", str(script)] if shell == "bash" else [path, "-n", str(script)]
            assert subprocess.run(args, capture_output=True).returncode == 0
    assert os.access(script, os.X_OK)


# GID tables: write_fake_gids lays them out as the kernel does on a ConnectX port (0/1
# link-local v1/v2, then a v1/v2 pair per address of the netdev in the order it got them).
# The expected strings below come from show_gids' own sample (10.110.0.33 is
# 0000:0000:0000:0000:0000:ffff:0a6e:0021), not from the script.
NEW_NCCL = "nccl: {min_version: 2.23.4}\n"
OLD_NCCL = "nccl: {min_version: 2.18.3}\n"


def _settled(tmp_path: Path, env: dict, nccl: str) -> Path:
    """A rendered script whose NIC settings are already applied on the fake sysfs."""
    write_fake_sysfs(Path(env["FABRICGEN_SYSROOT"]), ["ens1f0np0", "ens2f0np0"], ofed=True)
    script = _script(tmp_path, "mlnx_qos", nccl=nccl)
    applied = _run(script, env)
    assert applied.returncode == 0, applied.stdout
    return script


def _gids(env: dict, rdma: str, netdev: str, nic: int, addresses: list[str], **kw) -> None:
    write_fake_gids(Path(env["FABRICGEN_SYSROOT"]), rdma, netdev, nic, addresses, **kw)


def _not_ok(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(("differs:", "error:"))]


@pytest.mark.parametrize("nccl", ["", OLD_NCCL])
def test_gid_index_3_is_checked_to_be_roce_v2_ipv4(tmp_path, fake_env, nccl):
    env, _ = fake_env
    script = _settled(tmp_path, env, nccl)
    assert 'GID_INDEX="3"' in script.read_text()
    _gids(env, "mlx5_0", "ens1f0np0", 0, ["10.110.0.33"])
    check = _run(script, env, "--check")
    assert check.returncode == 0, check.stdout
    assert "ok: mlx5_0 gid 3 = RoCE v2 10.110.0.33" in check.stdout
    assert "ok: mlx5_1 gid 3 = RoCE v2 192.0.2.2" in check.stdout


ZEROS = "0000:0000:0000:0000:0000:0000:0000:0000"


@pytest.mark.parametrize(("addresses", "kw", "found"), [
    # no IPv4 address yet, only networkd's stable-privacy IPv6 link-local: 3 is RoCE v2 link-local
    (["fe80::1c2b:3aff:fe4d:5e6f"], {}, "RoCE v2 fe80:0000:0000:0000:1c2b:3aff:fe4d:5e6f"),
    ([], {}, f"no type {ZEROS}"),                          # no address at all: entry 3 unused
    # an IPv6 global address came first: IPv4 moved to 4/5 and 3 is RoCE v2 over IPv6
    (["2001:db8::7", "192.0.2.2"], {}, "RoCE v2 2001:0db8:0000:0000:0000:0000:0000:0007"),
    # a port running RoCE v1 only (one entry per address): 3 is the third IPv4 address, in RoCE v1
    (["192.0.2.2", "192.0.2.66", "192.0.2.130"], {"types": (ROCE_V1,)},
     "IB/RoCE v1 0000:0000:0000:0000:0000:ffff:c000:0282"),
])
def test_gid_index_3_that_is_not_roce_v2_ipv4_is_reported(tmp_path, fake_env, addresses, kw, found):
    env, _ = fake_env
    script = _settled(tmp_path, env, "")
    _gids(env, "mlx5_1", "ens2f0np0", 1, addresses, **kw)
    check = _run(script, env, "--check")
    assert check.returncode == 1
    assert _not_ok(check.stdout) == [
        f"differs: mlx5_1 gid 3: have '{found}', want 'RoCE v2' on an IPv4-mapped address "
        "(NCCL_IB_GID_INDEX=3 in nccl.conf): give ens2f0np0 its rail IPv4 address, check show_gids"]
    assert "ok: mlx5_0 gid 3 = RoCE v2 192.0.2.1" in check.stdout
    applied = _run(script, env)                 # nothing to apply: the boot unit must fail loudly
    assert applied.returncode == 1
    assert [line.split(":", 2)[:2] for line in _not_ok(applied.stdout)] == [["error", " mlx5_1 gid 3"]]


def test_auto_selecting_nccl_needs_some_roce_v2_ipv4_gid(tmp_path, fake_env):
    env, _ = fake_env
    script = _settled(tmp_path, env, NEW_NCCL)
    assert 'GID_INDEX=""' in script.read_text()
    _gids(env, "mlx5_1", "ens2f0np0", 1, ["2001:db8::7", "10.110.0.33"])     # IPv4 at 4/5
    check = _run(script, env, "--check")
    assert check.returncode == 0, check.stdout
    assert "ok: mlx5_0 gid 3 = RoCE v2 192.0.2.1 (NCCL auto-selects)" in check.stdout
    assert "ok: mlx5_1 gid 5 = RoCE v2 10.110.0.33 (NCCL auto-selects)" in check.stdout

    _gids(env, "mlx5_1", "ens2f0np0", 1, ["10.110.0.33"], types=(ROCE_V1,))
    _gids(env, "mlx5_0", "ens1f0np0", 0, ["fe80::1c2b:3aff:fe4d:5e6f", "2001:db8::7"])
    check = _run(script, env, "--check")
    assert check.returncode == 1
    assert _not_ok(check.stdout) == [
        f"differs: mlx5_{i} gid: no 'RoCE v2' GID on an IPv4-mapped address for NCCL to select: "
        f"give {ifc} its rail IPv4 address" for i, ifc in ((0, "ens1f0np0"), (1, "ens2f0np0"))]


def test_user_gid_index_is_the_one_checked(tmp_path, fake_env):
    env, _ = fake_env
    write_fake_sysfs(Path(env["FABRICGEN_SYSROOT"]), ["ens1f0np0", "ens2f0np0"], ofed=True)
    for i, ifc in enumerate(("ens1f0np0", "ens2f0np0")):
        _gids(env, f"mlx5_{i}", ifc, i, ["2001:db8::7", f"10.0.0.{i}"])
    script = _script(tmp_path, "mlnx_qos", nccl="nccl: {settings: {NCCL_IB_GID_INDEX: 5}}\n")
    assert 'GID_INDEX="5"' in script.read_text()
    assert _run(script, env).returncode == 0
    check = _run(script, env, "--check")
    assert check.returncode == 0, check.stdout
    assert "ok: mlx5_1 gid 5 = RoCE v2 10.0.0.1" in check.stdout
    _gids(env, "mlx5_1", "ens2f0np0", 1, ["10.0.0.1"])          # 5 now unused
    assert _not_ok(_run(script, env, "--check").stdout) == [
        f"differs: mlx5_1 gid 5: have 'no type {ZEROS}', want 'RoCE v2' on an IPv4-mapped address "
        "(NCCL_IB_GID_INDEX=5 in nccl.conf): give ens2f0np0 its rail IPv4 address, check show_gids"]


def test_missing_rdma_device_is_reported(tmp_path, fake_env):
    env, _ = fake_env
    script = _settled(tmp_path, env, "")
    shutil.rmtree(Path(env["FABRICGEN_SYSROOT"]) / "sys/class/infiniband/mlx5_1")
    check = _run(script, env, "--check")
    assert check.returncode == 1
    assert _not_ok(check.stdout) == [
        f"differs: mlx5_1 gid: cannot read ({env['FABRICGEN_SYSROOT']}/sys/class/infiniband/mlx5_1/ports/1/gids "
        "missing: no RDMA device mlx5_1 (driver not loaded, or wrong hosts.rails rdma name))"]
