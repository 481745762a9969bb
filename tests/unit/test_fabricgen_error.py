"""One FabricgenError base (issue 35 item 6): every refusal a user sees derives from it, keeps the
standard base callers catch it as, and the CLI turns it into one line and its exit code in one place."""

import importlib
import inspect
import pkgutil

import typer
from typer.testing import CliRunner

import generator
from generator.cli_config import ConfigCommand, ConfigError, use_config_file
from generator.common.bounded_read import ReadRefused
from generator.common.errors import FabricgenError
from generator.day0.kit import KitError
from generator.deploy.lock import LockError
from generator.intent.loader import IntentError
from generator.render.output import OutputError


def test_refusals_share_the_base_and_keep_their_own():
    for cls in (ConfigError, KitError, LockError, IntentError, OutputError, ReadRefused):
        assert issubclass(cls, FabricgenError), cls
    assert issubclass(KitError, ValueError) and issubclass(LockError, RuntimeError) and issubclass(ReadRefused, OSError)
    assert ConfigError.exit_code == 2 and LockError.exit_code == 1 and FabricgenError.code is None


class Refused(FabricgenError):
    exit_code = 3
    code = "FG-TEST"


def _app(error: Exception) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def go(name: str) -> None:
        raise error

    @app.command()
    def other() -> None:
        pass

    use_config_file(app)
    return app


def test_the_cli_prints_one_line_and_exits_with_the_errors_code(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)         # no fabricgen.toml applies
    app = _app(Refused("intent.yaml:3: fabric.name: give a name"))
    assert all(info.cls is ConfigCommand for info in app.registered_commands)
    result = CliRunner().invoke(app, ["go", "x"], catch_exceptions=False)
    assert result.exit_code == 3
    assert result.stderr == "error: intent.yaml:3: fabric.name: give a name\n" and result.stdout == ""


def test_anything_else_is_not_swallowed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(_app(KeyError("bug")), ["go", "x"])
    assert isinstance(result.exception, KeyError)


# Exceptions that never reach a user as such: control flow inside one module, or a per-device
# failure the caller turns into that device's "failed"/"unknown" line. Anything else a module
# defines is a refusal and derives from FabricgenError, so the CLI prints it as one line.
INTERNAL = {
    "generator.acceptance.nccl_log._NotAMeasure",      # a log line that is not a measurement: skipped
    "generator.common.bounded_yaml.TooDeep",           # becomes the loader's one-line refusal
    "generator.common.json_text._OtherShape",          # not a config_db shape: the json module prints it
    "generator.device_data._TooDeep",
    "generator.deploy.interrupt.Interrupted",          # SIGINT/SIGTERM: BaseException so nothing swallows it
    "generator.deploy.rollout.DeviceFailed",           # one switch's post-check: that switch rolls back
    "generator.devices.ssh.CommandFailed",             # one device's command: that device is failed/unknown
    "generator.devices.ssh.ReadIncomplete",
    "generator.intent.discovery._Bad",
    "generator.render.nvue_model_cache.Untrusted",     # the cache is not used, the render goes on
}


def test_every_refusal_a_module_defines_derives_from_the_base():
    """Walks every module but the lab simulator's (its errors are the simulated device's answers)."""
    stray = []
    for info in pkgutil.walk_packages(generator.__path__, "generator."):
        if info.name.startswith("generator.lab"):
            continue
        module = importlib.import_module(info.name)
        for name, cls in vars(module).items():
            if (inspect.isclass(cls) and issubclass(cls, BaseException) and cls.__module__ == module.__name__
                    and not issubclass(cls, FabricgenError) and f"{module.__name__}.{name}" not in INTERNAL):
                stray.append(f"{module.__name__}.{name}")
    assert stray == []
