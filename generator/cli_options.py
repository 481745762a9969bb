"""Options every fabricgen command spells the same way (issue 27): -h/--help, --version, -o/--output
for what a command writes, --format (table for people, json for machines), --limit GLOB,
--endpoints ($FABRICGEN_ENDPOINTS), and the old spellings kept as hidden aliases that say so."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from typing import Annotated

import typer

from generator import __version__

# click reads help_option_names from the root context into every subcommand's context
CONTEXT = {"help_option_names": ["-h", "--help"]}
ENDPOINTS_ENV = "FABRICGEN_ENDPOINTS"
TABLE_ALIASES = {"text": "table"}         # `text` was validate's, plan's and capacity's name for table
CONFIG_CHECK = "fabricgen.config_check"   # ctx.meta key: a value from fabricgen.toml is being checked


def print_version(value: bool) -> None:
    if value:
        typer.echo(f"fabricgen {__version__}")
        raise typer.Exit(0)


VersionOpt = Annotated[bool, typer.Option("--version", is_eager=True, callback=print_version,
                                          help="print the fabricgen version and exit")]


def format_option(*offered: str, table: str = "table") -> typer.models.OptionInfo:
    """--format with OFFERED values (table first, `text` accepted for it); the command receives the
    name its library uses, TABLE for table. Anything else: one line, exit 2."""
    def check(ctx: typer.Context, value: str) -> str:
        name = TABLE_ALIASES.get(value, value)
        if name not in offered:
            problem = f"--format {value!r}: use {', '.join(offered[:-1])} or {offered[-1]}"
            if ctx.meta.get(CONFIG_CHECK):
                raise typer.BadParameter(problem)      # cli_config names the file and key
            typer.echo(f"error: {problem}", err=True)
            raise typer.Exit(2)
        return table if name == "table" else name

    return typer.Option("--format", help=" | ".join(offered) + " (table for people, json for machines)",
                        callback=check, autocompletion=lambda: list(offered))


def renamed(new, old, new_flag: str, old_flag: str):
    """The value of NEW_FLAG, or of its deprecated spelling OLD_FLAG (with one line on stderr)."""
    if old is None:
        return new
    if new is not None:
        typer.echo(f"error: {old_flag} is the old name of {new_flag}: give only {new_flag}", err=True)
        raise typer.Exit(2)
    typer.echo(f"warning: {old_flag} is deprecated: use {new_flag}", err=True)
    return old


def alias(old_flag: str) -> typer.models.OptionInfo:
    """A hidden option for the old spelling of a renamed flag (see renamed)."""
    return typer.Option(old_flag, hidden=True)


EndpointsOpt = Annotated[str | None, typer.Option(
    "--endpoints", envvar=ENDPOINTS_ENV, help="endpoints.yml (management address overrides)")]
LimitOpt = Annotated[str | None, typer.Option(
    "--limit", metavar="GLOB", help="only devices whose name matches this glob, e.g. 'leaf-r0-*'")]
ReportOpt = Annotated[str | None, typer.Option(
    "-o", "--output", help="write the report to this file (atomically) instead of stdout")]


@contextlib.contextmanager
def printed_to(output: str | None) -> Iterator[None]:
    """-o FILE for a command that prints its result (validate, plan, schema): what it prints goes to
    FILE, written atomically once the command has finished (an exit code is a finished command; a
    crash or an empty result leaves the last good file as it was)."""
    if output is None:
        yield
        return
    from generator.common.atomic_write import write_atomic

    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            yield
    except typer.Exit:
        if buffer.getvalue():
            write_atomic(output, buffer.getvalue())
        raise
    if buffer.getvalue():
        write_atomic(output, buffer.getvalue())
