"""Did-you-mean for intent keys and choice values, read from the intent model itself.

pydantic reports an unknown key (extra_forbidden) or a value outside a Literal (literal_error)
with its location only; what the user meant is the closest of what the model takes at that
location, found here by walking the model's field annotations along the location.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel

from generator.intent.model import Intent


def inner_types(tp: Any) -> list[Any]:
    """The model classes and Literal types a field annotation can hold, through Annotated,
    unions (X | None), lists and tuples (their items) and dicts (their values)."""
    origin = typing.get_origin(tp)
    if origin is Annotated:
        return inner_types(typing.get_args(tp)[0])
    if origin in (Union, types.UnionType, list, tuple):
        return [x for arg in typing.get_args(tp) for x in inner_types(arg)]
    if origin is dict:
        return inner_types(typing.get_args(tp)[1])
    return [tp]


def _field_types(loc: Sequence[str | int]) -> list[Any] | None:
    """What the model takes at `loc` (a pydantic error location); None when `loc` leaves the model."""
    found: list[Any] = [Intent]
    for part in loc:
        if isinstance(part, int):
            continue        # a list index: inner_types already stepped into the items
        nxt: list[Any] = []
        for model in found:
            if isinstance(model, type) and issubclass(model, BaseModel):
                for name, field in model.model_fields.items():
                    if part in (name, field.alias):
                        nxt += inner_types(field.annotation)
        if not nxt:
            return None
        found = nxt
    return found


def keys_at(loc: Sequence[str | int]) -> list[str]:
    """The keys the intent takes in the mapping at `loc`, as written in YAML (`global`, not `global_`)."""
    keys: list[str] = []
    for model in _field_types(loc) or []:
        if isinstance(model, type) and issubclass(model, BaseModel):
            keys += [field.alias or name for name, field in model.model_fields.items()]
    return keys


def choices_at(loc: Sequence[str | int]) -> list[str]:
    """The values a Literal field at `loc` takes ([] when it is not a choice)."""
    return [str(v) for tp in _field_types(loc) or [] if typing.get_origin(tp) is Literal
            for v in typing.get_args(tp)]


def did_you_mean(word: object, candidates: Sequence[str]) -> str | None:
    """The candidate closest to `word` (difflib's ratio of at least 0.6), if any."""
    if not isinstance(word, str):
        return None
    close = difflib.get_close_matches(word, candidates, n=1)
    return close[0] if close else None
