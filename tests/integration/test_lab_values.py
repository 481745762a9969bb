"""The lab refuses bad values as NVUE does, over a real SSH session (netmiko shell, exec
channels, SFTP): `nv set`, `nv config replace` and `nv config patch` check every value
against the release's object model; one bad value refuses the whole command and leaves
the pending config as it was (NVUE-Object-Model and NVUE-CLI pages)."""

from __future__ import annotations

import paramiko
import pytest
from netmiko import ConnectHandler

from generator.intent.loader import parse_yaml, validate_data
from generator.plan.compile import compile_plan
from generator.render.nvue import render_switch
from tests.conftest import example

pytestmark = pytest.mark.integration

ECN_SET = "nv set qos congestion-control default-global traffic-class 3 ecn"


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


def rendered_leaf() -> str:
    """A real fabricgen document for the lab's release (5.11), with the ECN partial rendered."""
    data, lines = parse_yaml(example("small").read_text(), "small.yaml")
    data["roce"]["ecn"] = {"min_threshold": "200KB", "max_threshold": "1600KB", "probability": 90}
    plan = compile_plan(validate_data(data, lines, "small.yaml"))
    text = render_switch(plan, plan.switches[0])
    assert "ecn: enable\n" in text
    return text


def run(client: paramiko.SSHClient, command: str) -> tuple[int, str]:
    _, stdout, _ = client.exec_command(command)
    out = stdout.read().decode()
    return stdout.channel.recv_exit_status(), out


def upload(client: paramiko.SSHClient, path: str, text: str) -> None:
    sftp = client.open_sftp()
    with sftp.open(path, "w") as fh:
        fh.write(text)
    sftp.close()


def test_nv_set_refuses_a_bad_value_and_keeps_pending(lab_shell):
    lab_shell.send_command("nv set interface swp1 link mtu 9216")
    before = lab_shell.send_command("nv config diff -o commands")
    output = lab_shell.send_command(f"{ECN_SET} enabled")
    assert output == ("Error: Invalid config: qos congestion-control default-global traffic-class 3 ecn: "
                      "'enabled' is not one of enable|disable")
    assert lab_shell.send_command("nv set interface swp1 link mtu 99999") == (
        "Error: Invalid config: interface swp1 link mtu: '99999' is not an integer 552-9216")
    assert lab_shell.send_command("nv config diff -o commands") == before
    assert lab_shell.send_command(f"{ECN_SET} enable") == ""            # the model's spelling is taken
    assert f"{ECN_SET} enable" in lab_shell.send_command("nv config diff -o commands").splitlines()


def test_replace_with_one_bad_value_changes_nothing(lab_paramiko):
    good = rendered_leaf()
    bad = good.replace("ecn: enable\n", "ecn: enabled\n", 1)
    assert run(lab_paramiko, "nv set interface swp1 link mtu 9000")[0] == 0
    _, before = run(lab_paramiko, "nv config diff -o commands")
    upload(lab_paramiko, "/tmp/bad.yaml", bad)
    status, out = run(lab_paramiko, "nv config replace /tmp/bad.yaml")
    assert status == 1
    assert out.splitlines() == ["Error: Invalid config: qos congestion-control default-global traffic-class 3 "
                                "ecn: 'enabled' is not one of enable|disable"]
    assert run(lab_paramiko, "nv config diff -o commands")[1] == before
    # the same document with the model's value is taken: the refusal was that one value
    upload(lab_paramiko, "/tmp/good.yaml", good)
    assert run(lab_paramiko, "nv config replace /tmp/good.yaml")[0] == 0
    assert f"{ECN_SET} enable" in run(lab_paramiko, "nv config diff -o commands")[1].splitlines()


def test_patch_with_a_bad_value_or_unknown_key_changes_nothing(lab_paramiko):
    assert run(lab_paramiko, "nv set interface swp1 link mtu 9000")[0] == 0
    _, before = run(lab_paramiko, "nv config diff -o commands")
    upload(lab_paramiko, "/tmp/patch.yaml",
           "- set:\n    interface:\n      swp2:\n        link:\n          mtu: 9216\n"
           "    qos:\n      roce:\n        enable: true\n        mode: lossless\n")
    status, out = run(lab_paramiko, "nv config patch /tmp/patch.yaml")
    assert status == 1 and out.splitlines() == ["Error: Invalid config: qos roce enable: 'true' is not one of on|off"]
    assert run(lab_paramiko, "nv config diff -o commands")[1] == before
    # `on` read as NVUE reads it (a string, not YAML 1.1's True) passes
    upload(lab_paramiko, "/tmp/patch.yaml",
           "- set:\n    interface:\n      swp2:\n        link:\n          mtu: 9216\n"
           "    qos:\n      roce:\n        enable: on\n        mode: lossless\n")
    assert run(lab_paramiko, "nv config patch /tmp/patch.yaml")[0] == 0
    assert "nv set qos roce enable on" in run(lab_paramiko, "nv config diff -o commands")[1].splitlines()
