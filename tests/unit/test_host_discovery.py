"""The discovery file `fabricgen hosts discover` writes: the issue 16 contract's format, deterministic
bytes, read back by the intent loader's reader (generator/intent/discovery.py)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import yaml

from generator.deploy.discover import (
    DiscoveryError,
    check_entry,
    compare,
    discovery_text,
    parse_probe,
    previous_entries,
)
from generator.intent.discovery import parse_discovery

# as playbooks/files/fabricgen_nics.py prints it (one JSON line), NICs in sysfs order
PROBE = json.dumps({"gpudirect": "nvidia-peermem", "nics": [
    {"netdev": "ens2f0np0", "mac": "0c:42:a1:00:00:03", "rdma": "mlx5_3", "pci": "0000:18:00.0", "port": 1,
     "link_layer": "Ethernet", "state": "ACTIVE", "rate_gbps": 400},
    {"netdev": "ens1f0np0", "mac": "0c:42:a1:00:00:00", "rdma": "mlx5_0", "pci": "0000:08:00.0", "port": 1,
     "link_layer": "Ethernet", "state": "ACTIVE", "rate_gbps": 400},
    {"netdev": "ibp41s0", "mac": "", "rdma": "mlx5_4", "pci": "0000:29:00.0", "port": 1, "link_layer": "InfiniBand",
     "state": "DOWN", "rate_gbps": 2.5}]})

# the contract's example, written out by hand (issue 16 contract: "Discovery file")
EXPECTED = """\
# Written by `fabricgen hosts discover`: the rail NICs each host reported (netdev -> RDMA device -> PCI).
version: 1
hosts:
  gpu01:
    gpudirect: nvidia-peermem
    nics:
      - {netdev: ens1f0np0, mac: "0c:42:a1:00:00:00", rdma: mlx5_0, pci: "0000:08:00.0", port: 1, link_layer: Ethernet, state: ACTIVE, rate_gbps: 400}
      - {netdev: ens2f0np0, mac: "0c:42:a1:00:00:03", rdma: mlx5_3, pci: "0000:18:00.0", port: 1, link_layer: Ethernet, state: ACTIVE, rate_gbps: 400}
      - {netdev: ibp41s0, rdma: mlx5_4, pci: "0000:29:00.0", port: 1, link_layer: InfiniBand, state: DOWN, rate_gbps: 2.5}
  gpu02:
    gpudirect: none
    nics: []
"""


def _hosts() -> dict:
    return {"gpu02": {"gpudirect": "none", "nics": []}, "gpu01": parse_probe("ok\n" + PROBE)}


def test_file_is_the_contract_format_sorted_and_stable():
    text = discovery_text(_hosts())
    assert text == EXPECTED
    assert discovery_text(dict(reversed(list(_hosts().items())))) == text
    assert yaml.safe_load(text)["hosts"]["gpu01"]["nics"][0]["pci"] == "0000:08:00.0"


def test_intent_loader_reads_it_back():
    found = parse_discovery(discovery_text(_hosts()), "discovered.yaml")
    nic = found.nic("gpu01", "ens2f0np0")
    assert (nic.rdma, nic.pci, nic.port, nic.link_layer, nic.state, nic.rate_gbps, nic.mac) == \
        ("mlx5_3", "0000:18:00.0", 1, "Ethernet", "ACTIVE", 400, "0c:42:a1:00:00:03")
    assert found.nic("gpu01", "ibp41s0").mac is None            # no Ethernet MAC reported: the key is left out
    assert found.hosts["gpu02"].gpudirect == "none" and found.hosts["gpu02"].nics == {}


@pytest.mark.parametrize(("word", "quoted"), [("on", '"on"'), ("null", '"null"'), ("ens1f0np0", "ens1f0np0"),
                                              ("400", '"400"'), ("a b", '"a b"')])
def test_words_yaml_would_misread_are_quoted(word, quoted):
    entry = {"gpudirect": "none", "nics": [{"netdev": word, "rdma": "mlx5_0", "pci": "", "port": 1,
                                            "link_layer": "Ethernet", "state": "ACTIVE", "rate_gbps": None}]}
    line = discovery_text({"gpu01": entry}).splitlines()[-1]
    assert line.startswith(f"      - {{netdev: {quoted}, ")
    assert yaml.safe_load(discovery_text({"gpu01": entry}))["hosts"]["gpu01"]["nics"][0]["netdev"] == word


@pytest.mark.parametrize(("stdout", "problem"), [
    ("", "printed no JSON"),
    ("Traceback (most recent call last):", "printed no JSON"),
    ('{"gpudirect": "none"}', "no `nics` list"),
])
def test_unreadable_probe_output(stdout, problem):
    with pytest.raises(DiscoveryError, match=problem):
        parse_probe(stdout)


@pytest.mark.parametrize(("change", "problem"), [
    ({"gpudirect": "peermem"}, "gpudirect: 'peermem' is not one of nvidia-peermem, dmabuf, none"),
    ({"netdev": "ens1f0np0\nversion: 2"}, "is not a Linux interface name"),
    ({"rdma": "mlx5-0"}, "is not an RDMA device name"),
    ({"pci": "08:00.0"}, "is not a PCI address"),
    ({"port": 0}, "is not a port number"),
])
def test_what_the_loader_refuses_is_not_written(change, problem):
    entry = parse_probe(PROBE)
    if "gpudirect" in change:
        entry.update(change)
    else:
        entry["nics"][0].update(change)
    with pytest.raises(DiscoveryError, match=problem):
        check_entry("gpu01", entry)
    check_entry("gpu01", parse_probe(PROBE))


def test_previous_entries_survive_and_junk_is_dropped(tmp_path):
    path = tmp_path / "discovered.yaml"
    path.write_text(EXPECTED)
    assert previous_entries(path) == {"gpu01": parse_probe(PROBE), "gpu02": {"gpudirect": "none", "nics": []}}
    path.write_text(EXPECTED.replace("version: 1", "version: 2"))
    assert previous_entries(path) == {}
    path.write_text(EXPECTED.replace("rdma: mlx5_3", "rdma: mlx-3"))
    assert list(previous_entries(path)) == ["gpu02"]


def test_compare_with_the_render():
    host = SimpleNamespace(name="gpu01", nics=[SimpleNamespace(rail=0, netdev="ens1f0np0", rdma="mlx5_0"),
                                               SimpleNamespace(rail=1, netdev="ens2f0np0", rdma="mlx5_1"),
                                               SimpleNamespace(rail=2, netdev="ibp41s0", rdma="mlx5_4"),
                                               SimpleNamespace(rail=3, netdev="ens4f0np0", rdma="mlx5_5")])
    assert compare(host, parse_probe(PROBE)) == [
        "rail 1 ens2f0np0 is mlx5_3, the render says mlx5_1", "rail 2 ibp41s0 runs InfiniBand",
        "rail 3 ens4f0np0 not found"]
    assert compare(host, {"gpudirect": "none", "nics": []})[-1] == "no GPUDirect RDMA path"
