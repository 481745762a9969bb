"""Check an NVUE startup.yaml against NVIDIA's object model: values, not only paths.

NVUE checks every value of a config against its object model, an OpenAPI schema per
release (NVUE-Object-Model page), and refuses the whole config on one bad value. The
`nvueschema` package holds pydantic models generated from that schema for 5.0-5.18.
Two things the models do not do by themselves, done here:
- they ignore keys they do not know; NVUE refuses them. A round trip
  (`model_dump(by_alias=True, exclude_unset=True)` against the input) finds such keys;
- they are fed the document as NVUE reads it: every scalar a string (yaml BaseLoader),
  so `on`/`off` stay `on`/`off` (a YAML 1.1 loader would make them booleans) and numbers
  are checked by the model's own int coercion.
"""

from __future__ import annotations

import importlib
import types
import typing
from dataclasses import dataclass
from functools import cache
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import BaseModel, ValidationError

from generator.common import yaml_events
from generator.common.release_catalog import NVUE_MODELS_PACKAGE, cumulus_releases

MODELS_PACKAGE = NVUE_MODELS_PACKAGE
_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)   # same resolver (strings only), in C


@dataclass(frozen=True, slots=True)
class ModelProblem:
    """One thing NVUE's object model refuses: key path in the `set` tree, and why."""

    path: tuple[str, ...]
    message: str
    kind: str = "value"        # "value" | "unknown-key" | "document"

    def line(self) -> str:
        where = " ".join(self.path) if self.path else "(document)"
        return f"{where}: {self.message}"

    def __str__(self) -> str:
        return self.line()


@dataclass(frozen=True, slots=True)
class ModelRelease:
    release: str               # the model module's release, e.g. "5.11"
    note: str | None = None    # set when the requested release had no model of its own


# --- which model ------------------------------------------------------------------------

def _key(version: str) -> tuple[int, int]:
    major, minor = (str(version).split(".") + ["0"])[:2]
    return int(major), int(minor)


available_releases = cumulus_releases     # the catalog's (common/release_catalog.py)


def _as_version(version: str | tuple[int, ...]) -> str:
    if isinstance(version, tuple):
        return ".".join(str(v) for v in version[:2])
    text = str(version).removeprefix("Cumulus Linux").strip()
    return ".".join(text.split(".")[:2])


def model_release(version: str | tuple[int, ...]) -> ModelRelease:
    """The model for a Cumulus release: the exact minor; a newer release than the newest
    model gets the newest (noted); an older one than the oldest raises ValueError."""
    wanted = _as_version(version)
    releases = available_releases()
    if wanted in releases:
        return ModelRelease(wanted)
    if _key(wanted) > _key(releases[-1]):
        return ModelRelease(releases[-1], f"no NVUE object model for {wanted}; checked against {releases[-1]}, "
                                          "the newest one nvueschema has")
    older = [r for r in releases if _key(r) < _key(wanted)]
    if not older:
        raise ValueError(f"no NVUE object model for Cumulus Linux {wanted}: nvueschema covers "
                         f"{releases[0]}-{releases[-1]}")
    # a minor release between two modelled ones (none today): the closest older model
    return ModelRelease(older[-1], f"no NVUE object model for {wanted}; checked against {older[-1]}")


@cache
def model_class(release: str) -> type[BaseModel]:
    """NvueConfig of one release (importing one model module takes ~0.8 s: cached)."""
    module = importlib.import_module(f"{MODELS_PACKAGE}.v{release.replace('.', '_')}")
    return module.NvueConfig


# --- reading the document as NVUE does ---------------------------------------------------

def load_set_body(text: str) -> dict:
    """The `set` mapping of a startup.yaml (list of header/set items) or of a bare mapping."""
    # from libyaml's events (common/yaml_events.load): PyYAML's composer and constructor were two
    # thirds of validate_nvue's time; the 93 golden startup.yaml files 0.9 s -> 0.45 s
    data = yaml_events.load(text, _LOADER)
    if data in (None, ""):
        return {}
    if isinstance(data, dict):
        return data
    if not isinstance(data, list):
        raise ValueError("expected a list of header/set items or a mapping")
    body: dict = {}
    for item in data:
        if isinstance(item, dict) and "set" in item:
            if isinstance(item["set"], dict):
                _merge(body, item["set"])
            elif item["set"] not in (None, ""):
                raise ValueError("'set' must be a mapping")
    return body


def _merge(target: dict, patch: dict) -> None:
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = value


# --- validation ----------------------------------------------------------------------------

def validate_nvue(text_or_tree: str | dict, version: str | tuple[int, ...]) -> list[ModelProblem]:
    """Every problem NVUE's object model for `version` finds in a startup.yaml (text) or a
    `set` tree (nested dicts of strings): bad values, then unknown keys; [] when valid."""
    if isinstance(text_or_tree, dict):
        body = text_or_tree
    else:
        try:
            body = load_set_body(text_or_tree)
        except (yaml.YAMLError, ValueError) as exc:
            return [ModelProblem((), f"not an NVUE document: {str(exc).splitlines()[0]}", "document")]
    release = model_release(version).release
    cls = model_class(release)
    try:
        obj = cls.model_validate(body)
    except ValidationError as exc:
        problems = _value_problems(cls, body, exc)
        seen = {p.path for p in problems}
        # no object to dump: find unknown keys by walking the model instead
        problems += [p for p in _unknown_by_walk(cls, body) if not any(_under(p.path, s) for s in seen)]
        return problems
    dumped = obj.model_dump(by_alias=True, exclude_unset=True)
    return [ModelProblem(path, _unknown_message(cls, path), "unknown-key") for path in _missing_keys(body, dumped, ())]


def _under(path: tuple[str, ...], prefix: tuple[str, ...]) -> bool:
    return path[: len(prefix)] == prefix


# no call for a scalar or an empty `{}` map (half the values of a rendered document): 0.30 ->
# 0.23 s over the 267 documents test_nvue_model.py renders
_NESTED = (dict, list)


def _missing_keys(given: Any, dumped: Any, where: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Key paths of `given` that the model's dump lacks: keys the model dropped as unknown.
    Values may differ (the model turns "9216" into 9216): only keys are compared."""
    out: list[tuple[str, ...]] = []
    if isinstance(given, dict) and isinstance(dumped, dict):
        keys = {str(k): v for k, v in dumped.items()}
        for key, value in given.items():
            if str(key) not in keys:
                out.append((*where, str(key)))
            elif isinstance(value, _NESTED) and value:
                out += _missing_keys(value, keys[str(key)], (*where, str(key)))
    elif isinstance(given, list) and isinstance(dumped, list):
        for i, (a, b) in enumerate(zip(given, dumped, strict=False)):
            if isinstance(a, _NESTED) and a:
                out += _missing_keys(a, b, (*where, str(i)))
    return out


def _unknown_message(cls: type[BaseModel], path: tuple[str, ...]) -> str:
    choices = sorted(_child_names(cls, path[:-1]))
    hint = f"; known keys here: {', '.join(choices)}" if choices and len(choices) <= 40 else ""
    return f"unknown key '{path[-1]}' (not in the NVUE object model){hint}"


def _value_problems(cls: type[BaseModel], body: dict, exc: ValidationError) -> list[ModelProblem]:
    groups: dict[tuple[str, ...], list[dict]] = {}
    for err in exc.errors():
        groups.setdefault(_input_path(body, err["loc"]), []).append(err)
    problems = []
    for path, errs in groups.items():
        value = _value_at(body, path)
        allowed = describe(_annotations_at(cls, path))
        if allowed is None:
            allowed = " or ".join(dict.fromkeys(e["msg"] for e in errs))
            problems.append(ModelProblem(path, f"{_show(value)}: {allowed}"))
        elif isinstance(value, dict):
            problems.append(ModelProblem(path, f"is a mapping here, but the model wants {allowed}"))
        else:
            problems.append(ModelProblem(path, f"{_show(value)} is not {allowed}"))
    return problems


def _show(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else repr(value)


def _input_path(body: Any, loc: tuple) -> tuple[str, ...]:
    """pydantic's loc names union members too (`constrained-int`, `literal['auto']`):
    keep only the elements that are keys of the input."""
    path: list[str] = []
    node = body
    for part in loc:
        if isinstance(node, dict) and str(part) in {str(k) for k in node}:
            node = next(v for k, v in node.items() if str(k) == str(part))
            path.append(str(part))
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
            path.append(str(part))
    return tuple(path)


def _value_at(body: Any, path: tuple[str, ...]) -> Any:
    node = body
    for part in path:
        if isinstance(node, dict):
            node = next((v for k, v in node.items() if str(k) == part), None)
        elif isinstance(node, list):
            node = node[int(part)]
    return node


# --- walking the model ------------------------------------------------------------------------

_ANY = object()


def _alternatives(ann: Any) -> list[Any]:
    """Flatten Optional/Union/Annotated wrappers into the plain alternatives."""
    origin = typing.get_origin(ann)
    if origin is Annotated:
        return _alternatives(typing.get_args(ann)[0])
    if origin in (Union, types.UnionType):
        out = []
        for arg in typing.get_args(ann):
            out += _alternatives(arg)
        return out
    if ann is type(None):
        return []
    return [ann]


def _field(cls: type[BaseModel], key: str):
    for name, info in cls.model_fields.items():
        if (info.alias or name) == key:
            return info
    return None


def _children(ann: Any, key: str) -> list[Any]:
    out = []
    for alt in _alternatives(ann):
        if alt is Any or alt is _ANY:
            out.append(_ANY)
        elif isinstance(alt, type) and issubclass(alt, BaseModel):
            info = _field(alt, key)
            if info is not None:
                out.append(_field_annotation(info))
        elif typing.get_origin(alt) is dict or alt is dict:
            args = typing.get_args(alt)
            out.append(args[1] if len(args) == 2 else _ANY)
    return out


def _field_annotation(info) -> Any:
    # pydantic moves top-level Annotated metadata to info.metadata; put it back for describe()
    if info.metadata:
        return Annotated[(info.annotation, *info.metadata)]
    return info.annotation


def _annotations_at(cls: type[BaseModel], path: tuple[str, ...]) -> list[Any]:
    anns: list[Any] = [cls]
    for key in path:
        anns = [child for ann in anns for child in _children(ann, key)]
        if not anns:
            return []
    return anns


def _child_names(cls: type[BaseModel], path: tuple[str, ...]) -> set[str]:
    names: set[str] = set()
    for ann in _annotations_at(cls, path):
        for alt in _alternatives(ann):
            if isinstance(alt, type) and issubclass(alt, BaseModel):
                names |= {info.alias or name for name, info in alt.model_fields.items()}
    return names


def _unknown_by_walk(cls: type[BaseModel], body: dict) -> list[ModelProblem]:
    out = []

    def walk(anns: list[Any], tree: dict, where: tuple[str, ...]) -> None:
        if any(a is _ANY or a is Any for ann in anns for a in _alternatives(ann) or [ann]):
            return
        for key, value in tree.items():
            children = [c for ann in anns for c in _children(ann, str(key))]
            if not children:
                out.append(ModelProblem((*where, str(key)), _unknown_message(cls, (*where, str(key))), "unknown-key"))
            elif isinstance(value, dict):
                walk(children, value, (*where, str(key)))

    walk([cls], body, ())
    return out


@cache
def _root_for(version: str) -> type[BaseModel]:
    return model_class(model_release(version).release)


def is_known_path(version: str | tuple[int, ...], keys: tuple[str, ...]) -> bool:
    """Is this key path part of the release's object model? A map entry (`interface <id>`,
    `traffic-class <id>`) takes any id; below a free-form map (`{}` values) anything goes.
    For drift: keys a newer minor release adds are not fabricgen's to compare."""
    anns: list[Any] = [_root_for(_as_version(version))]
    for key in keys:
        if any(a is _ANY for a in anns):
            return True
        anns = [child for ann in anns for child in _children(ann, str(key))]
        if not anns:
            return False
    return True


# --- what the model allows, in words ------------------------------------------------------

def describe(anns: list[Any]) -> str | None:
    """'one of enable|disable', 'an integer 552-9216', ... for the annotations at a path."""
    literals: list[str] = []
    parts: list[str] = []
    for ann in anns:
        _describe_into(ann, (), literals, parts)
    if not literals and not parts:
        return None
    words = []
    if literals:
        values = list(dict.fromkeys(literals))
        words.append(f"one of {'|'.join(values)}" if len(values) > 1 else f"'{values[0]}'")
    words += list(dict.fromkeys(parts))
    return " or ".join(words)


def _describe_into(ann: Any, meta: tuple, literals: list[str], parts: list[str]) -> None:
    origin = typing.get_origin(ann)
    if origin is Annotated:
        base, *extra = typing.get_args(ann)
        _describe_into(base, (*meta, *extra), literals, parts)
        return
    if origin in (Union, types.UnionType):
        for arg in typing.get_args(ann):
            _describe_into(arg, meta, literals, parts)
        return
    if ann is type(None):
        return
    if origin is Literal:
        literals.extend(str(v) for v in typing.get_args(ann))
        return
    bounds = _constraints(meta)
    if ann is int:
        lo, hi = bounds.get("ge"), bounds.get("le")
        if lo is not None and hi is not None:
            parts.append(f"an integer {lo}-{hi}")
        elif lo is not None:
            parts.append(f"an integer >= {lo}")
        elif hi is not None:
            parts.append(f"an integer <= {hi}")
        else:
            parts.append("an integer")
    elif ann is str:
        text = "a string"
        if bounds.get("pattern"):
            text += f" matching {bounds['pattern']}"
        if bounds.get("max_length") is not None:
            text += f" of at most {bounds['max_length']} characters"
        parts.append(text)
    elif ann is float:
        parts.append("a number")
    elif ann is bool:
        parts.append("a boolean")
    elif ann in (IPv4Address, IPv6Address):
        parts.append("an IPv4 address" if ann is IPv4Address else "an IPv6 address")
    elif ann in (IPv4Network, IPv6Network):
        parts.append("an IPv4 prefix" if ann is IPv4Network else "an IPv6 prefix")
    elif isinstance(ann, type) and issubclass(ann, BaseModel):
        parts.append("a container (mapping of its own keys)")
    elif origin is dict or ann is dict:
        parts.append("a mapping")
    elif origin is list:
        parts.append("a list")
    elif ann is Any:
        parts.append("any value")
    else:
        parts.append(getattr(ann, "__name__", str(ann)))


def _constraints(meta: tuple) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in meta:
        for sub in [item, *getattr(item, "metadata", [])]:
            for attr in ("ge", "le", "gt", "lt", "pattern", "max_length", "min_length"):
                value = getattr(sub, attr, None)
                if value is not None:
                    out.setdefault(attr, value)
            func = getattr(sub, "func", None)             # BeforeValidator(partial(_validate_*, ...))
            for attr, value in (getattr(func, "keywords", None) or {}).items():
                if value is not None:
                    out.setdefault(attr, value)
    if "gt" in out and "ge" not in out and isinstance(out["gt"], int):
        out["ge"] = out["gt"] + 1
    if "lt" in out and "le" not in out and isinstance(out["lt"], int):
        out["le"] = out["lt"] - 1
    return out
