"""Mutated intents never crash or hang fabricgen.

Start from an example (mostly the medium one), mutate it (delete keys, wrong types,
huge/negative values, unknown keys, then optionally corrupt the YAML text), and push it
through load_intent -> run_checks -> render into a temporary directory. Every outcome
must be one of: IntentError with one-line problems, error findings with one line each
naming a key path, or a render that wrote only inside its output directory. Any other
exception is a bug.

Crashes the fuzz found in the loader and intent model are fixed and pinned at the end
of this file as regression cases.
"""

from __future__ import annotations

import copy
import os
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from generator.checks.nccl_path_rules import PATH_KEYS
from generator.checks.runner import run_checks
from generator.intent.loader import MAX_DEPTH, MAX_INTENT_BYTES_ENV, IntentError, load_intent
from generator.render.output import render_files, write_tree
from tests.conftest import example, examples

BASES: dict[str, dict[str, Any]] = {n: yaml.safe_load(example(n).read_text()) for n in ("small", "medium", "large")}
BASE = BASES["medium"]

# Values a careless or hostile editor might type. Integers stay small or far out of every
# range: a valid 150,000-node fabric is legitimately slow to render and proves nothing here.
ODD_VALUES = [
    None, True, False, 0, -1, 1, 2, 3, 7, 64, 100, 4097, 10**6, 2**31, 2**63, -2**63, 10**30,
    0.5, 1.5, -0.0, 1e308, float("inf"), float("-inf"), float("nan"),
    "", " ", "abc", "400G", "0G", "1:1", "0:1", "2:1", "150KB", "1.5MB", "-5KB", "10.0.0.0/8", "10.0.0.1/8",
    "0.0.0.0/0", "unnumbered", "SN5600", "SN2201", "torus", "lossy", "DAC", "AOC", "gpu{n}", "{n}", "{",
    "{0}", "{n:x}", "é", "x" * 300, "70e9", "0x1A", "\t", "a\nb", [], {}, [1, 2], {"a": 1}, [{"netdev": "e"}],
    # issue 15: values that used to pass validation and render wrong
    10**38, "-", "gpu{n}\n", "gpu{n!s:.1}", "a\0b", "inf", "nan", "0x10", "1.5", "yes", "null", "1e3", "~",
    "{{ lookup('pipe','id') }}", "../../tmp/evil", "/etc/passwd",
]
UNKNOWN_KEYS = ["bogus", "Nodes", "mtu ", "global_", "__class__", "model", "1"]
YAML_NOISE = list(":{}[]-#&*!|>'\"%@`,? \n\t") + ["\n  ", ": ", "- ", "!!python/object:os.system ", "*a", "&a "]


def _odd() -> st.SearchStrategy:
    # a fresh copy each time: later mutations must not edit the shared palette
    return st.sampled_from(ODD_VALUES).map(copy.deepcopy)


# per dotted path, then per key name: values of the right shape that still stress rules,
# compile and render
PLAUSIBLE_AT = {
    "fabric.name": ["medium", "x", "a-b-c", "gpu", "0", "-", "a-", "-a", "medium\n", "x" * 40],
    "switch_os.name": ["cumulus", "sonic"],
    "hosts.name": ["gpu{n}", "n{n:05d}", "medium-leaf-g1-r{n}", "medium-spine-g1-{n}", "h-{n}-x", "{n}",
                   "gpu{n!s:.1}", "gpu{n!s:.2}", "gpu{n}\n", "gpu{n:c}", "g{n:x}", "g{n:o}"],
    "deploy.user": ["cumulus", "admin", "{{ lookup('pipe','id') }}", "root\n", "a b"],
}
PLAUSIBLE = {
    "kind": ["single-switch", "leaf-spine", "rail-optimized", "three-tier", "dragonfly-plus", "torus"],
    "nic_speed": ["1G", "50G", "100G", "200G", "400G", "800G", "1600G"],
    "oversubscription": ["1:1", "2:1", "3:1", "1:2", "4:3", "7:5", "64:1"],
    "model": ["SN2201", "SN2700", "SN3700", "SN4600C", "SN4600", "SN4700", "SN5400", "SN5600", "SN9999"],
    "loopbacks": ["10.0.0.0/8", "10.255.0.0/24", "10.255.0.0/30", "172.16.0.0/12", "192.168.0.0/20"],
    "rails": ["172.16.0.0/12", "172.16.0.0/24", "172.16.0.0/30", "10.0.0.0/8", "192.168.0.0/16"],
    "management": ["192.168.0.0/20", "192.168.0.0/28", "10.255.0.0/16", "172.16.0.0/12"],
    "fabric_links": ["unnumbered", "10.254.0.0/16", "10.254.0.0/30", "10.255.0.0/16"],
    "min_threshold": ["0B", "1B", "150KB", "300KB", "1500KB", "20MB", 0, 4096, 10**38, "200MB"],
    "max_threshold": ["0B", "150KB", "1500KB", "20MB", 1, 10**38, "16MB", "160MB"],
    "model_params": [70e9, 1.0, 1e30, ".inf", "inf", "nan", "70e9"],
    "mode": ["lossless", "lossy"],
    "version": ["4.4", "5.4", "5.9", "5.11", "5.15", "5.19", "6.0"],
    "netdev": ["ens1f0np0", "eno1", "e", "ens1f0np0.100", "0x10", "1.5", "yes", "null", "1e3", "..", "eth0\n"],
    "rdma": ["mlx5_0", "mlx5_9", "x"],
    "mgmt_interface": ["eno1", "ens1f0np0", "lo", ".", "eno1\n", "0x10"],
    "nic_tooling": ["mlnx_qos", "dcb"],
}


def _plausible(path: tuple, value: Any) -> st.SearchStrategy:
    dotted, key = ".".join(map(str, path)), path[-1]
    if dotted in PLAUSIBLE_AT:
        return st.sampled_from(PLAUSIBLE_AT[dotted])
    if key in PLAUSIBLE:
        return st.sampled_from(PLAUSIBLE[key])
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.one_of(st.integers(-3, 70), st.sampled_from([0, 255, 4095, 4096, 9216, 23456, 65535, 64999,
                                                              4294967295, 4294967296]))
    if isinstance(value, float):
        return st.floats(0.01, 2000, allow_nan=False)
    return _odd()


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*prefix, k))
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((*prefix, i))
            out += _paths(v, (*prefix, i))
    return out


def _parent(data: Any, path: tuple) -> Any:
    for part in path[:-1]:
        data = data[part]
    return data


@st.composite
def mutated_intent(draw, ops: tuple[str, ...] = ("delete", "replace", "tweak", "tweak", "tweak", "add"),
                   corrupt: bool = True) -> str:
    data = copy.deepcopy(BASES[draw(st.sampled_from(["medium", "medium", "small", "large"]))])
    for _ in range(draw(st.sampled_from([1, 1, 2, 3, 4]))):
        # deepest first: shrinking favours the first entry, and a mangled leaf says more than a lost section
        paths = sorted(_paths(data), key=len, reverse=True)
        op = draw(st.sampled_from(ops))
        if op == "add" or not paths:
            holders = [()] + [p for p in paths if isinstance(_parent(data, (*p, None)), dict)]
            where = draw(st.sampled_from(holders))
            target = _parent(data, (*where, None))
            target[draw(st.sampled_from(UNKNOWN_KEYS))] = draw(_odd())
            continue
        path = draw(st.sampled_from(paths))
        parent = _parent(data, path)
        if op == "delete":
            del parent[path[-1]]
        elif op == "tweak":
            # same type, other value: gets past the schema and into rules, compile and render
            parent[path[-1]] = draw(_plausible(path, parent[path[-1]]))
        else:
            parent[path[-1]] = draw(st.one_of(_odd(), st.integers(-1000, 1000),
                                              st.text(max_size=12)))
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    # then, sometimes, damage the text itself
    for _ in range(draw(st.sampled_from([0, 0, 0, 0, 0, 1, 2, 3])) if corrupt else 0):
        pos = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["insert", "delete", "dup-line"]))
        if kind == "insert":
            text = text[:pos] + draw(st.sampled_from(YAML_NOISE)) + text[pos:]
        elif kind == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 20)):]
        else:
            lines = text.splitlines(keepends=True)
            i = draw(st.integers(0, max(0, len(lines) - 1)))
            text = "".join(lines[:i + 1] + lines[i:])
    return text


def _exercise(text: str, work: Path) -> str:
    intent_file = work / "fabric.yaml"
    intent_file.write_text(text, encoding="utf-8")
    try:
        loaded = load_intent(intent_file)
    except IntentError as exc:
        assert exc.problems
        for p in exc.problems:
            line = str(p)
            assert line and "\n" not in line, line
            assert p.path or p.line or "YAML" in p.message or "mapping" in p.message, line
        return "rejected"
    result = run_checks(loaded)
    for f in result.findings:
        assert "\n" not in f.one_line(), f.one_line()
        assert f.path, f.one_line()
    if result.errors:
        return "errors"
    assert result.plan is not None
    files = render_files(result.plan, loaded.text)
    out = write_tree(files, work / "out")
    assert (out / "plan.json").is_file()
    # nothing outside the output directory (a host name is part of every host file path)
    assert sorted(p.name for p in work.iterdir()) == ["fabric.yaml", "out"]
    assert all((out / rel).is_file() for rel in files)
    # issue 15: every host its own directory (no merged names), names and interfaces whole labels,
    # nccl.conf plain ASCII, inventory strings either plain or !unsafe, netplan keys strings
    plan = result.plan
    names = [h.name for h in plan.hosts]
    assert len(set(names)) == len(names) == loaded.intent.topology.nodes
    assert sorted(p.name for p in (out / "hosts").iterdir()) == sorted(names)
    for host in plan.hosts[:2]:
        conf = (out / "hosts" / host.name / "nccl.conf").read_bytes()
        assert all(b in (9, 10) or 32 <= b <= 126 for b in conf), conf
        netplan = yaml.safe_load((out / "hosts" / host.name / "netplan.yaml").read_text())
        assert list(netplan["network"]["ethernets"]) == [nic.netdev for nic in host.nics]
    inventory = (out / "inventory.yml").read_text()
    assert "{{" not in inventory.replace('!unsafe "{{', "")
    return "rendered"


def _run(text: str) -> None:
    work = Path(tempfile.mkdtemp(prefix="fg-fuzz-"))
    try:
        event(_exercise(text, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)


FUZZ = settings(max_examples=examples(200), deadline=timedelta(seconds=10),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(text=mutated_intent())
def test_mutated_intents_fail_cleanly(text):
    _run(text)


# Most blind mutations stop at the schema; these keep the shape valid so that rules, the
# compiler and the renderers see the odd values.
@settings(FUZZ, max_examples=examples(150))
@given(text=mutated_intent(ops=("tweak",), corrupt=False))
def test_well_formed_oddities_fail_cleanly_or_render(text):
    _run(text)


def test_the_unmutated_base_renders(tmp_path):
    assert _exercise(yaml.safe_dump(BASE, sort_keys=False), tmp_path) == "rendered"


# ---------------------------------------------------------------------------------------------
# Crashes the fuzz found outside the rule catalog (loader, intent model, render), fixed:
# each used to print a traceback or write outside DIR; the contract is a one-line error.

_KNOWN_BAD = {
    # loader._walk follows the alias back into itself: RecursionError
    "recursive-alias": ("hosts:", "hosts: &h\n  loop: [*h]\n  "),
    # Hosts._name_template catches KeyError/IndexError/ValueError only
    "name-attribute": ('name: "gpu{n:03d}"', 'name: "gpu{n.real.x}"'),
    "name-subscript": ('name: "gpu{n:03d}"', 'name: "gpu{n[0]}"'),
    # nothing bounds a host name: 300-character directory names fail in write_tree (OSError)
    "name-too-long": ('name: "gpu{n:03d}"', 'name: "gpu{n:>300}"'),
}


@pytest.mark.parametrize("case", sorted(_KNOWN_BAD))
def test_known_crash_elsewhere(case, tmp_path):
    old, new = _KNOWN_BAD[case]
    text = example("medium").read_text()
    assert old in text
    _exercise(text.replace(old, new, 1), tmp_path)


def test_host_name_cannot_escape_the_output_directory(tmp_path):
    text = example("medium").read_text().replace('name: "gpu{n:03d}"', 'name: "../../escape{n}"', 1)
    (tmp_path / "w").mkdir()
    _exercise(text, tmp_path / "w")
    assert not list(tmp_path.glob("escape*"))


def test_huge_host_name_width_is_refused_before_formatting(tmp_path):
    """A format width of two billion used to allocate gigabytes before the length check."""
    text = example("medium").read_text().replace('name: "gpu{n:03d}"', 'name: "gpu{n:>2000000000}"', 1)
    assert _exercise(text, tmp_path) != "rendered"


# ---------------------------------------------------------------------------------------------
# Issue 15, finding 6: the loader's limits (size, depth, alias expansion) under generated input.

@settings(FUZZ, max_examples=examples(40))
@given(depth=st.integers(1, 3 * MAX_DEPTH), flow=st.booleans(), key=st.sampled_from(["fabric", "hosts", "x"]))
def test_nesting_of_any_depth_is_a_clean_outcome(depth, flow, key):
    if flow:
        text = f"{key}: " + "[" * depth + "]" * depth + "\n"
    else:
        text = "".join("  " * i + f"{key}{i}:\n" for i in range(depth)) + "  " * depth + "x\n"
    work = Path(tempfile.mkdtemp(prefix="fg-fuzz-"))
    try:
        outcome = _exercise(text, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert outcome == "rejected"


@settings(FUZZ, max_examples=examples(40))
@given(branch=st.integers(2, 12), levels=st.integers(1, 9), in_key=st.booleans(), keys=st.booleans())
def test_alias_bombs_fail_fast_and_cleanly(branch, levels, in_key, keys):
    names = [f"a{i}" for i in range(levels + 1)]
    leaf = "{k1: 1, k2: 2}" if keys else "[lol, lol]"
    parts = [f"&{names[0]} {leaf}"] + [f"&{names[i + 1]} [" + ",".join([f"*{names[i]}"] * branch) + "]"
                                        for i in range(levels)]
    body = "[" + ", ".join(parts) + "]"
    text = f"? {body}\n: x\n" if in_key else f"fabric: {{name: x}}\ntopology: {body}\n"
    _run(text)


@settings(FUZZ, max_examples=examples(25))
@given(extra=st.integers(-200, 200))
def test_size_limit_is_exact(extra):
    text = example("small").read_text()
    limit = len(text.encode()) + extra
    work = Path(tempfile.mkdtemp(prefix="fg-fuzz-"))
    old = os.environ.get(MAX_INTENT_BYTES_ENV)
    os.environ[MAX_INTENT_BYTES_ENV] = str(max(limit, 1))
    try:
        (work / "fabric.yaml").write_text(text)
        try:
            load_intent(work / "fabric.yaml")
            assert limit >= len(text.encode())
        except IntentError as exc:
            assert limit < len(text.encode()), str(exc)
            assert MAX_INTENT_BYTES_ENV in str(exc) and "\n" not in str(exc)
    finally:
        if old is None:
            os.environ.pop(MAX_INTENT_BYTES_ENV, None)
        else:
            os.environ[MAX_INTENT_BYTES_ENV] = old
        shutil.rmtree(work, ignore_errors=True)


# Issue 15, finding 7: nccl.settings values, path-valued keys above all, are refused, warned
# about or rendered as plain ASCII; never a crash.
@settings(FUZZ, max_examples=examples(60))
@given(key=st.sampled_from(PATH_KEYS + ("NCCL_DEBUG_SUBSYS", "NCCL_SOCKET_IFNAME")),
       value=st.one_of(st.text(max_size=30), st.sampled_from(["/etc/passwd", "../../tmp/evil", "/tmp/x.%h.%p",
                                                              "aws-ofi", "/opt/nccl/lib.so", "a\0b", "/a/../b"])))
def test_nccl_paths_and_values_fail_cleanly_or_render(key, value):
    data = copy.deepcopy(BASES["medium"])
    data["nccl"] = {"settings": {key: value}}
    _run(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
