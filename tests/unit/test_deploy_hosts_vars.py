"""The batch play keywords reach playbooks/hosts.yml as extra vars, read from the rendered inventory.

Ansible templates a play's `serial` and `max_fail_percentage` with extra vars and play vars only
(PlaybookExecutor post-validates the play before any host's variables exist), so the inventory's
`hosts` group vars would be ignored there: generator/deploy/hosts.py reads them from the inventory.
"""

from __future__ import annotations

import yaml

from generator.checks.runner import run_checks
from generator.deploy.hosts import APPLY_PLAY, inventory_play_vars, playbook_path
from generator.intent.loader import load_intent
from generator.render.inventory import render_inventory
from tests.conftest import example


def _inventory(tmp_path, deploy_hosts: dict | None = None):
    data = yaml.safe_load(example("small").read_text())
    if deploy_hosts is not None:
        data.setdefault("deploy", {})["hosts"] = deploy_hosts
    intent = tmp_path / "fabric.yaml"
    intent.write_text(yaml.safe_dump(data, sort_keys=False))
    plan = run_checks(load_intent(intent)).plan
    path = tmp_path / "inventory.yml"
    path.write_text(render_inventory(plan))
    return path


def test_defaults_from_the_rendered_inventory(tmp_path):
    assert inventory_play_vars(_inventory(tmp_path)) == {"fabricgen_hosts_serial": [1, "10%"],
                                                         "fabricgen_hosts_max_fail_percentage": 0}


def test_intent_settings_and_an_unsafe_tagged_hook(tmp_path):
    # a drain command with quotes and spaces is written `!unsafe "..."` (never templated by Ansible)
    path = _inventory(tmp_path, {"canary": 2, "batch": 16, "max_fail_percentage": 5, "scheduler": "slurm",
                                 "drain": 'scontrol update NodeName={host} State=DRAIN Reason="fabricgen: rollout"',
                                 "undrain": "scontrol update NodeName={host} State=RESUME"})
    assert "!unsafe" in path.read_text()
    assert inventory_play_vars(path) == {"fabricgen_hosts_serial": [2, 16], "fabricgen_hosts_max_fail_percentage": 5}


def test_inventory_without_the_settings(tmp_path):
    path = tmp_path / "inventory.yml"
    path.write_text("all:\n  children:\n    hosts:\n      hosts:\n        gpu01: {ansible_host: 192.0.2.1}\n")
    assert inventory_play_vars(path) == {}
    assert inventory_play_vars(tmp_path / "missing.yml") == {}


def test_the_playbook_reads_them_as_play_keywords():
    plays = yaml.safe_load(playbook_path().read_text())
    apply = next(p for p in plays if p["name"] == APPLY_PLAY)
    assert "fabricgen_hosts_serial" in apply["serial"]
    assert "fabricgen_hosts_max_fail_percentage" in apply["max_fail_percentage"]
    assert apply["become"] is True and plays[0]["become"] is True
    assert "serial" not in plays[0], "pre-flight reads every host at once"
