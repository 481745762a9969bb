"""Issue 34 finding 1: a pull request that only adds or changes fabricgen.toml got a plan saying
"0 changed"; the config chooses endpoints, passwords and backups, so the plan's risk names it."""

from __future__ import annotations

import json

import pytest

from generator.gitops.plan import report_text, run_plan
from generator.gitops.plan_sides import make_plan
from tests.integration.test_plan_git import commit, git, intent, repo  # noqa: F401 - the fixture

pytestmark = pytest.mark.integration


def test_a_config_file_alone_shows_in_the_risk_summary(repo):  # noqa: F811
    path = commit(repo, intent(), "base")
    (path.parent / "fabricgen.toml").write_text('endpoints = "/srv/other/endpoints.yml"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "only a config")

    result = make_plan(str(path), "HEAD~1")
    assert result.summary()["changed"] == 0 and result.risk.config == "added" and result.risk.any
    out = report_text(run_plan(str(path), against="HEAD~1", fmt="text"))
    assert "risk: fabricgen.toml added: it chooses endpoints, password sources" in out
    assert "fabricgen.toml added" in report_text(run_plan(str(path), against="HEAD~1", fmt="markdown"))
    assert json.loads(report_text(run_plan(str(path), against="HEAD~1", fmt="json")))["risk"]["config"] == "added"

    (path.parent / "fabricgen.toml").write_text('state_dir = "/tmp/lock"\n')
    assert make_plan(str(path), "HEAD").risk.config == "changed"
    (path.parent / "fabricgen.toml").unlink()
    assert make_plan(str(path), "HEAD").risk.config == "removed"
    assert make_plan(str(path), "HEAD~1").risk.config is None
