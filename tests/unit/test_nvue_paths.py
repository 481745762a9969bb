"""Every key path of every rendered startup.yaml must be a documented `nv set` path
for the target Cumulus generation (../shared/reference/nvue/*.tsv, plus the few paths of
reference pages the lists did not read: SUPPLEMENT, each checked against NVIDIA's object model)."""

from __future__ import annotations

import csv
import importlib
import re
import types
import typing
from pathlib import Path

import pytest
import yaml

from generator.intent.loader import parse_yaml, validate_data
from generator.plan.compile import compile_plan
from generator.render.nvue import render_switch
from tests.conftest import EXAMPLES, SHARED, example

NVUE = SHARED / "reference" / "nvue"
_ENUM = re.compile(r"^[a-z][a-z-]*(\|[a-z0-9][a-z0-9-]*)+$")
_OLD, _NEW = (5, 14), (5, 15)
# BaseLoader (every scalar a string, as the switch reads on/off), parsed by libyaml where PyYAML has it
_BASE_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)

# Paths the management plane needs that nvue_set_paths*.tsv lack (they cover the pages listed in
# NOTES.md; System-Security, User-Account, API, SSH-Server and Syslog were not read). Each row:
# path, allowed values ("" = free form, "<...>" = an enumeration too long to list), the CumulusNetworks/docs page (nvue-reference
# Set-and-Unset-Commands/<page> unless noted), first and last release (None = still current).
# test_supplement_is_in_the_object_model checks every row against nvueschema's models.
SUPPLEMENT: tuple[tuple[str, str, str, tuple[int, int], tuple[int, int] | None], ...] = (
    ("system aaa user <user-id> role", "", "User-Account.md", (5, 4), None),
    ("system aaa user <user-id> hashed-password", "", "User-Account.md", (5, 4), None),
    ("system aaa user <user-id> ssh authorized-key <ssh-authorized-key-id> key", "", "User-Account.md",
     (5, 4), None),
    ("system aaa user <user-id> ssh authorized-key <ssh-authorized-key-id> type",
     "ecdsa-sha2-nistp256|ecdsa-sha2-nistp384|ecdsa-sha2-nistp521|ssh-ed25519|ssh-rsa", "User-Account.md",
     (5, 4), None),
    ("system api state", "enabled|disabled", "API.md", (5, 0), None),
    ("system ssh-server state", "enabled|disabled", "SSH-Server.md", (5, 0), None),
    # user guide, Default Firewall Rules: "nv set system control-plane acl acl-default-dos inbound"
    ("system control-plane acl <acl-id> inbound", "", "Firewall.md", (5, 0), None),
    # Syslog.md: `service syslog <vrf> server` is gone in 5.13; `system syslog server <id> vrf` replaces it
    ("system syslog server <server-id>", "", "Syslog.md", (5, 13), None),
    ("system syslog server <server-id> vrf <vrf-id>", "", "Syslog.md", (5, 13), None),
    # the 5.15 object model moves the time zone under date-time (user guide 5.15, Setting-the-Date-and-Time)
    ("system date-time timezone", "<tz names>", "System-Configuration.md (5.15 object model)", (5, 15), None),
)
# Documented paths that later releases no longer have (object model; not in the renames list)
REMOVED: tuple[tuple[str, tuple[int, int]], ...] = (
    ("service syslog <vrf-id>", (5, 13)),                 # Syslog.md: "Cumulus 5.13 and later does not provide"
    ("system timezone", (5, 15)),                         # object model 5.15: system date-time timezone
)


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


def documented(new_syntax: bool, version: tuple[int, ...] | None = None) -> dict[tuple[str, ...], set[str] | None]:
    """path tokens -> allowed enumerated values (None when free-form), for one syntax generation
    (SUPPLEMENT rows for `version`, by default the generation's first or last release)."""
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
    release = version or (_NEW if new_syntax else _OLD)
    for prefix, gone in REMOVED:
        if release[:2] >= gone:
            n = len(prefix.split())
            out = {k: v for k, v in out.items() if k[:n] != tuple(prefix.split())}
    for path, values, _page, since, until in SUPPLEMENT:
        if since <= release[:2] and (until is None or release[:2] <= until):
            out[tuple(path.split())] = set(values.split("|")) if values and values[0] != "<" else None
    return out


def _is_argument(token: str) -> bool:
    return token.startswith("<") and token.endswith(">")


class _Node:
    __slots__ = ("exact", "arguments", "path")

    def __init__(self) -> None:
        self.exact: dict[str, _Node] = {}
        self.arguments: dict[str, _Node] = {}     # `<...>` tokens: match any one token
        self.path: tuple[int, tuple[str, ...]] | None = None


class _PathIndex:
    """The documented paths of one table as a token trie, so a rendered path is matched by walking
    its tokens instead of comparing it with every documented path (a large fabric has ~10^5 leaves
    against ~10^4 paths). Where several documented paths match, the first in table order wins."""

    def __init__(self, table) -> None:
        self.table = table          # kept alive: the index is found by id(table)
        self.root = _Node()
        for order, path in enumerate(table):
            node = self.root
            for token in path:
                children = node.arguments if _is_argument(token) else node.exact
                node = children.setdefault(token, _Node())
            if node.path is None:
                node.path = (order, path)
        self.found: dict[tuple[str, ...], tuple[str, ...] | None] = {}

    def match(self, key: tuple[str, ...]) -> tuple[str, ...] | None:
        if key not in self.found:
            hits = list(self._walk(self.root, key, 0))
            self.found[key] = min(hits)[1] if hits else None
        return self.found[key]

    def _walk(self, node: _Node, key: tuple[str, ...], depth: int):
        if depth == len(key):
            if node.path is not None:
                yield node.path
            return
        exact = node.exact.get(key[depth])
        if exact is not None:
            yield from self._walk(exact, key, depth + 1)
        for child in node.arguments.values():
            yield from self._walk(child, key, depth + 1)


_INDEXES: dict[int, _PathIndex] = {}


def _match(key: tuple[str, ...], table) -> tuple[str, ...] | None:
    """Find the documented path matching concrete tokens; `<...>` tokens match anything."""
    index = _INDEXES.get(id(table))
    if index is None or index.table is not table:
        index = _INDEXES[id(table)] = _PathIndex(table)
    return index.match(key)


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
    table = documented(new_syntax=_version(version) >= (5, 15), version=_version(version))
    for sw in plan.switches:
        # BaseLoader: NVUE's on/off are strings, as the switch reads them
        doc = yaml.load(render_switch(plan, sw), Loader=_BASE_LOADER)
        assert undocumented(doc, table) == [], sw.name


# Generated intents: the examples with the management plane, BFD and adaptive routing on, so that
# every optional partial is walked (medium is unnumbered, large numbered; both SN5600 at 400G).
_MANAGEMENT = {
    "gateway": "192.168.0.254", "ntp": ["192.0.2.10", "ntp.example.net"], "dns": ["192.0.2.53"],
    "syslog": ["192.0.2.99"], "timezone": "Europe/Berlin", "banner": "lab: authorised use only",
    "users": [{"name": "cumulus", "role": "system-admin", "hashed_password": "$6$fabricgenlab$x1y2z3w4v5",
               "ssh_keys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFab ops@example", "ssh-rsa AAAAB3NzaC1yc2E="]},
              {"name": "viewer", "role": "nvue-monitor", "ssh_keys": ["ecdsa-sha2-nistp256 AAAAE2VjZHNh"]}],
}


def variant_plan(name: str, version: str, **extra):
    data, lines = parse_yaml(example(name).read_text(), "variant.yaml")
    data.setdefault("switch_os", {})["version"] = version
    data.update(extra)
    return compile_plan(validate_data(data, lines, "variant.yaml"))


def full_plan(name: str, version: str):
    return variant_plan(name, version, management=_MANAGEMENT,
                        routing={"bfd": True, "adaptive_routing": True, "max_paths": 64})


@pytest.mark.skipif(not NVUE.is_dir(), reason=f"NVUE reference not found at {NVUE}")
@pytest.mark.parametrize("version", ["5.11", "5.14", "5.15"])
@pytest.mark.parametrize("name", ["medium", "large"])
def test_generated_variants_are_documented(name: str, version: str) -> None:
    plan = full_plan(name, version)
    table = documented(new_syntax=_version(version) >= (5, 15), version=_version(version))
    # one switch per role: switches of a role differ only in names and addresses
    for sw in {sw.role: sw for sw in reversed(plan.switches)}.values():
        doc = yaml.load(render_switch(plan, sw), Loader=_BASE_LOADER)
        assert undocumented(doc, table) == [], sw.name
        tree = doc[1]["set"]
        # the walk saw the optional features: they were rendered
        assert "eth0" in tree["interface"] and "aaa" in tree["system"] and "policy" in tree["router"]
        assert "adaptive-routing" in tree["router"]


@pytest.mark.skipif(not NVUE.is_dir(), reason=f"NVUE reference not found at {NVUE}")
def test_supplement_needs_its_release() -> None:
    """system syslog is undocumented before 5.13; service syslog is what 5.11 takes."""
    doc = [{"set": {"system": {"syslog": {"server": {"192.0.2.9": {"vrf": "mgmt"}}}}}}]
    assert undocumented(doc, documented(new_syntax=False, version=(5, 11)))
    assert undocumented(doc, documented(new_syntax=False, version=(5, 14))) == []
    assert undocumented(doc, documented(new_syntax=True)) == []
    assert undocumented([{"set": {"system": {"timezone": "Etc/UTC"}}}], documented(new_syntax=True))
    assert undocumented([{"set": {"system": {"timezone": "Etc/UTC"}}}], documented(new_syntax=False)) == []
    bad_type = [{"set": {"system": {"aaa": {"user": {"u": {"ssh": {"authorized-key": {"k": {"type": "sk-ssh"}}}}}}}}}]
    assert undocumented(bad_type, documented(new_syntax=True))


def _unwrap(annotation):
    """The model classes, dict value types and literals behind Optional/Union/Annotated."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [t for a in typing.get_args(annotation) if a is not type(None) for t in _unwrap(a)]
    return [annotation]


def model_values(release: str, path: str) -> set[str] | None | bool:
    """Walk nvueschema's NvueConfig of `release` along a `nv set` path: False when a token is not
    in the object model, else the leaf's Literal values (None when free form)."""
    module = importlib.import_module(f"nvueschema.models.v{release.replace('.', '_')}")
    types_ = [module.NvueConfig]
    tokens = path.split()
    i = 0
    while i < len(tokens):
        token, nxt = tokens[i], []
        scalar = not any(hasattr(t, "model_fields") or typing.get_origin(t) is dict for t in types_)
        if scalar and token.startswith("<") and i == len(tokens) - 1:
            break                                           # `vrf <vrf-id>`: the value itself
        for t in types_:
            if isinstance(t, type) and hasattr(t, "model_fields"):
                for name, field in t.model_fields.items():
                    if token in (field.alias, name):
                        nxt += _unwrap(field.annotation)
            elif typing.get_origin(t) is dict:
                nxt += _unwrap(typing.get_args(t)[1])      # token is an id
        if not nxt:
            return False
        types_ = nxt
        i += 1
    literals = {str(v) for t in types_ if typing.get_origin(t) is typing.Literal for v in typing.get_args(t)}
    return literals or None


@pytest.mark.parametrize(("path", "values", "page", "since", "until"), SUPPLEMENT)
def test_supplement_is_in_the_object_model(path, values, page, since, until) -> None:
    """NVIDIA's object model (OpenAPI, per release) has each supplementary path, with its values."""
    pytest.importorskip("nvueschema")
    releases = [r for r in ("5.11", "5.13", "5.15", "5.18") if _version(r) >= since and (until is None or _version(r) <= until)]
    for release in releases:
        got = model_values(release, path)
        assert got is not False, f"{path} not in the {release} object model"
        if values.startswith("<"):
            assert isinstance(got, set) and "Etc/UTC" in got, (release, path)
        else:
            assert got == (set(values.split("|")) if values else None), (release, path)


def test_object_model_walk_can_fail() -> None:
    pytest.importorskip("nvueschema")
    assert model_values("5.11", "system ssh-server sideways") is False
    assert model_values("5.11", "system syslog server <id> vrf <v>") is False    # 5.13+ only
    assert model_values("5.15", "interface <id> ip address <p>") is False       # 5.14- form
    assert model_values("5.15", "system timezone") is False
    assert model_values("5.14", "service syslog <vrf> server <id>") is False


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
