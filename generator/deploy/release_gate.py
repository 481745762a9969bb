"""The NOS release gate: read the switch's release before any change, refuse another release.

The rendered document is one release's syntax: 5.15 renamed `ip address` to `ipv4 address`
and on|off to enabled|disabled (nvue_renames_515.tsv), SONiC's GCU allow-list and tables
differ per branch. A 5.14 switch given a 5.15 document refuses the whole file at best and
applies a different meaning at worst, so the deploy reads `nv show system` (`product-release`,
else `build`; NVUE System page) or `show version` ("SONiC Software Version: SONiC.<branch>...")
and refuses a mismatch with one line before backup, diff or push (DEVICE_STATE.md). SONiC's
release is read by generator/sonic_release.py, the parser the day-0 gate and verify share.
"""

from __future__ import annotations

import re

_CUMULUS = re.compile(r"(?<![\d.])(\d+)\.(\d+)(?:\.\d+)*")


def cumulus_release(text: str) -> tuple[int, int] | None:
    """'5.11.0' / 'Cumulus Linux 5.11.0' -> (5, 11); None when no release is in the text."""
    match = _CUMULUS.search(text or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def release_name(os_name: str, version: tuple[int, int]) -> str:
    """switch_os.version as the NOS spells it: (5, 11) -> '5.11', SONiC (2024, 5) -> '202405'."""
    return f"{version[0]}.{version[1]}" if os_name == "cumulus" else f"{version[0]}{version[1]:02d}"


def release_refusal(os_name: str, running: str | None, version: tuple[int, int],
                    unknown: str | None = None) -> str | None:
    """None when the switch runs the intent's release (the plan's switch_os_version); else the
    one-line reason to refuse it.

    running: Cumulus `product-release`/`build`, SONiC the release generator/sonic_release.py reads
    (`202411`) or None when it cannot tell; unknown: then why, naming the string that was read."""
    wanted = release_name(os_name, version)
    fix = f"upgrade the switch to {wanted}, or set switch_os.version to the release it runs"
    if os_name == "cumulus":
        have = cumulus_release(running or "")
        if have is None:
            return f"cannot read the switch's Cumulus Linux release from {running!r}: {fix}"
        if have != tuple(version):
            shown = running if running.startswith("Cumulus") else f"Cumulus Linux {running}"
            return (f"the switch runs {shown}, the intent renders {wanted} "
                    f"(switch_os.version): {fix}")
        return None
    if not running:
        return f"{unknown or '`show version` names no SONiC release branch'}: {fix}"
    if running != wanted:
        return f"the switch runs SONiC {running}, the intent renders {wanted} (switch_os.version): {fix}"
    return None
