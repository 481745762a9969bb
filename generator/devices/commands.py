"""Every command string the switch drivers send, in one place, per OS version.

NVUE generations (Cumulus Linux 5.x):
  5.0 - 5.8   `nv config apply` does not write startup.yaml: the driver sends `nv config save`
  5.9 +       apply also saves (NVIDIA: "Since 5.9 apply also saves")

Every command is judged by its exit status first (ssh.py `_check`), NVUE's also by an
"Error" line (nvue.py `error_prefixes`). What the driver takes from output is below.

Confirm flow (NVUE): what was verified where. Nothing here was seen on a switch by us; each
row names the source that shows it. The driver's parsing uses only the verified rows.

 #  fact                                                   releases   source
 V1 `nv config apply --confirm <time>` applies and rolls     5.0+       NVIDIA NVUE reference, Config Commands
    back unless confirmed, default 10 minutes;                           (docs.nvidia.com/networking-ethernet-software/
    `--confirm-status` "shows the amount of time left"                    nvue-reference/Config-Commands), "Introduced in
                                                                          Cumulus Linux 5.0.0"
 V2 a bare `--confirm 60` is minutes ("requires you to       5.0+       same page: we always send a unit (`300s`),
    confirm within one hour")                                            as napalm-cumulus does (`{revert_in}s`)
 V3 confirm / reject a waiting revision:                     5.12       napalm-cumulus, github.com/david-pili/
    `nv config apply <rev> --confirm-yes` / `--confirm-no`               napalm-cumulus napalm_cumulus/cumulus.py
                                                                         ("Tested on Cumulus 5.12"); the same three
                                                                         options in NVIDIA's NVOS test harness
                                                                         (sonic-mgmt ngts constants_nvos.py ConfigConsts)
 V4 `nv config revision -o json`: an object revision-id ->   5.12       napalm-cumulus `_get_pending_commits`:
    {"state": ...}; a revision waiting for confirmation                  `v.get("state") == "confirm"`
    is in state "confirm"
 V5 `nv config history -o json`: a JSON list, newest first;  NVOS 2022, NVIDIA ngts OutputParsingTool.parse_config_history
    the applied revision is `rev-id` (2024) / `rev_id`       2024       (sample: "apply-meta": {"rev_id": ...}) and
    (2022), at the top or one level down (`apply-meta`)                  test_apply_detach.py (history[0] is the
                                                                         newest apply; ConfigConsts.REVISION_ID="rev-id")
 V6 `nv config apply` can print errors yet exit 0           2025       ipspace/netlab PR 1726 (so "Error" lines count)
 V7 apply prints "applied" and "[rev_id: N]"                 NVOS       ngts NvueGeneralCli.apply_config/get_rev_id;
                                                                         napalm-cumulus reads "attached [rev_id: N]"

Unverified (the driver does not parse them): what `--confirm-status` prints (with or without
a pending confirm) and its exit status then; whether `--confirm-yes`/`--confirm-no` without a
revision work (only NVIDIA's own how-to labs show them); which states other than "confirm" a
revision list shows on 5.0 - 5.11; whether `nv config revision -o json` prints the same object
on 5.0 - 5.11 (V4 is one driver's 5.12 reading). The lab (generator/lab/nvue.py) prints the
verified shapes and invents only the unverified text.

Every command is a program the switch ships (issue 23, item 2): NVUE's `nv` and coreutils'
`sha256sum` on Cumulus (its commit-confirm is NVUE's own `nv config apply --confirm`);
sonic-utilities, systemd and coreutils on SONiC (SonicCommands). Nothing is installed on a
switch; tests/unit/test_switch_commands_stock.py keeps it so.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from generator import sonic_release

# Per run (the driver's run_id): two runs never write the same file on a switch (issue 15,
# finding 2: a run half-wrote a candidate the other was loading).
NVUE_CANDIDATE_PATH = "/tmp/fabricgen-{run}-candidate.yaml"
SONIC_CANDIDATE_PATH = "/tmp/fabricgen-{run}-candidate.json"
SONIC_PATCH_PATH = "/tmp/fabricgen-{run}-patch.json"
# coreutils sha256sum: "<64 hex>  <path>" (GNU coreutils manual, sha2 utilities)
SHA256SUM = "sha256sum {path}"
# FRR's BGP summary of every address family, as FRR itself holds it (bgpd: bgp_show_summary_vty);
# `{}` when no BGP instance runs. Both NOSes run FRR; vtysh needs root on both.
FRR_BGP_SUMMARY_JSON = "sudo vtysh -c 'show bgp summary json'"


def _version_key(version: str) -> tuple[int, ...]:
    parts = tuple(int(p) for p in str(version).split(".") if p.isdigit())
    return parts[:2] if parts else (0,)


@dataclass(frozen=True)
class NvueCommands:
    generation: str
    save: str | None
    replace: str = "nv config replace {path}"
    patch: str = "nv config patch {path}"
    # -o yaml: the structured document (set/unset items) the guard reads (deploy/guard.py)
    diff: str = "nv config diff -o yaml"
    apply: str = "nv config apply -y"
    apply_confirm: str = "nv config apply -y --confirm {seconds}s"
    apply_revision: str = "nv config apply {revision} -y"
    message_option: str = " -m {message}"
    # Confirm flow: rows V1-V5 of the table above.
    confirm_yes: str = "nv config apply {revision} --confirm-yes"
    confirm_no: str = "nv config apply {revision} --confirm-no"
    revisions_json: str = "nv config revision -o json"
    confirm_state: str = "confirm"
    detach: str = "nv config detach"
    history_json: str = "nv config history -o json"
    show_running: str = "nv config show -o yaml"
    show_startup: str = "nv config show -r startup -o yaml"
    show_system_json: str = "nv show system -o json"
    show_platform_json: str = "nv show platform -o json"
    show_interface_json: str = "nv show interface -o json"
    # Operational getters (NVUE reference: LLDP, Interface, QoS and BGP pages; generator/lab/nvue_oper.py
    # lists what each JSON holds). 5.4 and earlier spell the QoS counters `qos counters ...`.
    show_lldp_json: str = "nv show interface {port} lldp -o json"
    show_counters_json: str = "nv show interface {port} counters -o json"
    show_pfc_json: str = "nv show interface {port} counters qos pfc-stats -o json"
    show_qos_port_json: str = "nv show interface {port} counters qos port-stats -o json"
    # QoS page, PFC Watchdog (5.6+): per switch-priority deadlock-count (lab/nvue_oper.py)
    show_pfc_watchdog_json: str = "nv show interface {port} qos pfc-watchdog -o json"
    pfc_watchdog_from: tuple[int, int] = (5, 6)
    show_router_bgp_json: str = "nv show router bgp -o json"
    # 5.11 and earlier print the detail with plain -o json; 5.12+ need --view=detail (BGP page).
    show_bgp_neighbors_json: str = "nv show vrf default router bgp neighbor --view=detail -o json"
    # Hardware, optics, FEC, time, routes (verify's physical-layer and control-plane checks):
    # NVUE reference Show-Commands pages Platform, NTP, RIB, Router-Nexthop; the JSON each holds
    # is listed in generator/lab/nvue_oper.py. One read per switch where NVUE has a bulk form.
    show_environment_json: str = "nv show platform environment -o json"
    show_transceivers_json: str = "nv show platform transceiver -o json"
    show_phy_json: str = "nv show interface {port} link phy-detail -o json"
    # 5.15 moved `service ntp <vrf>` to `system ntp` (NTP page); the lab and render use VRF mgmt
    show_ntp_json: str = "nv show service ntp mgmt -o json"
    show_routes_json: str = "nv show vrf default router rib ipv4 route -o json"
    show_nexthops_json: str = "nv show router nexthop -o json"
    # `deploy --day0` reads what routes outside NVUE (DEVICE_STATE.md: Ansible-written flat files,
    # snippets): FRR's own BGP view and the two files NVUE renders. frr.conf is root:frr 0640.
    frr_bgp_summary_json: str = FRR_BGP_SUMMARY_JSON
    show_interfaces_file: str = "cat /etc/network/interfaces"
    show_frr_conf: str = "sudo cat /etc/frr/frr.conf"
    candidate_path: str = NVUE_CANDIDATE_PATH

    def commit(self, message: str = "", revert_in: int | None = None) -> str:
        command = self.apply if revert_in is None else self.apply_confirm.format(seconds=int(revert_in))
        if message:
            command += self.message_option.format(message=shlex.quote(message))
        return command


_QOS_COUNTERS_54 = {"show_pfc_json": "nv show interface {port} qos counters pfc-stats -o json",
                    "show_qos_port_json": "nv show interface {port} qos counters port-stats -o json"}
_BGP_NEIGHBORS_511 = {"show_bgp_neighbors_json": "nv show vrf default router bgp neighbor -o json"}
NVUE_GENERATIONS = (
    ((5, 0), NvueCommands(generation="5.0-5.4", save="nv config save", **_QOS_COUNTERS_54, **_BGP_NEIGHBORS_511)),
    ((5, 5), NvueCommands(generation="5.5-5.8", save="nv config save", **_BGP_NEIGHBORS_511)),
    ((5, 9), NvueCommands(generation="5.9-5.11", save=None, **_BGP_NEIGHBORS_511)),
    ((5, 12), NvueCommands(generation="5.12-5.14", save=None)),
    ((5, 15), NvueCommands(generation="5.15+", save=None, show_ntp_json="nv show system ntp -o json")),
)


def nvue_commands(version: str | None) -> NvueCommands:
    """The command set for a Cumulus Linux 5.x version (newest generation when unknown)."""
    if not version:
        return NVUE_GENERATIONS[-1][1]
    key = _version_key(version)
    if key < (5, 0):
        raise ValueError(f"Cumulus Linux {version} has no NVUE config workflow; 5.0 or newer is needed")
    chosen = NVUE_GENERATIONS[0][1]
    for first, commands in NVUE_GENERATIONS:
        if key >= first:
            chosen = commands
    return chosen


@dataclass(frozen=True)
class SonicCommands:
    """SONiC: the generic config updater, `config reload`, and stock systemd as the confirm timer.

    Everything the deploy runs on a SONiC switch is stock: sonic-utilities' `config` and
    `sonic-cfggen`, and systemd's `systemd-run` / `systemctl` (systemd-run(1), systemctl(1)).
    Nothing is installed on the switch.

      read     sonic-cfggen -d --print-data            config_db, tables only
      day 2    sudo config checkpoint fabricgen-<UTC time>
               sudo systemd-run --unit fabricgen-confirm --on-active=<s>s \
                   --description 'fabricgen commit-confirm: config rollback <checkpoint>' \
                   config rollback <checkpoint>
               sudo config apply-patch /tmp/fabricgen-<run>-patch.json
      day 0    sudo config checkpoint fabricgen-<UTC time>     (for the operator)
               sudo systemd-run --unit fabricgen-confirm --on-active=<s>s \
                   --description 'fabricgen commit-confirm: config reload -y -f' config reload -y -f
               sudo systemd-run --unit fabricgen-reload \
                   --description 'fabricgen day 0: config reload -y -f <file>' \
                   config reload -y -f /tmp/fabricgen-<run>-candidate.json
               then the session is closed and a new one opened, with backoff, until
               `systemctl show fabricgen-reload.service` says the reload has ended
      confirm  sudo systemctl stop fabricgen-confirm.timer, then sudo config save -y
      status   systemctl show fabricgen-confirm.timer fabricgen-confirm.service \
                   -p Id,Description,LoadState,ActiveState,SubState,Result
      undo     day 2: sudo systemctl stop fabricgen-confirm.timer, sudo config rollback <checkpoint>
               day 0: sudo systemctl stop fabricgen-confirm.timer, then `config reload -y -f` of the
               saved startup detached as above (fabricgen-reload), and reconnect

    SONiC has no commit-confirm. `systemd-run --on-active` makes a transient timer and service
    run by PID 1, not by the SSH session: the revert happens when the session, the deploy or the
    deploy host is gone. The timer is armed before the change, so a refused `systemd-run` (the
    unit name is taken: "Unit fabricgen-confirm.service was already loaded or has a fragment
    file", exit 1) changes nothing. A pending commit is the timer in SubState `waiting`; its
    Description says what it will run (the checkpoint, or the reload of the saved startup file).
    A revert that failed leaves fabricgen-confirm.service `failed` (transient units without
    --collect stay until `systemctl reset-failed`), which blocks the next arm: deliberately, an
    operator looks at `journalctl -u fabricgen-confirm.service` first.

    Day 2 uses `config apply-patch` (RFC 6902, scoped to fabricgen's tables); day 0
    `config reload -y -f FILE` (sonic-utilities config/main.py: reload takes the file to load),
    saved with `config save -y` only once confirmed, so the timer's `config reload -y -f` of the
    untouched startup file is the day-0 undo. A reload restarts eth0 ("These service will restart
    eth0 and cause device lost network", config/main.py _restart_services) and, when it turns
    the management VRF on, moves eth0 into it (mvrf_restart_services): the session that started
    it drops. So the reload runs as a transient service of its own (systemd-run without a timer
    returns at once; PID 1 runs the command), the deploy reconnects, and a reload that failed
    stays visible as fabricgen-reload.service `failed` (Result=exit-code) until the deploy has
    read it and run `systemctl reset-failed` on it.
    """

    checkpoint: str = "sudo config checkpoint {name}"
    apply_patch: str = "sudo config apply-patch {path}"
    # day 0: run detached under systemd (see the docstring), never in the deploy's own session
    # -f: sonic-utilities refuses `config reload` without it while the system starts and until
    # swss has been active 120 s (config/main.py _swss_ready; DEVICE_STATE.md): right after ZTP's
    # own reload, after the day-0 reload, while swss crash-loops: exactly when a day 0 or a revert
    # runs. sonic-ztp's configdb-json plugin uses `config reload -f -y` for the same reason.
    reload: str = "config reload -y -f {path}"
    rollback: str = "sudo config rollback {name}"
    list_checkpoints: str = "sudo config list-checkpoints"
    # Checkpoints are full config_db copies in /etc/sonic/checkpoints that nothing else prunes
    # (DEVICE_STATE.md): after a confirm, fabricgen deletes its own beyond the newest few.
    delete_checkpoint: str = "sudo config delete-checkpoint {name}"
    checkpoints_kept: int = 3
    save: str = "sudo config save -y"
    # config_db exactly. `show runningconfiguration all` (sonic-utilities show/main.py `all`) runs
    # this very command and, on a single-ASIC switch (202311 and later, DEVICE_STATE.md), adds one
    # top-level key "bgpraw": FRR's `show running-config` through rvtysh as one string, "" when
    # that read fails (later master adds it per namespace on multi-ASIC switches too). bgpraw is
    # no table: never in a candidate, a patch or a day-0 file.
    show_running: str = "sonic-cfggen -d --print-data"
    show_startup: str = "cat /etc/sonic/config_db.json"
    show_version: str = "show version"
    # /etc/sonic/sonic_version.yml as JSON: the release (generator/sonic_release.py)
    show_version_file: str = sonic_release.READ_VERSION_FILE
    # systemd (systemd-run(1), systemctl(1)); {description} and {command} arrive shell-quoted
    confirm_unit: str = "fabricgen-confirm"
    confirm_description: str = "fabricgen commit-confirm: {command}"
    revert_rollback: str = "config rollback {name}"
    revert_reload: str = "config reload -y -f"
    run_timer: str = "sudo systemd-run --unit {unit} --on-active={seconds}s --description {description} {command}"
    run_detached: str = "sudo systemd-run --unit {unit} --description {description} {command}"
    reload_unit: str = "fabricgen-reload"
    reload_description: str = "fabricgen {why}: {command}"
    stop_unit: str = "sudo systemctl stop {unit}"
    reset_failed: str = "sudo systemctl reset-failed {unit}"
    show_units: str = "systemctl show {units} -p Id,Description,LoadState,ActiveState,SubState,Result"
    # Operational getters (formats and sources: generator/lab/sonic_oper.py). LLDP: lldpd's own
    # JSON in its unambiguous json0 form, through the lldp container as scripts/lldpshow reaches
    # it (`show lldp table` is text built from `lldpctl -f xml`). Interfaces: text, since
    # intfutil -j exists only from 202505. PFC: pfcstat has no JSON. ECN-marked packets per queue:
    # wredstat, 202505 and later only (`ecn_counters_from`).
    show_interfaces_status: str = "show interfaces status"
    show_counters_json: str = "portstat -j"
    show_pfc_counters: str = "show pfc counters"
    # storms per watched queue, detected/restored (pfcwd/main.py; lab/sonic_oper.py has the table)
    show_pfcwd_stats: str = "show pfcwd stats"
    show_ecn_json: str = "show queue wredcounters --json"
    ecn_counters_from: str = "202505"
    show_lldp_json: str = "sudo docker exec -i lldp lldpctl -f json0"
    show_bgp_neighbors_json: str = 'sudo vtysh -c "show bgp vrf default neighbors json"'
    frr_bgp_summary_json: str = FRR_BGP_SUMMARY_JSON
    # Hardware, optics, time, routes (formats and sources: generator/lab/sonic_platform.py). SONiC
    # has no one bulk read of the platform: psushow, fanshow and tempershow are three tables.
    show_psus: str = "show platform psustatus"
    show_fans: str = "show platform fan"
    show_temperatures: str = "show platform temperature"
    show_ntp: str = "show ntp"
    show_fec_stats: str = "show interfaces counters fec-stats"
    show_transceivers: str = "show interfaces transceiver eeprom --dom"
    show_routes_json: str = 'sudo vtysh -c "show ip route json"'
    candidate_path: str = SONIC_CANDIDATE_PATH
    patch_path: str = SONIC_PATCH_PATH
    checkpoint_prefix: str = "fabricgen-"


SONIC = SonicCommands()
