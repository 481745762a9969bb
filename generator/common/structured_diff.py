"""Structured diffs of rendered files: key paths with old -> new values, or unified text.

A key that exists on one side only is reported once, at that key, with its whole
subtree as the value: adding a port is one line, not twenty.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any

import yaml

from generator.common import yaml_events

_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
# libyaml's parser when PyYAML was built with it (the wheels are): the same data as the
# pure-Python BaseLoader, several times faster on a fabric's hundreds of rendered files.
_BASE_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


class _TypedLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """A rendered file's values typed as the file writes them, for a diff a person reads: `mtu: 9216`
    an integer, `'9216'` a string, true/false booleans, ~/null/empty null (YAML 1.2 core schema,
    https://yaml.org/spec/1.2.2/#1032-tag-resolution). on/off/yes/no stay strings (1.1 booleans
    that NVUE writes as words) and so do timestamps and 0755; keys stay as written, so `3:` and `'3':` are one key."""

    def construct_mapping(self, node, deep=False):
        self.flatten_mapping(node)
        out = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else self.construct_object(key_node, deep)
            out[key] = self.construct_object(value_node, deep=deep)
        return out


# YAML 1.2 core schema's plain scalars that are not strings
_CORE_TYPES = tuple((f"tag:yaml.org,2002:{tag}", re.compile(pattern), list(first)) for tag, pattern, first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^[-+]?(?:0|[1-9][0-9]*)$", "-+0123456789"),
    ("float", r"^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$|^[-+]?[0-9]+[eE][-+]?[0-9]+$", "-+.0123456789"),
    ("null", r"^(?:~|null|Null|NULL|)$", ("~", "n", "N", ""))))


class _TypedDumper(yaml.SafeDumper):
    """Writes what _TypedLoader reads back the same: the string '9216' quoted, `on` plain."""


class _StringDumper(yaml.SafeDumper):
    """Writes the all-string data of the BaseLoader as the file had it: `9216`, never '9216'."""


for _cls in (_TypedLoader, _TypedDumper):
    _cls.yaml_implicit_resolvers = {}
    for _tag, _rx, _first in _CORE_TYPES:
        _cls.add_implicit_resolver(_tag, _rx, _first)
_StringDumper.yaml_implicit_resolvers = {}


def reads_as_string(text: str) -> bool:
    """True when TEXT, written plain, reads back as this string (not a number, boolean or null)."""
    return not any(rx.match(text) for _, rx, _ in _CORE_TYPES)


def dump_typed(value: Any, *, typed: bool = True) -> str:
    """VALUE as block YAML, strings quoted only where a plain scalar would read as another type;
    not TYPED (BaseLoader data, every scalar a string): strings plain wherever YAML allows."""
    return yaml.dump(value, Dumper=_TypedDumper if typed else _StringDumper, sort_keys=False,
                     default_flow_style=False, width=200)


@dataclass(frozen=True)
class Change:
    op: str          # "added" | "removed" | "changed"
    path: str
    old: Any = None
    new: Any = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "path": self.path}
        if self.op != "added":
            out["old"] = self.old
        if self.op != "removed":
            out["new"] = self.new
        return out


def join_path(parent: str, key: Any) -> str:
    key = str(key)
    # keys such as "10.255.0.1/32" or "'3'" would make a dotted path ambiguous
    part = key if _PLAIN_KEY.match(key) else json.dumps(key)
    if not parent:
        return part if _PLAIN_KEY.match(key) else f"[{part}]"
    return f"{parent}.{part}" if _PLAIN_KEY.match(key) else f"{parent}[{part}]"


def diff_trees(old: Any, new: Any, path: str = "") -> list[Change]:
    if isinstance(old, dict) and isinstance(new, dict) and (old or new):
        out: list[Change] = []
        for key in sorted(set(old) | set(new), key=_natural):
            child = join_path(path, key)
            if key not in new:
                out.append(Change("removed", child, old=old[key]))
            elif key not in old:
                out.append(Change("added", child, new=new[key]))
            else:
                out.extend(diff_trees(old[key], new[key], child))
        return out
    if old != new:
        return [Change("changed", path, old=old, new=new)]
    return []


def _natural(key: Any) -> tuple:
    # swp2 before swp10: the order a person reads a port list in
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(key)))


def keyed_lists(value: Any) -> Any:
    """Lists of records become dicts keyed by their identity, so one changed port is one path."""
    if isinstance(value, dict):
        return {k: keyed_lists(v) for k, v in value.items()}
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        keys = [_identity(v) for v in value]
        if None not in keys and len(set(keys)) == len(keys):
            return {k: keyed_lists(v) for k, v in zip(keys, value, strict=True)}
        return {str(i): keyed_lists(v) for i, v in enumerate(value)}
    return value


def _identity(record: dict) -> str | None:
    if "name" in record:
        return str(record["name"])
    if "device" in record and "port" in record:
        return f"{record['device']}:{record['port']}"
    a, b = record.get("a"), record.get("b")
    if isinstance(a, dict) and isinstance(b, dict):
        return f"{a.get('device')}:{a.get('port')}--{b.get('device')}:{b.get('port')}"
    return None


def parse_structured(relpath: str, text: str, *, typed: bool = False) -> Any:
    """The data of a rendered file; yaml via BaseLoader so on/off, 3 and '3' compare as written
    (every scalar a string), or TYPED: values as the file types them (_TypedLoader)."""
    if relpath.endswith(".json"):
        data = json.loads(text) if text.strip() else {}
    else:
        data = _load_yaml(text, typed) if text.strip() else {}
    return keyed_lists(nvue_unwrapped(data))


def _load_yaml(text: str, typed: bool) -> Any:
    """yaml.load(TEXT) with _TypedLoader or BaseLoader, built from libyaml's events where it can
    be (common/yaml_events.load): `plan` reads every changed file twice, and PyYAML's Python
    constructor was 7.9 of the 41 s test_growth.py spent under cProfile."""
    if typed:
        return yaml_events.load(text, _TypedLoader, _core_value)
    return yaml_events.load(text, _BASE_LOADER)


_CONSTRUCT = {"tag:yaml.org,2002:bool": lambda v: v.lower() == "true", "tag:yaml.org,2002:int": int,
              "tag:yaml.org,2002:float": float, "tag:yaml.org,2002:null": lambda v: None}


def _core_value(value: str, plain: bool) -> Any:
    """A scalar as _TypedLoader types it: unquoted, the first core-schema type whose pattern
    matches (its implicit resolvers, tried in order for the value's first character), else the
    string; SafeConstructor's int() and float() agree on every text those patterns admit."""
    if plain:
        for tag, pattern, first in _CORE_TYPES:
            if (value[:1] in first if value else "" in first) and pattern.match(value):
                return _CONSTRUCT[tag](value)
    return value


def nvue_unwrapped(data: Any) -> Any:
    """An NVUE document [{header: ..}, {set: ..}] as its `set` tree plus `header`: paths read like `nv set`."""
    if isinstance(data, list) and data and all(isinstance(d, dict) and len(d) == 1 for d in data):
        keys = [next(iter(d)) for d in data]
        if set(keys) <= {"header", "set"} and len(set(keys)) == len(keys):
            merged = dict(next((d["set"] for d in data if "set" in d), None) or {})
            header = next((d["header"] for d in data if "header" in d), None)
            if header is not None:
                merged["header"] = header
            return merged
    return data


def is_structured(relpath: str) -> bool:
    """Switch configs and fabric-wide data files are structured; host files stay text (reviewed as files)."""
    if relpath.startswith("hosts/"):
        return False
    return relpath.endswith((".json", ".yaml", ".yml"))


def unified(relpath: str, old: str | None, new: str | None) -> str:
    return "".join(difflib.unified_diff(
        (old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
        fromfile=f"a/{relpath}" if old is not None else "/dev/null",
        tofile=f"b/{relpath}" if new is not None else "/dev/null"))


def diff_file(relpath: str, old: str | None, new: str | None, *, typed: bool = False) -> dict[str, Any] | None:
    """None if equal, else {"status", "changes": [...]} or {"status", "unified": "..."}; TYPED: the
    values typed as in the file (parse_structured)."""
    if old == new:
        return None
    status = "added" if old is None else "removed" if new is None else "changed"
    if is_structured(relpath):
        try:
            changes = diff_trees(parse_structured(relpath, old or "", typed=typed),
                                 parse_structured(relpath, new or "", typed=typed))
        except (ValueError, yaml.YAMLError):
            changes = None           # not parseable: fall back to text rather than hide the change
        if changes is not None:
            if not changes:
                return None          # only formatting or key order moved: nothing for the device
            return {"status": status, "changes": [c.as_dict() for c in changes]}
    text = unified(relpath, old, new)
    return {"status": status, "unified": text}
