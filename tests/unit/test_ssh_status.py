"""The exit-status marker every driver command carries (ssh.py): parsing and judging, no SSH."""

from __future__ import annotations

import pytest

from generator.devices.nvue import NVUEDriver
from generator.devices.sonic import SonicDriver
from generator.devices.ssh import (
    CommandFailed,
    ReadIncomplete,
    split_status,
    status_marker,
    with_status,
)

MARK = status_marker("0a1b2c3d")


def test_command_is_followed_by_an_echo_of_its_status():
    assert with_status("nv config apply -y", MARK) == f'nv config apply -y; echo "{MARK}=$?"'


def test_status_zero_with_output():
    assert split_status(f"line one\nline two\n{MARK}=0\n", MARK) == ("line one\nline two", 0)


def test_status_zero_without_output():
    assert split_status(f"{MARK}=0", MARK) == ("", 0)


def test_non_zero_status():
    assert split_status(f"sha256sum: /tmp/x: No such file or directory\r\n{MARK}=1", MARK) == (
        "sha256sum: /tmp/x: No such file or directory", 1)
    assert split_status(f"{MARK}=127", MARK)[1] == 127


def test_marker_missing_means_the_output_was_cut():
    assert split_status("half of a JSON docum", MARK) == ("half of a JSON docum", None)
    assert split_status("", MARK) == ("", None)


def test_unterminated_last_line_keeps_its_text():
    assert split_status(f"no newline here{MARK}=0", MARK) == ("no newline here", 0)


def test_marker_like_line_inside_the_output_is_output():
    fake = f"{MARK}=0"
    assert split_status(f"{fake}\nmore\n{MARK}=3", MARK) == (f"{fake}\nmore", 3)
    # another run's marker (another nonce) is never this driver's status
    assert split_status(f"{status_marker('ffffffff')}=0", MARK) == (f"{status_marker('ffffffff')}=0", None)
    # only a whole status: trailing text after the digits is not a marker line
    assert split_status(f"{MARK}=0 and more", MARK)[1] is None


class Scripted:
    """A driver whose shell answers from a script instead of SSH (the marker is the driver's own)."""

    def __init__(self, cls, answers: dict[str, tuple[str, int | None]], password: str = "s3cret-pw"):
        self.driver = cls("192.0.2.1", "admin", password, optional_args={"accept_new_host_keys": True})
        self.sent: list[str] = []

        def send(line: str, read_timeout=None, expect=None) -> str:
            self.sent.append(line)
            command = line.rsplit("; echo ", 1)[0]
            output, status = answers[command]
            marker = "" if status is None else f"{self.driver._marker}={status}\n"
            return output + ("\n" if output and not output.endswith("\n") else "") + marker

        self.driver._send = send


def test_check_returns_output_without_the_marker():
    fake = Scripted(SonicDriver, {"show version": ("SONiC Software Version: SONiC.202311", 0)})
    assert fake.driver._check("show version") == "SONiC Software Version: SONiC.202311"
    assert fake.sent == [f'show version; echo "{fake.driver._marker}=$?"']


def test_non_zero_status_fails_with_command_and_first_lines():
    lines = "\n".join(f"line {i}" for i in range(10))
    fake = Scripted(SonicDriver, {"sudo config apply-patch /tmp/p.json": (lines, 1)})
    with pytest.raises(CommandFailed) as failed:
        fake.driver._check("sudo config apply-patch /tmp/p.json")
    message = str(failed.value)
    assert "`sudo config apply-patch /tmp/p.json`" in message and "exit status 1" in message
    assert "line 0; line 1; line 2 ..." in message and "line 3" not in message


def test_missing_marker_fails():
    fake = Scripted(NVUEDriver, {"nv config show -o yaml": ("- set:\n    system:", None)})
    with pytest.raises(CommandFailed, match="output was cut"):
        fake.driver._check("nv config show -o yaml")


@pytest.mark.parametrize("cls", [NVUEDriver, SonicDriver])
def test_a_read_that_did_not_complete_is_transient_a_refused_answer_is_not(cls):
    """Cut output and cut JSON are ReadIncomplete (the readers retry once); an exit status is an answer."""
    fake = Scripted(cls, {"nv show interface -o json": ('{"swp1": {"type": "sw', 0), "cut": ("{", None),
                          "refused": ("", 2)})
    for command in ("nv show interface -o json", "cut"):
        with pytest.raises(ReadIncomplete):
            fake.driver._json(command)
    with pytest.raises(CommandFailed) as exc:
        fake.driver._json("refused")
    assert not isinstance(exc.value, ReadIncomplete)


def test_expected_status_is_said_explicitly():
    fake = Scripted(SonicDriver, {"probe": ("", 1)})
    with pytest.raises(CommandFailed):
        fake.driver._check("probe")
    assert fake.driver._check("probe", ok=(0, 1)) == ""


def test_secrets_are_scrubbed_from_command_and_output():
    fake = Scripted(SonicDriver, {"login --password s3cret-pw": ("bad password s3cret-pw", 5)})
    with pytest.raises(CommandFailed) as failed:
        fake.driver._check("login --password s3cret-pw")
    assert "s3cret-pw" not in str(failed.value) and "***" in str(failed.value)


def test_nvue_error_line_with_status_zero_fails_sonic_does_not_parse_it():
    # NVUE prints some errors with status 0 (netlab PR 1726): an "Error" line counts there.
    nvue = Scripted(NVUEDriver, {"nv config apply -y": ("Error: Could not connect to nvued.", 0)})
    with pytest.raises(CommandFailed, match="exited 0 but printed: Error: Could not connect"):
        nvue.driver._check("nv config apply -y")
    # SONiC: the exit status decides; a config that mentions "Error" at a line start is data.
    sonic = Scripted(SonicDriver, {"cat /etc/sonic/config_db.json": ("Error line in a description", 0)})
    assert sonic.driver._check("cat /etc/sonic/config_db.json") == "Error line in a description"


def test_each_driver_has_its_own_marker():
    a = NVUEDriver("192.0.2.1", "admin", "pw", optional_args={"accept_new_host_keys": True})
    b = NVUEDriver("192.0.2.1", "admin", "pw", optional_args={"accept_new_host_keys": True})
    assert a._marker != b._marker and a._marker.startswith("__fg_rc_")
