"""`fabricgen ARGS` in the test process: the same typer app, exit code, stdout and stderr as the
command line gives, without starting a Python interpreter per call (issue 35).

For a test that checks output and exit status only. A test that needs a real process keeps
`subprocess` (`python -m generator.cli`): signals, locks held by a PID, another user (`user=`),
a terminal, a timeout, or the interpreter's own start-up (imports, PYTHONPATH, the installed
script).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from typer.testing import CliRunner


def run_cli(*args: str, cwd: Path | str | None = None, env: Mapping[str, str] | None = None,
            input: str | None = None) -> subprocess.CompletedProcess:
    """As subprocess.run([... "generator.cli", *args], capture_output=True, text=True, cwd=cwd, env=env):
    env replaces the whole environment for the call (None: this process's)."""
    from generator.cli import app

    overrides = None
    if env is not None:
        overrides = {key: None for key in os.environ if key not in env} | dict(env)
    with _working_directory(cwd):
        result = CliRunner().invoke(app, list(args), env=overrides, input=input, prog_name="fabricgen",
                                    catch_exceptions=False)
    return subprocess.CompletedProcess(["fabricgen", *args], result.exit_code, result.stdout, result.stderr)


@contextmanager
def _working_directory(cwd: Path | str | None) -> Iterator[None]:
    if cwd is None:
        yield
        return
    before = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)
