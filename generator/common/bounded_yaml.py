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


def check_expansion(node: yaml.Node, max_nodes: int = MAX_NODES) -> None:
    """YamlRefused when NODE, every alias expanded, holds more than MAX_NODES keys and values or
    nests deeper than MAX_DEPTH."""
    budget = [max_nodes]

    def walk(n: yaml.Node, depth: int) -> None:
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


__all__ = ["MAX_DEPTH", "MAX_NODES", "BoundedLoader", "TooDeep", "YamlRefused", "check_expansion", "compose_bounded",
           "load_bounded"]
