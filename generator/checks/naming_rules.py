"""FG407-FG408: the names fabricgen generates (hosts from hosts.name, switches from fabric.name).

Names key the inventory, the output directories (hosts/<name>/, switches/<name>/), DNS
and the hostname each device gets, so each one must be unique and an RFC 1123 label.
Each rule is one function; its docstring is what `fabricgen validate --explain CODE` prints.
"""

from __future__ import annotations

from collections.abc import Iterator

from generator.checks.registry import ERROR, CheckContext, rule
from generator.intent.model import valid_hostname


@rule("FG407", ERROR, "hosts.name gives two hosts the same name", stage="intent")
def host_names_collide(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """hosts.name is a Python format string over n = 1..topology.nodes. A format that drops
    digits ("gpu{n!s:.1}" keeps only the first) or wraps gives two hosts one name. Their
    files then land in one hosts/<name>/ directory, the inventory keeps one of them, and
    the survivor gets the other's addresses: 12 hosts silently become 9. Every n must give
    its own name: include all of n, e.g. gpu{n:03d}."""
    template = ctx.intent.hosts.name
    first: dict[str, int] = {}
    clashes = 0
    example = None
    for n in range(1, ctx.intent.topology.build_out_nodes + 1):   # later phases' names too
        try:
            name = template.format(n=n)
        except Exception:           # the model tried n = 1, 2, 200000; any other failure is FG408's
            continue
        if name in first:
            clashes += 1
            example = example or (name, first[name], n)
        else:
            first[name] = n
    if example:
        name, a, b = example
        yield "hosts.name", (f"{template!r} names host {a} and host {b} both {name!r}: "
                             f"{ctx.intent.topology.build_out_nodes} hosts would share {len(first)} names; "
                             "use every digit of n, e.g. gpu{n:03d}")


@rule("FG408", ERROR, "a generated device name is not a valid host name", stage="plan")
def invalid_device_name(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """Every switch name (<fabric.name>-leaf-..., -spine-..., -super-spine-...) and host
    name (hosts.name for each n) becomes a hostname, a DNS name, an inventory key and a
    directory name, so it must be an RFC 1123 label: 1-63 letters, digits and inner
    dashes, nothing else (no trailing newline, dot or slash). Switch names are the fabric
    name plus a suffix of up to ~20 characters: shorten fabric.name; host names come from
    hosts.name."""
    for sw in ctx.plan.switches:
        if not valid_hostname(sw.name):
            yield "fabric.name", (f"switch name {sw.name!r} is not a valid host name (RFC 1123 label, at most 63 "
                                  "characters): shorten fabric.name")
            break
    seen = set()
    for sw in ctx.plan.switches:
        if sw.name in seen:
            yield "fabric.name", f"two switches are both named {sw.name!r}: choose another fabric.name"
            break
        seen.add(sw.name)
    for host in ctx.plan.hosts:
        if not valid_hostname(host.name):
            yield "hosts.name", (f"host {host.index} gets {host.name!r}, not a valid host name (RFC 1123 label): "
                                 "use e.g. gpu{n:03d}")
            break
