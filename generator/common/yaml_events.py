"""Plain YAML data built from libyaml's event stream: what PyYAML's BaseLoader builds (every scalar
its string, a repeated key's last value in the first one's place, an empty stream None), in about
half the time, and without recursion.

PyYAML composes a node per value, calling a Python resolver for each, then constructs the data
from the nodes in Python; libyaml's composer cannot be subclassed. The event stream is flat, so
it is built into the tree here in one loop, and what BaseLoader would do differently or what a
caller refuses stops the build as NotPlain: an alias (BaseLoader shares one object; a device's
alias is refused, generator/device_data.py), a collection as a key, a second document, or
nesting past MAX_DEPTH. Callers that must accept those read the text again with yaml.load.

Used where large rendered or device documents are read many times: the running config of each
switch (drift, deploy: 128 a run, issue 26) and FG260's object-model check of every rendered
startup.yaml (generator/render/nvue_model.py: 0.9 -> 0.45 s for the 93 golden documents).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from generator.common.errors import FabricgenError

HAS_LIBYAML = bool(getattr(yaml, "__with_libyaml__", False))


class NotPlain(FabricgenError, ValueError):
    """WHY: "alias", "key", "documents", "deep" or "tag"; LINE: 1-based, where known."""

    def __init__(self, why: str, line: int | None = None):
        super().__init__(f"not plain YAML data: {why}" + (f" at line {line}" if line else ""))
        self.why, self.line = why, line


_NO_KEY = object()


def plain_data(text: str, max_depth: int, resolve: Callable[[str, bool], Any] | None = None) -> Any:
    """BaseLoader's data of TEXT through libyaml (HAS_LIBYAML must hold); NotPlain as above,
    yaml.YAMLError for what is not YAML. RESOLVE(value, plain): the value of each scalar that is
    not a mapping key, PLAIN when it was written unquoted, for a loader that types values; its
    constructors would read a tagged node (`!!int "3"`, `!!set`) their own way, so with RESOLVE a
    tag is NotPlain too ("tag")."""
    result = None
    documents = 0
    open_: list = []            # the collections being filled, innermost last
    keys: list = []             # beside each: the mapping's key waiting for its value
    for event in yaml.parse(text, Loader=yaml.CBaseLoader):
        kind = type(event)      # libyaml yields exactly these classes: no subclass checks
        if kind is yaml.ScalarEvent:
            value = event.value
            if resolve is not None:
                if event.tag is not None:
                    raise NotPlain("tag", event.start_mark.line + 1)
                if not (open_ and type(open_[-1]) is dict and keys[-1] is _NO_KEY):
                    value = resolve(value, event.implicit[0])
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            if len(open_) >= max_depth:
                raise NotPlain("deep", event.start_mark.line + 1)
            if resolve is not None and event.tag is not None:
                raise NotPlain("tag", event.start_mark.line + 1)
            value = {} if kind is yaml.MappingStartEvent else []
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            open_.pop()
            keys.pop()
            continue
        elif kind is yaml.AliasEvent:
            raise NotPlain("alias", event.start_mark.line + 1)
        elif kind is yaml.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise NotPlain("documents", event.start_mark.line + 1)
            continue
        else:                   # stream start and end, document end
            continue
        if not open_:
            result = value
        elif type(open_[-1]) is list:
            open_[-1].append(value)
        elif keys[-1] is _NO_KEY:
            if type(value) is not str:          # unhashable: BaseConstructor's ConstructorError
                raise NotPlain("key", event.start_mark.line + 1)
            keys[-1] = value
        else:
            open_[-1][keys[-1]] = value
            keys[-1] = _NO_KEY
        if kind is not yaml.ScalarEvent:
            open_.append(value)
            keys.append(_NO_KEY)
    return result


PLAIN_DEPTH = 100       # rendered and device documents nest ~12 deep; PyYAML's constructor recurses per level


def load(text: str, loader: type, resolve: Callable[[str, bool], Any] | None = None) -> Any:
    """yaml.load(TEXT, Loader=LOADER): the same data, or the same error. Built from the events when
    that build is plain (RESOLVE typing the scalars as LOADER's resolvers and constructors would);
    what it leaves (an alias, a tag, a collection as a key, a second document, deep nesting, an
    error) is read by yaml.load itself."""
    if HAS_LIBYAML:
        try:
            return plain_data(text, PLAIN_DEPTH, resolve)
        except (NotPlain, yaml.YAMLError):
            pass
    return yaml.load(text, Loader=loader)  # noqa: S506 - callers pass BaseLoader or a SafeLoader subclass


__all__ = ["HAS_LIBYAML", "PLAIN_DEPTH", "NotPlain", "load", "plain_data"]
