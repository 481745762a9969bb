"""`fabricgen deploy` in the test process, from run_deploy's keyword arguments (issue 35).

run_deploy returns a DeployRun and prints nothing; a test that checks what the operator reads and
the exit status runs the command as the CLI does (tests/cli_runner.py), with the same keywords the
tests passed to run_deploy before.
"""

from __future__ import annotations

import subprocess

from tests.cli_runner import run_cli

FLAGS = {"dry_run": "--dry-run", "yes": "--yes", "accept_new_host_keys": "--accept-new-host-keys",
         "provision": "--provision", "show_diff": "--diff", "day0": "--day0"}
OPTIONS = {"endpoints": "--endpoints", "only": "--only", "limit": "--limit", "plan_file": "--plan"}


def deploy_cli(intent, **kwargs) -> subprocess.CompletedProcess:
    """`fabricgen deploy INTENT` with run_deploy's keywords as its options."""
    args = []
    for key, value in kwargs.items():
        if key in FLAGS:
            args += [FLAGS[key]] if value else []
        elif value is not None:
            args += [OPTIONS[key], str(value)]
    return run_cli("deploy", str(intent), *args)
