"""The conventions every command shares (issue 27): -h, --version, shell completion, --format names,
-o/--output, the old spellings as warned aliases, and fabricgen.toml's precedence."""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer.completion
import typer.main
from typer.testing import CliRunner

from generator.cli import app
from tests.cli_runner import run_cli
from tests.conftest import example

FABRICGEN = [sys.executable, "-m", "generator.cli"]
SMALL = example("small")


def run(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    import os

    full = {k: v for k, v in os.environ.items() if not k.startswith("FABRICGEN_")} | (env or {})
    # output and exit status only: in this process (tests/cli_runner.py)
    return run_cli(*args, env=full, cwd=cwd)


def _commands(command, path: tuple[str, ...] = ()):
    yield path
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(typer.main.get_command(app)))


def test_the_command_tree_is_the_one_documented() -> None:
    # the DESIGN.md table's commands, plus the lab/lock/hosts groups: a new command is -h tested too
    names = {" ".join(p) for p in COMMANDS}
    assert {"validate", "render", "plan", "deploy", "drift", "verify", "capacity", "schema", "day0", "acceptance",
            "lab up", "lab down", "lab ztp", "lock status", "lock break", "hosts discover", "report"} <= names


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "fabricgen")
def test_every_command_accepts_h(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "-h"], prog_name="fabricgen")
    assert result.exit_code == 0, result.output
    assert "Usage: fabricgen" in result.output and "--help" in result.output and "-h" in result.output
    # value types in words, not Python annotations (issue 36, item 6)
    assert not re.search(r"<(str|bool|int|float|list\[str\])>", result.output), result.output


def test_help_names_value_types_in_words() -> None:
    deploy = CliRunner().invoke(app, ["deploy", "-h"], prog_name="fabricgen", terminal_width=200).output
    assert re.search(r"INTENT +PATH ", deploy) and re.search(r"--endpoints +PATH ", deploy)
    assert re.search(r"--only +TEXT ", deploy) and re.search(r"--dry-run +diff only", deploy)     # a flag: no value
    verify = CliRunner().invoke(app, ["verify", "-h"], prog_name="fabricgen", terminal_width=200).output
    assert re.search(r"--interval +N ", verify)


def test_version_is_the_installed_package_version() -> None:
    done = run("--version")
    assert done.returncode == 0
    assert done.stdout == f"fabricgen {importlib.metadata.version('fabricgen')}\n"


def test_shell_completion_offers_commands_and_format_names(monkeypatch) -> None:
    runner = CliRunner()
    # --show-completion is a flag: the script is for the shell typer detects above this process
    # (shellingham walks the process tree), and a `make` recipe runs the suite under /bin/sh,
    # which typer has no script for. The user here runs bash.
    monkeypatch.setattr(typer.completion, "_get_shell_name", lambda: "bash")
    env = {"_FABRICGEN_COMPLETE": "complete_bash", "COMP_WORDS": "fabricgen dri", "COMP_CWORD": "1"}
    assert runner.invoke(app, [], prog_name="fabricgen", env=env).output.split() == ["drift"]
    env |= {"COMP_WORDS": "fabricgen verify fabric.yaml --format j", "COMP_CWORD": "4"}
    assert runner.invoke(app, [], prog_name="fabricgen", env=env).output.split() == ["json", "junit"]
    script = runner.invoke(app, ["--show-completion"], prog_name="fabricgen")
    assert script.exit_code == 0 and "_FABRICGEN_COMPLETE=complete_bash" in script.output


@pytest.mark.parametrize(("args", "machine"), [
    (["validate", str(SMALL)], True),
    (["capacity", str(SMALL)], True),
])
def test_format_table_and_json_everywhere(args: list[str], machine: bool) -> None:
    table = run(*args, "--format", "table")
    text = run(*args, "--format", "text")          # the old name of table where it was the default
    default = run(*args)
    assert table.returncode == text.returncode == default.returncode == 0, table.stderr + text.stderr
    assert table.stdout == text.stdout == default.stdout
    assert "deprecated" not in text.stderr
    doc = json.loads(run(*args, "--format", "json").stdout)
    assert isinstance(doc, dict)
    bad = run(*args, "--format", "yaml")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [bad.stderr.strip()] and "--format 'yaml'" in bad.stderr


def test_plan_takes_table_as_its_text(tmp_path) -> None:
    out = tmp_path / "r"
    assert run("render", str(SMALL), "-o", str(out)).returncode == 0
    table, text = run("plan", str(SMALL), "--against", str(out)), run("plan", str(SMALL), "--against", str(out),
                                                                          "--format", "text")
    assert table.returncode == text.returncode == 0 and table.stdout == text.stdout != ""


def test_capacity_output_dir_is_a_warned_alias_of_o(tmp_path) -> None:
    new = run("capacity", str(SMALL), "-o", str(tmp_path / "new"))
    old = run("capacity", str(SMALL), "--output-dir", str(tmp_path / "old"))
    assert new.returncode == old.returncode == 0
    assert (tmp_path / "new" / "bom.csv").read_text() == (tmp_path / "old" / "bom.csv").read_text()
    assert "deprecated" not in new.stderr
    assert [ln for ln in old.stderr.splitlines() if "deprecated" in ln] == [
        "warning: --output-dir is deprecated: use -o/--output"]
    both = run("capacity", str(SMALL), "-o", str(tmp_path / "a"), "--output-dir", str(tmp_path / "b"))
    assert both.returncode == 2 and not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_hosts_discover_out_is_a_warned_alias_of_o(tmp_path) -> None:
    # an endpoints file without hosts: refused before any SSH, after the option was read
    endpoints = tmp_path / "endpoints.yml"
    endpoints.write_text("switches: {}\n")
    new = run("hosts", "discover", str(SMALL), "-o", str(tmp_path / "d.yaml"), "--endpoints", str(endpoints))
    old = run("hosts", "discover", str(SMALL), "--out", str(tmp_path / "d.yaml"), "--endpoints", str(endpoints))
    assert new.returncode == old.returncode == 1
    assert "lists no hosts" in new.stderr and "lists no hosts" in old.stderr
    assert "deprecated" not in new.stderr
    assert old.stderr.splitlines()[0] == "warning: --out is deprecated: use -o/--output"
    missing = run("hosts", "discover", str(SMALL))
    assert missing.returncode == 2 and "give -o FILE" in missing.stderr


def test_drift_and_verify_take_o_for_their_report(tmp_path) -> None:
    # an endpoints file that lists none of the switches: every switch unknown (exit 1), no connection made
    (tmp_path / "none.yml").write_text("switches: {}\n")
    for command in ("drift", "verify"):
        report = tmp_path / f"{command}.json"
        done = run(command, str(SMALL), "--only", "switches", "--endpoints", str(tmp_path / "none.yml"),
                   "--format", "json", "-o", str(report))
        assert done.returncode == 1, done.stderr
        assert json.loads(report.read_text())["summary"]


def test_validate_plan_and_schema_take_o_for_what_they_print(tmp_path) -> None:
    rendered = tmp_path / "r"
    assert run("render", str(SMALL), "-o", str(rendered)).returncode == 0
    for args, name in ((["validate", str(SMALL), "--format", "json"], "v.json"), (["schema"], "s.json"),
                       (["plan", str(SMALL), "--against", str(rendered), "--format", "json"], "p.json")):
        to_file, to_stdout = run(*args, "-o", str(tmp_path / name)), run(*args)
        assert to_file.returncode == to_stdout.returncode == 0, to_file.stderr
        # the same document, in the file instead of on stdout
        assert to_file.stdout == "" and (tmp_path / name).read_text() == to_stdout.stdout
    assert json.loads((tmp_path / "v.json").read_text())["ok"] is True
    # a plan that could not run (exit 1, its error on stderr) leaves the last good file alone
    kept = (tmp_path / "p.json").read_text()
    failed = run("plan", str(SMALL), "--against", str(tmp_path / "nothing"), "-o", str(tmp_path / "p.json"))
    assert failed.returncode == 1 and (tmp_path / "p.json").read_text() == kept


# --- fabricgen.toml ---------------------------------------------------------------------------
def _intent_with_config(tmp_path: Path, config: str) -> Path:
    intent = tmp_path / "fabric.yaml"
    intent.write_text(SMALL.read_text())
    (tmp_path / "fabricgen.toml").write_text(config)
    return intent


def _endpoints_used(done: subprocess.CompletedProcess) -> str:
    """The endpoints file drift tried (each candidate does not exist: one error line naming it, exit 1),
    after the one line naming the config file applied, when one was (issue 34)."""
    errors = [line for line in done.stderr.splitlines() if not line.startswith("fabricgen: using config ")]
    assert done.returncode == 1 and done.stdout == "" and len(errors) == 1, done.stderr
    return re.search(r"cannot read endpoints file (.+?): No such file", done.stderr).group(1)


def test_endpoints_precedence_command_line_environment_config(tmp_path) -> None:
    intent = _intent_with_config(tmp_path, 'endpoints = "from-config.yml"\n')
    args = ["drift", str(intent), "--only", "switches", "--format", "json"]
    assert _endpoints_used(run(*args)) == str(tmp_path / "from-config.yml")     # relative to the file
    env = {"FABRICGEN_ENDPOINTS": "/nowhere/from-env.yml"}
    assert _endpoints_used(run(*args, env=env)) == "/nowhere/from-env.yml"
    assert _endpoints_used(run(*args, "--endpoints", "/nowhere/cli.yml", env=env)) == "/nowhere/cli.yml"


def test_fabricgen_config_names_another_file(tmp_path) -> None:
    elsewhere = tmp_path / "site" / "ops.toml"
    elsewhere.parent.mkdir()
    elsewhere.write_text('endpoints = "site-endpoints.yml"\n')
    intent = _intent_with_config(tmp_path, 'endpoints = "beside.yml"\n')
    done = run("drift", str(intent), "--only", "switches", "--format", "json", env={"FABRICGEN_CONFIG": str(elsewhere)})
    assert _endpoints_used(done) == str(tmp_path / "site" / "site-endpoints.yml")
    gone = run("validate", str(intent), env={"FABRICGEN_CONFIG": str(tmp_path / "gone.toml")})
    assert gone.returncode == 2 and gone.stderr.count("\n") == 1 and "FABRICGEN_CONFIG" in gone.stderr


def test_command_defaults_from_the_config_and_the_command_line_wins(tmp_path) -> None:
    intent = _intent_with_config(tmp_path, '[defaults.validate]\nformat = "json"\n')
    assert json.loads(run("validate", str(intent)).stdout)["ok"] is True
    table = run("validate", str(intent), "--format", "table")
    assert table.stdout.rstrip().endswith("- ok")


def test_state_dir_from_the_config_unless_the_environment_sets_it(tmp_path) -> None:
    intent = _intent_with_config(tmp_path, 'state_dir = "state"\n')
    done = run("lock", "status", str(intent))
    assert done.returncode == 0 and f"lock file {tmp_path / 'state' / 'small'}" in done.stdout
    done = run("lock", "status", str(intent), env={"FABRICGEN_STATE_DIR": str(tmp_path / "env")})
    assert f"lock file {tmp_path / 'env' / 'small'}" in done.stdout


@pytest.mark.parametrize(("config", "where", "words"), [
    ('endpoints = "e.yml"\nendpiont = "x"\n', ":2:", "unknown key endpiont: did you mean endpoints?"),
    ('[defaults.drfit]\nformat = "json"\n', ":1:", "unknown key defaults.drfit: did you mean drift?"),
    ('[defaults.drift]\nformt = "json"\n', ":2:", "unknown key defaults.drift.formt: did you mean format?"),
    ('[defaults.verify]\ninterval = "soon"\n', ":2:", "defaults.verify.interval:"),
    ('[defaults.drift]\nformat = "xml"\n', ":2:", "defaults.drift.format: --format 'xml': use table, json, prometheus or markdown"),
    ('[defaults.deploy]\nyes = true\n', ":2:", "give --yes on the command line"),
    ('endpoints = [1\n', "", "not valid TOML"),
])
def test_a_bad_config_is_one_line_naming_file_and_key(tmp_path, config: str, where: str, words: str) -> None:
    intent = _intent_with_config(tmp_path, config)
    out = tmp_path / "out"
    done = run("render", str(intent), "-o", str(out))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: {tmp_path / 'fabricgen.toml'}{where}") and words in done.stderr
    assert not out.exists()


def test_help_works_whatever_the_config_says(tmp_path) -> None:
    intent = _intent_with_config(tmp_path, "nonsense = 1\n")
    assert run("render", str(intent), "-h").returncode == 0
