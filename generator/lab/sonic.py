"""Simulated SONiC: CONFIG_DB as JSON, the generic config updater, `config reload`, and a confirm timer.

The switch boots from its factory CONFIG_DB (sonic_factory.py), saved as /etc/sonic/config_db.json.
Commands, each printing roughly what sonic-utilities prints (config/main.py, generic_config_updater/):

  config apply-patch FILE      RFC 6902 patch through GCU's checks (sonic_gcu.py)
  config replace FILE          the patch from running to FILE, through the same checks
  config checkpoint|rollback|list-checkpoints|delete-checkpoint NAME
  config reload [-y] [-f] [FILE]  load FILE (default the saved startup) under init_cfg.json, no GCU
                               checks; without -f refused until swss has run 120 s (SWSS_READY_SECONDS)
  config save [-y]             running -> /etc/sonic/config_db.json
  sonic-cfggen -d -v EXPR | -d --print-data | -j FILE -v EXPR | -y FILE --print-data
  /etc/sonic/sonic_version.yml  the image's build_version and release (sonic_factory.image)
  show runningconfiguration all (with "bgpraw" from 202311) | show version
  vtysh -c "show running-config"

Operational state, from the running CONFIG_DB and the lab world (sonic_oper.py has the formats):
  show interfaces status | show interfaces counters (= portstat -j with -j) | portstat -j
  show pfc counters | pfcstat | show pfcwd stats [-e] | show queue wredcounters --json | wredstat -j (202505+)
  docker exec -i lldp lldpctl -f json0 | lldpctl -f json0
  vtysh -c "show bgp vrf default neighbors json" | vtysh -c "show ip route json"
  show platform psustatus|fan|temperature | show ntp | show interfaces transceiver eeprom --dom
  show interfaces counters fec-stats
                               (sonic_platform.py: from the lab world and `lab up --faults`)

When the running config no longer gives eth0 the address the lab serves the switch on, new SSH
connections are refused until a rollback or reload gives it back; sessions already open keep working.

SONiC has no commit-confirm, and the factory image has no fabricgen tool. What the deploy uses to
revert an unconfirmed change and to run `config reload` beyond its SSH session are stock systemd
tools, simulated in sonic_systemd.py:

  systemd-run [--unit NAME] [--on-active=SPAN] [--description TEXT] COMMAND...
  systemctl stop|show|is-active|reset-failed UNIT...
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import re
import time
import zlib

import yaml

from generator.lab import flat_files, platform_oper, sonic_factory, sonic_gcu, sonic_oper, sonic_platform
from generator.lab.device import CommandError, Device, Io
from generator.lab.factory import Management, lease_for
from generator.lab.sonic_systemd import Systemd

STARTUP_FILE = "/etc/sonic/config_db.json"
INIT_CFG_FILE = "/etc/sonic/init_cfg.json"
VERSION_FILE = "/etc/sonic/sonic_version.yml"
CHECKPOINTS_DIR = "/etc/sonic/checkpoints"
CFGGEN = "/usr/local/bin/sonic-cfggen"
# `config reload` stops and restarts every SONiC service, a minute or more on a switch; the lab
# takes RELOAD_SECONDS, so whoever starts one must wait for it as for the real one.
RELOAD_SECONDS = 1.0
# sonic-utilities config/main.py reload (202305-202411): without -f (or -n), refused with
# CONFIG_RELOAD_NOT_READY (exit 1) unless swss.service is active and entered that state more
# than 120 s ago (_swss_ready / _per_namespace_swss_ready: ActiveEnterTimestampMonotonic); swss
# starts at boot and again at the end of every reload. The lab's clock (`--time-scale`) scales it.
SWSS_READY_SECONDS = 120.0
SWSS_NOT_READY = "SwSS container is not ready. Retry later or use -f to avoid system checks"
# "These service will restart eth0 and cause device lost network for 10 seconds" (sonic-utilities
# config/main.py _restart_services): the lab's eth0 is back after ETH0_RESTART_SECONDS.
ETH0_RESTART_SECONDS = 1.0
BGPRAW_FROM = "202311"      # `show runningconfiguration all` adds "bgpraw" (DEVICE_STATE.md, show/main.py)
# The FRR release each SONiC branch builds (sonic-buildimage rules/frr.mk; approximate, only printed)
FRR_VERSIONS = {"202305": "8.5.1", "202311": "8.5.1", "202405": "8.5.4", "202411": "10.0.1", "202505": "10.3"}
log = logging.getLogger("generator.lab")


class ClickFailure(CommandError):
    """A sonic-utilities command that ends in click's ctx.fail: usage text, 'Error: ...', exit status 2."""

    status = 2

    def __init__(self, first_line: str, usage: str, reason: str):
        super().__init__(f"{first_line}\nUsage: {usage}\nTry \"{usage.split(' [')[0]} -h\" for help.\n\n"
                         f"Error: {reason}")


class SonicDevice(Device):
    os_name = "sonic"

    def __init__(self, *args, platform: str = "SN5600", mgmt: Management | None = None,
                 factory_hostname: str | None = None, mac: str | None = None, serial: str | None = None,
                 build: str | None = None, **kwargs):
        """factory_hostname, mac, serial: a switch fresh from install waiting for ZTP (`lab up --ztp`):
        the image's hostname, the base MAC and serial number of its EEPROM (the inventory's)."""
        super().__init__(*args, **kwargs)
        self.platform = platform
        # what `show version` and /etc/sonic/sonic_version.yml print (sonic_factory.image)
        self.build = build or f"SONiC.{self.version}"
        self.mgmt = mgmt or lease_for(0)
        self.factory_hostname = factory_hostname or self.name
        self.eth0_mac = mac or sonic_factory.base_mac(self.name)
        self.serial = serial or f"MT{zlib.crc32(self.name.encode()):010d}"
        self.running: dict = sonic_factory.factory_config_db(platform, self.name, self.version, self.mgmt,
                                                             mac=self.eth0_mac, hostname=self.factory_hostname)
        self.checkpoints: dict[str, dict] = {}
        self.systemd = Systemd(self.name, self.run, lambda name: name in self._handlers(),
                               lambda: self.time_scale)
        self.cut_off: str | None = None  # why new logins are refused, while they are
        # monotonic time swss.service last became active (boot, the end of a reload); None while a
        # reload has it stopped
        self.swss_active_since: float | None = time.monotonic()
        self.write_file(INIT_CFG_FILE, _dump(sonic_factory.init_cfg()))
        self._save()

    def eth0_vrf(self) -> str:
        # MGMT_VRF_CONFIG mgmtVrfEnabled moves eth0 into VRF mgmt at the next interfaces-config
        # restart (sonic-utilities config/main.py mvrf_restart_services; a config reload does it);
        # community images ship with it off (DEVICE_STATE.md)
        enabled = ((self.running.get("MGMT_VRF_CONFIG") or {}).get("vrf_global") or {}).get("mgmtVrfEnabled")
        return "mgmt" if str(enabled).lower() == "true" else "default"

    def current_image(self) -> tuple[str, str]:
        """(release, build) the switch runs: its own, or the one `lab up --faults` os_version names."""
        fault = platform_oper.os_version(self.faults.current(), "")
        if not fault:
            return self.version, self.build
        try:
            return sonic_factory.image(fault if fault.startswith("SONiC.") or fault.isdigit() else f"SONiC.{fault}")
        except ValueError:
            return "none", fault if fault.startswith("SONiC.") else f"SONiC.{fault}"

    def read_file(self, path: str) -> str:
        if path == VERSION_FILE:
            # written at build time with the image (sonic-buildimage build_debian.sh): the image it is
            return sonic_factory.version_yml(*self.current_image())
        return super().read_file(path)

    @property
    def hostname(self) -> str:
        configured = self.running.get("DEVICE_METADATA", {}).get("localhost", {}).get("hostname")
        # the DHCP lease's option 12 names a switch still on the image's hostname; a configured one wins
        if self.dhcp_hostname and (not configured or configured == self.factory_hostname):
            return self.dhcp_hostname
        return str(configured or self.name)

    _eth0_back_at = 0.0          # until then eth0 is restarting (_restart_eth0)

    def restarting_for(self) -> float:
        return max(0.0, self._eth0_back_at - time.monotonic())

    def awaiting_confirmation(self) -> bool:
        # SONiC has no commit-confirm: the deploy's revert is a systemd timer (module docstring)
        return bool(self.systemd.waiting_timers())

    def refuses_connections(self) -> str | None:
        if time.monotonic() < self._eth0_back_at:
            return "eth0 is restarting (config reload)"
        return self.cut_off

    def take_lease(self, mgmt: Management, hostname: str | None) -> None:
        super().take_lease(mgmt, hostname)
        self.cut_off = sonic_factory.management_loss(self.running, self.mgmt)

    def has_hwsku(self, platform: str, hwsku: str) -> bool:
        """Whether /usr/share/sonic/device/PLATFORM/HWSKU exists on this image: the SKUs of its
        platform that the lab knows (sonic_catalog), as the configdb-json plugin checks."""
        from generator.plan.sonic_catalog import sonic_platform

        known = sonic_platform(self.platform)
        return (known is not None and platform == known.platform
                and hwsku in {sku for _, sku in known.hwskus})

    # --- dispatch -------------------------------------------------------
    def _handlers(self) -> dict:
        return {"config": self._config, "show": self._show, "sonic-cfggen": self._cfggen,
                "portstat": self._portstat, "pfcstat": self._pfcstat, "wredstat": self._wredstat,
                "lldpctl": self._lldpctl, "docker": self._docker, "vtysh": self._vtysh,
                "systemd-run": self.systemd.systemd_run, "systemctl": self.systemd.systemctl}

    async def run(self, argv: list[str], io: Io) -> int | None:
        handler = self._handlers().get(argv[0]) if argv else None
        if handler is None:
            return None
        try:
            await handler(argv[1:], io)
        except CommandError as exc:
            if str(exc):
                io.write(f"{exc}\n")
            return getattr(exc, "status", 1)
        return 0

    async def _config(self, args: list[str], io: Io) -> None:
        sub, rest = (args[0], args[1:]) if args else ("", [])
        positional = [a for a in rest if not a.startswith("-")]
        if sub == "apply-patch" and len(positional) == 1:
            self._apply_patch(positional[0], io)
        elif sub == "replace" and len(positional) == 1:
            self._replace(positional[0], io)
        elif sub == "checkpoint" and len(positional) == 1:
            self._checkpoint_create(positional[0], io)
        elif sub == "rollback" and len(positional) == 1:
            self._rollback(positional[0], io)
        elif sub == "list-checkpoints":
            io.write(json.dumps(sorted(self.checkpoints), indent=4) + "\n")
        elif sub == "delete-checkpoint" and len(positional) == 1:
            name = positional[0]
            if name not in self.checkpoints:
                raise ClickFailure("Failed to delete config checkpoint", "config delete-checkpoint [OPTIONS] "
                                   "CHECKPOINT_NAME", f"Checkpoint '{name}' does not exist")
            del self.checkpoints[name]
            self.local_path(f"{CHECKPOINTS_DIR}/{name}.cp.json").unlink(missing_ok=True)
            io.write("Checkpoint deleted successfully.\n")
        elif sub == "reload" and len(positional) <= 1:
            await self._reload(rest, positional[0] if positional else None, io)
        elif sub == "load" and len(positional) <= 1:
            await self._load(rest, positional[0] if positional else None, io)
        elif sub == "save" and len(positional) <= 1:
            if "-y" not in rest and "--yes" not in rest:
                answer = await io.ask("Existing files will be overwritten, continue? [y/N]: ")
                if (answer or "").strip().lower() not in ("y", "yes"):
                    raise CommandError("Aborted!")
            path = positional[0] if positional else STARTUP_FILE
            self.write_file(path, _dump(self.running))
            io.write(f"Running command: {CFGGEN} -d --print-data > {path}\n")
        else:
            raise CommandError(f"Error: unknown or incomplete command: config {' '.join(args)}")

    # --- GCU --------------------------------------------------------------
    def _gcu(self, old: dict, patch: list | None = None, target: dict | None = None) -> dict:
        kwargs = {"build_version": self.version, "yang": sonic_gcu.yang_check(old)}
        if target is not None:
            return sonic_gcu.replace(old, target, **kwargs)
        return sonic_gcu.apply(old, patch, **kwargs)

    def _apply_patch(self, path: str, io: Io) -> None:
        usage = "config apply-patch [OPTIONS] PATCH_FILE_PATH"
        try:
            patch = json.loads(self.read_file(path))
            self._fail_if_faulted()
            new = self._gcu(self.running, patch=patch)
        except (sonic_gcu.GcuError, CommandError, ValueError) as exc:
            reason = _reason(exc)
            raise ClickFailure(f"Failed to apply patch due to: {reason}", usage, reason) from None
        count = len(patch)
        io.write("Patch Applier: localhost: Patch application starting.\n"
                 f"Patch Applier: localhost: Patch: {json.dumps(patch)}\n"
                 "Patch Applier: localhost: validating all JsonPatch operations are permitted on the specified fields\n"
                 f"Patch Applier: localhost: applying {count} change{'s' if count != 1 else ''} in order.\n"
                 "Patch Applier: localhost: verifying patch updates are reflected on ConfigDB.\n"
                 "Patch Applier: localhost patch application completed.\n"
                 "Patch applied successfully.\n")
        self._set_running(new, f"apply-patch {path}")

    def _replace(self, path: str, io: Io) -> None:
        usage = "config replace [OPTIONS] TARGET_FILE_PATH"
        try:
            target = self._load_config_db(path)
            self._fail_if_faulted()
            new = self._gcu(self.running, target=target)
        except (sonic_gcu.GcuError, CommandError) as exc:
            raise ClickFailure("Failed to replace config", usage, _reason(exc)) from None
        io.write("Config Replacer: Config replacement starting.\n"
                 "Config Replacer: Applying patch using 'Patch Applier'.\n"
                 "Config Replacer: Verifying config replacement is reflected on ConfigDB.\n"
                 "Config Replacer: Config replacement completed.\n"
                 "Config replaced successfully.\n")
        self._set_running(new, f"replace {path}")

    def _checkpoint_create(self, name: str, io: Io) -> None:
        self.checkpoints[name] = copy.deepcopy(self.running)
        self.write_file(f"{CHECKPOINTS_DIR}/{name}.cp.json", _dump(self.running))
        io.write("Config Rollbacker: Config checkpoint starting.\n"
                 f"Config Rollbacker: Checkpoint name: {name}.\n"
                 "Config Rollbacker: Config checkpoint completed.\n"
                 "Checkpoint created successfully.\n")

    def _rollback(self, name: str, io: Io) -> None:
        # GenericUpdater.rollback is ConfigReplacer.replace with the checkpoint: the same checks.
        usage = "config rollback [OPTIONS] CHECKPOINT_NAME"
        try:
            if name not in self.checkpoints:
                raise sonic_gcu.GcuError(f"Checkpoint '{name}' does not exist")
            new = self._gcu(self.running, target=copy.deepcopy(self.checkpoints[name]))
        except sonic_gcu.GcuError as exc:
            raise ClickFailure("Failed to rollback config", usage, _reason(exc)) from None
        io.write("Config Rollbacker: Config rollback starting.\n"
                 f"Config Rollbacker: Checkpoint name: {name}.\n"
                 "Config Rollbacker: Config rollback completed.\n"
                 "Config rolled back successfully.\n")
        self._set_running(new, f"rollback {name}")

    # --- config reload ----------------------------------------------------
    async def _reload(self, options: list[str], path: str | None, io: Io) -> None:
        if not ({"-f", "--force", "-n", "--no_service_restart"} & set(options)) and not self.swss_ready():
            raise CommandError(SWSS_NOT_READY)
        if "-y" not in options and "--yes" not in options:
            question = ("Clear current config and reload config in config_db format from the default config "
                        "file(s) ?" if path is None else
                        f"Clear current config and reload config in config_db from the file(s) {path} ?")
            answer = await io.ask(f"{question} [y/N]: ")
            if (answer or "").strip().lower() not in ("y", "yes"):
                raise CommandError("Aborted!")
        file = path or STARTUP_FILE
        if not self.local_path(file).is_file():
            raise CommandError(f"Error: The config file {file} doesn't exist")
        config = self._load_config_db(file)
        self._fail_if_faulted()
        loaded, commands = self._reloaded(config, file, force_sysinfo="-l" in options or "--load-sysinfo" in options)
        io.write("Acquired lock on /etc/sonic/reload.lock\nDisabling container monitoring ...\n"
                 "Stopping SONiC target ...\n"
                 + "".join(f"Running command: {c}\n" for c in commands))
        self.swss_active_since = None            # "Stopping SONiC target": swss goes down
        try:
            await asyncio.sleep(RELOAD_SECONDS)
        finally:
            self.swss_active_since = time.monotonic()
        io.write("Restarting SONiC target ...\nEnabling container monitoring ...\n"
                 "Reloading Monit configuration ...\nReinitializing monit daemon\n"
                 "Released lock on /etc/sonic/reload.lock\n")
        before = self.running
        self._set_running(loaded, f"config reload {file}")
        moved = sonic_factory.eth0_moved(before, loaded)
        if moved:
            self._restart_eth0(f"config reload {file}: {moved}")

    def swss_ready(self) -> bool:
        """_swss_ready of config/main.py: swss active for more than 120 s (of the lab's clock)."""
        since = self.swss_active_since
        return since is not None and (time.monotonic() - since) * self.time_scale > SWSS_READY_SECONDS

    def _restart_eth0(self, why: str) -> None:
        """interfaces-config and networking restart with the new eth0 (sonic-utilities config/main.py
        _restart_services; mvrf_restart_services: "eth0 should be moved to mvrf"): every SSH
        session of the switch drops, as its TCP connection lived in the old VRF or on the old
        address, and new logins fail until eth0 is up again."""
        self._eth0_back_at = time.monotonic() + ETH0_RESTART_SECONDS
        log.warning("%s: %s: eth0 restarts, dropping %d SSH session(s)", self.name, why, len(self.connections))
        self.cut_connections()

    async def _load(self, options: list[str], path: str | None, io: Io) -> None:
        """`config load [-y] [FILE]` (sonic-utilities config/main.py load): `sonic-cfggen -j FILE
        --write-to-db` merges FILE into CONFIG_DB (tables and rows merge, fields overwrite); nothing is
        flushed, no service restarts, no GCU checks."""
        if "-y" not in options and "--yes" not in options:
            question = (f"Load config from the file(s) {path or STARTUP_FILE} ?")
            answer = await io.ask(f"{question} [y/N]: ")
            if (answer or "").strip().lower() not in ("y", "yes"):
                raise CommandError("Aborted!")
        file = path or STARTUP_FILE
        if not self.local_path(file).is_file():
            raise CommandError(f"Error: The config file {file} doesn't exist")
        config = self._load_config_db(file)
        self._fail_if_faulted()
        merged = copy.deepcopy(self.running)
        _merge(merged, config)
        io.write(f"Running command: {CFGGEN} -j {file} --write-to-db\n")
        self._set_running({t: merged[t] for t in sorted(merged)}, f"config load {file}")

    def _reloaded(self, config: dict, file: str, force_sysinfo: bool = False) -> tuple[dict, list[str]]:
        """CONFIG_DB after `config reload FILE` (sonic-utilities config/main.py reload): flushed, then
        `sonic-cfggen -H -k SKU` when the file lacks platform or mac (202411+: load_sysinfo_if_missing),
        then init_cfg.json and FILE merged field by field, then db_migrator sets VERSIONS."""
        commands = []
        merged: dict = {}
        meta = (config.get("DEVICE_METADATA") or {}).get("localhost") or {}
        if force_sysinfo or (_release_at_least(self.version, "202411") and not (meta.get("platform") and meta.get("mac"))):
            hwsku = meta.get("hwsku")
            if not hwsku:
                raise CommandError("Could not get the HWSKU from config file,  Exiting!!!")
            hardware = sonic_factory.hardware(self.platform, self.name, self.eth0_mac)
            hardware["DEVICE_METADATA"]["localhost"]["hwsku"] = hwsku
            if hwsku != sonic_factory.default_sku(self.platform):
                del hardware["PORT"]  # the lab knows only the default SKU's port layout
            _merge(merged, hardware)
            commands.append(f"{CFGGEN} -H -k {hwsku} --write-to-db")
        _merge(merged, json.loads(self.read_file(INIT_CFG_FILE)))
        _merge(merged, config)
        merged["VERSIONS"] = {"DATABASE": {"VERSION": sonic_factory.database_version(self.version)}}
        commands += [f"{CFGGEN} -j {INIT_CFG_FILE} -j {file} --write-to-db",
                     "/usr/local/bin/db_migrator.py -o migrate",
                     f"{CFGGEN} -d -y /etc/sonic/sonic_version.yml -t "
                     "/usr/share/sonic/templates/sonic-environment.j2,/etc/sonic/sonic-environment"]
        return {t: merged[t] for t in sorted(merged)}, commands

    # --- state changes ----------------------------------------------------
    _config_serial = 0
    _config_changed_at = 0.0

    def _set_running(self, config: dict, why: str) -> None:
        self.running = config
        self._config_serial += 1
        self._config_changed_at = time.time()
        loss = sonic_factory.management_loss(config, self.mgmt)
        if loss and not self.cut_off:
            timers = self.systemd.waiting_timers()
            until = (f"until {timers[0].id} fires ({timers[0].description})" if timers
                     else "until a config rollback or config reload restores it")
            log.warning("%s: %s cuts management: %s; new SSH logins to %s are refused %s",
                        self.name, why, loss, self.mgmt.ip, until)
        elif not loss and self.cut_off:
            log.warning("%s: %s restores management: eth0 %s, logins work again", self.name, why, self.mgmt.address)
        self.cut_off = loss

    def _fail_if_faulted(self) -> None:
        fault = self.faults.current().apply_error
        if fault:
            raise CommandError(f"Error: {fault}")

    def _load_config_db(self, path: str) -> dict:
        try:
            data = json.loads(self.read_file(path))
        except json.JSONDecodeError as exc:
            raise CommandError(f"Error: {path} is not valid JSON: {exc}") from None
        if not isinstance(data, dict) or not all(isinstance(t, dict) for t in data.values()):
            raise CommandError(f"Error: {path}: config_db must map table names to objects")
        for table, rows in data.items():
            for key, row in rows.items():
                if not isinstance(row, dict):
                    raise CommandError(f"Error: {table}|{key}: a row must be an object of fields")
        return data

    def _save(self) -> None:
        self.write_file(STARTUP_FILE, _dump(self.running))

    # --- show / sonic-cfggen ---------------------------------------------
    async def _show(self, args: list[str], io: Io) -> None:
        if args[:2] == ["runningconfiguration", "all"]:
            # sonic-utilities show/main.py `all`: the output of `sonic-cfggen -d --print-data`, and on a
            # single-ASIC switch (202311 and later) one more top-level key, "bgpraw", FRR's running
            # config as one string (`rvtysh -c 'show running-config'`; "" when that read fails),
            # printed with json.dumps(indent=4).
            output = json.loads(_dump(self.running))
            if _release_at_least(self.version, BGPRAW_FROM):
                output["bgpraw"] = frr_running_config(self.running, self.version)
            io.write(json.dumps(output, indent=4) + "\n")
        elif args[:1] == ["version"]:
            meta = self.running.get("DEVICE_METADATA", {}).get("localhost", {})
            up = int(time.time() - self.booted)
            days, rest = divmod(up, 86400)
            clock = f"{rest // 3600}:{rest % 3600 // 60:02d}" if rest >= 3600 else f"{rest // 60} min"
            uptime = (f"{days} day{'s' if days != 1 else ''}, " if days else "") + clock
            io.write(
                f"\nSONiC Software Version: {self.current_image()[1]}\n"
                f"SONiC OS Version: 12\nDistribution: Debian 12\nKernel: 6.1.0-11-2-amd64\n"
                f"Platform: {meta.get('platform', '')}\nHwSKU: {meta.get('hwsku', '')}\nASIC: mellanox\n"
                f"ASIC Count: 1\nSerial Number: {self.serial}\n"
                f"Model Number: M{self.platform}\nHardware Revision: A1\nUptime: {time.strftime('%H:%M:%S')} up {uptime},  1 user,  load average: 0.00, 0.01, 0.05\n")
        elif args[:2] == ["interfaces", "status"]:
            io.write(self._frozen(sonic_oper.interfaces_status, self.name, self.running, self.fabric) + "\n")
        elif args[:1] == ["platform"] and args[1:2] in (["psustatus"], ["fan"], ["temperature"]):
            show = {"psustatus": sonic_platform.psustatus, "fan": sonic_platform.fans,
                    "temperature": sonic_platform.temperatures}[args[1]]
            io.write(show(self.faults.current()) + "\n")
        elif args[:1] == ["ntp"]:
            io.write(sonic_platform.ntp(self.running, self.faults.current()))
        elif args[:3] == ["interfaces", "transceiver", "eeprom"] and "--dom" in args:
            io.write(sonic_platform.transceivers(self.name, self.running, self.fabric, self.faults.current()))
        elif args[:3] == ["interfaces", "counters", "fec-stats"]:
            io.write(sonic_platform.fec_stats(self.name, self.running, self.fabric, self.faults.current()) + "\n")
        elif args[:2] == ["interfaces", "counters"]:
            await self._portstat(["-j"] if "--json" in args or "-j" in args else [], io)
        elif args[:2] == ["pfc", "counters"]:
            await self._pfcstat(["-s", "all"], io)
        elif args[:2] == ["pfcwd", "stats"]:
            io.write(self._frozen(sonic_oper.pfcwd_stats, self.name, self.running, self.fabric, self.faults.current(),
                                  "-e" in args or "--empty" in args) + "\n")
        elif args[:2] == ["queue", "wredcounters"]:
            await self._wredstat(["-j"] if "--json" in args else [], io,
                                 usage="show queue [OPTIONS] COMMAND [ARGS]...")
        else:
            raise CommandError(f"Error: show {' '.join(args)}: not simulated")

    # --- operational state: the lab world asks the running CONFIG_DB (world.py) ----------
    fabric = None   # world.Fabric, set by the lab server; None: no world, every port is down

    def config_token(self) -> int:
        return self._config_serial   # bumped by every change of the running config (_set_running)

    def config_changed_at(self) -> float:
        return self._config_changed_at

    @property
    def mgmt_ip(self) -> str:
        return self.mgmt.ip

    @property
    def lldp_description(self) -> str:
        # lldpdSysDescr.conf.j2 (sonic-buildimage dockers/docker-lldp)
        sku = self.running.get("DEVICE_METADATA", {}).get("localhost", {}).get("hwsku", "")
        return (f"SONiC Software Version: {self.current_image()[1]} - HwSku: {sku} - Distribution: Debian 12 - "
                "Kernel: 6.1.0-11-2-amd64")

    def oper_ports(self):
        return self._oper("ports", sonic_oper.ports_of)

    def oper_bgp(self):
        return self._oper("bgp", sonic_oper.bgp_of)

    def _oper(self, what: str, build):
        """What the world reads of the running config, built once per version of it (the serial
        changes with every change of the running config, _set_running)."""
        key = (what, self._config_serial)
        cache = self.__dict__.setdefault("_oper_cache", {})
        if key not in cache:
            if len(cache) > 8:          # only the current version's entries are ever asked again
                cache.clear()
            cache[key] = build(self.running)
        return cache[key]

    def _frozen(self, answer, *args):
        """One operational answer, built with the world's key taken once (world.Fabric.frozen)."""
        if self.fabric is None:
            return answer(*args)
        with self.fabric.frozen():
            return answer(*args)

    def lldp_port(self, port: str) -> tuple[str, str]:
        """(port id, description) lldpmgrd makes lldpd announce for a world port (sonic_oper docstring)."""
        for eth, row in (self.running.get("PORT") or {}).items():
            row = row or {}
            if sonic_oper.world_name(eth, row.get("alias")) == port:
                return str(row.get("alias") or eth), str(row.get("description") or eth)
        return port, port

    async def _portstat(self, args: list[str], io: Io) -> None:
        data = self._frozen(sonic_oper.portstat_json, self.name, self.running, self.fabric, self.faults.current())
        if "-j" in args or "--json" in args:
            io.write(json.dumps(data, indent=4, sort_keys=True) + "\n")
            return
        headers = ["IFACE", "STATE", "RX_OK", "RX_BPS", "RX_UTIL", "RX_ERR", "RX_DRP", "RX_OVR",
                   "TX_OK", "TX_BPS", "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR"]
        rows = [[port] + [row[h] for h in headers[1:]] for port, row in data.items()]
        io.write(sonic_oper.simple_table(headers, rows) + "\n")

    async def _pfcstat(self, args: list[str], io: Io) -> None:
        io.write(self._frozen(sonic_oper.pfc_counters, self.name, self.running, self.fabric, self.faults.current()) + "\n")

    async def _wredstat(self, args: list[str], io: Io, usage: str = "wredstat [OPTIONS]") -> None:
        if not _release_at_least(self.version, sonic_oper.ECN_COUNTERS_FROM):
            # before 202505 neither the script nor the click sub-command exists
            error = CommandError(f'Usage: {usage}\nTry "show queue -h" for help.\n\nError: No such command '
                                 '"wredcounters".' if usage.startswith("show") else "bash: wredstat: command not found")
            error.status = 2 if usage.startswith("show") else 127
            raise error
        data = self._frozen(sonic_oper.wred_counters_json, self.name, self.running, self.fabric, self.faults.current())
        io.write(json.dumps(data, indent=4) + "\n")

    async def _lldpctl(self, args: list[str], io: Io) -> None:
        if args[:2] != ["-f", "json0"]:
            raise CommandError("Error: lldpctl: the lab answers `lldpctl -f json0` only")
        io.write(json.dumps(self._frozen(sonic_oper.lldp_json0, self.name, self.running, self.fabric), indent=2) + "\n")

    async def _docker(self, args: list[str], io: Io) -> None:
        # `docker exec -i lldp lldpctl ...` (what the host's lldpctl wrapper and lldpshow run)
        rest = [a for a in args[1:] if a not in ("-i", "-it", "-t")] if args[:1] == ["exec"] else []
        if rest[:2] == ["lldp", "lldpctl"]:
            await self._lldpctl(rest[2:], io)
        elif rest[:2] == ["bgp", "vtysh"]:
            await self._vtysh(rest[2:], io)
        else:
            raise CommandError(f"Error: docker {' '.join(args)}: not simulated")

    async def _vtysh(self, args: list[str], io: Io) -> None:
        command = " ".join(args[1:]).split() if args[:1] == ["-c"] else []
        if command in (["show", "bgp", "vrf", "default", "neighbors", "json"], ["show", "bgp", "neighbors", "json"],
                       ["show", "ip", "bgp", "neighbors", "json"]):
            io.write(json.dumps(self._frozen(sonic_oper.bgp_neighbors_json, self.name, self.running, self.fabric), indent=2) + "\n")
        elif command == ["show", "bgp", "summary", "json"]:
            # bgpd's peers, as bgpcfgd gave them from CONFIG_DB (the same answer as Cumulus's FRR)
            io.write(flat_files.bgp_summary_json(self.fabric, self.name, self.oper_bgp()))
        elif command == ["show", "ip", "route", "json"]:
            io.write(json.dumps(sonic_platform.routes_json(self.name, self.running, self.fabric), indent=2) + "\n")
        elif command in (["show", "running-config"], ["show", "run"]):
            io.write(frr_running_config(self.running, self.version))
        else:
            raise CommandError(f"% Unknown command: {' '.join(command) or ' '.join(args)}")

    async def _cfggen(self, args: list[str], io: Io) -> None:
        data: dict = {}
        expr = None
        var_json = None
        print_data = False
        i = 0
        while i < len(args):
            arg = args[i]
            if arg in ("-d", "--from-db"):
                _merge(data, self.running)
            elif arg in ("-j", "--json") and i + 1 < len(args):
                i += 1
                _merge(data, self._load_config_db(args[i]))
            elif arg in ("-y", "--yaml") and i + 1 < len(args):
                # sonic-cfggen -y: a YAML file merged into the data (sonic_version.yml for a script)
                i += 1
                try:
                    loaded = yaml.safe_load(self.read_file(args[i]))
                except yaml.YAMLError as exc:
                    raise CommandError(f"Error: {args[i]}: {exc}") from None
                data.update(loaded if isinstance(loaded, dict) else {})
            elif arg in ("-v", "--var") and i + 1 < len(args):
                i += 1
                expr = args[i]
            elif arg == "--print-data":
                print_data = True
            elif arg == "--var-json" and i + 1 < len(args):
                i += 1
                var_json = args[i]
            else:
                raise CommandError(f"Error: sonic-cfggen {' '.join(args)}: not simulated "
                                   "(the lab knows -d, -j FILE, -y FILE, -v EXPR, --var-json TABLE, --print-data)")
            i += 1
        if expr is not None:
            io.write(_render_var(data, expr) + "\n")
        if var_json is not None and var_json in data:
            # sonic-cfggen: json.dumps(data[TABLE], indent=4); a table it lacks prints nothing
            io.write(json.dumps(data[var_json], indent=4) + "\n")
        if print_data:
            io.write(_dump(data))


# --- helpers -------------------------------------------------------------------------------
def frr_running_config(running: dict, version: str) -> str:
    """What `vtysh -c 'show running-config'` prints for the BGP that CONFIG_DB gives FRR (the lab's
    sketch: header, hostname, router bgp with its neighbors; FRR's own defaults omitted)."""
    release = sonic_factory.release(version)
    frr = FRR_VERSIONS.get(release) or FRR_VERSIONS[max((r for r in FRR_VERSIONS if r <= release),
                                                        default=min(FRR_VERSIONS))]
    hostname = (running.get("DEVICE_METADATA") or {}).get("localhost", {}).get("hostname") or "sonic"
    lines = ["Building configuration...", "", "Current configuration:", "!", f"frr version {frr}",
             "frr defaults traditional", f"hostname {hostname}", "log syslog informational",
             "log facility local4", "agentx", "no service integrated-vtysh-config", "!"]
    bgp = sonic_oper.bgp_of(running)
    if bgp is not None:
        lines += [f"router bgp {bgp.asn}", f" bgp router-id {bgp.router_id}"]
        for neighbor in bgp.neighbors.values():
            peer = neighbor.id if neighbor.numbered else f"{neighbor.id} interface"
            lines.append(f" neighbor {peer} remote-as {neighbor.remote_as}")
            if not neighbor.enabled:
                lines.append(f" neighbor {neighbor.id} shutdown")
        lines += ["exit", "!"]
    lines += ["end"]
    return "\n".join(lines) + "\n"


def _dump(config: dict) -> str:
    return json.dumps(config, indent=4, sort_keys=True) + "\n"


def _reason(exc: BaseException) -> str:
    text = str(exc)
    return text[len("Error: "):] if text.startswith("Error: ") else text


def _merge(into: dict, config: dict) -> None:
    """sonic-cfggen deep_update / ConfigDB mod_config: tables and rows merge, fields overwrite."""
    for table, rows in config.items():
        target = into.setdefault(table, {})
        for key, fields in rows.items():
            target.setdefault(key, {}).update(copy.deepcopy(fields))


def _release_at_least(version: str, release: str) -> bool:
    return sonic_factory.release(version) >= release


_VAR_PART = re.compile(r"\.?([^.\[\]]+)|\[['\"]([^'\"]+)['\"]\]")


def _render_var(data: dict, expr: str) -> str:
    """`sonic-cfggen -v` renders '{{EXPR}}' with jinja2: a missing last key prints an empty line, a
    lookup below a missing key fails with jinja2's UndefinedError."""
    value: object = data
    missing: str | None = None
    pos = 0
    while pos < len(expr):
        match = _VAR_PART.match(expr, pos)
        if match is None:
            raise CommandError(f"Error: sonic-cfggen -v {expr}: not a TABLE.key.field expression")
        key = match.group(1) or match.group(2)
        if missing is not None:
            raise CommandError(f"jinja2.exceptions.UndefinedError: {missing}")
        if isinstance(value, dict) and key in value:
            value = value[key]
        else:
            missing = f"'{key}' is undefined" if value is data else f"'dict object' has no attribute '{key}'"
        pos = match.end()
    return "" if missing is not None else str(value)
