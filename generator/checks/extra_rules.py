"""FG280-FG281: the intent's `extra:` entries (the escape hatch) and what the plan derives.

An entry is merged last, so a key it shares with the rendered config wins: that would silently
overwrite QoS, buffers, addresses or BGP that the plan computes and every other check judged.
FG280 refuses that unless the entry says `override: true`; FG281 says when an entry would do
nothing. What an entry sets is checked against the NVUE object model (FG260) and, with
`--sonic-yang`, the SONiC YANG (FG250) like every rendered key.
"""

from __future__ import annotations

from collections.abc import Iterator

from generator.checks.registry import ERROR, WARNING, CheckContext, rule

# NVUE subtrees the plan derives, with what they hold (render/managed.py DATA_PLANE); planned
# interfaces (and lo, split parents) are added per switch
NVUE_DERIVED: tuple[tuple[tuple[str, ...], str], ...] = (
    (("qos",), "QoS and buffers"),
    (("router",), "BGP and routing policy"),
    (("vrf", "default"), "BGP of the default VRF"),
    (("system", "hostname"), "the hostname"),
)


def _nvue_derived(plan, sw) -> list[tuple[tuple[str, ...], str]]:
    from generator.render.managed import MANAGEMENT

    derived = list(NVUE_DERIVED)
    ports = plan.ports_of(sw.name)
    names = {"lo"} | {p.port for p in ports} | {p.physical for p in ports if p.breakout}
    derived += [(("interface", name), f"interface {name} (addresses, MTU, PFC the plan sets)") for name in sorted(names)]
    # the way in: from `management:`, or the switch's own that every deploy carries over; an entry
    # owning it would replace the switch's accounts, eth0 or sshd (DESIGN: never cut a switch off)
    source = "from `management:`" if plan.management is not None else "the switch's own, kept by every deploy"
    derived += [(path, f"the management plane ({label}, {source})") for path, label in MANAGEMENT]
    return derived


def _sonic_derived(plan) -> dict[str, str]:
    from generator.render.sonic_managed import MANAGEMENT_TABLES, MGMT_PORT_TABLES, OWNED_TABLES

    out = {t: "QoS, buffers, addressing and BGP the plan derives" for t in OWNED_TABLES}
    out |= {"PORT": "the ports the plan sets up", "DEVICE_METADATA": "the switch identity and ASN"}
    out |= {t: "the management port (day-0 material)" for t in MGMT_PORT_TABLES}
    if plan.management is not None:
        out |= {t: "the management plane (from `management:`)" for t in MANAGEMENT_TABLES}
    return out


def _leaves(tree: dict, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, value in tree.items():
        sub = (*path, str(key))
        if isinstance(value, dict) and value:
            yield from _leaves(value, sub)
        else:
            yield sub


def _overlap(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


@rule("FG280", ERROR, "an `extra:` entry overwrites what the plan derives")
def extra_overwrites_plan(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """An `extra:` entry is merged last into the rendered config, so anything it sets wins. Where
    that is config the plan derives - QoS and buffers (`qos`), BGP and routing policy (`router`,
    `vrf default`), the interfaces the plan configures (their addresses, MTU, PFC), the hostname,
    and the management plane (eth0, VRF mgmt, accounts, NTP/DNS/syslog, sshd, the NVUE API: from
    `management:`, or the switch's own that every deploy carries over); on SONiC the tables fabricgen owns (BUFFER_*,
    *_MAP, BGP_*, INTERFACE, PORT, DEVICE_METADATA, ...) - the rendered value would be silently
    replaced by one that no other check judged (headroom, ECN, ECMP, addressing).

    Change the intent key the plan derives it from instead, or, when the value really must
    differ from what the model renders, mark the entry `override: true`: the plan's review
    (`fabricgen plan`) then lists it as an override. An interface the plan does not use (a spare
    port) is not derived and needs no mark."""
    plan = ctx.plan
    if plan is None or not plan.extra:
        return
    from generator.plan.extra import extras_for

    sonic_derived = _sonic_derived(plan) if plan.switch_os == "sonic" else {}
    reported: set[tuple[int, tuple[str, ...]]] = set()
    for sw in plan.switches:
        derived = _nvue_derived(plan, sw) if plan.switch_os == "cumulus" else []
        for entry in extras_for(plan, sw):
            if entry.override:
                continue
            if plan.switch_os == "cumulus":
                for leaf in _leaves(entry.nvue or {}):
                    hit = next(((path, what) for path, what in derived if _overlap(leaf, path)), None)
                    if hit is None:
                        continue
                    key = leaf[:len(hit[0])]
                    if (entry.index, key) in reported:
                        continue
                    reported.add((entry.index, key))
                    yield (f"extra[{entry.index}].nvue.{'.'.join(key)}",
                           f"sets {' '.join(leaf)} on {sw.name}, inside {hit[1]}, which the plan derives: change "
                           "the intent key behind it, or mark this entry `override: true`")
            else:
                for table in entry.sonic or {}:
                    if table in sonic_derived and (entry.index, (table,)) not in reported:
                        reported.add((entry.index, (table,)))
                        yield (f"extra[{entry.index}].sonic.{table}",
                               f"sets config_db {table} on {sw.name}: {sonic_derived[table]}: change the intent "
                               "key behind it, or mark this entry `override: true`")


@rule("FG281", WARNING, "an `extra:` entry changes nothing")
def extra_does_nothing(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """An `extra:` entry whose `match` selects no switch of the plan, or that has no part for the
    fabric's switch OS (`nvue` for Cumulus, `sonic` for SONiC), renders nothing: a typo in a
    device glob or a role, or an entry written for the other OS. Fix the match, or add the part
    for `switch_os.name`."""
    plan = ctx.plan
    if plan is None:
        return
    part = "nvue" if plan.switch_os == "cumulus" else "sonic"
    for entry in plan.extra:
        if not getattr(entry, part):
            yield (f"extra[{entry.index}]", f"has no `{part}` part, and the fabric runs {plan.switch_os}: "
                   f"it renders nothing; add `{part}:`")
        elif not any(entry.matches(sw) for sw in plan.switches):
            yield (f"extra[{entry.index}].match", "selects no switch of the plan: check the role, unit, group, rail "
                   "or device glob")
