"""The burn-in schedule (issue 39 item 1): every cable of the plan carries traffic in some round,
every NIC port meets two different peers over its host-leaf cable, no port is in two pairs of one
round, the same intent gives the same bytes, and the generated script, run by a real shell
against a stand-in ssh, hands each host the perftest options of its side."""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from generator.acceptance.command import run_burnin
from tests.conftest import example


@pytest.fixture(scope="module")
def rail(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("burnin") / "rail"
    assert run_burnin(str(example("rail-optimized")), str(out)) == 0
    return out


def _doc(out: Path) -> dict:
    return json.loads((out / "burnin.json").read_text())


def test_every_cable_of_the_plan_is_in_some_pair(rail):
    doc = _doc(rail)
    tiers = Counter(c["tier"] for c in doc["cables"].values())
    # rail-optimized: 64 hosts x 8 rails host-leaf cables, 16 leaves x 32 uplinks
    assert tiers == {"host-leaf": 512, "leaf-spine": 512}
    used = {row for rnd in doc["rounds"] for p in rnd["pairs"] for row in p["cables"]}
    assert {int(r) for r in doc["cables"]} == used


def test_ports_meet_two_peers_and_never_twice_in_a_round(rail):
    doc = _doc(rail)
    peers: dict[tuple[str, str], set] = {}
    for rnd in doc["rounds"]:
        seen = Counter()
        for p in rnd["pairs"]:
            c, s = (p["client"]["host"], p["client"]["rdma"]), (p["server"]["host"], p["server"]["rdma"])
            seen[c] += 1
            seen[s] += 1
            if rnd["kind"] == "host-leaf":
                assert p["client"]["switch"] == p["server"]["switch"] and p["qps"] == 1
                peers.setdefault(c, set()).add(s)
                peers.setdefault(s, set()).add(c)
            else:
                assert p["client"]["switch"] != p["server"]["switch"]
                # 32 uplinks, 32 pairs from each leaf: 256 flows an uplink (burnin.FLOWS_PER_UPLINK)
                assert p["qps"] == 256
        assert max(seen.values()) == 1, rnd["id"]
        ports = Counter((p["server"]["host"], p["tcp_port"]) for p in rnd["pairs"])
        assert max(ports.values()) == 1, "two servers of one host on one TCP port"
    assert len(peers) == 512 and all(len(v) == 2 for v in peers.values())
    # 400G NICs at the capacity model's NIC efficiency (0.94)
    assert {p["expected_gbps"] for r in doc["rounds"] for p in r["pairs"]} == {376.0}


def test_same_intent_same_bytes(rail, tmp_path):
    again = tmp_path / "again"
    assert run_burnin(str(example("rail-optimized")), str(again)) == 0
    for name in ("burnin.json", "burnin-ssh.sh", "burnin.sbatch"):
        assert (again / name).read_bytes() == (rail / name).read_bytes()


def test_a_foreign_directory_is_refused(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine\n")
    assert run_burnin(str(example("small")), str(tmp_path)) == 1
    err = capsys.readouterr().err
    assert "not an earlier fabricgen burn-in output" in err and "nothing written" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_the_ssh_script_runs_each_side_with_its_options(tmp_path):
    out = tmp_path / "acc"
    assert run_burnin(str(example("small")), str(out)) == 0
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # ssh -n -o BatchMode=yes HOST COMMAND: the remote shell runs COMMAND; ib_write_bw prints its argv
    (bin_dir / "ssh").write_text('#!/bin/sh\nshift 3\nhost=$1; shift\nexec sh -c "$*"\n')
    (bin_dir / "ib_write_bw").write_text('#!/bin/sh\necho "ib_write_bw $*"\n')
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    (bin_dir / "snap").write_text('#!/bin/sh\necho "{}" > "$2"\n')         # snap --flag FILE
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "GID_INDEX": "5", "SNAPSHOT": "snap --flag"}
    r = subprocess.run(["sh", str(out / "burnin-ssh.sh")], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = _doc(out)
    pair = doc["rounds"][0]["pairs"][0]
    client = (out / pair["output"]).read_text()
    assert client.split() == ["ib_write_bw", "-d", pair["client"]["rdma"], "-x", "5", "-q", "1", "-D", "10",
                              "-s", "65536", "-p", str(pair["tcp_port"]), "-F", "--report_gbits",
                              pair["server"]["ip"]]
    for rnd in doc["rounds"]:             # a counter snapshot around every round
        assert (out / "burnin" / rnd["id"] / "counters-before.json").read_text() == "{}\n"
        assert (out / "burnin" / rnd["id"] / "counters-after.json").read_text() == "{}\n"
    server = (out / pair["output"].replace(".client.", ".server.")).read_text()
    assert server.split()[:3] == ["ib_write_bw", "-d", pair["server"]["rdma"]]
    bad = subprocess.run(["sh", str(out / "burnin-ssh.sh")], env={**env, "GID_INDEX": "3; reboot"},
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "give a GID table index" in bad.stderr
