"""fabricgen.toml: the defaults an operator would otherwise repeat on every command (issue 27).

The file beside the intent (`fabricgen.toml` in the intent's directory), or the one
$FABRICGEN_CONFIG names, holds:

    endpoints = "lab/endpoints.yml"   # --endpoints of every command that takes it
    state_dir = "/var/lib/fabricgen"  # the deploy lock's directory (as $FABRICGEN_STATE_DIR)
    backup_dir = "backups"            # deploy's running-config backups (as $FABRICGEN_BACKUP_DIR)

    [defaults.drift]                  # any option of a command by its long name, as typed on its
    format = "json"                   # command line ([defaults.lab.up] for `lab up`)

Relative paths of the top-level keys are relative to the file; [defaults] values are taken as
if typed on the command line. Precedence is click's (typer keeps it): command line > environment variable
(FABRICGEN_ENDPOINTS, FABRICGEN_STATE_DIR, ...) > this file (a context's default_map) > the
built-in default. An unknown key is one error line naming the file, its line and the key.

The file chooses where secrets come from and go (endpoints, state_dir, backup_dir, and every
[defaults] value), so it is obeyed only when it is the user's or root's and not writable by
group or others (common/trusted_file.py): a fabricgen.toml planted beside an intent in a shared
directory is refused with the fix (issue 34 finding 1). Every command that applies one says
which on stderr.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperCommand

from generator.cli_options import CONFIG_CHECK
from generator.common.bounded_read import ReadRefused
from generator.common.errors import FabricgenError
from generator.common.trusted_file import read_trusted

CONFIG_ENV = "FABRICGEN_CONFIG"
CONFIG_NAME = "fabricgen.toml"
CONFIG_LIMIT = 1 << 20              # a config file is a few lines; anything larger is not one
# Top-level keys that name a directory and the environment variable the library reads it from.
ENV_PATHS = {"state_dir": "FABRICGEN_STATE_DIR", "backup_dir": "FABRICGEN_BACKUP_DIR"}
TOP_KEYS = ("endpoints", *ENV_PATHS, "defaults")
# Options that skip a question or a safety check stay on the command line, where a reviewer sees
# them: a committed config file must not make every `deploy` unattended.
COMMAND_LINE_ONLY = {"yes", "accept-new-host-keys"}


class ConfigError(FabricgenError):
    """One line: file[:line]: what is wrong and what to do."""

    exit_code = 2


def _where(path: Path, text: str, key: str) -> str:
    """FILE:LINE of KEY's assignment or table header when it can be found, else FILE."""
    pattern = re.compile(rf"^\s*(\[[^\]]*\b{re.escape(key)}\b[^\]]*\]|\"?{re.escape(key)}\"?\s*=)", re.M)
    match = pattern.search(text)
    return f"{path}:{text.count(chr(10), 0, match.start()) + 1}" if match else str(path)


def _unknown(path: Path, text: str, key_path: str, key: str, known: list[str]) -> ConfigError:
    close = difflib.get_close_matches(key, known, n=1)
    hint = f"did you mean {close[0]}?" if close else f"known: {', '.join(known) or 'none'}"
    return ConfigError(f"{_where(path, text, key)}: unknown key {key_path}: {hint}; fix or remove it")


def config_path(intent: str | None) -> tuple[Path, bool] | None:
    """($FABRICGEN_CONFIG, True), else (fabricgen.toml beside INTENT, False) when there is one
    (lexists: a planted link is found, and then refused), else None."""
    named = os.environ.get(CONFIG_ENV, "").strip()
    if named:
        if not Path(named).is_file():
            raise ConfigError(f"{CONFIG_ENV}={named}: no such file; unset it or point it at a {CONFIG_NAME}")
        return Path(named), True
    if intent:
        beside = Path(intent).parent / CONFIG_NAME
        if os.path.lexists(beside):
            return beside, False
    return None


def read_config(path: Path, *, named: bool = False) -> tuple[dict[str, Any], str]:
    """(document, text) of PATH: TOML, at most CONFIG_LIMIT bytes, known top-level keys only.
    NAMED: the user named it in $FABRICGEN_CONFIG (a link is then theirs to follow); the file found
    beside an intent is opened O_NOFOLLOW, so a link planted there is refused."""
    try:
        raw = read_trusted(path, CONFIG_LIMIT, follow_symlinks=named)
    except ReadRefused as exc:
        if exc.kind == "size":
            raise ConfigError(f"{path}: larger than {CONFIG_LIMIT} bytes: not a {CONFIG_NAME}") from None
        raise ConfigError(f"{path}: refused: {exc.message}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
        doc = tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    for key in doc:
        if key not in TOP_KEYS:
            raise _unknown(path, text, key, key, list(TOP_KEYS))
    for key in ("endpoints", *ENV_PATHS):
        if key in doc and not (isinstance(doc[key], str) and doc[key].strip()):
            raise ConfigError(f"{_where(path, text, key)}: {key} must be a path (a string)")
    if "defaults" in doc and not isinstance(doc["defaults"], dict):
        raise ConfigError(f"{_where(path, text, 'defaults')}: defaults must be a table, e.g. [defaults.drift]")
    return doc, text


def _options(command) -> dict[str, Any]:
    """A command's settable options by long name (hidden deprecated aliases and help left out)."""
    found = {}
    for param in command.params:
        # by param_type_name: typer 0.29 builds its parameters on its own copy of click
        if param.param_type_name == "option" and not param.hidden and not param.is_eager:
            longs = [o[2:] for o in param.opts if o.startswith("--")]
            if longs:
                found[longs[0]] = param
    return found


def _check_defaults(path: Path, text: str, table: dict, group, key_path: str, ctx: typer.Context) -> None:
    """Every key of TABLE names a subcommand of GROUP (a table) or an option of the command (a value)."""
    commands = getattr(group, "commands", None)
    if commands is not None:
        for name, value in table.items():
            sub = commands.get(name)
            if sub is None or not isinstance(value, dict):
                raise _unknown(path, text, f"{key_path}.{name}", name, sorted(commands)) if sub is None else \
                    ConfigError(f"{_where(path, text, name)}: {key_path}.{name} must be a table of its options")
            _check_defaults(path, text, value, sub, f"{key_path}.{name}", ctx)
        return
    options = _options(group)
    for name, value in table.items():
        if name in COMMAND_LINE_ONLY:
            raise ConfigError(f"{_where(path, text, name)}: {key_path}.{name}: give --{name} on the command line, "
                              "not in a config file")
        param = options.get(name)
        if param is None:
            raise _unknown(path, text, f"{key_path}.{name}", name, sorted(n for n in options if n not in COMMAND_LINE_ONLY))
        ctx.meta[CONFIG_CHECK] = True
        try:
            param.process_value(ctx, value)      # typer's conversion and the option's own check
        except typer.BadParameter as exc:
            raise ConfigError(f"{_where(path, text, name)}: {key_path}.{name}: {exc.message}") from None
        finally:
            del ctx.meta[CONFIG_CHECK]


def defaults_for(ctx: typer.Context, intent: str | None) -> tuple[Path | None, dict[str, Any]]:
    """(the config file that applies or None, the default_map of CTX's command from it); exports
    state_dir/backup_dir to the environment unless it sets them already."""
    found_path = config_path(intent)
    if found_path is None:
        return None, {}
    path, named = found_path
    doc, text = read_config(path, named=named)
    root = ctx.find_root().command
    _check_defaults(path, text, doc.get("defaults", {}), root, "defaults", ctx)
    base = path.resolve().parent
    for key, env in ENV_PATHS.items():
        if key in doc:
            os.environ.setdefault(env, str(base / doc[key]))
    section: Any = doc.get("defaults", {})
    names, here = [], ctx
    while here.parent is not None:          # `lab up` -> [defaults.lab.up]
        names.insert(0, here.info_name)
        here = here.parent
    for name in names:
        section = section.get(name, {}) if isinstance(section, dict) else {}
    options = _options(ctx.command)
    found: dict[str, Any] = {}
    if "endpoints" in doc and "endpoints" in options:
        found[options["endpoints"].name] = str(base / doc["endpoints"])
    for name, value in section.items():
        found[options[name].name] = value
    return path, found


class ConfigCommand(TyperCommand):
    """A command whose defaults come from the config file that applies to its intent."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        given = args[: args.index("--")] if "--" in args else args
        if args and not any(a in ctx.help_option_names for a in given) and not ctx.resilient_parsing:
            try:
                path, found = defaults_for(ctx, _first_argument(self, ctx, args))
            except ConfigError as exc:
                typer.echo(f"error: {exc}", err=True)
                ctx.exit(2)
            if path is not None:
                # one line, so that a config nobody meant to apply is seen (stdout stays the command's)
                typer.echo(f"fabricgen: using config {path}", err=True)
            if found:
                ctx.default_map = {**found, **(ctx.default_map or {})}
        return super().parse_args(ctx, args)

    def invoke(self, ctx: typer.Context):
        # the one place a library's refusal becomes its line on stderr and the command's exit code
        try:
            return super().invoke(ctx)
        except FabricgenError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None


def _first_argument(command, ctx: typer.Context, args: list[str]) -> str | None:
    """The first positional argument as given (the intent), from a dry parse of ARGS."""
    first = next((p for p in command.params if p.param_type_name == "argument"), None)
    if first is None:
        return None
    try:
        opts, _, _ = command.make_parser(ctx).parse_args(args=list(args))
    except Exception:  # noqa: BLE001 - a usage error of any kind: the real parse reports it
        return None
    value = opts.get(first.name)
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    return value if isinstance(value, str) else None


def use_config_file(app) -> None:
    """Every command of the typer APP (and of its sub-apps) reads fabricgen.toml; call once, after
    the commands are registered."""
    for info in app.registered_commands:
        if info.cls in (None, TyperCommand):     # typer fills in TyperCommand when none is given
            info.cls = ConfigCommand
    for group in app.registered_groups:
        use_config_file(group.typer_instance)
