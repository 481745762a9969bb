"""`lab up --faults FILE`: what cabling cannot say, per switch and per port (DESIGN.md).

    switches:
      <switch>: {os_version: "5.9", ntp: unsynced, psu: [ok, failed], fans: [ok, ok, ok], temperature_c: 45}
    ports:
      "<switch>:<port>": {rx_power_dbm: -14.0, tx_power_dbm: 1.0, module_temperature_c: 50,
                          fec_ber: 1.0e-5, link_flaps: 5}
    hosts:
      <host>: {rails_down: [ens1f0np0], pcp_trust: [ens2f0np0]}

A host's `rails_down` are rail ports without link (the NIC's port DOWN, its netdev without
carrier, and the leaf's port at the far end of the cable down with it, through the world);
`pcp_trust` NICs keep falling back to PCP trust whatever is set (mlx5 health recovery resetting
the firmware's QoS, DEVICE_STATE.md). Both go to the host's runtime faults JSON (key `host`).

Validated strictly before anything is started: an unknown key, switch or port is one line naming
FILE:line and the key path. The result is one dict per switch, stored as the `switch` and `ports`
keys of that switch's runtime faults JSON (faults.py), which the simulated NOS reads at every
command; anything not listed is healthy.
"""

from __future__ import annotations

import math
from pathlib import Path

import yaml

from generator.common.bounded_read import ReadRefused, read_bounded_text
from generator.common.bounded_yaml import YamlRefused, compose_bounded
from generator.common.errors import FabricgenError

SWITCH_KEYS = {"os_version", "ntp", "psu", "fans", "temperature_c"}
PORT_KEYS = {"rx_power_dbm", "tx_power_dbm", "module_temperature_c", "fec_ber", "link_flaps"}
HOST_KEYS = {"rails_down", "pcp_trust"}
NTP_STATES = ("synced", "unsynced")
PART_STATES = ("ok", "failed")
MAX_FAULT_FILE_BYTES = 4 * 1024 * 1024     # a fault per port of a 10k-port fabric is well under 1 MiB


class FaultFileError(FabricgenError, ValueError):
    """One line: FILE:line: key path: what is wrong and what to do."""


def _scalar(node) -> object:
    return yaml.safe_load(yaml.serialize(node)) if node is not None else None


def load_fault_file(path: str | Path, switches: dict[str, set[str]],
                    hosts: dict[str, set[str]] | None = None) -> dict[str, dict]:
    """{switch: {"switch": {...}, "ports": {port: {...}}}, host: {"host": {...}}} from FILE; switches:
    name -> its planned ports; hosts: the hosts the lab starts -> their rail netdevs."""
    path = Path(path)
    try:
        text = read_bounded_text(path, MAX_FAULT_FILE_BYTES)
    except ReadRefused as exc:
        if exc.kind == "text":
            raise FaultFileError(f"{path}:1: not a text (YAML) file") from None
        raise FaultFileError(f"{path}: the faults file: {exc.message}") from None
    except OSError as exc:
        raise FaultFileError(f"{path}: cannot read the faults file: {exc.strerror}") from None
    return parse_fault_file(text, str(path), switches, hosts)


def parse_fault_file(text: str, source: str, switches: dict[str, set[str]],
                     hosts: dict[str, set[str]] | None = None) -> dict[str, dict]:
    try:
        # bounded: a 600-byte alias bomb stood for gigabytes once serialised (issue 34 finding 3)
        root = compose_bounded(text, max_bytes=MAX_FAULT_FILE_BYTES)
    except YamlRefused as exc:
        what = exc.message.replace("YAML syntax: ", "not YAML: ", 1)
        raise FaultFileError(f"{source}:{exc.line or 1}: {what}") from None
    out: dict[str, dict] = {}
    if root is None:
        return out

    def fail(node, where: str, what: str):
        raise FaultFileError(f"{source}:{node.start_mark.line + 1}: {where}: {what}")

    def mapping(node, where: str) -> list:
        if not isinstance(node, yaml.MappingNode):
            fail(node, where, "give a mapping")
        return node.value

    for key_node, value in mapping(root, "the file"):
        key = str(_scalar(key_node))
        if key == "switches":
            for name_node, body in mapping(value, "switches"):
                name = str(_scalar(name_node))
                if name not in switches:
                    fail(name_node, f"switches.{name}", "not a switch of the plan; use a planned switch name")
                out.setdefault(name, {"switch": {}, "ports": {}})["switch"] = _switch(body, f"switches.{name}", fail,
                                                                                     mapping)
        elif key == "ports":
            for end_node, body in mapping(value, "ports"):
                end = str(_scalar(end_node))
                name, sep, port = end.partition(":")
                if not sep or name not in switches:
                    fail(end_node, f"ports.{end}", "give \"<switch>:<port>\" with a switch of the plan")
                if port not in switches[name]:
                    fail(end_node, f"ports.{end}", f"{port} is not a planned port of {name}")
                out.setdefault(name, {"switch": {}, "ports": {}})["ports"][port] = _port(body, f"ports.{end}", fail,
                                                                                       mapping)
        elif key == "hosts":
            for name_node, body in mapping(value, "hosts"):
                name = str(_scalar(name_node))
                if name not in (hosts or {}):
                    fail(name_node, f"hosts.{name}", "not a GPU server this lab starts; name one of the plan's "
                                                     "first --hosts N hosts")
                out[name] = {"host": _host(body, f"hosts.{name}", fail, mapping, (hosts or {})[name])}
        else:
            fail(key_node, key, "unknown key; the file has `switches:`, `ports:` and `hosts:`")
    return out


def _host(node, where: str, fail, mapping, netdevs: set[str]) -> dict:
    out: dict = {}
    for key_node, value in mapping(node, where):
        key, at = str(_scalar(key_node)), f"{where}.{_scalar(key_node)}"
        if key not in HOST_KEYS:
            fail(key_node, at, f"unknown key; use {', '.join(sorted(HOST_KEYS))}")
        if not isinstance(value, yaml.SequenceNode):
            fail(value, at, "give a list of the host's rail netdevs")
        names = []
        for item in value.value:
            netdev = str(_scalar(item))
            if netdev not in netdevs:
                fail(item, at, f"{netdev} is not a rail of this host; use one of {', '.join(sorted(netdevs))}")
            names.append(netdev)
        out[key] = sorted(set(names))
    return out


def _number(node, where: str, fail, *, low: float | None = None, high: float | None = None,
            whole: bool = False) -> float | int:
    value = _scalar(node)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or (whole and not isinstance(value, int)):
        fail(node, where, f"give a {'whole ' if whole else ''}number")
    if (low is not None and value < low) or (high is not None and value > high):
        fail(node, where, f"{value} is outside {low}..{high}")
    return value


def _states(node, where: str, fail) -> list[str]:
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        fail(node, where, f"give a list of {' or '.join(PART_STATES)}, one per unit")
    states = [str(_scalar(item)) for item in node.value]
    for item, state in zip(node.value, states, strict=True):
        if state not in PART_STATES:
            fail(item, where, f"{state!r}: use {' or '.join(PART_STATES)}")
    return states


def _switch(node, where: str, fail, mapping) -> dict:
    out: dict = {}
    for key_node, value in mapping(node, where):
        key, at = str(_scalar(key_node)), f"{where}.{_scalar(key_node)}"
        if key not in SWITCH_KEYS:
            fail(key_node, at, f"unknown key; use {', '.join(sorted(SWITCH_KEYS))}")
        if key == "os_version":
            version = _scalar(value)
            if isinstance(version, bool) or not str(version or "").strip() or isinstance(version, float):
                fail(value, at, "give the release as a quoted string, e.g. \"5.9\" or \"202405\"")
            out[key] = str(version)
        elif key == "ntp":
            state = str(_scalar(value))
            if state not in NTP_STATES:
                fail(value, at, f"{state!r}: use {' or '.join(NTP_STATES)}")
            out[key] = state
        elif key in ("psu", "fans"):
            out[key] = _states(value, at, fail)
        else:
            out[key] = float(_number(value, at, fail, low=-40, high=150))
    return out


def _port(node, where: str, fail, mapping) -> dict:
    out: dict = {}
    for key_node, value in mapping(node, where):
        key, at = str(_scalar(key_node)), f"{where}.{_scalar(key_node)}"
        if key not in PORT_KEYS:
            fail(key_node, at, f"unknown key; use {', '.join(sorted(PORT_KEYS))}")
        if key in ("rx_power_dbm", "tx_power_dbm"):
            out[key] = float(_number(value, at, fail, low=-40, high=10))
        elif key == "module_temperature_c":
            out[key] = float(_number(value, at, fail, low=-40, high=150))
        elif key == "fec_ber":
            out[key] = float(_number(value, at, fail, low=0, high=0.5))
        else:
            out[key] = int(_number(value, at, fail, low=0, high=1_000_000, whole=True))
    return out
