"""SonicDriver against the lab: checkpoint + config apply-patch + rollback, confirm timer."""

from __future__ import annotations

import hashlib
import json
import time

import napalm
import paramiko
import pytest
from napalm.base.exceptions import CommitError, ReplaceConfigException

from generator.devices.sonic import SonicDriver

pytestmark = pytest.mark.integration

# The switch boots from SONiC's factory CONFIG_DB (its own MAC, platform, eth0 address, FEATURE, ...):
# a candidate is that config with our changes, never a partial file - GCU would drop or refuse the rest.
CHANGES = {
    "DEVICE_METADATA": {"localhost": {"bgp_asn": "65101"}},
    "PORT": {"Ethernet0": {"mtu": "9216", "admin_status": "up"}, "Ethernet8": {"mtu": "9216", "admin_status": "up"}},
    "LOOPBACK_INTERFACE": {"Loopback0": {}, "Loopback0|10.255.0.1/32": {}},
}


def with_changes(factory: dict, mtu: str = "9216") -> dict:
    config = json.loads(json.dumps(factory))
    for table, rows in json.loads(json.dumps(CHANGES).replace('"9216"', f'"{mtu}"')).items():
        for key, fields in rows.items():
            config.setdefault(table, {}).setdefault(key, {}).update(fields)
    return config


@pytest.fixture
def lab_switch(lab_sonic):
    device = lab_sonic.driver("sonic01", "sonic_fabric")
    device.open()
    yield device
    device.close()


@pytest.fixture
def factory(lab_switch) -> dict:
    return running(lab_switch)


@pytest.fixture
def CONFIG_DB(factory) -> dict:  # noqa: N802 - the name the tests always used
    return with_changes(factory)


@pytest.fixture
def SECOND(factory) -> dict:  # noqa: N802
    return with_changes(factory, mtu="9100")


def running(device) -> dict:
    return json.loads(device.get_config(retrieve="running")["running"])


def commit(device, config: dict, **kwargs) -> None:
    device.load_replace_candidate(config=json.dumps(config))
    device.commit_config(**kwargs)


def test_get_network_driver_finds_sonic_fabric():
    assert napalm.get_network_driver("sonic_fabric") is SonicDriver


def test_replace_diff_commit_get_config(lab_switch, tmp_path, CONFIG_DB):
    path = tmp_path / "config_db.json"
    path.write_text(json.dumps(CONFIG_DB))
    lab_switch.load_replace_candidate(filename=str(path))
    assert 'replace /PORT/Ethernet0/mtu "9216"' in lab_switch.compare_config()  # the patch, not a diff
    lab_switch.commit_config()
    config = lab_switch.get_config()
    assert json.loads(config["running"]) == CONFIG_DB
    assert json.loads(config["startup"]) == CONFIG_DB
    assert lab_switch.compare_config() == ""


def test_config_db_is_read_without_bgpraw(lab_switch, factory, CONFIG_DB):
    # 202311+: `show runningconfiguration all` adds FRR's config as a top-level string
    shown = json.loads(lab_switch.device.send_command("show runningconfiguration all", read_timeout=15))
    assert isinstance(shown.pop("bgpraw"), str)
    assert factory == shown and "bgpraw" not in factory
    lab_switch.load_replace_candidate(config=json.dumps(CONFIG_DB))
    assert "bgpraw" not in lab_switch.compare_config()
    assert all(not op["path"].startswith("/bgpraw") for op in lab_switch.patch_ops)
    lab_switch.discard_config()
    lab_switch.load_provision_candidate(config=json.dumps(CONFIG_DB))
    assert "bgpraw" not in lab_switch.staged_base
    lab_switch.discard_config()


def test_reads_and_the_day0_diff_follow_the_switch(lab_switch, factory, CONFIG_DB, SECOND):
    # the driver keeps its last read and its last day-0 diff (a wave reuses them, issue 32): a
    # changed switch or a changed file must never get the old ones
    assert lab_switch.running_config_db() == factory
    commit(lab_switch, CONFIG_DB)
    base = lab_switch.running_config_db()
    assert base == CONFIG_DB
    lab_switch.load_provision_candidate(config=json.dumps(SECOND), running=base)
    first = lab_switch.compare_config()
    assert '-            "mtu": "9216",' in first and '+            "mtu": "9100",' in first
    lab_switch.discard_config()
    lab_switch.load_provision_candidate(config=json.dumps(SECOND), running=base)
    assert lab_switch.compare_config() == first
    lab_switch.discard_config()
    lab_switch.load_provision_candidate(config=json.dumps(CONFIG_DB), running=base)
    assert lab_switch.compare_config() == ""
    lab_switch.discard_config()
    lab_switch.load_provision_candidate(config=json.dumps(SECOND), running=json.loads(json.dumps(SECOND)))
    assert lab_switch.compare_config() == ""


def test_merge_candidate(lab_switch, CONFIG_DB):
    commit(lab_switch, CONFIG_DB)
    lab_switch.load_merge_candidate(config=json.dumps({"PORT": {"Ethernet0": {"mtu": "9100"}}}))
    assert "9100" in lab_switch.compare_config()
    lab_switch.commit_config()
    ports = running(lab_switch)["PORT"]
    assert ports["Ethernet0"] == dict(CONFIG_DB["PORT"]["Ethernet0"], mtu="9100")
    assert ports["Ethernet8"]["mtu"] == "9216"


def test_invalid_json_is_refused(lab_switch):
    with pytest.raises(ReplaceConfigException):
        lab_switch.load_replace_candidate(config="{not json")
    with pytest.raises(ReplaceConfigException):
        lab_switch.load_replace_candidate(config='{"PORT": "Ethernet0"}')


def test_discard(lab_switch, CONFIG_DB):
    lab_switch.load_replace_candidate(config=json.dumps(CONFIG_DB))
    lab_switch.discard_config()
    assert lab_switch.compare_config() == ""
    with pytest.raises(CommitError, match="no candidate"):
        lab_switch.commit_config()


def test_revert_in_reverts_without_confirm(lab_switch, lab_wait, CONFIG_DB, SECOND):
    commit(lab_switch, CONFIG_DB)
    commit(lab_switch, SECOND, revert_in=10)        # the reads below come first on a loaded machine too
    assert lab_switch.has_pending_commit()
    # the timer is systemd's, armed with stock systemd-run; it names what it will run
    shown = lab_switch.device.send_command("systemctl show fabricgen-confirm.timer -p Description,SubState")
    assert "SubState=waiting" in shown and "Description=fabricgen commit-confirm: config rollback fabricgen-" in shown
    assert running(lab_switch)["PORT"]["Ethernet0"]["mtu"] == "9100"
    assert lab_wait(lambda: not lab_switch.has_pending_commit(), timeout=60)
    assert running(lab_switch) == CONFIG_DB
    with pytest.raises(CommitError, match="no commit is pending"):
        lab_switch.confirm_commit()       # too late: the timer reverted it, nothing is saved
    assert json.loads(lab_switch.get_config(retrieve="startup")["startup"]) == CONFIG_DB


def test_confirm_keeps(lab_switch, CONFIG_DB):
    # a timer the confirm beats on a loaded machine too (a 1 s one expired before it under load);
    # that the confirm stopped the timer is the switch's own state: no revert timer waits or runs
    commit(lab_switch, CONFIG_DB, revert_in=30)
    assert lab_switch.has_pending_commit()
    lab_switch.confirm_commit()
    assert running(lab_switch) == CONFIG_DB
    assert not lab_switch.has_pending_commit()
    with pytest.raises(CommitError):
        lab_switch.confirm_commit()


def test_second_commit_while_pending_refused(lab_switch, CONFIG_DB, SECOND):
    commit(lab_switch, CONFIG_DB, revert_in=30)
    lab_switch.load_replace_candidate(config=json.dumps(SECOND))
    with pytest.raises(CommitError, match="pending"):
        lab_switch.commit_config()
    lab_switch.rollback()


def test_rollback_with_pending_rejects_at_once(lab_switch, CONFIG_DB, SECOND):
    commit(lab_switch, CONFIG_DB)
    commit(lab_switch, SECOND, revert_in=60)
    lab_switch.rollback()
    assert not lab_switch.has_pending_commit()
    assert running(lab_switch) == CONFIG_DB


def test_rollback_to_checkpoint_from_a_new_session(lab_sonic, CONFIG_DB, SECOND):
    first = lab_sonic.driver("sonic01", "sonic_fabric")
    first.open()
    commit(first, CONFIG_DB)
    commit(first, SECOND)
    first.close()
    second = lab_sonic.driver("sonic01", "sonic_fabric")
    second.open()
    try:
        second.rollback()
        assert running(second) == CONFIG_DB
    finally:
        second.close()


def test_get_facts(lab_switch, CONFIG_DB):
    commit(lab_switch, CONFIG_DB)
    facts = lab_switch.get_facts()
    assert facts["hostname"] == "sonic01"
    assert facts["os_version"] == "SONiC.202311"
    assert facts["interface_list"] == sorted(CONFIG_DB["PORT"]) and len(facts["interface_list"]) == 65
    assert facts["serial_number"].startswith("MT")
    assert facts["uptime"] >= 0


def test_day0_reload_runs_detached_and_a_switch_that_stays_away_is_one_line(lab_sonic, lab_wait, factory):
    # The provisioning file gives eth0 another address: the reload drops the session and the
    # switch never answers at the old one. The driver waits reload_wait seconds, then says so in
    # one line; the systemd timer reloads the saved startup file and the switch is back.
    moved = json.loads(json.dumps(factory))
    moved["MGMT_INTERFACE"] = {"eth0|192.0.2.99/24": {"gwaddr": "192.0.2.1"}}
    device = lab_sonic.driver("sonic01", "sonic_fabric", reload_wait=3)
    device.open()
    device.load_provision_candidate(config=json.dumps(moved))
    started = time.monotonic()
    with pytest.raises(CommitError) as failed:
        # the driver's 3 s wait ends well before this timer, on a loaded machine too
        device.commit_config(revert_in=20)
    message = str(failed.value)
    assert "\n" not in message and "did not come back within 3s of its config reload" in message, message
    assert time.monotonic() - started < 20
    device.close()

    def back() -> dict | None:
        probe = lab_sonic.driver("sonic01", "sonic_fabric", timeout=3)
        try:
            probe.open()
        except Exception:  # noqa: BLE001 - not back yet
            return None
        try:
            return {"running": running(probe), "pending": probe.has_pending_commit()}
        finally:
            probe.close()

    state = lab_wait(back, timeout=90)
    assert state == {"running": factory, "pending": False}, "the timer reloaded the untouched startup file"


def test_day0_commit_and_confirm_with_a_detached_reload(lab_sonic, factory, CONFIG_DB):
    device = lab_sonic.driver("sonic01", "sonic_fabric")
    device.open()
    try:
        device.load_provision_candidate(config=json.dumps(CONFIG_DB))
        device.commit_config(revert_in=30)
        # this file leaves eth0 as it is: the session that started the reload watched it to its end
        assert device.has_pending_commit() and device.reconnects == 0
        assert running(device)["PORT"]["Ethernet0"]["mtu"] == "9216"
        device.confirm_commit()
        assert not device.has_pending_commit()
        assert json.loads(device.get_config(retrieve="startup")["startup"])["PORT"]["Ethernet0"]["mtu"] == "9216"
    finally:
        device.close()


def test_a_staged_file_is_sent_again_only_when_the_switch_no_longer_holds_it(lab_sonic, lab_switch, CONFIG_DB,
                                                                              monkeypatch):
    """A deploy stages each day-0 file in its backup phase and again in its wave: the second time the
    switch's own sha256sum shows the same bytes and nothing is sent; when the file there was changed
    (here by another login over SFTP) it is sent again, and the reload reads what was checked."""
    sent = []
    real = paramiko.SFTPClient.from_transport
    monkeypatch.setattr(paramiko.SFTPClient, "from_transport",
                        staticmethod(lambda transport: sent.append(1) or real(transport)))
    text = json.dumps(CONFIG_DB)
    lab_switch.load_provision_candidate(config=text)
    lab_switch.load_provision_candidate(config=text)
    assert len(sent) == 1
    path = lab_switch.remote_path(lab_switch.commands.candidate_path)
    other = lab_sonic.driver("sonic01", "sonic_fabric")
    other.open()
    try:
        other._upload('{"tampered": {}}\n', path)
    finally:
        other.close()
    lab_switch.load_provision_candidate(config=text)
    assert len(sent) == 3, "the other login's upload, then ours again"
    assert lab_switch.device.send_command(f"sha256sum {path}").split()[0] == hashlib.sha256(text.encode()).hexdigest()
    lab_switch.discard_config()


def test_day0_with_a_taken_confirm_unit_starts_no_reload(lab_switch, factory, CONFIG_DB):
    """Checkpoint, confirm timer and reload go in one `&&` list: when systemd refuses the timer's
    name (a failed revert left fabricgen-confirm.service loaded), the reload never starts."""
    lab_switch._run("sudo systemd-run --unit fabricgen-confirm config rollback fabricgen-gone")
    lab_switch.load_provision_candidate(config=json.dumps(CONFIG_DB))
    with pytest.raises(CommitError, match="fabricgen-confirm.timer cannot be started.*reset-failed"):
        lab_switch.commit_config(revert_in=30)
    assert running(lab_switch) == factory
    shown = lab_switch._check("systemctl show fabricgen-reload.service")
    assert "LoadState=not-found" in shown, shown


def test_a_confirm_prunes_fabricgen_checkpoints_beyond_the_newest_three(lab_switch, CONFIG_DB):
    """Checkpoints are full config_db copies nothing else deletes (DEVICE_STATE.md): after a confirm
    the driver deletes its own (its name pattern only) beyond the newest three; the operator's, and a
    name that only starts like fabricgen's, stay."""
    older = [f"fabricgen-2026010{d}T120000000000" for d in range(1, 6)]
    for name in [*older, "before-upgrade", "fabricgen-keep-me"]:
        lab_switch._check(f"sudo config checkpoint {name}")
    commit(lab_switch, CONFIG_DB, revert_in=60)
    lab_switch.confirm_commit()
    left = json.loads(lab_switch._check("sudo config list-checkpoints"))
    made = [n for n in left if n.startswith("fabricgen-2026") and n not in older]
    assert len(made) == 1, left                       # the one this commit made
    assert sorted(left) == sorted(["before-upgrade", "fabricgen-keep-me", older[-2], older[-1], *made]), left
