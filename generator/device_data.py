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

import itertools
import json
import re
from typing import Any

import yaml

from generator.common.errors import FabricgenError

MAX_DEVICE_BYTES = 32 * 1024 * 1024
MAX_DEVICE_DEPTH = 64


class DeviceDataError(FabricgenError, ValueError):
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


def _parse_yaml_libyaml(text: str) -> Any:
    """The same answer as _DeviceYamlLoader, parsed by libyaml (several times faster: drift and
    deploy read one running config per switch, 128 of them per run; issue 26). libyaml's composer
    cannot be subclassed, so its event stream, which is flat, is built into the tree here without
    recursion: an alias is refused and a nesting deeper than MAX_DEVICE_DEPTH stops the build.
    As BaseLoader: every scalar a string, an empty document None, a repeated key's last value wins."""
    root: list = []
    stack: list = []            # open containers: [dict, pending key or _NO_KEY] or [list]
    documents = 0

    def add(value) -> None:
        if not stack:
            root.append(value)
            return
        top = stack[-1]
        if len(top) == 1:              # a sequence
            top[0].append(value)
        elif top[1] is _NO_KEY:
            if not isinstance(value, str):
                raise DeviceDataError("a YAML mapping key that is not a scalar")
            top[1] = value
        else:
            top[0][top[1]] = value
            top[1] = _NO_KEY

    for event in yaml.parse(text, Loader=yaml.CBaseLoader):
        kind = type(event)             # libyaml yields exactly these classes: no subclass checks
        if kind is yaml.ScalarEvent:
            add(event.value)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            if len(stack) >= MAX_DEVICE_DEPTH:
                raise _TooDeep
            node: dict | list = {} if kind is yaml.MappingStartEvent else []
            add(node)
            stack.append([node, _NO_KEY] if kind is yaml.MappingStartEvent else [node])
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            stack.pop()
        elif kind is yaml.AliasEvent:
            raise DeviceDataError(f"a YAML alias at line {event.start_mark.line + 1}: aliases are not accepted "
                                  "from a device")
        elif kind is yaml.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise DeviceDataError("more than one YAML document")
    return root[0] if root else None


_NO_KEY = object()


def parse_yaml(text: str, what: str) -> Any:
    """YAML a device printed; scalars stay strings (BaseLoader). DeviceDataError on anything refused."""
    _check_size(text, what)
    try:
        if yaml.__with_libyaml__:
            return _parse_yaml_libyaml(text)
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
    if _json_depth(text) > MAX_DEVICE_DEPTH:
        raise _too_deep(what)
    try:
        return json.loads(text)
    except RecursionError:              # the C decoder gives up near the interpreter's recursion limit
        raise _too_deep(what) from None
    except json.JSONDecodeError as exc:
        raise DeviceDataError(f"{what}: not JSON: {exc.msg} at line {exc.lineno}") from None


# A JSON string: a quote, then runs of plain characters and escapes, then a quote. Written as one
# run of plain characters after each escape ("unrolled"), not one alternative per character: the
# same strings, matched in less than half the time (issue 32: a SONiC day 0 counts ~400 config_dbs).
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^][{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _json_depth(text: str) -> int:
    """How deep the text's brackets nest, strings left out, counted before anything is parsed.
    Regex passes in C leave only the brackets (a few thousand for a 128-port interface tree),
    whose running sum is the depth: no walk of the ~100k parsed values. Unbalanced or broken
    text gives some number; json.loads then says what is wrong with it."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)
