"""The expansion bounds refuse at the cost of the text, and where a full walk would: the intent
loader and check_expansion skip subtrees that are within both limits at their memoized size
(bounded_yaml.Expansion). The walks that visited every expanded node, kept here as the
specification, must name the same line, path and reason for any document, bombs, recursive
aliases, alias chains and collection keys included (the limits made small so that every kind of
refusal is reached by documents of a few lines)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import generator.common.bounded_yaml as bounded_yaml
import generator.intent.loader as loader
from generator.common.bounded_yaml import YamlRefused, check_expansion
from generator.intent.loader import IntentError, Problem
from tests.conftest import examples


def full_check(node: yaml.Node, max_nodes: int, max_depth: int) -> tuple | None:
    """check_expansion as it was: every node visited, keys included."""
    budget = [max_nodes]

    def walk(n: yaml.Node, depth: int) -> None:
        budget[0] -= 1
        if budget[0] < 0:
            raise _Found((n.start_mark.line + 1, "nodes"))
        if depth > max_depth:
            raise _Found((n.start_mark.line + 1, "depth"))
        if isinstance(n, yaml.MappingNode):
            for key, value in n.value:
                walk(key, depth + 1)
                walk(value, depth + 1)
        elif isinstance(n, yaml.SequenceNode):
            for item in n.value:
                walk(item, depth + 1)

    try:
        walk(node, 0)
    except _Found as found:
        return found.where
    return None


def full_intent_walk(node: yaml.Node, max_nodes: int, max_depth: int) -> tuple:
    """The loader's walk as it was (plus the depth bound): every expanded node visited. Returns
    the refusal (line, path, reason) or the key lines and duplicate-key problems."""
    budget = [max_nodes]
    lines: dict[str, int] = {}
    problems: list[tuple] = []

    def walk(n: yaml.Node, path: str, active: set[int], depth: int) -> None:
        budget[0] -= 1
        if budget[0] < 0:
            raise _Found((n.start_mark.line + 1, path, "nodes"))
        if id(n) in active:
            raise _Found((n.start_mark.line + 1, path, "recursive"))
        if depth > max_depth:
            raise _Found((n.start_mark.line + 1, path, "depth"))
        if isinstance(n, yaml.MappingNode):
            active.add(id(n))
            seen: dict[str, int] = {}
            for key_node, value_node in n.value:
                line = key_node.start_mark.line + 1
                if not isinstance(key_node, yaml.ScalarNode):
                    raise _Found((line, path, "key"))
                budget[0] -= 1
                child = f"{path}.{key_node.value}" if path else str(key_node.value)
                if key_node.value in seen:
                    problems.append((line, child))
                seen[key_node.value] = line
                lines.setdefault(child, line)
                walk(value_node, child, active, depth + 1)
            active.discard(id(n))
        elif isinstance(n, yaml.SequenceNode):
            active.add(id(n))
            for i, item in enumerate(n.value):
                child = f"{path}[{i}]"
                lines.setdefault(child, item.start_mark.line + 1)
                walk(item, child, active, depth + 1)
            active.discard(id(n))

    try:
        walk(node, "", set(), 0)
    except _Found as found:
        return ("refused", found.where)
    return ("walked", lines, problems)


class _Found(Exception):
    def __init__(self, where: tuple):
        super().__init__(str(where))
        self.where = where


def _reason(message: str) -> str:
    if "recursive YAML alias" in message:
        return "recursive"
    if "levels deep" in message:
        return "depth"
    if "keys and values once YAML aliases" in message:
        return "nodes"
    assert "mapping key must be a plain name" in message, message
    return "key"


# a document of anchored collections, each of scalars, aliases to earlier anchors (or to itself,
# a recursive alias), nested collections and now and then a collection or a repeated key
_item = st.one_of(st.just("x"), st.just("alias"), st.just("self"), st.just("nest"))


@st.composite
def documents(draw) -> str:
    count = draw(st.integers(1, 8))
    parts = []
    for i in range(count):
        width = draw(st.integers(0, 5))
        mapping = draw(st.booleans())
        items = []
        for j in range(width):
            kind = draw(_item)
            if kind == "alias" and i:
                value = f"*a{draw(st.integers(0, i - 1))}"
            elif kind == "self" and draw(st.integers(0, 9)) == 0:
                value = f"*a{i}"
            elif kind == "nest":
                value = "[" + ", ".join(f"*a{draw(st.integers(0, i - 1))}" if i else "y"
                                        for _ in range(draw(st.integers(0, 3)))) + "]"
            else:
                value = "x"
            if mapping:
                odd = ["k0", "[c, d]", "{e: 1}"] + ([f"[*a{draw(st.integers(0, i - 1))}, z]"] if i else [])
                key = draw(st.sampled_from(odd)) if draw(st.integers(0, 3)) == 0 else f"k{j}"
                items.append(f"{key}: {value}")
            else:
                items.append(value)
        body = ("{" + ", ".join(items) + "}") if mapping else ("[" + ", ".join(items) + "]")
        parts.append(f"&a{i} {body}")
    one_line = draw(st.booleans())
    if one_line:
        return "top: [" + ", ".join(parts) + "]\n"
    return "top:\n" + "".join(f"  - {p}\n" for p in parts)


LIMITS = settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _compose(text: str) -> yaml.Node:
    return yaml.compose(text, Loader=yaml.SafeLoader)


@contextmanager
def _limits(max_nodes: int, max_depth: int) -> Iterator[None]:
    """The module limits made small for one example (hypothesis runs many per test call, so the
    function-scoped monkeypatch would carry one example's limits into the next)."""
    saved = bounded_yaml.MAX_DEPTH, loader.MAX_DEPTH, loader.MAX_NODES
    bounded_yaml.MAX_DEPTH = loader.MAX_DEPTH = max_depth
    loader.MAX_NODES = max_nodes
    try:
        yield
    finally:
        bounded_yaml.MAX_DEPTH, loader.MAX_DEPTH, loader.MAX_NODES = saved


@LIMITS
@given(text=documents(), max_nodes=st.integers(1, 40) | st.integers(1, 300), max_depth=st.integers(1, 8))
def test_check_expansion_refuses_where_a_full_walk_does(text, max_nodes, max_depth):
    node = _compose(text)
    expected = full_check(node, max_nodes, max_depth)
    try:
        with _limits(max_nodes, max_depth):
            check_expansion(node, max_nodes)
        got = None
    except YamlRefused as exc:
        got = (exc.line, "depth" if "levels deep" in exc.message else "nodes")
    assert got == expected, text


@LIMITS
@given(text=documents(), max_nodes=st.integers(1, 40) | st.integers(1, 300), max_depth=st.integers(1, 8))
def test_the_intent_walk_refuses_where_a_full_walk_does(text, max_nodes, max_depth):
    node = _compose(text)
    expected = full_intent_walk(node, max_nodes, max_depth)
    lines = loader.KeyLines()
    problems: list[Problem] = []
    try:
        with _limits(max_nodes, max_depth):
            expansion = bounded_yaml.Expansion(node, max_nodes + 1, keys_whole=False)
            doomed = None if expansion.clean(node, 0, max_nodes) else expansion
            loader._walk(node, "", lines, problems, "f.yaml", doomed=doomed)
    except IntentError as exc:
        [problem] = exc.problems
        assert ("refused", (problem.line, problem.path, _reason(problem.message))) == expected, text
        return
    assert doomed is None, "a walk judged doomed ended without a refusal"
    assert ("walked", dict(lines), [(p.line, p.path) for p in problems]) == expected, text


def test_a_billion_laughs_and_an_alias_chain_are_refused_without_the_walk(monkeypatch):
    # 10^9 nodes in 600 bytes: the refusal counts the 100 composed nodes, not a million expanded
    laughs = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 10))
    visited = []
    original = loader._walk

    def counting(*args, **kwargs):
        visited.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(loader, "_walk", counting)
    assert "keys and values once YAML aliases are expanded" in _refusal(laughs)
    assert len(visited) < 200
    # 3,000 chained anchors nest 3,000 levels once expanded: one line, not a RecursionError
    chain = "top: [&a0 [x], " + ", ".join(f"&a{i} [*a{i - 1}]" for i in range(1, 3000)) + "]\n"
    assert "levels deep once YAML aliases are expanded" in _refusal(chain)


def _refusal(text: str) -> str:
    """The one problem parse_yaml refuses TEXT with."""
    with pytest.raises(IntentError) as caught:
        loader.parse_yaml(text, "f.yaml")
    [problem] = caught.value.problems
    return problem.message


def test_validate_refuses_an_alias_chain_in_one_line(tmp_path):
    from tests.cli_runner import run_cli

    chain = "fabric: {name: x}\ntopology: [&a0 [x], " + ", ".join(f"&a{i} [*a{i - 1}]" for i in range(1, 3000)) + "]\n"
    (tmp_path / "fabric.yaml").write_text(chain)
    done = run_cli("validate", "fabric.yaml", cwd=tmp_path)
    said = done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in said, said[-2000:]
    [line] = [line for line in said.splitlines() if line.strip()]
    assert line.startswith("error: fabric.yaml:2: topology[") and "levels deep once YAML aliases" in line, line
