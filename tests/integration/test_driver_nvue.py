"""NVUEDriver against the lab over real SSH: every napalm method we rely on."""

from __future__ import annotations

import copy
import time

import napalm
import pytest
from napalm.base.exceptions import CommitError, MergeConfigException, ReplaceConfigException

from generator.devices.nvue import NVUEDriver, load_nvue_document
from generator.lab import tree as nvtree
from generator.lab.control import LabDevice

pytestmark = pytest.mark.integration

CANDIDATE = """\
- header:
    model: SN5600
    version: Cumulus Linux 5.11.0
- set:
    system:
      hostname: leaf01
    qos:
      roce:
        enable: on
        mode: lossless
    interface:
      lo:
        type: loopback
        ip:
          address:
            10.255.0.1/32: {}
      swp1:
        type: swp
        link:
          mtu: 9216
          state:
            up: {}
    router:
      bgp:
        enable: on
        autonomous-system: 65101
        router-id: 10.255.0.1
"""

SECOND = CANDIDATE.replace("mtu: 9216", "mtu: 9000")
# What the switch must keep to stay reachable and let us log in (DEVICE_STATE.md): a replace
# without it deletes the logged-in user (refused) or cuts eth0 (only the confirm timer helps).
MANAGEMENT = {"interface": ("eth0",), "system": ("aaa", "api", "control-plane", "ssh-server")}


def running(device) -> dict:
    return load_nvue_document(device.get_config(retrieve="running")["running"])


def keeping(management: dict, document: str) -> str:
    """`document` with the switch's own management carried over, as a deploy sends it."""
    merged = copy.deepcopy(management)
    nvtree.merge(merged, load_nvue_document(document))
    return nvtree.dump_yaml([{"set": merged}])


def management_of(device) -> dict:
    config = running(device)
    return {top: {key: config[top][key] for key in keys if key in config.get(top, {})}
            for top, keys in MANAGEMENT.items()}


@pytest.fixture
def lab_leaf(lab_nvue):
    device = lab_nvue.driver("leaf01")
    device.open()
    device.factory_management = management_of(device)  # the factory default the switch booted with
    yield device
    device.close()


@pytest.fixture
def full(lab_leaf):
    """full(CANDIDATE) -> the candidate text a deploy sends to this switch."""
    return lambda document: keeping(lab_leaf.factory_management, document)


def test_switch_boots_from_its_factory_default(lab_leaf):
    config = running(lab_leaf)
    assert config["interface"]["eth0"]["ip"]["vrf"] == "mgmt"
    assert config["system"]["aaa"]["user"]["cumulus"]["role"] == "system-admin"
    assert set(config["system"]["control-plane"]["acl"]) == {"acl-default-dos", "acl-default-whitelist"}


def test_replace_without_management_is_refused_for_the_logged_in_user(lab_leaf):
    before = running(lab_leaf)
    lab_leaf.load_replace_candidate(config=CANDIDATE)
    with pytest.raises(CommitError, match="You cannot delete a logged in user account"):
        lab_leaf.commit_config()
    assert running(lab_leaf) == before


def test_get_network_driver_finds_nvue():
    assert napalm.get_network_driver("nvue") is NVUEDriver


def test_replace_diff_commit_get_config(lab_leaf, full, tmp_path):
    candidate = tmp_path / "startup.yaml"
    candidate.write_text(full(CANDIDATE))
    lab_leaf.load_replace_candidate(filename=str(candidate))
    diff = lab_leaf.compare_config()
    assert "mtu: 9216" in diff and "- set:" in diff
    assert "eth0" not in diff and "aaa" not in diff  # management kept: not part of the change
    lab_leaf.commit_config(message="first")
    assert lab_leaf.compare_config() == ""
    config = lab_leaf.get_config()
    assert load_nvue_document(config["running"]) == load_nvue_document(full(CANDIDATE))
    assert load_nvue_document(config["startup"]) == load_nvue_document(full(CANDIDATE))
    assert config["candidate"] == ""
    assert load_nvue_document(config["running"])["qos"]["roce"]["enable"] == "on"


def test_merge_candidate_patches_pending(lab_leaf, full):
    lab_leaf.load_replace_candidate(config=full(CANDIDATE))
    lab_leaf.commit_config()
    lab_leaf.load_merge_candidate(config="- set:\n    interface:\n      swp2:\n        type: swp\n")
    assert "swp2" in lab_leaf.compare_config()
    lab_leaf.commit_config()
    interfaces = running(lab_leaf)["interface"]
    assert set(interfaces) == {"eth0", "lo", "swp1", "swp2"}


def test_discard_config_drops_pending(lab_leaf):
    lab_leaf.load_replace_candidate(config=CANDIDATE)
    assert lab_leaf.compare_config()
    lab_leaf.discard_config()
    assert lab_leaf.compare_config() == ""


def test_commit_with_revert_in_reverts_without_confirm(lab_leaf, full, lab_wait):
    lab_leaf.load_replace_candidate(config=full(CANDIDATE))
    lab_leaf.commit_config()
    lab_leaf.load_replace_candidate(config=full(SECOND))
    # long enough that the two reads below come before it on a loaded machine too
    lab_leaf.commit_config(revert_in=10)
    assert lab_leaf.has_pending_commit()
    assert running(lab_leaf)["interface"]["swp1"]["link"]["mtu"] == "9000"
    assert lab_wait(lambda: not lab_leaf.has_pending_commit(), timeout=60)
    assert running(lab_leaf)["interface"]["swp1"]["link"]["mtu"] == "9216"


def test_confirm_commit_keeps_config(lab_leaf, full):
    lab_leaf.load_replace_candidate(config=full(CANDIDATE))
    # a timer the confirm beats on a loaded machine too (a 1 s one can expire first); that the
    # confirm stopped it is the switch's own state: no revision waits for confirmation
    lab_leaf.commit_config(revert_in=30)
    lab_leaf.confirm_commit()
    assert not lab_leaf.has_pending_commit()
    assert running(lab_leaf) == load_nvue_document(full(CANDIDATE))
    assert load_nvue_document(lab_leaf.get_config()["startup"]) == load_nvue_document(full(CANDIDATE))
    with pytest.raises(CommitError):
        lab_leaf.confirm_commit()


def test_second_commit_while_pending_is_refused(lab_leaf, full):
    lab_leaf.load_replace_candidate(config=full(CANDIDATE))
    lab_leaf.commit_config(revert_in=30)
    lab_leaf.load_replace_candidate(config=full(SECOND))
    with pytest.raises(CommitError, match="pending"):
        lab_leaf.commit_config()
    lab_leaf.rollback()


def test_rollback_with_pending_rejects_at_once(lab_leaf, full):
    lab_leaf.load_replace_candidate(config=full(CANDIDATE))
    lab_leaf.commit_config()
    lab_leaf.load_replace_candidate(config=full(SECOND))
    lab_leaf.commit_config(revert_in=60)
    started = time.monotonic()
    lab_leaf.rollback()
    assert time.monotonic() - started < 5
    assert not lab_leaf.has_pending_commit()
    assert running(lab_leaf)["interface"]["swp1"]["link"]["mtu"] == "9216"


def test_rollback_applies_previous_revision(lab_leaf, full):
    lab_leaf.load_replace_candidate(config=full(CANDIDATE))
    lab_leaf.commit_config()
    lab_leaf.load_replace_candidate(config=full(SECOND))
    lab_leaf.commit_config()
    lab_leaf.rollback()
    assert running(lab_leaf)["interface"]["swp1"]["link"]["mtu"] == "9216"
    assert load_nvue_document(lab_leaf.get_config()["startup"]) == load_nvue_document(full(CANDIDATE))


def test_undocumented_path_is_refused_and_pending_kept(lab_leaf):
    lab_leaf.load_replace_candidate(config=CANDIDATE)
    before = lab_leaf.compare_config()
    with pytest.raises(ReplaceConfigException, match="qos roce colour"):
        lab_leaf.load_replace_candidate(config="- set:\n    qos:\n      roce:\n        colour: blue\n")
    with pytest.raises(MergeConfigException, match="Invalid config path"):
        lab_leaf.load_merge_candidate(config="- set:\n    routr: {}\n")
    assert lab_leaf.compare_config() == before


def test_get_facts(lab_leaf, full):
    lab_leaf.load_replace_candidate(config=full(CANDIDATE))
    lab_leaf.commit_config()
    facts = lab_leaf.get_facts()
    assert facts["hostname"] == "leaf01"
    assert facts["vendor"] == "NVIDIA"
    assert facts["os_version"] == "5.11.0"
    assert facts["model"] == "MSN5600"
    assert {"lo", "swp1"} <= set(facts["interface_list"])
    assert facts["uptime"] >= 0


def test_515_syntax_generation(lab_start):
    lab = lab_start([LabDevice("leaf15", "cumulus", "5.15")])
    device = lab.driver("leaf15", cumulus_version="5.15")
    device.open()
    try:
        with pytest.raises(ReplaceConfigException, match="qos roce enable"):
            device.load_replace_candidate(config="- set:\n    qos: {roce: {enable: on}}\n")
        management = management_of(device)
        assert management["interface"]["eth0"]["vrf"] == "mgmt"  # 5.15: `interface eth0 vrf`, not `ip vrf`
        device.load_replace_candidate(
            config=keeping(management, "- set:\n    qos: {roce: {state: enabled, mode: lossless}}\n"))
        device.commit_config()
        assert running(device) == {**management, "qos": {"roce": {"state": "enabled", "mode": "lossless"}}}
    finally:
        device.close()


def test_pre_59_generation_saves_startup(lab_start):
    lab = lab_start([LabDevice("leaf58", "cumulus", "5.8")])
    device = lab.driver("leaf58", cumulus_version="5.8")
    assert device.commands.save == "nv config save"
    device.open()
    try:
        candidate = keeping(management_of(device), CANDIDATE)
        device.load_replace_candidate(config=candidate)
        device.commit_config()
        assert load_nvue_document(device.get_config()["startup"]) == load_nvue_document(candidate)
    finally:
        device.close()
