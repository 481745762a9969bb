"""Bring the intended and the running config into one comparable shape.

Both sides are parsed the same way and then canonicalised, so only real
differences survive:

- key order: trees are plain dicts, compared by key;
- scalars: YAML is read with `yaml.BaseLoader` (every scalar a string, exactly as
  written), then `on/off/true/false/yes/no` become booleans and integer strings
  become ints, so `9216`, `'9216'` and JSON `9216` are equal, and `on` equals
  `true` (NVUE prints booleans either way depending on the release);
- the NVUE document header (model, version, rev-id) is not configuration: dropped;
- NVUE: only the subtrees fabricgen manages are compared (generator/render/managed.py,
  the definition the deploy uses too): the switch's own management plane when the intent
  has no `management:` section, `system global`, LLDP, other VRFs ... are not drift. Inside
  the managed subtrees the defaults `nv config show` prints and keys the intent's release
  does not document (a newer minor release) are dropped from the running side unless the
  intent sets them; a documented key the intent lacks is `extra`.
- SONiC: both sides are reduced to what fabricgen owns (generator/render/sonic_managed.py:
  its tables, the PORT and DEVICE_METADATA fields it sets, the management tables only with
  `management:`); FEATURE, the MAC, AAA and whatever else the switch holds are never compared.
  An intended key the device lacks is always `missing`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from generator.common.errors import FabricgenError
from generator.device_data import DeviceDataError, parse_json, parse_yaml
from generator.render.managed import ManagedSet, comparable, managed_set
from generator.render.sonic_managed import MANAGEMENT_TABLES, SonicManaged

_INT = re.compile(r"^-?(0|[1-9][0-9]*)$")
_TRUE = {"on", "true", "yes"}
_FALSE = {"off", "false", "no"}

class ConfigParseError(FabricgenError, ValueError):
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
        data = parse_yaml(text, "NVUE config") if text and text.strip() else []
    except DeviceDataError as exc:
        raise ConfigParseError(str(exc)) from None
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
        data = parse_json(text, "config_db") if text and text.strip() else {}
    except DeviceDataError as exc:
        raise ConfigParseError(str(exc)) from None
    if not isinstance(data, dict):
        raise ConfigParseError("not config_db JSON: expected an object of tables")
    return canonical(data)


def parse_config(os_name: str, text: str) -> dict:
    return parse_nvue(text) if os_name == "cumulus" else parse_sonic(text)


def nvue_managed_set(intended: dict) -> ManagedSet:
    """The managed set a rendered file implies: its eth0 exists only with `management:`."""
    users = isinstance(intended.get("system"), dict) and "user" in (intended["system"].get("aaa") or {})
    return managed_set(isinstance(intended.get("interface"), dict) and "eth0" in intended["interface"], users=users)


def sonic_managed_set(intended: dict, management: bool | None = None, extra: tuple = ()) -> SonicManaged:
    """The managed set of a rendered config_db; `management` (the intent has `management:`)
    is inferred from the file when not given: it has NTP/syslog/DNS servers or a timezone."""
    if management is None:
        meta = (intended.get("DEVICE_METADATA") or {}).get("localhost") or {}
        management = any(intended.get(t) for t in MANAGEMENT_TABLES) or "timezone" in meta
    return SonicManaged.of(intended, management, extra)


def strip_unmanaged(os_name: str, intended: dict, actual: dict, *, managed: ManagedSet | None = None,
                    version: str | None = None, sonic: SonicManaged | None = None) -> dict:
    """A copy of `actual` reduced to what is compared with `intended` (see the module docstring)."""
    actual = json.loads(json.dumps(actual))
    if os_name == "cumulus":
        managed = managed or nvue_managed_set(intended)
        return comparable(actual, managed, version=version, intended=managed.managed(intended))
    return (sonic or sonic_managed_set(intended)).owned(actual)
