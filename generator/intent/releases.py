"""The NOS releases fabricgen renders, and its verdict on the one `switch_os.version` names.

What fabricgen knows of a release is what it was built from, so the lists are read from there:
- Cumulus Linux: fabricgen writes NVUE, which first shipped in 5.0 (NVIDIA, "NVIDIA User
  Experience - NVUE", Cumulus Linux 5.0 user guide; generator/devices/commands.py), and
  checks each document against the NVUE object model of its release (FG260), one per 5.x minor
  release in the `nvueschema` package (generator/render/nvue_model.py). A 5.x release newer than
  the newest model is rendered in the newest syntax and checked against that model.
- SONiC: the release branches whose GCU allow-list fabricgen holds
  (generator/data/sonic_gcu_releases.yaml): the deploy applies day-2 changes only to those
  (generator/deploy/sonic_guard.py). config_db is the same for every release from the newest
  version gate on (generator/render/sonic.py), so a newer branch renders as the newest known.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from generator.common.release_catalog import cumulus_releases, sonic_releases

# NVUE's first release: anything older has no NVUE to take fabricgen's startup.yaml
NVUE_LINE = 5
# SONiC names its release branches by year and month (202411); Cumulus by major.minor (5.11)
SONIC_FIRST_YEAR = 2000


@dataclass(frozen=True, slots=True)
class Verdict:
    """An error: fabricgen cannot render the release. A warning: it renders it as `rendered_as`."""

    error: str | None = None
    warning: str | None = None


def _span(releases: tuple[str, ...]) -> str:
    return f"{releases[0]} to {releases[-1]}"


def _key(release: str) -> tuple[int, int]:
    major, minor = release.split(".")[:2]
    return int(major), int(minor)


def judge(os_name: str, version: str, parsed: tuple[int, int]) -> Verdict:
    """fabricgen's verdict on `switch_os.version` (as written, and as (major, minor) or
    (year, month)) for `switch_os.name`."""
    if os_name == "cumulus":
        return _cumulus(version, parsed)
    return _sonic(version, parsed)


def _cumulus(version: str, parsed: tuple[int, int]) -> Verdict:
    known = cumulus_releases()
    if parsed[0] >= SONIC_FIRST_YEAR:
        return Verdict(error=f"{version!r} is a SONiC release name: under switch_os.name cumulus write a Cumulus "
                             f"Linux release such as \"{known[-1]}\" (fabricgen renders {_span(known)}), or set "
                             "switch_os.name: sonic")
    if parsed[0] < NVUE_LINE:
        return Verdict(error=f"Cumulus Linux {version} has no NVUE, which fabricgen writes (NVUE came with 5.0): "
                             f"fabricgen renders Cumulus Linux {_span(known)}; upgrade the switches to 5.x and "
                             "name that release")
    if parsed[0] > NVUE_LINE:
        return Verdict(error=f"Cumulus Linux {version} is a release line fabricgen does not know: it renders "
                             f"{_span(known)}; name the 5.x release the switches run")
    newest = known[-1]
    if parsed > _key(newest):
        return Verdict(warning=f"Cumulus Linux {version} is newer than the newest release fabricgen knows: rendered "
                               f"as {newest} (its syntax and NVUE object model); check the release notes of "
                               f"{parsed[0]}.{parsed[1]} for renamed commands before deploying")
    return Verdict()


def _sonic(version: str, parsed: tuple[int, int]) -> Verdict:
    known = sonic_releases()
    listing = ", ".join(known)
    if parsed[0] < SONIC_FIRST_YEAR:
        return Verdict(error=f"{version!r} is a Cumulus Linux release: SONiC releases are named by year and month, "
                             f"e.g. \"{known[-1]}\" (fabricgen knows {listing}); or set switch_os.name: cumulus")
    name = f"{parsed[0]}{parsed[1]:02d}"
    if name in known:
        return Verdict()
    if 1 <= parsed[1] <= 12 and name > known[-1]:
        return Verdict(warning=f"SONiC {name} is newer than the newest release fabricgen knows: config_db is "
                               f"rendered as for {known[-1]}, and the deploy refuses day-2 changes of buffer, WRED "
                               f"and PFC watchdog tables until {name}'s GCU allow-list is added to "
                               "generator/data/sonic_gcu_releases.yaml")
    if name < known[0]:
        return Verdict(error=f"SONiC {name} is older than the releases fabricgen knows ({listing}): their "
                             "config_db tables and GCU allow-lists are what it renders and deploys; upgrade the "
                             "switches to one of them and name it")
    # a month between the known branches, or no month at all (202413): most likely a typo
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean \"{close[0]}\"? " if close else ""
    return Verdict(error=f"SONiC {name} is not a release fabricgen knows: {hint}it renders {listing}")
