"""The release gate's reading of what a switch prints (issue 23, item 5). Inputs are the strings
the NOS documents: NVUE `nv show system` product-release "5.11.0" / build "Cumulus Linux 5.11.0",
SONiC `show version` branch "202411" (None for master builds)."""

from __future__ import annotations

import pytest

from generator.deploy.release_gate import release_name, release_refusal


@pytest.mark.parametrize("running", ["5.11.0", "5.11", "Cumulus Linux 5.11.2", "5.11.0.0026"])
def test_same_cumulus_release_passes(running):
    assert release_refusal("cumulus", running, (5, 11)) is None


@pytest.mark.parametrize(("running", "words"), [
    ("5.9.1", "runs Cumulus Linux 5.9.1, the intent renders 5.11"),
    ("Cumulus Linux 5.1.0", "runs Cumulus Linux 5.1.0, the intent"),
    ("5.110.0", "renders 5.11"),
    ("", "cannot read"),
])
def test_other_cumulus_release_is_refused(running, words):
    line = release_refusal("cumulus", running, (5, 11))
    assert line is not None and words in line and "\n" not in line


def test_sonic_branch_is_compared_as_sonic_names_it():
    assert release_name("sonic", (2024, 5)) == "202405"
    assert release_refusal("sonic", "202405", (2024, 5)) is None
    assert "runs SONiC 202311, the intent renders 202411" in release_refusal("sonic", "202311", (2024, 11))
    assert "names no SONiC release branch" in release_refusal("sonic", None, (2024, 11))
