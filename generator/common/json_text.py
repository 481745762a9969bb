"""Copies of parsed JSON data, as copy.deepcopy makes them, faster.

`copy_json` copies parsed JSON (dicts, lists, strings, numbers, booleans, None) in C through
marshal, which keeps a dict's order; copy.deepcopy walks it in Python with a memo of every object.
"""

from __future__ import annotations

import copy
import marshal
from typing import Any


def copy_json(value: Any) -> Any:
    """A deep copy of parsed JSON; anything marshal cannot carry is copied by copy.deepcopy."""
    try:
        return marshal.loads(marshal.dumps(value))
    except ValueError:
        return copy.deepcopy(value)
