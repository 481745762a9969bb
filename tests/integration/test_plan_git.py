"""`fabricgen plan` against a real git repository with two commits of an intent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from generator.gitops.plan import run_plan
from generator.gitops.plan_sides import make_plan
from tests.cli_runner import run_cli

pytestmark = pytest.mark.integration

INTENT = """\
fabric: {name: tiny}
topology:
  kind: leaf-spine
  nodes: NODES
  gpus_per_node: 8
  rails: 2
  nic_speed: 400G
  switches:
    leaf: {model: SN4700}
    spine: {model: SN4700}
  cables: {host_leaf: HOST_LEAF, leaf_spine: 30}
switch_os: {name: cumulus, version: "5.11"}
hosts:
  name: "gpu{n:02d}"
  mgmt_interface: eno1
  rails:
    - {netdev: ens1f0np0, rdma: mlx5_0}
    - {netdev: ens2f0np0, rdma: mlx5_1}
"""


def intent(nodes: int = 4, host_leaf: int = 2) -> str:
    return INTENT.replace("NODES", str(nodes)).replace("HOST_LEAF", str(host_leaf))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    (root / "inventories" / "tiny").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "ci@example.invalid")
    git(root, "config", "user.name", "ci")
    git(root, "config", "commit.gpgsign", "false")
    return root


def commit(repo: Path, text: str, message: str) -> Path:
    path = repo / "inventories" / "tiny" / "fabric.yaml"
    path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return path


def test_host_leaf_cable_change_touches_only_the_leaf(repo):
    commit(repo, intent(host_leaf=2), "base")
    path = commit(repo, intent(host_leaf=5), "longer host cables")
    result = make_plan(str(path), "HEAD~1")
    assert set(result.devices) == {"tiny-leaf-1", "fabric"}
    assert result.summary() == {"added": 0, "removed": 0, "changed": 2, "unchanged": 6}
    changes = result.devices["tiny-leaf-1"].files["startup.yaml"]["changes"]
    by_path = {c["path"]: c for c in changes}
    # the host-facing ports move to the new PFC profile; the spine-facing ones keep theirs
    for port in range(1, 9):
        c = by_path[f"interface.swp{port}.qos.pfc.profile"]
        assert (c["op"], c["old"], c["new"]) == ("changed", "roce-lossless-2m", "roce-lossless-5m")
    assert by_path["qos.pfc.roce-lossless-2m"]["op"] == "removed"
    assert by_path["qos.pfc.roce-lossless-5m"]["new"]["cable-length"] == 5      # typed as the file writes it
    assert not any("swp17" in p for p in by_path)
    assert set(by_path) == {f"interface.swp{p}.qos.pfc.profile" for p in range(1, 9)} | {
        "qos.pfc.roce-lossless-2m", "qos.pfc.roce-lossless-5m"}

    done = run_cli("plan", str(path), "--against", "HEAD~1", "--format", "json")
    assert done.returncode == 3, done.stderr
    doc = json.loads(done.stdout)
    assert set(doc) == {"summary", "risk", "bom", "cables", "groups", "devices"}
    # 5 m is beyond a passive DAC's 3 m (plan/bom.py): the 8 host cables become optics and fibre
    delta = {(r["category"], r["item"]): (r["before"], r["after"]) for r in doc["bom"]["delta"]}
    assert delta[("cable", "400G DAC, host-leaf, 2 m")] == (8, 0)
    assert delta[("transceiver", "400G SR4 NIC transceiver, host-leaf, host end")] == (0, 8)
    cables = doc["summary"].pop("cables")
    assert doc["summary"] == {"added": 0, "removed": 0, "changed": 2, "unchanged": 6}
    # a longer cable on the same two ports: no cable changes ends
    assert (cables["moved"], cables["removed"], cables["added"]) == (0, 0, 0) and cables["kept"] > 0
    assert doc["devices"]["tiny-leaf-1"]["status"] == "changed"


def single_switch(nodes: int) -> str:
    # one switch: in leaf-spine a new node also adds leaf uplinks (exact oversubscription), so spines move too
    return (intent(nodes=nodes).replace("kind: leaf-spine", "kind: single-switch")
            .replace("    spine: {model: SN4700}\n", "").replace(", leaf_spine: 30", ""))


def test_adding_a_node_touches_its_leaf_and_adds_a_host(repo):
    commit(repo, single_switch(4), "base")
    path = commit(repo, single_switch(5), "one more node")
    result = make_plan(str(path), "HEAD~1")
    statuses = {name: d.status for name, d in result.devices.items()}
    assert statuses == {"fabric": "changed", "tiny-leaf-1": "changed", "gpu05": "added"}
    leaf = {c["path"]: c for c in result.devices["tiny-leaf-1"].files["startup.yaml"]["changes"]}
    assert leaf["interface.swp9"]["op"] == "added"
    assert leaf["interface.swp9"]["new"]["description"] == "gpu05:ens1f0np0"
    host = result.devices["gpu05"].files
    assert {"netplan.yaml", "sysctl.conf", "nccl.conf", "roce-qos.sh"} <= set(host)
    assert all(f["status"] == "added" and "unified" in f for f in host.values())

    done = run_cli("plan", str(path), "--against", "HEAD~1", "--format", "markdown")
    assert done.returncode == 3, done.stderr
    md = done.stdout
    assert "**Devices:** 1 added, 0 removed, 2 changed, 4 unchanged" in md
    assert "<details><summary><code>gpu05</code>: added" in md
    assert "| <code>tiny-leaf-1</code> | changed |" in md


def test_unchanged_exits_0_and_cli_contract(repo):
    path = commit(repo, intent(), "base")
    (repo / "README").write_text("unrelated\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "docs only")
    cli = [str(Path(sys.executable).parent / "fabricgen")]
    done = subprocess.run([*cli, "plan", str(path), "--against", "HEAD~1"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "no changes" in done.stdout
    done = subprocess.run([*cli, "plan", str(path), "--against", "no-such-ref", "--format", "json"],
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "no-such-ref" in done.stderr


def test_against_a_rendered_directory_and_a_ref_without_the_intent(repo, tmp_path, capsys):
    (repo / "README").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "before the fabric existed")
    path = commit(repo, intent(), "fabric")
    result = make_plan(str(path), "HEAD~1")
    assert all(d.status == "added" for d in result.devices.values())
    assert result.summary()["added"] == 8

    out = tmp_path / "rendered"
    done = subprocess.run([str(Path(sys.executable).parent / "fabricgen"), "render", str(path), "-o", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert run_plan(str(path), against=str(out), fmt="text").exit_code == 0
    path.write_text(intent().replace("nodes: 4", "nodes: 4000x"))
    report = run_plan(str(path), against=str(out), fmt="text")
    assert report.exit_code == 1 and report.result is None
    assert any("topology.nodes" in line for line in report.problems)
    assert capsys.readouterr() == ("", "")      # the library reports; only the CLI prints
