"""`fabricgen plan --out PLANFILE` on a pull request, `fabricgen deploy --plan PLANFILE` on merge
(issue 36, item 2), through the real command line against the lab: the saved plan applies; a
hand edit on one switch (over SSH, as a person makes it) or an edit of the intent since the plan
refuses, naming what moved, and nothing reaches any switch."""

from __future__ import annotations

import json
import stat

import pytest
from netmiko import ConnectHandler

from tests.integration.small_fabric import SWITCHES, small_fabric

pytestmark = pytest.mark.integration


def hand_edit(lab, name: str, *commands: str) -> None:
    """What an operator types on the switch: an SSH login and `nv` commands."""
    conn = ConnectHandler(device_type="cumulus_linux", host="127.0.0.1", port=lab.port(name),
                          username=lab.username(name), password=lab.password, ssh_strict=True,
                          system_host_keys=False, alt_host_keys=True, alt_key_file=str(lab.known_hosts),
                          allow_agent=False, use_keys=False, fast_cli=True)
    try:
        for command in commands:
            output = conn.send_command(command, expect_string=r"[$#]\s*$", read_timeout=10)
            assert "Error" not in output, output
    finally:
        conn.disconnect()


@pytest.fixture
def fab(tmp_path, lab_start):
    fabric = small_fabric(tmp_path, lab_start)
    before = tmp_path / "before"          # what main renders: the plan's --against
    done = fabric.run(fabric.command("render", str(fabric.intent), "-o", str(before)))
    assert done.returncode == 0, done.stderr
    fabric.before = before
    return fabric


def make_plan(fab, out, *extra: str):
    return fab.run(fab.command("plan", str(fab.intent), "--against", str(fab.before), "--out", str(out),
                               "--endpoints", fab.endpoints, *extra))


def state(fab) -> dict:
    """What each switch runs and whether a commit waits: nothing pushed leaves both as they were."""
    return {name: (fab.running(name), fab.pending(name)) for name in SWITCHES}


def test_saved_plan_applies(fab, tmp_path):
    planfile = tmp_path / "fabric.plan.json"
    made = make_plan(fab, planfile)
    assert made.returncode == 0, made.stderr
    assert "plan saved to" in made.stderr and f"--plan {planfile}" in made.stderr
    assert stat.S_IMODE(planfile.stat().st_mode) == 0o600         # candidates hold password hashes
    doc = json.loads(planfile.read_text())
    assert sorted(doc["running_sha256"]) == sorted(SWITCHES)
    assert doc["files"]["switches/tiny-leaf-1/startup.yaml"] == fab.rendered["tiny-leaf-1"]
    again = tmp_path / "again.plan.json"
    assert make_plan(fab, again).returncode == 0
    assert again.read_bytes() == planfile.read_bytes()            # same intent, same switches: same bytes

    applied = fab.run(fab.command("deploy", str(fab.intent), "--plan", str(planfile), "--endpoints", fab.endpoints,
                                  "--yes", "--only", "switches"))
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "3 to change" in applied.stdout
    assert all(fab.deployed(name) for name in SWITCHES)


def test_hand_edit_on_one_switch_refuses_the_plan(fab, tmp_path):
    planfile = tmp_path / "fabric.plan.json"
    assert make_plan(fab, planfile).returncode == 0
    hand_edit(fab.lab, "tiny-spine-2", "nv set interface swp1 link mtu 1500", "nv config apply -y")
    before = state(fab)

    refused = fab.run(fab.command("deploy", str(fab.intent), "--plan", str(planfile), "--endpoints", fab.endpoints,
                                  "--yes", "--only", "switches"))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    out = refused.stdout + refused.stderr
    assert "tiny-spine-2" in out and "running config changed since the plan was made" in out
    assert "1 switch(es) changed since the plan was made: tiny-spine-2" in refused.stderr
    assert "nothing was pushed" in refused.stderr.splitlines()[-1]
    assert "tiny-leaf-1: refused" not in out and "tiny-spine-1: refused" not in out
    assert state(fab) == before


def test_intent_edit_refuses_the_plan(fab, tmp_path):
    planfile = tmp_path / "fabric.plan.json"
    assert make_plan(fab, planfile).returncode == 0
    before = state(fab)
    fab.intent.write_text(fab.intent.read_text().replace("leaf_spine: 30", "leaf_spine: 50"))

    refused = fab.run(fab.command("deploy", str(fab.intent), "--plan", str(planfile), "--endpoints", fab.endpoints,
                                  "--yes"))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    lines = refused.stderr.splitlines()
    assert any(f"{planfile}: intent {fab.intent} changed since the plan was made" in ln for ln in lines), lines
    render = next(ln for ln in lines if ": render: " in ln)
    assert "switches/tiny-leaf-1/startup.yaml" in render          # a longer cable: new PFC headroom
    assert lines[-1].endswith("nothing was pushed")
    assert refused.stdout == ""                                    # no switch was even contacted
    assert state(fab) == before


def test_a_plan_without_endpoints_says_switches_are_not_checked(fab, tmp_path):
    planfile = tmp_path / "fabric.plan.json"
    made = fab.run(fab.command("plan", str(fab.intent), "--against", str(fab.before), "--out", str(planfile)))
    assert made.returncode == 0, made.stderr
    assert "running_sha256" not in json.loads(planfile.read_text())
    before = state(fab)
    dry = fab.run(fab.command("deploy", str(fab.intent), "--plan", str(planfile), "--endpoints", fab.endpoints,
                              "--dry-run", "--only", "switches"))
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert f"warning: {planfile} holds no running-config hashes (made without --endpoints)" in dry.stderr
    assert "would change 3" in dry.stdout
    assert state(fab) == before
