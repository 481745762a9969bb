"""The batch play keywords reach playbooks/hosts.yml as extra vars, read from the rendered inventory.

Ansible templates a play's `serial` and `max_fail_percentage` with extra vars and play vars only
(PlaybookExecutor post-validates the play before any host's variables exist), so the inventory's
`hosts` group vars would be ignored there: generator/deploy/hosts.py reads them from the inventory.
"""

from __future__ import annotations

import yaml

from generator.checks.runner import run_checks
from generator.deploy.hosts import (
    APPLY_PLAY,
    FORKS_MAX,
    FORKS_MIN,
    inventory_forks,
    inventory_play_vars,
    playbook_path,
)
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


def _fleet(tmp_path, hosts: int, group_vars: dict):
    """An inventory of HOSTS hosts in the `hosts` group, as generator/render/inventory.py lays it out."""
    path = tmp_path / f"fleet-{hosts}.yml"
    path.write_text(yaml.safe_dump({"all": {"children": {"hosts": {
        "vars": group_vars, "hosts": {f"gpu{i:04d}": {} for i in range(hosts)}}}}}))
    return path


def test_forks_follow_the_largest_batch_within_bounds(tmp_path):
    """Ansible's default 5 forks would change a batch of 50 hosts five at a time (issue 33, item 1)."""
    serial = {"fabricgen_hosts_serial": [1, "10%"]}
    assert inventory_forks(_fleet(tmp_path, 200, serial)) == 20          # 10 % of 200
    assert inventory_forks(_fleet(tmp_path, 3, serial)) == FORKS_MIN     # never below Ansible's default
    assert inventory_forks(_fleet(tmp_path, 2000, serial)) == FORKS_MAX  # bounded: one process per fork
    assert inventory_forks(_fleet(tmp_path, 40, {"fabricgen_hosts_serial": [1, 16]})) == 16
    # deploy.hosts.forks wins; a check run (serial 0: every host at once) takes the hosts, bounded
    assert inventory_forks(_fleet(tmp_path, 200, {**serial, "fabricgen_hosts_forks": 8})) == 8
    assert inventory_forks(_fleet(tmp_path, 30, serial), 0) == 30
    # the rendered inventory: deploy.hosts.forks reaches it
    assert inventory_forks(_inventory(tmp_path, {"forks": 12})) == 12


def test_the_playbook_runs_with_those_forks(tmp_path, monkeypatch):
    import generator.deploy.hosts as hosts_mod

    seen = {}
    monkeypatch.setattr(hosts_mod, "run_playbook", lambda *a, **kw: seen.update(kw))
    (tmp_path / "render" / "hosts").mkdir(parents=True)
    hosts_mod.run_hosts_playbook(tmp_path / "render", _fleet(tmp_path, 300, {"fabricgen_hosts_serial": [1, "10%"]}))
    assert seen["forks"] == 30
