"""JSON text and copies of JSON data, byte for byte what the json and copy modules make, faster.

`config_db_text(config)` is json.dumps(config, indent=4, sort_keys=True) of a SONiC config_db
(tables of rows of fields, each a string or a list of strings), written with the C string encoder:
with `indent`, json runs its pure-Python encoder (json/encoder.py JSONEncoder.iterencode uses
c_make_encoder only when indent is None), ~1.8 ms per 90 kB leaf against ~0.9 ms here. A SONiC day
0 prints each switch's file and both sides of its diff under the one GIL the 128 switches share
(issue 32). Anything of another shape goes to json.dumps.

`copy_json` copies parsed JSON (dicts, lists, strings, numbers, booleans, None) in C through
marshal, which keeps a dict's order; copy.deepcopy walks it in Python with a memo of every object.
"""

from __future__ import annotations

import copy
import json
import marshal
from json.encoder import encode_basestring_ascii as _quoted
from typing import Any

_TABLE, _ROW, _FIELD, _ITEM = (" " * n for n in (4, 8, 12, 16))


class _OtherShape(Exception):
    pass


def config_db_text(config: Any) -> str:
    """json.dumps(config, indent=4, sort_keys=True), byte for byte."""
    try:
        return _tables(config)
    except _OtherShape:
        return json.dumps(config, indent=4, sort_keys=True)


def _tables(config: Any) -> str:
    if type(config) is not dict or not all(type(k) is str for k in config):
        raise _OtherShape
    if not config:
        return "{}"
    return "{\n" + ",\n".join(f"{_TABLE}{_quoted(name)}: {_rows(rows)}" for name, rows in sorted(config.items())) + "\n}"


def _rows(rows: Any) -> str:
    if type(rows) is not dict:
        raise _OtherShape
    if not rows:
        return "{}"
    return "{\n" + ",\n".join(f"{_ROW}{_key(key)}: {_fields(fields)}" for key, fields in sorted(rows.items())) \
        + "\n" + _TABLE + "}"


def _fields(fields: Any) -> str:
    if type(fields) is not dict:
        raise _OtherShape
    if not fields:
        return "{}"
    return "{\n" + ",\n".join(f"{_FIELD}{_key(name)}: {_value(value)}" for name, value in sorted(fields.items())) \
        + "\n" + _ROW + "}"


def _key(key: Any) -> str:
    if type(key) is not str:
        raise _OtherShape
    return _quoted(key)


def _value(value: Any) -> str:
    if type(value) is str:
        return _quoted(value)
    if type(value) is not list or not all(type(item) is str for item in value):
        raise _OtherShape
    if not value:
        return "[]"
    return "[\n" + ",\n".join(_ITEM + _quoted(item) for item in value) + "\n" + _FIELD + "]"


def copy_json(value: Any) -> Any:
    """A deep copy of parsed JSON; anything marshal cannot carry is copied by copy.deepcopy."""
    try:
        return marshal.loads(marshal.dumps(value))
    except ValueError:
        return copy.deepcopy(value)
