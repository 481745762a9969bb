"""Validate a SONiC config_db.json against SONiC's own YANG models with libyang.

The models are not vendored: the caller passes the directory that holds the
sonic-*.yang files (src/sonic-yang-models/yang-models in sonic-buildimage).

libyang 2.x parses JSON strictly (int8..uint32 must be JSON numbers, 64-bit ints
strings, booleans true/false), so every config_db string is re-typed from the
schema before parsing.  libyang 2.1 stops at the first error; to report every
problem in one run, ``validate`` removes the offending leaf (or entry) from the
YANG document and parses again until it is clean.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.common.errors import FabricgenError

try:
    import libyang
    from _libyang import ffi, lib
except ImportError as exc:  # the validator is optional; the rest of the product must still import
    libyang = None
    ffi = lib = None
    _IMPORT_ERROR: str = str(exc)
else:
    _IMPORT_ERROR = ""

__all__ = ["SonicYangUnavailable", "YangIssue", "YangValidator"]

INSTALL_HINT = "apt-get install -y libyang2-dev && pip install libyang==2.7.1"

# Each pass costs one full parse; a config this broken needs fixing, not a longer list.
MAX_ISSUES = 200

_INT_RE = re.compile(r"-?[0-9]+")
# libyang stores the location as 'Schema location "...", data location "...", line number N.'
_DATA_LOC_RE = re.compile(r'[Dd]ata location "(.*?)"(?=, |\.?$)')
_SCHEMA_LOC_RE = re.compile(r'[Ss]chema location "(.*?)"(?=, |\.?$)')
_DANGLING_RE = re.compile(r'Invalid (?:leafref|union) value "(.*?)" - ')


class SonicYangUnavailable(FabricgenError, RuntimeError):
    """libyang or the YANG models cannot be used; the message says how to fix it."""


@dataclass(frozen=True)
class YangIssue:
    device: str
    table: str
    key: str
    message: str

    def __str__(self) -> str:
        where = self.table
        if self.key:
            where = f"{where}|{self.key}" if where else self.key
        return f"{self.device}: {where}: {self.message}" if where else f"{self.device}: {self.message}"


# ----------------------------------------------------------------------------- schema index


@dataclass(frozen=True)
class _Leaf:
    name: str
    kinds: frozenset[str]  # JSON encodings the leaf's (resolved) type accepts
    leaf_list: bool
    mandatory: bool
    is_key: bool
    targets: frozenset[str] = frozenset()  # config_db tables a leafref in the type points into


@dataclass(frozen=True)
class _MapShape:
    """A config_db map table: each field/value pair is one entry of an inner list."""

    inner: str
    key: _Leaf
    value: _Leaf


@dataclass(frozen=True, eq=False)
class _Node:
    """A list or container directly under a table container."""

    name: str
    is_list: bool
    keys: tuple[_Leaf, ...]
    leaves: dict[str, _Leaf]
    map: _MapShape | None


@dataclass(frozen=True, eq=False)
class _Table:
    module: str
    name: str
    nodes: tuple[_Node, ...]

    @property
    def top(self) -> str:
        return f"{self.module}:{self.module}"

    @property
    def qualified(self) -> str:
        return f"{self.module}:{self.name}"

    def node(self, name: str) -> _Node | None:
        return next((n for n in self.nodes if n.name == name), None)

    def node_for_key(self, parts: list[str]) -> _Node | None:
        if len(parts) == 1:
            for n in self.nodes:
                if not n.is_list and n.name == parts[0]:
                    return n
        # Several lists can share a table (BGP_NEIGHBOR, INTERFACE): the key's arity picks one.
        return next((n for n in self.nodes if n.is_list and len(n.keys) == len(parts)), None)


def _type_kinds(t: Any) -> frozenset[str]:
    base = t.base()
    if base == libyang.Type.LEAFREF:
        real = t.leafref_type()
        return _type_kinds(real) if real is not None else frozenset({"str"})
    if base == libyang.Type.UNION:
        kinds: set[str] = set()
        for member in t.union_types():
            kinds |= _type_kinds(member)
        return frozenset(kinds)
    if base in (
        libyang.Type.INT8, libyang.Type.INT16, libyang.Type.INT32,
        libyang.Type.UINT8, libyang.Type.UINT16, libyang.Type.UINT32,
    ):
        return frozenset({"int"})
    if base == libyang.Type.BOOL:
        return frozenset({"bool"})
    if base == libyang.Type.EMPTY:
        return frozenset({"empty"})
    # RFC 7951 puts 64-bit ints and decimal64 in strings (JSON numbers lose precision), like enums and text.
    return frozenset({"str"})


def _type_targets(t: Any, table: str) -> frozenset[str]:
    if t.base() == libyang.Type.UNION:
        return frozenset().union(*(_type_targets(m, table) for m in t.union_types()))
    if t.base() != libyang.Type.LEAFREF:
        return frozenset()
    path = t.leafref_path() or ""
    if not path.startswith("/"):  # relative paths stay inside the table (LOOPBACK_INTERFACE_IPPREFIX_LIST)
        return frozenset({table})
    segs = _split_path(path)
    return frozenset({segs[1].name}) if len(segs) > 1 else frozenset()


def _leaf(sn: Any, table: str) -> _Leaf:
    return _Leaf(
        name=sn.name(),
        kinds=_type_kinds(sn.type()),
        leaf_list=isinstance(sn, libyang.SLeafList),
        mandatory=bool(sn.mandatory()),
        is_key=isinstance(sn, libyang.SLeaf) and sn.is_key(),
        targets=_type_targets(sn.type(), table),
    )


def _node(sn: Any, table: str) -> _Node:
    is_list = isinstance(sn, libyang.SList)
    keys = tuple(_leaf(k, table) for k in sn.keys()) if is_list else ()
    key_names = {k.name for k in keys}
    leaves: dict[str, _Leaf] = {}
    inner_lists = []
    for child in sn.children():
        if isinstance(child, (libyang.SLeaf, libyang.SLeafList)):
            if child.name() not in key_names:
                leaves[child.name()] = _leaf(child, table)
        elif isinstance(child, libyang.SList):
            inner_lists.append(child)
    shape = None
    # sonic_yang_ext keeps a hard-coded list of "Type 1" maps; derive it from the shape instead:
    # only keys plus one inner list of exactly one key leaf and one value leaf.
    if is_list and not leaves and len(inner_lists) == 1:
        inner = inner_lists[0]
        inner_keys = [_leaf(k, table) for k in inner.keys()]
        inner_vals = [_leaf(c, table) for c in inner.children() if isinstance(c, libyang.SLeaf) and not c.is_key()]
        if len(inner_keys) == 1 and len(inner_vals) == 1:
            shape = _MapShape(inner.name(), inner_keys[0], inner_vals[0])
    return _Node(sn.name(), is_list, keys, leaves, shape)


# ----------------------------------------------------------------------------- value typing


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _encode(leaf: _Leaf, value: Any) -> Any:
    text = _scalar_text(value)
    # Anything that does not fit stays a string so libyang reports it instead of us guessing.
    if "int" in leaf.kinds and _INT_RE.fullmatch(text):
        return int(text)
    if "bool" in leaf.kinds and text in ("true", "false"):
        return text == "true"
    if leaf.kinds == frozenset({"empty"}):
        return [None]
    return text


def _encode_field(leaf: _Leaf, value: Any) -> Any:
    if not leaf.leaf_list:
        return _encode(leaf, value)
    if isinstance(value, (list, tuple)):
        items = list(value)
    else:
        # config_db keeps leaf-lists such as profile_list as one comma-joined string.
        items = [p.strip() for p in _scalar_text(value).split(",")] if _scalar_text(value) else []
    return [_encode(leaf, v) for v in items]


def _natural(s: str) -> list[Any]:
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", s) if p]


# ----------------------------------------------------------------------------- libyang paths


@dataclass
class _Seg:
    name: str
    preds: list[tuple[str, str]] = field(default_factory=list)


def _split_path(path: str) -> list[_Seg]:
    """Split a libyang data/schema path; key values may contain '/' (ip-prefix) and quotes."""
    segs: list[_Seg] = []
    i, n = 0, len(path)
    while i < n:
        if path[i] != "/":
            i += 1
            continue
        i += 1
        start = i
        while i < n and path[i] not in "/[":
            i += 1
        seg = _Seg(path[start:i].split(":")[-1])
        while i < n and path[i] == "[":
            i += 1
            eq = path.find("=", i)
            close = path.find("]", i)
            if eq == -1 or (close != -1 and close < eq):  # positional predicate
                i = close + 1 if close != -1 else n
                continue
            name = path[i:eq].strip()
            i = eq + 1
            quote = path[i] if i < n else ""
            if quote in ("'", '"'):
                end = path.find(quote, i + 1)
                end = n if end == -1 else end
                seg.preds.append((name, path[i + 1:end]))
                i = end + 1
            else:
                end = path.find("]", i)
                end = n if end == -1 else end
                seg.preds.append((name, path[i:end]))
                i = end
            if i < n and path[i] == "]":
                i += 1
        segs.append(seg)
    return segs


def _key_of(entry: dict, keys: Iterable[_Leaf]) -> str:
    return "|".join(_scalar_text(entry.get(k.name, "")) for k in keys)


def _matches(entry: dict, preds: list[tuple[str, str]]) -> bool:
    return all(_scalar_text(entry.get(k, "")) == v for k, v in preds)


def _walk(doc: Any, at: tuple) -> Any:
    """Follow ``at`` through a YANG JSON document; libyang prints children without the module prefix."""
    for step in at:
        if isinstance(doc, list):
            doc = doc[step] if isinstance(step, int) and step < len(doc) else None
        elif isinstance(doc, dict):
            doc = doc.get(step, doc.get(str(step).split(":")[-1]))
        else:
            return None
    return doc


@dataclass
class _Loc:
    table: str = ""
    key: str = ""
    where: str = ""  # field inside the entry, when libyang's path goes that deep
    remove: Any = None  # callable that takes the offending part out of the YANG document
    dropped: bool = False  # remove() deletes the whole entry, which other entries may reference
    leaf: _Leaf | None = None  # the leaf libyang's path ends at


# ----------------------------------------------------------------------------- validator


class YangValidator:
    """Loads every module in ``yang_dir`` once; reuse one instance for all devices."""

    def __init__(self, yang_dir: str | Path):
        if libyang is None:
            raise SonicYangUnavailable(
                f"python package 'libyang' is not importable ({_IMPORT_ERROR}); install it with: {INSTALL_HINT}"
            )
        self.yang_dir = Path(yang_dir).resolve()
        files = sorted(self.yang_dir.glob("*.yang")) if self.yang_dir.is_dir() else []
        if not files:
            raise SonicYangUnavailable(
                f"no .yang files in {self.yang_dir}; point it at sonic-buildimage src/sonic-yang-models/yang-models"
            )
        started = time.perf_counter()
        self._ctx = libyang.Context(str(self.yang_dir))
        names = sorted({f.name[: -len(".yang")].split("@")[0] for f in files})
        for name in names:
            try:
                module = self._ctx.load_module(name)
            except libyang.LibyangError as exc:
                raise SonicYangUnavailable(
                    f"cannot load YANG module {name} from {self.yang_dir}: {' '.join(str(exc).split())}"
                ) from exc
            where = module.filepath()
            # libyang also searches $YANGPATH; a stale copy from there would validate against the wrong model.
            if where and Path(where).resolve().parent != self.yang_dir:
                raise SonicYangUnavailable(
                    f"YANG module {name} was loaded from {where}, not {self.yang_dir}; unset YANGPATH"
                )
        self._tables = self._index(names)
        self.load_seconds = time.perf_counter() - started

    @property
    def tables(self) -> frozenset[str]:
        """config_db tables the loaded models describe."""
        return frozenset(self._tables)

    def _index(self, names: list[str]) -> dict[str, _Table]:
        tables: dict[str, _Table] = {}
        for name in names:
            module = self._ctx.get_module(name)
            for top in module.children():
                # SONiC guideline: one top container named after the module, one container per table.
                if not isinstance(top, libyang.SContainer) or top.name() != name or top.config_false():
                    continue
                for tbl in top.children():
                    if not isinstance(tbl, libyang.SContainer) or tbl.config_false():
                        continue
                    nodes = tuple(
                        _node(c, tbl.name()) for c in tbl.children() if isinstance(c, (libyang.SList, libyang.SContainer))
                    )
                    tables.setdefault(tbl.name(), _Table(name, tbl.name(), nodes))
        return tables

    # ------------------------------------------------------------------ translation

    def to_yang_json(self, config_db: dict) -> dict:
        """config_db.json -> libyang JSON (RFC 7951). Parts with no model are left out; validate() reports them."""
        return self._translate(config_db)[0]

    def _translate(self, config_db: dict) -> tuple[dict, list[tuple[str, str, str]]]:
        out: dict[str, dict] = {}
        problems: list[tuple[str, str, str]] = []
        for table_name in sorted(config_db, key=_natural):
            rows = config_db[table_name]
            table = self._tables.get(table_name)
            if table is None:
                problems.append((table_name, "", f"no YANG model for table {table_name}"))
                continue
            if not isinstance(rows, dict):
                problems.append((table_name, "", "table is not a JSON object"))
                continue
            body: dict[str, Any] = {}
            for key in sorted(rows, key=_natural):
                fields = rows[key]
                if not isinstance(fields, dict):
                    problems.append((table_name, key, "entry is not a JSON object"))
                    continue
                parts = key.split("|")
                node = table.node_for_key(parts)
                if node is None:
                    problems.append((
                        table_name, key,
                        f"key has {len(parts)} '|'-separated part(s); no list or container in the {table_name} model matches",
                    ))
                    continue
                entry: dict[str, Any] = {}
                for leaf, part in zip(node.keys, parts, strict=False):
                    entry[leaf.name] = _encode(leaf, part)
                if node.map is not None:
                    shape = node.map
                    entry[shape.inner] = [
                        {shape.key.name: _encode(shape.key, k), shape.value.name: _encode(shape.value, fields[k])}
                        for k in sorted(fields, key=_natural)
                    ]
                else:
                    for fname in sorted(fields, key=_natural):
                        value = fields[fname]
                        # Redis marks list fields 'name@'; an empty hash is stored as NULL=NULL.
                        leaf_name = fname[:-1] if fname.endswith("@") else fname
                        if leaf_name == "NULL" and value == "NULL":
                            continue
                        leaf = node.leaves.get(leaf_name)
                        if leaf is None:
                            if any(k.name == leaf_name for k in node.keys) and _scalar_text(value) in parts:
                                continue
                            problems.append((table_name, key, f"field '{fname}' is not in the YANG model ({node.name})"))
                            continue
                        encoded = _encode_field(leaf, value)
                        if encoded == []:  # an empty leaf-list is an absent leaf-list
                            continue
                        entry[leaf_name] = encoded
                if node.is_list:
                    body.setdefault(node.name, []).append(entry)
                else:
                    body[node.name] = entry
            if body:
                out.setdefault(table.top, {})[table.qualified] = body
        return {top: out[top] for top in sorted(out)}, problems

    # ------------------------------------------------------------------ validation

    def validate(self, config_db: dict, device: str) -> list[YangIssue]:
        """Every problem in config_db, [] when it satisfies the models; ``device`` only labels the issues."""
        doc, problems = self._translate(config_db)
        issues = [YangIssue(device, t, k, m) for t, k, m in problems]
        # Entries taken out to get past an error: a reference to one of them is our doing, not the config's.
        dropped: dict[tuple[str, str], list[int]] = {}
        for _ in range(MAX_ISSUES):
            error = self._parse(doc, validate=True)
            if error is None:
                break
            message, path = error
            loc = self._locate(doc, path)
            ref = _DANGLING_RE.match(message)
            targets = loc.leaf.targets if loc.leaf is not None else frozenset()
            hit = next((dropped[(t, ref.group(1))] for t in targets if ref and (t, ref.group(1)) in dropped), None)
            if hit is not None:
                hit[0] += 1
            else:
                issues.append(YangIssue(device, loc.table, loc.key, f"{loc.where}: {message}" if loc.where else message))
            if loc.remove is None or not loc.remove():
                issues.append(YangIssue(device, loc.table, loc.key, "validation stopped here: fix this issue and re-run"))
                break
            if loc.dropped:
                dropped.setdefault((loc.table, loc.key), [0])
        else:
            issues.append(YangIssue(device, "", "", f"validation stopped after {MAX_ISSUES} libyang issues"))
        for (table, key), (count,) in dropped.items():
            if count:
                issues.append(YangIssue(
                    device, table, key,
                    f"{count} reference(s) to this entry were not checked because the entry itself is invalid",
                ))
        return issues

    def _parse(self, doc: dict, validate: bool) -> tuple[str, str] | None:
        """Parse (and validate) doc; None when clean, else libyang's first error (message, location)."""
        # libyang 2.1 records error paths only while this flag is on, and the Python binding clears it at import.
        lib.ly_set_log_clb(ffi.NULL, True)
        lib.ly_err_clean(self._ctx.cdata, ffi.NULL)
        buf = ffi.new("char[]", json.dumps(doc).encode())
        in_ = ffi.new("struct ly_in **")
        if lib.ly_in_new_memory(buf, in_) != lib.LY_SUCCESS:
            raise MemoryError("libyang could not allocate its input buffer")
        tree = ffi.new("struct lyd_node **")
        parse_opts = lib.LYD_PARSE_STRICT | (0 if validate else lib.LYD_PARSE_ONLY)
        # VALIDATE_PRESENT: ietf-yang-library is always loaded and has mandatory nodes we never send.
        val_opts = lib.LYD_VALIDATE_PRESENT if validate else 0
        try:
            rc = lib.lyd_parse_data(self._ctx.cdata, ffi.NULL, in_[0], lib.LYD_JSON, parse_opts, val_opts, tree)
        finally:
            lib.ly_in_free(in_[0], 0)
            if tree[0] != ffi.NULL:
                lib.lyd_free_all(tree[0])
        first = None
        err = lib.ly_err_first(self._ctx.cdata)
        while err != ffi.NULL:
            if err.level == lib.LY_LLERR and first is None:
                msg = ffi.string(err.msg).decode() if err.msg != ffi.NULL else "libyang error"
                loc = ffi.string(err.path).decode() if err.path != ffi.NULL else ""
                first = (" ".join(msg.split()), loc)
            err = err.next
        lib.ly_err_clean(self._ctx.cdata, ffi.NULL)
        if rc == lib.LY_SUCCESS:
            return None
        return first or (f"libyang failed with code {rc}", "")

    def _locate(self, doc: dict, location: str) -> _Loc:
        """Map libyang's location to the config_db table/key and a way to remove the offending part."""
        m = _DATA_LOC_RE.search(location) or _SCHEMA_LOC_RE.search(location)
        segs = _split_path(m.group(1)) if m else []
        if len(segs) < 2 or segs[1].name not in self._tables:
            return _Loc()
        table = self._tables[segs[1].name]
        body = doc.get(table.top, {}).get(table.qualified)
        if body is None:
            return _Loc(table.name)

        def drop_table() -> bool:
            del doc[table.top][table.qualified]
            return True

        node = table.node(segs[2].name) if len(segs) > 2 else None
        if node is None:
            return _Loc(table.name, remove=drop_table)
        rest = segs[3:]
        if node.is_list:
            rows = body.get(node.name, [])
            wrap = {table.top: {table.qualified: {node.name: []}}}
            entry = self._pick(rows, segs[2].preds, rest, node, wrap, (table.top, table.qualified, node.name))
            if entry is None:
                return _Loc(table.name, "|".join(v for _, v in segs[2].preds))
            key = _key_of(entry, node.keys)

            def drop_entry() -> bool:
                rows.remove(entry)
                return True

        else:
            entry, key = body.get(node.name, {}), node.name

            def drop_entry() -> bool:
                del body[node.name]
                return True

        if not rest:
            return _Loc(table.name, key, "", drop_entry, dropped=True)
        name = rest[0].name
        leaf = node.leaves.get(name) or next((k for k in node.keys if k.name == name), None)
        if node.map is not None and name == node.map.inner:
            inner = entry.get(name, [])
            holder = {k.name: entry[k.name] for k in node.keys}
            holder[name] = []
            wrap = {table.top: {table.qualified: {node.name: [holder]}}}
            item = self._pick(inner, rest[0].preds, rest[1:], None, wrap, (table.top, table.qualified, node.name, 0, name))
            if item is None:
                return _Loc(table.name, key, name, drop_entry, dropped=True)
            shape = node.map
            where = f"{shape.key.name} {_scalar_text(item.get(shape.key.name))}"
            if len(rest) > 1 and rest[1].name != shape.key.name:
                where += f", {rest[1].name}"

            def drop_item() -> bool:
                inner.remove(item)
                return True

            inner_leaf = shape.value if len(rest) > 1 and rest[1].name == shape.value.name else shape.key
            return _Loc(table.name, key, where, drop_item, leaf=inner_leaf)
        if leaf is None or leaf.is_key or leaf.mandatory or name not in entry:
            return _Loc(table.name, key, name, drop_entry, dropped=True, leaf=leaf)
        bad = {v for n, v in rest[0].preds if n == "."}

        def drop_leaf() -> bool:
            values = entry[name]
            if leaf.leaf_list and bad and isinstance(values, list):
                kept = [v for v in values if _scalar_text(v) not in bad]
                if kept and len(kept) < len(values):
                    entry[name] = kept
                    return True
            del entry[name]
            return True

        return _Loc(table.name, key, name, drop_leaf, leaf=leaf)

    def _pick(self, items: list, preds, rest, node: _Node | None, wrap: dict, at: tuple) -> dict | None:
        """The list entry libyang complained about.

        Parse-time errors on a key leaf name the entry only by the keys parsed so far, and a
        mandatory-leaf error carries no data path at all, so several entries may match.
        ``wrap`` is a skeleton document whose list at path ``at`` receives one candidate at a time.
        """
        slot = _walk(wrap, at)
        candidates = [e for e in items if _matches(e, preds)]
        if not candidates and preds:
            # libyang prints canonical values (e.g. 2001:db8::1 for 2001:DB8::0001).
            candidates = [e for e in items if _matches(self._canonical(e, wrap, at), preds)]
        if len(candidates) <= 1:
            return candidates[0] if candidates else None
        if rest and node is not None and not any(s.preds for s in rest):
            leaf = node.leaves.get(rest[0].name)
            missing = [e for e in candidates if rest[0].name not in e]
            if missing and leaf is not None and leaf.mandatory:
                return missing[0]
        # Parse errors stop at the first bad value in document order: the first candidate that
        # fails on its own is the one libyang meant.
        for cand in candidates:
            slot[:] = [cand]
            if self._parse(wrap, validate=False) is not None:
                return cand
        return candidates[0]

    def _canonical(self, entry: dict, wrap: dict, at: tuple) -> dict:
        """entry's values as libyang prints them back."""
        _walk(wrap, at)[:] = [entry]
        try:
            tree = self._ctx.parse_data_mem(json.dumps(wrap), "json", parse_only=True, strict=True)
        except libyang.LibyangError:
            return {}
        if tree is None:
            return {}
        try:
            printed = json.loads(tree.print_mem("json", with_siblings=True))
        finally:
            tree.free()
        found = _walk(printed, at)
        return found[0] if isinstance(found, list) and found and isinstance(found[0], dict) else {}
