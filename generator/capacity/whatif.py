"""--what-if KEY=V1,V2,...: re-validate a modified intent through the real model and
recompile, one row per value, so a variant is exactly what the loader would accept."""

from __future__ import annotations

import copy
import re
import types
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from generator.capacity.analyze import Analysis, analyze
from generator.capacity.gpus import UnknownGpu
from generator.common.bounded_yaml import load_bounded
from generator.common.errors import FabricgenError
from generator.intent.loader import format_path
from generator.intent.model import Intent
from generator.plan.topology import CompileError

SHORT_KEYS = {
    "nic_speed": "topology.nic_speed",
    "oversubscription": "topology.oversubscription",
    "rails": "topology.rails",
    "nodes": "topology.nodes",
    "kind": "topology.kind",
    "gpu": "topology.gpu",
    "gpus_per_node": "topology.gpus_per_node",
}


class WhatIfError(FabricgenError, ValueError):
    """Bad --what-if input; the message is the one line the user sees."""


@dataclass(frozen=True, slots=True)
class Variant:
    key: str
    value: Any
    analysis: Analysis | None
    error: str | None

    def as_dict(self) -> dict:
        row: dict[str, Any] = {"key": self.key, "value": self.value, "ok": self.analysis is not None,
                               "error": self.error}
        a = self.analysis
        if a is not None:
            chosen = a.allreduce.chosen
            row.update({"algorithm": chosen.algorithm, "time_s": chosen.time_s, "busbw_GBps": chosen.busbw_GBps,
                        "algbw_GBps": chosen.algbw_GBps, "bisection_tbps": a.bisection_gbps / 1000,
                        "naive_time_s": a.naive.time_s, "switches": len(a.plan.switches),
                        "comm_share_no_overlap": a.step.share_no_overlap if a.step else None,
                        "comm_share_overlap": a.step.share_overlap if a.step else None})
        return row


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _model_of(arg)
            if found is not None:
                return found
    return None


def resolve_key(key: str) -> list[str]:
    """The YAML key path for `key` (a short name or a dotted intent path)."""
    dotted = SHORT_KEYS.get(key, key)
    model: type[BaseModel] | None = Intent
    path = []
    for part in dotted.split("."):
        fields = model.model_fields if model is not None else {}
        name = next((n for n, f in fields.items() if part in (n, f.alias)), None)
        if name is None:
            raise WhatIfError(f"--what-if key {key!r} is not in the intent: use {', '.join(SHORT_KEYS)} "
                              "or a dotted intent path such as workload.step_compute_ms")
        field = fields[name]
        path.append(field.alias or name)
        model = _model_of(field.annotation)
    if model is not None:
        raise WhatIfError(f"--what-if key {key!r} is a section, not a value: name one of its keys")
    return path


def _value(text: str) -> Any:
    text = text.strip()
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", text):
        return float(text)
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def parse_spec(spec: str) -> tuple[str, list[str], list[Any]]:
    key, sep, values = spec.partition("=")
    if not sep or not key.strip():
        raise WhatIfError(f"--what-if {spec!r} is not KEY=V1,V2,...: e.g. nic_speed=200G,400G,800G")
    items = [v for v in (x.strip() for x in values.split(",")) if v]
    if not items:
        raise WhatIfError(f"--what-if {spec!r} lists no values: e.g. {key.strip()}=V1,V2")
    return key.strip(), resolve_key(key.strip()), [_value(v) for v in items]


def _set(data: dict, path: list[str], value: Any) -> None:
    node = data
    for part in path[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise WhatIfError(f"--what-if cannot set {'.'.join(path)}: {part} is not a mapping in the intent")
    node[path[-1]] = value


def run_what_if(base_data: dict, spec: str, message_bytes: int | None, naive_guide: bool = False) -> list[Variant]:
    key, path, values = parse_spec(spec)
    dotted = ".".join(path)
    rows = []
    for value in values:
        data = copy.deepcopy(base_data)
        _set(data, path, value)
        try:
            intent = Intent.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = format_path(err["loc"]) or dotted
            msg = err['msg'].removeprefix('Value error, ')
            raise WhatIfError(f"--what-if {dotted}={value}: {where}: {msg}") from None
        try:
            rows.append(Variant(dotted, value, analyze(intent, message_bytes, naive_guide=naive_guide), None))
        except UnknownGpu as exc:
            raise WhatIfError(f"--what-if {dotted}={value}: {exc}") from None
        except CompileError as exc:
            # a variant that cannot be built is an answer, not bad input
            rows.append(Variant(dotted, value, None, f"{exc.path}: {exc.message}"))
    return rows


def load_base_data(text: str) -> dict:
    data = load_bounded(text)     # the intent's text, already read within the same bounds
    return data if isinstance(data, dict) else {}
