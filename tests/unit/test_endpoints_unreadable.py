"""An --endpoints file that cannot be read is one line and exit 1 in every command that takes it, before
any switch is contacted or counted unknown (issue 36: `verify --endpoints nope.yml` printed 230 rows)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from generator.cli import app

INTENT = "fabric: {name: t}\ntopology: {kind: leaf-spine, nodes: 2}\n"
COMMANDS = [["deploy"], ["drift"], ["verify"], ["hosts", "discover", "-o", "found.yml"],
            ["plan", "--against", "before", "--out", "p.json"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize(("content", "says"), [
    (None, "cannot read endpoints file nope.yml: No such file or directory; point --endpoints"),
    ("switches: [\n", "not valid YAML"),
    ("- leaf01\n", "not an endpoints file"),
])
def test_unreadable_endpoints_is_one_line_and_exit_1(tmp_path, monkeypatch, command, content, says):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fabric.yaml").write_text(INTENT)
    if content is not None:
        (tmp_path / "nope.yml").write_text(content)
    result = CliRunner().invoke(app, [*command[:2 if command[0] == "hosts" else 1], "fabric.yaml",
                                      *command[2 if command[0] == "hosts" else 1:], "--endpoints", "nope.yml"])
    assert result.exit_code == 1, result.output
    assert result.output.count("\n") == 1 and result.output.startswith("error: --endpoints"), result.output
    assert says in result.output
    assert not (tmp_path / "p.json").exists() and not (tmp_path / "found.yml").exists()


def test_the_environment_variable_is_checked_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fabric.yaml").write_text(INTENT)
    monkeypatch.setenv("FABRICGEN_ENDPOINTS", str(tmp_path / "gone.yml"))
    result = CliRunner().invoke(app, ["verify", "fabric.yaml"])
    assert result.exit_code == 1 and "gone.yml: No such file" in result.output and result.output.count("\n") == 1
