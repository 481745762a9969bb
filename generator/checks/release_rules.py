"""FG270-FG271: the NOS release `switch_os.version` names, against the releases fabricgen renders
(generator/intent/releases.py says which, and from where it knows them)."""

from __future__ import annotations

from collections.abc import Iterator

from generator.checks.registry import ERROR, WARNING, CheckContext, rule
from generator.intent.releases import judge


@rule("FG270", ERROR, "a NOS release fabricgen cannot render", stage="compile")
def release_not_renderable(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """switch_os.version names a release fabricgen has no syntax for. The intent loader refuses
    it before any rule runs, naming the releases it renders:

    - Cumulus Linux before 5.0 (4.x): fabricgen writes an NVUE startup.yaml, and NVUE came
      with 5.0; 4.x is configured with NCLU and ifupdown2 files, which fabricgen never writes.
    - Cumulus Linux 6.x or later: a release line whose commands are unknown; nothing says the
      5.x object model still holds.
    - a SONiC release name (202411) under `switch_os.name: cumulus`, or a Cumulus release (5.11)
      under `sonic`: the pair contradicts itself, so the intended target is unknown.
    - a SONiC release older than the oldest one fabricgen knows, or a name that is no release
      branch (202413): config_db tables and the GCU allow-list of the deploy's day-2 changes
      differ per branch (generator/data/sonic_gcu_releases.yaml).
    - a version written as a YAML number: `version: 5.10` is read as 5.1, a different release;
      quote it (`"5.10"`).

    Name the release the switches run (`nv show system`, `show version`); the deploy's release
    gate refuses a switch that runs another one anyway."""
    return iter(())


@rule("FG271", WARNING, "a NOS release newer than the releases fabricgen knows", stage="intent")
def release_newer_than_known(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """switch_os.version is a release of a line fabricgen renders, but newer than the newest
    one it knows: Cumulus Linux 5.x past the newest NVUE object model of the `nvueschema`
    package, or a SONiC branch past the newest GCU allow-list in
    generator/data/sonic_gcu_releases.yaml.

    fabricgen renders it as the newest release it knows (Cumulus: that release's syntax, and
    FG260 checks the document against that release's object model; SONiC: the same config_db).
    A newer release may rename or drop commands (Cumulus 5.15 renamed about a hundred), so read
    its release notes before deploying; on SONiC the deploy refuses live changes of buffer, WRED
    and PFC watchdog tables until the release's GCU allow-list is added. Upgrading fabricgen
    (a newer `nvueschema`, a new allow-list) clears the warning."""
    os = ctx.intent.switch_os
    verdict = judge(os.name, os.version, os.version_tuple())
    if verdict.warning:
        yield "switch_os.version", verdict.warning
