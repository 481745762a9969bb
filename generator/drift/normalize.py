"""Bring the intended and the running config into one comparable shape.

Both sides are parsed the same way and then canonicalised, so only real
differences survive:

- key order: trees are plain dicts, compared by key;
- scalars: YAML is read with `yaml.BaseLoader` (every scalar a string, exactly as
  written), then `on/off/true/false/yes/no` become booleans and integer strings
  become ints, so `9216`, `'9216'` and JSON `9216` are equal, and `on` equals
  `true` (NVUE prints booleans either way depending on the release);
- the NVUE document header (model, version, rev-id) is not configuration: dropped;
- defaults the device adds on its own and fabricgen does not render (listed in
  NVUE_UNMANAGED and SONIC_UNMANAGED_METADATA; SONiC tables the intent does not
  render at all) are dropped from the running side unless the intent sets them.
  An intended key the device lacks is always `missing`.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

_INT = re.compile(r"^-?(0|[1-9][0-9]*)$")
_TRUE = {"on", "true", "yes"}
_FALSE = {"off", "false", "no"}

# Subtrees a Cumulus switch carries from the factory / ZTP that fabricgen does not
# manage: the management port and VRF, and system services configured outside the
# fabric intent (AAA, API, SSH server, time zone, global MAC/anycast ids, WJH).
NVUE_UNMANAGED: tuple[tuple[str, ...], ...] = (
    ("interface", "eth0"),
    ("vrf", "mgmt"),
    ("system", "aaa"),
    ("system", "api"),
    ("system", "config"),
    ("system", "global"),
    ("system", "ssh-server"),
    ("system", "timezone"),
    ("system", "wjh"),
    ("service",),
)

# DEVICE_METADATA fields SONiC fills in from the hardware or the image.
SONIC_UNMANAGED_METADATA = ("mac", "platform", "hwsku", "type", "deployment_id", "region", "cloudtype",
                            "synchronous_mode", "timezone")


class ConfigParseError(ValueError):
    """The running config could not be read as the expected format."""


def canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return int(value) if isinstance(value, float) and value.is_integer() else value
    text = str(value)
    low = text.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    if _INT.match(text):
        return int(text)
    return text


def parse_nvue(text: str) -> dict:
    """The `set` tree of an NVUE document (startup.yaml / `nv config show -o yaml`), header dropped."""
    try:
        data = yaml.load(text, Loader=yaml.BaseLoader) if text and text.strip() else []
    except yaml.YAMLError as exc:
        raise ConfigParseError(f"not NVUE YAML: {str(exc).splitlines()[0]}") from None
    if isinstance(data, dict):                 # `nv config show` of a bare tree
        data = [{"set": data}]
    if not isinstance(data, list):
        raise ConfigParseError("not an NVUE document: expected a list of header/set items")
    merged: dict = {}
    for item in data:
        if isinstance(item, dict) and isinstance(item.get("set"), dict):
            _merge(merged, item["set"])
    return canonical(merged)


def _merge(into: dict, tree: dict) -> None:
    for key, value in tree.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def parse_sonic(text: str) -> dict:
    try:
        data = json.loads(text) if text and text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ConfigParseError(f"not config_db JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(data, dict):
        raise ConfigParseError("not config_db JSON: expected an object of tables")
    return canonical(data)


def parse_config(os_name: str, text: str) -> dict:
    return parse_nvue(text) if os_name == "cumulus" else parse_sonic(text)


def _drop(tree: dict, path: tuple[str, ...]) -> None:
    node = tree
    for key in path[:-1]:
        node = node.get(key)
        if not isinstance(node, dict):
            return
    node.pop(path[-1], None)


def _has(tree: dict, path: tuple[str, ...]) -> bool:
    node: Any = tree
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def strip_unmanaged(os_name: str, intended: dict, actual: dict) -> dict:
    """A copy of `actual` without what the device adds by itself (see the module docstring)."""
    actual = json.loads(json.dumps(actual))
    if os_name == "cumulus":
        for path in NVUE_UNMANAGED:
            if not _has(intended, path):
                _drop(actual, path)
        for empty in [k for k, v in actual.items() if v == {} and k not in intended]:
            del actual[empty]          # left behind by the drops above (e.g. `vrf: {}`)
        return actual
    for table in [t for t in actual if t not in intended]:
        del actual[table]
    meta = actual.get("DEVICE_METADATA", {}).get("localhost")
    want = intended.get("DEVICE_METADATA", {}).get("localhost", {})
    if isinstance(meta, dict):
        for field in SONIC_UNMANAGED_METADATA:
            if field not in want:
                meta.pop(field, None)
    return actual
