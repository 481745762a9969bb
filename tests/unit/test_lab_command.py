"""`lab up`'s library (generator/lab/command.py) prints nothing: a refusal is a LabUpError whose one
line the CLI prints after "error: ", warnings come back for the CLI to print (issue 35). Starting
the lab is left to the integration tests (tests/integration/test_lab_cli.py, test_lab_ztp.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.checks.runner import run_checks
from generator.intent.loader import load_intent
from generator.lab.command import LabUpError, prepare, started_lines

INTENT = "fabric: {name: t}\ntopology: {kind: leaf-spine, nodes: 2}\n"


@pytest.fixture
def plan(tmp_path):
    (tmp_path / "fabric.yaml").write_text(INTENT)
    return run_checks(load_intent(tmp_path / "fabric.yaml")).plan


@pytest.mark.parametrize(("options", "line"), [
    ({"inventory": "inv.csv"}, "lab up: --inventory is for --ztp (the MACs and serials of factory switches); "
                               "add --ztp"),
    ({"nos_version": "4.4"}, "lab up: --nos-version '4.4' is not a cumulus release the lab runs; give e.g. 5.9 "
                             "or 5.11"),
    ({"hosts": 3}, "lab up: --hosts 3: give 0 (switches only) up to 2 (the plan's hosts)"),
    ({"wiring": "gone.csv"}, "lab up: gone.csv: cannot read the wiring file: No such file or directory"),
])
def test_a_refusal_is_one_line_and_nothing_printed(plan, tmp_path, monkeypatch, capfd, options, line):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LabUpError) as refused:
        prepare(plan, password=None, **options)
    assert str(refused.value) == line and refused.value.exit_code == 1
    assert capfd.readouterr() == ("", "")


def test_each_switch_gets_its_plan_eth0_and_the_lines_say_what_runs(plan, capfd):
    lab = prepare(plan, password=None, hosts=1)
    assert capfd.readouterr() == ("", "")
    assert [(d.name, d.mgmt_address) for d in lab.devices] == [(sw.name, f"{sw.mgmt_ip}/{plan.mgmt_pool.split('/')[1]}")
                                                               for sw in plan.switches]
    assert [h.name for h in lab.hosts] == [plan.hosts[0].name] and lab.warnings == ()
    assert started_lines(lab, Path("lab"), Path("lab/endpoints.yml")) == [
        f"{len(plan.switches)} simulated cumulus switches and 1 GPU servers up; endpoints: lab/endpoints.yml"]


def test_ztp_warnings_come_back_not_printed(plan, tmp_path, capfd):
    first = plan.switches[0].name
    (tmp_path / "inv.csv").write_text(f"name,serial,mac\n{first},SN1,0c:42:a1:00:00:01\n")
    lab = prepare(plan, password=None, ztp=True, inventory=str(tmp_path / "inv.csv"))
    assert capfd.readouterr() == ("", "")
    missing = [sw.name for sw in plan.switches[1:]]
    assert lab.warnings == (f"warning: {tmp_path / 'inv.csv'}: {len(missing)} switch(es) without a row boot with a "
                            f"MAC nobody wrote down and get no DHCP answer: {', '.join(missing)}",)
    assert lab.username == "cumulus" and lab.ztp_user == "cumulus"
    assert started_lines(lab, Path("lab"), Path("lab/endpoints.yml"))[0].endswith(
        "up waiting for ZTP (`fabricgen lab ztp`); endpoints: lab/endpoints.yml")
