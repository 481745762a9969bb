"""Issue 15, finding 5: a secret set on a lab switch (an OSPF md5-key) reaches no drift
report in full, only as `<redacted sha256:…>`; backups are 0600 in 0700 directories; a dry-run
diff of a secret prints its hash. The original commands: `fabricgen drift --format
table|json|markdown` and `fabricgen deploy --dry-run`."""

from __future__ import annotations

import hashlib
import json
import stat

import pytest
import yaml

from generator.lab.control import LabDevice
from tests.cli_runner import run_cli
from tests.deploy_cli import deploy_cli
from tests.integration.test_drift_lab import INTENT, SWITCHES, push

pytestmark = pytest.mark.integration

MD5 = "Ospf-Md5-S3cret"


def mark(secret: str) -> str:
    return f"<redacted sha256:{hashlib.sha256(secret.encode()).hexdigest()[:12]}>"


@pytest.fixture
def fabric(tmp_path, lab_start):
    from generator.checks.runner import run_checks
    from generator.intent.loader import load_intent
    from generator.render.output import render_files

    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT)
    loaded = load_intent(intent)
    files = render_files(run_checks(loaded).plan, loaded.text)
    lab = lab_start([LabDevice(name, "cumulus", "5.11") for name in SWITCHES])
    return intent, files, lab


def test_switch_secrets_are_redacted_in_every_drift_format(fabric, capsys, tmp_path, monkeypatch):
    intent, files, lab = fabric
    # the lab's `nv set` reads `md5-key X` as a map key and its model has no string BGP `password`
    # (SONiC's auth_password is in tests/unit/test_redact.py): the md5-key as a config document
    doc = yaml.load(files["switches/tiny-spine-1/startup.yaml"], Loader=yaml.BaseLoader)
    tree = next(d["set"] for d in doc if "set" in d)
    tree["interface"]["swp1"].setdefault("router", {})["ospf"] = {"authentication": {"enable": "on",
                                                                                     "md5-key": MD5}}
    push(lab, files, [n for n in SWITCHES if n != "tiny-spine-1"])
    push(lab, {"switches/tiny-spine-1/startup.yaml": yaml.safe_dump(doc, sort_keys=False)}, ["tiny-spine-1"])
    outputs = {}
    for fmt in ("table", "json", "markdown", "prometheus"):
        done = run_cli("drift", str(intent), "--endpoints", str(lab.directory / "endpoints.yml"), "--only",
                       "switches", "--format", fmt)
        assert done.returncode == 3, done
        outputs[fmt] = done.stdout + done.stderr
        assert MD5 not in outputs[fmt], fmt
    doc = json.loads(outputs["json"])
    text = json.dumps(doc["devices"]["tiny-spine-1"])
    # each secret is there as its hash: a change stays visible
    assert mark(MD5) in text
    # markdown shows the marker escaped (safe_text: no raw "<" reaches a PR comment)
    assert "&lt;redacted sha256:" in outputs["markdown"] and "<redacted sha256:" in outputs["table"]
    assert "md5-key" in outputs["table"] or "router" in outputs["table"]

    # deploy --dry-run prints the switch's diff (removing them): hashes only; backups private
    backups = tmp_path / "backups"
    monkeypatch.setenv("FABRICGEN_BACKUP_DIR", str(backups))
    done = deploy_cli(intent, endpoints=str(lab.directory / "endpoints.yml"), only="switches",
                      dry_run=True, yes=True, show_diff=True)
    assert done.returncode == 0, done
    assert MD5 not in done.stdout + done.stderr
    runs = [p for p in (backups / "tiny").iterdir() if p.is_dir()]
    assert runs
    assert stat.S_IMODE((backups / "tiny").stat().st_mode) == 0o700
    for run in runs:
        assert stat.S_IMODE(run.stat().st_mode) == 0o700
        saved = list(run.glob("*.yaml"))
        assert len(saved) == len(SWITCHES)
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in saved)
