"""A simulated Cumulus switch behaves like the real one (DEVICE_STATE.md): it boots from the
factory default, logs users in against its own accounts, drops off the management network when an
applied config takes eth0's address or mgmt VRF away (until the confirm timer reverts), and
refuses to delete a logged-in user. Every check goes over a real SSH socket."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time

import asyncssh
import paramiko
import pytest
import yaml

from generator.lab.control import LabDevice

pytestmark = pytest.mark.integration

STATIC_511 = LabDevice("leaf01", "cumulus", "5.11", mgmt_address="192.168.0.11/20", mgmt_gateway="192.168.0.1")
STATIC_515 = LabDevice("leaf02", "cumulus", "5.15", mgmt_address="192.168.0.12/20", mgmt_gateway="192.168.0.1")
DHCP_511 = LabDevice("leaf03", "cumulus", "5.11", mgmt_mode="dhcp")
DHCP_515 = LabDevice("leaf04", "cumulus", "5.15", mgmt_mode="dhcp")


def connect(lab, name: str, username: str = "cumulus", password: str | None = None,
            timeout: float = 5) -> paramiko.SSHClient:
    client = paramiko.SSHClient()
    client.load_host_keys(str(lab.known_hosts))
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    client.connect("127.0.0.1", lab.port(name), username, lab.password if password is None else password,
                   allow_agent=False, look_for_keys=False, timeout=timeout, banner_timeout=timeout,
                   auth_timeout=timeout)
    return client


def run(client: paramiko.SSHClient, command: str) -> tuple[int, str]:
    _, stdout, _ = client.exec_command(command)
    text = stdout.read().decode()
    return stdout.channel.recv_exit_status(), text


def shown(client: paramiko.SSHClient) -> tuple[dict, dict]:
    status, text = run(client, "nv config show -o yaml")
    assert status == 0, text
    document = yaml.load(text, Loader=yaml.BaseLoader)  # NVUE values stay strings (on/off)
    return document[0]["header"], document[1]["set"]


def upload(client: paramiko.SSHClient, path: str, config: dict) -> None:
    sftp = client.open_sftp()
    with sftp.open(path, "w") as fh:
        fh.write(yaml.safe_dump([{"set": config}], sort_keys=True))
    sftp.close()


def openssl_hash(password: str) -> str:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (Debian package openssl)")
    return subprocess.run(["openssl", "passwd", "-6", "-stdin"], input=password, capture_output=True,
                          text=True, check=True).stdout.strip()


def refused(lab, name: str) -> float:
    """Seconds a new login needs to fail; fails the test if the login succeeds."""
    started = time.monotonic()
    with pytest.raises((paramiko.SSHException, EOFError, ConnectionError, OSError)):
        connect(lab, name).close()
    return time.monotonic() - started


# --- factory default -------------------------------------------------------------------
def test_factory_default_both_generations(lab_start):
    lab = lab_start([STATIC_511, STATIC_515, DHCP_511, DHCP_515])
    configs = {}
    for name in ("leaf01", "leaf02", "leaf03", "leaf04"):
        client = connect(lab, name)
        try:
            header, configs[name] = shown(client)
            status, startup = run(client, "cat /etc/nvue.d/startup.yaml")
        finally:
            client.close()
        assert status == 0 and yaml.load(startup, Loader=yaml.BaseLoader)[1]["set"] == configs[name]
        assert header["rev-id"] == "1.0" and header["nvue-api-version"] == "nvue_v1"
        system = configs[name]["system"]
        assert system["hostname"] == name
        assert system["aaa"]["user"]["cumulus"]["role"] == "system-admin"
        assert system["aaa"]["user"]["cumulus"]["hashed-password"].startswith("$6$")
        assert lab.password not in startup  # a hash, never the password
        assert system["control-plane"]["acl"] == {"acl-default-dos": {"inbound": {}},
                                                  "acl-default-whitelist": {"inbound": {}}}
        assert system["api"] == {"state": "enabled"} and system["ssh-server"] == {"state": "enabled"}
    assert header["version"] == "Cumulus Linux 5.15.0"

    # <= 5.14: interface eth0 ip address|gateway|vrf; 5.15: ipv4 address|gateway|dhcp-client, eth0 vrf.
    assert configs["leaf01"]["interface"]["eth0"] == {
        "ip": {"address": {"192.168.0.11/20": {}}, "gateway": {"192.168.0.1": {}}, "vrf": "mgmt"}, "type": "eth"}
    assert configs["leaf02"]["interface"]["eth0"] == {
        "ipv4": {"address": {"192.168.0.12/20": {}}, "gateway": {"192.168.0.1": {}}}, "type": "eth", "vrf": "mgmt"}
    assert configs["leaf03"]["interface"]["eth0"] == {"ip": {"address": {"dhcp": {}}, "vrf": "mgmt"}, "type": "eth"}
    assert configs["leaf04"]["interface"]["eth0"] == {
        "ipv4": {"dhcp-client": {"state": "enabled"}}, "type": "eth", "vrf": "mgmt"}


# --- logins ----------------------------------------------------------------------------
def test_wrong_password_and_unknown_user_fail(lab_start):
    lab = lab_start([STATIC_511])
    with pytest.raises(paramiko.AuthenticationException):
        connect(lab, "leaf01", password="not-the-password")
    with pytest.raises(paramiko.AuthenticationException):
        connect(lab, "leaf01", username="admin")  # right password, but no `system aaa user admin`
    connect(lab, "leaf01").close()


def test_changed_hash_changes_the_password(lab_start):
    lab = lab_start([STATIC_515])
    new_hash = openssl_hash("N3w-switch-pw")
    client = connect(lab, "leaf02")
    try:
        status, out = run(client, f"nv set system aaa user cumulus hashed-password '{new_hash}'; "
                                  "nv config apply -y")
        assert status == 0, out
    finally:
        client.close()
    with pytest.raises(paramiko.AuthenticationException):
        connect(lab, "leaf02")  # the lab password was the old hash's
    client = connect(lab, "leaf02", password="N3w-switch-pw")
    try:
        assert shown(client)[1]["system"]["aaa"]["user"]["cumulus"]["hashed-password"] == new_hash
    finally:
        client.close()


def test_public_key_listed_under_the_user_logs_in(lab_start):
    lab = lab_start([STATIC_511])
    key = asyncssh.generate_private_key("ssh-ed25519")
    key_type, key_b64 = key.export_public_key("openssh").decode().split()[:2]

    async def login() -> str:
        async with asyncssh.connect("127.0.0.1", lab.port("leaf01"), username="cumulus", client_keys=[key],
                                    password=None, known_hosts=str(lab.known_hosts),
                                    preferred_auth="publickey") as conn:
            return (await conn.run("whoami", check=True)).stdout.strip()

    with pytest.raises(asyncssh.PermissionDenied):
        asyncio.run(login())
    client = connect(lab, "leaf01")
    try:
        status, out = run(client, f"nv set system aaa user cumulus ssh authorized-key ops key {key_b64}; "
                                  f"nv set system aaa user cumulus ssh authorized-key ops type {key_type}; "
                                  "nv config apply -y")
        assert status == 0, out
    finally:
        client.close()
    assert asyncio.run(login()) == "cumulus"


# --- management cut --------------------------------------------------------------------
def _without_management(config: dict, version: str) -> dict:
    eth0 = config["interface"]["eth0"]
    if version == "5.11":
        del eth0["ip"]["address"]  # eth0 keeps the mgmt VRF but loses its address
        del eth0["ip"]["gateway"]
    else:
        del eth0["vrf"]  # eth0 keeps its address but leaves the mgmt VRF
    return config


@pytest.mark.parametrize("device", [STATIC_511, STATIC_515], ids=["5.11-address", "5.15-vrf"])
def test_replace_that_cuts_management_refuses_logins_until_confirm_reverts(lab_start, lab_wait, device):
    lab = lab_start([device])
    name = device.name
    client = connect(lab, name)
    _, before = shown(client)
    upload(client, "/tmp/cut.yaml", _without_management(yaml.safe_load(yaml.safe_dump(before)), device.version))
    status, out = run(client, "nv config replace /tmp/cut.yaml; nv config apply -y --confirm 4s")
    assert status == 0 and "confirm within 4s" in out
    # The session that applied came in over eth0: its address is gone, so is the session.
    assert lab_wait(lambda: not client.get_transport().is_active(), timeout=3)
    client.close()

    assert refused(lab, name) < 2  # the TCP connection is closed at once, no client timeout
    log = (lab.directory / "lab.log").read_text()
    assert f"{name}: applied revision 1 cuts management" in log and "until the confirm timer reverts" in log

    def logs_in() -> dict | None:
        try:
            probe = connect(lab, name, timeout=2)
        except (paramiko.SSHException, EOFError, OSError):
            return None
        try:
            return shown(probe)[1]
        finally:
            probe.close()

    after = lab_wait(logs_in, timeout=10)
    assert after == before  # the confirm timer reverted to the factory revision
    assert "restores management" in (lab.directory / "lab.log").read_text()


def test_cut_without_confirm_timer_stays_cut_off(lab_start):
    lab = lab_start([DHCP_511])
    client = connect(lab, "leaf03")
    try:
        status, out = run(client, "nv unset interface eth0 ip address dhcp; nv config apply -y")
        assert status == 0, out
    finally:
        client.close()
    refused(lab, "leaf03")
    time.sleep(0.5)
    refused(lab, "leaf03")
    log = (lab.directory / "lab.log").read_text()
    assert "leaf03: applied revision 1 cuts management: eth0 has no DHCP client" in log
    assert "for good: no confirm timer is pending" in log


# --- the logged-in user ----------------------------------------------------------------
def test_deleting_the_logged_in_user_fails_and_changes_nothing(lab_start):
    lab = lab_start([STATIC_511], username="admin")
    client = connect(lab, "leaf01", username="admin")
    try:
        _, before = shown(client)
        assert set(before["system"]["aaa"]["user"]) == {"admin", "cumulus"}
        candidate = yaml.safe_load(yaml.safe_dump(before))
        del candidate["system"]["aaa"]["user"]["admin"]
        upload(client, "/tmp/no-admin.yaml", candidate)
        status, out = run(client, "nv config replace /tmp/no-admin.yaml; nv config apply -y")
        assert status == 1 and "You cannot delete a logged in user account" in out
        assert shown(client)[1] == before
        _, history = run(client, "nv config history -o json")
        assert yaml.safe_load(history) == []  # nothing was applied

        # A user without a session can go: the same apply without `cumulus` instead succeeds.
        del candidate["system"]["aaa"]["user"]["cumulus"]
        candidate["system"]["aaa"]["user"]["admin"] = before["system"]["aaa"]["user"]["admin"]
        upload(client, "/tmp/no-cumulus.yaml", candidate)
        status, out = run(client, "nv config replace /tmp/no-cumulus.yaml; nv config apply -y")
        assert status == 0, out
    finally:
        client.close()
    with pytest.raises(paramiko.AuthenticationException):
        connect(lab, "leaf01", username="cumulus")
