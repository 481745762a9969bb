"""A switch that refuses the password says where the password came from and how to set it (issue 36):
a lab started without FABRICGEN_PASSWORD keeps a random one in DIR/password, and endpoints.yml's
password_file comes before $FABRICGEN_PASSWORD, so exporting it afterwards changed nothing, silently."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from tests.integration.small_fabric import SWITCHES, small_fabric

pytestmark = pytest.mark.integration


def test_auth_failure_names_the_password_source_and_the_fix(tmp_path, lab_start):
    fab = small_fabric(tmp_path, lab_start)
    stale = tmp_path / "stale-password"           # what a lab started without the variable left behind
    stale.write_text("random-from-an-earlier-lab-up\n")
    os.chmod(stale, 0o600)
    endpoints = yaml.safe_load(open(fab.endpoints))
    endpoints["password_file"] = str(stale)
    by_file = fab.lab.directory / "endpoints-mine.yml"       # beside the lab's known_hosts
    by_file.write_text(yaml.safe_dump(endpoints))
    env = {**fab.env, "FABRICGEN_PASSWORD": fab.lab.password}     # exported afterwards: the right one

    drift = fab.run(fab.command("drift", str(fab.intent), "--endpoints", str(by_file), "--only", "switches",
                                "--format", "json"), env=env)
    assert drift.returncode == 1, drift.stderr
    for name in SWITCHES:
        error = json.loads(drift.stdout)["devices"][name]["error"]
        assert "authentication failed for user 'cumulus'" in error
        assert error.endswith(f"the password is read from password_file {stale}, which comes before "
                              "$FABRICGEN_PASSWORD: write the switch's password there, or use "
                              f"`password_env: FABRICGEN_PASSWORD` in {by_file.name}")
    assert fab.lab.password not in drift.stdout + drift.stderr

    # the fix the line gives works
    del endpoints["password_file"]
    endpoints["password_env"] = "FABRICGEN_PASSWORD"
    by_file.write_text(yaml.safe_dump(endpoints))
    drift = fab.run(fab.command("drift", str(fab.intent), "--endpoints", str(by_file), "--only", "switches",
                                "--format", "json"), env=env)
    assert drift.returncode == 3, drift.stdout + drift.stderr        # read: not deployed yet, so drift
    assert all(d["status"] == "drift" for d in json.loads(drift.stdout)["devices"].values())
