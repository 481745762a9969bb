"""The live Nautobot the sot tests run against: it answers its API with the run's token only, stores
and returns objects, and keeps its secrets out of its logs."""

from __future__ import annotations

import re
import stat

import pytest
import requests

from tests.support.nautobot_service import CONSTRAINTS

pytestmark = pytest.mark.xdist_group("nautobot")


def _pinned_version() -> str:
    match = re.search(r"^nautobot==(\S+)$", CONSTRAINTS.read_text(), re.MULTILINE)
    assert match, f"{CONSTRAINTS} pins no nautobot"
    return match.group(1)


def test_status_answers_with_the_token_and_only_with_it(nautobot):
    answer = requests.get(f"{nautobot.url}/api/status/", headers=nautobot.headers, timeout=30)
    assert answer.status_code == 200, answer.text[:300]
    assert answer.json()["nautobot-version"] == _pinned_version()

    anonymous = requests.get(f"{nautobot.url}/api/dcim/devices/", headers={"Accept": "application/json"},
                             timeout=30)
    assert anonymous.status_code == 403
    wrong = requests.get(f"{nautobot.url}/api/dcim/devices/", timeout=30,
                         headers={"Authorization": "Token " + "0" * 40, "Accept": "application/json"})
    assert wrong.status_code == 403


def test_an_object_created_over_rest_reads_back(nautobot):
    fabric = nautobot.fresh_fabric("smoke")
    assert re.fullmatch(r"[a-z0-9-]+", fabric) and fabric != nautobot.fresh_fabric("smoke")
    name = f"fabricgen-{fabric}"
    created = requests.post(f"{nautobot.url}/api/dcim/manufacturers/", headers=nautobot.headers, timeout=30,
                            json={"name": name, "description": "made by the sot smoke test"})
    assert created.status_code == 201, created.text[:300]

    found = requests.get(f"{nautobot.url}/api/dcim/manufacturers/", headers=nautobot.headers, timeout=30,
                         params={"name": name})
    assert found.status_code == 200
    results = found.json()["results"]
    assert [(r["id"], r["name"], r["description"]) for r in results] == [
        (created.json()["id"], name, "made by the sot smoke test")]


def test_token_file_is_private_and_no_log_holds_a_secret(nautobot):
    assert re.fullmatch(r"[0-9a-f]{40}", nautobot.token)
    assert stat.S_IMODE(nautobot.token_file.stat().st_mode) == 0o600
    secrets = [nautobot.token, (nautobot.state_dir / "admin-password").read_text().strip()]
    logs = sorted((nautobot.state_dir / "logs").iterdir())
    assert any(p.name == "nautobot.log" for p in logs)
    for log in logs:
        text = log.read_text(errors="replace")
        assert not [s for s in secrets if s in text], f"{log.name} holds a secret"
