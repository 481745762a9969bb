"""Documented NVUE paths as a trie, per Cumulus Linux version.

NVUE refuses any `nv set`, `nv config patch` or `nv config replace` that names a
path its schema does not know; the simulator does the same with the documented
path list (data/nvue_paths.tsv, built by build_schema.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from generator.common.errors import FabricgenError

DATA_FILE = Path(__file__).parent / "data" / "nvue_paths.tsv"
# Management paths from NVUE's object model that the reference lists lack (see the file's header).
MODEL_FILE = Path(__file__).parent / "data" / "nvue_paths_model.tsv"
WILDCARD = "*"


class SchemaError(FabricgenError, ValueError):
    """A path the device's NVUE schema does not know."""


def version_key(version: str) -> tuple[int, ...]:
    parts = tuple(int(p) for p in str(version).split(".") if p.isdigit())
    return parts[:2] if parts else (5, 0)


@dataclass
class Node:
    children: dict[str, Node] = field(default_factory=dict)
    terminal: bool = False

    def child(self, token: str) -> Node | None:
        return self.children.get(token) or self.children.get(WILDCARD)

    def accepts_scalar(self) -> bool:
        # `port-buffer <value>` is documented with a placeholder but written `port-buffer: 20000`.
        if self.terminal:
            return True
        wild = self.children.get(WILDCARD)
        return wild is not None and wild.terminal and not wild.children


@cache
def load_rows(data_file: Path = DATA_FILE) -> tuple[tuple[str, str, str], ...]:
    rows = []
    for line in data_file.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        path, since, until = (line.split("\t") + ["", ""])[:3]
        rows.append((path, since, until))
    return tuple(rows)


@cache
def schema_for(version: str) -> Node:
    want = version_key(version)
    root = Node()
    for path, since, until in load_rows() + load_rows(MODEL_FILE):
        if want < version_key(since) or (until and want > version_key(until)):
            continue
        node = root
        for token in path.split():
            node = node.children.setdefault(token, Node())
        node.terminal = True
    _containers_are_not_leaves(root)
    return root


def _containers_are_not_leaves(node: Node) -> None:
    # The reference lists container headings (`interface <id> link`) as rows of their own;
    # a node with named children is a container, never a value-taking leaf.
    if any(token != WILDCARD for token in node.children):
        node.terminal = False
    for child in node.children.values():
        _containers_are_not_leaves(child)


def _describe(tokens: list[str]) -> str:
    return " ".join(tokens) if tokens else "(root)"


def resolve_cli(root: Node, tokens: list[str]) -> tuple[list[str], str | None]:
    """Split `nv set` tokens into key path and value, or raise SchemaError."""
    node = root
    keys: list[str] = []
    for index, token in enumerate(tokens):
        nxt = node.child(token)
        if nxt is None:
            if index == len(tokens) - 1 and node.accepts_scalar() and keys:
                return keys, token
            raise SchemaError(f"Error: Invalid config path: {_describe(tokens[: index + 1])}")
        keys.append(token)
        node = nxt
    return keys, None


def validate_tree(root: Node, tree: dict, prefix: tuple[str, ...] = ()) -> None:
    """Check every key of a `set`/`unset` mapping against the schema."""
    _validate(root, tree, list(prefix))


def _validate(node: Node, tree: dict, where: list[str]) -> None:
    for key, value in tree.items():
        key = str(key)
        child = node.child(key)
        if child is None and node.terminal and value in ({}, ""):
            continue  # NVUE writes some enum values as keys: `link: {state: {up: {}}}`
        if child is None:
            raise SchemaError(f"Error: Invalid config path: {_describe([*where, key])}")
        if isinstance(value, dict):
            _validate(child, value, [*where, key])
        elif value is not None and not child.accepts_scalar():
            raise SchemaError(f"Error: {_describe([*where, key])} is a container, not a value")
