"""Text a switch or host printed, parsed as hostile input: a size cap, a depth cap, no YAML aliases.

A device's answer is not ours: a broken NOS, a compromised switch or a man in the middle can
print a "billion laughs" alias bomb, ten thousand nested brackets or a gigabyte of output.
Parsed naively, one such switch costs the whole run its memory or a RecursionError traceback —
`drift` dies and its Prometheus textfile keeps the last success (issue 23, item 9). Parsed
here, it is one DeviceDataError line and that device is `unknown`; every other device is
still checked.

Caps are far above what a real device prints: a 128-port NVUE config (`nv config show -o
yaml`) is a few hundred KB and about 12 levels deep; a SONiC config_db of 256 ports with
buffers is 1-2 MB and 4 levels deep; `nv show ... -o json` answers are a few levels deeper.
Neither NVUE nor SONiC prints YAML aliases for a config, so an alias is refused, not expanded.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

MAX_DEVICE_BYTES = 32 * 1024 * 1024
MAX_DEVICE_DEPTH = 64


class DeviceDataError(ValueError):
    """One line: what the device printed that is refused, and why."""


def _check_size(text: str, what: str) -> None:
    if len(text) > MAX_DEVICE_BYTES:
        raise DeviceDataError(f"{what}: {len(text):,} characters, above the {MAX_DEVICE_BYTES:,} a device "
                              "config can plausibly be: refused")


def _too_deep(what: str) -> DeviceDataError:
    return DeviceDataError(f"{what}: nested deeper than {MAX_DEVICE_DEPTH} levels: refused")


class _DeviceYamlLoader(yaml.BaseLoader):
    """BaseLoader (every scalar a string, as NVUE values are compared) that refuses aliases and
    stops composing past MAX_DEVICE_DEPTH (PyYAML's composer recurses once per level)."""

    _depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise DeviceDataError(f"a YAML alias at line {mark.line + 1}: aliases are not accepted from a device")
        self._depth += 1
        try:
            if self._depth > MAX_DEVICE_DEPTH:
                raise _TooDeep
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _TooDeep(Exception):
    pass


def parse_yaml(text: str, what: str) -> Any:
    """YAML a device printed; scalars stay strings (BaseLoader). DeviceDataError on anything refused."""
    _check_size(text, what)
    try:
        return yaml.load(text, Loader=_DeviceYamlLoader)  # noqa: S506 - a BaseLoader subclass: no object tags
    except _TooDeep:
        raise _too_deep(what) from None
    except DeviceDataError as exc:
        raise DeviceDataError(f"{what}: {exc}") from None
    except yaml.YAMLError as exc:
        raise DeviceDataError(f"{what}: not YAML: {str(exc).splitlines()[0]}") from None


def checked_text(text: str, what: str) -> str:
    """Text a device printed for a line parser (SONiC's tabulate tables, ntpq, sfputil dumps):
    the size cap only, since a line parser has no depth. DeviceDataError when refused."""
    _check_size(text, what)
    return text


def parse_json(text: str, what: str) -> Any:
    """JSON a device printed. DeviceDataError on anything refused."""
    _check_size(text, what)
    try:
        data = json.loads(text)
    except RecursionError:              # the C decoder gives up near the interpreter's recursion limit
        raise _too_deep(what) from None
    except json.JSONDecodeError as exc:
        raise DeviceDataError(f"{what}: not JSON: {exc.msg} at line {exc.lineno}") from None
    # Below the recursion limit but still absurd: walk iteratively, the walk itself cannot overflow.
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > MAX_DEVICE_DEPTH:
                raise _too_deep(what)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return data
