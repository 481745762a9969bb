"""`fabricgen report`: one self-contained HTML file (inline SVG, inline CSS, no
script, no external URL) with the topology, capacity tables, plots, BOM and the
validation findings. Opens from a USB stick on an air-gapped bastion."""

from __future__ import annotations

import html
from pathlib import Path

from generator.capacity.analyze import Analysis
from generator.capacity.diagram import topology_svg
from generator.capacity.picture import picture_svg
from generator.capacity.picture_model import has_blocks, picture_of
from generator.capacity.plots import what_if_svg
from generator.capacity.text import fmt_time, sections
from generator.capacity.whatif import Variant
from generator.common.atomic_write import write_atomic
from generator.intent.loader import LoadedIntent

_CSS = """
body{font-family:"DejaVu Sans",Arial,sans-serif;margin:24px auto;max-width:1100px;color:#222;font-size:14px}
h1{font-size:22px;margin-bottom:4px} h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}
.sub{color:#555} table{border-collapse:collapse;margin:8px 0} td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f2f2f2} td.num{text-align:right} .note{color:#555;font-size:12px;max-width:900px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:14px 0}
.card{border:1px solid #bbb;border-radius:6px;padding:8px 14px;min-width:170px;background:#fafafa}
.card .v{font-size:20px;font-weight:bold} .card .k{font-size:12px;color:#555}
.card.bad .v{color:#b03a2e} svg.topology{max-width:100%;height:auto} .plot svg{max-width:100%;height:auto}
.error{color:#b03a2e} .warning{color:#9a6700}
"""


def _e(text: object) -> str:
    return html.escape(str(text))


def _table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cards(a: Analysis) -> str:
    c = a.allreduce.chosen
    ratio = c.time_s / a.naive.time_s if a.naive.time_s else float("inf")
    cards = [
        ("bisection-tbps", f"{a.bisection_gbps / 1000:,.1f} Tb/s", "bisection bandwidth", ""),
        ("allreduce-time", fmt_time(c.time_s), f"all-reduce of {a.allreduce.message_bytes / 1e9:g} GB ({c.algorithm})", ""),
        ("busbw", f"{c.busbw_GBps:,.1f} GB/s", "predicted nccl-tests busbw", ""),
        ("naive-time", fmt_time(a.naive.time_s), f"naive bytes x 8 / bisection ({ratio:,.0f}x too optimistic)", "bad"),
    ]
    if a.step is not None:
        cards.append(("comm-share", f"{a.step.share_no_overlap * 100:.0f} %", "communication share of a step (data-parallel all-reduce, no overlap)", ""))
    return '<div class="cards">' + "".join(
        f'<div class="card {cls}" id="{cid}"><div class="v">{_e(v)}</div><div class="k">{_e(k)}</div></div>'
        for cid, v, k, cls in cards) + "</div>"


def _build_out_sub(a: Analysis) -> str:
    """Names the build-out size in the header line with topology.build_out; nothing otherwise."""
    return "" if a.build_out is None else f" (installed phase of a {a.build_out.figures.nodes}-node build-out)"


def _findings(loaded: LoadedIntent) -> str:
    try:
        from generator.checks.runner import run_checks
    except ImportError:
        # HOOK: validation findings appear here once generator.checks.runner exists
        return '<p class="note">Validation hook: generator.checks.runner is not available in this build.</p>'
    result = run_checks(loaded)
    if not result.findings:
        return '<p id="findings-none">No findings: every rule passed.</p>'
    rows = [[f.severity, f.code, f.path, f.message, f.location()] for f in result.findings]
    head = "".join(f"<th>{h}</th>" for h in ("severity", "code", "path", "message", "where"))
    body = "".join("<tr>" + "".join(
        f'<td class="{_e(r[0])}">{_e(c)}</td>' if i == 0 else f"<td>{_e(c)}</td>" for i, c in enumerate(r)) + "</tr>"
        for r in rows)
    return f'<table id="findings"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _advice(advice) -> list[str]:
    """The suggestions of `fabricgen advise`, each with its figures and the YAML that applies it."""
    from generator.capacity.advise_text import layout_line, runs_line

    out = ['<h2 id="advice">Design advice</h2>', f'<p class="note">{_e(layout_line(advice))}; {_e(runs_line(advice))}</p>']
    if not advice.suggestions:
        out.append("<p>none: the intent already takes the advice fabricgen knows how to give</p>")
    for i, s in enumerate(advice.suggestions, start=1):
        out.append(f'<h3 class="suggestion">{i}. [{_e(s.kind)}] {_e(s.title)}</h3><p>{_e(s.why)}</p>')
        out.append(_table(["figure", "now", "with the change"], [list(r) for r in s.rows]))
        if s.bom_delta:
            out.append(_table([f"BOM ({s.bom_scope})", "item", "now", "with the change"],
                              [[c, item, f"{x:,}", f"{y:,}"] for c, item, x, y in s.bom_delta]))
        out.append(f'<pre class="change">{_e(s.yaml())}</pre>')
    return out


def _topology(a: Analysis) -> tuple[str, str]:
    """(svg, note): the one-unit picture when the plan has units, pods or groups, else the device
    graph (every device up to 40, else tier boxes)."""
    if has_blocks(a.plan):
        p = picture_of(a.plan, a.build_out.plan if a.build_out is not None else None)
        return picture_svg(p), (f"{p.word} 1 drawn device by device with its rails in colour; the other "
                                f"{p.word}s as frames with their counts (dashed: in the build-out, not installed)")
    svg, engine = topology_svg(a.plan)
    drawn = "every device" if len(a.plan.switches) + len(a.plan.hosts) <= 40 else \
        "one box per tier with counts, one unit expanded"
    return svg, f"drawn with {'Graphviz dot' if engine == 'graphviz' else 'the built-in layout'}; {drawn}"


def render_html(loaded: LoadedIntent, a: Analysis, what_ifs: list[list[Variant]], advice=None) -> str:
    svg, note = _topology(a)
    f = a.figures
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             # no network at all: a strict CSP makes any accidental fetch a visible console error
             "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
             "img-src data:\">",
             f"<title>fabricgen report: {_e(a.plan.fabric)}</title><style>{_CSS}</style></head><body>",
             f"<h1>fabricgen report: {_e(a.plan.fabric)}</h1>",
             f'<div class="sub">{_e(a.plan.description or a.plan.kind)} &middot; {f.nodes} nodes, {f.gpus} GPUs, '
             f"{f.rails} x {f.nic_speed_g}G rails{_build_out_sub(a)} &middot; intent {_e(loaded.file)}</div>",
             _cards(a),
             "<h2>Topology</h2>",
             f'<div class="note">{_e(note)}</div>',
             svg]
    for title, headers, rows, note in sections(a, what_ifs):
        parts.append(f"<h2>{_e(title)}</h2>")
        parts.append(_table(headers, rows))
        if note:
            parts.append(f'<p class="note">{_e(note)}</p>')
        if title.startswith("What if"):
            key = title.removeprefix("What if ").strip()
            rows_for = next((w for w in what_ifs if w and w[0].key == key), None)
            if rows_for and any(v.analysis is not None for v in rows_for):
                parts.append(f'<div class="plot">{_svg_body(what_if_svg(rows_for))}</div>')
    if advice is not None:
        parts += _advice(advice)
    parts.append("<h2>Validation findings</h2>")
    parts.append(_findings(loaded))
    parts.append('<p class="note">All-reduce model: alpha-beta with NIC efficiency calibrated on published '
                 "nccl-tests figures (NVIDIA/nccl-tests#119, #290) and NCCL's tuner latencies; see docs/capacity.md.</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _svg_body(svg: str) -> str:
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def write_report(loaded: LoadedIntent, a: Analysis, what_ifs: list[list[Variant]], output: str,
                 advice=None) -> Path:
    path = Path(output)
    write_atomic(path, render_html(loaded, a, what_ifs, advice))
    return path
