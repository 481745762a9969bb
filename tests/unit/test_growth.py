"""Growth with topology.build_out (issue 21, DESIGN.md "Growth"): growing n1 -> n2 <= build_out
only adds. Properties over many (kind, n1, n2, build_out) combinations, on the compiled plan
(hypothesis, hundreds of cases) and on the rendered files (a seeded sample of every kind, both
NOSes, numbered and unnumbered fabric links, breakouts)."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from generator.checks.runner import run_checks
from generator.gitops.plan_compare import compare_renders
from generator.intent.loader import LoadedIntent, parse_yaml, validate_data
from generator.plan.compile import compile_plan
from generator.plan.model import ROLE_LEAF, ROLE_SPINE, ROLE_SUPER_SPINE, TIER_HOST_LEAF
from generator.plan.topology import CompileError
from generator.render.output import render_files
from tests.cli_runner import run_cli
from tests.conftest import examples

# libyaml when PyYAML has it: these tests parse thousands of rendered files
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
KINDS = ("single-switch", "leaf-spine", "rail-optimized", "three-tier", "dragonfly-plus")
# (nic speed, leaf/spine model): native ports and 2-, 4-way breakouts
SPEED_MODELS = (("400G", "SN5600"), ("200G", "SN5600"), ("100G", "SN4600C"), ("400G", "SN4700"),
                ("800G", "SN5600"), ("100G", "SN2700"))


def intent_data(kind: str, nodes: int, build_out: int | None, *, rails: int = 8, speed: str = "400G",
                model: str = "SN5600", ratio: str = "1:1", unit: int = 32, groups: int = 2,
                numbered: bool = False, sonic: bool = False, core_m: float | None = None) -> dict:
    topology = {"kind": kind, "nodes": nodes, "rails": rails, "nic_speed": speed, "oversubscription": ratio,
                "switches": {"leaf": {"model": model}}}
    if kind != "single-switch":
        topology["switches"]["spine"] = {"model": model}
    if kind == "three-tier":
        topology["switches"]["super_spine"] = {"model": model}
    if kind in ("rail-optimized", "three-tier"):
        topology["nodes_per_unit"] = unit
    if kind == "dragonfly-plus":
        topology["groups"] = groups
    if core_m is not None:
        topology["cables"] = {"spine_super_spine": core_m}
    if build_out is not None:
        topology["build_out"] = {"nodes": build_out}
    data = {"fabric": {"name": "grow"}, "topology": topology,
            "addressing": {"rails": "172.16.0.0/12", "management": "10.0.0.0/16",
                           "asn": {"spine": 4200000000, "leaf_base": 4200001000}}}
    if numbered or sonic:
        data["addressing"]["fabric_links"] = "10.128.0.0/12"
    if sonic:
        data["switch_os"] = {"name": "sonic", "version": "202411"}
    return data


def plan_of(data: dict):
    return compile_plan(validate_data(data, {}, "t.yaml"))


def _top_tier(plan) -> set:
    """The switches racked in full from the first phase: two-tier spines, super-spines."""
    return {s for s in plan.switches if s.role == ROLE_SUPER_SPINE
            or (s.role == ROLE_SPINE and s.unit is None and s.group is None)}


def assert_only_adds(p1, p2) -> None:
    """Everything p1 has, p2 has unchanged: links (cables), switches (name, ASN, loopback, mgmt IP,
    ...), hosts (every NIC address and leaf port) and switch ports (every per-port setting)."""
    links2 = set(p2.links)
    moved = [lk for lk in p1.links if lk not in links2]
    assert not moved, f"{len(moved)} cable(s) moved, first {moved[0]}"
    switches2 = set(p2.switches)
    changed = [s for s in p1.switches if s not in switches2]
    assert not changed, f"switch changed: {changed[0]}"
    hosts2 = {h.name: h for h in p2.hosts}
    assert all(hosts2.get(h.name) == h for h in p1.hosts)
    ports2 = set(p2.ports)
    assert all(p in ports2 for p in p1.ports)
    assert _top_tier(p1) == _top_tier(p2)
    assert len(p2.links) >= len(p1.links)


@st.composite
def growth_cases(draw):
    kind = draw(st.sampled_from(KINDS))
    speed, model = draw(st.sampled_from(SPEED_MODELS))
    rails = draw(st.sampled_from((1, 2, 4, 8)))
    ceiling = 40 if kind == "single-switch" else 260
    build_out = draw(st.integers(2, ceiling))
    n1 = draw(st.integers(1, build_out))
    n2 = draw(st.integers(n1, build_out))
    return dict(kind=kind, n1=n1, n2=n2, build_out=build_out, rails=rails, speed=speed, model=model,
                ratio=draw(st.sampled_from(("1:1", "1:1", "2:1", "3:2"))), unit=draw(st.sampled_from((8, 16, 32))),
                groups=draw(st.integers(2, 5)), numbered=draw(st.booleans()))


@settings(max_examples=examples(200), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(growth_cases())
def test_growing_within_build_out_only_adds(case) -> None:
    kw = {k: case[k] for k in ("rails", "speed", "model", "ratio", "unit", "numbered")}
    kw["groups"] = min(case["groups"], case["build_out"])
    kind, n1, n2, total = case["kind"], case["n1"], case["n2"], case["build_out"]
    try:
        full = plan_of(intent_data(kind, total, None, **kw))
    except CompileError:
        assume(False)               # the build-out itself is infeasible (FG104 etc.): nothing to grow
    p1 = plan_of(intent_data(kind, n1, total, **kw))
    p2 = plan_of(intent_data(kind, n2, total, **kw))
    p_full = plan_of(intent_data(kind, total, total, **kw))
    assert len(p1.hosts) == n1 and len(p2.hosts) == n2
    assert_only_adds(p1, p2)
    assert_only_adds(p2, p_full)
    # build_out equal to nodes is the fabric without build_out
    assert (p_full.switches, p_full.hosts, p_full.links, p_full.ports) == \
        (full.switches, full.hosts, full.links, full.ports)
    # no switch without a link, and every installed host link lands on an installed leaf
    names = {s.name for s in p1.switches}
    assert all(h_nic.switch in names for h in p1.hosts for h_nic in h.nics)
    linked = {lk.a_device for lk in p1.links} | {lk.b_device for lk in p1.links}
    assert names <= linked | {s.name for s in _top_tier(p1)}


def test_top_tier_in_full_and_leaves_as_needed() -> None:
    """rail-optimized, 2 of 8 units: the build-out's spines all racked, only the 2 units' leaves."""
    full = plan_of(intent_data("rail-optimized", 256, None))
    phase = plan_of(intent_data("rail-optimized", 64, 256))
    spines = [s for s in full.switches if s.role == ROLE_SPINE]
    assert [s for s in phase.switches if s.role == ROLE_SPINE] == spines
    leaves = [s for s in phase.switches if s.role == ROLE_LEAF]
    assert len(leaves) == 2 * 8 and {s.unit for s in leaves} == {1, 2}
    # a spine port facing a not-yet-installed unit is reserved: no link, no port row
    spine = spines[0].name
    assert len(phase.ports_of(spine)) < len(full.ports_of(spine))
    assert {p.peer_device for p in phase.ports_of(spine)} <= {s.name for s in leaves}


def test_dragonfly_nodes_fill_groups_in_order() -> None:
    """groups is the build-out's group count: the first phase fills group 1; group 2's spines and
    the global links to them wait, their ports reserved on group 1's spines."""
    phase = plan_of(intent_data("dragonfly-plus", 10, 64, rails=4, groups=2))
    assert {h.group for h in phase.hosts} == {1}
    assert {s.group for s in phase.switches} == {1}
    assert not [lk for lk in phase.links if lk.tier == "global"]
    later = plan_of(intent_data("dragonfly-plus", 33, 64, rails=4, groups=2))
    assert {h.group for h in later.hosts} == {1, 2}
    assert [lk for lk in later.links if lk.tier == "global"]


# --- rendered files ------------------------------------------------------------------------
def render(data: dict) -> tuple[object, dict[str, str]]:
    text = yaml.safe_dump(data, sort_keys=False)
    parsed, lines = parse_yaml(text, "t.yaml")
    result = run_checks(LoadedIntent(intent=validate_data(parsed, lines, "t.yaml"), file="t.yaml", lines=lines,
                                     text=text))
    assert not result.errors, [e.one_line() for e in result.errors]
    return result.plan, render_files(result.plan, text)


def flatten(value, path=()):
    """(path, leaf) pairs of a parsed config. A list of mappings (NVUE's `- set:`) is walked by
    position; any other list is one leaf compared as a whole."""
    if isinstance(value, dict):
        if not value:
            yield path, "{}"
        for key, inner in value.items():
            yield from flatten(inner, (*path, str(key)))
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, inner in enumerate(value):
            yield from flatten(inner, (*path, i))
    else:
        yield path, json.dumps(value, sort_keys=True)


def _cabled(path: tuple, value: str, new: dict) -> bool:
    """SONiC lists every port in PORT and a reserved one is admin-down (growth.py): the one
    setting a phase may change is that port coming up, when it gains its cable."""
    return (len(path) == 3 and path[0] == "PORT" and path[2] == "admin_status" and value == '"down"'
            and new.get(path) == '"up"' and ("DEVICE_NEIGHBOR", path[1], "name") in new)


def parsed(rel: str, text: str):
    return json.loads(text) if rel.endswith(".json") else yaml.load(text, Loader=SAFE_LOADER)


def cables(text: str) -> set[frozenset]:
    return {frozenset({(r["a_device"], r["a_port"]), (r["b_device"], r["b_port"])})
            for r in csv.DictReader(io.StringIO(text))}


def _render_cases() -> list[tuple]:
    cases = [
        ("rail-optimized", 64, 65, 256, {}),
        ("rail-optimized", 64, 256, 256, {"sonic": True}),
        ("leaf-spine", 3, 17, 64, {"rails": 8}),
        ("three-tier", 33, 130, 256, {"numbered": True}),
        ("three-tier", 20, 50, 64, {"sonic": True, "unit": 16, "rails": 4, "core_m": 30}),
        ("dragonfly-plus", 5, 40, 64, {"rails": 4}),
        ("dragonfly-plus", 20, 45, 60, {"rails": 2, "groups": 3, "sonic": True}),
        ("single-switch", 2, 7, 8, {"rails": 8}),
        ("rail-optimized", 10, 70, 80, {"speed": "100G", "model": "SN4600C", "rails": 2, "unit": 40}),
    ]
    rng = random.Random(20261204)
    for _ in range(5):
        kind = rng.choice(KINDS[1:])
        total = rng.randint(20, 140)
        n1 = rng.randint(1, total - 1)
        cases.append((kind, n1, rng.randint(n1 + 1, total), total,
                      {"rails": rng.choice((2, 4, 8)), "unit": rng.choice((16, 32)), "sonic": rng.random() < 0.4,
                       "numbered": rng.random() < 0.5}))
    return cases


@pytest.mark.parametrize("kind,n1,n2,total,kw", _render_cases(),
                         ids=lambda v: v if isinstance(v, str | int) else "-".join(f"{k}={x}" for k, x in v.items()))
def test_rendered_growth_only_adds(kind, n1, n2, total, kw) -> None:
    p1, f1 = render(intent_data(kind, n1, total, **kw))
    p2, f2 = render(intent_data(kind, n2, total, **kw))
    # every existing host's files byte-identical
    host_files = [rel for rel in f1 if rel.startswith("hosts/")]
    assert host_files
    assert [rel for rel in host_files if f2.get(rel) != f1[rel]] == []
    # every existing switch only gains settings
    for rel in (r for r in f1 if r.startswith("switches/")):
        assert rel in f2, f"{rel} disappeared"
        old, new = dict(flatten(parsed(rel, f1[rel]))), dict(flatten(parsed(rel, f2[rel])))
        lost = [path for path, value in old.items() if new.get(path) != value and not _cabled(path, value, new)]
        assert not lost, f"{rel}: {len(lost)} setting(s) changed or removed, first {lost[0]}"
    # the cables: none moved or removed, some added
    c1, c2 = cables(f1["cabling.csv"]), cables(f2["cabling.csv"])
    assert c1 <= c2 and len(c2) > len(c1)
    # ... and `fabricgen plan --format json` says the same
    summary = compare_renders(f1, f2, fabric="grow", against="n1").as_json()["summary"]
    assert summary["cables"] == {"kept": len(c1), "added": len(c2 - c1), "moved": 0, "removed": 0}
    assert summary["removed"] == 0
    # ASN, loopback, mgmt IP of every existing switch
    sw2 = {s.name: (s.asn, s.loopback, s.mgmt_ip) for s in p2.switches}
    assert all(sw2[s.name] == (s.asn, s.loopback, s.mgmt_ip) for s in p1.switches)


def test_build_out_equal_to_nodes_changes_no_byte() -> None:
    data = intent_data("three-tier", 70, None, rails=4, unit=16)
    _, plain = render(data)
    data["topology"]["build_out"] = {"nodes": 70}
    _, same = render(data)
    assert {k: v for k, v in plain.items() if k != "manifest.json"} == \
        {k: v for k, v in same.items() if k != "manifest.json"}


def test_plan_json_records_the_build_out() -> None:
    _, files = render(intent_data("rail-optimized", 40, 256))
    assert json.loads(files["plan.json"])["build_out"] == {"nodes": 256, "installed_nodes": 40}


# --- errors and the FG113 warning ----------------------------------------------------------
def test_the_build_out_is_checked_too() -> None:
    """A phase whose own switches pass, but whose build-out overfills the super-spines' lossless
    pool (100 m links on every reserved port): refused now, not in the phase that cables them."""
    phase = intent_data("three-tier", 8, 128, rails=4, unit=16, sonic=True)
    found = [f for f in _check(phase).findings if f.code == "FG220"]
    assert found and all(f.message.startswith("at the build-out (128 nodes): ") for f in found)
    assert not [f for f in _check(intent_data("three-tier", 8, None, rails=4, unit=16, sonic=True)).findings
                if f.code == "FG220"]


def test_more_nodes_than_build_out_is_one_error_and_nothing_written(tmp_path) -> None:
    path = tmp_path / "fabric.yaml"
    path.write_text(yaml.safe_dump(intent_data("rail-optimized", 65, 64), sort_keys=False))
    out = tmp_path / "out"
    r = run_cli("render", str(path), "-o", str(out))
    assert r.returncode == 1, r.stdout + r.stderr
    errors = [ln for ln in (r.stdout + r.stderr).splitlines() if " error FG" in ln]
    assert len(errors) == 1 and "FG112 topology.build_out.nodes" in errors[0], errors
    line = next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if ln.strip().startswith("nodes: 64"))
    assert errors[0].startswith(f"{path}:{line}: ")
    assert "Traceback" not in r.stderr and not out.exists()


def _check(data: dict):
    text = yaml.safe_dump(data, sort_keys=False)
    parsed_data, lines = parse_yaml(text, "t.yaml")
    return run_checks(LoadedIntent(intent=validate_data(parsed_data, lines, "t.yaml"), file="t.yaml",
                                   lines=lines, text=text))


def _fg113(data: dict) -> list:
    return [f for f in _check(data).findings if f.code == "FG113"]


def _moved_by_next_node(kind: str, nodes: int, **kw) -> int:
    """Switch-to-switch cables of NODES that the fabric of NODES + 1 no longer has (both compiled)."""
    now, bigger = plan_of(intent_data(kind, nodes, None, **kw)), plan_of(intent_data(kind, nodes + 1, None, **kw))
    have = set(bigger.links)
    return sum(lk not in have for lk in now.links if lk.tier != TIER_HOST_LEAF)


def test_fg113_when_the_next_node_recables() -> None:
    # 2 full units of 32 fill the spines' ports: node 65 needs more spines (the issue's 508 cables)
    found = _fg113(intent_data("rail-optimized", 64, None))
    moved = _moved_by_next_node("rail-optimized", 64)
    assert moved > 0 and len(found) == 1
    assert f"moves {moved} of " in found[0].message and "topology.build_out" in found[0].message
    assert found[0].path == "topology.nodes" and found[0].severity == "warning"
    # the same fabric with a build-out: no warning
    assert _fg113(intent_data("rail-optimized", 64, 256)) == []


def test_no_fg113_when_the_next_node_only_adds() -> None:
    # leaf-spine with room on the last leaf and the spines: node 21 only adds
    assert _moved_by_next_node("leaf-spine", 20) == 0
    assert _fg113(intent_data("leaf-spine", 20, None)) == []


def test_fg113_explain_says_how_to_set_build_out() -> None:
    r = run_cli("validate", "--explain", "FG113")
    assert r.returncode == 0 and "build_out: {nodes: N}" in r.stdout
