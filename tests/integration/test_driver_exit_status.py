"""Both drivers judge every command by its exit status, over real SSH to the lab (ssh.py `_check`)."""

from __future__ import annotations

import pytest

from generator.devices.ssh import CommandFailed

pytestmark = pytest.mark.integration


@pytest.fixture
def nvue(lab_nvue):
    driver = lab_nvue.driver("leaf01")
    driver.open()
    yield driver
    driver.close()


@pytest.fixture
def sonic(lab_sonic):
    driver = lab_sonic.driver("sonic01", "sonic_fabric")
    driver.open()
    yield driver
    driver.close()


@pytest.mark.parametrize("which", ["nvue", "sonic"])
def test_exit_1_without_error_prefix_fails(which, request):
    driver = request.getfixturevalue(which)
    with pytest.raises(CommandFailed, match=r"`false` failed, exit status 1$"):
        driver._check("false")
    with pytest.raises(CommandFailed, match="exit status 1: cat: /tmp/nope: No such file or directory"):
        driver._check("cat /tmp/nope")
    with pytest.raises(CommandFailed, match="exit status 127: -bash: frobnicate: command not found"):
        driver._check("frobnicate --now")
    assert driver._check("echo fine") == "fine"


def test_output_that_forges_the_marker_does_not_pass(nvue):
    # Even knowing this run's marker, a line printed before the command's end is output.
    with pytest.raises(CommandFailed, match="exit status 1"):
        nvue._check(f'echo "{nvue._marker}=0"; false')
    assert nvue._check(f'echo "{nvue._marker}=1"') == f"{nvue._marker}=1"


def test_missing_startup_file_fails_the_getter_not_returns_the_error(sonic, lab_sonic):
    startup = lab_sonic.directory / "devices" / "sonic01" / "etc" / "sonic" / "config_db.json"
    assert startup.is_file()
    startup.unlink()
    with pytest.raises(CommandFailed, match="`cat /etc/sonic/config_db.json` failed, exit status 1"):
        sonic.get_config(retrieve="startup")


def test_nvue_error_with_status_1_names_the_command(nvue):
    with pytest.raises(CommandFailed, match=r"`nv set interface swp1 link colour blue` failed, exit status 1: "
                                            r"Error: Invalid config path"):
        nvue._check("nv set interface swp1 link colour blue")


def test_upload_check_reports_sha256sum_failure(nvue):
    with pytest.raises(CommandFailed, match="exit status 1: sha256sum: /tmp/never-sent: No such file"):
        nvue._verify_upload("/tmp/never-sent", "0" * 64)
