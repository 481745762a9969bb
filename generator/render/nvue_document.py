"""Read and write NVUE documents (`/etc/nvue.d/startup.yaml`, `nv config show -o yaml`,
`nv config diff -o yaml`): a YAML list of `header` / `set` / `unset` items.

Reading keeps every scalar a string (`yaml.BaseLoader`, libyaml's when present): NVUE's
`on`/`off` and quoted numeric ids ('3') must round-trip as written (NVUE-CLI page: the
file is YAML, ids are map keys). Writing is a small emitter for the nested string maps
NVUE documents are made of: deterministic (the order of the input), about ten times
faster than `yaml.dump`, and it writes keys and values the way the templates do.
"""

from __future__ import annotations

import json
import re

from generator.common.errors import FabricgenError

# A plain scalar YAML reads back as the same string (no indicator first, no ": " / " #").
_PLAIN = re.compile(r"^[A-Za-z0-9_./$+=%(-][A-Za-z0-9_./$+=%:,()\[\]@! -]*$")
# Keys the templates quote (environment._yaml_key): YAML 1.1 readers would turn them into
# ints or booleans, and NVUE ids such as traffic class '3' are strings.
_QUOTED_KEYS = {"on", "off", "yes", "no", "true", "false", "null", "~", "y", "n"}


class DocumentError(FabricgenError, ValueError):
    """Text that is not an NVUE document; the message says why in one line."""


def load_items(text: str) -> list[dict]:
    """The items of a document, each `{kind: mapping}`; a bare mapping is one `set` item.

    Read as device data (generator/device_data.py): a running config or a diff comes from the
    switch, so the size and depth caps hold and aliases are refused; libyaml's event stream
    built into the tree in one pass is also what makes a 128-switch deploy's reads cheap."""
    from generator.device_data import DeviceDataError, parse_yaml

    try:
        data = parse_yaml(text, "NVUE YAML") if text and text.strip() else []
    except DeviceDataError as exc:
        raise DocumentError(f"not NVUE YAML: {str(exc).removeprefix('NVUE YAML: ')}") from None
    if isinstance(data, dict):
        data = [{"set": data}]
    if not isinstance(data, list):
        raise DocumentError("not an NVUE document: expected a list of header/set/unset items")
    items = []
    for item in data:
        if isinstance(item, dict):
            for kind, body in item.items():
                items.append({str(kind): body if isinstance(body, dict) else {}})
    return items


def merge_into(target: dict, patch: dict) -> dict:
    """Merge `patch` into `target` (maps merge key by key, anything else replaces)."""
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            merge_into(target[key], value)
        else:
            target[key] = _copy(value)
    return target


def _copy(value):
    return {k: _copy(v) for k, v in value.items()} if isinstance(value, dict) else value


def load_tree(text: str) -> tuple[dict, dict]:
    """(header, set tree) of a document; several `set` items merge in order."""
    header: dict = {}
    tree: dict = {}
    for item in load_items(text):
        (kind, body), = item.items()
        if kind == "header":
            header = body
        elif kind == "set":
            merge_into(tree, body)
    return header, tree


def _scalar(value) -> str:
    text = "" if value is None else str(value)
    if text and _PLAIN.match(text) and ": " not in text and " #" not in text and not text.endswith((" ", ":")) \
            and not text.startswith("- "):
        return text
    return json.dumps(text)           # a YAML double-quoted scalar


def _key(key) -> str:
    text = str(key)
    if text.isdigit() or text.lower() in _QUOTED_KEYS:
        return f"'{text}'"
    return _scalar(text)


def _emit(tree: dict, indent: int, out: list[str]) -> None:
    pad = " " * indent
    for key, value in tree.items():
        if isinstance(value, dict):
            if value:
                out.append(f"{pad}{_key(key)}:")
                _emit(value, indent + 2, out)
            else:
                out.append(f"{pad}{_key(key)}: {{}}")
        else:
            out.append(f"{pad}{_key(key)}: {_scalar(value)}")


def dump_document(header: dict, tree: dict) -> str:
    """`- header:` then `- set:`, as the templates and `nv config show -o yaml` write it."""
    out: list[str] = []
    if header:
        out.append("- header:")
        _emit(header, 4, out)
    out.append("- set:" if tree else "- set: {}")
    _emit(tree, 4, out)
    return "\n".join(out) + "\n"
