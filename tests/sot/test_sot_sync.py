"""`fabricgen sot` against a live Nautobot (issue 37, the done-when list): no mocked HTTP.

The server is tests/sot/conftest.py's `nautobot` (one per run). Each test pushes a fabric of its
own name (nautobot.fresh_fabric), so they share the server; each removes its fabric
afterwards. Writes are counted by the adapter (every POST/PATCH/DELETE request), objects by
asking Nautobot's REST API directly, not through the code under test."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from generator.intent.loader import load_intent
from generator.plan.compile import compile_plan
from generator.plan.growth import build_out_intent
from generator.sot.nautobot import Nautobot
from generator.sot.objects import desired_objects
from generator.sot.push import push, remove_fabric
from tests.cli_runner import run_cli

# one worker holds the Nautobot tests: they share its uWSGI workers (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("nautobot")

MEDIUM = Path("inventories/medium/fabric.yaml")


def _named(tmp_path: Path, text: str, name: str, file: str = "fabric.yaml") -> Path:
    path = tmp_path / file
    path.write_text(re.sub(r"(?m)^  name: \S+$", f"  name: {name}", text, count=1))
    return path


def _desired(intent: Path):
    loaded = load_intent(str(intent))
    plan = compile_plan(loaded.intent)
    t = loaded.intent.topology
    full = compile_plan(build_out_intent(loaded.intent)) if t.build_out and t.build_out.nodes > t.nodes else None
    return plan, desired_objects(plan, full)


def _count(nb: Nautobot, path: str, **params) -> int:
    return nb._request("GET", path, params={**params, "limit": 1})["count"]


@pytest.fixture
def fabrics(nautobot):
    """Removes every fabric a test pushed, whatever the outcome."""
    nb = Nautobot(nautobot.url, nautobot.token)
    pushed = []
    yield nb, pushed
    for desired in pushed:
        remove_fabric(nb, desired)


def _env(server) -> dict:
    import os

    return {**os.environ, "NAUTOBOT_TOKEN": server.token}


def test_medium_push_creates_the_plan_then_writes_nothing(nautobot, fabrics, tmp_path):
    nb, pushed = fabrics
    name = nautobot.fresh_fabric("sotmed")
    intent = _named(tmp_path, MEDIUM.read_text(), name)
    plan, desired = _desired(intent)
    pushed.append(desired)
    env = _env(nautobot)
    first = run_cli("sot", "push", str(intent), "--url", nautobot.url, env=env)
    assert first.returncode == 0, first.stderr
    # counted by Nautobot: the plan's 44 devices, every interface of them, 320 cables, its pools
    # and addresses, each switch's ASN
    assert _count(nb, "/api/dcim/devices/", location=name) == len(plan.switches) + len(plan.hosts) == 44
    want_ifaces = len(plan.switches) * 2 + len(plan.ports) + sum(1 + len(h.nics) for h in plan.hosts)
    assert _count(nb, "/api/dcim/interfaces/", location=name) == want_ifaces == 696
    assert _count(nb, "/api/dcim/cables/", tags=desired.tag) == len(plan.links) == 320
    assert _count(nb, "/api/ipam/prefixes/", namespace=name) == 3
    assert _count(nb, "/api/ipam/ip-addresses/", namespace=name) == 312
    leaf = nb._request("GET", "/api/dcim/devices/", params={"name": f"{name}-leaf-g1-r0", "location": name})["results"][0]
    assert leaf["custom_fields"]["bgp_asn"] == 65101 and leaf["status"] is not None
    assert nb._request("GET", "/api/ipam/ip-addresses/", params={"id": leaf["primary_ip4"]["id"]}
                       )["results"][0]["address"] == f"{plan.switches[[s.name for s in plan.switches].index(leaf['name'])].mgmt_ip}/20"
    # the second push: compared, nothing written
    before = nb.writes
    again = push(nb, desired)
    assert nb.writes == before and again.writes == 0 and not again.written
    diff = run_cli("sot", "diff", str(intent), "--url", nautobot.url, env=env)
    assert diff.returncode == 0, diff.stdout + diff.stderr
    assert "Nautobot matches the plan" in diff.stdout


SMALL = """\
fabric: {name: NAME}
topology:
  kind: rail-optimized
  nodes: NODES
  build_out: {nodes: 8}
  rails: 2
  nic_speed: 400G
  oversubscription: "1:1"
  nodes_per_unit: 4
  switches: {leaf: {model: SN5600}, spine: {model: SN5600}}
switch_os: {name: cumulus, version: "5.11"}
addressing:
  loopbacks: 10.255.0.0/24
  fabric_links: unnumbered
  rails: 172.16.0.0/24
  management: 192.168.0.0/24
  asn: {spine: 65000, leaf_base: 65100}
deploy: {user: cumulus}
management:                   # the kit sets the deploy account's password from this hash (the lab's)
  users:
    - name: cumulus
      role: system-admin
      hashed_password: "$6$fabricgenlab$OqKu8s1.iwmcF01KT9u5xm4I.NCIbdtaGpsXRepyozGYW04mGmSCSYv//RyMxZLJ98uk9N.Iv8BlED6PdN2T/0"
"""


def _small(tmp_path: Path, name: str, nodes: int) -> Path:
    path = tmp_path / f"{name}-{nodes}.yaml"
    path.write_text(SMALL.replace("NAME", name).replace("NODES", str(nodes)))
    return path


def test_untagged_colliding_device_is_a_conflict_nothing_written(nautobot, fabrics, tmp_path):
    nb, pushed = fabrics
    name = nautobot.fresh_fabric("sotcon")
    intent = _small(tmp_path, name, 4)
    plan, desired = _desired(intent)
    pushed.append(desired)
    ids = nb.ensure_catalog(desired)
    victim = plan.switches[0].name
    other = nb.create("/api/dcim/devices/", [{
        "name": victim, "location": ids["location"], "status": nb.status_id("Active"),
        "role": ids[f"role:{plan.switches[0].role}"], "device_type": ids[f"type:{desired.objects['device'][victim]['device_type']}"]}])[0]
    try:
        before = nb.writes
        result = push(nb, desired)
        assert nb.writes == before, "a conflict must stop the push before any write"
        assert result.conflicts and victim in result.conflicts[0]
        cli = run_cli("sot", "push", str(intent), "--url", nautobot.url, env=_env(nautobot))
        assert cli.returncode == 1
        assert f"device {victim} exists in Nautobot without the tag {desired.tag}" in cli.stderr
        assert "nothing written" in cli.stderr
        assert _count(nb, "/api/dcim/devices/", location=name) == 1          # only the foreign one
        assert _count(nb, "/api/dcim/cables/", tags=desired.tag) == 0
    finally:
        nb.delete("/api/dcim/devices/", [other["id"]])


def test_growth_planned_devices_become_active_and_no_cable_changes(nautobot, fabrics, tmp_path):
    nb, pushed = fabrics
    name = nautobot.fresh_fabric("sotgrow")
    phase1 = _small(tmp_path, name, 4)
    plan1, desired1 = _desired(phase1)
    pushed.append(desired1)
    assert push(nb, desired1).writes > 0
    planned = {n for n, f in desired1.objects["device"].items() if f["status"] == "Planned"}
    assert planned, "the build-out must hold devices not installed yet"
    cables = {c["id"]: c["last_updated"] for c in nb.list("/api/dcim/cables/", tags=desired1.tag)}
    assert len(cables) == len(plan1.links)
    phase2 = _small(tmp_path, name, 8)
    plan2, desired2 = _desired(phase2)
    diff = run_cli("sot", "diff", str(phase2), "--url", nautobot.url, env=_env(nautobot))
    assert diff.returncode == 3
    assert "status: Planned -> Active" in diff.stdout
    assert push(nb, desired2).writes > 0
    devices = {d["name"]: d["status"] for d in nb.list("/api/dcim/devices/", location=name, depth=1)}
    assert all(devices[n]["name"] == "Active" for n in planned)
    after = {c["id"]: c["last_updated"] for c in nb.list("/api/dcim/cables/", tags=desired1.tag)}
    assert {k: after[k] for k in cables} == cables, "an existing cable object changed"
    assert len(after) == len(plan2.links) > len(cables)
    assert push(nb, desired2).writes == 0


def test_pulled_inventory_gives_the_same_day0_kit_as_a_hand_written_one(nautobot, fabrics, tmp_path):
    nb, pushed = fabrics
    name = nautobot.fresh_fabric("sotpull")
    intent = _small(tmp_path, name, 8)
    plan, desired = _desired(intent)
    pushed.append(desired)
    push(nb, desired)
    state = nb.read_state(desired)
    rows = []
    for i, sw in enumerate(plan.switches):
        serial, mac = f"MT2{i:05d}X", f"9c:05:91:00:{i >> 8:02x}:{i & 255:02x}"
        nb.update("/api/dcim/devices/", [{"id": state.device_ids[sw.name], "serial": serial}])
        nb.update("/api/dcim/interfaces/", [{"id": state.interface_ids[(sw.name, "eth0")], "mac_address": mac.upper()}])
        rows.append(f"{sw.name},{serial},{mac}")
    hand = tmp_path / "hand.csv"
    hand.write_text("name,serial,mac\n" + "\n".join(rows) + "\n")
    pulled = tmp_path / "pulled.csv"
    env = _env(nautobot)
    out = run_cli("sot", "pull", str(intent), "--url", nautobot.url, "-o", str(pulled), env=env)
    assert out.returncode == 0, out.stderr
    kits = []
    for csv_file in (hand, pulled):
        kit = tmp_path / f"kit-{csv_file.stem}"
        made = run_cli("day0", str(intent), "-o", str(kit), "--url", "http://192.168.0.2:8080",
                       "--inventory", str(csv_file), env=env)
        assert made.returncode == 0, made.stderr
        kits.append({p.relative_to(kit): p.read_bytes() for p in sorted(kit.rglob("*")) if p.is_file()})
    assert kits[0] == kits[1]
    assert any(b"9c:05:91:00:00:00" in data for data in kits[0].values())
    # a serial changed in Nautobot since this pull is reported
    nb.update("/api/dcim/devices/", [{"id": state.device_ids[plan.switches[0].name], "serial": "MT2NEW"}])
    again = run_cli("sot", "pull", str(intent), "--url", nautobot.url, "-o", str(pulled), env=env)
    assert again.returncode == 0
    assert f"changed: {plan.switches[0].name} serial MT200000X -> MT2NEW" in again.stderr


def test_prune_reports_marks_and_deletes_only_with_yes(nautobot, fabrics, tmp_path):
    nb, pushed = fabrics
    name = nautobot.fresh_fabric("sotprune")
    big, small = _small(tmp_path, name, 4), _small(tmp_path, name, 2)
    plan4, desired4 = _desired(big)
    plan2, _ = _desired(small)
    pushed.append(desired4)
    push(nb, desired4)
    gone = len(plan4.links) - len(plan2.links)
    assert gone > 0
    env, url = _env(nautobot), nautobot.url
    diff = run_cli("sot", "diff", str(small), "--url", url, env=env)
    assert diff.returncode == 3 and f"- {gone} cables" in diff.stdout
    kept = run_cli("sot", "push", str(small), "--url", url, env=env)         # default: report only
    assert kept.returncode == 0 and _count(nb, "/api/dcim/cables/", tags=desired4.tag) == len(plan4.links)
    marked = run_cli("sot", "push", str(small), "--url", url, "--prune", "mark", env=env)
    assert marked.returncode == 0, marked.stderr
    assert _count(nb, "/api/dcim/cables/", tags=desired4.tag, status="Decommissioning") == gone
    refused = run_cli("sot", "push", str(small), "--url", url, "--prune", "delete", env=env)
    assert refused.returncode == 1 and "add --yes" in refused.stderr
    assert _count(nb, "/api/dcim/cables/", tags=desired4.tag) == len(plan4.links)
    deleted = run_cli("sot", "push", str(small), "--url", url, "--prune", "delete", "--yes", env=env)
    assert deleted.returncode == 0, deleted.stderr
    assert _count(nb, "/api/dcim/cables/", tags=desired4.tag) == len(plan2.links)
    assert run_cli("sot", "diff", str(small), "--url", url, env=env).returncode == 0


def _free_ports(desired) -> list[tuple[str, str]]:
    """Front-panel ports no planned cable uses (the spines' ports kept for the build-out's leaves)."""
    used = {end for key, f in desired.objects["cable"].items() for end in (key, (f["b_device"], f["b_port"]))}
    return [(d, i) for d, i in sorted(desired.objects["interface"], key=lambda k: (k[0], len(k[1]), k[1]))
            if i.startswith("swp") and (d, i) not in used]


def _cable_ends(nb: Nautobot, cable_id: str, names: dict[str, tuple[str, str]]) -> tuple:
    """(A end, B end) of a cable as Nautobot's REST API gives them, by interface id."""
    row = nb._request("GET", f"/api/dcim/cables/{cable_id}/", params={"depth": 0})
    return names.get(row["termination_a_id"]), names.get(row["termination_b_id"])


def test_moved_cables_are_updated_on_their_key_and_a_foreign_cable_stops_the_push(nautobot, fabrics, tmp_path):
    """Issue 37 rule 3: a cable the plan moves keeps its key (its A end) or replaces ours on the
    old one; a cable fabricgen does not own on a planned end is a conflict before any write,
    not a refusal in the middle of the push."""
    import copy

    nb, pushed = fabrics
    name = nautobot.fresh_fabric("sotmove")
    plan, desired = _desired(_small(tmp_path, name, 4))
    pushed.append(desired)
    assert push(nb, desired).writes > 0
    state = nb.read_state(desired)
    names = {iid: key for key, iid in state.interface_ids.items()}
    free = _free_ports(desired)
    spines = {d for d, _ in free}
    # k1: a cable whose far end (a spine) has a free port; k2: another one
    (k1, f1) = next((k, f) for k, f in sorted(desired.objects["cable"].items()) if f["b_device"] in spines)
    (k2, f2) = next((k, f) for k, f in sorted(desired.objects["cable"].items()) if k != k1 and k[0] != k1[0])

    # 1. the plan moves k1's B end to a free port of the same spine: the same cable key, re-terminated
    moved = copy.deepcopy(desired)
    new_b = next(p for p in free if p[0] == f1["b_device"])
    moved.objects["cable"][k1] = {**f1, "b_device": new_b[0], "b_port": new_b[1]}
    result = push(nb, moved)
    assert not result.conflicts and +result.written == Counter({"cable moved": 1}), dict(result.written)
    after = nb.read_state(moved)
    assert _cable_ends(nb, after.cable_ids[k1], names) == (k1, new_b)
    assert push(nb, moved).writes == 0

    # 2. the plan moves k2 to another A end (a new key) on the same B end: ours on the old key is
    #    replaced, whatever --prune says
    rekeyed = copy.deepcopy(moved)
    new_a = next(p for p in _free_ports(moved) if p[0] != f2["b_device"])
    rekeyed.objects["cable"][new_a] = rekeyed.objects["cable"].pop(k2)
    result = push(nb, rekeyed)
    assert not result.conflicts
    assert +result.written == Counter({"cable replaced": 1, "cable added": 1}), dict(result.written)
    after = nb.read_state(rekeyed)
    assert k2 not in after.cable_ids
    assert _cable_ends(nb, after.cable_ids[new_a], names) == (new_a, (f2["b_device"], f2["b_port"]))
    assert push(nb, rekeyed).writes == 0

    # 3. someone else's cable (no tag) on k1's planned B end, while the plan wants k1 back there:
    #    named up front, nothing written
    nb.delete("/api/dcim/cables/", [after.cable_ids[k1]])
    foreign = nb.create("/api/dcim/cables/", [{
        "termination_a_type": "dcim.interface", "termination_a_id": after.interface_ids[
            next(p for p in reversed(_free_ports(rekeyed)) if p[0] != new_b[0])],
        "termination_b_type": "dcim.interface", "termination_b_id": after.interface_ids[new_b],
        "status": nb.status_id("Connected")}])[0]
    before = nb.writes
    result = push(nb, rekeyed)
    assert nb.writes == before, "a conflict must stop the push before any write"
    assert len(result.conflicts) == 1 and f"holds {new_b[0]}:{new_b[1]}" in result.conflicts[0]
    nb.delete("/api/dcim/cables/", [foreign["id"]])
