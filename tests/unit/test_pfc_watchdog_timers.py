"""PFC watchdog timers per NOS (issue 23, item 11): SONiC's own defaults, intent overrides, FG215.

Expected defaults come from sonic-utilities pfcwd/main.py (DEFAULT_DETECTION_TIME,
DEFAULT_RESTORATION_TIME, DEFAULT_POLL_INTERVAL = 200, DEFAULT_ACTION = 'drop'), reviewed by
hand, not from the renderer; the NVUE keys from the QoS page (`qos pfc-watchdog
polling-interval`, `robustness`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from generator.checks.runner import run_checks
from generator.intent.loader import load_intent
from generator.render.output import render_files
from tests.conftest import example


def _intent(tmp_path: Path, base: str, timers: str) -> Path:
    text = example(base).read_text()
    assert "\nroce:\n" in text
    path = tmp_path / "fabric.yaml"
    path.write_text(text.replace("\nroce:\n", f"\nroce:\n  pfc_watchdog_timers: {timers}\n", 1))
    return path


def _rendered(path: Path) -> dict[str, str]:
    loaded = load_intent(path)
    result = run_checks(loaded)
    assert not result.errors, [f.message for f in result.errors]
    return render_files(result.plan, loaded.text)


def _pfc_wd(files: dict[str, str]) -> list[dict]:
    return [json.loads(text)["PFC_WD"] for name, text in sorted(files.items()) if name.endswith("config_db.json")]


def test_sonic_renders_sonic_defaults(tmp_path):
    tables = _pfc_wd(_rendered(example("medium-sonic")))
    assert tables
    for table in tables:
        assert table.pop("GLOBAL") == {"POLL_INTERVAL": "200"}
        assert table and all(v == {"action": "drop", "detection_time": "200", "restoration_time": "200"}
                             for v in table.values())


def test_sonic_takes_the_intent_timers(tmp_path):
    files = _rendered(_intent(tmp_path, "medium-sonic", "{detection_ms: 400, restoration_ms: 2000, poll_ms: 500}"))
    for table in _pfc_wd(files):
        assert table.pop("GLOBAL") == {"POLL_INTERVAL": "500"}
        assert {v["detection_time"] for v in table.values()} == {"400"}
        assert {v["restoration_time"] for v in table.values()} == {"2000"}


def _fg215(tmp_path, base, timers):
    return [(f.path, f.message) for f in run_checks(load_intent(_intent(tmp_path, base, timers))).errors
            if f.code == "FG215"]


def test_sonic_poll_above_its_yang_range_is_fg215(tmp_path):
    [(path, message)] = _fg215(tmp_path, "medium-sonic", "{poll_ms: 1500}")
    assert path == "roce.pfc_watchdog_timers.poll_ms" and "100-1000" in message


def test_cumulus_renders_polling_interval_and_robustness(tmp_path):
    files = _rendered(_intent(tmp_path, "small", "{poll_ms: 200, detection_ms: 600}"))
    for name, text in files.items():
        if name.endswith("startup.yaml"):
            qos = yaml.safe_load(text)[1]["set"]["qos"]
            assert qos["pfc-watchdog"] == {"polling-interval": 200, "robustness": 3}
    files = _rendered(_intent(tmp_path, "small", "{detection_ms: 500}"))      # poll stays NVUE's 100 ms
    startup = next(t for n, t in files.items() if n.endswith("startup.yaml"))
    assert yaml.safe_load(startup)[1]["set"]["qos"]["pfc-watchdog"] == {"robustness": 5}


def test_cumulus_without_timers_renders_no_global_watchdog_keys():
    files = _rendered(example("small"))
    startup = next(t for n, t in files.items() if n.endswith("startup.yaml"))
    assert "pfc-watchdog" not in yaml.safe_load(startup)[1]["set"]["qos"]


@pytest.mark.parametrize(("timers", "path", "words"), [
    ("{restoration_ms: 300}", "roce.pfc_watchdog_timers.restoration_ms", "no PFC watchdog restoration"),
    ("{detection_ms: 250}", "roce.pfc_watchdog_timers.detection_ms", "use 200"),
    ("{poll_ms: 300, detection_ms: 1000}", "roce.pfc_watchdog_timers.detection_ms", "use 900"),
])
def test_cumulus_timers_nvue_cannot_take_are_fg215(tmp_path, timers, path, words):
    [(found, message)] = _fg215(tmp_path, "small", timers)
    assert found == path and words in message
