"""Issue 15, finding 3: no Ansible expression reaches inventory.yml as something Ansible evaluates.

The original probe put `deploy.user: "{{ lookup('pipe','id > /tmp/x; echo cumulus') }}"` in the
intent; `fabricgen render` wrote it into inventory.yml unchanged and `ansible -i inventory.yml`
ran the command on the bastion. Now validation refuses it, and the renderer tags anything that
is not plain as `!unsafe`, so even a plan that bypassed validation reads back verbatim. The
checks run the real ansible-inventory and ansible (ansible-core from the venv).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.render.inventory import render_inventory
from tests.conftest import example

BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = shutil.which(name) or str(BIN / name)
    if not Path(path).exists():
        pytest.skip(f"{name} not installed")
    return path


def _env(home: Path) -> dict[str, str]:
    return {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(home), "LC_ALL": "C.UTF-8",
            "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True", "ANSIBLE_LOCAL_TEMP": str(home / "tmp"),
            "ANSIBLE_HOST_KEY_CHECKING": "False", "ANSIBLE_NOCOLOR": "1"}


def _hostile(marker: Path) -> str:
    return "{{ lookup('pipe','id > " + str(marker) + "; echo cumulus') }}"


def test_render_refuses_the_original_deploy_user(tmp_path):
    """The original command: `fabricgen render` of an intent with the lookup in deploy.user."""
    marker = tmp_path / "x"
    text = example("medium").read_text()
    assert "  user: cumulus\n" in text
    intent = tmp_path / "fabric.yaml"
    intent.write_text(text.replace("  user: cumulus\n", f"  user: \"{_hostile(marker)}\"\n", 1))
    out = tmp_path / "out"
    r = subprocess.run([_tool("fabricgen"), "render", str(intent), "-o", str(out)], capture_output=True,
                       text=True, timeout=300, env=_env(tmp_path))
    assert r.returncode != 0
    lines = [ln for ln in r.stderr.splitlines() + r.stdout.splitlines() if "deploy.user" in ln]
    assert len(lines) == 1 and f"{intent}:" in lines[0], r.stderr + r.stdout
    assert "Traceback" not in r.stderr
    assert not out.exists() and not marker.exists()


HOSTILE_TYPES = ["0x10", "1.5", "yes", "null", "1e3", "~", "on", "010"]


def _hostile_plan(marker: Path):
    """The medium plan with hostile strings where validation normally stands in the way."""
    plan = compile_plan(load_intent(example("medium")).intent)
    evil = _hostile(marker)
    host = plan.hosts[0]
    nics = tuple(dataclasses.replace(nic, netdev=HOSTILE_TYPES[i % len(HOSTILE_TYPES)],
                                     rdma=evil if i == 0 else nic.rdma)
                 for i, nic in enumerate(host.nics))
    hosts = (dataclasses.replace(host, nics=nics), *plan.hosts[1:])
    switches = (dataclasses.replace(plan.switches[0], model=evil + "\nx: 1"), *plan.switches[1:])
    return dataclasses.replace(plan, deploy_user=evil, mgmt_interface="{% raw %}", nic_tooling="#{{ 7*7 }}",
                               hosts=hosts, switches=switches)


def _unsafe(value: object) -> str:
    """ansible-inventory --list writes an !unsafe string as {"__ansible_unsafe": text} (its
    AnsibleJSONEncoder): the text is verbatim and still marked as never to be templated."""
    assert isinstance(value, dict) and list(value) == ["__ansible_unsafe"], value
    return value["__ansible_unsafe"]


def test_hostile_strings_come_back_verbatim_from_ansible_inventory(tmp_path):
    marker = tmp_path / "x"
    plan = _hostile_plan(marker)
    text = render_inventory(plan)
    assert "!unsafe" in text
    # PyYAML knows no !unsafe: the plain values still parse as YAML of the same shape
    path = tmp_path / "inventory.yml"
    path.write_text(text)
    r = subprocess.run([_tool("ansible-inventory"), "-i", str(path), "--list"], capture_output=True, text=True,
                       timeout=120, env=_env(tmp_path))
    assert r.returncode == 0, r.stderr
    listed = json.loads(r.stdout)
    meta = listed["_meta"]["hostvars"]
    evil = _hostile(marker)
    leaf = plan.switches[0].name
    assert _unsafe(meta[leaf]["ansible_user"]) == evil
    assert _unsafe(meta[leaf]["fabricgen_model"]) == evil + "\nx: 1"
    assert "x" not in meta[leaf]
    h0 = plan.hosts[0].name
    assert _unsafe(meta[h0]["fabricgen_mgmt_interface"]) == "{% raw %}"
    assert _unsafe(meta[h0]["fabricgen_nic_tooling"]) == "#{{ 7*7 }}"
    rails = meta[h0]["fabricgen_rails"]
    assert _unsafe(rails[0]["rdma"]) == evil
    # netdev names YAML 1.1 would read as numbers, booleans or null stay the strings they were
    assert [nic["netdev"] for nic in rails] == [HOSTILE_TYPES[i % len(HOSTILE_TYPES)] for i in range(len(rails))]
    assert all(isinstance(nic["netdev"], str) for nic in rails)
    assert not marker.exists()


def test_ansible_templating_leaves_the_values_unevaluated(tmp_path):
    """`ansible -m debug -a var=...` templates a variable as a playbook would: nothing runs."""
    marker = tmp_path / "x"
    plan = _hostile_plan(marker)
    path = tmp_path / "inventory.yml"
    path.write_text(render_inventory(plan))
    leaf = plan.switches[0].name
    (tmp_path / "tmp").mkdir()
    r = subprocess.run([_tool("ansible"), "-i", str(path), leaf, "-c", "local", "-m", "ansible.builtin.debug",
                        "-a", "var=ansible_user"], capture_output=True, text=True, timeout=180, env=_env(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    shown = json.loads(r.stdout[r.stdout.index("{"):])
    assert shown == {"ansible_user": _hostile(marker)}       # verbatim: not "cumulus", the lookup's output
    assert not marker.exists()


def test_plain_values_are_written_as_before():
    """Validated names are plain: no tag, JSON-quoted as the golden inventories show."""
    text = render_inventory(compile_plan(load_intent(example("medium")).intent))
    assert "!unsafe" not in text
    assert 'ansible_user: "cumulus"' in text
    data = yaml.safe_load(text)
    assert data["all"]["children"]["switches"]["vars"]["ansible_user"] == "cumulus"
