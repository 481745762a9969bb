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
from generator.common.yaml_events import HAS_LIBYAML, NotPlain, plain_data

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
    deploy read one running config per switch, 128 of them per run; issue 26), built without
    recursion (generator/common/yaml_events.py): an alias is refused and a nesting deeper than
    MAX_DEVICE_DEPTH stops the build."""
    try:
        return plain_data(text, MAX_DEVICE_DEPTH)
    except NotPlain as exc:
        if exc.why == "deep":
            raise _TooDeep from None
        raise DeviceDataError({
            "alias": f"a YAML alias at line {exc.line}: aliases are not accepted from a device",
            "key": "a YAML mapping key that is not a scalar",
            "documents": "more than one YAML document"}[exc.why]) from None


def parse_yaml(text: str, what: str) -> Any:
    """YAML a device printed; scalars stay strings (BaseLoader). DeviceDataError on anything refused."""
    _check_size(text, what)
    try:
        if HAS_LIBYAML:
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
