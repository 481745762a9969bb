"""One SONiC release parser (generator/sonic_release.py, issue 32 item 4): the day-0 gate (the
kit's script, run with real python3 against fake switch tools), the deploy driver (its own shell
protocol, answered from a script) and verify's os-version check give the same answer for the same
switch, for official tagged images, vendor builds, branch builds and the lab's own images."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from generator.day0.sonic_ztp import GATE, scripts
from generator.deploy.release_gate import release_refusal
from generator.devices.commands import SONIC
from generator.devices.sonic import SonicDriver
from generator.lab import sonic_factory
from generator.verify import control_plane as CP
from generator.verify.checks import SwitchReading
from tests.unit.test_ssh_status import Scripted
from tests.unit.test_verify_physical import _exp

WANT = (2024, 11)
# (sonic_version.yml as sonic-cfggen -y prints it, or None: no such file; `show version`'s build; the release)
CASES = {
    # official images built on a release branch's date tag: the tag does not spell the branch
    "tag-202305": ({"build_version": "SONiC.20230531.22", "branch": "HEAD", "release": "202305"}, None, "202305"),
    "tag-202405": ({"build_version": "SONiC.20240531.04", "branch": "HEAD", "release": "202405"}, None, "202405"),
    "tag-202411": ({"build_version": "SONiC.20241211.21", "branch": "HEAD", "release": "202411"}, None, "202411"),
    # vendor builds: a suffix on the branch
    "vendor-c": ({"build_version": "SONiC.202405c.38617-int-5e2f1b3a9", "release": "none"}, None, "202405"),
    "vendor-rc": ({"build_version": "SONiC.202311_RC.38-0ea9fa1ef_Internal"}, None, "202311"),
    "branch": ({"build_version": "SONiC.202411.1-abc12345", "release": "202411"}, None, "202411"),
    # a date tag with no release: cannot tell, never "202412"
    "tag-no-release": ({"build_version": "SONiC.20241211.21"}, None, None),
    "tag-release-none": ({"build_version": "SONiC.20241211.21", "release": "none"}, None, None),
    "master": ({"build_version": "SONiC.master.512-9a8b7c6d", "release": "none"}, None, None),
    # an image without sonic_version.yml (before 202205): the build string of show version alone
    "no-file-branch": (None, "SONiC.202411.7-deadbeef", "202411"),
    "no-file-tag": (None, "SONiC.20241211.21", None),
}


def _lab_case(version: str):
    """The lab's own image of `lab up --nos-version VERSION`: its sonic_version.yml, parsed as YAML."""
    import yaml

    release, build = sonic_factory.image(version)
    return yaml.safe_load(sonic_factory.version_yml(release, build)), None, release


for _version in ("202411", "SONiC.20241211.21", "SONiC.202405c.38617-int-5e2f1b3a9", "SONiC.202311_RC.38-0ea9fa1ef"):
    CASES[f"lab-{_version}"] = _lab_case(_version)


def _gate(tmp_path: Path, fields: dict | None, build: str | None) -> str | None:
    """Run the kit's gate; the release it passed, None when it refused for not telling."""
    gate = tmp_path / "gate.py"
    gate.write_text(scripts("f", WANT)[GATE])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fakes = {
        "sonic-cfggen": f"""#!/bin/sh
            [ "$*" = "-y /etc/sonic/sonic_version.yml --print-data" ] || exit 2
            {"echo 'Error: /etc/sonic/sonic_version.yml: No such file or directory' >&2; exit 1"
             if fields is None else "cat " + str(tmp_path / "fields.json")}
            """,
        "show": f"""#!/bin/sh
            printf '\\nSONiC Software Version: {build or fields.get("build_version", "")}\\nDistribution: Debian 12.7\\n'
            """,
        "hostname": "#!/bin/sh\necho sw1\n",
        "logger": f"#!/bin/sh\nshift 2\necho \"$*\" >> {tmp_path / 'log'}\n",
    }
    if fields is not None:
        (tmp_path / "fields.json").write_text(json.dumps(fields, indent=4))
    for name, body in fakes.items():
        (bin_dir / name).write_text(textwrap.dedent(body).lstrip())
        (bin_dir / name).chmod(0o755)
    r = subprocess.run(["python3", str(gate)], capture_output=True, text=True, timeout=60,
                       env={"PATH": f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin"})
    [line] = (tmp_path / "log").read_text().splitlines()
    if r.returncode == 0:
        assert line.startswith("release gate passed: SONiC "), line
        return line.split()[4]
    if "cannot tell the SONiC release" in line:
        return None
    assert line.startswith("refusing: sw1 runs SONiC "), line
    return line.split()[4]


def _driver(fields: dict | None, build: str | None) -> SonicDriver:
    show = f"\nSONiC Software Version: {build or (fields or {}).get('build_version', '')}\nHwSKU: ACS-SN5600\n"
    file = ("Error: /etc/sonic/sonic_version.yml: No such file or directory", 1) if fields is None else \
        (json.dumps(fields, indent=4), 0)
    return Scripted(SonicDriver, {SONIC.show_version_file: file, SONIC.show_version: (show, 0)}).driver


def _verify(driver: SonicDriver, build: str) -> str | None:
    exp = _exp(switch_os="sonic", switch_os_version=(2024, 11))
    reading = SwitchReading("sw1", facts={"os_version": build}, release=driver.nos_release_reading())
    found = CP.check_os_versions({"sw1": reading}, exp)
    if not found:
        return "202411"
    observed = found["sw1"][0]
    if "cannot tell" in observed.message:
        return None
    return re.search(r"runs SONiC ([0-9]{6})", observed.message).group(1)


@pytest.mark.parametrize("case", list(CASES))
def test_gate_driver_and_verify_agree(case: str, tmp_path: Path) -> None:
    fields, build, want = CASES[case]
    shown = build or fields["build_version"]
    driver = _driver(fields, build)
    answers = {"gate": _gate(tmp_path, fields, build), "driver": driver.nos_release(),
               "verify": _verify(driver, shown)}
    assert answers == {"gate": want, "driver": want, "verify": want}
    if want is None:
        # refused with the string that was read, never guessed
        refusal = release_refusal("sonic", None, WANT, driver.nos_release_unknown())
        assert shown in refusal and "cannot tell" in refusal


def test_verify_without_the_file_reads_the_build_the_same_way() -> None:
    exp = _exp(switch_os="sonic", switch_os_version=(2024, 11))
    readings = {"a": SwitchReading("a", facts={"os_version": "SONiC.20241211.21"}),
                "b": SwitchReading("b", facts={"os_version": "SONiC.202411.3-abc"})}
    found = CP.check_os_versions(readings, exp)
    assert list(found) == ["a"] and "cannot tell the SONiC release of 'SONiC.20241211.21'" in found["a"][0].message


def test_the_lab_accepts_build_strings_and_refuses_what_it_cannot_tell() -> None:
    assert sonic_factory.image("SONiC.20241211.21") == ("202411", "SONiC.20241211.21")
    assert sonic_factory.image("SONiC.202311_RC.38-0ea9fa1ef_Internal")[0] == "202311"
    with pytest.raises(ValueError, match="no release branch tagged 20991231"):
        sonic_factory.image("SONiC.20991231.1")
    with pytest.raises(ValueError, match="not a SONiC build string"):
        sonic_factory.image("SONiC.202411")


def test_the_gate_is_the_parser_module_itself() -> None:
    """The gate embeds generator/sonic_release.py byte for byte: no second copy to drift."""
    import generator.sonic_release as module

    assert Path(module.__file__).read_text().rstrip("\n") in scripts("f", WANT)[GATE]
