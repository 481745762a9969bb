"""Which SONiC release a switch runs: the one parser of the day-0 release gate (the kit embeds this
file's text in ztp/sonic-release-gate.py), the deploy driver (drivers/sonic.py, rollout's release
gate) and verify's os-version check, so the three never disagree (issue 32).

The release is `release:` of /etc/sonic/sonic_version.yml ('202411'), written on every image built
from a release branch since 202205 (sonic-buildimage files/image_config/sonic_release, copied by
build_debian.sh, written by files/build_templates/sonic_version.yml.j2; 'none' on master builds).
Only when it is 'none' or absent does `build_version` speak: an untagged build prints
`SONiC.<branch>.<build>-<sha>` (sonic-buildimage functions.sh sonic_get_version), vendor builds add
a suffix to the branch (`SONiC.202405c.38617-int-...`, `SONiC.202311_RC.38-...`). A build on a tag
prints the tag, a date that does not spell the branch (`SONiC.20241211.21` is 202411, not
"202412"): without `release` that is "cannot tell", never a guess (DEVICE_STATE.md).

Standard library only and Python 3.7 syntax at run time (the __future__ import keeps the
annotations unevaluated): the gate runs this text with the switch's own python3.
"""
from __future__ import annotations

import re

VERSION_FILE = "/etc/sonic/sonic_version.yml"
# What the gate and the driver run to read it: sonic-cfggen loads the YAML (-y) and prints it as JSON
# (sonic-cfggen --print-data); the image's own scripts read the file the same way.
READ_VERSION_FILE = "sonic-cfggen -y " + VERSION_FILE + " --print-data"
_RELEASE = re.compile(r"\A[0-9]{6}\Z")
# SONiC.<YYYYMM><vendor suffix>.<build>...: the suffix is letters (202405c) or _RC
_BRANCH_BUILD = re.compile(r"\A(?:SONiC\.)?([0-9]{6})(?:[A-Za-z]{1,8}|_RC[0-9]*)?(?:\.|\Z)")


def release_of(fields: dict | None, build: str = "") -> str | None:
    """The release ('202411') the switch runs, or None when it cannot be told.

    FIELDS: sonic_version.yml as a dict (None or {} when the file could not be read); BUILD: the
    build string `show version` prints, used when FIELDS has no build_version."""
    fields = fields if isinstance(fields, dict) else {}
    release = str(fields.get("release") or "").strip().strip("'\"")
    if release and release.lower() != "none":
        return release if _RELEASE.match(release) else None
    build_version = str(fields.get("build_version") or build or "").strip()
    match = _BRANCH_BUILD.match(build_version)
    return match.group(1) if match else None


def build_of(fields: dict | None, build: str = "") -> str:
    """The build string to show a person: sonic_version.yml's build_version, else BUILD."""
    fields = fields if isinstance(fields, dict) else {}
    return str(fields.get("build_version") or build or "").strip()


def cannot_tell(fields: dict | None, build: str = "") -> str:
    """Why no release could be told, naming the string that was read."""
    fields = fields if isinstance(fields, dict) else {}
    shown = build_of(fields, build) or "no build_version"
    release = str(fields.get("release") or "").strip()
    if release and release.lower() != "none":
        return f"cannot tell the SONiC release: {VERSION_FILE} says release {release!r} ({shown})"
    return (f"cannot tell the SONiC release of {shown!r}: {VERSION_FILE} names no release and the "
            "build is not <branch>.<build>")
