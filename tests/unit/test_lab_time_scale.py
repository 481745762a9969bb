"""`lab up --time-scale` is checked before anything is written (control.lab_up)."""

from __future__ import annotations

import pytest

from generator.lab.control import LabDevice, LabError, lab_up


@pytest.mark.parametrize("scale", [0, 0.5, 601])
def test_a_time_scale_out_of_range_is_one_line_and_writes_nothing(tmp_path, scale):
    directory = tmp_path / "lab"
    with pytest.raises(LabError, match=r"--time-scale .*: give 1-600"):
        lab_up([LabDevice("leaf01", "cumulus")], directory, time_scale=scale)
    assert not directory.exists()
