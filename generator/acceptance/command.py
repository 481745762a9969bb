"""Library side of `fabricgen acceptance` (the CLI only wires flags).

    acceptance INTENT -o DIR          write runs, scripts and expected.json (0, 1)
    acceptance INTENT --results LOG.. judge nccl-tests logs, write measured.json (0, 1, 3)
    acceptance INTENT --burn-in -o DIR  write the ib_write_bw burn-in rounds (burnin.py) (0, 1)
    acceptance INTENT --judge DIR       the burn-in's outputs attributed to cables (burnin_judge.py) (0, 1, 3)
    acceptance INTENT --collectives -o DIR  nccl-tests per collective, bisected when slow (collectives.py) (0, 1)
    acceptance INTENT --judge DIR       (a --collectives DIR) each collective against its bound; the slow
                                        node, rail or unit the bisection runs name (0, 1, 3)

Exit 0 only when every planned run has a log judged as expected: a planned run without a
log is listed `not run` and makes the exit 3, like a run below expectation.

Errors are one line on stderr; exit 1 means nothing could be judged (bad intent, an
unreadable, truncated or foreign log, a log that matches no run) and nothing is written.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

from generator import __version__
from generator.acceptance.compare import DEFAULT_MIN_FRACTION, DEFAULT_MIN_SIZE, compare, not_run
from generator.acceptance.expected import EXPECTED_FILE, Predictor, expected_doc, predictor_for
from generator.acceptance.nccl_log import LogError, parse_log
from generator.acceptance.report import format_tables, measured_doc, measured_json
from generator.acceptance.runs import RunSet, plan_runs
from generator.acceptance.scripts import script_files
from generator.acceptance.writer import OutputRefused, sha256, write_output
from generator.common.atomic_write import write_atomic
from generator.common.errors import FabricgenError
from generator.safe_text import for_terminal

GENERATOR = f"fabricgen {__version__}"
MEASURED_FILE = "measured.json"


class AcceptanceError(FabricgenError):
    def __init__(self, *lines: str):
        super().__init__(lines[0] if lines else "")
        self.lines = list(lines)


def _err(*lines: str) -> None:
    for line in lines:
        print(for_terminal(line), file=sys.stderr)       # log paths and log text are not ours


def _prepare(intent_path: str):
    """(loaded intent, plan, runs, predictor) or AcceptanceError with one line per problem."""
    from generator.capacity.gpus import UnknownGpu
    from generator.checks.runner import run_checks
    from generator.intent.loader import IntentError, load_intent

    try:
        loaded = load_intent(intent_path)
    except IntentError as exc:
        raise AcceptanceError(*(f"error: {p}" for p in exc.problems)) from None
    result = run_checks(loaded)
    if result.errors or result.plan is None:
        raise AcceptanceError(*(f.one_line() for f in result.errors),
                              f"error: {intent_path}: {len(result.errors)} error(s) in the intent; fix them first")
    try:
        predictor = predictor_for(loaded.intent, result.plan)
    except UnknownGpu as exc:
        raise AcceptanceError(f"error: {intent_path}: topology.gpu: {exc}") from None
    runs = plan_runs(result.plan, loaded.intent.topology.gpus_per_node)
    return loaded, result.plan, runs, predictor


def build_files(loaded, plan, runs: RunSet, predictor: Predictor) -> dict[str, str]:
    import json

    files = script_files(plan, runs, GENERATOR)
    doc = expected_doc(plan.fabric, hashlib.sha256(loaded.text.encode()).hexdigest(), runs.runs, runs.skipped,
                       predictor, {rel: sha256(text) for rel, text in files.items()}, GENERATOR)
    files[EXPECTED_FILE] = json.dumps(doc, indent=1) + "\n"
    return files


def run_write(intent_path: str, output: str) -> int:
    try:
        loaded, plan, runs, predictor = _prepare(intent_path)
        files = build_files(loaded, plan, runs, predictor)
        out = write_output(files, output)
    except AcceptanceError as exc:
        _err(*exc.lines)
        return 1
    except OutputRefused as exc:
        _err(f"error: {exc}")
        return 1
    except OSError as exc:
        _err(f"error: {output}: cannot write: {exc.strerror or exc}; check the path and its permissions")
        return 1
    groups = sum(1 for r in runs.runs if r.kind == "rail-group")
    print(f"{plan.fabric}: {groups} rail group run(s) + 1 fabric run, {len(files)} files -> {out}")
    for note in runs.skipped:
        print(f"note: {note}")
    return 0


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)\s*$")


def parse_nccl_size(text: str) -> int:
    """A size as nccl-tests reads -b/-e: K, M, G are binary (src/common.cu parsesize)."""
    m = _SIZE.match(text)
    if not m:
        raise ValueError(f"--min-size {text!r} is not a size: write it as nccl-tests does, e.g. 1G, 512M or 1073741824")
    return int(float(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()])


def run_results(intent_path: str, logs: list[str], *, min_fraction: float = DEFAULT_MIN_FRACTION,
                min_size: int = DEFAULT_MIN_SIZE, measured: str | None = None) -> int:
    try:
        loaded, plan, runs, predictor = _prepare(intent_path)
    except AcceptanceError as exc:
        _err(*exc.lines)
        return 1
    parsed, problems = [], []
    for path in logs:
        try:
            parsed.append(parse_log(path))
        except LogError as exc:
            problems.append(f"error: {exc}")
    if problems:
        _err(*problems)
        return 1
    try:
        results = compare(parsed, runs, predictor, min_fraction=min_fraction, min_size=min_size)
    except LogError as exc:
        _err(f"error: {exc}")
        return 1
    target = Path(measured) if measured else Path(logs[0]).parent / MEASURED_FILE
    missing = not_run(results, runs)
    doc = measured_doc(plan.fabric, results, predictor, min_fraction, min_size)
    doc["not_run"] = [run.id for run in missing]     # planned runs no log was given for
    try:
        write_atomic(target, measured_json(doc))
    except OSError as exc:
        _err(f"error: {target}: cannot write the measured points: {exc.strerror or exc}; give --measured FILE")
        return 1
    sys.stdout.write(format_tables(results, min_fraction))
    for run in missing:
        print(f"not run: {run.id}: {run.nodes} nodes, {run.ranks} ranks: no log given; run it with the generated "
              f"script and pass logs/{run.id}.log to --results")
    print(for_terminal(f"measured points -> {target}"))
    # DESIGN: the exit is 3 unless every planned run was judged as expected
    return 0 if not missing and all(r.ok for r in results) else 3


def run_burnin(intent_path: str, output: str) -> int:
    from generator.acceptance.burnin_command import BurninRefused, burnin_files, write_burnin

    try:
        loaded, plan, _runs, predictor = _prepare(intent_path)
        files, rounds, notes = burnin_files(loaded, plan, predictor.efficiency, GENERATOR)
        out = write_burnin(files, output)
    except AcceptanceError as exc:
        _err(*exc.lines)
        return 1
    except BurninRefused as exc:
        _err(f"error: {exc}")
        return 1
    except OSError as exc:
        _err(f"error: {output}: cannot write: {exc.strerror or exc}; check the path and its permissions")
        return 1
    pairs = sum(len(r.pairs) for r in rounds)
    print(f"{plan.fabric}: {len(rounds)} burn-in round(s), {pairs} ib_write_bw pair(s), {len(files)} files -> {out}")
    for note in notes:
        print(for_terminal(f"note: {note}"))
    return 0


def run_judge(intent_path: str, directory: str, min_fraction: float | None = None) -> int:
    from generator.acceptance.burnin_judge import JudgeError, PerftestError
    from generator.acceptance.burnin_judge import run_judge as judge

    try:
        loaded, _plan, _runs, _predictor = _prepare(intent_path)
        if (Path(directory) / "collectives.json").is_file() and not (Path(directory) / "burnin.json").is_file():
            code, lines = judge_collectives(loaded.text, directory)
        else:
            code, lines = judge(loaded.text, directory, *([] if min_fraction is None else [min_fraction]))
    except AcceptanceError as exc:
        _err(*exc.lines)
        return 1
    except (JudgeError, PerftestError, LogError) as exc:
        _err(f"error: {exc}")
        return 1
    for line in lines:
        print(for_terminal(line))
    return code


def run_collectives(intent_path: str, output: str) -> int:
    """`acceptance INTENT --collectives -o DIR`: collectives.sh and collectives.json (collectives.py)."""
    import json

    from generator.acceptance import collectives
    from generator.acceptance.scripts import nccl_env, per_host_keys, rendered_nccl_conf

    try:
        loaded, plan, runs, predictor = _prepare(intent_path)
        differ = per_host_keys(plan)
        env = [(k, v) for k, v in nccl_env(rendered_nccl_conf(plan)) if k not in differ]
        files = collectives.files(loaded, plan, runs, predictor, env, GENERATOR)
        out = Path(output)
        if out.exists() and (not out.is_dir() or (any(out.iterdir())
                                                  and not (out / collectives.SCHEDULE_FILE).is_file())):
            raise AcceptanceError(f"error: {out} is not empty and holds no {collectives.SCHEDULE_FILE}: give a new "
                                  "or empty directory to -o; nothing written")
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(out / "collectives.sh", files["collectives.sh"], mode=0o755)
        write_atomic(out / collectives.SCHEDULE_FILE, files[collectives.SCHEDULE_FILE])
    except AcceptanceError as exc:
        _err(*exc.lines)
        return 1
    except OSError as exc:
        _err(f"error: {output}: cannot write: {exc.strerror or exc}; check the path and its permissions")
        return 1
    doc = json.loads(files[collectives.SCHEDULE_FILE])
    print(f"{plan.fabric}: {len(doc['collectives'])} collectives, {len(doc['collectives'][0]['runs']) - 1} "
          f"bisection run(s) each when slow -> {out}")
    return 0


def judge_collectives(intent_text: str, directory: str) -> tuple[int, list[str]]:
    """(exit code, lines) for a DIR written by --collectives; raises JudgeError / LogError."""
    import json

    from generator.acceptance import collectives
    from generator.acceptance.burnin_judge import JudgeError

    path = Path(directory) / collectives.SCHEDULE_FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise JudgeError(f"{path}: unreadable ({exc}); write it again with --collectives -o") from None
    if not isinstance(doc, dict) or doc.get("schema") != collectives.SCHEMA:
        raise JudgeError(f"{path}: not a fabricgen collectives schedule; write it again with --collectives -o")
    if doc.get("intent_sha256") != hashlib.sha256(intent_text.encode()).hexdigest():
        raise JudgeError(f"{path}: written from another intent than the one given: judge with that intent")
    lines, findings = collectives.judge(Path(directory), doc)
    return (3 if findings else 0), lines
