"""The pure parts of `fabricgen sot` (issue 37): the plan as Nautobot objects, the comparison and
its conflicts, the grouped diff, the pulled inventory and the token rules. The live-server
behaviour is tests/integration/test_sot_nautobot.py."""

from __future__ import annotations

import json
import os

import pytest

from generator.day0.inventory import parse_inventory
from generator.intent.loader import load_intent, validate_data
from generator.plan.compile import compile_plan
from generator.plan.growth import build_out_intent
from generator.sot.command import read_token
from generator.sot.compare import ADDED, CHANGED, REMOVE, Actual, compare
from generator.sot.diff_format import format_json, format_markdown, format_text
from generator.sot.nautobot import SotError, State
from generator.sot.objects import ACTIVE, PLANNED, desired_objects
from generator.sot.pull import pull
from tests.unit.test_growth import intent_data


@pytest.fixture(scope="module")
def medium():
    return compile_plan(load_intent("inventories/medium/fabric.yaml").intent)


def _plans(nodes: int, build_out: int):
    intent = validate_data(intent_data("leaf-spine", nodes, build_out, rails=4), {}, "t.yaml")
    return compile_plan(intent), compile_plan(build_out_intent(intent))


def test_medium_objects_are_every_planned_device_port_cable_and_address(medium):
    d = desired_objects(medium)
    # 12 switches + 32 hosts; 320 cables (the plan's links); per switch eth0 + lo + its ports, per
    # host its management NIC + 4 rails: 12 * 2 + 512 + 32 * 5
    assert len(d.objects["device"]) == 44
    assert len(d.objects["cable"]) == 320
    assert len(d.objects["interface"]) == 12 * 2 + len(medium.ports) + 32 * 5 == 696
    # management and loopback per switch, management per host, both ends of the 128 rail /31s
    assert len(d.objects["ip"]) == 12 * 2 + 32 + 128 * 2
    assert set(d.objects["prefix"]) == {"10.255.0.0/16", "172.16.0.0/12", "192.168.0.0/20"}
    leaf = d.objects["device"]["medium-leaf-g1-r0"]
    assert leaf["status"] == ACTIVE and leaf["asn"] == 65101 and leaf["role"] == "leaf"
    assert d.objects["interface"][("medium-leaf-g1-r0", "eth0")]["mgmt_only"] is True
    swp = d.objects["interface"][("medium-leaf-g1-r0", "swp1s0")]
    assert swp == {"type": "400gbase-x-osfp", "mtu": 9216, "mgmt_only": False, "description": "2x breakout of swp1"}
    assert d.objects["interface"][("gpu001", "ens1f0np0")]["mtu"] == 4200
    assert d.objects["ip"]["172.16.0.1/31"] == {"device": "gpu001", "interface": "ens1f0np0"}
    cable = d.objects["cable"][("medium-leaf-g1-r0", "swp1s0")]
    assert cable["b_device"] == "gpu001" and cable["type"] == "dac-passive" and cable["length"] == 3
    # each device's primary IPv4 is an address on its management port
    for name, f in d.objects["device"].items():
        assert d.objects["ip"][f["primary_ip4"]]["interface"] in ("eth0", "eno1"), name
    # every device type's templates are exactly the interfaces of its devices
    for name, f in d.objects["device"].items():
        mine = {i for (dev, i) in d.objects["interface"] if dev == name}
        assert {t[0] for t in d.device_types[f["device_type"]].templates} == mine


def test_same_plan_same_objects(medium):
    a, b = desired_objects(medium), desired_objects(medium)
    assert json.dumps(repr(a)) == json.dumps(repr(b))


def test_build_out_devices_are_planned_and_get_no_cables_until_installed():
    plan, full = _plans(16, 32)
    d = desired_objects(plan, full)
    installed = {sw.name for sw in plan.switches} | {h.name for h in plan.hosts}
    planned = {n for n, f in d.objects["device"].items() if f["status"] == PLANNED}
    assert planned and planned == set(d.objects["device"]) - installed
    assert len(d.objects["cable"]) == len(plan.links)
    # the next phase: the same keys, the Planned devices become Active, no cable of today changes
    grown, full2 = _plans(32, 32)
    d2 = desired_objects(grown, full2)
    assert set(d2.objects["device"]) == set(d.objects["device"])
    assert all(d2.objects["device"][n]["status"] == ACTIVE for n in planned)
    for key, f in d.objects["cable"].items():
        assert d2.objects["cable"][key] == f
    assert d2.device_types == d.device_types


def _actual(desired, tagged=True):
    return {kind: {k: Actual(dict(f), tagged, f"id-{i}") for i, (k, f) in enumerate(objs.items())}
            for kind, objs in desired.objects.items()}


def test_compare_nothing_when_nautobot_holds_the_plan(medium):
    d = desired_objects(medium)
    result = compare(d, _actual(d))
    assert not result.changes and not result.conflicts
    assert result.unchanged["interface"] == 696
    # 44 + 696 + 3 + 312 + 320 objects and the RoCE config context
    assert "0 to add, 0 to change, 1376 unchanged" in format_text(result)


def test_compare_changes_removals_and_untagged_conflicts(medium):
    d = desired_objects(medium)
    actual = _actual(d)
    actual["device"]["medium-leaf-g1-r0"] = Actual({**d.objects["device"]["medium-leaf-g1-r0"], "status": PLANNED}, True)
    actual["device"]["gpu001"] = Actual(dict(d.objects["device"]["gpu001"]), False)
    actual["cable"][("leaf-x", "swp9")] = Actual({}, True)
    actual["cable"][("leaf-y", "swp9")] = Actual({}, False)            # someone else's: left alone
    del actual["interface"][("gpu002", "eno1")]
    result = compare(d, actual)
    ops = {(c.kind, c.op, c.key) for c in result.changes}
    assert ("device", CHANGED, "medium-leaf-g1-r0") in ops
    assert ("interface", ADDED, ("gpu002", "eno1")) in ops
    assert ("cable", REMOVE, ("leaf-x", "swp9")) in ops
    assert not any(c.key == ("leaf-y", "swp9") for c in result.changes)
    assert len(result.conflicts) == 1 and "device gpu001" in result.conflicts[0]
    # an untagged device's interfaces are not reported as ours to add or change
    assert not any(c.kind == "interface" and c.key[0] == "gpu001" for c in result.changes)


def test_diff_groups_identical_changes_as_device_ranges(medium):
    d = desired_objects(medium)
    actual = _actual(d)
    for n in range(1, 9):
        name = f"gpu00{n}"
        actual["device"][name] = Actual({**d.objects["device"][name], "status": PLANNED}, True)
    text = format_text(compare(d, actual))
    assert "~ 8 devices: status: Planned -> Active  x gpu[001-008]" in text
    doc = json.loads(format_json(compare(d, actual)))
    assert doc["counts"]["device"] == {"added": 0, "changed": 8, "unchanged": 36, "would_remove": 0}
    assert doc["changes"][0] == {"kind": "device", "key": "gpu001", "op": "changed",
                                 "fields": {"status": {"old": "Planned", "new": "Active"}}}
    md = format_markdown(compare(d, actual))
    assert "| devices | 0 | 8 | 36 | 0 |" in md


def _state(plan, **override):
    s = State()
    for i, sw in enumerate(plan.switches):
        s.serials[sw.name] = f"MT{i:04d}"
        s.macs[(sw.name, "eth0")] = f"44:38:39:00:00:{i:02x}"
    for k, v in override.items():
        setattr(s, k, v)
    return s


def test_pull_writes_what_day0_reads_and_reports_changes(medium, tmp_path):
    out = tmp_path / "inv.csv"
    pulled = pull(medium, _state(medium), out)
    inv = parse_inventory(pulled.text, "inv.csv", medium)
    assert len(inv.switches) == 12 and pulled.missing == [h.name for h in medium.hosts]
    assert pulled.text.splitlines()[1] == f"{medium.switches[0].name},MT0000,44:38:39:00:00:00"
    out.write_text(pulled.text)
    moved = _state(medium)
    moved.serials[medium.switches[3].name] = "MT9999"
    again = pull(medium, moved, out)
    assert again.changed == [f"changed: {medium.switches[3].name} serial MT0003 -> MT9999 since the last pull"]


def test_pull_refuses_a_duplicate_mac_naming_both(medium, tmp_path):
    s = _state(medium)
    a, b = medium.switches[0].name, medium.switches[5].name
    s.macs[(b, "eth0")] = s.macs[(a, "eth0")]
    with pytest.raises(SotError, match=f"{a}:eth0 and {b}:eth0 the same MAC"):
        pull(medium, s, tmp_path / "inv.csv")


def test_token_from_env_or_a_private_file(tmp_path, monkeypatch):
    monkeypatch.setenv("NB_T", " abc \n")
    assert read_token("NB_T", None) == "abc"
    monkeypatch.delenv("NB_T")
    with pytest.raises(Exception, match=r"\$NB_T is not set"):
        read_token("NB_T", None)
    f = tmp_path / "token"
    f.write_text("s3cret\n")
    os.chmod(f, 0o644)
    with pytest.raises(Exception, match="chmod 600") as info:
        read_token("NB_T", str(f))
    assert "s3cret" not in str(info.value)
    os.chmod(f, 0o600)
    assert read_token("NB_T", str(f)) == "s3cret"


def test_cli_bad_input_is_one_line_before_any_request(tmp_path):
    from tests.cli_runner import run_cli

    intent = "inventories/medium/fabric.yaml"
    env = {**os.environ, "NAUTOBOT_TOKEN": "t0ken-not-printed"}
    no_url = run_cli("sot", "diff", intent, env=env)
    assert no_url.returncode == 2 and "give --url" in no_url.stderr
    bad_url = run_cli("sot", "push", intent, "--url", "ftp://x", env=env)
    assert bad_url.returncode == 2 and "not an http(s) URL" in bad_url.stderr
    bad_prune = run_cli("sot", "push", intent, "--url", "http://127.0.0.1:9", "--prune", "all", env=env)
    assert bad_prune.returncode == 2 and "--prune 'all'" in bad_prune.stderr
    no_token = run_cli("sot", "diff", intent, "--url", "http://127.0.0.1:9",
                       env={k: v for k, v in env.items() if k != "NAUTOBOT_TOKEN"})
    assert no_token.returncode == 1 and "$NAUTOBOT_TOKEN is not set" in no_token.stderr
    # nothing listens on the discard port of loopback: refused, one line, the token never shown
    down = run_cli("sot", "pull", intent, "--url", "http://127.0.0.1:9", "-o", str(tmp_path / "inv.csv"), env=env)
    assert down.returncode == 1 and "cannot reach Nautobot" in down.stderr
    assert "t0ken-not-printed" not in down.stderr + down.stdout
    assert not (tmp_path / "inv.csv").exists()


def test_url_from_fabricgen_toml(tmp_path):
    from tests.cli_runner import run_cli

    intent = tmp_path / "fabric.yaml"
    intent.write_text(open("inventories/medium/fabric.yaml").read())
    toml = tmp_path / "fabricgen.toml"
    toml.write_text('[defaults.sot.diff]\nurl = "http://127.0.0.1:9"\n')
    os.chmod(toml, 0o600)
    out = run_cli("sot", "diff", str(intent), env={**os.environ, "NAUTOBOT_TOKEN": "x"})
    assert out.returncode == 1 and "http://127.0.0.1:9: cannot reach Nautobot" in out.stderr


def _held(actual) -> dict:
    """Every end of every cable in ACTUAL, as Nautobot's interfaces report the cable on them."""
    held = {}
    for key, got in actual["cable"].items():
        held[key] = got.id
        held[(got.fields["b_device"], got.fields["b_port"])] = got.id
    return held


def test_a_planned_cable_end_held_by_a_cable_not_ours_is_a_conflict_up_front(medium):
    d = desired_objects(medium)
    actual = _actual(d)
    (k1, f1), (k2, f2) = list(d.objects["cable"].items())[:2]
    # k1 is not in Nautobot yet; someone else's cable, on another A end, holds k1's B end
    del actual["cable"][k1]
    actual["cable"][("leaf-z", "swp1")] = Actual({"b_device": f1["b_device"], "b_port": f1["b_port"]}, False, "theirs")
    held = _held(actual)
    # k2 is missing too and its A end holds a cable from a device outside the fabric's location
    k2_id = actual["cable"].pop(k2).id
    held = {end: cid for end, cid in held.items() if cid != k2_id}
    held[k2] = "from-outside"
    result = compare(d, actual, held)
    assert result.conflicts == [
        f"conflict: cable leaf-z:swp1 (without the tag {d.tag}) holds {f1['b_device']}:{f1['b_port']}, which the plan "
        f"cables as {k1[0]}:{k1[1]} -> {f1['b_device']}:{f1['b_port']}: fabricgen does not change cables it does not "
        "own; remove that cable in Nautobot, or add the tag if it is this fabric's",
        f"conflict: a cable whose A end is outside the fabric's location holds {k2[0]}:{k2[1]}, which the plan cables "
        f"as {k2[0]}:{k2[1]} -> {f2['b_device']}:{f2['b_port']}: fabricgen does not change cables it does not own; "
        "remove that cable in Nautobot, or add the tag if it is this fabric's"]
    # without the interfaces' cables read, nothing is checked (the earlier callers' contract)
    assert not compare(d, actual).conflicts


def test_a_cable_the_plan_moved_to_another_a_end_is_replaced_not_a_conflict(medium):
    d = desired_objects(medium)
    actual = _actual(d)
    key, f = next(iter(d.objects["cable"].items()))
    old = actual["cable"].pop(key)
    # Nautobot holds this fabric's cable from the old A end port to the same B end
    moved_from = (key[0], "swp99")
    actual["cable"][moved_from] = Actual({**old.fields}, True, old.id)
    result = compare(d, actual, _held(actual))
    assert not result.conflicts
    assert result.replaced == {moved_from: key}
    assert (("cable", ADDED, key) in {(c.kind, c.op, c.key) for c in result.changes}
            and ("cable", REMOVE, moved_from) in {(c.kind, c.op, c.key) for c in result.changes})
    assert f"cable {moved_from[0]}:swp99 is replaced by {key[0]}:{key[1]}: a push deletes it first" in format_text(result)
    assert json.loads(format_json(result))["replaced"] == {f"{moved_from[0]}:swp99": f"{key[0]}:{key[1]}"}


def test_two_of_our_cables_swapping_b_ends_move_on_their_keys(medium):
    d = desired_objects(medium)
    actual = _actual(d)
    (k1, f1), (k2, f2) = list(d.objects["cable"].items())[:2]
    a1, a2 = actual["cable"][k1], actual["cable"][k2]
    actual["cable"][k1] = Actual({**a1.fields, "b_device": f2["b_device"], "b_port": f2["b_port"]}, True, a1.id)
    actual["cable"][k2] = Actual({**a2.fields, "b_device": f1["b_device"], "b_port": f1["b_port"]}, True, a2.id)
    result = compare(d, actual, _held(actual))
    assert not result.conflicts and not result.replaced
    assert {c.key for c in result.changes if c.op == CHANGED} == {k1, k2}


def test_with_the_bgp_models_app_each_switch_asn_is_a_routing_instance(medium):
    from generator.sot.objects import with_bgp_models

    d = desired_objects(medium)
    b = with_bgp_models(d)
    switches = {sw.name: sw for sw in medium.switches}
    assert set(b.objects["bgp"]) == {n for n, sw in switches.items() if sw.asn is not None} and b.objects["bgp"]
    for name, f in b.objects["bgp"].items():
        assert f == {"asn": switches[name].asn, "router_id": f"{switches[name].loopback}/32", "status": ACTIVE}
    assert all("asn" not in f for f in b.objects["device"].values())
    assert d.objects["device"]["medium-leaf-g1-r0"]["asn"] == 65101          # the input is not changed
    # compared and reported as their own kind; a server without the app gets no such row
    actual = _actual(b)
    del actual["bgp"]["medium-leaf-g1-r0"]
    result = compare(b, actual)
    assert [(c.kind, c.op, c.key) for c in result.changes] == [("bgp", ADDED, "medium-leaf-g1-r0")]
    assert "| BGP routing instances | 1 | 0 |" in format_markdown(result)
    assert "BGP routing" not in format_markdown(compare(d, _actual(d)))
