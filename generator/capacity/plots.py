"""What-if plots: all-reduce time and communication share against the varied value.

Deterministic output: the Agg backend, a fixed SVG hash salt, and no date/creator
metadata, so the same rows give byte-identical PNG and SVG (reviewable in git).
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from generator.capacity.whatif import Variant  # noqa: E402

_RC = {
    "svg.hashsalt": "fabricgen",
    "svg.fonttype": "none",          # text stays text: searchable in the report's DOM
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
}
_SVG_META = {"Date": None, "Creator": "fabricgen", "Format": None, "Type": None}
_PNG_META = {"Software": "fabricgen"}


def _numeric(values: list) -> list[float] | None:
    out = []
    for v in values:
        text = str(v).strip().upper().rstrip("G")
        if ":" in text:
            down, _, up = text.partition(":")
            text = str(float(down) / float(up)) if up else text
        try:
            out.append(float(text))
        except ValueError:
            return None
    return out


def what_if_figure(rows: list[Variant]):
    ok = [r for r in rows if r.analysis is not None]
    key = rows[0].key if rows else ""
    labels = [str(r.value) for r in ok]
    times = [r.analysis.allreduce.chosen.time_s for r in ok]
    shares = [r.analysis.step.share_no_overlap * 100 if r.analysis.step else None for r in ok]
    shares_ov = [r.analysis.step.share_overlap * 100 if r.analysis.step else None for r in ok]
    with plt.rc_context(_RC):
        fig, (ax_t, ax_s) = plt.subplots(1, 2, figsize=(8.0, 3.0), dpi=100, layout="constrained")
        xs = _numeric(labels)
        positions = xs if xs is not None else list(range(len(labels)))
        if xs is None:
            ax_t.bar(positions, times, color="#3b6ea8")
        else:
            ax_t.plot(positions, times, marker="o", color="#3b6ea8")
        ax_t.set_xticks(positions, labels)
        ax_t.set_ylabel("all-reduce time (s)")
        ax_t.set_xlabel(key)
        ax_t.set_ylim(bottom=0)
        ax_t.set_title("all-reduce time")
        if any(s is not None for s in shares):
            ax_s.plot(positions, [s or 0 for s in shares], marker="o", color="#c0504d", label="no overlap")
            ax_s.plot(positions, [s or 0 for s in shares_ov], marker="s", color="#9bbb59", label="with overlap")
            ax_s.legend(loc="best")
        else:
            ax_s.text(0.5, 0.5, "no workload.step_compute_ms", ha="center", va="center", transform=ax_s.transAxes)
        ax_s.set_xticks(positions, labels)
        ax_s.set_ylim(0, 100)
        ax_s.set_ylabel("communication share of a step (%)")
        ax_s.set_xlabel(key)
        ax_s.set_title("communication share")
    return fig


def render(fig, fmt: str) -> bytes:
    buf = io.BytesIO()
    with plt.rc_context(_RC):
        fig.savefig(buf, format=fmt, metadata=_SVG_META if fmt == "svg" else _PNG_META)
    return buf.getvalue()


def save_what_if(rows: list[Variant], directory: str | Path, stem: str) -> list[Path]:
    fig = what_if_figure(rows)
    out = []
    try:
        for fmt in ("png", "svg"):
            path = Path(directory) / f"{stem}.{fmt}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(render(fig, fmt))
            out.append(path)
    finally:
        plt.close(fig)
    return out


def what_if_svg(rows: list[Variant]) -> str:
    fig = what_if_figure(rows)
    try:
        return render(fig, "svg").decode("utf-8")
    finally:
        plt.close(fig)
