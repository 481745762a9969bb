"""The intent's `extra:` entries in the rendered configs (issue 36): merged last, owned.

NVUE: the entries of a switch merge, in intent order, into one `set` tree that the render
appends as the document's last `- set:` item. NVUE applies a document's items in order
(NVUE-CLI page: a config file is a list of `set`/`unset` operations), as load_tree reads it, so
the entry lands on top of the rendered config. A boolean (YAML's `on`/`off`/`true`/`false`)
is written `on`/`off`, the words NVUE's object model takes for its boolean-like keys.
SONiC: the entries' tables merge row by row, field by field into config_db.

What an entry sets is fabricgen's on that switch (render/managed.py, render/sonic_managed.py):
deploy replaces it and drift compares it, down to the entry's second level (`service
snmp-server`, a config_db row), so a hand edit or removal on the switch shows as drift.
"""

from __future__ import annotations

from generator.plan.extra import extras_for
from generator.render.nvue_document import _emit, merge_into


def _nvue_values(tree: dict) -> dict:
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out[key] = _nvue_values(value)
        elif isinstance(value, bool):
            out[key] = "on" if value else "off"
        else:
            out[key] = value
    return out


def nvue_tree(plan, sw) -> dict:
    """The merged NVUE subtree of SW's entries ({} when none applies)."""
    tree: dict = {}
    for entry in extras_for(plan, sw):
        if entry.nvue:
            merge_into(tree, _nvue_values(entry.nvue))
    return tree


def nvue_item(plan, sw) -> str:
    """The `- set:` item appended to SW's startup.yaml ("" when no entry applies)."""
    tree = nvue_tree(plan, sw) if plan.extra else {}
    if not tree:
        return ""
    out = ["- set:"]
    _emit(tree, 4, out)
    return "\n".join(out) + "\n"


def nvue_owned(plan, sw) -> tuple[tuple[str, ...], ...]:
    """The key paths SW's entries own: each branch down to its second key (`service snmp-server`)."""
    paths: list[tuple[str, ...]] = []
    for key, value in nvue_tree(plan, sw).items() if plan.extra else ():
        if isinstance(value, dict) and value:
            paths += [(str(key), str(sub)) for sub in value]
        else:
            paths.append((str(key),))
    return tuple(paths)


def merge_sonic(config: dict, plan, sw) -> dict:
    """CONFIG (SW's config_db) with its entries' tables merged in, field by field."""
    for entry in extras_for(plan, sw) if plan.extra else ():
        for table, rows in (entry.sonic or {}).items():
            for row, fields in rows.items():
                config.setdefault(table, {}).setdefault(row, {}).update(fields)
    return config


def sonic_owned(plan, sw) -> tuple[tuple[str, str], ...]:
    """(table, row) of every config_db row SW's entries set."""
    rows: dict[tuple[str, str], None] = {}
    for entry in extras_for(plan, sw) if plan.extra else ():
        for table, data in (entry.sonic or {}).items():
            for row in data:
                rows[(table, row)] = None
    return tuple(rows)
