"""The simulator as an SSH server: netmiko shell, exec channels, SFTP, SCP, NVUE semantics."""

from __future__ import annotations

import asyncio
import json

import asyncssh
import paramiko
import pytest
from netmiko import ConnectHandler

pytestmark = pytest.mark.integration


@pytest.fixture
def lab_shell(lab_nvue):
    connection = ConnectHandler(
        device_type="cumulus_linux", host="127.0.0.1", port=lab_nvue.port("leaf01"), username="cumulus",
        password=lab_nvue.password, ssh_strict=True, system_host_keys=False, alt_host_keys=True,
        alt_key_file=str(lab_nvue.known_hosts), allow_agent=False, use_keys=False)
    yield connection
    connection.disconnect()


@pytest.fixture
def lab_paramiko(lab_nvue):
    client = paramiko.SSHClient()
    client.load_host_keys(str(lab_nvue.known_hosts))
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    client.connect("127.0.0.1", lab_nvue.port("leaf01"), "cumulus", lab_nvue.password,
                   allow_agent=False, look_for_keys=False)
    yield client
    client.close()


def test_prompt_and_echo(lab_shell):
    assert lab_shell.base_prompt == "cumulus@leaf01:mgmt:~"
    assert lab_shell.find_prompt() == "cumulus@leaf01:mgmt:~$"
    assert lab_shell.send_command("echo hello") == "hello"
    assert "command not found" in lab_shell.send_command("frobnicate")


def test_nv_set_diff_and_interactive_apply(lab_shell):
    assert lab_shell.send_command("nv set qos roce mode lossless") == ""
    assert lab_shell.send_command("nv set interface swp1 link mtu 9216") == ""
    # The switch starts from its factory config, which already has `interface` (eth0): the diff
    # follows the tree's key order, as NVUE's does.
    assert lab_shell.send_command("nv config diff -o commands").splitlines() == [
        "nv set interface swp1 link mtu 9216", "nv set qos roce mode lossless"]
    prompt = lab_shell.send_command_timing("nv config apply", last_read=0.5)
    assert "Are you sure? [y/N]" in prompt
    assert "applied [rev_id:" in lab_shell.send_command_timing("y", last_read=0.5)
    assert lab_shell.send_command("nv config diff") == ""
    shown = lab_shell.send_command("nv config show -o commands")
    assert "nv set interface swp1 link mtu 9216" in shown


def test_apply_answered_no_changes_nothing(lab_shell):
    lab_shell.send_command("nv set qos roce mode lossless")
    lab_shell.send_command_timing("nv config apply", last_read=0.5)
    assert "Aborted" in lab_shell.send_command_timing("n", last_read=0.5)
    assert "mode: lossless" in lab_shell.send_command("nv config diff")


def test_undocumented_path_refused_and_pending_unchanged(lab_shell):
    lab_shell.send_command("nv set interface swp1 link mtu 9216")
    before = lab_shell.send_command("nv config diff")
    output = lab_shell.send_command("nv set interface swp1 link colour blue")
    assert output.startswith("Error: Invalid config path: interface swp1 link colour")
    assert "Error" in lab_shell.send_command("nv set qos roce state enabled")  # 5.15+ syntax on 5.11
    assert lab_shell.send_command("nv config diff") == before


def test_comma_lists_become_keys_and_unset(lab_shell):
    lab_shell.send_command("nv set qos congestion-control default-global traffic-class 0,3 ecn enable")
    diff = lab_shell.send_command("nv config diff -o commands").splitlines()
    assert diff == ["nv set qos congestion-control default-global traffic-class 0 ecn enable",
                    "nv set qos congestion-control default-global traffic-class 3 ecn enable"]
    lab_shell.send_command("nv unset qos congestion-control default-global traffic-class 0")
    assert len(lab_shell.send_command("nv config diff -o commands").splitlines()) == 1


def test_confirm_timer_reverts_in_shell(lab_shell, lab_wait):
    lab_shell.send_command("nv set interface swp1 link mtu 9000")
    assert "applied" in lab_shell.send_command("nv config apply -y --confirm 1s")
    assert "remaining" in lab_shell.send_command("nv config apply --confirm-status")
    assert lab_wait(lambda: "No pending" in lab_shell.send_command(
        "nv config apply --confirm-status", expect_string=r"\$\s*$"), timeout=5)
    history = json.loads(lab_shell.send_command("nv config history -o json", expect_string=r"\$\s*$"))
    assert history[0]["state"] == "rollback"


def test_exec_channel_exit_status(lab_paramiko):
    _, stdout, _ = lab_paramiko.exec_command("nv show system -o json")
    assert json.loads(stdout.read())["hostname"] == "leaf01"
    assert stdout.channel.recv_exit_status() == 0
    _, stdout, _ = lab_paramiko.exec_command("nv set nothing here")
    assert b"Invalid config path" in stdout.read()
    assert stdout.channel.recv_exit_status() == 1


def test_sftp_upload_then_replace(lab_paramiko, lab_nvue):
    sftp = lab_paramiko.open_sftp()
    with sftp.open("/tmp/fabricgen-candidate.yaml", "w") as fh:
        fh.write("- set:\n    system:\n      hostname: leaf99\n")
    sftp.close()
    assert (lab_nvue.directory / "devices" / "leaf01" / "tmp" / "fabricgen-candidate.yaml").exists()
    _, stdout, _ = lab_paramiko.exec_command(
        "nv config replace /tmp/fabricgen-candidate.yaml; nv config diff -o commands")
    diff = stdout.read().decode().splitlines()
    # NVUE-CLI page: replace makes the config exactly the file, so the factory eth0 and users go too.
    assert "nv set system hostname leaf99" in diff
    assert "nv unset interface" in diff and "nv unset system aaa" in diff


def test_sftp_cannot_escape_device_root(lab_paramiko, lab_nvue):
    sftp = lab_paramiko.open_sftp()
    with sftp.open("/../../escape.txt", "w") as fh:
        fh.write("x")
    sftp.close()
    assert (lab_nvue.directory / "devices" / "leaf01" / "escape.txt").exists()
    assert not (lab_nvue.directory / "escape.txt").exists()


def test_scp_upload(lab_nvue, tmp_path):
    source = tmp_path / "startup.yaml"
    source.write_text("- set: {}\n")

    async def copy():
        async with asyncssh.connect("127.0.0.1", lab_nvue.port("leaf01"), username="cumulus",
                                    password=lab_nvue.password, known_hosts=str(lab_nvue.known_hosts),
                                    client_keys=None) as conn:
            await asyncssh.scp(str(source), (conn, "/tmp/scp-copy.yaml"))

    asyncio.run(copy())
    assert (lab_nvue.directory / "devices" / "leaf01" / "tmp" / "scp-copy.yaml").read_text() == "- set: {}\n"


def test_sonic_prompt(lab_sonic):
    connection = ConnectHandler(
        device_type="linux", host="127.0.0.1", port=lab_sonic.port("sonic01"), username="admin",
        password=lab_sonic.password, ssh_strict=True, system_host_keys=False, alt_host_keys=True,
        alt_key_file=str(lab_sonic.known_hosts), allow_agent=False, use_keys=False)
    try:
        assert connection.find_prompt() == "admin@sonic01:~$"
        assert json.loads(connection.send_command("show runningconfiguration all"))["DEVICE_METADATA"]
        assert "SONiC Software Version: SONiC.202311" in connection.send_command("show version")
        assert connection.send_command("sudo config list-checkpoints") == "[]"
    finally:
        connection.disconnect()


# --- bash semantics the drivers rely on: `;` lists, `$?`, echo, exit statuses -------------
def test_status_of_the_previous_command_in_the_shell(lab_shell):
    assert lab_shell.send_command("false; echo $?") == "1"
    assert lab_shell.send_command("true; echo $?") == "0"
    assert lab_shell.send_command("frobnicate; echo rc=$?").splitlines() == [
        "-bash: frobnicate: command not found", "rc=127"]
    # $? survives to the next line, as in bash
    lab_shell.send_command("false")
    assert lab_shell.send_command("echo $?") == "1"
    assert lab_shell.send_command("echo $?") == "0"


def test_nv_errors_exit_1_and_success_0(lab_shell):
    output = lab_shell.send_command('nv set interface swp1 link colour blue; echo "rc=$?"').splitlines()
    assert output[0].startswith("Error: Invalid config path") and output[-1] == "rc=1"
    assert lab_shell.send_command('nv set interface swp1 link mtu 9216; echo "rc=$?"') == "rc=0"
    output = lab_shell.send_command('nv config apply --confirm-yes; echo "rc=$?"').splitlines()
    assert output[0].startswith("Error:") and output[-1] == "rc=1"


def test_quotes_and_lists_as_bash(lab_shell):
    assert lab_shell.send_command("echo '$?' \"x;y\" a\\;b") == "$? x;y a;b"
    assert lab_shell.send_command("false && echo yes || echo no") == "no"
    assert lab_shell.send_command("true && echo yes || echo no") == "yes"
    assert lab_shell.send_command("false || false; echo $?") == "1"
    assert lab_shell.send_command("echo -n a; echo b") == "ab"
    assert lab_shell.send_command("echo -e 'a\\tb'") == "a\tb"
    assert lab_shell.send_command("echo -x") == "-x"
    assert "syntax error near unexpected token `;'" in lab_shell.send_command("; echo never")
    assert lab_shell.send_command("echo $?") == "2"
    assert lab_shell.send_command("cat /nope; echo $?").splitlines() == [
        "cat: /nope: No such file or directory", "1"]


def test_exec_channel_status_is_the_last_command_of_the_list(lab_paramiko):
    for command, status in (("false", 1), ("true; false", 1), ("false; true", 0), ("exit 3", 3),
                            ("frobnicate", 127), ("false && true", 1), ("false || exit 4", 4)):
        _, stdout, _ = lab_paramiko.exec_command(command)
        stdout.read()
        assert stdout.channel.recv_exit_status() == status, command
