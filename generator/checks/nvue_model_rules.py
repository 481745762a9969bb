"""FG260: a rendered NVUE startup.yaml that the release's object model refuses.

The path test (every key a documented `nv set` path) cannot see a bad value; NVUE checks
values too and refuses the whole file on one of them. This rule renders each distinct
switch shape, reads it as NVUE does and checks it against nvueschema's model of the
release (generator.render.nvue_model).
"""

from __future__ import annotations

from collections.abc import Iterator

from generator.checks.registry import ERROR, CheckContext, rule
from generator.plan.model import Port

Finding = Iterator[tuple[str, str]]

# Context keys whose values differ from switch to switch (names, ASNs, addresses, peer ids).
# Two switches whose contexts differ only in the digits of these values render documents of
# the same shape: the model checks every value by its type, enum, range or pattern, and these
# values' types and letters stay the same. Any other value (speeds, MTU, ECN thresholds, profile
# names, flags, the management servers) is part of the shape as it is.
_IDENTITY_KEYS = frozenset({"hostname", "asn", "loopback", "description", "address", "id", "remote_as",
                            "peer", "peer_ip", "router_id", "mgmt_ip"})
_NO_DIGITS = str.maketrans("", "", "0123456789")
_PLAIN = frozenset({str, int, bool, float, type(None)})


def shape_key(context) -> tuple:
    """A key of a switch's render context: every value as it is, except identity values,
    which keep their type and their non-digit characters (`10.0.1.17/31` -> `.../`)."""
    def walk(node, key=None):
        kind = type(node)
        if kind is dict:
            # scalars inline, no call per value: a switch has ~128 interface dicts
            return tuple([(k, (v if k not in _IDENTITY_KEYS or v is None
                               else (type(v).__name__, str(v).translate(_NO_DIGITS)))
                           if type(v) in _PLAIN else walk(v, k))
                          for k, v in node.items()])
        if kind is list or kind is tuple:
            return tuple([walk(v, key) for v in node])
        if key in _IDENTITY_KEYS and node is not None:
            return (kind.__name__, str(node).translate(_NO_DIGITS))
        return node if kind in _PLAIN else (kind.__name__, str(node))
    return walk(context)


def _digits_out(cache: dict[str, str], text: str) -> str:
    out = cache.get(text)
    if out is None:
        out = cache[text] = text.translate(_NO_DIGITS)
    return out


_SEP = "\n"
_F = {name: i for i, name in enumerate(Port._fields)}     # column of each Port field
# the ports' columns switch_context reads: kept as they are / identity values, digit-stripped
_EXACT = tuple(_F[f] for f in ("port", "physical", "breakout", "speed_g", "cable_m", "lossless"))
_NAMES = (_F["peer_device"], _F["peer_port"])
_IP, _PEER_IP, _PEER_ASN = _F["ip"], _F["peer_ip"], _F["peer_asn"]
_NONE = type(None)


def _digits_out_column(column: tuple) -> tuple[tuple[type, ...] | None, str | tuple[str, ...]]:
    """COLUMN's values without their digits: (None, the values joined by _SEP with the digits
    taken out) in C when every value is a string without _SEP in it; else (each value's type, each
    str(value) without digits), value by value (the types tell a None from a "None")."""
    try:
        joined = _SEP.join(column)
        if joined.count(_SEP) == max(len(column) - 1, 0):
            return None, joined.translate(_NO_DIGITS)
    except TypeError:               # a None (an unnumbered port's address) or another non-string
        pass
    return tuple(map(type, column)), tuple([str(v).translate(_NO_DIGITS) for v in column])


def _each(texts: str | tuple[str, ...], n: int) -> tuple[str, ...] | list[str]:
    """The N values of a _digits_out_column result, one by one."""
    return texts if not isinstance(texts, str) else texts.split(_SEP) if n else []


def input_key(plan, sw, stripped: dict[str, str]):
    """A key of what switch_context reads for SW, finer than shape_key: two switches with equal
    input keys have equal shape keys. It holds every per-switch input of switch_context (the
    switch's identity values and each port's fields, identity values digit-stripped as shape_key
    strips them); everything else in the context is plan-wide. Numbered neighbors are sorted by
    address, so their order follows digits: a switch whose neighbor entries are not all alike in
    shape gets a key of its own (its name). Cheap: no context, no walk (issue 14: FG260 built and
    walked ~1,200 dicts per 128-port switch, 5 s at 98k GPUs), and column by column: the ports
    (tuple rows) transposed by zip and each column keyed in C, not port by port."""
    cols = tuple(zip(*plan.ports_of(sw.name), strict=True)) or ((),) * len(_F)
    peer_ips = _digits_out_column(cols[_PEER_IP])
    asn_types = tuple(map(type, cols[_PEER_ASN]))
    ip_types = tuple(map(type, cols[_IP]))
    # numbered neighbors (a peer ASN and an address of their own): all alike, or a key of its own
    peer_ip_types = peer_ips[0] or (str,) * len(asn_types)
    kinds = set(zip(_each(peer_ips[1], len(asn_types)), peer_ip_types, asn_types, ip_types, strict=True))
    if len({k[:3] for k in kinds if k[2] is not _NONE and k[3] is not _NONE}) > 1:
        return ("own", sw.name)
    return (_digits_out(stripped, sw.name), type(sw.asn), _digits_out(stripped, str(sw.asn)),
            _digits_out(stripped, sw.loopback), _digits_out(stripped, sw.mgmt_ip),
            tuple(cols[i] for i in _EXACT), tuple(_digits_out_column(cols[i]) for i in _NAMES),
            _digits_out_column(cols[_IP]), peer_ips, asn_types)


def shape_groups(plan) -> list[list]:
    """The switches grouped by shape_key(switch_context(...)), groups and members in plan
    order. Switches are first grouped by input_key (finer); one context per input group is
    built and walked, and input groups of equal shape are merged."""
    from generator.plan.extra import extras_for
    from generator.render.nvue import switch_context

    stripped: dict[str, str] = {}
    by_input: dict[object, list[int]] = {}
    for i, sw in enumerate(plan.switches):
        # the `extra:` entries a switch gets are part of its document's shape
        extras = tuple(e.index for e in extras_for(plan, sw)) if plan.extra else ()
        by_input.setdefault((extras, input_key(plan, sw, stripped)), []).append(i)
    by_shape: dict[object, list[int]] = {}
    for (extras, _key), members in by_input.items():
        shape = shape_key(switch_context(plan, plan.switches[members[0]]))
        by_shape.setdefault((extras, shape), []).extend(members)
    groups = sorted((sorted(m) for m in by_shape.values()), key=lambda m: m[0])
    return [[plan.switches[i] for i in m] for m in groups]


@rule("FG260", ERROR, "rendered NVUE startup.yaml refused by the release's NVUE object model")
def nvue_values_rejected(ctx: CheckContext) -> Finding:
    """NVUE checks every value of a config against its object model, the OpenAPI schema
    NVIDIA publishes per Cumulus Linux release (NVUE-Object-Model page, "NVUE API" in the
    user guide), and refuses the whole file - `nv set`, `nv config patch`, `nv config replace`
    and the startup file alike - on one bad value or unknown key. A documented path with a
    wrong value still fails: `qos congestion-control <profile> traffic-class <tc> ecn` takes
    `enable|disable`, not `enabled|disabled`, in every 5.x release.

    fabricgen renders each distinct switch shape (switches whose render inputs differ only in
    names, ASNs and addresses share one), reads it as NVUE does (every scalar a string, so
    `on` stays `on`) and validates it against the `nvueschema` package's model of
    `switch_os.version` (pydantic models generated from NVIDIA's OpenAPI spec, 5.0-5.18; a
    newer release is checked against the newest model and says so). A key the model does not
    know is reported too (the models ignore unknown keys; a round trip finds them). Verdicts are
    kept in ~/.cache/fabricgen/nvue-model (FABRICGEN_CACHE_DIR; `off` turns it off), keyed by the
    document, the model and the validating code and libraries, so only new documents pay the
    model's import (~0.75 s).

    Each finding names the switch, the key path in the `set` tree and what the model allows.
    The values come from fabricgen's templates and the intent: change the intent value the
    path points at (e.g. `qos.switch_mtu` for `link mtu`), or pick the Cumulus release the
    value belongs to (`switch_os.version`); a template value the model refuses is a fabricgen
    bug - report it with the finding."""
    plan = ctx.plan
    if plan is None or plan.switch_os != "cumulus" or not plan.switches:
        return
    from generator.render.nvue import render_switch
    from generator.render.nvue_model import model_release
    from generator.render.nvue_model_cache import validate_nvue_cached

    try:
        release = model_release(plan.switch_os_version)
    except ValueError:
        return      # no object model before 5.0 (NVUE's first release): nothing to check against
    version = ".".join(str(v) for v in plan.switch_os_version)
    checked = f"NVUE {release.release} object model" + (f" ({release.note})" if release.note else "")
    for members in shape_groups(plan):
        sw = members[0]
        others = f" (and {len(members) - 1} switch(es) of the same shape)" if len(members) > 1 else ""
        for problem in validate_nvue_cached(render_switch(plan, sw), version):
            entry = _extra_behind(plan, sw, problem.path)
            if entry is not None:
                yield (f"extra[{entry}].nvue.{'.'.join(problem.path)}",
                       f"{sw.name}{others}: {problem.line()} [{checked}]; NVUE refuses the whole file: fix this key "
                       "of the `extra:` entry (NVUE's reference names the keys and values each release takes)")
                continue
            yield ("switch_os.version",
                   f"{sw.name}{others}: startup.yaml {problem.line()} [{checked}]; "
                   "NVUE refuses the whole file: change the intent value behind this key, or report a "
                   "fabricgen template bug")


def _extra_behind(plan, sw, path: tuple[str, ...]) -> int | None:
    """The last `extra:` entry of SW that holds PATH: its value won the merge."""
    if not plan.extra or not path:
        return None
    from generator.plan.extra import extras_for

    found = None
    for entry in extras_for(plan, sw):
        node = entry.nvue or {}
        for key in path:
            if not isinstance(node, dict) or key not in node:
                break
            node = node[key]
        else:
            found = entry.index
    return found
