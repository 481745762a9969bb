"""The SONiC provisioning scripts of the kit, run against fake switch tools (contract section 4:
`show version`, `sonic-cfggen -y FILE --print-data | -d --var-json TABLE`, `curl`, `test -d`,
`config reload -f -y F`, `config save -y`, `logger`, `hostname`): the release gate refuses another
release with one line before anything changes; the provision plugin downloads and checks the
config_db, keeps the switch's platform, MAC and FEATURE rows, refuses a hwsku the switch cannot
run, reloads with -f and saves last (issue 32)."""

from __future__ import annotations

import hashlib
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
        if [ "$*" = "-y /etc/sonic/sonic_version.yml --print-data" ]; then
          [ -n "${FAKE_RELEASE:-}" ] || { echo "Error: no such file" >&2; exit 1; }
          printf '{"build_version": "SONiC.%s", "release": "%s"}\\n' "$FAKE_BUILD" "$FAKE_RELEASE"; exit 0
        fi
        [ "$1 $2" = "-d --var-json" ] || exit 2
        if [ -f "$FAKE_DB/$3.json" ]; then cat "$FAKE_DB/$3.json"; else echo '{}'; fi
        """,
    "curl": """\
        #!/bin/bash
        echo "curl $*" >> "$FAKE_DIR/calls"
        out=; url=
        while [ $# -gt 0 ]; do
          case "$1" in -o) out=$2; shift 2 ;; --retry) shift 2 ;; -*) shift ;; *) url=$1; shift ;; esac
        done
        cp "$FAKE_KIT/http/${url#"$FAKE_URL/"}" "$out"
        """,
    "test": """\
        #!/bin/bash
        [ "$1" = "-d" ] && [ -d "$FAKE_DIR/root$2" ]
        """,
    "config": """\
        #!/bin/bash
        echo "config $1 $2 $3" >> "$FAKE_DIR/calls"
        [ "$1" = "reload" ] && cp "$4" "$FAKE_DIR/reloaded.json"
        exit 0
        """,
    "logger": """\
        #!/bin/bash
        [ "$1" = "-t" ] && shift 2
        echo "$*" >> "$FAKE_DIR/log"
        """,
}


PLATFORM = "x86_64-nvidia_sn5600-r0"


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
    (db / "DEVICE_METADATA.json").write_text(json.dumps({"localhost": {
        "mac": "1c:34:da:00:00:01", "platform": PLATFORM, "hwsku": "ACS-SN5600"}}))
    # the image ships both SN5600 SKUs (device/mellanox/x86_64-nvidia_sn5600-r0/<SKU>)
    for sku in ("ACS-SN5600", "Mellanox-SN5600-O128"):
        (tmp_path / "root/usr/share/sonic/device" / PLATFORM / sku).mkdir(parents=True)
    env = {"PATH": f"{bin_dir}:{python_dir}:/usr/bin:/bin", "FAKE_DIR": str(tmp_path), "FAKE_DB": str(db),
           "FAKE_BUILD": "202411.1-abc", "FAKE_RELEASE": "202411", "TMPDIR": str(tmp_path),
           "FAKE_KIT": str(kit), "FAKE_URL": URL}
    name = sorted(p.name for p in (kit / "http/ztp").iterdir() if p.is_dir())[0]
    ztp = json.loads((kit / "http/ztp" / name / "ztp.json").read_text())["ztp"]
    return {"kit": kit, "env": env, "dir": tmp_path, "db": db, "name": name,
            "args": ztp["02-provision"]["plugin"]["args"].split()}


def _run(switch: dict, rel: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    path = switch["kit"] / "http" / rel
    assert path.read_text().splitlines()[0] == "#!/usr/bin/python3"
    return subprocess.run(["python3", str(path), *args], capture_output=True, text=True,
                          env={**switch["env"], **env}, timeout=60)


def _lines(switch: dict, name: str) -> list[str]:
    path = switch["dir"] / name
    return path.read_text().splitlines() if path.exists() else []


def test_gate_passes_the_fabrics_release(switch: dict) -> None:
    r = _run(switch, "ztp/sonic-release-gate.py")
    assert r.returncode == 0, r.stderr
    assert _lines(switch, "log") == ["release gate passed: SONiC 202411 (SONiC.202411.1-abc)"]


@pytest.mark.parametrize(("build", "release"), [("202505.3-def", "202505"), ("20240531.04", "202405")])
def test_gate_refuses_another_release(switch: dict, build: str, release: str) -> None:
    r = _run(switch, "ztp/sonic-release-gate.py", FAKE_BUILD=build, FAKE_RELEASE=release)
    assert r.returncode != 0
    [line] = _lines(switch, "log")
    assert line.startswith(f"refusing: sw1 runs SONiC {release} (SONiC.{build}), the fabric is rendered for "
                           "SONiC 202411 (switch_os.version); nothing changed")
    assert _lines(switch, "calls") == []


def test_gate_refuses_a_release_it_cannot_tell(switch: dict) -> None:
    """A date tag without sonic_version.yml: the tag does not spell the branch, so no guess."""
    r = _run(switch, "ztp/sonic-release-gate.py", FAKE_BUILD="20241211.21", FAKE_RELEASE="")
    assert r.returncode != 0
    [line] = _lines(switch, "log")
    assert line.startswith("refusing: sw1: cannot tell the SONiC release of 'SONiC.20241211.21'"), line


def test_gate_is_valid_python(switch: dict) -> None:
    path = switch["kit"] / "http/ztp/sonic-release-gate.py"
    assert subprocess.run(["python3", "-m", "py_compile", str(path)], env={"PYTHONPYCACHEPREFIX": str(switch["dir"])}
                          ).returncode == 0


def test_provision_keeps_the_switch_and_saves_last(switch: dict) -> None:
    device = {"lldp": {"state": "enabled", "auto_restart": "enabled"}, "sflow": {"state": "disabled"}}
    (switch["db"] / "FEATURE.json").write_text(json.dumps(device))
    r = _run(switch, "ztp/sonic-provision.py", *switch["args"])
    assert r.returncode == 0, r.stderr + "\n".join(_lines(switch, "log"))
    calls = _lines(switch, "calls")
    assert calls[0].startswith("curl -fsS --retry 5 --retry-connrefused -o ")
    # everything downloaded before the reload that can move eth0 into VRF mgmt; saved last
    assert calls[1:] == ["config reload -f -y", "config save -y "]
    loaded = json.loads((switch["dir"] / "reloaded.json").read_text())
    rendered = json.loads((switch["kit"] / "http/switches" / switch["name"] / "config_db.json").read_text())
    meta = loaded["DEVICE_METADATA"]["localhost"]
    assert meta["mac"] == "1c:34:da:00:00:01" and meta["platform"] == PLATFORM
    assert meta["hwsku"] == rendered["DEVICE_METADATA"]["localhost"]["hwsku"] == "Mellanox-SN5600-O128"
    for row, fields in device.items():
        assert {k: loaded["FEATURE"][row][k] for k in fields} == fields      # the switch's rows and fields win
    assert _lines(switch, "log")[-2:] == [
        "hwsku ACS-SN5600 -> Mellanox-SN5600-O128: the reload brings up the rendered SKU",
        f"provisioned: day-0 config_db sha256 {switch['args'][1]} loaded (config reload -f), 2 FEATURE row(s) of "
        "the switch kept, saved to /etc/sonic/config_db.json"]
    assert not list(switch["dir"].glob("fabricgen-ztp-*"))    # staged files removed


def test_provision_refuses_a_hwsku_the_switch_cannot_run(switch: dict) -> None:
    shutil.rmtree(switch["dir"] / "root/usr/share/sonic/device" / PLATFORM / "Mellanox-SN5600-O128")
    r = _run(switch, "ztp/sonic-provision.py", *switch["args"])
    assert r.returncode != 0
    assert [c.split()[0] for c in _lines(switch, "calls")] == ["curl"]       # nothing changed
    assert _lines(switch, "log") == [
        "refusing: the day-0 config is for hwsku Mellanox-SN5600-O128, this switch runs ACS-SN5600 and its image "
        f"has no Mellanox-SN5600-O128 for {PLATFORM}; nothing changed: check the switch model in the intent"]


def test_provision_refuses_a_file_of_another_kit(switch: dict) -> None:
    url, sha = switch["args"]
    r = _run(switch, "ztp/sonic-provision.py", url, hashlib.sha256(b"another").hexdigest())
    assert r.returncode != 0
    assert [c.split()[0] for c in _lines(switch, "calls")] == ["curl"]
    assert "has sha256 " + sha in _lines(switch, "log")[0]


def test_no_base_mac_stops_before_anything(switch: dict) -> None:
    (switch["db"] / "DEVICE_METADATA.json").write_text(json.dumps({"localhost": {}}))
    r = _run(switch, "ztp/sonic-provision.py", *switch["args"])
    assert r.returncode != 0
    assert [c.split()[0] for c in _lines(switch, "calls")] == ["curl"]
    assert _lines(switch, "log") == ["error: DEVICE_METADATA.localhost platform or mac is empty: let the switch "
                                     "finish its first boot, then `ztp run -y`"]
