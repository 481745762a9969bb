"""`deploy --dry-run --diff` shows each change old -> new, as drift reads the switch (issue 36, item 5):
NVUE's own `nv config diff` names only the new value."""

from __future__ import annotations

import pytest

from generator.deploy.rollout import run_deploy
from tests.deploy_cli import deploy_cli
from tests.integration.small_fabric import small_fabric
from tests.integration.test_plan_apply_lab import hand_edit

pytestmark = pytest.mark.integration


def test_dry_run_diff_shows_old_and_new(tmp_path, lab_start, capsys, monkeypatch):
    fab = small_fabric(tmp_path, lab_start)
    for key, value in fab.env.items():
        monkeypatch.setenv(key, value)
    assert run_deploy(str(fab.intent), endpoints=fab.endpoints, only="switches", yes=True).exit_code == 0
    hand_edit(fab.lab, "tiny-spine-2", "nv set interface swp1 link mtu 1500", "nv set interface swp2 link mtu 9000",
              "nv config apply -y")
    before = fab.running("tiny-spine-2")

    done = deploy_cli(fab.intent, endpoints=fab.endpoints, only="switches", dry_run=True, show_diff=True)
    out = done.stdout
    assert done.returncode == 0, out
    lines = out.splitlines()
    start = lines.index(next(ln for ln in lines if ln.startswith("--- tiny-spine-2 (")))
    assert lines[start + 1:start + 3] == ["  ~ interface.swp1.link.mtu: 1500 -> 9216",
                                          "  ~ interface.swp2.link.mtu: 9000 -> 9216"]
    assert "--- tiny-leaf-1" not in out and "--- tiny-spine-1" not in out      # in sync: nothing to show
    assert fab.running("tiny-spine-2") == before
