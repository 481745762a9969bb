"""The one YAML loader for every YAML file a user names (intent, discovery, endpoints, --faults,
what-if, lab files): safe tags only, and bounded before any value is built.

Three limits, each a refusal in one line instead of minutes, gigabytes or a traceback:
- size: the text is measured before parsing;
- depth: PyYAML's composer recurses once per nesting level and ends in a RecursionError near
  330 levels; the loader stops at MAX_DEPTH (no file fabricgen reads nests deeper than ~8);
- alias expansion ("billion laughs"): nodes are counted as a consumer would visit them, every
  alias expanded, before anything is constructed or serialised; a 600-byte file can otherwise
  stand for gigabytes (issue 34 finding 3). A recursive alias is infinitely deep: the depth
  limit catches it too.
"""

from __future__ import annotations

from typing import Any

import yaml

from generator.common.errors import FabricgenError

DEFAULT_MAX_BYTES = 4 * 1024 * 1024   # the intent's limit (loader.py); no other file is larger
MAX_NODES = 1_000_000                 # what a 4 MiB file of one-character list items could hold
MAX_DEPTH = 64


class YamlRefused(FabricgenError, ValueError):
    """One line: LINE (1-based, or None) and what is wrong; callers add the file."""

    def __init__(self, line: int | None, message: str):
        super().__init__(message)
        self.line, self.message = line, message


class TooDeep(Exception):
    def __init__(self, mark: yaml.Mark):
        super().__init__("too deep")
        self.mark = mark


class BoundedLoader(yaml.SafeLoader):
    """SafeLoader that stops composing past MAX_DEPTH levels instead of recursing until Python's
    recursion limit (the composer calls compose_node once per nesting level)."""

    _depth = 0

    def compose_node(self, parent, index):
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise TooDeep(self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _too_deep(line: int | None) -> YamlRefused:
    return YamlRefused(line, f"mappings and lists nest more than {MAX_DEPTH} levels deep (or an anchor contains "
                             "an alias to itself): check the indentation or unbalanced [ {")


class Expansion:
    """Size (nodes visited) and height (levels below) of every node of a composed tree with each
    alias expanded, memoized per node in one pass over the nodes as composed: a 600-byte bomb
    that stands for 10^9 nodes costs its 100 nodes here, not a walk up to the budget (40 alias
    bombs took 5 s of the fuzzer). Sizes stop at CAP and heights at MAX_DEPTH + 1 (beyond any
    budget); a node that reaches itself (a recursive alias) is infinite in both.

    KEYS_WHOLE: a mapping key counts as its own subtree (check_expansion walks keys) or as one
    node at no depth (the intent loader's walk, which refuses a key that is not a scalar and
    marks such a node `tainted`)."""

    def __init__(self, root: yaml.Node, cap: int, keys_whole: bool = True):
        self.size: dict[int, int] = {}
        self.height: dict[int, int] = {}
        self.tainted: dict[int, bool] = {}
        top = MAX_DEPTH + 1
        on_path: set[int] = set()
        # an explicit stack: an alias chain (&a1 [*a0], &a2 [*a1], ...) makes the expanded tree
        # as deep as the file has anchors, far past Python's recursion limit
        stack: list[tuple[yaml.Node, bool]] = [(root, False)]
        while stack:
            node, done = stack.pop()
            key = id(node)
            if not done:
                if key in self.size or key in on_path:
                    continue
                on_path.add(key)
                stack.append((node, True))
                stack.extend((child, False) for child in reversed(self._children(node, keys_whole)))
                continue
            on_path.discard(key)
            size, height, tainted = 1, 0, False
            if isinstance(node, yaml.MappingNode):
                for k, v in node.value:
                    if keys_whole:
                        size += self.size.get(id(k), cap)
                        height = max(height, 1 + self.height.get(id(k), top))
                    else:
                        size += 1
                        tainted = tainted or not isinstance(k, yaml.ScalarNode)
                    size += self.size.get(id(v), cap)    # absent: an ancestor on the path, a cycle
                    height = max(height, 1 + self.height.get(id(v), top))
                    tainted = tainted or self.tainted.get(id(v), True)
            elif isinstance(node, yaml.SequenceNode):
                for item in node.value:
                    size += self.size.get(id(item), cap)
                    height = max(height, 1 + self.height.get(id(item), top))
                    tainted = tainted or self.tainted.get(id(item), True)
            self.size[key], self.height[key], self.tainted[key] = min(size, cap), min(height, top), tainted

    @staticmethod
    def _children(node: yaml.Node, keys_whole: bool) -> list[yaml.Node]:
        if isinstance(node, yaml.MappingNode):
            return [n for pair in node.value for n in (pair if keys_whole else pair[1:])]
        return list(node.value) if isinstance(node, yaml.SequenceNode) else []

    def clean(self, node: yaml.Node, depth: int, budget: int) -> bool:
        """True when walking NODE at DEPTH with BUDGET nodes left meets no limit and no
        tainted key: such a walk can be skipped, its size taken from the budget."""
        key = id(node)
        return self.size[key] <= budget and depth + self.height[key] <= MAX_DEPTH and not self.tainted[key]


def check_expansion(node: yaml.Node, max_nodes: int = MAX_NODES) -> None:
    """YamlRefused when NODE, every alias expanded, holds more than MAX_NODES keys and values or
    nests deeper than MAX_DEPTH: the first node, in document order, where the walk would pass a
    limit. Subtrees within both limits are skipped at their size (Expansion), so a bomb is
    refused at the cost of its text."""
    expansion = Expansion(node, max_nodes + 1)
    budget = [max_nodes]

    def walk(n: yaml.Node, depth: int) -> None:
        if expansion.clean(n, depth, budget[0]):
            budget[0] -= expansion.size[id(n)]
            return
        budget[0] -= 1
        if budget[0] < 0:
            raise YamlRefused(n.start_mark.line + 1, f"more than {max_nodes:,} keys and values once YAML aliases "
                                                     "are expanded: write the file out plainly")
        if depth > MAX_DEPTH:
            raise _too_deep(n.start_mark.line + 1)
        if isinstance(n, yaml.MappingNode):
            for key, value in n.value:
                walk(key, depth + 1)
                walk(value, depth + 1)
        elif isinstance(n, yaml.SequenceNode):
            for item in n.value:
                walk(item, depth + 1)

    walk(node, 0)


def _syntax(exc: yaml.YAMLError) -> YamlRefused:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    what = getattr(exc, "problem", None) or "invalid YAML"
    if "python/" in str(exc) or "could not determine a constructor" in str(what):
        what = f"{what}: only plain YAML is accepted (tags such as !!python/... are never executed)"
    return YamlRefused(mark.line + 1 if mark else None, f"YAML syntax: {what}")


def _check_size(text: str, max_bytes: int) -> None:
    if len(text) > max_bytes:     # characters: a lower bound of the bytes, and what parsing costs
        raise YamlRefused(None, f"more than {max_bytes} bytes: not a file fabricgen reads; check the path")


def _bounded(text: str, max_bytes: int, max_nodes: int, construct: bool) -> Any:
    _check_size(text, max_bytes)
    loader = BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_expansion(node, max_nodes)
        return loader.construct_document(node) if construct else node
    except TooDeep as exc:
        raise _too_deep(exc.mark.line + 1) from None
    except yaml.YAMLError as exc:
        raise _syntax(exc) from None
    finally:
        loader.dispose()


def compose_bounded(text: str, *, max_bytes: int = DEFAULT_MAX_BYTES, max_nodes: int = MAX_NODES) -> yaml.Node | None:
    """The node tree of TEXT (None when empty), checked against all three limits."""
    return _bounded(text, max_bytes, max_nodes, construct=False)


def load_bounded(text: str, *, max_bytes: int = DEFAULT_MAX_BYTES, max_nodes: int = MAX_NODES) -> Any:
    """yaml.safe_load(TEXT) within the three limits (None for an empty document)."""
    return _bounded(text, max_bytes, max_nodes, construct=True)


__all__ = ["MAX_DEPTH", "MAX_NODES", "BoundedLoader", "Expansion", "TooDeep", "YamlRefused", "check_expansion", "compose_bounded",
           "load_bounded"]
