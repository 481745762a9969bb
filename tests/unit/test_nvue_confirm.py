"""The NVUE confirm flow reads only the verified shapes (commands.py "Confirm flow" table)."""

from __future__ import annotations

import json

import pytest
from napalm.base.exceptions import CommitError

from generator.devices.nvue import NVUEDriver, _history_rev
from generator.devices.ssh import CommandFailed
from tests.unit.test_ssh_status import Scripted

REVISIONS = "nv config revision -o json"


def test_history_entry_shapes():
    # NVIDIA ngts (NVOS 2022): the revision one level down, spelled rev_id
    assert _history_rev({"apply-id": "n/2", "apply-meta": {"rev_id": "7", "user": "admin"},
                         "date": "2022-08-01T10:51:46+03:00", "ref": "apply/x/done"}) == "7"
    # ngts 2024 (ConfigConsts.REVISION_ID = "rev-id"), top level
    assert _history_rev({"rev-id": 12, "ref": "rev_12_apply_1", "user": "admin"}) == "12"
    assert _history_rev({"ref": "rev_12_apply_1"}) is None
    assert _history_rev({"rev-id": True}) is None
    assert _history_rev(["rev-id", 3]) is None


def test_previous_revision_is_the_newest_other_than_the_current():
    history = [{"apply-meta": {"rev_id": "9"}}, {"rev-id": "9"}, {"rev-id": "8"}, {"rev-id": "5"}]
    fake = Scripted(NVUEDriver, {"nv config history -o json": (json.dumps(history), 0)})
    assert fake.driver._previous_revision() == "8"


def test_pending_confirm_is_the_revision_in_state_confirm():
    listing = {"1": {"state": "superseded"}, "12": {"state": "confirm"}, "13": {"state": "pending"}}
    fake = Scripted(NVUEDriver, {REVISIONS: (json.dumps(listing), 0),
                                 "nv config apply 12 --confirm-yes": ("", 0)})
    assert fake.driver.has_pending_commit()
    fake.driver.confirm_commit()
    assert fake.sent[-1].startswith("nv config apply 12 --confirm-yes; echo ")


def test_nothing_pending_when_no_revision_waits():
    listing = {"1": {"state": "applied"}, "2": {"state": "confirm_fail"}}
    fake = Scripted(NVUEDriver, {REVISIONS: (json.dumps(listing), 0)})
    assert not fake.driver.has_pending_commit()
    with pytest.raises(CommitError, match="no commit is pending"):
        fake.driver.confirm_commit()


def test_unreadable_revision_list_is_a_failure_not_nothing_pending():
    for output, status in (("[1, 2]", 0), ("{not json", 0), ("", 1)):
        fake = Scripted(NVUEDriver, {REVISIONS: (output, status)})
        with pytest.raises(CommandFailed):
            fake.driver.has_pending_commit()


def test_rollback_rejects_the_waiting_revision():
    listing = {"4": {"state": "confirm"}}
    fake = Scripted(NVUEDriver, {REVISIONS: (json.dumps(listing), 0),
                                 "nv config apply 4 --confirm-no": ("", 0)})
    fake.driver.rollback()
    assert fake.sent[-1].startswith("nv config apply 4 --confirm-no; echo ")
