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


def endpoints_readable(ctx: typer.Context, value: str | None) -> str | None:
    """An --endpoints file that cannot be read is one line and exit 1, before the command starts."""
    if value is None or ctx.resilient_parsing:
        return value
    from generator.devices.credentials import CredentialsError
    from generator.devices.endpoints_file import check_endpoints_file

    try:
        check_endpoints_file(value)
    except CredentialsError as exc:
        if ctx.meta.get(CONFIG_CHECK):
            raise typer.BadParameter(str(exc)) from None      # cli_config names the file and key
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    return value


EndpointsOpt = Annotated[str | None, typer.Option(
    "--endpoints", envvar=ENDPOINTS_ENV, callback=endpoints_readable,
    help="endpoints.yml (management address overrides)")]
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


# -h shows what a value is in words (issue 36): typer's rich help prints the Python annotation
# (`<str>`, `<bool>`, `<float>`) when an option has no metavar. Paths by their parameter's name.
PATH_PARAMS = {"intent", "paths", "endpoints", "output", "output_dir", "out", "plan_file", "directory", "wiring",
               "faults", "inventory", "day0", "sonic_yang", "results", "measured"}
WORDS = {"against": "REF|DIR", "url": "URL", "explain": "CODE", "fmt": "FORMAT"}


def _word(param) -> str | None:
    """The word for PARAM's value: '' for a flag (it takes none), None to leave it as it is."""
    if getattr(param, "is_flag", False):
        return ""
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    element = getattr(annotation, "__args__", (annotation,))[0]        # list[str] -> str
    if param.name in WORDS:
        word = WORDS[param.name]
    elif param.name in PATH_PARAMS:
        word = "PATH"
    elif element in (int, float):
        word = "N"
    elif element is str:
        word = "TEXT"
    else:
        return None
    return word + ("..." if param.nargs == -1 else "")


def _name_value(param) -> None:
    word = _word(param)
    if word is None or param.metavar is not None:
        return
    if param.param_type_name == "argument":
        # an argument's metavar is also its name in the help and the usage line: keep the name
        # (INTENT), show the word in the type column only
        param.metavar = param.name.upper()       # typer adds the "..." of nargs=-1 in the usage line
        param.display_type_rich = lambda ctx, word=word: word
    else:
        param.metavar = word


def _worded(cls):
    class Worded(cls):
        def get_params(self, ctx):
            params = super().get_params(ctx)      # with the -h and completion options typer adds here
            for param in params:
                _name_value(param)
            return params

    Worded.__name__ = Worded.__qualname__ = cls.__name__
    return Worded


def word_types(app) -> None:
    """Every command and group of the typer APP (and its sub-apps) shows value types as words; call
    once, after the commands are registered (and after use_config_file)."""
    from typer.core import TyperCommand, TyperGroup

    given = app.info.cls
    app.info.cls = _worded(given if isinstance(given, type) else TyperGroup)    # unset: a DefaultPlaceholder
    for info in app.registered_commands:
        info.cls = _worded(info.cls if isinstance(info.cls, type) else TyperCommand)
    for group in app.registered_groups:
        word_types(group.typer_instance)
