"""The bring-up kit's files: Kea structure, ZTP documents, manifests, determinism."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from generator.day0.kit import KitError, build_kit, write_kit
from generator.render.output import render_files
from tests.cli_runner import run_cli
from tests.conftest import example
from tests.day0_support import URL, compiled, inventory, write_inventory

FABRICGEN = [sys.executable, "-m", "generator.cli"]


def _kit(name: str, **kwargs):
    text, plan = compiled(name)
    return plan, build_kit(plan, text, inventory(plan, **kwargs), URL + "/", "eth1")


def _kea(kit) -> dict:
    return json.loads(kit.files["kea-dhcp4.json"])["Dhcp4"]


def test_kea_cumulus_structure() -> None:
    plan, kit = _kit("medium", hosts=2)
    dhcp = _kea(kit)
    assert dhcp["interfaces-config"] == {"interfaces": ["eth1"]}
    assert dhcp["lease-database"]["type"] == "memfile"
    [subnet] = dhcp["subnet4"]
    assert subnet["subnet"] == "192.168.0.0/20" == plan.mgmt_pool
    assert "pools" not in subnet                      # reservations only: no answer for unknown MACs
    options = {o["name"]: o["data"] for o in subnet["option-data"]}
    assert options == {"routers": "192.168.0.1", "domain-name-servers": "192.0.2.53",
                       "ntp-servers": "192.0.2.10, 192.0.2.11"}
    # one reservation per inventory switch, planned address and hostname; then the hosts' NICs
    by_mac = {r["hw-address"]: r for r in subnet["reservations"]}
    assert len(subnet["reservations"]) == len(plan.switches) + 2 == kit.reservations
    for row in inventory(plan, hosts=2).rows:
        res = by_mac[row.mac]
        device = plan.switch(row.name) if row.kind == "switch" else next(h for h in plan.hosts if h.name == row.name)
        assert (res["ip-address"], res["hostname"]) == (device.mgmt_ip, row.name)
        assert res["option-data"] == [{"name": "host-name", "data": row.name, "always-send": True}]
    # option 239 through the vendor-class client class, naming a file of the kit
    assert dhcp["option-def"] == [{"name": "cumulus-provision-url", "code": 239, "type": "string", "space": "dhcp4"}]
    [cls] = dhcp["client-classes"]
    assert cls["test"] == "substring(option[60].hex,0,13) == 'cumulus-linux'"
    [opt] = cls["option-data"]
    assert opt["name"] == "cumulus-provision-url" and opt["data"] == URL + "/ztp/cumulus-ztp.sh"
    assert "http/ztp/cumulus-ztp.sh" in kit.files


def test_kea_sonic_option_67_per_switch() -> None:
    plan, kit = _kit("medium-sonic", switches=5)
    dhcp = _kea(kit)
    assert "client-classes" not in dhcp and "option-def" not in dhcp
    reservations = dhcp["subnet4"][0]["reservations"]
    assert len(reservations) == 5
    for res in reservations:
        boot = [o for o in res["option-data"] if o["name"] == "boot-file-name"]
        assert [o["data"] for o in boot] == [f"{URL}/ztp/{res['hostname']}/ztp.json"]
        rel = "http/" + boot[0]["data"].removeprefix(URL + "/")
        doc = json.loads(kit.files[rel])["ztp"]
        # the gate first; then one plugin that downloads the config_db before it turns the mgmt VRF
        # on and saves last: no section downloads after the VRF change (issue 32)
        sections = {key: value for key, value in doc.items() if isinstance(value, dict)}
        assert list(sections) == ["01-release-gate", "02-provision"]
        assert doc["restart-ztp-no-config"] is False      # a refusing gate must not make ZTP loop
        assert all(section["halt-on-failure"] is True for section in sections.values())
        assert doc["01-release-gate"]["plugin"] == {"url": URL + "/ztp/sonic-release-gate.py", "ignore-section-data": True}
        config_rel = f"http/switches/{res['hostname']}/config_db.json"
        sha = hashlib.sha256(kit.files[config_rel].encode()).hexdigest()
        assert doc["02-provision"]["plugin"] == {"url": URL + "/ztp/sonic-provision.py", "ignore-section-data": True,
                                                 "args": f"{URL}/{config_rel.removeprefix('http/')} {sha}"}
        # every URL names a file of the kit
        for section in sections.values():
            assert "http/" + section["plugin"]["url"].removeprefix(URL + "/") in kit.files
    # switches without a row get no ztp.json
    assert not [rel for rel in kit.files if rel.startswith(f"http/ztp/{plan.switches[6].name}/")]


def test_rendered_files_are_the_render_and_manifests_match() -> None:
    text, plan = compiled("medium")
    kit = build_kit(plan, text, inventory(plan), URL, "eth0")
    rendered = render_files(plan, text)
    for sw in plan.switches:
        rel = f"switches/{sw.name}/startup.yaml"
        assert kit.files["http/" + rel] == rendered[rel]
    listing = json.loads(kit.files["http/manifest.json"])
    assert set(listing) == {"files"}
    served = {rel.removeprefix("http/") for rel in kit.files if rel.startswith("http/")} - {"manifest.json"}
    assert set(listing["files"]) == served
    for rel, digest in listing["files"].items():
        assert hashlib.sha256(kit.files["http/" + rel].encode()).hexdigest() == digest
    # the script checks each startup.yaml against the same sha256
    script = kit.files["http/ztp/cumulus-ztp.sh"]
    for sw in plan.switches:
        assert listing["files"][f"switches/{sw.name}/startup.yaml"] in script


def test_ntp_names_left_out_of_option_42_with_a_warning() -> None:
    text, plan = compiled("medium")
    mgmt = dataclasses.replace(plan.management, ntp=("ntp1.example.net", "192.0.2.10"))
    plan = dataclasses.replace(plan, management=mgmt)
    kit = build_kit(plan, text, inventory(plan), URL, "eth0")
    options = {o["name"]: o["data"] for o in _kea(kit)["subnet4"][0]["option-data"]}
    assert options["ntp-servers"] == "192.0.2.10"
    [warning] = [w for w in kit.warnings if "management.ntp" in w]
    assert warning.startswith("warning: management.ntp: ntp1.example.net left out of DHCP option 42")
    only_names = dataclasses.replace(plan, management=dataclasses.replace(mgmt, ntp=("ntp1.example.net",)))
    kit = build_kit(only_names, text, inventory(plan), URL, "eth0")
    assert "ntp-servers" not in {o["name"] for o in _kea(kit)["subnet4"][0]["option-data"]}


def test_without_management_the_gateway_is_the_pools_first_address_and_patch() -> None:
    text, plan = compiled("small")
    assert plan.management is None
    kit = build_kit(plan, text, inventory(plan), URL, "eth0", "lab-pw")
    options = {o["name"]: o["data"] for o in _kea(kit)["subnet4"][0]["option-data"]}
    assert options == {"routers": str(__import__("ipaddress").ip_network(plan.mgmt_pool)[1])}
    script = kit.files["http/ztp/cumulus-ztp.sh"]
    assert "\nAPPLY=\"patch\"\n" in script and "\nAPPLY=\"replace\"\n" not in script
    assert "\nAPPLY=\"replace\"\n" in _kit("medium")[1].files["http/ztp/cumulus-ztp.sh"]


@pytest.mark.parametrize("url", ["http://h/a b", "http://h/a,b", "http://h/a'b", "tftp://h/x", "http:///x",
                                 "http://h/x?y=1", "http://h/" + "a" * 250])
def test_bad_urls_are_one_line(url: str) -> None:
    text, plan = compiled("medium-sonic")
    with pytest.raises(KitError) as info:
        build_kit(plan, text, inventory(plan), url, "eth0")
    assert "\n" not in str(info.value) and ("--url" in str(info.value) or "DHCP option holds" in str(info.value))


def test_two_runs_are_byte_identical(tmp_path: Path) -> None:
    # two processes: each has its own string-hash seed, so set or dict order leaking into a file shows
    for name in ("medium", "medium-sonic"):
        text, plan = compiled(name)
        inv = write_inventory(tmp_path / f"{name}.csv", plan, switches=7, hosts=1)
        trees = []
        for run in ("a", "b"):
            out = tmp_path / f"{name}-{run}"
            r = subprocess.run([*FABRICGEN, "day0", str(example(name)), "-o", str(out), "--url", URL,
                                "--inventory", str(inv)], capture_output=True, text=True, timeout=120)
            assert r.returncode == 0, r.stderr
            trees.append({p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()})
        assert trees[0] == trees[1]
        assert "kea-dhcp4.json" in trees[0] and "http/manifest.json" in trees[0]


def test_cli_writes_and_replaces_a_kit(tmp_path: Path) -> None:
    text, plan = compiled("medium")
    inv = write_inventory(tmp_path / "inv.csv", plan, switches=10)
    out = tmp_path / "kit"
    args = ["day0", str(example("medium")), "-o", str(out), "--url", URL, "--inventory", str(inv)]
    r = run_cli(*args)
    assert r.returncode == 0, r.stderr
    assert "10 DHCP reservation(s)" in r.stdout
    warnings = [line for line in r.stderr.splitlines() if "no DHCP reservation" in line]
    assert len(warnings) == 1 and plan.switches[10].name in warnings[0] and plan.switches[11].name in warnings[0]
    assert (out / "http/ztp/cumulus-ztp.sh").stat().st_mode & 0o111
    # a second run replaces the kit (its manifest.json lists every file)
    r = run_cli(*args)
    assert r.returncode == 0, r.stderr
    # someone's file in the kit stops the replace: nothing written
    (out / "http" / "notes.txt").write_text("mine")
    r = run_cli(*args)
    assert r.returncode == 1 and "notes.txt is not part of the fabricgen output" in r.stderr
    assert (out / "http" / "notes.txt").read_text() == "mine"


def test_cli_intent_errors_write_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "fabric.yaml"
    bad.write_text(example("medium").read_text().replace("nodes: 32", "nodes: -1"))
    r = run_cli("day0", str(bad), "-o", str(tmp_path / "kit"), "--url", URL)
    assert r.returncode == 1 and "error" in r.stderr
    assert not (tmp_path / "kit").exists()


def test_kit_layout(tmp_path: Path) -> None:
    text, plan = compiled("medium")
    out = write_kit(build_kit(plan, text, inventory(plan), URL, "eth0"), tmp_path / "kit")
    assert sorted(p.name for p in out.iterdir()) == ["http", "kea-dhcp4.json", "manifest.json"]
    assert sorted(p.name for p in (out / "http").iterdir()) == ["manifest.json", "switches", "ztp"]
    assert [p.name for p in (out / "http/ztp").iterdir()] == ["cumulus-ztp.sh"]


def test_address_outside_the_subnet_is_one_line() -> None:
    text, plan = compiled("medium")
    moved = dataclasses.replace(plan, mgmt_pool="10.0.0.0/24")
    with pytest.raises(KitError) as info:
        build_kit(moved, text, inventory(plan, switches=1), URL, "eth0")
    assert str(info.value) == (f"inventory.csv:2: {plan.switches[0].name}'s management address {plan.switches[0].mgmt_ip} "
                               "is outside addressing.management 10.0.0.0/24; fix the intent's addressing")


# Issue 34, findings 4 and 6: each of these exited 0 with a kit (the password copied into
# kea-dhcp4.json, the scripts and DHCP options; a base whose appended paths land in a query or
# fragment; a port no server listens on).
@pytest.mark.parametrize(("url", "reason"), [
    ("http://ztp:s3cret-pw@192.168.0.2:8080", "user or password"),
    ("http://:s3cret-pw@192.168.0.2", "user or password"),
    ("http://192.168.0.2:8080/kit?", "no ? or #"),
    ("http://192.168.0.2:8080/kit#", "no ? or #"),
    ("http://192.168.0.2:99999", "1 to 65535"),
    ("http://192.168.0.2:0", "1 to 65535"),
    ("ftp://192.168.0.2/kit", "http:// or https://"),
])
def test_probe_urls_are_refused_with_the_reason(url: str, reason: str) -> None:
    text, plan = compiled("medium")
    with pytest.raises(KitError) as info:
        build_kit(plan, text, inventory(plan), url, "eth0")
    assert reason in str(info.value) and "\n" not in str(info.value)
    assert "s3cret-pw" not in str(info.value)


def test_cli_url_with_a_password_writes_nothing_and_never_echoes_it(tmp_path: Path) -> None:
    out = tmp_path / "kit"
    r = run_cli("day0", str(example("medium")), "-o", str(out), "--url", "http://ztp:s3cret-pw@192.168.0.2:8080")
    assert r.returncode != 0 and "without authentication" in r.stderr
    assert "s3cret-pw" not in r.stderr + r.stdout
    assert not out.exists()
