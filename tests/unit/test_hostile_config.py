"""Issue 34 finding 1: a fabricgen.toml or endpoints file someone else could have written is not
obeyed. The probe's three reproductions, each refused: a planted toml overwriting a file of the
planter's choice through -o; a planted endpoints file's hosts.extravars running a command
(ProxyCommand) in `drift --only hosts`; an endpoints file's password_env sending any environment
variable to a server of its choice in `drift --only switches`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.cli_runner import run_cli
from tests.conftest import example

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another owner needs root")


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`fabricgen ARGS` in this process (tests/cli_runner.py), in an environment without FABRICGEN_*."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("FABRICGEN_")} | (env or {})
    return run_cli(*args, env=full)


def _shared_dir(tmp_path: Path, name: str = "medium") -> Path:
    """A directory as on a shared bastion: others may write into it (sticky, as /tmp)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    intent = shared / "fabric.yaml"
    intent.write_text(example(name).read_text())
    return intent


def _plant(path: Path, text: str, how: str) -> None:
    """PATH holding TEXT as another user could have left it."""
    if how == "link":
        real = path.with_name("elsewhere.toml")
        real.write_text(text)
        os.chown(real, NOBODY, NOBODY)
        path.symlink_to(real)
        return
    path.write_text(text)
    if how == "nobody":
        os.chown(path, NOBODY, NOBODY)
    else:
        path.chmod(int(how, 8))


PLANTINGS = [pytest.param("nobody", "take it over", marks=as_root), ("0666", "chmod go-w"), ("0664", "chmod go-w"),
             ("0646", "chmod go-w"), pytest.param("link", "symbolic link", marks=as_root)]


@pytest.mark.parametrize(("how", "fix"), PLANTINGS)
def test_a_planted_config_cannot_overwrite_a_file(tmp_path, how, fix):
    intent = _shared_dir(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file\n")
    _plant(intent.parent / "fabricgen.toml", f'[defaults.validate]\noutput = "{victim}"\n', how)
    done = run("validate", str(intent))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: {intent.parent / 'fabricgen.toml'}: refused: ") and fix in done.stderr
    assert victim.read_text() == "the user's own file\n"


@as_root
def test_a_config_named_in_fabricgen_config_is_held_to_the_same_rule(tmp_path):
    intent = _shared_dir(tmp_path)
    named = tmp_path / "ops.toml"
    named.write_text('[defaults.validate]\nformat = "json"\n')
    os.chown(named, NOBODY, NOBODY)
    done = run("validate", str(intent), env={"FABRICGEN_CONFIG": str(named)})
    assert done.returncode == 2 and "refused: owned by uid 65534" in done.stderr


def test_the_config_applied_is_named_on_stderr(tmp_path):
    intent = _shared_dir(tmp_path)
    (intent.parent / "fabricgen.toml").write_text('[defaults.validate]\nformat = "json"\n')
    done = run("validate", str(intent))
    assert done.returncode == 0 and json.loads(done.stdout)["ok"] is True
    assert done.stderr == f"fabricgen: using config {intent.parent / 'fabricgen.toml'}\n"
    assert run("validate", str(example("medium"))).stderr == ""     # none applies: nothing said


def _proxy_endpoints(marker: Path) -> str:
    return yaml.safe_dump({"hosts": {"user": "root", "extravars": {
        "ansible_ssh_common_args": f"-o ProxyCommand='touch {marker}'"}}})


@pytest.mark.parametrize("how", [pytest.param("nobody", marks=as_root), "0666"])
def test_a_planted_endpoints_file_runs_no_command(tmp_path, how):
    intent = _shared_dir(tmp_path)
    marker = tmp_path / "proxy-ran"
    _plant(intent.parent / "endpoints.yml", _proxy_endpoints(marker), how)
    # through a toml the user wrote, and on the command line: the endpoints file itself is refused
    (intent.parent / "fabricgen.toml").write_text('endpoints = "endpoints.yml"\n')
    done = run("drift", str(intent), "--only", "hosts", "--format", "json")
    assert done.returncode == 1 and not marker.exists()
    # refused while the command line is parsed (issue 36: an unusable --endpoints is one line), before
    # any device is contacted
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "endpoints file refused" in errors[0] and done.stdout == ""


def test_password_env_outside_the_allow_list_is_refused(tmp_path):
    intent = _shared_dir(tmp_path, "small")
    endpoints = intent.parent / "endpoints.yml"
    # the probe's own SSH server would sit at this address; nothing need listen to prove the refusal
    endpoints.write_text(yaml.safe_dump({"password_env": "PROBE_SECRET", "switches": {
        "small-leaf-1": {"host": "127.0.0.1", "port": 9, "username": "x"}}}))
    done = run("drift", str(intent), "--only", "switches", "--format", "json", "--endpoints", str(endpoints),
               env={"PROBE_SECRET": "value-of-any-variable"})
    error = json.loads(done.stdout)["devices"]["small-leaf-1"]["error"]
    assert "password_env names PROBE_SECRET" in error and "FABRICGEN_PASSWORD_ENV_ALLOW" in error
    assert "value-of-any-variable" not in done.stdout + done.stderr
    # the user may allow it, from their own environment only
    allowed = run("drift", str(intent), "--only", "switches", "--format", "json", "--endpoints", str(endpoints),
                  env={"PROBE_SECRET": "v", "FABRICGEN_PASSWORD_ENV_ALLOW": "FABRICGEN_*,PROBE_SECRET"})
    assert "password_env" not in json.loads(allowed.stdout)["devices"]["small-leaf-1"]["error"]
