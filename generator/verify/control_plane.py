"""Control-plane checks: NOS release, NTP, ECMP width.

os-version: every switch on `switch_os.version` (release_gate.py reads a release the way the
deploy does before a push), and one build across the fabric: switches on the intent's release
but another patch build than most of the fabric are a warning (mixed builds behave differently
under the same config). ntp: synchronised (napalm get_ntp_stats: one peer `synchronized`), to
one of management.ntp when the intent lists servers (logs and PFC-watchdog events of different
switches can only be correlated on one time base). ecmp: the BGP next hops toward other leaves'
loopbacks against the width ecmp.py derives from the plan.
"""

from __future__ import annotations

from collections import Counter

from generator import sonic_release
from generator.deploy.release_gate import release_refusal
from generator.verify.checks import SwitchReading
from generator.verify.expected import Expectations
from generator.verify.model import ERROR, WARNING, Finding


def _release(os_name: str, os_version: str, reading: SwitchReading) -> tuple[str | None, str | None]:
    """(the release, why it cannot be told): SONiC's as the driver read it from sonic_version.yml,
    else from the build string alone, by the parser the deploy and the day-0 gate use."""
    if os_name == "cumulus":
        return os_version, None
    read = reading.release if isinstance(reading.release, dict) else None
    if read is not None:
        return read.get("release"), read.get("unknown")
    return sonic_release.release_of(None, os_version), sonic_release.cannot_tell(None, os_version)


def check_os_versions(readings: dict[str, SwitchReading], exp: Expectations) -> dict[str, list[Finding]]:
    builds = {name: str((r.facts or {}).get("os_version") or "") for name, r in readings.items() if r.facts is not None}
    wanted = ".".join(map(str, exp.switch_os_version)) if exp.switch_os == "cumulus" else \
        f"{exp.switch_os_version[0]}{exp.switch_os_version[1]:02d}"
    out: dict[str, list[Finding]] = {}
    on_release = {}
    for name, build in sorted(builds.items()):
        running, unknown = _release(exp.switch_os, build, readings[name])
        refusal = release_refusal(exp.switch_os, running, exp.switch_os_version, unknown)
        if refusal:
            out[name] = [Finding("os-version", name, "", wanted, build or "no release reported", ERROR,
                                 f"{name}: {refusal.split(':')[0]}")]
        else:
            on_release[name] = build
    # the build most switches on the intent's release run (ties: the lowest), for the one-build rule
    common = Counter(on_release.values()).most_common()
    majority = min(b for b, n in common if n == common[0][1]) if common else ""
    for name, build in sorted(on_release.items()):
        if build != majority:
            out[name] = [Finding("os-version", name, "", majority, build, WARNING,
                                 f"{name} runs {build}; most of the fabric runs {majority}")]
    return out


def check_ntp(reading: SwitchReading, exp: Expectations) -> list[Finding]:
    peers = [p for p in reading.ntp or [] if isinstance(p, dict)]
    source = next((str(p.get("remote")) for p in peers if p.get("synchronized")), None)
    wanted = ", ".join(exp.ntp_servers) or "any server"
    if source is None:
        servers = ", ".join(str(p.get("remote")) for p in peers) or "no server configured"
        return [Finding("ntp", reading.name, "", f"synchronised to {wanted}", f"unsynchronised ({servers})", ERROR,
                        f"{reading.name}: NTP is not synchronised (servers: {servers})")]
    if exp.ntp_servers and source not in exp.ntp_servers:
        return [Finding("ntp", reading.name, "", f"synchronised to {wanted}", f"synchronised to {source}", ERROR,
                        f"{reading.name}: NTP is synchronised to {source}, not to management.ntp ({wanted})")]
    return []


def check_ecmp(reading: SwitchReading, exp: Expectations) -> list[Finding]:
    routes = reading.routes or {}
    findings = []
    for prefix, (width, leaf) in sorted(exp.ecmp.get(reading.name, {}).items()):
        route = routes.get(prefix) or {}
        hops = len(route.get("next_hops") or []) if route.get("protocol") == "bgp" else 0
        if hops != width:
            observed = f"{hops} BGP next hops" if route else "no route"
            findings.append(Finding("ecmp", reading.name, prefix, f"{width} BGP next hops", observed, ERROR,
                                    f"{reading.name} reaches {leaf}'s loopback {prefix} over {hops} BGP next "
                                    f"hops, planned {width}"))
    return findings
