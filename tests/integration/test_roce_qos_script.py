"""roce-qos.sh against fake mlnx_qos / dcb / cma_roce_tos and a fake /sys tree."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from netns import write_fake_nic_tools, write_fake_sysfs

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
"""


def _script(tmp_path: Path, tooling: str, mode: str = "lossless", dscp: int = 26) -> Path:
    data, lines = parse_yaml(INTENT.format(tooling=tooling, mode=mode, dscp=dscp), "qos.yaml")
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
