"""The lab's `hold` fault (issue 35): tests act at a point of a deploy instead of racing a timer."""

from __future__ import annotations

import pytest

from generator.lab.faults import Faults, held_file, write_faults


@pytest.mark.parametrize("mode", ["any", "pending"])
def test_hold_modes(mode):
    assert Faults.from_dict({"hold": mode}).hold == mode
    assert Faults.from_dict({}).hold is None


@pytest.mark.parametrize("bad", ["always", True, 1])
def test_an_unknown_hold_is_refused_before_a_test_runs_without_it(tmp_path, bad):
    with pytest.raises(ValueError, match="hold: give one of any, pending"):
        write_faults(tmp_path, "sw", {"hold": bad})
    assert not (tmp_path / "faults" / "sw.json").exists()


def test_the_held_marker_sits_beside_the_fault_file(tmp_path):
    assert held_file(tmp_path, "sw") == tmp_path / "faults" / "sw.held"
