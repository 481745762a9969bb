"""The discovery file `fabricgen hosts discover` writes: the issue 16 contract's format, deterministic
bytes, read back by the intent loader's reader (generator/intent/discovery.py)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from generator.deploy.discover import (
    MAX_PROBE_CHARS,
    STALE,
    DiscoveryError,
    check_entry,
    compare,
    discovery_text,
    parse_probe,
    previous_entries,
    run_discover,
)
from generator.deploy.hosts import DISCOVER_TASK, HostRunResult
from generator.intent.discovery import parse_discovery
from generator.intent.loader import IntentError

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
    assert previous_entries(path) == {"gpu01": parse_probe(PROBE), "gpu02": {"gpudirect": "none", "nics": [],
                                                                              "gpus": []}}
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


# --- hostile answers ---------------------------------------------------------------------------

@pytest.mark.parametrize(("stdout", "problem"), [
    ("[" * 100_000, "nested deeper than 64 levels: refused"),                     # RecursionError in json
    ('{"nics": ' + "[" * 70 + "]" * 70 + "}", "nested deeper than 64 levels"),    # below the C decoder's limit
    (" " * (MAX_PROBE_CHARS + 1), "above the 1,048,576 its answer can be: refused unread"),
    ("Traceback (most recent call last):\n  File \"x\", line 1\nKeyError: 'x'", "printed no JSON"),
    ('{"gpudirect": "none", "nics": [], "gpus": {"a": 1}}', "`gpus` is not a list of GPUs"),
])
def test_hostile_answers_are_one_discovery_error(stdout, problem):
    with pytest.raises(DiscoveryError, match=problem):
        parse_probe(stdout)


# a DGX H100 cut to two rails: GPU0 -> enp24s0f0np0 (mlx5_0), GPU1 -> enp64s0f0np0 (mlx5_3); the
# storage NIC enp41s0f0np0 (mlx5_1) sorts between them by name and PCI address
DGX = json.dumps({"gpudirect": "nvidia-peermem", "affinity": "sysfs", "nics": [
    {"netdev": n, "mac": f"0c:42:a1:00:00:0{i}", "rdma": r, "pci": p, "port": 1, "link_layer": "Ethernet",
     "state": "ACTIVE", "rate_gbps": 400}
    for i, (n, r, p) in enumerate([("enp64s0f0np0", "mlx5_3", "0000:40:00.0"),
                                   ("enp24s0f0np0", "mlx5_0", "0000:18:00.0"),
                                   ("enp41s0f0np0", "mlx5_1", "0000:29:00.0")])],
    "gpus": [{"pci": "0000:1b:00.0", "numa_node": 0, "nic": "enp24s0f0np0"},
             {"pci": "0000:43:00.0", "numa_node": 0, "nic": "enp64s0f0np0"}]})


def test_gpus_are_written_in_gpu_order_and_read_back():
    entry = parse_probe(DGX)
    text = discovery_text({"gpu01": entry})
    assert text.splitlines()[5:8] == [
        "    gpus:                 # nvidia-smi's order; nic: the GPU's nearest NIC (PCIe)",
        '      - {pci: "0000:1b:00.0", numa_node: 0, nic: enp24s0f0np0}',
        '      - {pci: "0000:43:00.0", numa_node: 0, nic: enp64s0f0np0}']
    assert discovery_text({"gpu01": parse_probe(DGX)}) == text            # same answer, same bytes
    host = parse_discovery(text, "discovered.yaml").hosts["gpu01"]
    assert [g.nic for g in host.gpus] == ["enp24s0f0np0", "enp64s0f0np0"]
    assert host.gpu_rails(2) == ("enp24s0f0np0", "enp64s0f0np0")
    assert host.gpu_rails(8) is None                                     # 2 GPUs, 8 rails: hosts.rails' order
    check_entry("gpu01", entry)


@pytest.mark.parametrize(("change", "problem"), [
    ({"nic": "enp99s0f0np0"}, "enp99s0f0np0 is not one of the host's nics"),
    ({"nic": "enp64s0f0np0"}, "enp64s0f0np0 is already the nearest NIC of another GPU"),
    ({"pci": "1b:00.0"}, "is not a PCI address"),
    ({"numa_node": -1}, "is not a NUMA node number"),
])
def test_what_the_reader_refuses_in_gpus(change, problem):
    entry = parse_probe(DGX)
    entry["gpus"][0].update(change)
    with pytest.raises(DiscoveryError, match=problem):
        check_entry("gpu01", entry)
    with pytest.raises(IntentError, match=problem):
        parse_discovery(discovery_text({"gpu01": entry}), "discovered.yaml")


def _host(*netdevs):
    return SimpleNamespace(name="gpu01", nics=[SimpleNamespace(rail=r, netdev=n, rdma=f"mlx5_{r}")
                                               for r, n in enumerate(netdevs)])


def test_compare_takes_the_gpu_order_and_warns_on_a_count_mismatch():
    entry = parse_probe(DGX)
    assert compare(_host("enp24s0f0np0", "enp41s0f0np0"), entry) == [
        "rails by GPU (rail r = GPU r's nearest NIC) are enp24s0f0np0,enp64s0f0np0, the render has "
        "enp24s0f0np0,enp41s0f0np0"]
    assert compare(_host("enp24s0f0np0", "enp64s0f0np0"), dict(entry, nics=[
        dict(n, rdma="mlx5_1" if n["netdev"] == "enp64s0f0np0" else n["rdma"]) for n in entry["nics"]])) == []
    assert compare(_host("enp24s0f0np0"), entry) == [
        "2 GPU(s) for 1 rail(s): the rails keep hosts.rails' order, not one NIC per GPU"]


# --- one hostile host in a run ---------------------------------------------------------------------

SMALL = Path(__file__).resolve().parents[2] / "inventories/small/fabric.yaml"


def _answers(monkeypatch, answers: dict, failures=()):
    def fake_run(inventory, **kw):
        result = HostRunResult(status="failed" if failures else "successful", rc=2 if failures else 0)
        result.failures = list(failures)
        for host, stdout in answers.items():
            result.results[host] = {DISCOVER_TASK: {"stdout": stdout, "rc": 0}}
        result.hosts = {h: None for h in [*answers, *(f[0] for f in failures)]}
        return result
    monkeypatch.setattr("generator.deploy.hosts.run_discover_playbook", fake_run)


def _two_rails(i: int) -> str:
    return json.dumps({"gpudirect": "nvidia-peermem", "nics": [
        {"netdev": n, "mac": f"0c:42:a1:00:0{i}:0{r}", "rdma": f"mlx5_{r}", "pci": f"0000:0{8 + r}:00.0", "port": 1,
         "link_layer": "Ethernet", "state": "ACTIVE", "rate_gbps": 400}
        for r, n in enumerate(("ens1f0np0", "ens2f0np0"))]})


def test_one_hostile_host_is_not_read_and_the_others_are_written(monkeypatch, tmp_path):
    intent = tmp_path / "fabric.yaml"
    shutil.copy(SMALL, intent)
    out_file = tmp_path / "discovered.yaml"
    hostile = {"gpu02": "[" * 200_000, "gpu03": "x" * (MAX_PROBE_CHARS + 10)}
    _answers(monkeypatch, {"gpu01": _two_rails(1), "gpu04": _two_rails(4), **hostile})
    out, err = io.StringIO(), io.StringIO()
    assert run_discover(str(intent), out=str(out_file), stdout=out, stderr=err) == 1
    assert err.getvalue().splitlines() == [
        "gpu02: not read: the NIC probe's JSON: nested deeper than 64 levels: refused; it is not in the file",
        "gpu03: not read: the NIC probe printed 1,048,586 characters, above the 1,048,576 its answer can be: "
        "refused unread; it is not in the file"]
    assert out.getvalue().splitlines()[-1] == f"wrote {out_file}: 2 host(s); 2 not read, 0 differ from the render"
    found = parse_discovery(out_file.read_text(), str(out_file))
    assert sorted(found.hosts) == ["gpu01", "gpu04"]
    first = out_file.read_bytes()

    # next run: gpu01 unreachable, gpu02 read; gpu01's entry from the file before is kept and marked
    _answers(monkeypatch, {"gpu02": _two_rails(2), "gpu03": _two_rails(3), "gpu04": _two_rails(4)},
             failures=[("gpu01", DISCOVER_TASK, "Failed to connect to the host via ssh: " + "\x1b[31m" + "y" * 500)])
    err = io.StringIO()
    assert run_discover(str(intent), out=str(out_file), stdout=io.StringIO(), stderr=err) == 1
    line = err.getvalue().splitlines()[0]
    assert line.startswith("gpu01: not read: Failed to connect to the host via ssh: ?[31myyy")
    assert line.endswith("... (cut); its entry from the previous file is kept, marked as not read")
    assert len(line) < 300
    text = out_file.read_text()
    assert f"  {STALE}\n  gpu01:\n" in text and text.count(STALE) == 1
    found = parse_discovery(text, str(out_file))
    assert sorted(found.hosts) == ["gpu01", "gpu02", "gpu03", "gpu04"]
    assert found.hosts["gpu01"] == parse_discovery(first.decode(), "x").hosts["gpu01"]

    # everyone answers: exit 0, the mark is gone, and the same answers give the same bytes
    _answers(monkeypatch, {f"gpu0{i}": _two_rails(i) for i in range(1, 5)})
    assert run_discover(str(intent), out=str(out_file), stdout=io.StringIO(), stderr=io.StringIO()) == 0
    again = out_file.read_bytes()
    assert STALE.encode() not in again
    assert run_discover(str(intent), out=str(out_file), stdout=io.StringIO(), stderr=io.StringIO()) == 0
    assert out_file.read_bytes() == again
