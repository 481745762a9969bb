"""Every key path of every rendered startup.yaml must be a documented `nv set` path
for the target Cumulus generation (../shared/reference/nvue/*.tsv)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
import yaml

from generator.intent.loader import parse_yaml, validate_data
from generator.plan.compile import compile_plan
from generator.render.nvue import render_switch
from tests.conftest import EXAMPLES, SHARED, example

NVUE = SHARED / "reference" / "nvue"
_ENUM = re.compile(r"^[a-z][a-z-]*(\|[a-z0-9][a-z0-9-]*)+$")


def _rows() -> list[dict[str, str]]:
    rows = []
    for name in ("nvue_set_paths.tsv", "nvue_set_paths_supplementary.tsv"):
        with open(NVUE / name, newline="") as fh:
            lines = [ln for ln in fh if ln.strip()]
        header = lines[0].lstrip("# ").rstrip("\n").split("\t")
        for row in csv.DictReader(lines[1:], fieldnames=header, delimiter="\t"):
            rows.append(row)
    return rows


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(".") if x.isdigit()) if text else (0,)


def documented(new_syntax: bool) -> dict[tuple[str, ...], set[str] | None]:
    """path tokens -> allowed enumerated values (None when free-form), for one syntax generation."""
    renames = {}
    with open(NVUE / "nvue_renames_515.tsv") as fh:
        for line in fh:
            if line.startswith("#") or not line.strip():
                continue
            old, new, kind = line.rstrip("\n").split("\t")[:3]
            if old != new and "not a 5.15 change" not in kind:
                renames[old] = new
    old_forms, new_forms = set(renames), set(renames.values())
    out: dict[tuple[str, ...], set[str] | None] = {}
    for row in _rows():
        path, source, since = row["path"], row.get("source") or "", row.get("introduced_in") or ""
        if new_syntax and ("5.14-and-earlier form" in source or path in old_forms):
            continue
        if not new_syntax and ("5.15+ form" in source or _version(since) >= (5, 15)
                               or (path in new_forms and path not in old_forms)):
            continue
        values = (row.get("values") or "").strip()
        allowed = set(values.split("|")) if _ENUM.match(values) else None
        key = tuple(path.split())
        if key in out and (out[key] is None or allowed is None):
            out[key] = None
        elif key in out:
            out[key] |= allowed
        else:
            out[key] = allowed
    return out


def _match(key: tuple[str, ...], table) -> tuple[str, ...] | None:
    """Find the documented path matching concrete tokens; `<...>` tokens match anything."""
    candidates = [p for p in table if len(p) == len(key)]
    for p in candidates:
        if all(a == b or (a.startswith("<") and a.endswith(">")) for a, b in zip(p, key, strict=True)):
            return p
    return None


def walk(tree, prefix=()):
    """Yield (path tokens, scalar or None) for every leaf of a `set:` tree."""
    if isinstance(tree, dict):
        if not tree and prefix:
            yield prefix, None
        for k, v in tree.items():
            yield from walk(v, prefix + (str(k),))
    else:
        yield prefix, tree


def undocumented(doc: list, table) -> list[str]:
    bad = []
    for item in doc:
        for tokens, value in walk(item.get("set", {})):
            if value is None:
                # `{}`: the last token is itself the argument (an id or an enumerated value)
                if _match(tokens, table) is None and _match(tokens[:-1], table) is None:
                    bad.append(" ".join(tokens))
                    continue
                path = _match(tokens[:-1], table)
                if path is not None and table[path] is not None and tokens[-1] not in table[path]:
                    bad.append(f"{' '.join(tokens)} (allowed: {'|'.join(sorted(table[path]))})")
                continue
            path = _match(tokens, table) or _match(tokens + ("<value>",), table)
            if path is None:
                bad.append(" ".join(tokens) + f" {value}")
            elif table.get(path) is not None and str(value) not in table[path]:
                bad.append(f"{' '.join(tokens)} {value} (allowed: {'|'.join(sorted(table[path]))})")
    return bad


def _plan_for(path: Path, version: str | None = None):
    text = path.read_text()
    data, lines = parse_yaml(text, str(path))
    if version:
        data.setdefault("switch_os", {})["version"] = version
    return compile_plan(validate_data(data, lines, str(path)))


@pytest.mark.skipif(not NVUE.is_dir(), reason=f"NVUE reference not found at {NVUE}")
@pytest.mark.parametrize("version", ["5.11", "5.15"])
@pytest.mark.parametrize("name", EXAMPLES)
def test_rendered_paths_are_documented(name: str, version: str) -> None:
    plan = _plan_for(example(name), version)
    table = documented(new_syntax=_version(version) >= (5, 15))
    for sw in plan.switches:
        # BaseLoader: NVUE's on/off are strings, as the switch reads them
        doc = yaml.load(render_switch(plan, sw), Loader=yaml.BaseLoader)
        assert undocumented(doc, table) == [], sw.name


@pytest.mark.skipif(not NVUE.is_dir(), reason=f"NVUE reference not found at {NVUE}")
def test_checker_catches_wrong_generation() -> None:
    """The check itself can fail: 5.15 syntax is undocumented for 5.11 and the reverse."""
    new = [{"set": {"qos": {"roce": {"state": "enabled"}}, "interface": {"lo": {"ipv4": {"address": {"10.0.0.1/32": {}}}}}}}]
    old = [{"set": {"qos": {"roce": {"enable": "on"}}, "router": {"bgp": {"enable": "on"}}}}]
    assert len(undocumented(new, documented(new_syntax=False))) == 2
    assert len(undocumented(old, documented(new_syntax=True))) == 2
    assert undocumented(old, documented(new_syntax=False)) == []
    assert undocumented([{"set": {"interface": {"swp1": {"link": {"state": {"sideways": {}}}}}}}],
                        documented(new_syntax=False))


def test_version_selects_syntax() -> None:
    old = render_switch(p := _plan_for(example("small"), "5.14"), p.switches[0])
    new = render_switch(p := _plan_for(example("small"), "5.15"), p.switches[0])
    assert "enable: on" in old and "state: enabled" not in old and "\n        ip:\n" in old
    assert "state: enabled" in new and "enable: on" not in new and "\n        ipv4:\n" in new
