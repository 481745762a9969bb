"""roce-qos.sh against the fake NIC tools and /sys of fake_nic.py (which behave like the real
mlnx_qos, dcb, cma_roce_tos, mlxconfig and scontrol, and the kernel's sysfs/configfs)."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
from fake_nic import (
    ROCE_V1,
    add_pause_frames,
    bump_hw_counters,
    firmware_reset,
    lock_fake_debugfs,
    qp_traffic_class,
    remove_rdma_device,
    reregister_rdma_device,
    reset_nic_qos,
    show_fake_sysfs,
    unlock_fake_debugfs,
    write_fake_gids,
    write_fake_nic_tools,
    write_fake_sysfs,
)

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
    - {{netdev: ens1f0np0, rdma: {rdma0}}}
    - {{netdev: ens2f0np0, rdma: {rdma1}}}
  nic_tooling: {tooling}
{nccl}"""

NICS = ["ens1f0np0", "ens2f0np0"]


def _script(tmp_path: Path, tooling: str, mode: str = "lossless", dscp: int = 26, nccl: str = "",
            rdma: tuple[str, str] = ("mlx5_0", "mlx5_1")) -> Path:
    text = INTENT.format(tooling=tooling, mode=mode, dscp=dscp, nccl=nccl, rdma0=rdma[0], rdma1=rdma[1])
    data, lines = parse_yaml(text, "qos.yaml")
    plan = compile_plan(validate_data(data, lines, "qos.yaml"))
    host = plan.hosts[0]
    script = tmp_path / "roce-qos.sh"
    script.write_text(render_host(plan, host)[f"hosts/{host.name}/roce-qos.sh"])
    script.chmod(0o755)
    return script


@pytest.fixture
def fake_env(tmp_path):
    if not Path("/usr/bin/python3").exists():
        pytest.skip("the fake NIC tools need /usr/bin/python3")
    bin_dir = write_fake_nic_tools(tmp_path / "bin")
    log = tmp_path / "calls.log"
    log.write_text("")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "FABRICGEN_SYSROOT": str(tmp_path / "root"),
           "FAKE_NIC_STATE": str(tmp_path / "state"), "FAKE_NIC_LOG": str(log), "LC_ALL": "C"}
    return env, log


def _root(env: dict) -> Path:
    return Path(env["FABRICGEN_SYSROOT"])


def _run(script: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    """As the unit and the playbook run it: /bin/sh (dash on Debian/Ubuntu). Afterwards the fake
    sysfs shows what the driver would print for what the run stored (show_fake_sysfs)."""
    r = subprocess.run(["/bin/sh", str(script), *args], env=env, capture_output=True, text=True, timeout=120)
    root = Path(env["FABRICGEN_SYSROOT"])
    if root.is_dir():
        show_fake_sysfs(root)
    return r


def _calls(log: Path) -> list[str]:
    """The calls that change something: reads (mlnx_qos -i X, dcb ... show, cma_roce_tos
    without -t, mlxconfig q) left out."""
    return [c for c in log.read_text().splitlines()
            if not (c.startswith("mlnx_qos -i ") and len(c.split()) == 3)
            and " show " not in c
            and not (c.startswith("cma_roce_tos ") and " -t " not in c)]


def _lines(out: str, *prefixes: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(prefixes)]


def _not_ok(out: str) -> list[str]:
    return _lines(out, "differs:", "error:")


def _no_configfs_group(env: dict) -> None:
    """cma_roce_tos removes the rdma_cm/<dev> group it created: nothing may be left."""
    rdma_cm = _root(env) / "sys/kernel/config/rdma_cm"
    assert rdma_cm.is_dir() and list(rdma_cm.iterdir()) == []


def test_mlnx_qos_mode_applies_once_and_check_reports(tmp_path, fake_env):
    env, log = fake_env
    write_fake_sysfs(_root(env), NICS, ofed=True)
    # DSCP 34 is not in priority 3 by default (34 >> 3 = 4): the map must be set. ToS = 34 << 2.
    script = _script(tmp_path, "mlnx_qos", dscp=34)
    sys_net = _root(env) / "sys/class/net"
    sys_ib = _root(env) / "sys/class/infiniband"

    before = _run(script, env, "--check")
    assert before.returncode == 1
    differs = _lines(before.stdout, "differs:")
    for line in ("differs: ens1f0np0 trust: have 'pcp', want 'dscp'",
                 "differs: ens2f0np0 pfc: have '0,0,0,0,0,0,0,0', want '0,0,0,1,0,0,0,0'",
                 "differs: mlx5_0 roce tos: have '0', want '136'",
                 "differs: mlx5_1 traffic class: have 'unset', want '136'"):
        assert line in differs
    assert before.stdout.splitlines()[-1] == f"summary: {len(differs)} setting(s) differ"
    assert _calls(log) == [], "--check must not change anything"
    assert (sys_net / "ens1f0np0/ecn/roce_np/enable/3").read_text() == "0\n"
    _no_configfs_group(env)

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
    for ifc, rdma in zip(NICS, ("mlx5_0", "mlx5_1"), strict=True):
        assert (sys_net / ifc / "ecn/roce_np/enable/3").read_text().strip() == "1"
        assert (sys_net / ifc / "ecn/roce_rp/enable/3").read_text().strip() == "1"
        assert (sys_net / ifc / "ecn/roce_np/enable/0").read_text().strip() == "0"
        assert (sys_net / ifc / "ecn/roce_np/cnp_dscp").read_text().strip() == "48"
        assert (sys_net / ifc / "ecn/roce_np/cnp_802p_prio").read_text().strip() == "6"
        assert (sys_ib / rdma / "tc/1/traffic_class").read_text() == "Global tclass=136\n"
    assert "changed: ens1f0np0 trust: 'pcp' -> 'dscp' (mlnx_qos -i ens1f0np0 --trust dscp)" in applied.stdout
    assert "changed: mlx5_0 traffic class: 'unset' -> '136'" in applied.stdout
    assert "changed: mlx5_1 roce tos: '0' -> '136' (cma_roce_tos -d mlx5_1 -t 136)" in applied.stdout
    assert applied.stdout.splitlines()[-1] == "summary: done"
    _no_configfs_group(env)

    log.write_text("")
    again = _run(script, env)
    assert again.returncode == 0, again.stdout
    assert _lines(again.stdout, "changed:", "differs:", "error:", "warning:") == []
    assert _calls(log) == []
    # the ToS is read back through the tool, though its configfs group is gone again
    assert "ok: mlx5_0 roce tos = 136" in again.stdout and "ok: mlx5_1 traffic class = 136" in again.stdout
    assert "cma_roce_tos -d mlx5_0" in log.read_text().splitlines()
    _no_configfs_group(env)
    check = _run(script, env, "--check")
    assert check.returncode == 0 and check.stdout.splitlines()[-1] == "summary: every setting in place"

    (sys_net / "ens2f0np0/ecn/roce_rp/enable/3").write_text("0\n")
    drift = _run(script, env, "--check")
    assert drift.returncode == 1
    assert _lines(drift.stdout, "differs:") == ["differs: ens2f0np0 ecn roce_rp priority 3: have '0', want '1'"]


def test_dcb_mode_on_an_inbox_driver(tmp_path, fake_env):
    """Inbox mlx5: rdma-core names the devices rocep<bus>s<slot>f<fn>, ECN is in debugfs, and
    there is no tc/ directory: a warning each time, never a difference."""
    env, log = fake_env
    rdma = ("rocep8s0f0", "rocep9s0f0")
    write_fake_sysfs(_root(env), NICS, ofed=False, rdma=list(rdma))
    assert not (_root(env) / "sys/class/infiniband/rocep8s0f0/tc").exists()
    script = _script(tmp_path, "dcb", rdma=rdma)
    check = _run(script, env, "--check")
    assert check.returncode == 1
    assert "differs: ens1f0np0 dscp 26 priority: have '', want '3'" in check.stdout
    applied = _run(script, env)
    assert applied.returncode == 0, applied.stdout
    assert _calls(log) == [
        "dcb app replace dev ens1f0np0 dscp-prio 26:3",
        "dcb app replace dev ens1f0np0 dscp-prio 48:6",
        "dcb pfc set dev ens1f0np0 prio-pfc all:off 3:on",
        "cma_roce_tos -d rocep8s0f0 -t 104",
        "dcb app replace dev ens2f0np0 dscp-prio 26:3",
        "dcb app replace dev ens2f0np0 dscp-prio 48:6",
        "dcb pfc set dev ens2f0np0 prio-pfc all:off 3:on",
        "cma_roce_tos -d rocep9s0f0 -t 104",
    ]
    cc = _root(env) / "sys/kernel/debug/mlx5/0000:08:00.0/cc_params/np_cnp_dscp"
    assert cc.read_text().strip() == "48"
    log.write_text("")
    again = _run(script, env, "--check")
    assert again.returncode == 0, again.stdout
    assert _calls(log) == []
    assert [line.split(":", 2)[1] for line in _lines(again.stdout, "warning:")] == [
        " rocep8s0f0 traffic class", " rocep9s0f0 traffic class"]
    assert "(inbox mlx5_ib: only the MLNX_OFED/DOCA driver has it)" in again.stdout
    assert "ok: rocep9s0f0 roce tos = 104" in again.stdout
    # what the inbox driver gives no way to read is named, and the summary does not claim it
    assert [line.split(":", 2)[1] for line in _lines(again.stdout, "unverified:")] == [
        " ens1f0np0 ecn", " ens1f0np0 cnp priority", " ens2f0np0 ecn", " ens2f0np0 cnp priority"]
    assert again.stdout.splitlines()[-1] == ("summary: every setting that can be read in place; not verified: "
                                             "ens1f0np0 ecn, ens1f0np0 cnp priority, ens2f0np0 ecn, "
                                             "ens2f0np0 cnp priority")
    # --health the same, and no drain for it
    health = _run(script, {**env, "FABRICGEN_COUNTER_INTERVAL": "0"}, "--health")
    assert health.returncode == 0 and "every setting in place" not in health.stdout, health.stdout
    assert "not verified: ens1f0np0 ecn" in health.stdout.splitlines()[-1]
    assert not [c for c in log.read_text().splitlines() if c.startswith("scontrol")]


def test_lossy_mode_turns_pfc_off(tmp_path, fake_env):
    env, log = fake_env
    write_fake_sysfs(_root(env), NICS, ofed=True)
    script = _script(tmp_path, "dcb", mode="lossy")
    assert _run(script, env).returncode == 0
    assert "dcb pfc set dev ens1f0np0 prio-pfc all:off" not in _calls(log)   # already off: nothing to do
    assert _run(script, env, "--check").returncode == 0


def test_missing_tools_and_interfaces_are_reported(tmp_path, fake_env):
    env, _ = fake_env
    script = _script(tmp_path, "mlnx_qos")
    # no NIC tools at all; configfs still behaves as the kernel's (the mkdir/rmdir stand-ins)
    kernel = write_fake_nic_tools(tmp_path / "kernel", without=("mlnx_qos", "dcb", "cma_roce_tos", "mlxconfig",
                                                                 "scontrol", "ibv_devinfo", "ethtool"))
    assert sorted(p.name for p in kernel.iterdir()) == ["mkdir", "rmdir"]
    empty = {**env, "PATH": f"{kernel}:/usr/bin:/bin", "FABRICGEN_SYSROOT": str(tmp_path / "nothing")}
    check = _run(script, empty, "--check")
    assert check.returncode == 1 and "differs: ens1f0np0: cannot read (no such network interface)" in check.stdout
    write_fake_sysfs(tmp_path / "nothing", NICS)
    applied = _run(script, empty)
    assert applied.returncode == 1 and "mlnx_qos not found" in applied.stdout
    # the ToS needs no mlnx-tools: configfs directly (issue 24, item 4)
    assert "changed: mlx5_0 roce tos: '0' -> '104' (configfs rdma_cm/mlx5_0/ports/1/default_roce_tos: 104)" \
        in applied.stdout
    assert applied.stderr == ""
    for bad in (["--bogus"], ["--check", "--health"], ["--interface"]):
        r = _run(script, env, *bad)
        assert r.returncode == 2 and r.stdout == "" and r.stderr.startswith("usage:"), bad


def test_script_is_posix_sh(tmp_path):
    script = _script(tmp_path, "mlnx_qos")
    for shell in ("dash", "bash"):
        path = shutil.which(shell)
        if path:
            args = [path, "--posix", "-n", str(script)] if shell == "bash" else [path, "-n", str(script)]
            assert subprocess.run(args, capture_output=True).returncode == 0
    assert os.access(script, os.X_OK)


@pytest.mark.parametrize("tooling", ["mlnx_qos", "dcb"])
def test_script_is_shellcheck_clean(tmp_path, tooling):
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck not installed (apt-get install -y shellcheck)")
    script = _script(tmp_path, tooling)
    r = subprocess.run(["shellcheck", "-s", "sh", str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


# --- cma_roce_tos: the configfs group is gone after every run -----------------------

def test_tos_read_back_through_cma_roce_tos_as_the_real_tool_allows(tmp_path, fake_env):
    env, log = fake_env
    root = _root(env)
    write_fake_sysfs(root, NICS)
    script = _script(tmp_path, "mlnx_qos")
    tool = [str(Path(env["PATH"].split(":")[0]) / "cma_roce_tos")]

    def tool_run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(tool + list(args), env=env, capture_output=True, text=True)

    # the fake behaves like mlnx-tools sbin/cma_roce_tos: prints the value, leaves nothing behind
    assert tool_run("-d", "mlx5_0").stdout == "0\n"
    assert tool_run("-d", "mlx5_0", "-t", "104").stdout == "104\n"
    _no_configfs_group(env)
    assert tool_run("-d", "mlx5_0").stdout == "104\n"
    r = tool_run("-d", "mlx5_7")
    assert (r.returncode, r.stdout) == (1, "Failed to create configuration for mlx5_7\n")
    r = tool_run("-d", "mlx5_0", "-p", "2")
    assert (r.returncode, r.stdout) == (1, "Device mlx5_0 port 2 does not exist\n")
    shutil.rmtree(root / "sys/kernel/config/rdma_cm/mlx5_0")      # the real script leaves it in that case

    assert _run(script, env).returncode == 0
    _no_configfs_group(env)
    log.write_text("")
    again = _run(script, env)
    assert "ok: mlx5_0 roce tos = 104" in again.stdout and "ok: mlx5_1 roce tos = 104" in again.stdout
    assert _calls(log) == []

    # a group someone keeps in place shows (and takes) the same value, and stays
    kept = root / "sys/kernel/config/rdma_cm/mlx5_1/ports/1"
    kept.mkdir(parents=True)
    (kept / "default_roce_tos").write_text("96\n")
    check = _run(script, env, "--check")
    assert _not_ok(check.stdout) == ["differs: mlx5_1 roce tos: have '96', want '104'"]
    assert _run(script, env).returncode == 0
    assert (kept / "default_roce_tos").read_text() == "104\n"

    # rdma_cm without configfs support: one line, and apply fails
    shutil.rmtree(root / "sys/kernel/config/rdma_cm")
    check = _run(script, env, "--check")
    assert "differs: mlx5_0 roce tos: cannot read (cma_roce_tos -d mlx5_0 failed: Module rdma_cm is not " \
           "loaded or does not support configfs)" in check.stdout
    assert _run(script, env).returncode == 1


@pytest.mark.parametrize(("shown", "want_ok", "have"), [
    ("Global tclass=104\n", True, "104"),                   # what the OFED driver shows once set
    ("", False, "unset"),                                   # driver loaded, nothing set yet
    ("Global tclass=96\n", False, "96"),
    ("src_ip=192.0.2.1,dst_ip=192.0.2.0/24,tclass=104\n", False, "unset"),   # a rule, no global class
])
def test_traffic_class_readings(tmp_path, fake_env, shown, want_ok, have):
    env, _ = fake_env
    write_fake_sysfs(_root(env), NICS)
    script = _script(tmp_path, "mlnx_qos")
    assert _run(script, env).returncode == 0
    (_root(env) / "sys/class/infiniband/mlx5_1/tc/1/traffic_class").write_text(shown)
    check = _run(script, env, "--check")
    if want_ok:
        assert check.returncode == 0 and "ok: mlx5_1 traffic class = 104" in check.stdout
    else:
        assert _not_ok(check.stdout) == [f"differs: mlx5_1 traffic class: have '{have}', want '104'"]


# --- --interface, --health, resets ----------------------------------------------------

def test_interface_limits_the_run_to_one_nic(tmp_path, fake_env):
    env, log = fake_env
    write_fake_sysfs(_root(env), NICS)
    script = _script(tmp_path, "mlnx_qos")
    one = _run(script, env, "--interface", "ens2f0np0")
    assert one.returncode == 0, one.stdout
    assert all(c.split()[2] in ("ens2f0np0", "mlx5_1") for c in log.read_text().splitlines()), log.read_text()
    assert all(" ens1f0np0 " not in line and " mlx5_0 " not in line for line in one.stdout.splitlines())
    check = _run(script, env, "--check")
    assert check.returncode == 1
    assert {line.split()[1] for line in _lines(check.stdout, "differs:")} == {"ens1f0np0", "mlx5_0"}
    assert _run(script, env, "--check", "--interface=ens2f0np0").returncode == 0

    log.write_text("")
    for args in (["--interface", "eth9"], ["--check", "--interface", "ens1f0np"], ["--interface", ""]):
        bad = _run(script, env, *args)
        assert bad.returncode == 2 and bad.stdout == "", args
        assert bad.stderr.splitlines() == [
            f"error: --interface '{args[-1]}' is not a rail NIC of gpu001 (rail NICs: ens1f0np0 ens2f0np0)"]
    assert log.read_text() == ""


def _settled(tmp_path: Path, env: dict, nccl: str = "") -> Path:
    """A rendered script whose NIC settings are already applied on the fake sysfs."""
    write_fake_sysfs(_root(env), NICS, ofed=True)
    script = _script(tmp_path, "mlnx_qos", nccl=nccl)
    applied = _run(script, env)
    assert applied.returncode == 0, applied.stdout
    return script


def test_qos_reset_is_detected_and_repaired_per_interface(tmp_path, fake_env):
    env, log = fake_env
    script = _settled(tmp_path, env)
    reset_nic_qos(_root(env), Path(env["FAKE_NIC_STATE"]), "ens2f0np0")
    check = _run(script, env, "--check")
    assert check.returncode == 1
    assert _lines(check.stdout, "differs:") == [
        "differs: ens2f0np0 trust: have 'pcp', want 'dscp'",
        "differs: ens2f0np0 pfc: have '0,0,0,0,0,0,0,0', want '0,0,0,1,0,0,0,0'",
        # mlnx_qos shows no DSCP map under PCP trust (the driver does not use one then)
        "differs: ens2f0np0 dscp 26 priority: have 'unused under pcp trust', want '3'",
        "differs: ens2f0np0 dscp 48 priority: have 'unused under pcp trust', want '6'",
        "differs: ens2f0np0 ecn roce_np priority 3: have '0', want '1'",
        "differs: ens2f0np0 ecn roce_rp priority 3: have '0', want '1'",
        "differs: ens2f0np0 cnp dscp: have '0', want '48'",
        "differs: ens2f0np0 cnp priority: have '0', want '6'",
        "differs: mlx5_1 roce tos: have '0', want '104'",
        "differs: mlx5_1 traffic class: have 'unset', want '104'",
    ]
    # what the udev-started unit runs: ExecStart=... --interface %I
    log.write_text("")
    repaired = _run(script, env, "--interface", "ens2f0np0")
    assert repaired.returncode == 0, repaired.stdout
    assert len(_lines(repaired.stdout, "changed:")) == 8
    assert _calls(log) == ["mlnx_qos -i ens2f0np0 --trust dscp", "mlnx_qos -i ens2f0np0 --pfc 0,0,0,1,0,0,0,0",
                           "cma_roce_tos -d mlx5_1 -t 104"]
    assert _run(script, env, "--check").returncode == 0


def _rendered(name: str) -> str:
    data, lines = parse_yaml(INTENT.format(tooling="mlnx_qos", mode="lossless", dscp=26, nccl="", rdma0="mlx5_0",
                                           rdma1="mlx5_1"), "qos.yaml")
    plan = compile_plan(validate_data(data, lines, "qos.yaml"))
    return render_host(plan, plan.hosts[0])[f"hosts/{plan.hosts[0].name}/{name}"]


def test_an_rdma_device_registering_again_has_the_rails_unit_set_the_tos_again(tmp_path, fake_env):
    """A simulated mlx5 reset recovered in place (mlx5e_suspend/resume, devlink reload): the RDMA
    device registers again and loses its rdma_cm ToS and traffic class, the netdev stays (no udev
    "net" add). The rendered udev rule restarts the rail's unit on that "infiniband" event
    (tests/integration/test_host_udev_rule.py runs it through udevadm); the unit's command sets
    the ToS again. The rule before this change had no infiniband line: nothing ran."""
    env, log = fake_env
    script = _settled(tmp_path, env)
    reregister_rdma_device(_root(env), Path(env["FAKE_NIC_STATE"]), "mlx5_1")
    assert _lines(_run(script, env, "--check").stdout, "differs:") == [
        "differs: mlx5_1 roce tos: have '0', want '104'",
        "differs: mlx5_1 traffic class: have 'unset', want '104'"]
    # the rule's line for mlx5_1 names the rail's instance; its ExecStart is what systemd runs
    rule = next(line for line in _rendered("81-fabricgen-roce-qos.rules").splitlines()
                if 'SUBSYSTEM=="infiniband"' in line and 'KERNEL=="mlx5_1"' in line)
    run = re.search(r'RUN\+="([^"]*)"', rule).group(1).split()
    assert run[:4] == ["/bin/systemctl", "--no-block", "restart", "fabricgen-roce-qos@ens2f0np0.service"]
    unit = _rendered("fabricgen-roce-qos@.service")
    exec_start = next(line.split("=", 1)[1] for line in unit.splitlines() if line.startswith("ExecStart="))
    argv = exec_start.replace("%I", "ens2f0np0").split()
    assert argv[1:] == ["--interface", "ens2f0np0"]
    log.write_text("")
    again = _run(script, env, *argv[1:])
    assert again.returncode == 0, again.stdout
    assert _calls(log) == ["cma_roce_tos -d mlx5_1 -t 104"]
    assert _kernel_tos(env, "mlx5_1") == {"1": 104}
    assert _run(script, env, "--check").returncode == 0


def test_reconcile_reapplies_only_what_drifted_and_says_what_in_one_line(tmp_path, fake_env):
    """--reconcile (the timer's service): silent and changing nothing when every setting is in place
    or only a rail port is wrong; else one "reconcile:" line naming what differed, then the apply."""
    env, log = fake_env
    script = _settled(tmp_path, env)
    log.write_text("")
    quiet = _run(script, env, "--reconcile")
    assert (quiet.returncode, quiet.stdout, _calls(log)) == (0, "", [])
    reregister_rdma_device(_root(env), Path(env["FAKE_NIC_STATE"]), "mlx5_0")
    fixed = _run(script, env, "--reconcile")
    assert fixed.returncode == 0, fixed.stdout
    out = fixed.stdout.splitlines()
    assert out[0] == "reconcile: live settings differ from the plan, re-applying: mlx5_0 roce tos, mlx5_0 traffic class"
    assert _lines(fixed.stdout, "reconcile:") == out[:1] and _lines(fixed.stdout, "ok:") == []
    assert out[-1] == "summary: done"
    assert _calls(log) == ["cma_roce_tos -d mlx5_0 -t 104"]
    assert _run(script, env, "--check").returncode == 0
    # a DOWN port is nothing an apply fixes: no line, no change
    write_fake_sysfs(_root(env), NICS, state={"ens2f0np0": "DOWN"})
    log.write_text("")
    down = _run(script, env, "--reconcile")
    assert (down.returncode, down.stdout, _calls(log)) == (0, "", [])
    # a setting that cannot be set fails the run (the unit shows failed), the error said once
    reregister_rdma_device(_root(env), Path(env["FAKE_NIC_STATE"]), "mlx5_1")
    remove_rdma_device(_root(env), "mlx5_1")
    broken = _run(script, env, "--reconcile")
    assert broken.returncode == 1, broken.stdout
    assert broken.stdout.splitlines()[0].startswith("reconcile: live settings differ from the plan, re-applying: mlx5_1")


def test_health_drains_only_when_something_differs(tmp_path, fake_env):
    env, log = fake_env
    script = _settled(tmp_path, env)
    node = subprocess.run(["hostname", "-s"], capture_output=True, text=True).stdout.strip()

    log.write_text("")
    healthy = _run(script, env, "--health")
    assert healthy.returncode == 0 and healthy.stdout.splitlines()[-1] == "summary: every setting in place"
    assert "scontrol" not in log.read_text()

    reset_nic_qos(_root(env), Path(env["FAKE_NIC_STATE"]), "ens1f0np0")
    drained = _run(script, env, "--health")
    assert drained.returncode == 1
    n = len(_lines(drained.stdout, "differs:"))
    assert n == 10 and drained.stdout.splitlines()[-1] == f"summary: {n} setting(s) differ"
    assert [c for c in log.read_text().splitlines() if c.startswith("scontrol")] == [
        f"scontrol update NodeName={node} State=DRAIN Reason=fabricgen-roce-qos: {n} setting(s) differ"]
    assert f'changed: slurm node {node}: State=DRAIN Reason="fabricgen-roce-qos: {n} setting(s) differ"' \
        in drained.stdout
    assert _calls(log) == [f"scontrol update NodeName={node} State=DRAIN Reason=fabricgen-roce-qos: "
                           f"{n} setting(s) differ"], "--health changes nothing on the NIC"

    # the drain above is --health's own, left as it is by a second run (test_health_drain_owner.py):
    # a node that Slurm cannot update is a node without it
    (Path(env["FAKE_NIC_STATE"]) / "scontrol-nodes.json").unlink()
    failing = _run(script, {**env, "FAKE_SCONTROL_FAIL": "1"}, "--health")
    assert failing.returncode == 1
    assert f"error: scontrol update NodeName={node} State=DRAIN failed: slurm_update error: Invalid node name " \
           "specified" in failing.stdout
    (Path(env["PATH"].split(":")[0]) / "scontrol").unlink()
    no_slurm = _run(script, env, "--health")
    assert no_slurm.returncode == 1 and "warning: scontrol not found: node not drained" in no_slurm.stdout


def test_apply_with_interface_waits_for_the_rdma_device_and_gid(tmp_path, fake_env):
    """udev starts the unit when the netdev appears; mlx5_ib registers the RDMA device and
    networkd gives the rail its address (and so its RoCEv2 GID) a little later."""
    env, _ = fake_env
    script = _settled(tmp_path, env)
    root = _root(env)
    reset_nic_qos(root, Path(env["FAKE_NIC_STATE"]), "ens2f0np0")
    remove_rdma_device(root, "mlx5_1")

    now = _run(script, {**env, "FABRICGEN_WAIT": "0"}, "--interface", "ens2f0np0")
    assert now.returncode == 1
    assert f"error: mlx5_1: {root}/sys/class/infiniband/mlx5_1 missing: no RDMA device mlx5_1" in now.stdout

    def driver_then_address():
        time.sleep(1.5)
        write_fake_sysfs(root, NICS, addresses={"ens2f0np0": []})     # mlx5_ib back, no address yet
        time.sleep(1.5)
        write_fake_gids(root, "mlx5_1", "ens2f0np0", 1, ["192.0.2.2"])

    later = threading.Thread(target=driver_then_address)
    later.start()
    try:
        waited = _run(script, {**env, "FABRICGEN_WAIT": "60"}, "--interface", "ens2f0np0")
    finally:
        later.join()
    assert waited.returncode == 0, waited.stdout
    assert "ok: mlx5_1 gid 3 = RoCE v2 192.0.2.2" in waited.stdout
    assert _run(script, env, "--check").returncode == 0


def test_runs_are_serialised_by_a_lock(tmp_path, fake_env):
    env, _ = fake_env
    script = _settled(tmp_path, env)
    lock_dir = _root(env) / "run/lock"
    lock_dir.mkdir(parents=True)
    with (lock_dir / "fabricgen-roce-qos.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        blocked = _run(script, {**env, "FABRICGEN_LOCK_WAIT": "1"})
        assert blocked.returncode == 1
        assert blocked.stdout.splitlines() == [
            f"error: another fabricgen-roce-qos run held {lock_dir}/fabricgen-roce-qos.lock for 1 s",
            "summary: 1 action(s) failed"]
    assert _run(script, env, "--check").returncode == 0


def test_fake_mlxconfig_keeps_a_link_type_change_pending_until_a_firmware_reset(tmp_path, fake_env):
    """The fake behaves as mstflint mlxconfig does (mlxconfig/mlxcfg_ui.cpp): a set value is
    the next boot's, the port stays InfiniBand until the firmware is reset."""
    env, log = fake_env
    root = _root(env)
    write_fake_sysfs(root, NICS, link_layer={"ens2f0np0": "InfiniBand"})
    tool = str(Path(env["PATH"].split(":")[0]) / "mlxconfig")

    def mlxconfig(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
        return subprocess.run([tool, *args], env=env, capture_output=True, text=True, input=stdin)

    def row(out: str) -> list[str]:
        return next(line for line in out.splitlines() if "LINK_TYPE_P1" in line).split()

    assert row(mlxconfig("-d", "0000:09:00.0", "q", "LINK_TYPE_P1").stdout) == ["LINK_TYPE_P1", "IB(1)"]
    assert row(mlxconfig("-d", "08:00.0", "q").stdout) == ["LINK_TYPE_P1", "ETH(2)"]
    assert mlxconfig("-d", "0000:09:00.0", "set", "LINK_TYPE_P1=2").returncode == 2   # no -y, no answer
    s = mlxconfig("-y", "-d", "0000:09:00.0", "set", "LINK_TYPE_P1=2")
    assert s.returncode == 0 and "-I- Please reboot machine to load new configurations." in s.stdout
    assert row(mlxconfig("-d", "0000:09:00.0", "q", "LINK_TYPE_P1").stdout) == ["LINK_TYPE_P1", "ETH(2)"]
    assert row(mlxconfig("-e", "-d", "0000:09:00.0", "q", "LINK_TYPE_P1").stdout) == [
        "*", "LINK_TYPE_P1", "IB(1)", "IB(1)", "ETH(2)"]
    link_layer = root / "sys/class/infiniband/mlx5_1/ports/1/link_layer"
    assert link_layer.read_text() == "InfiniBand\n"
    firmware_reset(root, Path(env["FAKE_NIC_STATE"]), "0000:09:00.0")
    assert link_layer.read_text() == "Ethernet\n"
    assert row(mlxconfig("-e", "-d", "0000:09:00.0", "q", "LINK_TYPE_P1").stdout) == [
        "*", "LINK_TYPE_P1", "IB(1)", "ETH(2)", "ETH(2)"]
    r = mlxconfig("-d", "0000:42:00.0", "q")
    assert (r.returncode, r.stdout.strip()) == (3, "-E- Failed to open the device")
    assert log.read_text().splitlines()[0] == "mlxconfig -d 0000:09:00.0 q LINK_TYPE_P1"


# --- the RDMA device and the GID NCCL will use ----------------------------------------
# GID tables: write_fake_gids lays them out as the kernel does on a ConnectX port (0/1
# link-local v1/v2, then a v1/v2 pair per address of the netdev in the order it got them).
# The expected strings below come from show_gids' own sample (10.110.0.33 is
# 0000:0000:0000:0000:0000:ffff:0a6e:0021), not from the script.
NEW_NCCL = "nccl: {min_version: 2.23.4}\n"
OLD_NCCL = "nccl: {min_version: 2.18.3}\n"


def _gids(env: dict, rdma: str, netdev: str, nic: int, addresses: list[str], **kw) -> None:
    write_fake_gids(_root(env), rdma, netdev, nic, addresses, **kw)


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
    write_fake_sysfs(_root(env), NICS, ofed=True)
    for i, ifc in enumerate(NICS):
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


def test_missing_rdma_device_is_reported_once(tmp_path, fake_env):
    env, _ = fake_env
    script = _settled(tmp_path, env, "")
    remove_rdma_device(_root(env), "mlx5_1")
    check = _run(script, env, "--check")
    assert check.returncode == 1
    assert _not_ok(check.stdout) == [
        f"differs: mlx5_1: cannot read ({env['FABRICGEN_SYSROOT']}/sys/class/infiniband/mlx5_1 missing: no RDMA "
        "device mlx5_1 (mlx5_ib not loaded, or the rail's rdma name in hosts.rails or the discovery file is wrong))"]
    _no_configfs_group(env)


def test_rdma_device_of_another_netdev_is_reported(tmp_path, fake_env):
    """The intent pairs ens1f0np0 with mlx5_0, but on this host the kernel put mlx5_1 on it
    (and the other way round): NCCL_IB_HCA would pick the wrong port for each rail."""
    env, _ = fake_env
    write_fake_sysfs(_root(env), NICS, rdma=["mlx5_1", "mlx5_0"])
    script = _script(tmp_path, "mlnx_qos")
    check = _run(script, env, "--check")
    assert [line for line in _not_ok(check.stdout) if "rdma device" in line] == [
        f"differs: {ifc} rdma device: have '{have}', want '{want}' (nccl.conf NCCL_IB_HCA names {want}: "
        "run fabricgen hosts discover and render again)"
        for ifc, have, want in (("ens1f0np0", "mlx5_1", "mlx5_0"), ("ens2f0np0", "mlx5_0", "mlx5_1"))]
    applied = _run(script, env)
    assert applied.returncode == 1 and "error: ens1f0np0 rdma device: have 'mlx5_1'" in applied.stdout


# --- issue 24: inbox hosts without mlnx-tools, debugfs under lockdown, one ToS ------------

INBOX_RDMA = ("rocep8s0f0", "rocep9s0f0")


@pytest.fixture
def inbox_env(tmp_path, fake_env):
    """An inbox host: upstream mlx5 (rdma-core names, debugfs cc_params, no tc/), iproute2's dcb,
    no mlnx-tools (no cma_roce_tos); configfs behaves as the kernel's."""
    env, log = fake_env
    bin_dir = Path(env["PATH"].split(":")[0])
    (bin_dir / "cma_roce_tos").unlink()
    write_fake_sysfs(_root(env), NICS, ofed=False, rdma=list(INBOX_RDMA))
    yield env, log
    unlock_fake_debugfs(_root(env))


def _kernel_tos(env: dict, rdma: str) -> dict:
    """The default ToS per port the kernel keeps in its cma_device (survives the configfs group)."""
    path = Path(env["FAKE_NIC_STATE"]) / f"cma_roce_tos-{rdma}.json"
    return json.loads(path.read_text())["tos"] if path.exists() else {}


def test_inbox_host_without_cma_roce_tos_sets_the_tos_through_configfs(tmp_path, inbox_env):
    env, log = inbox_env
    script = _script(tmp_path, "dcb", rdma=INBOX_RDMA)
    check = _run(script, env, "--check")
    assert check.returncode == 1
    assert "differs: rocep8s0f0 roce tos: have '0', want '104'" in check.stdout
    assert _kernel_tos(env, "rocep8s0f0") == {} and "configfs write" not in log.read_text()
    _no_configfs_group(env)

    applied = _run(script, env)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    for rdma in INBOX_RDMA:
        assert f"changed: {rdma} roce tos: '0' -> '104' (configfs rdma_cm/{rdma}/ports/1/default_roce_tos: 104)" \
            in applied.stdout
        assert _kernel_tos(env, rdma) == {"1": 104}
    assert [c for c in log.read_text().splitlines() if c.startswith("configfs")] == [
        f"configfs write {rdma} port 1 default_roce_tos=104" for rdma in INBOX_RDMA]
    assert applied.stdout.splitlines()[-1] == ("summary: done; not verified: ens1f0np0 ecn, ens1f0np0 cnp priority, "
                                               "ens2f0np0 ecn, ens2f0np0 cnp priority")
    _no_configfs_group(env)

    log.write_text("")
    again = _run(script, env)
    assert again.returncode == 0, again.stdout
    assert _lines(again.stdout, "changed:", "differs:", "error:") == []
    assert "ok: rocep9s0f0 roce tos = 104" in again.stdout
    assert _calls(log) == [], "a second run writes nothing"
    _no_configfs_group(env)
    assert _run(script, env, "--check").returncode == 0

    # a driver reload frees the cma_device: ToS 0 again, and repaired
    reset_nic_qos(_root(env), Path(env["FAKE_NIC_STATE"]), "ens2f0np0")
    assert "differs: rocep9s0f0 roce tos: have '0', want '104'" in _not_ok(_run(script, env, "--check").stdout)
    assert _run(script, env, "--interface", "ens2f0np0").returncode == 0
    assert _kernel_tos(env, "rocep9s0f0") == {"1": 104}


def test_configfs_group_kept_by_someone_else_stays_and_errors_are_one_line(tmp_path, inbox_env):
    env, log = inbox_env
    root = _root(env)
    script = _script(tmp_path, "dcb", rdma=INBOX_RDMA)
    kept = root / "sys/kernel/config/rdma_cm/rocep9s0f0"
    assert subprocess.run(["mkdir", str(kept)], env=env).returncode == 0       # the kernel fills it
    assert (kept / "ports/1/default_roce_tos").read_text() == "0\n"
    assert subprocess.run(["rmdir", str(kept / "ports/1")], env=env, capture_output=True).returncode == 1
    assert _run(script, env).returncode == 0
    assert (kept / "ports/1/default_roce_tos").read_text() == "104\n"             # written, left in place
    assert not (root / "sys/kernel/config/rdma_cm/rocep8s0f0").exists()

    # a name configfs does not know as an RDMA device: the kernel refuses the group (ENODEV)
    r = subprocess.run(["mkdir", str(root / "sys/kernel/config/rdma_cm/mlx5_7")], env=env, capture_output=True,
                       text=True)
    assert (r.returncode, r.stderr.rsplit(": ", 1)[-1]) == (1, "No such device\n")
    # rdma_cm not loaded (no configfs subsystem): one line, apply fails
    shutil.rmtree(kept)
    shutil.rmtree(root / "sys/kernel/config/rdma_cm")
    r = _run(script, env)
    assert r.returncode == 1 and r.stderr == ""
    assert f"error: rocep8s0f0 roce tos: {root}/sys/kernel/config/rdma_cm missing: load rdma_cm (modprobe " \
           "rdma_cm) and mount configfs on /sys/kernel/config" in r.stdout


@pytest.mark.parametrize("level", ["integrity", "confidentiality", "none"])
def test_inbox_ecn_under_a_refusing_debugfs_is_one_line_not_a_failure(tmp_path, fake_env, level):
    """Kernel lockdown refuses debugfs writes (EPERM); a read-only debugfs does too (level none
    here: the files refuse although /sys/kernel/security/lockdown says none)."""
    env, log = fake_env
    root = _root(env)
    write_fake_sysfs(root, NICS, ofed=False, rdma=list(INBOX_RDMA), lockdown=level)
    assert (root / "sys/kernel/security/lockdown").read_text().split() == [
        f"[{lv}]" if lv == level else lv for lv in ("none", "integrity", "confidentiality")]
    try:
        if not lock_fake_debugfs(root):
            pytest.skip("cannot make a file refuse root's writes here (chattr +i)")
        script = _script(tmp_path, "dcb", rdma=INBOX_RDMA)
        applied = _run(script, env)
        assert applied.returncode == 0, applied.stdout
        warnings = [line for line in _lines(applied.stdout, "warning:") if "cnp dscp" in line]
        why = (f"kernel lockdown ({level}) refuses mlx5 debugfs cc_params" if level != "none"
               else "debugfs refused the write (Operation not permitted)")
        assert warnings == [
            f"warning: {ifc} cnp dscp: {why}: the NIC marks CNPs as its firmware says; set it there with "
            f"mlxconfig -d {pci} set CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6 (then a firmware reset), "
            "or install DOCA/MLNX_OFED for the ecn/ sysfs"
            for ifc, pci in (("ens1f0np0", "0000:08:00.0"), ("ens2f0np0", "0000:09:00.0"))]
        assert _not_ok(applied.stdout) == []
        assert (root / "sys/kernel/debug/mlx5/0000:08:00.0/cc_params/np_cnp_dscp").read_text() == "0\n"
        check = _run(script, env, "--check")
        if level != "none":         # nothing to compare: --health must not drain for it, nor call it in place
            assert check.returncode == 0, check.stdout
            assert check.stdout.splitlines()[-1].startswith(
                "summary: every setting that can be read in place; not verified: ens1f0np0 cnp dscp, ens1f0np0 ecn"), \
                check.stdout
        else:                       # readable but not writable: the difference stays visible
            assert _not_ok(check.stdout) == [f"differs: {ifc} cnp dscp: have '0', want '48'" for ifc in NICS]
    finally:
        unlock_fake_debugfs(root)


def test_nccl_ib_tc_106_is_the_nic_tos_and_what_nccl_qps_send(tmp_path, fake_env):
    """NCCL_IB_TC: 106 (DSCP 26 + ECT(0)): cma_roce_tos and the OFED/DOCA global traffic class get
    106 too; the global class overrides every QP's (tclass_get_tclass_locked), so with 104 there
    NCCL's QPs would send 104, not the 106 NCCL asked for."""
    env, log = fake_env
    root = _root(env)
    write_fake_sysfs(root, NICS, ofed=True)
    script = _script(tmp_path, "mlnx_qos", nccl="nccl: {settings: {NCCL_IB_TC: 106}}\n")
    assert "\nTOS=106\n" in script.read_text()
    assert qp_traffic_class(root, "mlx5_0", 106) == 106         # nothing global set yet
    (root / "sys/class/infiniband/mlx5_0/tc/1/traffic_class").write_text("104\n")
    show_fake_sysfs(root)
    assert qp_traffic_class(root, "mlx5_0", 106) == 104         # what the old render left
    applied = _run(script, env)
    assert applied.returncode == 0, applied.stdout
    assert "changed: mlx5_0 traffic class: '104' -> '106'" in applied.stdout
    assert "cma_roce_tos -d mlx5_1 -t 106" in _calls(log)
    for rdma in ("mlx5_0", "mlx5_1"):
        assert (root / f"sys/class/infiniband/{rdma}/tc/1/traffic_class").read_text() == "Global tclass=106\n"
        assert qp_traffic_class(root, rdma, 106) == 106
    check = _run(script, env, "--check")
    assert check.returncode == 0 and "ok: mlx5_1 roce tos = 106" in check.stdout


def test_fake_mlnx_qos_and_dcb_share_the_drivers_dcb_state(tmp_path, fake_env):
    """As mlnx-tools' mlnx_qos and iproute2's dcb on mlx5 (en_dcbnl.c): no DSCP map printed under
    PCP trust; --trust dscp adds the 64 DSCP APP entries, --trust pcp removes them; the first
    APP entry dcb adds switches trust to DSCP."""
    env, _ = fake_env
    write_fake_sysfs(_root(env), NICS)
    bin_dir = Path(env["PATH"].split(":")[0])

    def tool(*args: str) -> str:
        r = subprocess.run([str(bin_dir / args[0]), *args[1:]], env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return r.stdout

    def app(ifc: str) -> list[str]:
        return tool("dcb", "-N", "app", "show", "dev", ifc, "dscp-prio").split()[1:]

    fresh = tool("mlnx_qos", "-i", "ens1f0np0")
    assert "Priority trust state: pcp" in fresh and "dscp2prio mapping:" not in fresh and "prio:3" not in fresh
    assert app("ens1f0np0") == []
    trusted = tool("mlnx_qos", "-i", "ens1f0np0", "--trust", "dscp")
    assert "Priority trust state: dscp" in trusted
    assert "\tprio:3 dscp:31,30,29,28,27,26,25,24,\n" in trusted
    assert app("ens1f0np0") == [f"{d}:{d >> 3}" for d in range(64)]
    tool("mlnx_qos", "-i", "ens1f0np0", "--dscp2prio", "set,34,3")
    assert "34:3" in app("ens1f0np0") and len(app("ens1f0np0")) == 64
    back = tool("mlnx_qos", "-i", "ens1f0np0", "--trust", "pcp")
    assert "Priority trust state: pcp" in back and "dscp2prio" not in back and app("ens1f0np0") == []

    tool("dcb", "app", "replace", "dev", "ens2f0np0", "dscp-prio", "26:3")
    assert app("ens2f0np0") == ["26:3"]
    shown = tool("mlnx_qos", "-i", "ens2f0np0")
    assert "Priority trust state: dscp" in shown and "\tprio:3 dscp:31,30,29,28,27,26,25,24,\n" in shown
    tool("dcb", "pfc", "set", "dev", "ens2f0np0", "prio-pfc", "all:off", "3:on")
    assert "\tenabled     0   0   0   1   0   0   0   0\n" in tool("mlnx_qos", "-i", "ens2f0np0")


# --- honest health: port state, rate, RoCE MTU, counters (issue 24, items 5 and 8) -------

def _drains(log: Path) -> list[str]:
    return [c for c in log.read_text().splitlines() if c.startswith("scontrol")]


def test_health_on_a_healthy_node_drains_nothing(tmp_path, fake_env):
    env, log = fake_env
    script = _settled(tmp_path, env)
    log.write_text("")
    healthy = _run(script, {**env, "SLURMD_NODENAME": "gpu-a01"}, "--health")
    assert healthy.returncode == 0, healthy.stdout
    for ifc in NICS:
        assert f"ok: {ifc} port = ACTIVE LinkUp" in healthy.stdout
        assert f"ok: {ifc} rate = 400 Gb/sec (4X NDR)" in healthy.stdout
        assert f"ok: {ifc} roce mtu = 4096" in healthy.stdout
    assert _lines(healthy.stdout, "differs:", "error:", "warning:") == []
    assert _drains(log) == []


def test_health_drains_slurmd_nodename_for_a_down_rail(tmp_path, fake_env):
    env, log = fake_env
    script = _settled(tmp_path, env)
    write_fake_sysfs(_root(env), NICS, state={"ens2f0np0": "DOWN"})     # carrier lost: DOWN / Disabled
    log.write_text("")
    down = _run(script, {**env, "SLURMD_NODENAME": "gpu-a01"}, "--health")
    assert down.returncode == 1, down.stdout
    assert _not_ok(down.stdout) == [
        "differs: ens2f0np0 port: have 'DOWN Disabled', want 'ACTIVE LinkUp' (mlx5_1 port 1: NCCL uses ACTIVE ports "
        "only; check the cable, the optic and the leaf port)"]
    assert "ok: ens1f0np0 port = ACTIVE LinkUp" in down.stdout
    assert _drains(log) == ["scontrol update NodeName=gpu-a01 State=DRAIN Reason=fabricgen-roce-qos: 1 rail port(s) "
                            "not as planned (ens2f0np0 port DOWN)"]
    # --check tells a bad port from a setting that differs: 3, nothing an apply could change
    check = _run(script, env, "--check")
    assert check.returncode == 3, check.stdout
    assert check.stdout.splitlines()[-1] == "summary: every setting in place, 1 rail port(s) not as planned"
    reset_nic_qos(_root(env), Path(env["FAKE_NIC_STATE"]), "ens1f0np0")    # now a setting differs as well: 1
    both = _run(script, env, "--check")
    assert both.returncode == 1, both.stdout
    assert both.stdout.splitlines()[-1].startswith("summary: ") and \
        both.stdout.splitlines()[-1].endswith(" setting(s) differ, 1 rail port(s) not as planned")
    # apply cannot fix a port: it says so and still succeeds (the link may not have trained yet)
    applied = _run(script, env)
    assert applied.returncode == 0 and "warning: ens2f0np0 port: have 'DOWN Disabled'" in applied.stdout


def test_health_drains_a_rail_trained_below_the_plan(tmp_path, fake_env):
    env, log = fake_env
    script = _settled(tmp_path, env)
    write_fake_sysfs(_root(env), NICS, rate_gbps={"ens1f0np0": 200})
    (_root(env) / "sys/class/infiniband/mlx5_0/ports/1/rate").write_text("200 Gb/sec (4X HDR)\n")
    log.write_text("")
    slow = _run(script, {**env, "SLURMD_NODENAME": "gpu-a01"}, "--health")
    assert slow.returncode == 1
    assert _not_ok(slow.stdout) == [
        "differs: ens1f0np0 rate: have '200 Gb/sec (4X HDR)', want '400 Gb/sec' (the plan's NIC speed: a cable, "
        "optic or lane trained lower, or the leaf port runs another speed)"]
    assert _drains(log) == ["scontrol update NodeName=gpu-a01 State=DRAIN Reason=fabricgen-roce-qos: 1 rail port(s) "
                            "not as planned (ens1f0np0 rate 200 Gb/sec, plan 400)"]
    # without SLURMD_NODENAME (run by hand) the node is the short host name, as before
    node = subprocess.run(["hostname", "-s"], capture_output=True, text=True).stdout.strip()
    log.write_text("")
    assert _run(script, env, "--health").returncode == 1
    assert _drains(log)[0].startswith(f"scontrol update NodeName={node} State=DRAIN")


@pytest.mark.parametrize("devinfo", [True, False], ids=["ibv_devinfo", "netdev-mtu"])
def test_roce_active_mtu_follows_the_netdev_mtu(tmp_path, fake_env, devinfo):
    env, _ = fake_env
    script = _settled(tmp_path, env)
    if not devinfo:
        (Path(env["PATH"].split(":")[0]) / "ibv_devinfo").unlink()
    (_root(env) / "sys/class/net/ens2f0np0/mtu").write_text("1500\n")     # netplan's MTU not applied
    check = _run(script, env, "--check")
    assert check.returncode == 3, "only the port is wrong: nothing for an apply to change"
    source = "ibv_devinfo -d mlx5_1 -i 1" if devinfo else "netdev MTU 1500"
    assert _not_ok(check.stdout) == [
        f"differs: ens2f0np0 roce mtu: have '1024' ({source}), want '4096' (netdev MTU 4200 in the plan: check the "
        "rail's MTU in netplan and ip link)"]
    assert "ok: ens1f0np0 roce mtu = 4096" in check.stdout


def test_health_does_not_wait_for_an_apply_in_progress(tmp_path, fake_env):
    env, log = fake_env
    script = _settled(tmp_path, env)
    lock_dir = _root(env) / "run/lock"
    lock_dir.mkdir(parents=True, exist_ok=True)
    reset_nic_qos(_root(env), Path(env["FAKE_NIC_STATE"]), "ens1f0np0")   # what the apply is repairing
    log.write_text("")
    with (lock_dir / "fabricgen-roce-qos.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        started = time.monotonic()
        busy = _run(script, {**env, "SLURMD_NODENAME": "gpu-a01"}, "--health")
        took = time.monotonic() - started
    assert busy.returncode == 0
    assert 4 <= took < 15, took                     # the 5 s wait, far below slurmd's 60 s
    assert busy.stdout.splitlines() == [
        f"warning: apply in progress: another fabricgen-roce-qos run held {lock_dir}/fabricgen-roce-qos.lock for "
        "5 s; not checked, node not drained", "summary: apply in progress"]
    assert _drains(log) == []
    assert _run(script, {**env, "SLURMD_NODENAME": "gpu-a01"}, "--health").returncode == 1   # lock free: checked


def _bump_during_run(env: dict, tmp_path: Path, body: str) -> dict:
    """PATH with an mlnx_qos wrapper that runs `body` (python, fake_nic in scope) on its first call:
    --health calls mlnx_qos between its two counter reads, so the counters climb in between."""
    wrap = tmp_path / "wrap"
    wrap.mkdir()
    fake = Path(env["PATH"].split(":")[0]) / "mlnx_qos"
    (wrap / "bump.py").write_text(
        f"import sys\nsys.path.insert(0, {str(Path(__file__).parents[2])!r})\nfrom pathlib import Path\n"
        f"from generator.lab.nic_tools import add_pause_frames, bump_hw_counters\nroot = Path({env['FABRICGEN_SYSROOT']!r})\n"
        f"state = Path({env['FAKE_NIC_STATE']!r})\n{body}\n")
    (wrap / "mlnx_qos").write_text(
        f"#!/bin/sh\nif [ ! -e {wrap}/done ]; then : > {wrap}/done; /usr/bin/python3 {wrap}/bump.py; fi\n"
        f'exec {fake} "$@"\n')
    (wrap / "mlnx_qos").chmod(0o755)
    return {**env, "PATH": f"{wrap}:{env['PATH']}"}


def test_health_warns_about_climbing_counters_without_draining(tmp_path, fake_env):
    env, log = fake_env
    script = _settled(tmp_path, env)
    bumped = _bump_during_run(env, tmp_path, "\n".join([
        "bump_hw_counters(root, 'mlx5_0', np_cnp_sent=500, rp_cnp_handled=40, out_of_sequence=3)",
        "bump_hw_counters(root, 'mlx5_1', packet_seq_err=400)",
        "add_pause_frames(state, 'ens2f0np0', 3, tx=5000)"]))
    log.write_text("")
    run = _run(script, {**bumped, "SLURMD_NODENAME": "gpu-a01", "FABRICGEN_COUNTER_INTERVAL": "2"}, "--health")
    assert run.returncode == 0, run.stdout
    assert _drains(log) == []
    counters = [line for line in run.stdout.splitlines() if "+" in line]
    # the interval is 2 s, or the time the checks took when they took longer (a loaded machine)
    t = int(counters[0].split(" in ")[1].split()[0])
    assert 2 <= t < 10
    assert counters == [
        f"ok: ens1f0np0 np_cnp_sent: +500 in {t} s (DCQCN congestion control at work)",
        f"ok: ens1f0np0 rp_cnp_handled: +40 in {t} s (DCQCN congestion control at work)",
        f"ok: ens1f0np0 out_of_sequence: +3 in {t} s",
        f"warning: ens2f0np0 packet_seq_err: +400 in {t} s ({400 / t:.0f}/s, over 10/s): RoCE packets lost or "
        "reordered (go-back-N retransmissions); check the switch counters of this rail",
        f"warning: ens2f0np0 tx_prio3_pause: +5000 in {t} s ({5000 / t:.0f}/s, over 100/s): this host cannot take "
        "traffic at line rate (PCIe, memory)"]
    assert run.stdout.splitlines()[-1] == "summary: every setting in place"


def test_counters_mode_prints_what_verify_reads(tmp_path, fake_env):
    env, log = fake_env
    script = _settled(tmp_path, env)
    bump_hw_counters(_root(env), "mlx5_1", np_cnp_sent=7)
    add_pause_frames(Path(env["FAKE_NIC_STATE"]), "ens1f0np0", 3, rx=2)
    log.write_text("")
    out = _run(script, env, "--counters")
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert lines[0].startswith("at: ") and lines[0][4:].isdigit() and lines[-1] == "summary: counters read"
    assert lines[1:-1] == [f"counter: {ifc} {name} {value}" for ifc, values in (
        ("ens1f0np0", (0, 0, 0, 0, 0, 2, 0)), ("ens2f0np0", (7, 0, 0, 0, 0, 0, 0)))
        for name, value in zip(("np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets", "out_of_sequence",
                                "packet_seq_err", "rx_prio3_pause", "tx_prio3_pause"), values, strict=True)]
    assert log.read_text() == "", "--counters changes nothing and calls no tool that does"


# --- wedged NIC tools: every call bounded by timeout(1) (issue 24, second pass) --------------

# what the first line of each tool's real answer looks like, printed before the tool hangs (a
# firmware command that never completes), so a half answer must not be read as the state
_FIRST_LINE = {"mlnx_qos": "DCBX mode: OS controlled", "cma_roce_tos": "104",
               "ibv_devinfo": "hca_id:\tmlx5_0", "ethtool": "NIC statistics:"}


def _wedged(env: dict, tmp_path: Path, *tools: str) -> dict:
    """PATH with TOOLS that print their first line and then never return."""
    wedge = tmp_path / "wedged"
    wedge.mkdir(exist_ok=True)
    for tool in tools:
        (wedge / tool).write_text(f"#!/bin/sh\necho '{_FIRST_LINE[tool]}'\nexec sleep 600\n")
        (wedge / tool).chmod(0o755)
    return {**env, "PATH": f"{wedge}:{env['PATH']}", "FABRICGEN_TOOL_TIMEOUT": "1",
            "FABRICGEN_COUNTER_INTERVAL": "0", "SLURMD_NODENAME": "gpu-a01"}


def _timed_out(tool: str) -> str:
    return f"{tool} timed out after 1 s (FABRICGEN_TOOL_TIMEOUT): the NIC or its driver does not answer"


@pytest.mark.parametrize("tool, lines", [
    ("mlnx_qos", [f"differs: {ifc} qos: cannot read (mlnx_qos -i {ifc} failed: {_timed_out('mlnx_qos')})"
                  for ifc in NICS]),
    ("cma_roce_tos", [f"differs: {rdma} roce tos: cannot read (cma_roce_tos -d {rdma} failed: "
                      f"{_timed_out('cma_roce_tos')})" for rdma in ("mlx5_0", "mlx5_1")]),
    ("ibv_devinfo", [f"differs: {ifc} roce mtu: cannot read ({_timed_out('ibv_devinfo')})" for ifc in NICS]),
])
def test_health_fails_on_a_wedged_nic_tool(tmp_path, fake_env, tool, lines):
    """slurmd kills HealthCheckProgram after 60 s: a tool that hangs is one line per call and a
    drain, never a health check that hangs (the subprocess bound of _run would fail this test)."""
    env, log = fake_env
    script = _settled(tmp_path, env)
    log.write_text("")
    health = _run(script, _wedged(env, tmp_path, tool), "--health")
    assert health.returncode == 1, health.stdout
    assert _not_ok(health.stdout) == lines
    assert _drains(log) == [f"scontrol update NodeName=gpu-a01 State=DRAIN Reason=fabricgen-roce-qos: "
                            f"{len(lines)} setting(s) differ"]


def test_a_wedged_ethtool_fails_health_and_warns_in_counters_mode(tmp_path, fake_env):
    env, log = fake_env
    script = _settled(tmp_path, env)
    wedged = {**_wedged(env, tmp_path, "ethtool"), "FABRICGEN_COUNTER_INTERVAL": "1"}
    log.write_text("")
    health = _run(script, wedged, "--health")
    assert health.returncode == 1, health.stdout
    # the first read reports it; the second read's timeouts are the same tools again
    assert _not_ok(health.stdout) == [f"differs: {ifc} pause counters: cannot read ({_timed_out('ethtool')})"
                                      for ifc in NICS] * 2
    assert len(_drains(log)) == 1
    counters = _run(script, wedged, "--counters")
    assert counters.returncode == 0, counters.stdout
    assert _lines(counters.stdout, "warning:") == [f"warning: {ifc} {_timed_out('ethtool')}" for ifc in NICS]
    # verify still gets the RDMA hw_counters, read from sysfs
    assert [line.split()[2] for line in _lines(counters.stdout, "counter: ens1f0np0")] == [
        "np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets", "out_of_sequence", "packet_seq_err"]


def test_health_stops_starting_nic_tools_when_its_budget_is_spent(tmp_path, fake_env):
    """Every tool wedged, 2 s per call, 3 s for all: the calls after the budget are not run, so the
    whole check stays bounded however many rails and tools a host has."""
    env, log = fake_env
    script = _settled(tmp_path, env)
    wedged = {**_wedged(env, tmp_path, *_FIRST_LINE), "FABRICGEN_TOOL_TIMEOUT": "2", "FABRICGEN_HEALTH_TOOLS": "3"}
    log.write_text("")
    health = _run(script, wedged, "--health")
    assert health.returncode == 1, health.stdout
    bad = _not_ok(health.stdout)
    timed_out = [line for line in bad if "timed out after " in line]
    not_run = [line for line in bad if "not run: --health spent its 3 s for NIC tools (slurmd kills it after 60 s)"
               in line]
    # qos, roce tos and roce mtu of each rail: every one cannot be read, the first ones timed out
    assert len(bad) == len(timed_out) + len(not_run) == 6, bad
    assert timed_out and not_run, bad
    assert all(": cannot read (" in line for line in bad)
    assert len(_drains(log)) == 1, "the drain is made all the same (scontrol has its own bound)"


# hosts.nic_firmware_min, placed under hosts: by the template's last slot
FW_MIN = '  nic_firmware_min: "28.40.1000"\n'


def test_nic_firmware_below_the_intents_minimum_is_reported_and_drains(tmp_path, fake_env):
    """sysfs fw_ver against hosts.nic_firmware_min, field by field (28.39.1002 < 28.40.1000 <
    28.100.0): nothing an apply can change, so --check exits 3, --health drains, --reconcile is
    silent. The script before this change read no firmware."""
    env, log = fake_env
    write_fake_sysfs(_root(env), NICS, fw_ver={"ens1f0np0": "28.100.0", "ens2f0np0": "28.39.1002"})
    script = _script(tmp_path, "mlnx_qos", nccl=FW_MIN)
    assert _run(script, env).returncode == 0
    check = _run(script, env, "--check")
    assert check.returncode == 3, check.stdout
    assert "ok: ens1f0np0 firmware = 28.100.0 (at least 28.40.1000)" in check.stdout
    assert _not_ok(check.stdout) == [
        "differs: ens2f0np0 firmware: have '28.39.1002', want at least '28.40.1000' (hosts.nic_firmware_min: "
        "update the NIC firmware with mlxfwmanager or mstflint)"]
    assert check.stdout.splitlines()[-1] == "summary: every setting in place, 1 GPU-NIC path check(s) failed"
    log.write_text("")
    health = _run(script, {**env, "SLURMD_NODENAME": "gpu-a01", "FABRICGEN_COUNTER_INTERVAL": "0"}, "--health")
    assert health.returncode == 1
    assert _drains(log) == ["scontrol update NodeName=gpu-a01 State=DRAIN Reason=fabricgen-roce-qos: 1 GPU-NIC path "
                            "check(s) failed (ens2f0np0 firmware 28.39.1002, min 28.40.1000)"]
    log.write_text("")
    quiet = _run(script, env, "--reconcile")
    assert (quiet.returncode, quiet.stdout, _calls(log)) == (0, "", [])
    # without the key nothing is read
    plain = _run(_script(tmp_path, "mlnx_qos"), env, "--check")
    assert plain.returncode == 0 and " firmware" not in plain.stdout


@pytest.mark.parametrize(("link", "what", "have"), [((8, "32.0 GT/s PCIe"), "width", "8"),
                                                    ((16, "16.0 GT/s PCIe"), "speed", "16.0 GT/s PCIe")])
def test_a_pcie_link_trained_below_what_nic_and_slot_can_do_is_reported(tmp_path, fake_env, link, what, have):
    env, _ = fake_env
    write_fake_sysfs(_root(env), NICS, pcie={"ens2f0np0": link})
    script = _script(tmp_path, "mlnx_qos")
    assert _run(script, env).returncode == 0
    check = _run(script, env, "--check")
    assert check.returncode == 3, check.stdout
    want = "16" if what == "width" else "32.0 GT/s PCIe"
    assert _not_ok(check.stdout) == [
        f"differs: ens2f0np0 pcie {what}: have '{have}', the NIC and its slot can do '{want}' (the link trained lower: "
        "reseat the NIC, check the riser, the slot's BIOS setting and lspci -vv LnkSta)"]
    assert "ok: ens1f0np0 pcie width = 16" in check.stdout and "ok: ens1f0np0 pcie speed = 32.0 GT/s PCIe" in \
        check.stdout


def test_gpudirect_needs_peermem_or_the_open_modules_dma_buf(tmp_path, fake_env):
    env, _ = fake_env
    root = _root(env)
    write_fake_sysfs(root, NICS, gpudirect="dmabuf")       # open kernel module, no peermem; this kernel >= 5.12
    script = _script(tmp_path, "mlnx_qos")
    assert _run(script, env).returncode == 0
    check = _run(script, env, "--check")
    assert check.returncode == 0 and "ok: gpudirect = dma-buf (NVIDIA open kernel module, Linux " in check.stdout
    # the proprietary module without nvidia-peermem: no GPUDirect RDMA path
    shutil.rmtree(root / "proc")
    write_fake_sysfs(root, NICS, gpudirect="nvidia-peermem")
    shutil.rmtree(root / "sys/module/nvidia_peermem")
    check = _run(script, env, "--check")
    assert check.returncode == 3, check.stdout
    assert _not_ok(check.stdout) == [
        "differs: gpudirect: neither nvidia-peermem loaded nor DMA-BUF (NVIDIA's open kernel module on Linux >= 5.12): "
        "modprobe nvidia-peermem, or set deploy.hosts.require_gpudirect: false"]


def test_acs_on_the_pcie_switch_port_above_a_rail_nic_is_reported(tmp_path, fake_env):
    """ACS Control of the switch downstream port above each NIC, read from its sysfs config space:
    ReqRedir/CmplRedir/SrcValid on sends GPU-NIC P2P through the root complex. Root and upstream
    ports are not read; a NIC under no switch (the other fake NICs) has nothing to check."""
    env, _ = fake_env
    write_fake_sysfs(_root(env), NICS, switch_acs={"ens1f0np0": 0x0000, "ens2f0np0": 0x001d})
    script = _script(tmp_path, "mlnx_qos")
    assert _run(script, env).returncode == 0
    check = _run(script, env, "--check")
    assert check.returncode == 3, check.stdout
    assert "ok: ens1f0np0 acs = off (1 PCIe switch port(s) above it)" in check.stdout
    assert _not_ok(check.stdout) == [
        "differs: ens2f0np0 acs: have ACSCtl SrcValid+ ReqRedir+ CmplRedir+ on PCIe switch port 0000:04:00.0 above "
        "ens2f0np0, want them off (P2P goes through the root complex: disable ACS in the BIOS, or setpci -s "
        "0000:04:00.0 ECAP_ACS+0x6.w=0000 until the next boot)"]
    # only UpstreamFwd (0x10) on: no redirect, nothing to report
    write_fake_sysfs(_root(env), NICS, switch_acs={"ens1f0np0": 0x0000, "ens2f0np0": 0x0010})
    assert _run(script, env, "--check").returncode == 0
