"""roce-qos.sh --health and a drain it did not set (issue 33, item 3).

`scontrol update NodeName=X State=DRAIN Reason=...` over a drain replaces its reason, user and time
(Slurm node_mgr.c update_node), so an operator's RMA note would be lost. --health marks its reasons
"fabricgen-roce-qos:", drains only a node without a reason, and resumes only its own drain once every
setting is in place (as LBNL NHC does). The fake scontrol keeps reason, user and time as slurmctld
does (tests/integration/fake_nic.py FAKE_SCONTROL).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_nic import reset_nic_qos
from test_roce_qos_script import NICS, _root, _run, _settled, fake_env  # noqa: F401  (fixture)

pytestmark = [pytest.mark.integration]

NODE = "gpu-a01"
ADMIN = {"jobs": 0, "drain": True, "reason": "RMA 4711: replace the PSU", "by": "alice", "at": "2026-11-30T09:15:00"}


def _nodes(env: dict) -> dict:
    return json.loads((Path(env["FAKE_NIC_STATE"]) / "scontrol-nodes.json").read_text())


def _set(env: dict, node: dict) -> None:
    path = Path(env["FAKE_NIC_STATE"]) / "scontrol-nodes.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({NODE: node}))


def _updates(log: Path) -> list[str]:
    return [c for c in log.read_text().splitlines() if c.startswith("scontrol")]


def test_an_operators_drain_keeps_reason_user_and_time(tmp_path, fake_env):  # noqa: F811
    env, log = fake_env
    env = {**env, "SLURMD_NODENAME": NODE}
    script = _settled(tmp_path, env)
    _set(env, ADMIN)
    reset_nic_qos(_root(env), Path(env["FAKE_NIC_STATE"]), NICS[0])
    log.write_text("")
    health = _run(script, env, "--health")
    assert health.returncode == 1, health.stdout
    assert _updates(log) == [], "no scontrol update on a node someone else drained"
    assert _nodes(env)[NODE] == ADMIN
    assert (f"kept: slurm node {NODE} is drained or down already (Reason={ADMIN['reason']}): not replaced, it is "
            "not fabricgen-roce-qos:'s") in health.stdout
    # all in place again: an operator's drain is not --health's to resume
    assert _run(script, env).returncode == 0
    assert _run(script, env, "--health").returncode == 0
    assert _updates(log) == [] and _nodes(env)[NODE] == ADMIN


def test_its_own_drain_is_resumed_once_all_is_in_place(tmp_path, fake_env):  # noqa: F811
    env, log = fake_env
    env = {**env, "SLURMD_NODENAME": NODE}
    script = _settled(tmp_path, env)
    reset_nic_qos(_root(env), Path(env["FAKE_NIC_STATE"]), NICS[0])
    drained = _run(script, env, "--health")
    assert drained.returncode == 1
    reason = _nodes(env)[NODE]["reason"]
    assert reason.startswith("fabricgen-roce-qos: ") and _nodes(env)[NODE]["drain"], _nodes(env)
    # the next check finds its own drain with the same reason: no update (slurmctld would reset its time)
    log.write_text("")
    again = _run(script, env, "--health")
    assert again.returncode == 1 and _updates(log) == [], _updates(log)
    assert _run(script, env).returncode == 0                # the unit re-applies
    log.write_text("")
    healthy = _run(script, env, "--health")
    assert healthy.returncode == 0, healthy.stdout
    assert _updates(log) == [f"scontrol update NodeName={NODE} State=RESUME"]
    assert f"changed: slurm node {NODE}: State=RESUME" in healthy.stdout
    assert _nodes(env)[NODE]["drain"] is False


def test_a_rollout_drain_is_neither_replaced_nor_resumed(tmp_path, fake_env):  # noqa: F811
    """The rollout marks its drains "fabricgen:": another owner as far as --health goes."""
    env, log = fake_env
    env = {**env, "SLURMD_NODENAME": NODE}
    script = _settled(tmp_path, env)
    rollout = {**ADMIN, "reason": "fabricgen:deploy", "by": "root"}
    _set(env, rollout)
    log.write_text("")
    assert _run(script, env, "--health").returncode == 0
    reset_nic_qos(_root(env), Path(env["FAKE_NIC_STATE"]), NICS[0])
    assert _run(script, env, "--health").returncode == 1
    assert _updates(log) == [] and _nodes(env)[NODE] == rollout


def test_an_unreadable_node_is_not_drained(tmp_path, fake_env):  # noqa: F811
    """Unsure is someone else's: a `scontrol show node` that fails leaves the node as it is."""
    env, log = fake_env
    script = _settled(tmp_path, env)
    bin_dir = Path(env["PATH"].split(":")[0])
    real = (bin_dir / "scontrol").read_text()
    (bin_dir / "scontrol").write_text(real.replace('if args[:2] == ["show", "node"]',
                                                   'if args[:2] == ["show", "node"]:\n'
                                                   '    print("slurm_load_node error: Unable to contact slurm '
                                                   'controller (connect failure)", file=sys.stderr)\n'
                                                   '    sys.exit(1)\nif False', 1))
    reset_nic_qos(_root(env), Path(env["FAKE_NIC_STATE"]), NICS[0])
    log.write_text("")
    health = _run(script, {**env, "SLURMD_NODENAME": NODE}, "--health")
    assert health.returncode == 1
    assert _updates(log) == []
    assert (f"error: scontrol show node {NODE} failed: slurm_load_node error: Unable to contact slurm controller "
            "(connect failure): node not drained") in health.stdout, health.stdout
