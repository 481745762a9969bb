"""The saved plan file (gitops/saved_plan.py): deterministic, private, and hostile input when read back."""

from __future__ import annotations

import json
import os
import stat

import pytest

from generator.gitops.saved_plan import (
    MAX_PLAN_FILE_BYTES,
    PlanFileError,
    moved,
    plan_document,
    read_plan_file,
    render_sha256,
    write_plan_file,
)

INTENT = "fabric: {name: t}\n"
FILES = {"switches/leaf-1/startup.yaml": "- set: {}\n", "hosts/gpu001/fabricgen-roce-qos@.service": "[Unit]\n",
         "inventory.yml": "all: {}\n", "manifest.json": "{}\n"}


def document(**kw) -> str:
    args = {"version": "0.1.0", "fabric": "t", "switch_os": "cumulus", "intent_text": INTENT, "files": FILES,
            "running": {"leaf-1": "a" * 64}, **kw}
    return plan_document(**args)


def saved(tmp_path, text: str | None = None):
    path = tmp_path / "p.json"
    path.write_text(document() if text is None else text)
    return path


def test_document_is_deterministic_and_leaves_the_manifest_out():
    assert document() == document(files=dict(reversed(list(FILES.items()))))
    doc = json.loads(document())
    assert "manifest.json" not in doc["files"] and doc["render_sha256"] == render_sha256(FILES)


def test_written_0600_whatever_the_umask_and_read_back(tmp_path):
    old = os.umask(0)
    try:
        write_plan_file(tmp_path / "p.json", document())
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "p.json").stat().st_mode) == 0o600
    plan = read_plan_file(tmp_path / "p.json")
    assert plan.switch_file("leaf-1") == "- set: {}\n" and plan.running_sha256 == {"leaf-1": "a" * 64}


def test_a_link_at_the_target_is_replaced_not_followed(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    (tmp_path / "p.json").symlink_to(victim)
    write_plan_file(tmp_path / "p.json", document())
    assert victim.read_text() == "keep\n" and not (tmp_path / "p.json").is_symlink()


def test_a_candidate_edited_inside_the_plan_file_is_refused(tmp_path):
    doc = json.loads(document())
    doc["files"]["switches/leaf-1/startup.yaml"] = "- set: {system: {hostname: evil}}\n"
    with pytest.raises(PlanFileError, match="candidates were edited after the plan was made"):
        read_plan_file(saved(tmp_path, json.dumps(doc)))


@pytest.mark.parametrize(("change", "named"), [
    (lambda d: d.update(format="terraform"), "`format`"),
    (lambda d: d.update(extra=1), "unknown key 'extra'"),
    (lambda d: d.pop("intent_sha256"), "`intent_sha256` is missing"),
    (lambda d: d.update(render_sha256="x"), "`render_sha256` is not a sha256"),
    (lambda d: d["files"].update({"../../etc/passwd": "x"}), "'../../etc/passwd'"),
    (lambda d: d["files"].update({"switches/a/b/c": "x"}), "'switches/a/b/c'"),
    (lambda d: d["files"].update({"inventory.yml": 1}), "'inventory.yml'"),
    (lambda d: d.update(running_sha256={"leaf\x1b[2J": "a" * 64}), r"leaf\\x1b\[2J"),
    (lambda d: d.update(fabricgen="0.1\n"), "`fabricgen` is not a version"),
])
def test_every_field_is_checked(tmp_path, change, named):
    doc = json.loads(document())
    change(doc)
    with pytest.raises(PlanFileError, match=named) as info:
        read_plan_file(saved(tmp_path, json.dumps(doc)))
    assert "\n" not in str(info.value) and "\x1b" not in str(info.value)


def test_not_a_plan_file(tmp_path):
    with pytest.raises(PlanFileError, match="not JSON"):
        read_plan_file(saved(tmp_path, "[" * 100_000))
    with pytest.raises(PlanFileError, match="not a regular file"):
        read_plan_file(tmp_path)
    with pytest.raises(PlanFileError, match="cannot read the plan file: No such file"):
        read_plan_file(tmp_path / "nope.json")
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(MAX_PLAN_FILE_BYTES + 1)
    with pytest.raises(PlanFileError, match="larger than any plan file"):
        read_plan_file(big)


def test_moved_names_each_thing_that_moved(tmp_path):
    plan = read_plan_file(saved(tmp_path))
    assert moved(plan, intent_path="f.yaml", intent_text=INTENT, files=FILES, version="0.1.0", fabric="t") == []
    files = {**FILES, "switches/leaf-1/startup.yaml": "- set: {router: {}}\n"}
    lines = moved(plan, intent_path="f.yaml", intent_text=INTENT + "# x\n", files=files, version="0.2.0",
                  fabric="t")
    assert [ln.split(" ")[0] for ln in lines] == ["fabricgen", "intent", "render:"]
    assert "made by fabricgen 0.1.0, this is 0.2.0" in lines[0]
    assert lines[2] == "render: 1 rendered file(s) differ from the plan's: switches/leaf-1/startup.yaml"


def test_a_plan_that_could_not_be_made_saves_nothing(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from generator.cli import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / "fabric.yaml").write_text("fabric: {name: t}\ntopology: {kind: leaf-spine, nodes: 2}\n")
    done = CliRunner().invoke(app, ["plan", "fabric.yaml", "--against", "no-such-dir", "--out", "p.json"])
    assert done.exit_code == 1 and not (tmp_path / "p.json").exists()
    (tmp_path / "e.yml").write_text("switches: {}\n")
    done = CliRunner().invoke(app, ["plan", "fabric.yaml", "--against", "no-such-dir", "--endpoints", "e.yml"])
    assert done.exit_code == 2 and "add --out" in done.output      # --endpoints is read only for the plan file
