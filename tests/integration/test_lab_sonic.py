"""A simulated SONiC SN5600 behaves like the real one (DEVICE_STATE.md): it boots from the factory
CONFIG_DB, applies patches through GCU's checks, replaces as GCU does, reloads files, and stops
taking logins while eth0 lacks its address. Every check goes over a real SSH socket (netmiko)."""

from __future__ import annotations

import json

import paramiko
import pytest
from netmiko import ConnectHandler

from generator.lab.control import LabDevice, set_faults

pytestmark = pytest.mark.integration

SW1 = LabDevice("sw1", "sonic", "202411", mgmt_address="10.30.0.11/24", mgmt_gateway="10.30.0.1")
SW2 = LabDevice("sw2", "sonic", "202411", mgmt_address="10.30.0.12/24", mgmt_gateway="10.30.0.1")
PROMPT = r"[$#]\s*$"


class Shell:
    """An operator's SSH session (netmiko linux, as the SONiC driver uses)."""

    def __init__(self, lab, name: str):
        self.lab = lab
        self.conn = ConnectHandler(device_type="linux", host="127.0.0.1", port=lab.port(name), username="admin",
                                   password=lab.password, ssh_strict=True, system_host_keys=False,
                                   alt_host_keys=True, alt_key_file=str(lab.known_hosts), allow_agent=False,
                                   use_keys=False, fast_cli=True, conn_timeout=5)

    def run(self, command: str) -> str:
        return self.conn.send_command(command, expect_string=PROMPT, read_timeout=15)

    def put(self, path: str, data) -> None:
        sftp = self.conn.remote_conn.get_transport().open_sftp_client()
        try:
            with sftp.open(path, "w") as fh:
                fh.write(data if isinstance(data, str) else json.dumps(data))
        finally:
            sftp.close()

    def running(self) -> dict:
        """CONFIG_DB (what `show runningconfiguration all` prints before it adds "bgpraw")."""
        return json.loads(self.run("sonic-cfggen -d --print-data"))

    def close(self) -> None:
        self.conn.disconnect()


def exec_status(lab, name: str, command: str) -> tuple[int, str]:
    """Run one command on an exec channel: its exit status and output."""
    client = paramiko.SSHClient()
    client.load_host_keys(str(lab.known_hosts))
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    client.connect("127.0.0.1", lab.port(name), "admin", lab.password, allow_agent=False, look_for_keys=False,
                   timeout=5, banner_timeout=5, auth_timeout=5)
    try:
        _, stdout, _ = client.exec_command(command)
        text = stdout.read().decode()
        return stdout.channel.recv_exit_status(), text
    finally:
        client.close()


def refused(lab, name: str) -> None:
    with pytest.raises((paramiko.SSHException, EOFError, ConnectionError, OSError)):
        exec_status(lab, name, "true")


@pytest.fixture
def lab(lab_start):
    return lab_start([SW1, SW2], username="admin")


@pytest.fixture
def shell(lab):
    session = Shell(lab, "sw1")
    yield session
    session.close()


def test_factory_config_db(lab, shell):
    running = shell.running()
    meta = running["DEVICE_METADATA"]["localhost"]
    assert meta["hostname"] == "sw1" and meta["hwsku"] == "ACS-SN5600"
    assert meta["platform"] == "x86_64-nvidia_sn5600-r0" and meta["docker_routing_config_mode"] == "separated"
    assert running["MGMT_INTERFACE"] == {"eth0|10.30.0.11/24": {"gwaddr": "10.30.0.1"}}
    assert running["MGMT_PORT"]["eth0"]["admin_status"] == "up"
    assert {"FEATURE", "FLEX_COUNTER_TABLE", "VERSIONS", "NTP"} <= set(running)
    assert json.loads(shell.run("cat /etc/sonic/config_db.json")) == running   # saved startup = running
    assert shell.run("sonic-cfggen -d -v DEVICE_METADATA.localhost.hwsku").strip() == "ACS-SN5600"
    assert shell.run("sonic-cfggen -d -v DEVICE_METADATA.localhost.platform").strip() == meta["platform"]
    mac = shell.run("sonic-cfggen -d -v DEVICE_METADATA.localhost.mac").strip()
    assert mac == meta["mac"]
    assert json.loads(shell.run("sonic-cfggen -d --print-data")) == running
    status, other = exec_status(lab, "sw2", "sonic-cfggen -d -v DEVICE_METADATA.localhost.mac")
    assert status == 0 and other.strip() not in ("", mac), "each switch has its own base MAC"


def test_show_runningconfiguration_all_adds_bgpraw_from_202311(lab, shell, lab_start):
    # sonic-utilities show/main.py: sonic-cfggen -d --print-data, then output['bgpraw'] = FRR's
    # `show running-config` as one string (single-ASIC), json.dumps(indent=4)
    shown = json.loads(shell.run("show runningconfiguration all"))
    raw = shown.pop("bgpraw")
    assert isinstance(raw, str) and raw.startswith("Building configuration...") and "hostname sw1" in raw
    assert raw.rstrip().endswith("end") and raw == shell.run('vtysh -c "show running-config"') + "\n"
    assert shown == shell.running(), "the rest is config_db, table by table"
    assert list(json.loads(shell.run("show runningconfiguration all")))[-1] == "bgpraw"
    older = lab_start([LabDevice("old", "sonic", "202305")], username="admin", subdir="old")
    session = Shell(older, "old")
    try:
        assert "bgpraw" not in json.loads(session.run("show runningconfiguration all"))
    finally:
        session.close()


def test_apply_patch_allowed_and_refused(lab, shell):
    before = shell.running()
    shell.put("/tmp/ok.json", [{"op": "add", "path": "/PORT/Ethernet0/description", "value": "to-gpu01"}])
    out = shell.run("sudo config apply-patch /tmp/ok.json")
    assert "Patch applied successfully." in out
    assert shell.running()["PORT"]["Ethernet0"]["description"] == "to-gpu01"

    # a provisioned buffer layout, loaded with config reload (no GCU checks), then a pool resize
    pools = {"ingress_lossless_pool": {"size": "60817392", "type": "ingress", "mode": "dynamic", "xoff": "4194304"},
             "egress_lossless_pool": {"size": "60817392", "type": "egress", "mode": "dynamic"},
             "egress_lossy_pool": {"size": "50270208", "type": "egress", "mode": "dynamic"}}
    shell.put("/tmp/buffers.json", dict(shell.running(), BUFFER_POOL=pools))
    assert "Running command:" in shell.run("sudo config reload -y -f /tmp/buffers.json")
    loaded = shell.running()
    shell.put("/tmp/pool.json", [{"op": "replace", "path": "/BUFFER_POOL/egress_lossless_pool/size", "value": "1024"}])
    status, out = exec_status(lab, "sw1", "sudo config apply-patch /tmp/pool.json")
    assert status == 2 and "Failed to apply patch due to: Modification of BUFFER_POOL table is illegal" in out
    assert "\nError: " in out
    assert shell.running() == loaded
    shell.put("/tmp/pool.json", [{"op": "replace", "path": "/BUFFER_POOL/egress_lossy_pool/size", "value": "50000000"}])
    assert "Patch applied successfully." in shell.run("sudo config apply-patch /tmp/pool.json")

    shell.put("/tmp/sku.json", [{"op": "replace", "path": "/DEVICE_METADATA/localhost/hwsku",
                                 "value": "Mellanox-SN5600-O128"}])
    status, out = exec_status(lab, "sw1", "sudo config apply-patch /tmp/sku.json")
    assert status == 2 and "DEVICE_METADATA field hwsku" in out
    assert shell.running()["DEVICE_METADATA"] == before["DEVICE_METADATA"]


def test_partial_replace_cuts_management_until_rollback(lab, shell):
    assert "Checkpoint created successfully." in shell.run("sudo config checkpoint before")
    running = shell.running()
    shell.put("/tmp/partial.json", {t: running[t] for t in ("DEVICE_METADATA", "PORT")})
    assert "Config replaced successfully." in shell.run("sudo config replace /tmp/partial.json")
    assert "MGMT_INTERFACE" not in shell.running()   # this session still works
    refused(lab, "sw1")
    assert "sw1: replace /tmp/partial.json cuts management" in (lab.directory / "lab.log").read_text()
    assert "Config rolled back successfully." in shell.run("sudo config rollback before")
    assert shell.running() == running
    assert exec_status(lab, "sw1", "hostname") == (0, "sw1\n")


def test_reload_save_and_startup(lab, shell):
    running = shell.running()
    edited = json.loads(json.dumps(running))
    edited["PORT"]["Ethernet0"]["mtu"] = "9216"
    del edited["FEATURE"]                     # init_cfg.json brings it back
    del edited["VERSIONS"]                    # db_migrator writes it
    shell.put("/tmp/edited.json", edited)
    out = shell.run("sudo config reload -y -f /tmp/edited.json")
    assert "sonic-cfggen -j /etc/sonic/init_cfg.json -j /tmp/edited.json --write-to-db" in out
    after = shell.running()
    assert after["PORT"]["Ethernet0"]["mtu"] == "9216"
    assert after["FEATURE"] == running["FEATURE"] and after["VERSIONS"] == running["VERSIONS"]
    assert json.loads(shell.run("cat /etc/sonic/config_db.json")) == running    # not saved yet
    shell.run("sudo config reload -y -f")
    assert shell.running() == running                                           # the saved startup
    shell.run("sudo config reload -y -f /tmp/edited.json")
    shell.run("sudo config save -y")
    assert json.loads(shell.run("cat /etc/sonic/config_db.json")) == after

    # 202411: a file without platform/mac gets them from the hardware (load_sysinfo_if_missing)
    shell.put("/tmp/bare.json", {"DEVICE_METADATA": {"localhost": {"hwsku": "ACS-SN5600", "hostname": "sw1"}},
                                 "MGMT_INTERFACE": running["MGMT_INTERFACE"]})
    out = shell.run("sudo config reload -y -f /tmp/bare.json")
    assert "sonic-cfggen -H -k ACS-SN5600 --write-to-db" in out
    bare = shell.running()
    assert bare["DEVICE_METADATA"]["localhost"]["mac"] == running["DEVICE_METADATA"]["localhost"]["mac"]
    assert bare["PORT"] == running["PORT"] and bare["FEATURE"] == running["FEATURE"]


ARM = "sudo systemd-run --unit fabricgen-confirm --on-active={s}s --description 'fabricgen commit-confirm: {c}' {c}"


def show(shell, *units: str) -> dict[str, dict[str, str]]:
    """systemctl show: Key=Value lines, a blank line between units."""
    out = shell.run(f"systemctl show {' '.join(units)} -p Id,Description,LoadState,ActiveState,SubState,Result")
    blocks = [dict(line.split("=", 1) for line in b.splitlines() if "=" in line) for b in out.strip().split("\n\n")]
    return {b["Id"]: b for b in blocks}


def test_factory_image_has_no_fabricgen_tool(lab):
    status, out = exec_status(lab, "sw1", "sudo fabricgen-confirm status")
    assert status == 127 and "fabricgen-confirm: command not found" in out


def test_systemd_timer_reloads_the_saved_startup(lab, shell, lab_wait):
    startup = shell.running()
    candidate = json.loads(json.dumps(startup))
    candidate["DEVICE_METADATA"]["localhost"]["hwsku"] = "Mellanox-SN5600-O128"
    candidate["MGMT_INTERFACE"] = {"eth0|10.30.0.50/24": {"gwaddr": "10.30.0.1"}}   # and a new address
    shell.put("/tmp/day0.json", candidate)
    out = shell.run(ARM.format(s=3, c="config reload -y -f"))
    assert out.splitlines() == ["Running timer as unit: fabricgen-confirm.timer",
                                "Will run service as unit: fabricgen-confirm.service"]
    units = show(shell, "fabricgen-confirm.timer", "fabricgen-confirm.service")
    timer, service = units["fabricgen-confirm.timer"], units["fabricgen-confirm.service"]
    assert (timer["ActiveState"], timer["SubState"]) == ("active", "waiting")
    assert timer["Description"] == "fabricgen commit-confirm: config reload -y -f"
    assert (service["LoadState"], service["ActiveState"]) == ("loaded", "inactive")
    # detached, as the deploy does it: systemd-run returns at once, the reload runs under PID 1
    assert shell.run("sudo systemd-run --unit fabricgen-reload config reload -y -f /tmp/day0.json") == (
        "Running as unit: fabricgen-reload.service")
    # eth0 gets another address: this session drops, new logins fail
    assert lab_wait(lambda: not shell.conn.is_alive(), timeout=5)
    refused(lab, "sw1")
    # the timer fired, ran `config reload -y -f` of the saved startup, and eth0 is back where it was
    assert lab_wait(lambda: _login_works(lab), timeout=10)
    again = Shell(lab, "sw1")
    try:
        assert again.running() == startup
        assert show(again, "fabricgen-confirm.timer")["fabricgen-confirm.timer"]["LoadState"] == "not-found"
        assert show(again, "fabricgen-confirm.service")["fabricgen-confirm.service"]["LoadState"] == "not-found"
    finally:
        again.close()


def _login_works(lab) -> bool:
    try:
        return exec_status(lab, "sw1", "hostname")[0] == 0
    except (paramiko.SSHException, EOFError, OSError):
        return False


def test_a_reload_that_moves_eth0_drops_every_session(lab, shell, lab_wait):
    running = shell.running()
    other = Shell(lab, "sw1")
    shell.put("/tmp/mvrf.json", dict(running, MGMT_VRF_CONFIG={"vrf_global": {"mgmtVrfEnabled": "true"}}))
    assert shell.run("sudo systemd-run --unit r1 config reload -y -f /tmp/mvrf.json") == "Running as unit: r1.service"
    assert other.conn.is_alive(), "the reload runs for a while first"
    assert lab_wait(lambda: not shell.conn.is_alive() and not other.conn.is_alive(), timeout=5)
    assert "eth0 moves into VRF mgmt: eth0 restarts, dropping 2 SSH session(s)" in (lab.directory / "lab.log").read_text()
    assert lab_wait(lambda: _login_works(lab), timeout=5)
    again = Shell(lab, "sw1")
    try:
        assert again.running()["MGMT_VRF_CONFIG"] == {"vrf_global": {"mgmtVrfEnabled": "true"}}
        # a reload that leaves eth0 alone keeps the sessions (the mgmt VRF stays on)
        again.put("/tmp/same.json", again.running())
        again.run("sudo config reload -y -f /tmp/same.json")
        assert again.conn.is_alive() and again.run("hostname").strip() == "sw1"
    finally:
        again.close()


def test_systemd_run_unit_names_and_stop(lab, shell, lab_wait):
    shell.run("sudo config checkpoint cp1")
    assert "Running timer as unit" in shell.run(ARM.format(s=60, c="config rollback cp1"))
    # a name in use: refused as systemd 252 refuses it, exit status 1
    status, out = exec_status(lab, "sw1", "sudo systemd-run --unit fabricgen-confirm --on-active=5s config rollback cp1")
    assert status == 1
    assert out.strip() == ("Failed to start transient timer unit: Unit fabricgen-confirm.timer was already loaded "
                           "or has a fragment file.")
    assert exec_status(lab, "sw1", "systemctl is-active fabricgen-confirm.timer") == (0, "active\n")
    assert shell.run("sudo systemctl stop fabricgen-confirm.timer") == ""
    assert exec_status(lab, "sw1", "systemctl is-active fabricgen-confirm.timer") == (3, "inactive\n")
    status, out = exec_status(lab, "sw1", "sudo systemctl stop fabricgen-confirm.timer")
    assert (status, out) == (5, "Failed to stop fabricgen-confirm.timer: Unit fabricgen-confirm.timer not loaded.\n")
    # a service that fails stays loaded as failed and blocks the name until reset-failed
    assert shell.run("sudo systemd-run --unit fabricgen-confirm config rollback no-such-checkpoint") == (
        "Running as unit: fabricgen-confirm.service")
    assert lab_wait(lambda: show(shell, "fabricgen-confirm.service")["fabricgen-confirm.service"]["ActiveState"]
                    == "failed", timeout=5)
    assert show(shell, "fabricgen-confirm.service")["fabricgen-confirm.service"]["Result"] == "exit-code"
    status, out = exec_status(lab, "sw1", ARM.format(s=5, c="config rollback cp1"))
    assert status == 1 and "Unit fabricgen-confirm.service was already loaded or has a fragment file." in out
    shell.run("sudo systemctl reset-failed fabricgen-confirm.service")
    assert "Running timer as unit" in shell.run(ARM.format(s=60, c="config rollback cp1"))
    shell.run("sudo systemctl stop fabricgen-confirm.timer")
    status, out = exec_status(lab, "sw1", "sudo systemd-run --unit x no-such-tool")
    assert status == 1 and "Failed to find executable no-such-tool" in out


def test_rollback_timer_and_faults(lab, shell, lab_wait):
    shell.run("sudo config checkpoint cp1")
    before = shell.running()
    shell.put("/tmp/p.json", [{"op": "add", "path": "/PORT/Ethernet8/description", "value": "x"}])
    shell.run("sudo config apply-patch /tmp/p.json")
    assert "Running timer as unit" in shell.run(ARM.format(s=1, c="config rollback cp1"))
    assert lab_wait(lambda: shell.running() == before, timeout=5)

    set_faults(lab.directory, "sw1", {"apply_error": "swss is not ready"})
    try:
        status, out = exec_status(lab, "sw1", "sudo config apply-patch /tmp/p.json")
        assert status == 2 and "swss is not ready" in out
        shell.put("/tmp/same.json", before)
        status, out = exec_status(lab, "sw1", "sudo config reload -y -f /tmp/same.json")
        assert status == 1 and "swss is not ready" in out
        assert shell.running() == before
    finally:
        set_faults(lab.directory, "sw1", {})


NOT_READY = "SwSS container is not ready. Retry later or use -f to avoid system checks\n"


def test_config_reload_without_f_waits_120s_after_every_swss_start(lab, lab_start, lab_wait):
    """sonic-utilities config/main.py reload: without -f refused (exit 1, nothing loaded) until
    swss.service has been active 120 s: after boot and after every reload. -f skips the check
    (what sonic-ztp and fabricgen's undo and revert use)."""
    status, out = exec_status(lab, "sw1", "sudo config reload -y")     # booted seconds ago
    assert (status, out) == (1, NOT_READY)
    status, out = exec_status(lab, "sw1", "sudo config reload -y -f")
    assert status == 0 and "Restarting SONiC target" in out
    # the lab's clock runs 60 times faster: the 120 s of a reload's swss start pass in 2 s
    fast = lab_start([SW1], username="admin", time_scale=60.0, subdir="fast")
    status, out = exec_status(fast, "sw1", "sudo config reload -y -f; sudo config reload -y; echo status=$?")
    assert out.endswith(NOT_READY + "status=1\n"), out
    assert lab_wait(lambda: exec_status(fast, "sw1", "sudo config reload -y")[0] == 0, timeout=30)
