"""NVUE config trees: nested dicts of strings, as in startup.yaml.

Scalars stay strings (yaml.BaseLoader): NVUE's `on`/`off` and quoted numeric ids
must round-trip exactly, which PyYAML's safe loader would turn into bools/ints.
"""

from __future__ import annotations

import copy
import itertools
import json

import yaml
from yaml.emitter import Emitter
from yaml.representer import SafeRepresenter
from yaml.resolver import BaseResolver
from yaml.serializer import Serializer

Tree = dict


class DocumentError(ValueError):
    """A startup.yaml-format document that NVUE could not read."""


class _PlainDumper(Emitter, Serializer, SafeRepresenter, BaseResolver):
    # BaseResolver has no implicit types, so "9216" and "on" are written plain,
    # the way NVUE writes them, and still read back as strings by BaseLoader.
    def __init__(self, stream, **kwargs):
        Emitter.__init__(self, stream, canonical=None, indent=2, width=10_000, allow_unicode=True, line_break=None)
        Serializer.__init__(self, encoding=None, explicit_start=None, explicit_end=None, version=None, tags=None)
        SafeRepresenter.__init__(self, default_style=None, default_flow_style=False, sort_keys=False)
        BaseResolver.__init__(self)


if yaml.__with_libyaml__:
    from yaml.cyaml import CEmitter

    class _PlainCDumper(CEmitter, SafeRepresenter, BaseResolver):
        # The same settings through libyaml's emitter: at 128 switches the lab prints a config
        # per `nv config show`/`diff` and the pure-Python emitter was most of the simulator's
        # CPU (issue 26: the lab must not be the bottleneck the benchmarks measure).
        def __init__(self, stream, **kwargs):
            CEmitter.__init__(self, stream, canonical=None, indent=2, width=10_000, allow_unicode=True,
                              line_break=None, encoding=None, explicit_start=None, explicit_end=None,
                              version=None, tags=None)
            SafeRepresenter.__init__(self, default_style=None, default_flow_style=False, sort_keys=False)
            BaseResolver.__init__(self)

    _DUMPER: type = _PlainCDumper
    _LOADER: type = yaml.CBaseLoader
else:
    _DUMPER, _LOADER = _PlainDumper, yaml.BaseLoader


def dump_yaml(data) -> str:
    return yaml.dump(data, Dumper=_DUMPER)


def load_document(text: str) -> list[dict]:
    """Parse a startup.yaml-format document: a list of header/set/unset items."""
    try:
        data = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise DocumentError(f"Error: Invalid YAML: {str(exc).splitlines()[0]}") from None
    if data is None or data == "":
        return []
    if isinstance(data, dict):
        data = [{"set": data}]
    if not isinstance(data, list):
        raise DocumentError("Error: Invalid config file: expected a list of header/set/unset items")
    items = []
    for item in data:
        if not isinstance(item, dict) or len(item) != 1:
            raise DocumentError("Error: Invalid config file: each item must be one of header, set, unset")
        (kind, body), = item.items()
        if kind not in ("header", "set", "unset"):
            raise DocumentError(f"Error: Invalid config file: unknown item '{kind}'")
        if body in ("", None):
            body = {}
        if not isinstance(body, dict):
            raise DocumentError(f"Error: Invalid config file: '{kind}' must be a mapping")
        items.append({kind: body})
    return items


def merge(target: Tree, patch: Tree) -> None:
    for key, value in patch.items():
        if isinstance(value, dict):
            existing = target.get(key)
            if not isinstance(existing, dict):
                existing = target[key] = {}
            merge(existing, value)
        else:
            target[key] = value


def remove(target: Tree, patch: Tree) -> None:
    """Apply an `unset` mapping: a scalar or empty map removes that key."""
    for key, value in patch.items():
        if key not in target:
            continue
        if isinstance(value, dict) and value and isinstance(target[key], dict):
            remove(target[key], value)
        else:
            del target[key]


def apply_document(base: Tree, items: list[dict]) -> Tree:
    result = copy.deepcopy(base)
    for item in items:
        if "set" in item:
            merge(result, item["set"])
        elif "unset" in item:
            remove(result, item["unset"])
    return result


def nest(keys: list[str], leaf) -> Tree:
    """Build the mapping for a CLI path; comma lists become sibling keys, as NVUE stores them."""
    choices = [k.split(",") if "," in k else [k] for k in keys]
    out: Tree = {}
    for combo in itertools.product(*choices):
        node = out
        for key in combo[:-1]:
            node = node.setdefault(key, {})
        node[combo[-1]] = copy.deepcopy(leaf)
    return out


def diff(old: Tree, new: Tree) -> tuple[Tree, Tree]:
    """Return (unset, set) mappings that turn `old` into `new`."""
    unset: Tree = {}
    changed: Tree = {}
    for key in old:
        if key not in new:
            unset[key] = {}
    for key, value in new.items():
        before = old.get(key, _MISSING)
        if before == value:
            continue
        if isinstance(value, dict) and isinstance(before, dict):
            sub_unset, sub_set = diff(before, value)
            if sub_unset:
                unset[key] = sub_unset
            if sub_set:
                changed[key] = sub_set
            if not value and not sub_set:
                changed[key] = {}
        else:
            changed[key] = copy.deepcopy(value)
    return unset, changed


_MISSING = object()


def diff_document(old: Tree, new: Tree) -> list[dict]:
    unset, changed = diff(old, new)
    items = []
    if unset:
        items.append({"unset": unset})
    if changed:
        items.append({"set": changed})
    return items


def to_commands(tree: Tree, verb: str = "set") -> list[str]:
    lines: list[str] = []

    def walk(node, path):
        if isinstance(node, dict):
            if not node:
                lines.append(" ".join(["nv", verb, *path]))
            for key, value in node.items():
                walk(value, [*path, _quote(key)])
        else:
            lines.append(" ".join(["nv", verb, *path] + ([] if verb == "unset" else [_quote(node)])))

    for key, value in tree.items():
        walk(value, [_quote(key)])
    return lines


def _quote(token) -> str:
    token = str(token)
    return token if token and all(c not in token for c in " '\"\t") else json.dumps(token)


def document_commands(items: list[dict]) -> list[str]:
    lines = []
    for item in items:
        for kind, body in item.items():
            if kind in ("set", "unset"):
                lines.extend(to_commands(body, kind))
    return lines
