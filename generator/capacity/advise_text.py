"""`fabricgen advise` as text or markdown, and its short form for `capacity` and the report."""

from __future__ import annotations

from generator.capacity.advise import Advice, Suggestion, yaml_value
from generator.capacity.text import table
from generator.plan.compile import DAC_MAX_M


def layout_line(advice: Advice) -> str:
    r = advice.runs
    lay = r.layout
    where = ("stated defaults, no layout: in the intent (write yours there)" if r.stated else "layout: in the intent")
    return (f"layout: {where}: {lay.servers_per_rack} servers per rack, {lay.racks_per_row} racks per row, "
            f"{lay.rack_width_m:g} m racks, {lay.row_pitch_m:g} m row pitch, {lay.rise_m:g} m rise, leaves "
            f"{lay.leaf_rack}, spines in a row of their own")


def runs_line(advice: Advice) -> str:
    r = advice.runs
    spine = f", leaf-spine {r.leaf_spine_max:g} m" if r.leaf_spine else ""
    return (f"longest runs: host-leaf {r.host_leaf_max:g} m ({r.host_leaf_within(DAC_MAX_M)} of {len(r.host_leaf)} "
            f"servers within the {DAC_MAX_M:g} m DAC reach){spine}")


def _suggestion(i: int, s: Suggestion, markdown: bool) -> list[str]:
    rules = f" ({', '.join(s.rules)})" if s.rules else ""
    head = f"### {i}. [{s.kind}] {s.title}{rules}" if markdown else f"{i}. [{s.kind}] {s.title}{rules}"
    out = [head, "", s.why, "", table(["figure", "now", "with the change"], [list(r) for r in s.rows], markdown)]
    if s.bom_delta:
        out += ["", f"BOM difference ({s.bom_scope}):",
                table(["category", "item", "now", "with the change"],
                      [[c, item, f"{a:,}", f"{b:,}"] for c, item, a, b in s.bom_delta], markdown)]
    snippet = s.yaml()
    out += ["", "apply (intent change):"]
    out += (["```yaml", snippet.rstrip("\n"), "```"] if markdown
            else ["    " + line for line in snippet.rstrip("\n").splitlines()])
    return out + [""]


def render_advice(advice: Advice, markdown: bool = False) -> str:
    title = f"fabricgen advise: {advice.fabric}"
    out = [f"# {title}" if markdown else title, "", layout_line(advice), runs_line(advice), ""]
    if not advice.suggestions:
        out += ["no suggestions: the intent already takes the advice fabricgen knows how to give", ""]
    for i, s in enumerate(advice.suggestions, start=1):
        out += _suggestion(i, s, markdown)
    if advice.speeds:
        out += ["## NIC speed and breakout options" if markdown else "NIC speed and breakout options (not advice)",
                table(["nic_speed", "leaf cage split", "switches at build-out", "bisection Tb/s", "all-reduce ms"],
                      [[f"{o.nic_speed_g}G", o.breakout, "-" if o.switches_build_out is None else str(o.switches_build_out),
                        "-" if o.bisection_tbps is None else f"{o.bisection_tbps:g}",
                        o.error or f"{o.allreduce_ms:g}"] for o in advice.speeds], markdown),
                "apply one with topology.nic_speed: <speed> (the NICs must run it too)", ""]
    return "\n".join(out).rstrip("\n") + "\n"


ADVICE_HEADERS = ["#", "kind", "suggestion", "intent change"]
ADVICE_NOTE = "fabricgen advise INTENT shows each suggestion's figures side by side and its BOM difference"


def advice_summary(advice: Advice) -> list[list[str]]:
    """One row per suggestion, for the `capacity` section and the report: rank, kind, title, change."""
    return [[str(i), s.kind, s.title, "; ".join(f"{p}: {'(delete)' if v is None else yaml_value(v)}" for p, v in s.change)]
            for i, s in enumerate(advice.suggestions, start=1)]
