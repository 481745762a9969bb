"""The run scripts: hostfiles, the Slurm batch script and the mpirun script carry the
plan's hosts, one slot per GPU, one all_reduce_perf per rail group plus the fabric, and
exactly the NCCL keys of the nccl.conf that `fabricgen render` writes (evaluated by a
real shell, so quoting is checked too). And DIR is never a place where user files die."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from generator.acceptance.command import run_write
from tests.cli_runner import run_cli
from tests.conftest import EXAMPLES, example
from tests.unit.test_acceptance_expected import intent_of, planned_runs

COMMAND = "all_reduce_perf -b 1G -e 16G -f 2 -g 1"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, Path]:
    out = {}
    for name in EXAMPLES:
        d = tmp_path_factory.mktemp(name) / "acc"
        assert run_write(str(example(name)), str(d)) == 0
        out[name] = d
    return out


def rendered_nccl_conf(intent: Path, tmp: Path) -> dict[str, str]:
    """KEY=VALUE of hosts/<host>/nccl.conf as `fabricgen render` writes it."""
    out = tmp / "render"
    r = run_cli("render", str(intent), "-o", str(out))
    assert r.returncode == 0, r.stderr
    confs = {p.read_text() for p in out.glob("hosts/*/nccl.conf")}
    assert len(confs) == 1                 # the same file on every host
    pairs = [line.split("=", 1) for line in confs.pop().splitlines() if line and not line.startswith("#")]
    return {k: v for k, v in pairs}


def shell_env(script: Path) -> dict[str, str]:
    """What bash makes of the script's export lines."""
    exports = "\n".join(line for line in script.read_text().splitlines() if line.startswith("export "))
    r = subprocess.run(["env", "-i", "bash", "-c", exports + "\nenv -0"], capture_output=True, timeout=30)
    assert r.returncode == 0, r.stderr
    env = dict(item.split("=", 1) for item in r.stdout.decode().split("\0") if "=" in item)
    return {k: v for k, v in env.items() if k.startswith("NCCL_")}


@pytest.mark.parametrize("name", EXAMPLES)
def test_hostfiles_one_slot_per_gpu(outputs, name: str) -> None:
    gpn = intent_of(name)["topology"]["gpus_per_node"]
    for run_id, hosts in planned_runs(name).items():
        path = outputs[name] / ("hostfile" if run_id == "fabric" else f"hostfile.{run_id}")
        assert path.read_text().splitlines() == [f"{h} slots={gpn}" for h in hosts]


@pytest.mark.parametrize("name", ["small", "medium"])
def test_nccl_environment_is_the_rendered_nccl_conf(outputs, name: str, tmp_path: Path) -> None:
    conf = rendered_nccl_conf(example(name), tmp_path)
    assert "NCCL_IB_HCA" in conf and "NCCL_IB_TC" in conf
    assert shell_env(outputs[name] / "acceptance.sbatch") == conf
    assert shell_env(outputs[name] / "run-mpi.sh") == conf
    env_file = dict(line.split("=", 1) for line in (outputs[name] / "nccl.env").read_text().splitlines())
    assert env_file == conf
    mpirun = [line for line in (outputs[name] / "run-mpi.sh").read_text().splitlines() if line.startswith("mpirun")]
    for line in mpirun:                    # Open MPI forwards only what -x names
        assert set(re.findall(r"-x (NCCL_\w+)", line)) == set(conf)


def test_settings_with_blanks_quotes_and_dollars_survive_the_shell(tmp_path: Path) -> None:
    text = example("small").read_text().replace(
        "switch_os:", "nccl:\n  settings: {NCCL_TOPO_FILE: \"/opt/topo files/it's $HOME.xml\", "
        "NCCL_DEBUG_SUBSYS: \"INIT,NET\"}\nswitch_os:", 1)
    intent = tmp_path / "fabric.yaml"
    intent.write_text(text)
    assert run_write(str(intent), str(tmp_path / "acc")) == 0
    conf = rendered_nccl_conf(intent, tmp_path)
    assert conf["NCCL_TOPO_FILE"] == "/opt/topo files/it's $HOME.xml"
    assert shell_env(tmp_path / "acc" / "acceptance.sbatch") == conf
    assert shell_env(tmp_path / "acc" / "run-mpi.sh") == conf


@pytest.mark.parametrize("name", EXAMPLES)
def test_slurm_script_runs_each_rail_group_then_the_fabric(outputs, name: str) -> None:
    t = intent_of(name)["topology"]
    text = (outputs[name] / "acceptance.sbatch").read_text()
    lines = text.splitlines()
    assert lines[0] == "#!/bin/bash"
    # sbatch reads #SBATCH lines only before the first command
    first_command = next(i for i, line in enumerate(lines) if line and not line.startswith("#"))
    directives = [line for line in lines[:first_command] if line.startswith("#SBATCH")]
    assert f"#SBATCH --nodes={t['nodes']}" in directives
    assert f"#SBATCH --ntasks-per-node={t['gpus_per_node']}" in directives
    assert not any(line.startswith("#SBATCH") for line in lines[first_command:])
    steps = re.findall(r"srun [^\n]*--nodes=(\d+) --ntasks-per-node=(\d+) --nodelist=(\S+) \\\n\s+(.+?) > "
                       r"logs/(\S+)\.log", text)
    runs = planned_runs(name)
    assert [s[4] for s in steps] == list(runs)
    for nodes, per_node, nodelist, command, run_id in steps:
        assert command == COMMAND
        assert nodelist.split(",") == runs[run_id] and int(nodes) == len(runs[run_id])
        assert int(per_node) == t["gpus_per_node"]
    assert text.count(COMMAND) == len(runs)
    r = subprocess.run(["bash", "-n", str(outputs[name] / "acceptance.sbatch")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name", EXAMPLES)
def test_mpirun_script_one_command_per_run(outputs, name: str) -> None:
    gpn = intent_of(name)["topology"]["gpus_per_node"]
    text = (outputs[name] / "run-mpi.sh").read_text()
    steps = re.findall(r"mpirun -np (\d+) --hostfile (\S+) --map-by ppr:(\d+):node .*\\\n\s+(.+?) > logs/(\S+)\.log",
                       text)
    runs = planned_runs(name)
    assert [s[4] for s in steps] == list(runs)
    for np_, hostfile, ppr, command, run_id in steps:
        assert int(np_) == len(runs[run_id]) * gpn and int(ppr) == gpn and command == COMMAND
        assert hostfile == ("hostfile" if run_id == "fabric" else f"hostfile.{run_id}")
    r = subprocess.run(["sh", "-n", str(outputs[name] / "run-mpi.sh")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (outputs[name] / "run-mpi.sh").stat().st_mode & 0o111


def test_refuses_a_foreign_non_empty_directory(tmp_path: Path, capsys) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my notes")
    assert run_write(str(example("small")), str(out)) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(out) in err[0] and "not empty" in err[0]
    assert [p.name for p in out.iterdir()] == ["notes.txt"] and (out / "notes.txt").read_text() == "my notes"
    afile = tmp_path / "file"
    afile.write_text("x")
    assert run_write(str(example("small")), str(afile)) == 1
    assert afile.read_text() == "x"


def test_rewrite_keeps_user_files_and_drops_only_our_stale_ones(tmp_path: Path) -> None:
    out = tmp_path / "acc"
    assert run_write(str(example("medium")), str(out)) == 0
    (out / "logs").mkdir()
    (out / "logs" / "fabric.log").write_text("operator's log")
    (out / "hostfile.group2").write_text("gpu017 slots=8\n")          # edited by the operator
    # the small fabric has no rail group runs: hostfile.group1 is ours and stale, group2 was edited
    assert run_write(str(example("small")), str(out)) == 0
    names = sorted(p.name for p in out.iterdir())
    assert "hostfile.group1" not in names and "hostfile.group2" in names
    assert (out / "logs" / "fabric.log").read_text() == "operator's log"
    assert json.loads((out / "expected.json").read_text())["fabric"] == "small"
    assert not [p for p in out.iterdir() if p.name.startswith(".")]   # no temporary files left
