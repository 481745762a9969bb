"""The SONiC provisioning scripts of the kit, run against fake switch tools (contract section 4:
`show version`, `sonic-cfggen -d --var-json TABLE`, `config load -y F`, `config save -y`,
`logger`, `hostname`): the release gate refuses another release with one line before anything
changes; FEATURE rows saved before the configdb-json reload come back after it, then the config
is saved."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from generator.day0.kit import build_kit, write_kit
from tests.day0_support import URL, compiled, inventory

FAKES = {
    "show": """\
        #!/bin/bash
        [ "$1" = "version" ] || exit 2
        echo ""
        echo "SONiC Software Version: SONiC.$FAKE_BUILD"
        echo "Distribution: Debian 12.7"
        """,
    "hostname": """\
        #!/bin/bash
        echo sw1
        """,
    "sonic-cfggen": """\
        #!/bin/bash
        [ "$1 $2" = "-d --var-json" ] || exit 2
        if [ -f "$FAKE_DB/$3.json" ]; then cat "$FAKE_DB/$3.json"; else echo '{}'; fi
        """,
    "config": """\
        #!/bin/bash
        echo "config $1 $2" >> "$FAKE_DIR/calls"
        if [ "$1" = "load" ]; then
          python3 - "$3" "$FAKE_DB/FEATURE.json" <<'EOF'
        import json, sys
        new = json.load(open(sys.argv[1]))["FEATURE"]
        db = json.load(open(sys.argv[2]))
        for row, fields in new.items():
            db.setdefault(row, {}).update(fields)      # config load merges field by field
        json.dump(db, open(sys.argv[2], "w"))
        EOF
        fi
        """,
    "logger": """\
        #!/bin/bash
        [ "$1" = "-t" ] && shift 2
        echo "$*" >> "$FAKE_DIR/log"
        """,
}


@pytest.fixture()
def switch(tmp_path: Path) -> dict:
    text, plan = compiled("medium-sonic")
    kit = write_kit(build_kit(plan, text, inventory(plan), URL, "eth0"), tmp_path / "kit")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in FAKES.items():
        (bin_dir / name).write_text(textwrap.dedent(body))
        (bin_dir / name).chmod(0o755)
    python_dir = Path(sys.executable).parent
    db = tmp_path / "db"
    db.mkdir()
    (db / "DEVICE_METADATA.json").write_text(json.dumps({"localhost": {"mac": "1c:34:da:00:00:01",
                                                                       "platform": "x86_64-nvidia_sn5600-r0"}}))
    env = {"PATH": f"{bin_dir}:{python_dir}:/usr/bin:/bin", "FAKE_DIR": str(tmp_path), "FAKE_DB": str(db),
           "FAKE_BUILD": "202411.1-abc", "TMPDIR": str(tmp_path)}
    return {"kit": kit, "env": env, "dir": tmp_path, "db": db}


def _run(switch: dict, rel: str, **env: str) -> subprocess.CompletedProcess:
    path = switch["kit"] / "http" / rel
    interpreter = "bash" if rel.endswith(".sh") else "python3"
    first = path.read_text().splitlines()[0]
    assert first == ("#!/bin/bash" if interpreter == "bash" else "#!/usr/bin/python3")
    return subprocess.run([interpreter, str(path)], capture_output=True, text=True,
                          env={**switch["env"], **env}, timeout=60)


def _lines(switch: dict, name: str) -> list[str]:
    path = switch["dir"] / name
    return path.read_text().splitlines() if path.exists() else []


def test_gate_passes_the_fabrics_release(switch: dict) -> None:
    r = _run(switch, "ztp/sonic-release-gate.sh")
    assert r.returncode == 0, r.stderr
    assert _lines(switch, "log") == ["release gate passed: SONiC 202411 (SONiC.202411.1-abc)"]


@pytest.mark.parametrize("build", ["202505.3-def", "master.123-abc"])
def test_gate_refuses_another_release(switch: dict, build: str) -> None:
    r = _run(switch, "ztp/sonic-release-gate.sh", FAKE_BUILD=build)
    assert r.returncode != 0
    [line] = _lines(switch, "log")
    running = build.split(".")[0] if build[0].isdigit() else "unknown"    # a master build is no release
    assert line.startswith(f"refusing: sw1 runs SONiC {running} (SONiC.{build}), the fabric is rendered for "
                           "SONiC 202411 (switch_os.version); nothing changed")
    assert _lines(switch, "calls") == []


def test_gate_is_shellcheck_clean(switch: dict) -> None:
    path = switch["kit"] / "http/ztp/sonic-release-gate.sh"
    assert subprocess.run(["bash", "-n", str(path)]).returncode == 0
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed")
    r = subprocess.run(["shellcheck", "--severity=style", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def test_feature_rows_survive_the_reload_and_config_is_saved(switch: dict) -> None:
    device = {"lldp": {"state": "enabled", "auto_restart": "enabled"}, "sflow": {"state": "disabled"}}
    (switch["db"] / "FEATURE.json").write_text(json.dumps(device))
    r = _run(switch, "ztp/sonic-feature-save.py")
    assert r.returncode == 0, r.stderr
    # section 03 (configdb-json, config reload): FEATURE becomes the rendered file's
    rendered = json.loads((switch["kit"] / "http/switches").glob("*/config_db.json").__next__().read_text())
    (switch["db"] / "FEATURE.json").write_text(json.dumps(rendered.get("FEATURE", {"lldp": {"state": "disabled"}})))
    r = _run(switch, "ztp/sonic-feature-restore.py")
    assert r.returncode == 0, r.stderr
    after = json.loads((switch["db"] / "FEATURE.json").read_text())
    for row, fields in device.items():
        assert {k: after[row][k] for k in fields} == fields      # the switch's rows and fields win
    assert _lines(switch, "calls") == ["config load -y", "config save -y"]
    assert _lines(switch, "log")[-1] == "kept the switch's 2 FEATURE row(s) over the day-0 config_db and saved the config"
    assert not list(switch["dir"].glob("fabricgen-ztp-*"))    # state and staged files removed


def test_restore_without_saved_rows_fails_and_saves_nothing(switch: dict) -> None:
    r = _run(switch, "ztp/sonic-feature-restore.py")
    assert r.returncode != 0
    assert _lines(switch, "calls") == []
    assert _lines(switch, "log")[-1].startswith("error: cannot read the FEATURE rows section 02 saved")


def test_no_base_mac_stops_before_anything(switch: dict) -> None:
    (switch["db"] / "DEVICE_METADATA.json").write_text(json.dumps({"localhost": {}}))
    r = _run(switch, "ztp/sonic-feature-save.py")
    assert r.returncode != 0
    assert _lines(switch, "log") == ["error: DEVICE_METADATA.localhost.mac is empty: let the switch finish its "
                                     "first boot, then `ztp run -y`"]
