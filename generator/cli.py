"""fabricgen command line: thin wrappers that parse arguments, call library
functions and set exit codes (0 ok, 1 error, 2 usage, 3 changes/drift)."""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from generator import __version__
from generator.cli_config import use_config_file
from generator.cli_options import (
    CONTEXT,
    EndpointsOpt,
    LimitOpt,
    ReportOpt,
    VersionOpt,
    alias,
    format_option,
    printed_to,
    renamed,
    word_types,
)
from generator.sot.command import sot_app

app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False, context_settings=CONTEXT)
lab_app = typer.Typer(no_args_is_help=True, help="Simulated switches on loopback for tests and demos.")
app.add_typer(lab_app, name="lab")
lock_app = typer.Typer(no_args_is_help=True, help="The fabric's deploy lock (generator/deploy/lock.py).")
app.add_typer(lock_app, name="lock")
hosts_app = typer.Typer(no_args_is_help=True, help="GPU servers: what they have (playbooks/discover.yml).")
app.add_typer(hosts_app, name="hosts")
app.add_typer(sot_app, name="sot")

IntentArg = Annotated[str, typer.Argument(help="path of the intent (fabric.yaml)", show_default=False)]


@app.callback()
def _main(version: VersionOpt = False) -> None:
    """One reviewed YAML intent -> a lossless RoCEv2 GPU fabric.

    Defaults come from fabricgen.toml beside the intent, or the file $FABRICGEN_CONFIG names.
    """


def _err(line: str) -> None:
    typer.echo(line, err=True)


def _load(path: str):
    """LoadedIntent, or print one line per problem and exit 1."""
    from generator.intent.loader import IntentError, load_intent

    try:
        return load_intent(path)
    except IntentError as exc:
        for problem in exc.problems:
            _err(f"error: {problem}")
        raise typer.Exit(1) from None


def _check(path: str, *, quiet_warnings: bool = False):
    from generator.checks.runner import run_checks

    loaded = _load(path)
    result = run_checks(loaded)
    return loaded, result


def _print_findings(result, stream_err: bool) -> None:
    for f in result.findings:
        (_err if stream_err else typer.echo)(f.one_line())


def _summary(result) -> str:
    return f"{len(result.errors)} error(s), {len(result.warnings)} warning(s)"


@app.command()
def validate(
    intent: Annotated[list[str] | None, typer.Argument(help="intent file(s)", show_default=False)] = None,
    fmt: Annotated[str, format_option("table", "json", table="text")] = "table",
    explain: Annotated[str | None, typer.Option("--explain", help="explain a rule code, e.g. FG201")] = None,
    sonic_yang: Annotated[str | None, typer.Option("--sonic-yang", help="SONiC YANG model dir: validate config_db")] = None,
    output: ReportOpt = None,
) -> None:
    """Load, compile and check an intent; exit 1 on any error."""
    with printed_to(output):
        _validate(intent, fmt, explain, sonic_yang)


def _validate(intent: list[str] | None, fmt: str, explain: str | None, sonic_yang: str | None) -> None:
    from generator.checks.registry import RULES
    from generator.checks.runner import load_rules

    if explain:
        load_rules()
        rule = RULES.get(explain.upper())
        if rule is None:
            _err(f"error: unknown rule code {explain!r}: codes are {', '.join(sorted(RULES))}")
            raise typer.Exit(1)
        typer.echo(f"{rule.code} ({rule.severity}): {rule.title}\n\n{rule.explanation}")
        return
    if not intent:
        _err("error: give an intent file, e.g. fabricgen validate inventories/medium/fabric.yaml")
        raise typer.Exit(2)
    failed = False
    reports = []
    for path in intent:
        from generator.checks.runner import run_checks
        from generator.intent.loader import IntentError, load_intent

        try:
            loaded = load_intent(path)
        except IntentError as exc:
            failed = True
            if fmt == "json":
                reports.append({"intent": path, "ok": False, "findings": [
                    {"code": p.code, "severity": "error", "path": p.path, "message": p.message,
                     "file": p.file, "line": p.line} for p in exc.problems]})
            else:
                for p in exc.problems:
                    typer.echo(f"error: {p}")
            continue
        result = run_checks(loaded)
        findings = list(result.findings)
        if sonic_yang and result.plan is not None and not result.errors:
            findings += _sonic_yang_findings(result.plan, sonic_yang)
        errors = [f for f in findings if f.severity == "error"]
        failed |= bool(errors)
        if fmt == "json":
            reports.append({"intent": path, "ok": not errors, "findings": [f.as_dict() for f in findings]})
        else:
            for sev in ("error", "warning"):
                for f in findings:
                    if f.severity == sev:
                        typer.echo(f.one_line())
            typer.echo(f"{path}: {len(errors)} error(s), {len(findings) - len(errors)} warning(s)"
                       + ("" if errors else " - ok"))
    if fmt == "json":
        typer.echo(json.dumps(reports if len(reports) > 1 else reports[0], indent=1))
    raise typer.Exit(1 if failed else 0)


def _sonic_yang_findings(plan, yang_dir: str) -> list:
    from generator.checks.registry import ERROR, Finding
    from generator.render.sonic_check import yang_findings

    if plan.switch_os != "sonic":
        return []
    return [Finding("FG250", ERROR, "switch_os", msg) for msg in yang_findings(plan, yang_dir)]


@app.command()
def render(
    intent: IntentArg,
    output: Annotated[str, typer.Option("-o", "--output", help="output directory: new, empty or an earlier render (replaced atomically)")],
    sonic_yang: Annotated[str | None, typer.Option("--sonic-yang", help="SONiC YANG model dir: validate config_db")] = None,
) -> None:
    """Validate, then render every file into OUTPUT atomically."""
    from generator.render.output import OutputError, check_target, write_render
    from generator.render.stream import worker_count

    started = time.perf_counter()
    try:
        check_target(output)        # before any work: a wrong -o is one line, nothing touched
        workers = worker_count()    # FABRICGEN_WORKERS, else the usable CPUs
    except (OutputError, ValueError) as exc:
        _err(f"error: {exc}")
        raise typer.Exit(1) from None
    loaded, result = _checked_or_exit(intent)
    if sonic_yang:
        problems = _sonic_yang_findings(result.plan, sonic_yang)
        if problems:
            for f in problems:
                _err(f.one_line())
            _err(f"error: {intent}: SONiC YANG validation failed; nothing written")
            raise typer.Exit(1)
    plan = result.plan
    # rendered and written over the CPUs, never whole in memory (issue 14); same bytes as render_files
    out, file_count = write_render(plan, loaded.text, output, workers)
    roles = Counter(s.role for s in plan.switches)
    tiers = ", ".join(f"{n} {r}" for r, n in sorted(roles.items()))
    typer.echo(f"{plan.fabric}: {plan.kind}, {len(plan.switches)} switches ({tiers}), {len(plan.hosts)} hosts, "
               f"{len(plan.links)} links, {file_count} files -> {out} "
               f"({len(result.warnings)} warning(s), {time.perf_counter() - started:.2f} s)")


def _checked_or_exit(intent: str):
    """(loaded, result) of an intent that passes every check, its warnings printed; else the
    findings, one summary line and exit 1 (nothing is written by the caller)."""
    loaded, result = _check(intent)
    if result.errors or result.plan is None:
        _print_findings(result, True)
        _err(f"error: {intent}: {_summary(result)}; nothing written")
        raise typer.Exit(1)
    for f in result.warnings:
        _err(f.one_line())
    return loaded, result


@app.command()
def day0(
    intent: IntentArg,
    output: Annotated[str, typer.Option("-o", "--output", help="kit directory: new, empty or an earlier kit (replaced atomically)")],
    url: Annotated[str, typer.Option("--url", help="where DIR/http/ will be served, e.g. http://192.168.0.2:8080")],
    inventory: Annotated[str | None, typer.Option("--inventory", help="CSV name,serial,mac: eth0's MAC per switch "
                                                  "(and management NIC per GPU server)")] = None,
    dhcp_interface: Annotated[str, typer.Option("--dhcp-interface",
                                                help="the interface Kea answers on (facing the switches' eth0)")] = "eth0",
) -> None:
    """The bring-up kit: DIR/kea-dhcp4.json (DHCP reservations: MAC -> planned address, hostname, ZTP URL)
    and DIR/http/ to serve at URL (ZTP scripts, the rendered switch files, manifest.json)."""
    import os

    from generator.day0.inventory import EMPTY, InventoryError, load_inventory
    from generator.day0.kit import KitError, build_kit, check_interface, write_kit
    from generator.day0.urls import UrlError, check_base_url
    from generator.devices.credentials import PASSWORD_ENV
    from generator.render.output import OutputError, check_target

    try:
        check_base_url(url)
        check_interface(dhcp_interface)
    except (UrlError, KitError) as exc:
        _err(f"error: {exc}")
        raise typer.Exit(2) from None
    try:
        check_target(output)        # before any work: a wrong -o is one line, nothing touched
    except OutputError as exc:
        _err(f"error: {exc}")
        raise typer.Exit(1) from None
    loaded, result = _checked_or_exit(intent)
    plan = result.plan
    try:
        inv = EMPTY if inventory is None else load_inventory(inventory, plan)
        kit = build_kit(plan, loaded.text, inv, url, dhcp_interface, os.environ.get(PASSWORD_ENV) or None)
        for line in kit.warnings:
            print(line, file=sys.stderr)
        out = write_kit(kit, output)
    except (InventoryError, KitError, OutputError) as exc:
        _err(f"error: {exc}; nothing written")
        raise typer.Exit(1) from None
    served = sum(1 for rel in kit.files if rel.startswith("http/"))
    typer.echo(f"{plan.fabric}: day-0 kit for {len(plan.switches)} {plan.switch_os} switches: {kit.reservations} "
               f"DHCP reservation(s) in {out / 'kea-dhcp4.json'}, {served} files in {out / 'http'} to serve at "
               f"{url.rstrip('/')}/")


OnlyOpt = Annotated[str | None, typer.Option("--only", help="switches | hosts")]


def _only(value: str | None) -> str | None:
    if value not in (None, "switches", "hosts"):
        _err(f"error: --only {value!r}: use switches or hosts")
        raise typer.Exit(2)
    return value


@app.command()
def plan(
    intent: IntentArg,
    against: Annotated[str, typer.Option("--against", help="git ref (e.g. origin/main) or a rendered directory")],
    fmt: Annotated[str, format_option("table", "markdown", "json", table="text")] = "table",
    output: ReportOpt = None,
    out: Annotated[str | None, typer.Option(
        "--out", metavar="PLANFILE", help="also save the reviewed plan (candidates, hashes) for `deploy --plan`")] = None,
    endpoints: EndpointsOpt = None,
    full: Annotated[bool, typer.Option(
        "--full", help="--format table: every diff line (above 400 lines it prints each group's files and sizes)")] = False,
) -> None:
    """Per-device diff of what INTENT renders against a git ref or a rendered directory (exit 3 on changes).

    --out PLANFILE saves it for `deploy --plan` (with --endpoints: each switch's running-config hash too).
    """
    from generator.gitops.plan import report_errors, report_text, run_plan

    if endpoints is not None and out is None:
        _err("error: plan: --endpoints is read only to pin the switches' running configs in --out PLANFILE; "
             "add --out")
        raise typer.Exit(2)
    with printed_to(output):
        report = run_plan(intent, against=against, fmt=fmt, full=full)
        text = report_text(report)
        if text is not None:
            print(text)
        for line in report_errors(report):
            print(line, file=sys.stderr)
        code = report.exit_code
        if out is not None and code != 1:       # a plan that could not be made saves nothing
            from generator.gitops.plan_out import save_plan

            code = 1 if save_plan(intent, out, endpoints) else code
        raise typer.Exit(code)


@app.command()
def deploy(
    intent: IntentArg,
    endpoints: EndpointsOpt = None,
    only: OnlyOpt = None,
    limit: LimitOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="diff only; hosts in --check --diff")] = False,
    diff: Annotated[bool, typer.Option("--diff", help="print every switch's full diff")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="do not ask for confirmation")] = False,
    accept_new_host_keys: Annotated[bool, typer.Option("--accept-new-host-keys",
                                                       help="trust SSH host keys on first contact")] = False,
    provision: Annotated[bool, typer.Option(
        "--provision", help="SONiC day 0: full config_db + config reload (switches fresh from ZTP)")] = False,
    plan_file: Annotated[str | None, typer.Option(
        "--plan", metavar="PLANFILE", help="push exactly this saved plan (`plan --out`); refused when the intent, "
                                           "the render, fabricgen or a switch moved since")] = None,
    day0: Annotated[bool, typer.Option(
        "--day0", help="drop the rail and spine-pair waves: refused unless every switch shows no traffic "
                       "evidence read from the device (not with --limit)")] = False,
) -> None:
    """Push in waves with commit-confirm; roll back and stop on the first failed wave."""
    from rich.console import Console

    from generator.deploy.rollout import run_deploy
    from generator.deploy.rollout_report import ConsolePresenter

    # Piped output (CI logs, tests) gets a width that fits the wave table on one line per wave.
    console = ConsolePresenter(
        Console(file=sys.stdout, highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 120),
        Console(file=sys.stderr, highlight=False, soft_wrap=True))
    run = run_deploy(intent, endpoints=endpoints, only=_only(only), limit=limit, dry_run=dry_run, yes=yes,
                     accept_new_host_keys=accept_new_host_keys, provision=provision, show_diff=diff,
                     plan_file=plan_file, day0=day0, presenter=console)
    raise typer.Exit(console.finish(run))


@app.command()
def drift(
    intent: IntentArg,
    endpoints: EndpointsOpt = None,
    only: OnlyOpt = None,
    limit: LimitOpt = None,
    fmt: Annotated[str, format_option("table", "json", "prometheus", "markdown")] = "table",
    output: ReportOpt = None,
) -> None:
    """Compare every device with the intent: exit 0 in sync, 3 drift, 1 could not check."""
    from generator.drift.command import drift_stdout, run_drift

    run = run_drift(intent, endpoints=endpoints, only=_only(only), fmt=fmt, output=output, limit=limit)
    print(drift_stdout(run), end="")
    for line in run.problems:
        print(line, file=sys.stderr)
    raise typer.Exit(run.exit_code)


@app.command()
def verify(
    intent: IntentArg,
    endpoints: EndpointsOpt = None,
    only: OnlyOpt = None,
    limit: LimitOpt = None,
    fmt: Annotated[str, format_option("table", "json", "junit", "prometheus")] = "table",
    output: ReportOpt = None,
    interval: Annotated[float, typer.Option("--interval", help="seconds between the two counter reads")] = 5.0,
    settle: Annotated[float, typer.Option("--settle", help="seconds a BGP session may still be connecting")] = 30.0,
    pfc_threshold: Annotated[float, typer.Option("--pfc-threshold",
                                                 help="pause frames/s per priority before a finding")] = 100.0,
    ecn_threshold: Annotated[float, typer.Option("--ecn-threshold",
                                                 help="ECN-marked packets/s per port before a finding")] = 1000.0,
    prefix_tolerance: Annotated[float, typer.Option("--prefix-tolerance",
                                                    help="accepted deviation of BGP prefix counts (fraction)")] = 0.1,
    soak: Annotated[str | None, typer.Option("--soak", help="watch the switches' error counters for this long "
                                             "(90s, 15m, 2h), reading every --interval")] = None,
) -> None:
    """The built fabric against the plan: cabling (LLDP), links, BGP, error/PFC/ECN counters, host RoCE.

    Exit 0 all passed, 3 findings, 1 could not check.
    """
    from generator.verify.command import run_soak, run_verify, soak_stdout, verify_stdout

    if soak is not None:
        run = run_soak(intent, duration=soak, interval_s=interval, endpoints=endpoints, limit=limit, fmt=fmt,
                       output=output)
        stdout = soak_stdout(run)
    else:
        from rich.console import Console

        run = run_verify(intent, endpoints=endpoints, only=_only(only), fmt=fmt, output=output, limit=limit,
                         interval_s=interval, settle_s=settle, pfc_threshold=pfc_threshold,
                         ecn_threshold=ecn_threshold, prefix_tolerance=prefix_tolerance,
                         progress=Console(stderr=True))
        stdout = verify_stdout(run)
    print(stdout, end="")
    for line in run.problems:
        print(line, file=sys.stderr)
    raise typer.Exit(run.exit_code)


@app.command()
def capacity(
    intent: IntentArg,
    message_size: Annotated[str | None, typer.Option("--message-size", help="all-reduce size, e.g. 140GB")] = None,
    what_if: Annotated[list[str] | None, typer.Option("--what-if", help="KEY=V1,V2,... (repeatable)")] = None,
    fmt: Annotated[str, format_option("table", "json", "markdown", table="text")] = "table",
    naive: Annotated[bool, typer.Option("--naive", help="also show the bytes/bisection estimate in detail")] = False,
    output: Annotated[str | None, typer.Option("-o", "--output", help="directory for the plots and BOM CSV")] = None,
    output_dir: Annotated[str | None, alias("--output-dir")] = None,
) -> None:
    """Bandwidth, all-reduce time, cost and bill of materials from the plan."""
    from generator.capacity.command import run_capacity

    output = renamed(output, output_dir, "-o/--output", "--output-dir")
    raise typer.Exit(run_capacity(intent, message_size=message_size, what_if=what_if or [], fmt=fmt, naive=naive,
                                  output_dir=output))


@app.command()
def advise(
    intent: IntentArg,
    fmt: Annotated[str, format_option("table", "json", "markdown", table="text")] = "table",
) -> None:
    """Design advice: unit size, cable media from the rack layout, spines now or later, speeds."""
    from generator.capacity.command import run_advise

    raise typer.Exit(run_advise(intent, fmt))


@app.command()
def report(
    intent: IntentArg,
    output: Annotated[str, typer.Option("-o", "--output", help="HTML file to write")],
) -> None:
    """One self-contained HTML report: topology, capacity, BOM, findings."""
    from generator.capacity.command import run_report

    raise typer.Exit(run_report(intent, output))


@app.command()
def acceptance(
    paths: Annotated[list[str], typer.Argument(
        help="INTENT, then (with --results) more nccl-tests logs: --results a.log b.log works", show_default=False)],
    output: Annotated[str | None, typer.Option("-o", "--output", help="write the run scripts and expected.json here")] = None,
    results: Annotated[list[str] | None, typer.Option("--results", help="nccl-tests log(s) to judge")] = None,
    min_fraction: Annotated[float, typer.Option("--min-fraction", min=0.0, max=1.0,
                                                help="fail a row below this share of the predicted busbw")] = 0.85,
    min_size: Annotated[str, typer.Option("--min-size", help="judge rows of at least this size (nccl-tests units)")] = "1G",
    measured: Annotated[str | None, typer.Option("--measured", help="measured points JSON (default: beside the first log)")] = None,
    burn_in: Annotated[bool, typer.Option("--burn-in", help="with -o: write pairwise ib_write_bw rounds instead")] = False,
    judge: Annotated[str | None, typer.Option("--judge", help="a burn-in DIR: attribute its outputs to cables; "
                                              "a --collectives DIR: name the slow node or rail")] = None,
    collectives: Annotated[bool, typer.Option("--collectives", help="with -o: write nccl-tests runs of every "
                                              "collective, bisected when below bound")] = False,
    snapshot: Annotated[str | None, typer.Option("--snapshot", help="write every switch's interface counters to "
                                                 "this JSON file (the burn-in takes one around each round)")] = None,
    endpoints: EndpointsOpt = None,
) -> None:
    """nccl-tests after bring-up: -o DIR writes the runs and expected busbw; --results LOG... judges the logs
    (exit 0 every planned run as expected, 3 below expectation, corrupt or not run, 1 unreadable)."""
    from generator.acceptance.command import parse_nccl_size, run_burnin, run_judge, run_results, run_write

    intent, extra = paths[0], paths[1:]
    if snapshot is not None:
        if output is not None or extra or results is not None or burn_in or judge is not None or collectives:
            _err("error: --snapshot FILE reads the switches' counters: give INTENT --snapshot FILE [--endpoints E] alone")
            raise typer.Exit(2)
        from generator.acceptance.snapshot import take_snapshot

        raise typer.Exit(take_snapshot(intent, snapshot, endpoints))
    if judge is not None:
        if output is not None or extra or results is not None or burn_in or collectives:
            _err("error: --judge DIR judges a burn-in or collectives DIR: give INTENT --judge DIR alone")
            raise typer.Exit(2)
        raise typer.Exit(run_judge(intent, judge))   # a pair below 95 % of its rate (attribution.py)
    if collectives:
        if output is None or extra or results is not None or burn_in:
            _err("error: --collectives writes the collective runs: give INTENT --collectives -o DIR")
            raise typer.Exit(2)
        from generator.acceptance.command import run_collectives

        raise typer.Exit(run_collectives(intent, output))
    if burn_in:
        if output is None or extra or results is not None:
            _err("error: --burn-in writes the burn-in rounds: give INTENT --burn-in -o DIR")
            raise typer.Exit(2)
        raise typer.Exit(run_burnin(intent, output))
    if results is None:
        if output is None or extra:
            _err("error: give -o DIR (write the runs) or --results LOG... (judge nccl-tests logs)")
            raise typer.Exit(2)
        raise typer.Exit(run_write(intent, output))
    if output is not None:
        _err("error: -o writes the runs and --results judges logs: give one of them")
        raise typer.Exit(2)
    try:
        size = parse_nccl_size(min_size)
    except ValueError as exc:
        _err(f"error: {exc}")
        raise typer.Exit(2) from None
    raise typer.Exit(run_results(intent, [*results, *extra], min_fraction=min_fraction, min_size=size,
                                 measured=measured))


@lab_app.command("up")
def lab_up(
    intent: IntentArg,
    directory: Annotated[str, typer.Option("--dir", help="lab state directory (endpoints.yml, pid, keys)")],
    wiring: Annotated[str | None, typer.Option(
        "--wiring", help="CSV of the installed cables (a_device,a_port,b_device,b_port[,state,crc_errors,"
                         "lldp_portid]); default: the plan's cabling")] = None,
    nos_version: Annotated[str | None, typer.Option(
        "--nos-version", help="the NOS release the switches run (default: the intent's switch_os.version), "
                              "e.g. 5.9, 202405 or a SONiC build string as `show version` prints it "
                              "(SONiC.20241211.21)")] = None,
    ztp: Annotated[bool, typer.Option(
        "--ztp", help="boot as from the factory with ZTP on: eth0 on DHCP, factory config and login; "
                      "`lab ztp` provisions them")] = False,
    inventory: Annotated[str | None, typer.Option(
        "--inventory", help="with --ztp: name,serial,mac of each switch (its label's eth0 MAC and serial)")] = None,
    time_scale: Annotated[float, typer.Option(
        "--time-scale", help="the switches' timers (commit-confirm) run N times faster: a 30 s confirm "
                             "timer expires in 30/N s (1-600)")] = 1.0,
    faults: Annotated[str | None, typer.Option(
        "--faults", help="YAML of what cabling cannot say: switches: {<sw>: {os_version, ntp, psu, fans, "
                         "temperature_c}}, ports: {\"<sw>:<port>\": {rx_power_dbm, tx_power_dbm, "
                         "module_temperature_c, fec_ber, link_flaps}}, hosts: {<host>: {rails_down: [netdev], "
                         "pcp_trust: [netdev]}}; anything not listed is healthy")] = None,
    hosts: Annotated[int, typer.Option(
        "--hosts", metavar="N", help="also start the plan's first N GPU servers (simulated, SSH on 127.0.0.1, "
                                     "no root); 0: switches only")] = 0,
) -> None:
    """Start one simulated switch per switch in the plan on 127.0.0.1; write DIR/endpoints.yml.

    Each switch boots from its factory default with its plan eth0 address (static, in the mgmt VRF)
    and the deploy user. The password is $FABRICGEN_PASSWORD when set, else a random one in DIR/password.
    The switches answer LLDP, interface, BGP and counter commands from the wiring (the plan's cabling
    unless --wiring gives another). With --ztp they boot as shipped instead: eth0 a DHCP client,
    the factory hostname and login (cumulus / admin, with the lab password), the inventory's MAC and
    serial, waiting for `fabricgen lab ztp`. A host port is heard as lldpd announces it by default: port ID =
    the NIC's MAC (from hosts.discovered when it has one), description = the netdev; lldp_portid
    ifname on its cable makes it announce the netdev (lldpd `portidsubtype ifname`).
    """
    import os

    from generator.devices.credentials import PASSWORD_ENV
    from generator.lab.command import prepare, start, started_lines

    _loaded, result = _check(intent)
    if result.errors or result.plan is None:
        _print_findings(result, True)
        raise typer.Exit(1)
    password = os.environ.get(PASSWORD_ENV) or None
    # a refusal (LabUpError) is one line and exit 1: the CLI's one catch (cli_config.ConfigCommand.invoke)
    lab = prepare(result.plan, password=password, wiring=wiring, nos_version=nos_version, ztp=ztp,
                  inventory=inventory, faults=faults, hosts=hosts)
    for line in lab.warnings:
        _err(line)
    endpoints = start(lab, Path(directory), password=password, time_scale=time_scale)
    for line in started_lines(lab, Path(directory), endpoints):
        typer.echo(line)


@lab_app.command("ztp")
def lab_ztp_command(
    directory: Annotated[str, typer.Option("--dir", help="lab state directory given to `lab up --ztp`")],
    day0: Annotated[str, typer.Option("--day0", help="the directory `fabricgen day0 -o` wrote")],
    timeout: Annotated[float, typer.Option("--timeout", help="seconds one switch's ZTP may take")] = 300.0,
) -> None:
    """Every switch waiting for ZTP does what its NOS's ZTP does with the kit: DHCP answer from
    DAY0DIR/kea-dhcp4.json, the script or ztp.json from DAY0DIR/http; one line per switch."""
    from generator.lab.ztp import ZtpError, lab_ztp

    try:
        results = lab_ztp(Path(directory), Path(day0), timeout=timeout)
    except ZtpError as exc:
        _err(f"error: lab ztp: {exc}")
        raise typer.Exit(1) from None
    for result in results:
        typer.echo(result.line)
    raise typer.Exit(0 if all(r.ok for r in results) else 1)


@lab_app.command("down")
def lab_down(
    directory: Annotated[str, typer.Option("--dir", help="lab state directory given to `lab up`")],
) -> None:
    """Stop exactly the lab processes started in DIR."""
    from generator.lab.control import lab_down as stop

    typer.echo("lab stopped" if stop(Path(directory)) else "no lab running in " + directory)


def _lock_of(intent: str):
    """(lock path, fabric name) of INTENT; a LockError when it cannot be read."""
    from generator.deploy.lock import lock_path

    fabric = _load(intent).intent.fabric.name
    return lock_path(fabric), fabric


@lock_app.command("status")
def lock_status(intent: IntentArg) -> None:
    """Who holds the deploy lock of INTENT's fabric: exit 0 free, 3 held (or stale), 1 unreadable."""
    from generator.deploy.lock import read_holder

    path, fabric = _lock_of(intent)
    holder = read_holder(path, fabric)
    if holder is None:
        typer.echo(f"fabric {fabric!r}: not locked (lock file {path})")
        raise typer.Exit(0)
    state = "stale: that process is gone, check the switches for pending commits" if holder.stale else "held"
    typer.echo(f"fabric {fabric!r}: {state}: {holder.describe()} (lock file {path})")
    raise typer.Exit(3)


@lock_app.command("break")
def lock_break(
    intent: IntentArg,
    yes: Annotated[bool, typer.Option("--yes", help="do not ask")] = False,
) -> None:
    """Remove the deploy lock of INTENT's fabric (a stale one, after checking the switches)."""
    from generator.deploy.lock import break_lock, read_holder

    path, fabric = _lock_of(intent)
    holder = read_holder(path, fabric)
    if holder is None:
        typer.echo(f"fabric {fabric!r}: not locked; nothing to break (lock file {path})")
        raise typer.Exit(0)
    if holder.local and isinstance(holder.pid, int) and not holder.stale:
        _err(f"error: {holder.describe()} is still running; stop it (kill -TERM {holder.pid} rolls back "
             "its pending commits and releases the lock) instead of breaking its lock")
        raise typer.Exit(1)
    if not yes:
        if not sys.stdin.isatty():
            _err("error: refusing to break the lock without confirmation: stdin is not a terminal; pass --yes")
            raise typer.Exit(1)
        if not typer.confirm(f"break the deploy lock of {holder.describe()}?", default=False, err=True):
            _err("lock kept")
            raise typer.Exit(1)
    break_lock(holder)      # a LockError is the CLI's one catch (cli_config.ConfigCommand.invoke)
    typer.echo(f"broke the deploy lock of fabric {fabric!r}: {holder.describe()} (was {path})")


@hosts_app.command("discover")
def hosts_discover(
    intent: IntentArg,
    output: Annotated[str | None, typer.Option(
        "-o", "--output", help="discovery file to write (hosts.discovered in the intent)", show_default=False)] = None,
    endpoints: EndpointsOpt = None,
    limit: Annotated[str | None, typer.Option("--limit", help="only hosts matching this Ansible pattern")] = None,
    out: Annotated[str | None, alias("--out")] = None,
) -> None:
    """Read each host's RDMA NICs (netdev -> RDMA device -> PCI, link type, state) and GPUDirect path
    over SSH, read-only; write them to -o FILE and print one line per host against the render.

    Exit 0 every host read, 1 a host could not be read (its previous entry is kept) or nothing ran.
    """
    from generator.deploy.discover import run_discover

    out = renamed(output, out, "-o/--output", "--out")
    if out is None:
        _err("error: hosts discover: give -o FILE, the discovery file to write (hosts.discovered in the intent)")
        raise typer.Exit(2)

    raise typer.Exit(run_discover(intent, out=out, endpoints=endpoints, limit=limit))


@app.command()
def schema(output: ReportOpt = None) -> None:
    """Print the JSON Schema of the intent (for editor completion)."""
    from generator.intent.schema import intent_schema

    with printed_to(output):
        typer.echo(json.dumps(intent_schema(), indent=1, sort_keys=True))


@app.command()
def version() -> None:
    """Print the fabricgen version."""
    typer.echo(f"fabricgen {__version__}")


use_config_file(app)        # after every command is registered
word_types(app)


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
