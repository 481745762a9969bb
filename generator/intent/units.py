"""Typed parsing of the human units used in intents: sizes, speeds, ratios."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema
from pydantic_core import PydanticCustomError

_SIZE_UNITS = {
    "": 1, "b": 1,
    # NVIDIA states its ECN defaults in decimal KB (150 KB = 150000 B)
    "kb": 1000, "mb": 1000**2, "gb": 1000**3,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3,
}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")
_SPEED_RE = re.compile(r"^\s*(\d+)\s*[gG](?:b(?:ps|/s)?)?\s*$")
_RATIO_RE = re.compile(r"^\s*(\d+)\s*:\s*(\d+)\s*$")
# Cumulus "5.11" / "5.15.1"; SONiC release names "202411" (or "2024.11")
RELEASE_PATTERN = r"^(\d+\.\d+(\.\d+)?|\d{6})$"
# the error type of a string value written as a YAML number; the loader, which has the text as
# written (2:1, 5.10), puts that text in the advice (generator/intent/loader.py)
UNQUOTED_NUMBER = "unquoted_number"


def unquoted_number(number: int | float, advice: str, example: str, why: str) -> PydanticCustomError:
    """A value that must be a string came as a YAML number: say so, and how to quote it."""
    return PydanticCustomError(UNQUOTED_NUMBER, 'got the number {number}: {advice} "{example}" ({why})',
                               {"number": number, "advice": advice, "example": example, "why": why})


def parse_size(value: Any) -> int:
    """Bytes from 150KB, 1.5MB, 64KiB or a plain integer."""
    if isinstance(value, bool):
        raise ValueError("expected a size such as 150KB, 1.5MB or 64KiB")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("a size cannot be negative")
        return value
    if isinstance(value, str):
        m = _SIZE_RE.match(value)
        if m and m.group(2).lower() in _SIZE_UNITS:
            number = float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]
            if number != int(number):
                raise ValueError(f"{value!r} is not a whole number of bytes")
            return int(number)
    raise ValueError(f"{value!r} is not a size: write e.g. 150KB (1 KB = 1000 B), 1.5MB or 64KiB")


def parse_speed(value: Any) -> int:
    """Gb/s from 400G (also 400Gbps); the intent never uses bare numbers for speeds."""
    if isinstance(value, str):
        m = _SPEED_RE.match(value)
        if m and int(m.group(1)) > 0:
            return int(m.group(1))
    raise ValueError(f"{value!r} is not a speed: write e.g. 400G")


def parse_ratio(value: Any) -> tuple[int, int]:
    """(downlink, uplink) from "2:1"."""
    if isinstance(value, int) and not isinstance(value, bool):
        # YAML 1.1 reads an unquoted 2:1 as the base-60 integer 121
        raise unquoted_number(value, "quote ratios, e.g.", "2:1", "an unquoted ratio is a YAML base-60 number")
    if isinstance(value, str):
        m = _RATIO_RE.match(value)
        if m and int(m.group(1)) > 0 and int(m.group(2)) > 0:
            down, up = int(m.group(1)), int(m.group(2))
            return down, up
    raise ValueError(f"{value!r} is not a ratio: write downlink:uplink, e.g. \"1:1\" or \"2:1\"")


def parse_release(value: Any) -> str:
    """A NOS release as written: "5.11", "5.15.1", "202411" or "2024.11" (a string: YAML reads
    an unquoted 5.10 as the number 5.1, and the release would silently become 5.1)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        why = ("YAML reads an unquoted release as a number: 5.10 is 5.1" if isinstance(value, float)
               else "YAML reads an unquoted release as a number")
        raise unquoted_number(value, "write it quoted, e.g.", str(value), why)
    if isinstance(value, str) and re.fullmatch(RELEASE_PATTERN, value):
        return value
    raise ValueError(f"{value!r} is not a release: write Cumulus Linux as \"5.11\" (major.minor) or SONiC as "
                     "\"202411\" (year and month)")


def format_speed(gbps: int) -> str:
    return f"{gbps}G"


def format_ratio(ratio: tuple[int, int]) -> str:
    return f"{ratio[0]}:{ratio[1]}"


SizeBytes = Annotated[
    int,
    BeforeValidator(parse_size),
    WithJsonSchema({"anyOf": [{"type": "string", "pattern": r"^\d+(\.\d+)?\s*([KMG]i?B|B)?$"},
                              {"type": "integer", "minimum": 0}],
                    "description": "bytes, or a size with unit: B, KB, MB (decimal), KiB, MiB (binary)"}),
]
SpeedG = Annotated[
    int,
    BeforeValidator(parse_speed),
    PlainSerializer(format_speed, return_type=str),
    WithJsonSchema({"type": "string", "pattern": r"^\d+G$", "examples": ["100G", "200G", "400G", "800G"]}),
]
Ratio = Annotated[
    tuple[int, int],
    BeforeValidator(parse_ratio),
    PlainSerializer(format_ratio, return_type=str),
    WithJsonSchema({"type": "string", "pattern": r"^\d+:\d+$", "examples": ["1:1", "2:1"]}),
]
Release = Annotated[
    str,
    BeforeValidator(parse_release),
    WithJsonSchema({"type": "string", "pattern": RELEASE_PATTERN, "examples": ["5.11", "5.15", "202411"]}),
]
