"""The topology picture of the report and `capacity -o`: one scalable unit (pod, group) opened up
with its rails in colour, the shared top tier switch by switch with its fan-out, the other
installed units as solid frames and the build-out's as dashed ones, after the one-SU drawings of
NVIDIA's DGX SuperPOD reference architecture ("DGX SuperPOD: Next Generation Scalable
Infrastructure for AI Leadership", compute fabric figures: one SU's rail leaves, "x N SUs").

Counts are picture_model.py's. Device boxes are filled rounded boxes; summary text ("x 2 units
installed", the fan-out) is a label with no box, so it never reads as one more device. Drawn with
matplotlib (as the what-if plots, plots.py): the same picture gives a byte-identical SVG (text kept
as text, element ids for each device, unit and label) and PNG.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

from generator.capacity.picture_model import Picture  # noqa: E402
from generator.capacity.plots import render  # noqa: E402

# the rails' colours (matplotlib's tab10, colour-blind friendlier than a rainbow), cycled past ten
RAIL_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                "#bcbd22", "#17becf")
TOP_FILL, SPINE_FILL, HOST_FILL = "#dbe8d4", "#d9e2f3", "#eeeeee"
LABEL_COLOUR = "#444444"
GLOBAL_COLOUR = "#6a51a3"
TOP_SHOWN = 16              # top-tier switches drawn one by one; more: the first ones and a label
LEGEND_RAILS = 12          # rails in the legend; more: a label
BLOCKS_SHOWN = 8            # other units drawn as frames; more: a label
W, H = 100.0, 62.0
# the SVG's element ids (a device, a unit frame, a label), apart from the report page's own ids
GID_PREFIX = "topo-"          # drawing units; the figure keeps this aspect


def rail_colour(rail: int | None) -> str:
    return "#aaaaaa" if rail is None else RAIL_COLOURS[rail % len(RAIL_COLOURS)]


def _short(p: Picture, name: str) -> str:
    prefix = f"{p.fabric}-"
    return name[len(prefix):] if name.startswith(prefix) else name


class _Canvas:
    def __init__(self) -> None:
        self.fig, self.ax = plt.subplots(figsize=(12, 12 * H / W))
        self.fig.subplots_adjust(0, 0, 1, 1)
        self.ax.set_xlim(0, W)
        self.ax.set_ylim(0, H)
        self.ax.set_axis_off()

    def box(self, gid: str, x: float, y: float, w: float, h: float, text: str, fill: str, *,
            edge: str = "#555555", size: float = 7, text_colour: str = "#000000") -> tuple[float, float, float, float]:
        """A device: filled rounded box, its name inside."""
        patch = FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0,rounding_size=0.6", facecolor=fill,
                               edgecolor=edge, linewidth=0.8)
        patch.set_gid(GID_PREFIX + gid)
        self.ax.add_patch(patch)
        self.ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size, color=text_colour,
                     parse_math=False)
        return x, y, w, h

    def frame(self, gid: str, x: float, y: float, w: float, h: float, dashed: bool) -> None:
        """A unit, pod or group: an unfilled outline, dashed when only the build-out has it."""
        patch = FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0,rounding_size=1.2", facecolor="none",
                               edgecolor="#777777", linewidth=1.0, linestyle=(0, (4, 3)) if dashed else "solid")
        patch.set_gid(GID_PREFIX + gid)
        self.ax.add_patch(patch)

    def label(self, gid: str, x: float, y: float, text: str, *, ha: str = "left", size: float = 8,
              bold: bool = False) -> None:
        """Summary text: no box, italic grey, so it never reads as a device."""
        t = self.ax.text(x, y, text, ha=ha, va="center", fontsize=size, color=LABEL_COLOUR, parse_math=False,
                         style="normal" if bold else "italic", weight="bold" if bold else "normal")
        t.set_gid(GID_PREFIX + gid)

    def line(self, x1: float, y1: float, x2: float, y2: float, colour: str = "#999999", width: float = 0.5,
             dashed: bool = False) -> None:
        self.ax.plot([x1, x2], [y1, y2], color=colour, linewidth=width, linestyle="--" if dashed else "-",
                     solid_capstyle="butt")


def _row(n: int, x0: float, x1: float, max_w: float, gap: float = 0.8) -> list[tuple[float, float]]:
    """(x, width) of N boxes spread over x0..x1."""
    w = min(max_w, (x1 - x0 - gap * (n - 1)) / max(n, 1))
    span = n * w + gap * (n - 1)
    start = x0 + (x1 - x0 - span) / 2
    return [(start + i * (w + gap), w) for i in range(n)]


def draw(p: Picture):
    """The matplotlib figure of P (the caller closes it)."""
    c = _Canvas()
    c.label("label-title", 1, H - 2, f"{p.fabric}: {p.kind}, one {p.word} drawn, rails in colour", bold=True, size=9)
    top_y = H - 15
    tops: list[tuple[float, float]] = []
    if p.top_role:
        names = list(p.top)
        shown = names if len(names) <= TOP_SHOWN else names[:TOP_SHOWN - 1]
        for name, (x, w) in zip(shown, _row(len(shown), 8, W - 8, 7.5), strict=True):
            c.box(f"{p.top_role}-{name}", x, top_y, w, 3.4, _short(p, name), TOP_FILL, size=6)
            tops.append((x + w / 2, top_y))
        if len(shown) < len(names):
            c.label("label-more-top", W - 7.5, top_y + 1.7, f"... x {len(names)} {p.top_role}s", size=7)
        c.label("label-top", 1, top_y + 1.7, f"{len(names)} x {p.top_role}\n{p.top_model}", size=7)
        c.label("label-fanout", W / 2, top_y + 5.6, p.fanout, ha="center", size=7.5)
    # the opened block: block 1
    ox, oy, ow, oh = 2, 3, 58, 37 if p.top_role else 48
    c.frame(f"{p.word}-1", ox, oy, ow, oh, dashed=False)
    c.label("label-open", ox + 1, oy + oh - 1.6, f"{p.word} 1 (installed), device by device", size=7.5)
    u = p.open_unit
    leaf_y = oy + 15
    spine_y = oy + oh - 9
    leaf_at: dict[str, tuple[float, float]] = {}
    for (name, rail), (x, w) in zip(u.leaves, _row(len(u.leaves), ox + 2, ox + ow - 2, 9), strict=True):
        c.box(f"leaf-{name}", x, leaf_y, w, 4, f"{_short(p, name)}\nrail {rail}" if rail is not None
              else _short(p, name), rail_colour(rail), size=5.5, text_colour="#ffffff")
        leaf_at[name] = (x + w / 2, leaf_y)
    spine_at = []
    for name, (x, w) in zip(u.spines, _row(len(u.spines), ox + 8, ox + ow - 8, 9), strict=True):
        c.box(f"spine-{name}", x, spine_y, w, 3.4, _short(p, name), SPINE_FILL, size=6)
        spine_at.append((x + w / 2, spine_y))
    # leaf uplinks: to the block's own spines, else to the shared top tier
    for lx, ly in leaf_at.values():
        for sx, sy in spine_at or tops:
            c.line(lx, ly + 4, sx, sy)
    for sx, sy in spine_at:
        for tx, ty in tops:
            c.line(sx, sy + 3.4, tx, ty)
    # hosts: the first few, their NICs as rail-coloured dots cabled to their rail's leaf
    host_y = oy + 3
    slots = _row(len(u.hosts) + (1 if u.more_hosts else 0), ox + 2, ox + ow - 2, 13, gap=2)
    for (name, nics), (x, w) in zip(u.hosts, slots, strict=False):
        c.box(f"host-{name}", x, host_y, w, 4, name, HOST_FILL, size=6.5)
        for k, (rail, leaf) in enumerate(nics):
            nx = x + (k + 0.5) * w / len(nics)
            c.ax.plot([nx], [host_y + 4], marker="o", markersize=2.5, color=rail_colour(rail))
            if leaf in leaf_at:
                lx, ly = leaf_at[leaf]
                c.line(nx, host_y + 4, lx, ly, colour=rail_colour(rail), width=0.7)
    if u.more_hosts:
        x, w = slots[-1]
        c.label("label-more-hosts", x + w / 2, host_y + 2, f"... {u.more_hosts} more hosts\n(same rails)",
                ha="center", size=7)
    # the other blocks: installed solid, build-out dashed, as frames with their counts
    others = [b for b in p.blocks if b.number != 1]
    shown_blocks = others if len(others) <= BLOCKS_SHOWN else others[:BLOCKS_SHOWN - 1]
    bw, bh = 16.0, 8.0
    for i, b in enumerate(shown_blocks):
        bx, by = 62 + (i % 2) * (bw + 2), oy + oh - bh - (i // 2) * (bh + 2)
        c.frame(f"{p.word}-{b.number}", bx, by, bw, bh, dashed=not b.installed)
        # its uplinks are unit 1's (the fan-out label): lines from every frame would hide the frames
        parts = [f"{b.leaves} leaves", f"{b.hosts} hosts"] + ([f"{b.spines} spines"] if b.spines else [])
        state = "installed" if b.installed else "build-out"
        c.label(f"label-{p.word}-{b.number}", bx + bw / 2, by + bh / 2,
                f"{p.word} {b.number} ({state})\n{', '.join(parts)}", ha="center", size=6.5)
        if p.global_links and spine_at:
            # dragonfly+: each group's spines reach every other group's (global links)
            sx, sy = spine_at[-1]
            c.line(sx, sy + 1.7, bx, by + bh / 2, colour=GLOBAL_COLOUR, width=1.2, dashed=not b.installed)
    extra = len(others) - len(shown_blocks)
    if extra:
        c.label("label-more-blocks", 62, oy + 1.5, f"... {extra} more {p.word}s drawn as these", size=7)
    built = [b for b in p.blocks if not b.installed]
    summary = f"x {p.installed} {p.word}s installed"
    if built:
        summary += f", {len(built)} more in the build-out (dashed)"
    c.label("label-units", 62, oy + oh + 1.5, summary, size=8, bold=True)
    if p.global_links:
        c.label("label-global", 62, oy + oh - (len(shown_blocks) + 1) // 2 * (bh + 2) - 1, p.global_links, size=7)
    # the rails' legend
    for r in range(min(p.rails, LEGEND_RAILS)):
        x = 2 + r * 7
        c.ax.plot([x], [H - 5.5], marker="s", markersize=5, color=rail_colour(r))
        c.label(f"label-rail-{r}", x + 0.8, H - 5.5, f"rail {r}", size=6.5)
    if p.rails > LEGEND_RAILS:
        c.label("label-rail-more", 2 + LEGEND_RAILS * 7, H - 5.5, f"... {p.rails} rails", size=6.5)
    return c.fig


def picture_svg(p: Picture) -> str:
    """The SVG element alone (no XML prolog), classed `topology` so the report scales it to its column."""
    fig = draw(p)
    try:
        svg = render(fig, "svg").decode("utf-8")
    finally:
        plt.close(fig)
    return re.sub(r"^<svg ", '<svg class="topology" ', svg[svg.find("<svg"):], count=1)


def save_picture(p: Picture, directory: str | Path, stem: str = "topology") -> list[Path]:
    fig = draw(p)
    out = []
    try:
        for fmt in ("png", "svg"):
            path = Path(directory) / f"{stem}.{fmt}"
            path.write_bytes(render(fig, fmt))
            out.append(path)
    finally:
        plt.close(fig)
    return out
