"""Plain-text and Markdown rendering of an Analysis (same content, two table styles)."""

from __future__ import annotations

from generator.capacity.analyze import Analysis
from generator.capacity.cost import MODEL
from generator.capacity.growth import bom_pairs, role_counts, top_tier_note
from generator.capacity.naive import WHY, guide_ms
from generator.capacity.whatif import Variant
from generator.intent.units import format_ratio


def fmt_bytes(n: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:,.3g} {unit}" if n < 100 * size else f"{n / size:,.0f} {unit}"
    return f"{n} B"


def fmt_time(s: float) -> str:
    if s >= 1:
        return f"{s:,.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:,.2f} ms"
    return f"{s * 1e6:,.1f} us"


def fmt_pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.1f} %"


def table(headers: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def sections(a: Analysis, what_ifs: list[list[Variant]]) -> list[tuple[str, list[str], list[list[str]], str]]:
    """(title, headers, rows, note) per section, shared by text, Markdown and HTML."""
    f, ar = a.figures, a.allreduce
    chosen = ar.chosen
    out = []
    gpu = f"{a.gpu.name}{' (assumed: topology.gpu not set)' if a.gpu_assumed else ''}"
    out.append(("Fabric", ["figure", "value"], [
        ["topology", f"{a.plan.kind}, {f.nodes} nodes x {f.gpus_per_node} {gpu} = {f.gpus} GPUs"],
        ["rails x NIC speed", f"{f.rails} x {f.nic_speed_g}G"],
        ["injection per node", f"{f.per_node_gbps:,} Gb/s"],
        ["injection per GPU", f"{f.per_gpu_gbps:,.0f} Gb/s"],
        ["oversubscription (intent)", format_ratio(a.intent.topology.oversubscription)],
        *[[f"oversubscription at {role}", f"{ratio:.2f}:1"] for role, ratio in f.oversubscription.items()],
        ["switch hops host to host", f"{f.hops_min} to {f.hops_max}"],
        ["bisection bandwidth", f"{a.bisection_gbps / 1000:,.1f} Tb/s"],
    ], ""))
    if a.build_out is not None:
        out.append(build_out_section(a))
    out.append(("Switches", ["tier", "model", "count", "ports used", "ports free"], [
        [s.role, s.model, str(s.count), f"{s.ports_used:,} / {s.ports_total:,}", f"{s.ports_free:,}"]
        for s in f.switches], f"ports counted at {f.nic_speed_g}G, after breakout"))
    out.append((f"All-reduce of {fmt_bytes(ar.message_bytes)} ({a.message_source})",
                ["algorithm", "time", "algbw GB/s", "busbw GB/s", "latency", "NCCL"], [
        [e.algorithm + (" <- likely NCCL choice" if e is chosen else ""), fmt_time(e.time_s),
         f"{e.algbw_GBps:,.1f}", f"{e.busbw_GBps:,.1f}", fmt_time(e.latency_s),
         "yes" if e.nccl_candidate else "no (shown for comparison)"] for e in ar.estimates],
        f"node injection {ar.node_injection_GBps:,.1f} GB/s = {f.rails} x {f.nic_speed_g}G x "
        f"{ar.efficiency:.2f} achievable (nccl-tests calibration); busbw = algbw x 2(n-1)/n, n = {f.gpus}"))
    naive = a.naive
    ratio = chosen.time_s / naive.time_s if naive.time_s else float("inf")
    mode = "the guide's assumption (GPUs x NIC / 2)" if a.naive_guide else "the plan's bisection"
    out.append(("Naive estimate (bytes x 8 / bisection)", ["figure", "value"], [
        ["naive time", fmt_time(naive.time_s) + (f" (the field guide's example; it prints {guide_ms(naive.time_s)} ms)"
                                                 if naive.guide_example else "")],
        ["worked", naive.worked()],
        ["bisection used", f"{naive.bisection_gbps / 1000:,.2f} Tb/s, {mode}"],
        ["all-reduce model", f"{fmt_time(chosen.time_s)} ({chosen.algorithm})"],
        ["model / naive", f"{ratio:,.1f} x"],
    ], WHY))
    if a.step is not None:
        s = a.step
        rows = []
        shares = [("no overlap", s.share_no_overlap), ("with overlap", s.share_overlap)]
        if s.overlap is not None:
            shares.append((f"{s.overlap:.0%} overlap (workload.comm_overlap)", s.share_at(s.overlap)))
        for label, share in shares:
            usd = s.usd_lost(share)
            rows.append([label, fmt_pct(share), f"{s.gpu_hours_lost(share):,.0f}",
                         "-" if usd is None else f"${usd:,.0f}"])
        out.append((f"Communication cost per step ({fmt_time(s.compute_s)} compute, {fmt_time(s.comm_s)} all-reduce)",
                    ["schedule", "comm share", "GPU-hours lost / month", "cost / month"], rows,
                    f"{s.gpus} GPUs running 730 h a month; model: {MODEL} (no overlap: after the backward "
                    "pass; with overlap: hidden behind it as far as compute lasts)"))
    out.append(("Bill of materials", ["category", "item", "detail", "quantity"],
                [[b.category, b.item, b.detail, f"{b.quantity:,}"] for b in a.bom], ""))
    for what_if in what_ifs:
        if not what_if:
            continue
        rows = []
        for v in what_if:
            if v.analysis is None:
                rows.append([str(v.value), "does not build", "-", "-", "-", "-", v.error or ""])
                continue
            c = v.analysis.allreduce.chosen
            st = v.analysis.step
            rows.append([str(v.value), fmt_time(c.time_s), f"{c.busbw_GBps:,.1f}", c.algorithm,
                         fmt_pct(st.share_no_overlap if st else None), fmt_pct(st.share_overlap if st else None),
                         f"{v.analysis.bisection_gbps / 1000:,.1f} Tb/s, {len(v.analysis.plan.switches)} switches"])
        out.append((f"What if {what_if[0].key}", ["value", "all-reduce", "busbw GB/s", "algorithm",
                                                  "comm share", "with overlap", "fabric"], rows, ""))
    return out


def _step_cost(a: Analysis) -> str:
    s = a.step
    if s is None:
        return "-"
    usd = s.usd_lost(s.share_no_overlap)
    hours = f"{s.gpu_hours_lost(s.share_no_overlap):,.0f} GPU-h"
    return hours if usd is None else f"${usd:,.0f} ({hours})"


def build_out_section(a: Analysis) -> tuple[str, list[str], list[list[str]], str]:
    """Installed | build-out, side by side: the same figures of the two plans."""
    full = a.build_out
    assert full is not None
    f, g = a.figures, full.figures
    rows = [["nodes", f"{f.nodes:,}", f"{g.nodes:,}"], ["GPUs", f"{f.gpus:,}", f"{g.gpus:,}"]]
    mine, theirs = role_counts(a), role_counts(full)
    for role, model in [*theirs, *(k for k in mine if k not in theirs)]:
        rows.append([f"{role} switches ({model})", f"{mine.get((role, model), 0):,}",
                     f"{theirs.get((role, model), 0):,}"])
    rows.append(["switches total", f"{len(a.plan.switches):,}", f"{len(full.plan.switches):,}"])
    for line, have, total in bom_pairs(a, ("nic-port", "transceiver", "cable", "fibre")):
        detail = "" if line.category == "nic-port" else f", {line.detail}"
        rows.append([f"{line.category}: {line.item}{detail}", f"{have:,}", f"{total:,}"])
    rows.append(["bisection bandwidth", f"{a.bisection_gbps / 1000:,.1f} Tb/s",
                 f"{full.bisection_gbps / 1000:,.1f} Tb/s"])
    c, d = a.allreduce.chosen, full.allreduce.chosen
    rows.append([f"all-reduce of {fmt_bytes(a.allreduce.message_bytes)}", f"{fmt_time(c.time_s)} ({c.algorithm})",
                 f"{fmt_time(d.time_s)} ({d.algorithm})"])
    rows.append(["busbw", f"{c.busbw_GBps:,.1f} GB/s", f"{d.busbw_GBps:,.1f} GB/s"])
    if a.step is not None and full.step is not None:
        rows.append(["communication cost / month (no overlap)", _step_cost(a), _step_cost(full)])
    return (f"Installed vs build-out ({f.nodes:,} of {g.nodes:,} nodes)", ["figure", "installed", "build-out"],
            rows, top_tier_note(a))


def render_text(a: Analysis, what_ifs: list[list[Variant]], markdown: bool = False, advice=None) -> str:
    """ADVICE (generator.capacity.advise.Advice): its suggestions as a last section, one row each."""
    parts = []
    title = f"fabricgen capacity: {a.plan.fabric}"
    parts.append(f"# {title}" if markdown else title)
    for name, headers, rows, note in sections(a, what_ifs):
        parts.append(f"\n## {name}\n" if markdown else f"\n{name}")
        parts.append(table(headers, rows, markdown))
        if note:
            parts.append(f"\n{note}" if markdown else note)
    if advice is not None:
        from generator.capacity.advise_text import ADVICE_HEADERS, ADVICE_NOTE, advice_summary

        parts.append("\n## Design advice\n" if markdown else "\nDesign advice")
        parts.append(table(ADVICE_HEADERS, advice_summary(advice), markdown) if advice.suggestions else "none")
        parts.append(f"\n{ADVICE_NOTE}" if markdown else ADVICE_NOTE)
    return "\n".join(parts) + "\n"
