"""`fabricgen sot diff|push|pull`: the typer sub-app and its runs (DESIGN.md CLI table, issue 37).

Exit codes: diff 0 when Nautobot matches the plan, 3 when a push would change something; push 0;
both 1 on a conflict (an untagged object on a key the plan needs: named, nothing written), an
unreachable server or a refused token. --url and every option may come from fabricgen.toml
([defaults.sot.push] url = ...); the token only from an environment variable or a file only its
owner can read, never the command line or fabricgen.toml, where it would end up in shell history
and in reviews.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Annotated

import typer

from generator.common.errors import FabricgenError

# cli_options.CONTEXT and format_option, restated: cli_options reaches into generator.devices, a layer
# above this one (pyproject.toml [tool.importlinter])
sot_app = typer.Typer(no_args_is_help=True, context_settings={"help_option_names": ["-h", "--help"]},
                      help="Nautobot as the DCIM source of truth: diff, push the plan, pull serials and MACs.")

TOKEN_ENV = "NAUTOBOT_TOKEN"
TOKEN_LIMIT = 4096

IntentArg = Annotated[str, typer.Argument(help="path of the intent (fabric.yaml)", show_default=False)]
UrlOpt = Annotated[str | None, typer.Option("--url", help="Nautobot's base URL, e.g. https://nautobot.example.net",
                                            show_default=False)]
TokenEnvOpt = Annotated[str, typer.Option("--token-env", help="environment variable holding the API token")]
TokenFileOpt = Annotated[str | None, typer.Option(
    "--token-file", help="file holding the API token (yours, mode 0600); instead of --token-env", show_default=False)]


class SotUsage(FabricgenError):
    exit_code = 2


def read_token(token_env: str, token_file: str | None) -> str:
    """The API token from TOKEN_FILE (the user's, readable by nobody else) or $TOKEN_ENV."""
    if token_file:
        from generator.common.bounded_read import ReadRefused, read_bounded
        from generator.common.trusted_file import trust_problem

        def check(st: os.stat_result) -> str | None:
            problem = trust_problem(st, token_file)
            if problem is None and st.st_mode & 0o077:
                problem = (f"mode {stat.S_IMODE(st.st_mode):04o} lets others read the token; "
                           f"chmod 600 {token_file}")
            return problem

        try:
            token = read_bounded(token_file, TOKEN_LIMIT, check=check).decode("utf-8", "replace").strip()
        except ReadRefused as exc:
            raise FabricgenError(f"--token-file {token_file}: {exc}") from None
        except OSError as exc:
            raise FabricgenError(f"--token-file {token_file}: cannot read: {exc.strerror or exc}") from None
        if not token:
            raise FabricgenError(f"--token-file {token_file}: empty; write the Nautobot API token into it")
        return token
    token = os.environ.get(token_env, "").strip()
    if not token:
        raise FabricgenError(f"no Nautobot API token: ${token_env} is not set; export it (or give --token-file "
                             "with a 0600 file), never on the command line")
    return token


def _url(url: str | None) -> str:
    if not url:
        raise SotUsage("give --url (Nautobot's base URL), or url under [defaults.sot.<command>] in fabricgen.toml")
    if not url.startswith(("http://", "https://")) or len(url) > 2000:
        raise SotUsage(f"--url {url[:80]!r}: not an http(s) URL; give Nautobot's base URL, e.g. https://nautobot.example.net")
    return url


def _plans(intent: str):
    """(plan, build-out plan or None) of an intent that passes every check; else its findings and exit 1."""
    from generator.checks.runner import run_checks
    from generator.intent.loader import IntentError, load_intent
    from generator.plan.compile import compile_plan
    from generator.plan.growth import build_out_intent

    try:
        loaded = load_intent(intent)
    except IntentError as exc:
        for problem in exc.problems:
            typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(1) from None
    result = run_checks(loaded)
    if result.errors or result.plan is None:
        for f in result.errors:
            typer.echo(f.one_line(), err=True)
        typer.echo(f"error: {intent}: {len(result.errors)} error(s); nothing sent to Nautobot", err=True)
        raise typer.Exit(1)
    t = loaded.intent.topology
    build_out = None
    if t.build_out is not None and t.build_out.nodes > t.nodes:
        build_out = compile_plan(build_out_intent(loaded.intent))
    return result.plan, build_out


def _session(url: str | None, token_env: str, token_file: str | None):
    from generator.sot.nautobot import Nautobot

    nb = Nautobot(_url(url), read_token(token_env, token_file))
    nb.status()                     # unreachable or a refused token: one line before any work
    return nb


@sot_app.command("diff")
def diff_command(
    intent: IntentArg,
    url: UrlOpt = None,
    token_env: TokenEnvOpt = TOKEN_ENV,
    token_file: TokenFileOpt = None,
    fmt: Annotated[str, typer.Option("--format", help="table | json | markdown (table for people, json for "
                                     "machines, markdown for a pull-request comment)")] = "table",
) -> None:
    """What a push would change in Nautobot: exit 0 none, 3 changes, 1 conflicts."""
    from generator.sot.compare import compare
    from generator.sot.diff_format import FORMATS
    from generator.sot.objects import desired_objects

    fmt = "table" if fmt == "text" else fmt
    if fmt not in FORMATS:
        raise SotUsage(f"--format {fmt!r}: use table, json or markdown")
    plan, build_out = _plans(intent)
    nb = _session(url, token_env, token_file)
    desired = nb.fit(desired_objects(plan, build_out))
    state = nb.read_state(desired)
    result = compare(desired, state.objects, state.held)
    typer.echo(FORMATS[fmt](result), nl=False)
    raise typer.Exit(1 if result.conflicts else 3 if result.has_changes else 0)


@sot_app.command("push")
def push_command(
    intent: IntentArg,
    url: UrlOpt = None,
    token_env: TokenEnvOpt = TOKEN_ENV,
    token_file: TokenFileOpt = None,
    prune: Annotated[str, typer.Option("--prune", help="objects tagged for the fabric the plan no longer has: "
                                       "never (report), mark (status Decommissioning) or delete (with --yes)")] = "never",
    yes: Annotated[bool, typer.Option("--yes", help="allow --prune delete to delete")] = False,
) -> None:
    """Upsert the plan into Nautobot by natural key; a second push writes nothing."""
    from generator.sot.objects import desired_objects
    from generator.sot.push import PRUNE_MODES, push

    if prune not in PRUNE_MODES:
        raise SotUsage(f"--prune {prune!r}: use never, mark or delete")
    plan, build_out = _plans(intent)
    nb = _session(url, token_env, token_file)
    desired = desired_objects(plan, build_out)
    started = time.perf_counter()
    result = push(nb, desired, prune=prune, yes=yes)
    if result.conflicts:
        for line in result.conflicts:
            typer.echo(f"error: {line}", err=True)
        typer.echo(f"error: {plan.fabric}: {len(result.conflicts)} conflict(s) in Nautobot; nothing written", err=True)
        raise typer.Exit(1)
    done = ", ".join(f"{n} {what}" for what, n in sorted(result.written.items())) or "nothing to write"
    typer.echo(f"{plan.fabric}: {done} ({result.writes} write request(s), {time.perf_counter() - started:.1f} s)")


@sot_app.command("pull")
def pull_command(
    intent: IntentArg,
    output: Annotated[str, typer.Option("-o", "--output", help="the inventory CSV to write (name,serial,mac)")],
    url: UrlOpt = None,
    token_env: TokenEnvOpt = TOKEN_ENV,
    token_file: TokenFileOpt = None,
) -> None:
    """Serials and management MACs from Nautobot as the CSV `fabricgen day0 --inventory` reads."""
    from generator.common.atomic_write import write_atomic
    from generator.sot.objects import desired_objects
    from generator.sot.pull import pull

    target = Path(output)
    if target.is_dir() or not target.parent.is_dir():
        raise SotUsage(f"-o {output}: give a file in an existing directory")
    plan, build_out = _plans(intent)
    nb = _session(url, token_env, token_file)
    desired = desired_objects(plan, build_out)
    pulled = pull(plan, nb.read_state(desired), target)
    for line in pulled.changed:
        typer.echo(line, err=True)
    write_atomic(target, pulled.text)
    missing = f"; {len(pulled.missing)} device(s) without serial or MAC in Nautobot left out" if pulled.missing else ""
    typer.echo(f"{plan.fabric}: {pulled.rows} row(s) -> {output}{missing}")


__all__ = ["read_token", "sot_app"]
