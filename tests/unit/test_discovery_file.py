"""hosts.discovered (issue 16): the discovery file is read through the loader, checked against
its version-1 format, and every bad file is one line naming the file, the line and the key path.

The files here are written by the real writer (generator/deploy/discover.py discovery_text) where
the format is meant to be right, and by hand where it is meant to be wrong.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
import yaml

from generator.deploy.discover import discovery_text
from generator.intent.discovery import (
    DEFAULT_MAX_DISCOVERED_BYTES,
    MAX_DISCOVERED_BYTES_ENV,
    parse_discovery,
    read_discovery,
)
from generator.intent.loader import IntentError, load_intent
from tests.conftest import example


def _nic(netdev: str, rdma: str, **extra) -> dict:
    nic = {"netdev": netdev, "rdma": rdma, "pci": "0000:08:00.0", "port": 1, "link_layer": "Ethernet",
           "state": "ACTIVE", "rate_gbps": 400}
    nic.update(extra)
    return nic


def _intent(tmp_path: Path, discovered: str | None = "discovered.yaml", name: str = "small") -> Path:
    data = yaml.safe_load(example(name).read_text())
    if discovered is not None:
        data["hosts"]["discovered"] = discovered
    path = tmp_path / "fabric.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _problem(exc: pytest.ExceptionInfo[IntentError]) -> str:
    assert len(exc.value.problems) == 1, str(exc.value)
    return str(exc.value.problems[0])


def test_writer_output_loads_through_the_intent(tmp_path):
    entries = {"gpu01": {"gpudirect": "nvidia-peermem", "nics": [_nic("ens1f0np0", "mlx5_0"),
                                                                  _nic("ens2f0np0", "mlx5_3")]},
               "gpu02": {"gpudirect": "dmabuf", "nics": [_nic("ens1f0np0", "rocep8s0f0", pci="", link_layer="",
                                                              state="", rate_gbps=None)]}}
    text = discovery_text(entries)
    (tmp_path / "discovered.yaml").write_text(text)
    loaded = load_intent(_intent(tmp_path))
    found = loaded.discovered
    assert found is not None and found.file == str(tmp_path / "discovered.yaml")
    assert found.sha256 == hashlib.sha256(text.encode()).hexdigest()
    assert sorted(found.hosts) == ["gpu01", "gpu02"]
    assert found.nic("gpu01", "ens2f0np0").rdma == "mlx5_3"
    assert found.hosts["gpu01"].gpudirect == "nvidia-peermem"
    inbox = found.nic("gpu02", "ens1f0np0")
    # what the writer could not read ("") comes back as not reported
    assert (inbox.rdma, inbox.pci, inbox.link_layer, inbox.state, inbox.rate_gbps) == \
        ("rocep8s0f0", None, None, None, None)
    assert found.nic("gpu03", "ens1f0np0") is None


def test_the_mac_is_optional_and_read_in_lower_case(tmp_path):
    # files of earlier releases have no mac; a hand-edited upper-case one is the same address
    text = discovery_text({"gpu01": {"gpudirect": "none", "nics": [
        _nic("ens1f0np0", "mlx5_0"), _nic("ens2f0np0", "mlx5_1", mac="0C:42:A1:00:00:01")]}})
    assert 'mac: "0C:42:A1:00:00:01"' in text and text.count("mac:") == 1
    found = parse_discovery(text, "discovered.yaml")
    assert found.nic("gpu01", "ens1f0np0").mac is None
    assert found.nic("gpu01", "ens2f0np0").mac == "0c:42:a1:00:00:01"


def test_the_same_data_as_pyyaml_reads(tmp_path):
    """The event-built document equals yaml.safe_load's for what the writer emits, odd names included."""
    entries = {"0001": {"gpudirect": "none", "nics": []},
               "gpu-a": {"gpudirect": "nvidia-peermem", "nics": [_nic("yes", "on", port=2, rate_gbps=2.5),
                                                                  _nic("0x10", "null", state="DOWN")]}}
    text = discovery_text(entries)
    ref = yaml.safe_load(text)
    found = parse_discovery(text, "d.yaml")
    assert sorted(found.hosts) == sorted(str(k) for k in ref["hosts"])
    for name, entry in ref["hosts"].items():
        host = found.hosts[str(name)]
        assert host.gpudirect == entry["gpudirect"]
        for nic in entry["nics"]:
            got = host.nics[nic["netdev"]]
            assert (got.rdma, got.port, got.rate_gbps, got.state) == (nic["rdma"], nic["port"], nic["rate_gbps"],
                                                                       nic["state"])


def test_no_discovery_file_means_none(tmp_path):
    assert load_intent(_intent(tmp_path, discovered=None)).discovered is None


def test_missing_file_is_reported_at_the_intent_key(tmp_path):
    intent = _intent(tmp_path, discovered="nope/discovered.yaml")
    with pytest.raises(IntentError) as exc:
        load_intent(intent)
    line = _problem(exc)
    assert line.startswith(f"{intent}:") and "hosts.discovered" in line
    assert str(tmp_path / "nope/discovered.yaml") in line and "fabricgen hosts discover" in line
    assert exc.value.problems[0].line is not None


def test_the_path_is_relative_to_the_intent_file(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.yaml").write_text(discovery_text({}))
    intent = _intent(tmp_path, discovered="sub/d.yaml")
    monkeypatch.chdir("/")
    assert load_intent(intent).discovered.hosts == {}


BAD = [
    # (file text, line, key path, words of the message)
    ("", 1, "", "empty"),
    ("version: 2\nhosts: {}\n", 1, "version", "not a version"),
    ("version: '1'\nhosts: {}\n", 1, "version", "not a version"),
    ("version: 1\n", None, "", "hosts: required"),
    ("version: 1\nhosts: {}\nextra: 1\n", 3, "extra", "unknown key"),
    ("- 1\n", None, "", "version: and hosts:"),
    ("version: 1\nhosts:\n  gpu01: {nics: []}\n  gpu01: {nics: []}\n", 4, "hosts.gpu01", "duplicate key"),
    ("version: 1\nhosts:\n  gpu01: &a {nics: []}\n  gpu02: *a\n", 4, "hosts", "aliases"),
    ("version: 1\nhosts: !!python/object:os.system {}\n", 2, "hosts", "tag"),
    ("version: 1\nhosts: {a: [}\n", 2, "", "YAML syntax"),
    ("version: 1\n---\nversion: 1\n", 2, "", "more than one YAML document"),
    ("version: 1\nhosts: " + "[" * 40 + "]" * 40 + "\n", 2, "hosts[0][0][0][0][0]", "nested"),
    ("version: 1\nhosts:\n  gpu_01: {nics: []}\n", 3, "hosts.gpu_01", "not a host name"),
    ("version: 1\nhosts:\n  gpu01: {nics: {}}\n", 3, "hosts.gpu01.nics", "list of NICs"),
    ("version: 1\nhosts:\n  gpu01: {gpudirect: peermem, nics: []}\n", 3, "hosts.gpu01.gpudirect", "not one of"),
    ("version: 1\nhosts:\n  gpu01:\n    nics:\n      - {rdma: mlx5_0}\n", 5, "hosts.gpu01.nics[0]",
     "netdev: required"),
    ("version: 1\nhosts:\n  gpu01:\n    nics:\n      - {netdev: 0x10, rdma: mlx5_0}\n", 5,
     "hosts.gpu01.nics[0].netdev", "quote it"),
    ("version: 1\nhosts:\n  gpu01:\n    nics:\n      - {netdev: a/b, rdma: mlx5_0}\n", 5,
     "hosts.gpu01.nics[0].netdev", "interface name"),
    ("version: 1\nhosts:\n  gpu01:\n    nics:\n      - {netdev: ens1, rdma: 'mlx5 0'}\n", 5,
     "hosts.gpu01.nics[0].rdma", "RDMA device name"),
    ("version: 1\nhosts:\n  gpu01:\n    nics:\n      - {netdev: ens1, rdma: mlx5_0, pci: 0000:08:00.0}\n", 5,
     "hosts.gpu01.nics[0].pci", "quote it"),       # unquoted, YAML 1.1 reads a base-60 number
    ("version: 1\nhosts:\n  gpu01:\n    nics:\n      - {netdev: ens1, rdma: mlx5_0, link_layer: ethernet}\n", 5,
     "hosts.gpu01.nics[0].link_layer", "not one of"),
    ("version: 1\nhosts:\n  gpu01:\n    nics:\n      - {netdev: ens1, rdma: mlx5_0, mac: '0c:42:a1:00:01'}\n", 5,
     "hosts.gpu01.nics[0].mac", "MAC address"),
    ("version: 1\nhosts:\n  gpu01:\n    nics:\n      - {netdev: ens1, rdma: mlx5_0, mac: 0c-42-a1-00-00-01}\n", 5,
     "hosts.gpu01.nics[0].mac", "MAC address"),
    ("version: 1\nhosts:\n  gpu01:\n    nics:\n      - {netdev: ens1, rdma: mlx5_0, port: 0}\n", 5,
     "hosts.gpu01.nics[0].port", "port number"),
    ("version: 1\nhosts:\n  gpu01:\n    nics:\n      - {netdev: ens1, rdma: mlx5_0, prt: 1}\n", 5,
     "hosts.gpu01.nics[0].prt", "unknown key"),
    ("version: 1\nhosts:\n  gpu01:\n    nics:\n      - {netdev: ens1, rdma: a}\n      - {netdev: ens1, rdma: b}\n",
     6, "hosts.gpu01.nics[1].netdev", "listed twice"),
]


@pytest.mark.parametrize(("text", "line", "path", "words"), BAD)
def test_a_bad_file_is_one_line_with_file_line_and_key(tmp_path, text, line, path, words):
    (tmp_path / "discovered.yaml").write_text(text)
    with pytest.raises(IntentError) as exc:
        load_intent(_intent(tmp_path))
    problem = exc.value.problems[0]
    assert len(exc.value.problems) == 1
    assert problem.file == str(tmp_path / "discovered.yaml")
    assert (problem.line, problem.path) == (line, path)
    assert words in problem.message
    assert "\n" not in str(problem)


def test_size_is_capped_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "discovered.yaml"
    path.write_text(discovery_text({"gpu01": {"gpudirect": "none", "nics": [_nic("ens1f0np0", "mlx5_0")]}}))
    monkeypatch.setenv(MAX_DISCOVERED_BYTES_ENV, "64")
    with pytest.raises(IntentError) as exc:
        read_discovery(path)
    assert MAX_DISCOVERED_BYTES_ENV in _problem(exc) and "64-byte limit" in _problem(exc)
    monkeypatch.setenv(MAX_DISCOVERED_BYTES_ENV, "lots")
    with pytest.raises(IntentError) as exc:
        read_discovery(path)
    assert "not a size in bytes" in _problem(exc)
    monkeypatch.delenv(MAX_DISCOVERED_BYTES_ENV)
    assert DEFAULT_MAX_DISCOVERED_BYTES >= 32 << 20       # 12k hosts x 10 NICs is ~16 MB
    assert read_discovery(path).hosts["gpu01"].nics["ens1f0np0"].rdma == "mlx5_0"


def test_not_a_regular_file_and_not_utf8(tmp_path):
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    with pytest.raises(IntentError) as exc:
        read_discovery(fifo)                 # never opened: nothing waits for a writer
    assert "not a regular file" in _problem(exc)
    with pytest.raises(IntentError) as exc:
        read_discovery(tmp_path)
    assert "not a regular file" in _problem(exc)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"version: 1\nhosts:\n  gpu\xe9: {nics: []}\n")
    with pytest.raises(IntentError) as exc:
        read_discovery(latin)
    assert "not UTF-8" in _problem(exc)


def _gpus(*nics: str) -> list[dict]:
    return [{"pci": f"0000:{0x1b + 0x28 * i:02x}:00.0", "numa_node": 0, "nic": nic} for i, nic in enumerate(nics)]


def test_rails_follow_the_gpus_when_there_is_one_gpu_per_rail(tmp_path):
    # small: 2 rails, hosts.rails ens1f0np0/mlx5_0, ens2f0np0/mlx5_1. gpu01's GPU0 sits beside ens2f0np0
    # (mlx5_3) and GPU1 beside ens1f0np0 (mlx5_0): rail 0 is ens2f0np0, cabled to rail 0's leaf port.
    # gpu02 reports three GPUs (count differs: hosts.rails' order), gpu03 none (an earlier file).
    nics = [_nic("ens1f0np0", "mlx5_0"), _nic("ens2f0np0", "mlx5_3"), _nic("ens3f0np0", "mlx5_4")]
    entries = {"gpu01": {"gpudirect": "nvidia-peermem", "nics": nics, "gpus": _gpus("ens2f0np0", "ens1f0np0")},
               "gpu02": {"gpudirect": "nvidia-peermem", "nics": nics,
                         "gpus": _gpus("ens2f0np0", "ens1f0np0", "ens3f0np0")},
               "gpu03": {"gpudirect": "nvidia-peermem", "nics": nics}}
    (tmp_path / "discovered.yaml").write_text(discovery_text(entries))
    from generator.checks.runner import run_checks
    plan = run_checks(load_intent(_intent(tmp_path))).plan
    assert plan is not None
    rails = {h.name: [(n.rail, n.netdev, n.rdma) for n in h.nics] for h in plan.hosts}
    assert rails["gpu01"] == [(0, "ens2f0np0", "mlx5_3"), (1, "ens1f0np0", "mlx5_0")]
    assert rails["gpu02"] == rails["gpu03"] == [(0, "ens1f0np0", "mlx5_0"), (1, "ens2f0np0", "mlx5_3")]
    gpu01 = plan.hosts[0]
    cabled = {link.b_port: (link.a_device, link.a_port) for link in plan.links if link.b_device == "gpu01"}
    assert cabled == {nic.netdev: (nic.switch, nic.port) for nic in gpu01.nics}
    assert dict(plan.nccl_of(gpu01).settings)["NCCL_IB_HCA"] == "=mlx5_3:1,mlx5_0:1"
