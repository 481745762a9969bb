"""Library side of `fabricgen capacity` and `fabricgen report` (the CLI only wires flags).

`run_capacity(...) -> int` prints to stdout and returns 0, or prints one line per
problem to stderr and returns 1 (unreadable intent, unknown GPU, message size that does
not parse, --what-if key not in the intent, unknown --format).

JSON shape (`--format json`, schema "fabricgen.capacity/1"; keys are only ever added):

    {"schema": "fabricgen.capacity/1", "fabric": str, "kind": str,
     "gpu": {"model": str, "assumed": bool, "nvlink_GBps": float, "nvls": bool},
     "nodes": int, "gpus": int, "gpus_per_node": int, "rails": int, "nic_speed_gbps": int,
     "injection": {"per_gpu_gbps": float, "per_node_gbps": int},
     "switches": [{"role", "model", "count", "ports_total", "ports_used", "ports_free"}],
     "oversubscription": {"intent": "1:1", "per_tier": {"leaf": 1.0, "spine": 1.0}},
     "hops": {"min": int, "max": int},
     "bisection_tbps": float,
     "allreduce": {"message_bytes": int, "message_source": str, "algorithm": str,
                   "time_s": float, "algbw_GBps": float, "busbw_GBps": float,
                   "node_injection_GBps": float, "nic_efficiency": float,
                   "algorithms": [{"algorithm", "time_s", "algbw_GBps", "busbw_GBps",
                                   "latency_s", "busbw_ceiling_GBps", "nccl_candidate"}]},
     "step": null | {"compute_s", "comm_s", "gpus", "hours_per_month",
                     "no_overlap": {"comm_share", "gpu_hours_lost_per_month", "usd_lost_per_month"},
                     "overlap": {...same keys...}, "model": str,
                     "intent_overlap": {"overlap", ...same keys...}},   # only with workload.comm_overlap
     "naive": {"time_s": float, "bisection_tbps": float, "efficiency": 0.7, "guide_mode": bool,
               "guide_example": bool, "ratio": float, "worked": str, "why_wrong": str},
     "bom": [{"category": "switch|nic-port|transceiver|cable|fibre", "item", "detail", "quantity"}],
     "build_out": {"nodes": int, "installed_nodes": int, "top_tier": str | null, "note": str,
                   "installed": PHASE, "full": PHASE},   # only with topology.build_out != nodes
     "what_if": [{"key", "value", "ok", "error", "algorithm", "time_s", "busbw_GBps", "algbw_GBps",
                  "bisection_tbps", "naive_time_s", "switches", "comm_share_no_overlap",
                  "comm_share_overlap"}],
     "plots": [paths written under -o DIR],
     "advice": [...as `fabricgen advise --format json` "suggestions"]}

PHASE (installed: the compiled plan, top tier in full; full: the build-out plan):
    {"nodes": int, "gpus": int, "switch_count": int,
     "switches": [...as "switches"], "bom": [...as "bom"], "bisection_tbps": float,
     "allreduce": {"algorithm", "time_s", "algbw_GBps", "busbw_GBps"}, "step": null | {...as "step"}}
Every top-level figure is the installed fabric's (phase 1); `bom.csv` under -o DIR is
the installed BOM, `bom-build-out.csv` the build-out's.

`allreduce.algorithm/time_s/algbw_GBps/busbw_GBps` are the algorithm NCCL would most
likely pick; `naive.time_s` is the field guide's formula (`--naive`: with the guide's own
bisection assumption, GPUs x NIC / 2, which reproduces its 140 GB / 256 GPUs / 200 Gb/s
= 62 ms example); `naive.guide_example` is true for that example only, the one intent whose
text quotes the guide's printed figure.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from generator import __version__
from generator.capacity.analyze import Analysis, analyze
from generator.capacity.gpus import UnknownGpu
from generator.capacity.shape import capacity_json
from generator.capacity.text import render_text
from generator.capacity.whatif import Variant, WhatIfError, load_base_data, run_what_if
from generator.common.errors import FabricgenError
from generator.intent.loader import IntentError, LoadedIntent, load_intent
from generator.intent.units import parse_size
from generator.plan.bom import bom_csv
from generator.plan.topology import CompileError
from generator.render.output import OutputError, check_target

FORMATS = ("text", "json", "markdown")


class CapacityInputError(FabricgenError):
    """Bad input; each line of `lines` is printed as is on stderr."""

    def __init__(self, *lines: str):
        super().__init__(lines[0] if lines else "")
        self.lines = list(lines)


def parse_message_size(text: str) -> int:
    """Bytes from 140GB, 1GiB, 1000000 or 1.4e11 (decimal units as elsewhere in the intent)."""
    try:
        return parse_size(text.strip())
    except ValueError:
        pass
    if re.fullmatch(r"\s*\d+(\.\d+)?[eE]\+?\d+\s*", text):
        value = float(text)
        if value == int(value):
            return int(value)
    raise CapacityInputError(f"--message-size {text!r} is not a size: write e.g. 140GB (1 GB = 1e9 B), "
                             "1GiB, 1.4e11 or a number of bytes")


def _load(intent_path: str) -> LoadedIntent:
    try:
        return load_intent(intent_path)
    except IntentError as exc:
        raise CapacityInputError(*[str(p) for p in exc.problems]) from None


def _where(loaded: LoadedIntent, path: str) -> str:
    line = loaded.line_of(path)
    return f"{loaded.file}:{line}" if line else loaded.file


def build(loaded: LoadedIntent, message_size: str | None, what_if: list[str], naive: bool
          ) -> tuple[Analysis, list[list[Variant]]]:
    size = parse_message_size(message_size) if message_size is not None else None
    try:
        analysis = analyze(loaded.intent, size, naive_guide=naive, with_build_out=True)
    except UnknownGpu as exc:
        raise CapacityInputError(f"{_where(loaded, 'topology.gpu')}: topology.gpu: {exc}") from None
    except CompileError as exc:
        raise CapacityInputError(f"{_where(loaded, exc.path)}: {exc.path}: {exc.message}") from None
    rows = []
    base = load_base_data(loaded.text)
    for spec in what_if:
        try:
            rows.append(run_what_if(base, spec, size, naive_guide=naive))
        except WhatIfError as exc:
            raise CapacityInputError(str(exc)) from None
    return analysis, rows


def _write_outputs(loaded: LoadedIntent, analysis: Analysis, rows: list[list[Variant]], output_dir: str) -> list[str]:
    """Write -o DIR as render writes its output (render/output.py): DIR new, empty or an earlier
    `capacity -o` output (its manifest.json lists what it wrote), replaced whole; a directory
    holding anything else (a vendor's bom.csv) is refused untouched (issue 34 finding 7)."""
    import hashlib

    from generator.capacity.picture import save_picture
    from generator.capacity.picture_model import has_blocks, picture_of
    from generator.capacity.plots import save_what_if
    from generator.render.output import MANIFEST, _replace_atomically

    names: list[str] = []

    def fill(tmp: Path) -> None:
        (tmp / "bom.csv").write_text(bom_csv(analysis.bom), encoding="utf-8")
        names.append("bom.csv")
        if analysis.build_out is not None:
            (tmp / "bom-build-out.csv").write_text(bom_csv(analysis.build_out.bom), encoding="utf-8")
            names.append("bom-build-out.csv")
        if has_blocks(analysis.plan):
            full = analysis.build_out.plan if analysis.build_out is not None else None
            names.extend(p.name for p in save_picture(picture_of(analysis.plan, full), tmp))
        for variants in rows:
            if variants and any(v.analysis is not None for v in variants):
                stem = "what-if-" + re.sub(r"[^a-z0-9]+", "-", variants[0].key.lower()).strip("-")
                names.extend(p.name for p in save_what_if(variants, tmp, stem))
        hashes = {name: hashlib.sha256((tmp / name).read_bytes()).hexdigest() for name in names}
        manifest = {"command": "capacity", "fabric": loaded.intent.fabric.name, "files": hashes,
                    "generator": f"fabricgen {__version__}",
                    "intent_sha256": hashlib.sha256(loaded.text.encode()).hexdigest()}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")

    _replace_atomically(output_dir, fill, command="capacity")
    return [str(Path(output_dir) / name) for name in names]


def run_capacity(intent_path: str, *, message_size: str | None, what_if: list[str], fmt: str, naive: bool,
                 output_dir: str | None) -> int:
    try:
        if fmt not in FORMATS:
            raise CapacityInputError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")
        if output_dir:
            check_target(output_dir, "capacity")     # before any work: a wrong -o is one line, nothing touched
        loaded = _load(intent_path)
        analysis, rows = build(loaded, message_size, list(what_if or []), naive)
    except CapacityInputError as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        return 1
    except OutputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if output_dir:
        try:
            written = _write_outputs(loaded, analysis, rows, output_dir)
        except OutputError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    else:
        written = []
    advice = _advice(loaded, analysis)
    if fmt == "json":
        doc = capacity_json(analysis, rows, written)
        doc["advice"] = [s.as_dict() for s in advice.suggestions]
        sys.stdout.write(json.dumps(doc, indent=2, sort_keys=False) + "\n")
    else:
        sys.stdout.write(render_text(analysis, rows, markdown=fmt == "markdown", advice=advice))
        if written:
            sys.stdout.write("\nwritten: " + ", ".join(written) + "\n")
    return 0


def _advice(loaded: LoadedIntent, analysis: Analysis):
    """The suggestions of `fabricgen advise` for the capacity section and the report (no speed table)."""
    from generator.capacity.advise import advise

    return advise(analysis, load_base_data(loaded.text), with_speeds=False)


def run_report(intent_path: str, output: str) -> int:
    from generator.capacity.report import write_report

    try:
        loaded = _load(intent_path)
        analysis, rows = build(loaded, None, _default_what_ifs(loaded), False)
    except CapacityInputError as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        return 1
    path = write_report(loaded, analysis, rows, output, _advice(loaded, analysis))
    print(f"wrote {path}")
    return 0


def _default_what_ifs(loaded: LoadedIntent) -> list[str]:
    """The report's sweeps: NIC speeds and rails around the intent's own values."""
    speeds = sorted({200, 400, 800, loaded.intent.topology.nic_speed})
    rails = sorted({1, 2, 4, 8, loaded.intent.topology.rails})
    return ["nic_speed=" + ",".join(f"{s}G" for s in speeds), "rails=" + ",".join(str(r) for r in rails)]


def run_advise(intent_path: str, fmt: str) -> int:
    """`fabricgen advise`: 0 with the advice on stdout (none to give is not an error), 1 on bad input."""
    from generator.capacity.advise import advise
    from generator.capacity.advise_text import render_advice

    try:
        if fmt not in FORMATS:
            raise CapacityInputError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")
        loaded = _load(intent_path)
        analysis, _ = build(loaded, None, [], False)
    except CapacityInputError as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        return 1
    advice = advise(analysis, load_base_data(loaded.text))
    if fmt == "json":
        sys.stdout.write(json.dumps(advice.as_dict(), indent=2) + "\n")
    else:
        sys.stdout.write(render_advice(advice, markdown=fmt == "markdown"))
    return 0
