"""napalm driver for community SONiC over SSH (netmiko `linux`, bash on the switch).

Day 2 (load_replace_candidate / load_merge_candidate): the candidate is the full target
config_db; the driver reads the running config, computes the RFC 6902 patch from it to the
target (jsonpatch) and applies it with `config checkpoint` + `config apply-patch`, never
`config replace` of a partial file (DEVICE_STATE.md: GCU's replace removes what the file
lacks). fabricgen builds the target from the running config with only its own tables changed
(generator/render/sonic_managed.py), so the patch touches nothing else.
Day 0 (load_provision_candidate): a full config_db loaded with `config reload -y -f FILE`; the
startup file is written (`config save`) only when the commit is confirmed, so the confirm
timer's `config reload` of the untouched startup file is the rollback. The reload restarts eth0
(and moves it into the management VRF when the file turns that on), which drops the SSH session:
it runs detached under systemd, and commit_config returns once the driver has logged in again
and the reload has ended (optional_args reload_wait bounds the wait).
SONiC has no commit-confirm: `revert_in` arms a stock systemd timer (`systemd-run --on-active`)
that runs the undo unless it is stopped; commands.SonicCommands lists every command sent.
optional_args: port, known_hosts, accept_new_host_keys, key_file.
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import hashlib
import json
import re
import shlex
import time

import jsonpatch
from napalm.base import models
from napalm.base.exceptions import (
    CommitError,
    ConnectAuthError,
    ConnectionException,
    MergeConfigException,
    ReplaceConfigException,
)

from generator import sonic_release
from generator.common.json_text import config_db_text
from generator.device_data import DeviceDataError, checked_text, parse_json
from generator.devices import oper, sonic_show
from generator.devices.commands import SONIC
from generator.devices.config_db_diff import config_db_diff
from generator.devices.ssh import CommandFailed, ReadIncomplete, SSHCliDriver

PATCH = "patch"
RELOAD = "reload"
RELOAD_WAIT = 600.0                 # s: a reload without a confirm timer must be over by then
# s: the first login when the session that started a reload is gone, then the backoff between
# logins while it runs: by x1.5 up to 8 s (a minute-long reload of a real switch costs it ~15
# refused logins). A reload restarts eth0 only at its end (config/main.py reload: services first,
# then _restart_services), so the session that started it watches the unit until then.
RECONNECT_FIRST, RECONNECT_GROWTH, RECONNECT_MAX = 0.5, 1.5, 8.0
# Once the watching session drops, eth0 is restarting: "device lost network for 10 seconds"
# (config/main.py _restart_services). For that long logins are tried every EYE_ON_ETH0 s, so the
# wave goes on the moment eth0 is back; a refused connection costs the switch nothing.
ETH0_OUTAGE, EYE_ON_ETH0 = 15.0, 0.25
RELOAD_PROBE_TIMEOUT = 5.0          # s: `systemctl show` answers at once; silence is a dead session
RELOAD_POLL = 0.5                   # s: between two looks at the reload unit over a working login
ROLLBACK = "rollback"
# The Description the deploy gives its timer names what the timer will run (systemctl show reads it back)
# (a timer an earlier fabricgen armed says `reload -y`: still ours)
_DESCRIPTION = re.compile(r"^fabricgen commit-confirm: config (?:rollback (\S+)|reload -y(?: -f)?)$")
# the names _checkpoint_name makes: fabricgen-<UTC %Y%m%dT%H%M%S%f>
_OUR_CHECKPOINT = re.compile(r"^fabricgen-\d{8}T\d{12}$")
_RUNNING = "Running {what}as unit: {unit}"          # systemd-run's line once the unit is started


def _started_line(unit: str, kind: str) -> str:
    return _RUNNING.format(what="timer " if kind == "timer" else "", unit=f"{unit}.{kind}")


class SonicDriver(SSHCliDriver):
    platform = "sonic_fabric"
    netmiko_device_type = "linux"

    def __init__(self, hostname: str, username: str, password: str, timeout: int = 60,
                 optional_args: dict | None = None) -> None:
        super().__init__(hostname, username, password, timeout, optional_args)
        self.commands = SONIC
        self._candidate: dict | None = None
        self._base: dict | None = None           # the running config the patch was computed from
        self._ops: list[dict] = []
        self._mode = PATCH
        self._last_checkpoint: str | None = None
        # the last day-0 diff: (running, candidate, diff); the objects themselves are kept, so `is`
        # on them is a safe test of "the same objects"
        self._reload_diff: tuple[dict, dict, str] | None = None
        self._staged: tuple[str, dict] | None = None        # the last day-0 file staged, as text and parsed
        self._read: tuple[str, dict] | None = None          # the last running config_db read, text and parsed
        self.reconnects = 0                      # logins after a detached reload (day 0, its undo)

    # --- candidate ------------------------------------------------------
    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        target = self._parse(filename, config, ReplaceConfigException)
        self._stage_patch(target, ReplaceConfigException)

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        patch = self._parse(filename, config, MergeConfigException)
        merged = copy.deepcopy(self._candidate if self._candidate is not None else self._running())
        for table, rows in patch.items():
            target = merged.setdefault(table, {})
            for key, fields in rows.items():
                target.setdefault(key, {}).update(fields)
        self._stage_patch(merged, MergeConfigException)

    def load_provision_candidate(self, filename: str | None = None, config: str | None = None,
                                 running: dict | None = None) -> None:
        """Day 0: a complete config_db for `config reload` (see the module docstring). running: the
        config_db the caller has just read over this session and built the file from (the diff's
        left side), so the switch is not asked for it twice; kept as given, never modified."""
        if config is not None and self._staged is not None and self._staged[0] == config:
            # the wave stages the file of the backup + diff phase again: the same text parses to the
            # same tables (never modified here), so it is not parsed twice
            target = self._staged[1]
        else:
            target = self._parse(filename, config, ReplaceConfigException)
        # The file goes up as given once it parsed as tables (what `config reload` reads is what was
        # checked); re-printing 300 kB per switch cost a wave of 32 a fifth of a second of CPU.
        text = config if config is not None else self._read_source(filename, None)
        try:
            self._base = running if running is not None else self._running()
            self._upload(text, self.remote_path(self.commands.candidate_path))
        except (OSError, CommandFailed, ValueError) as exc:
            raise ReplaceConfigException(f"{self.where}: staging the day-0 config failed: "
                                         f"{self._scrub(str(exc))}") from None
        self._candidate, self._mode, self._ops = target, RELOAD, []
        self._staged = text, target

    def _parse(self, filename, config, error: type[Exception]) -> dict:
        try:
            data = json.loads(self._read_source(filename, config))
        except (OSError, ValueError) as exc:
            raise error(f"{self.where}: candidate is not a readable config_db JSON: {exc}") from None
        if not isinstance(data, dict) or not all(isinstance(rows, dict) for rows in data.values()):
            raise error(f"{self.where}: config_db JSON must map table names to objects")
        return data

    def _stage_patch(self, target: dict, error: type[Exception]) -> None:
        try:
            base = self._running()
            ops = list(jsonpatch.make_patch(base, target))
            if ops:
                self._upload(json.dumps(ops, indent=2) + "\n", self.remote_path(self.commands.patch_path))
        except (OSError, CommandFailed, ValueError) as exc:
            raise error(f"{self.where}: staging the patch failed: {self._scrub(str(exc))}") from None
        self._candidate, self._base, self._ops, self._mode = target, base, ops, PATCH

    @property
    def patch_ops(self) -> list[dict]:
        """The RFC 6902 operations the staged day-2 candidate amounts to."""
        return copy.deepcopy(self._ops)

    @property
    def staged_base(self) -> dict | None:
        """The running config the staged candidate was compared with."""
        return self._base

    def compare_config(self) -> str:
        if self._candidate is None:
            return ""
        if self._mode == PATCH:
            return patch_text(self._ops)
        # A day-0 wave stages the file of the backup + diff phase again, on the same session: when
        # the fresh read of the running config has the same content, so has the diff. The line diff
        # of two indented dumps costs ~10 ms of CPU under the GIL per switch (a wave of 32: a third
        # of a second, issue 32). The same two objects as last time (the caller's unchanged read, the
        # file parsed once): the same diff. Other objects with the same contents (their C-encoded
        # JSON's hash, well under 1 ms) print the same too; the hashes are taken only when there is
        # an earlier diff to reuse, never in the backup + diff phase.
        base, cached = self._base or {}, self._reload_diff
        if cached is not None and cached[0] is base and cached[1] is self._candidate:
            return cached[2]
        if cached is not None and _content_key(cached[0]) == _content_key(base) \
                and _content_key(cached[1]) == _content_key(self._candidate):
            diff = cached[2]
        else:
            diff = config_db_diff(base, self._candidate)        # row by row: half the line diff's CPU
        self._reload_diff = base, self._candidate, diff
        return diff

    def discard_config(self) -> None:
        self._candidate, self._base, self._ops, self._mode = None, None, [], PATCH

    def pending_changes(self) -> str:
        """Driver extra (as NVUEDriver's): SONiC's config_db has no unapplied revision, every change
        is live; what another run leaves pending is its confirm timer (has_pending_commit)."""
        return ""

    # --- commit ---------------------------------------------------------
    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        if self.has_pending_commit():
            raise CommitError(f"{self.where}: a commit is pending confirmation; confirm or roll it back first")
        if self._candidate is None:
            raise CommitError(f"{self.where}: no candidate loaded; call load_replace_candidate first")
        try:
            if self._mode == RELOAD:
                self._commit_reload(revert_in)
            else:
                self._commit_patch(revert_in)
        except CommandFailed as exc:
            raise CommitError(f"{self.where}: {exc}") from None
        self.discard_config()

    def _checkpoint(self) -> str:
        checkpoint = self._checkpoint_name()
        self._check(self.commands.checkpoint.format(name=checkpoint))
        self._last_checkpoint = checkpoint
        return checkpoint

    def _checkpoint_name(self) -> str:
        return self.commands.checkpoint_prefix + dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%f")

    def _commit_patch(self, revert_in: int | None) -> None:
        if not self._ops:
            return
        checkpoint = self._checkpoint()
        # The timer first: a refused arm (the unit name is taken) changes nothing on the switch.
        if revert_in is not None:
            self._arm(revert_in, self.commands.revert_rollback.format(name=checkpoint))
        self._check(self.commands.apply_patch.format(path=self.remote_path(self.commands.patch_path)),
                    read_timeout=max(self.timeout, 120))
        if revert_in is None:
            self._check(self.commands.save)

    def _commit_reload(self, revert_in: int | None) -> None:
        """Day 0 in one shell line, each step only once the one before succeeded (bash `&&`): a
        checkpoint of the config before day 0, for the operator (`config rollback <name>` of the
        same SKU; the deploy's own undo is reloading the untouched startup file); the confirm
        timer, so that a switch that does not come back goes back to its saved startup config on
        its own; then the detached reload. One round trip instead of three, so the reloads of a
        wave of 32 start together (issue 26); what started is read from systemd-run's own lines."""
        checkpoint = self._checkpoint_name()
        command = self.commands.reload.format(path=self.remote_path(self.commands.candidate_path))
        steps = [self.commands.checkpoint.format(name=checkpoint)]
        if revert_in is not None:
            steps.append(self._timer_command(revert_in, self.commands.revert_reload))
        steps.append(self._detached_command(command, "day 0"))
        output, status = self._run(" && ".join(steps))
        output = self._scrub(output)
        armed = revert_in is None or _started_line(self.commands.confirm_unit, "timer") in output
        started = _started_line(self.commands.reload_unit, "service") in output
        # systemd-run's line is its proof that the unit runs; a status that never came back (the
        # answer cut short) does not make a running reload a failed one
        if armed and started and status in (0, None):
            self._last_checkpoint = checkpoint
            self._await_reload(self._reload_window(revert_in))
            if revert_in is None:
                self._check(self.commands.save)
            return
        if not armed:
            # the checkpoint or the timer failed: nothing runs on the switch, nothing to undo
            self._not_started(self.commands.confirm_unit, "timer", output, status,
                              what="day 0 did not start (checkpoint, confirm timer, reload)")
        try:
            self._stop_timer()      # the reload never started: nothing to undo
        except CommandFailed:
            pass                    # then the timer reloads the startup file: the same config
        self._not_started(self.commands.reload_unit, "service", output, status)

    # --- a reload beyond this session ---------------------------------------------------------
    def _reload_detached(self, command: str, why: str) -> None:
        self._systemd_run(self.commands.run_detached, self.commands.reload_unit, "service", command,
                          self.commands.reload_description.format(why=why, command=command))

    def _reload_window(self, revert_in: int | None) -> float:
        """How long the switch has to come back: optional_args reload_wait, else the confirm time
        less a quarter (at least 5 s) for the post-check and the confirm, else 10 minutes."""
        if self.optional_args.get("reload_wait") is not None:
            return float(self.optional_args["reload_wait"])
        if revert_in is None:
            return RELOAD_WAIT
        return float(max(revert_in - max(5, revert_in // 4), 5))

    def _await_reload(self, within: float) -> None:
        """Watch the reload unit over this session until the reload restarts eth0 under it (the
        session drops, or stays silent past RELOAD_PROBE_TIMEOUT when its TCP connection was left in
        the old VRF), then log in again, with backoff, until `systemctl show` says the unit has
        ended; raise one line if it failed or the switch is not back within `within` seconds."""
        unit = f"{self.commands.reload_unit}.service"
        started = time.monotonic()
        watching = self.device is not None
        delay, last, dropped = RELOAD_POLL if watching else RECONNECT_FIRST, "no answer yet", None
        refusals = 0
        while True:
            time.sleep(min(delay, max(0.0, started + within - time.monotonic())))
            try:
                if self.device is None:
                    self.open()
                    self.reconnects += 1
                state = self._units(unit, read_timeout=RELOAD_PROBE_TIMEOUT)[unit]
            except ConnectAuthError as exc:
                # paramiko reports a connection that drops during authentication as "Authentication
                # failed" (auth_handler.wait_for_response): eth0 restarting under a login looks like a
                # refusal once. A refusal on the next login too is the switch's answer.
                refusals += 1
                if refusals > 1:
                    raise CommandFailed(f"after the reload the switch refuses the login: {exc}") from None
                last, delay, watching = str(exc), EYE_ON_ETH0, False
                self.close()
            except (ConnectionException, CommandFailed) as exc:
                refusals = 0
                last = " ".join(str(exc).split())[:160]
                self.close()
                if watching:                    # the session that watched the reload dropped
                    dropped = time.monotonic()
                if dropped is not None and time.monotonic() - dropped < ETH0_OUTAGE:
                    delay = EYE_ON_ETH0         # eth0 restarts: back in seconds
                else:                           # not back yet: log in less and less often
                    delay = min(delay * RECONNECT_GROWTH, RECONNECT_MAX)
                watching = False
            else:
                refusals = 0
                active = state.get("ActiveState")
                if state.get("LoadState") == "not-found" or active == "inactive":
                    return                      # ended with status 0: systemd collected the unit
                if active == "failed":
                    result = state.get("Result", "")
                    self._run(self.commands.reset_failed.format(unit=unit))   # the journal keeps its output
                    raise CommandFailed(f"`{state.get('Description', unit)}` failed on the switch ({unit} "
                                        f"Result={result}; `journalctl -u {unit}` has its output)")
                last = f"{unit} is still {active} ({state.get('SubState', '')})"
                # the switch answers and the reload still runs: one `systemctl show` over this login
                # costs the switch little, and the wave waits for the moment it ends (issue 26)
                delay, watching = RELOAD_POLL, True
            if time.monotonic() - started >= within:
                raise CommandFailed(f"the switch did not come back within {within:.0f}s of its config reload "
                                    f"(last: {last})")

    # --- the confirm timer: stock systemd (commands.SonicCommands) ---------------------------
    def _systemd_run(self, template: str, unit: str, kind: str, command: str, description: str,
                     **fields) -> None:
        """Start a transient unit: exit status 0 and systemd-run's own line are the proof that it runs."""
        output, status = self._run(template.format(unit=unit, description=shlex.quote(description),
                                                   command=command, **fields))
        output = self._scrub(output)
        if status == 0 and _started_line(unit, kind) in output:
            return
        self._not_started(unit, kind, output, status)

    def _not_started(self, unit: str, kind: str, output: str, status: int | None, *, what: str = "") -> None:
        """Raise the one line for a unit systemd-run did not start (its own words, the exit status)."""
        said = " ".join(output.split())[:200] or "nothing"
        said += "" if status == 0 else f" (exit status {status})" if status is not None else " (no exit status)"
        if "already loaded" in output or "already exists" in output:
            raise CommandFailed(f"{unit}.{kind} cannot be started, a unit of that name is already on the switch "
                                f"(another run's timer, or a revert that failed: `systemctl status {unit}.service`, "
                                f"then `sudo systemctl reset-failed {unit}.service`); systemd-run said: {said}")
        raise CommandFailed(f"{what}: {said}" if what else f"systemd-run did not start {unit}.{kind}: {said}")

    def _timer_command(self, seconds: int, command: str) -> str:
        unit = self.commands.confirm_unit
        description = shlex.quote(self.commands.confirm_description.format(command=command))
        return self.commands.run_timer.format(unit=unit, description=description, command=command,
                                              seconds=int(seconds))

    def _detached_command(self, command: str, why: str) -> str:
        description = shlex.quote(self.commands.reload_description.format(why=why, command=command))
        return self.commands.run_detached.format(unit=self.commands.reload_unit, description=description,
                                                 command=command)

    def _arm(self, seconds: int, command: str) -> None:
        self._systemd_run(self.commands.run_timer, self.commands.confirm_unit, "timer", command,
                          self.commands.confirm_description.format(command=command), seconds=int(seconds))

    def _units(self, *names: str, read_timeout: float | None = None) -> dict[str, dict[str, str]]:
        """`systemctl show` of units: {Id: {property: value}} (Key=Value lines, a blank line between units)."""
        output = self._check(self.commands.show_units.format(units=" ".join(names)), read_timeout=read_timeout)
        units: dict[str, dict[str, str]] = {}
        for block in re.split(r"\n\s*\n", output.strip()):
            props = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
            if props.get("Id"):
                units[props["Id"]] = props
        missing = [n for n in names if n not in units]
        if missing:
            raise CommandFailed(f"`systemctl show` printed nothing for {', '.join(missing)}: "
                                f"{' '.join(output.split())[:120]!r}")
        return units

    def _confirm_status(self) -> dict:
        unit = self.commands.confirm_unit
        try:
            units = self._units(f"{unit}.timer", f"{unit}.service")
        except CommandFailed as exc:
            raise CommitError(f"{self.where}: cannot read the confirm timer ({unit}.timer): {exc}") from None
        timer, service = units[f"{unit}.timer"], units[f"{unit}.service"]
        waiting = timer.get("ActiveState") == "active" and timer.get("SubState") == "waiting"
        match = _DESCRIPTION.match(timer.get("Description", "") if waiting else service.get("Description", ""))
        return {"pending": waiting,
                "reverting": service.get("ActiveState") in ("active", "activating", "deactivating", "reloading"),
                "failed": service.get("ActiveState") == "failed",
                "ours": bool(match),
                "mode": None if not match else (ROLLBACK if match.group(1) else RELOAD),
                "checkpoint": match.group(1) if match else None,
                "description": timer.get("Description", "")}

    def _stop_timer(self) -> None:
        """Stop the confirm timer and make sure it is gone and its revert did not start."""
        unit = self.commands.confirm_unit
        said = " ".join(self._check(self.commands.stop_unit.format(unit=f"{unit}.timer")).split())
        if said:
            # systemctl stop is silent when it stops the unit; "Unit ... not loaded." means the timer
            # already fired (the switch reverted) or someone else stopped it
            raise CommandFailed(f"systemctl stop {unit}.timer: {said[:200]}")
        status = self._confirm_status()
        if status["reverting"]:
            raise CommandFailed(f"{unit}.timer fired before it was stopped: the switch is reverting")
        if status["pending"]:
            raise CommandFailed(f"{unit}.timer is still waiting after systemctl stop")

    def _restore_startup(self) -> None:
        """Day-0 undo now: stop the timer, then what it would have run, `config reload -y -f` of the
        untouched startup file, detached as the day-0 reload was (it moves eth0 back)."""
        self._stop_timer()
        self._reload_detached(self.commands.revert_reload, "rollback")
        self._await_reload(self._reload_window(None))

    def confirm_commit(self) -> None:
        if not self.has_pending_commit():
            raise CommitError(f"{self.where}: no commit is pending confirmation")
        try:
            self._stop_timer()
            self._check(self.commands.save)
        except CommandFailed as exc:
            raise CommitError(f"{self.where}: {exc}") from None
        with contextlib.suppress(CommandFailed, ReadIncomplete, CommitError):
            # the change is confirmed and saved; a checkpoint left over is disk space, not a failure
            self.prune_checkpoints()

    def prune_checkpoints(self) -> list[str]:
        """Delete fabricgen's checkpoints (its own name pattern only) beyond the newest
        `checkpoints_kept`; an operator's checkpoints are never touched. Returns the deleted names."""
        names = self._json(self.commands.list_checkpoints) or []
        ours = sorted(n for n in names if isinstance(n, str) and _OUR_CHECKPOINT.match(n))
        stale = ours[:-self.commands.checkpoints_kept] if self.commands.checkpoints_kept else ours
        if stale:
            self._check(" && ".join(self.commands.delete_checkpoint.format(name=n) for n in stale))
        return stale

    def has_pending_commit(self) -> bool:
        """The confirm timer waits, or the revert it started is still running: either way the
        running config is not settled."""
        status = self._confirm_status()
        return bool(status["pending"] or status["reverting"])

    def rollback(self) -> None:
        status = self._confirm_status()
        unit = self.commands.confirm_unit
        if status["reverting"]:
            raise CommitError(f"{self.where}: {unit}.timer already fired; the switch is reverting on its own")
        if status["pending"] and not status["ours"]:
            raise CommitError(f"{self.where}: {unit}.timer on the switch is not one fabricgen armed "
                              f"(Description={status['description']!r}); leave it to its owner")
        try:
            if status["pending"] and status["mode"] == RELOAD:
                # day 0: the startup file was never overwritten; reloading it is the undo
                self._restore_startup()
                return
            if status["pending"]:
                self._stop_timer()
                checkpoint = status["checkpoint"]
            else:
                checkpoint = self._last_checkpoint or self._newest_checkpoint()
            self._check(self.commands.rollback.format(name=checkpoint), read_timeout=max(self.timeout, 120))
            self._check(self.commands.save)
        except CommandFailed as exc:
            raise CommitError(f"{self.where}: rollback failed: {exc}") from None

    def _newest_checkpoint(self) -> str:
        names = self._json(self.commands.list_checkpoints) or []
        ours = sorted(n for n in names if isinstance(n, str) and n.startswith(self.commands.checkpoint_prefix))
        if not ours:
            raise CommitError(f"{self.where}: no fabricgen checkpoint to roll back to")
        return ours[-1]

    # --- getters --------------------------------------------------------
    def _running(self) -> dict:
        return self._running_text()[1]

    def _running_text(self) -> tuple[str, dict]:
        """The running config_db as printed and parsed: an object of tables, each an object of rows.
        Anything else beside the tables (what `show runningconfiguration all` adds as "bgpraw") is
        refused by name rather than carried into a candidate or a day-0 file."""
        command = self.commands.show_running
        output = self._check(command)
        if self._read is not None and self._read[0] == output:
            # the same bytes as the last read (a wave's fresh read of an unchanged switch): the same
            # tables, already checked; callers never modify them
            return self._read
        try:
            running = parse_json(output, f"`{command}`") if output.strip() else {}
        except DeviceDataError as exc:
            raise CommandFailed(f"{self.where}: {exc}") from None
        if not isinstance(running, dict):
            raise CommandFailed(f"{self.where}: the running config_db is not a JSON object")
        odd = sorted(str(k) for k, rows in running.items() if not isinstance(rows, dict))
        if odd:
            raise CommandFailed(f"{self.where}: `{command}` printed {', '.join(odd[:3])} beside the config_db "
                                "tables (not an object of rows)")
        self._read = output, running
        return output, running

    def running_config_db(self) -> dict:
        """Driver extra: the running config_db, read now and parsed (what get_config prints, as an
        object), for a caller that compares tables; it must not modify it."""
        return self._running()

    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False,
                   format: str = "text") -> dict:
        config = {"running": "", "startup": "", "candidate": ""}
        if retrieve in ("all", "running"):
            config["running"] = self._running_text()[0] + "\n"
        if retrieve in ("all", "startup"):
            config["startup"] = self._check(self.commands.show_startup) + "\n"
        if retrieve in ("all", "candidate") and self._candidate is not None:
            config["candidate"] = _dump(self._candidate)
        return config

    def get_facts(self) -> dict:
        version = {}
        for line in self._check(self.commands.show_version).splitlines():
            key, sep, value = line.partition(":")
            if sep:
                version[key.strip()] = value.strip()
        running = self._running()
        meta = running.get("DEVICE_METADATA", {}).get("localhost", {})
        hostname = str(meta.get("hostname", ""))
        return {
            "uptime": _uptime_seconds(version.get("Uptime", "")),
            "vendor": "NVIDIA",
            "os_version": version.get("SONiC Software Version", ""),
            "serial_number": version.get("Serial Number", ""),
            "model": version.get("Model Number") or version.get("HwSKU", ""),
            "hostname": hostname,
            "fqdn": hostname,
            "interface_list": sorted(running.get("PORT", {})),
        }

    # --- operational getters (napalm models; parsers in sonic_show.py, builders in oper.py) ----
    def _json(self, command: str):
        output = self._check(command)
        try:
            return parse_json(output, f"`{command}`") if output.strip() else {}
        except DeviceDataError as exc:       # hostile or broken output: this switch fails, the run goes on
            # cut JSON: a read that did not complete (see NVUEDriver._json); a cap: refused
            error = ReadIncomplete if "not JSON" in str(exc) else CommandFailed
            raise error(f"{self.where}: {exc}") from None

    def nos_release(self) -> str | None:
        """The release the switch runs ("202411"), read as generator/sonic_release.py says (the
        same parser as the day-0 gate and verify); None when it cannot be told."""
        return self._release()

    def nos_release_unknown(self) -> str:
        """Why nos_release() is None, naming the build string that was read."""
        self._release()
        return sonic_release.cannot_tell(self._version_fields, self._version_build)

    def nos_release_reading(self) -> dict:
        """{"release": nos_release(), "unknown": why it is None} for verify's os-version check."""
        release = self._release()
        return {"release": release, "unknown": None if release else self.nos_release_unknown()}

    def _release(self) -> str | None:
        if not hasattr(self, "_sonic_release"):
            # sonic_version.yml first; a switch without it (before 202205) or a read that failed
            # leaves the build string of `show version`, which the parser reads as strictly
            output, status = self._run(self.commands.show_version_file)
            try:
                fields = json.loads(output) if status == 0 else None
            except ValueError:
                fields = None
            self._version_fields = fields if isinstance(fields, dict) else {}
            self._version_build = "" if self._version_fields.get("build_version") else \
                sonic_show.build(self._check(self.commands.show_version))
            self._sonic_release = sonic_release.release_of(self._version_fields, self._version_build)
        return self._sonic_release

    def frr_bgp_summary(self) -> dict:
        """FRR's `show bgp summary json` (`deploy --day0`): peers bgpcfgd or frr.conf gave bgpd."""
        return self._json(self.commands.frr_bgp_summary_json)

    def get_interfaces(self) -> dict[str, models.InterfaceDict]:
        status = sonic_show.interfaces_status(self._check(self.commands.show_interfaces_status))
        running = self._running()
        ports = running.get("PORT") or {}
        # SONiC router ports all use the switch's base MAC (DEVICE_METADATA mac)
        mac = str((running.get("DEVICE_METADATA") or {}).get("localhost", {}).get("mac") or "")
        out = {}
        for name, row in sorted(status.items()):
            try:
                mtu = int(row.get("MTU") or 0)
            except ValueError:
                mtu = 0
            out[name] = oper.interface(is_up=row.get("Oper") == "up", is_enabled=row.get("Admin") == "up",
                                       description=str((ports.get(name) or {}).get("description") or ""),
                                       speed=oper.speed_mbps(row.get("Speed")), mtu=mtu, mac_address=mac)
        return out

    def _lldp(self) -> dict[str, list[dict]]:
        return {port: found for port, found in sonic_show.lldp_json0(self._json(self.commands.show_lldp_json)).items()
                if port.startswith("Ethernet")}

    def get_lldp_neighbors(self) -> dict[str, list[models.LLDPNeighborDict]]:
        return {port: [oper.lldp_neighbor(n["system_name"], n["port_id"]) for n in found]
                for port, found in sorted(self._lldp().items())}

    def get_lldp_neighbors_detail(self, interface: str = "") -> dict[str, list[models.LLDPNeighborDetailDict]]:
        out = {}
        for port, found in sorted(self._lldp().items()):
            if interface and port != interface:
                continue
            out[port] = [oper.lldp_neighbor_detail(
                remote_port=n["port_id"], remote_port_description=n["port_description"],
                remote_chassis_id=n["chassis_id"], remote_system_name=n["system_name"],
                remote_system_description=n["system_description"], capabilities=n["capabilities"],
                enabled_capabilities=n["enabled_capabilities"]) for n in found]
        return out

    def get_interfaces_counters(self) -> dict[str, models.InterfaceCounterDict]:
        """portstat -j: packets, errors and drops. RX_OK/TX_OK count unicast and non-unicast packets
        together (SAI IF_IN_UCAST + IF_IN_NON_UCAST); they stand in napalm's unicast keys. portstat's
        tables hold no byte totals, so the octet keys are 0."""
        out = {}
        for port, c in sorted(self._json(self.commands.show_counters_json).items()):
            if not isinstance(c, dict):
                continue
            n = sonic_show.count
            out[port] = oper.counters(rx_errors=n(c.get("RX_ERR")), tx_errors=n(c.get("TX_ERR")),
                                      rx_discards=n(c.get("RX_DRP")), tx_discards=n(c.get("TX_DRP")),
                                      rx_unicast_packets=n(c.get("RX_OK")), tx_unicast_packets=n(c.get("TX_OK")))
        return out

    def get_bgp_neighbors(self) -> dict:
        running = self._running()
        glob = (running.get("BGP_GLOBALS") or {}).get("default") or {}
        configured = {k.split("|", 1)[-1]: v or {} for k, v in (running.get("BGP_NEIGHBOR") or {}).items()}
        neighbors = self._json(self.commands.show_bgp_neighbors_json)
        if not glob and not neighbors:
            return {}
        router_id = str(glob.get("router_id") or "")
        peers = {}
        for nid, n in neighbors.items():
            if not isinstance(n, dict):
                continue
            router_id = router_id or str(n.get("localRouterId") or "")
            family = (n.get("addressFamilyInfo") or {}).get("ipv4Unicast") or {}
            up = str(n.get("bgpState", "")) == "Established"
            row = configured.get(str(nid), {})
            accepted = int(family.get("acceptedPrefixCounter", 0) or 0)
            peers[str(nid)] = oper.bgp_peer(
                local_as=n.get("localAs") or glob.get("local_asn") or 0, remote_as=n.get("remoteAs") or 0,
                remote_id=str(n.get("remoteRouterId") or "0.0.0.0"), is_up=up,
                # CONFIG_DB holds the admin state (frrcfgd: admin_status down -> `neighbor X shutdown`)
                is_enabled=str(row.get("admin_status", "up")) != "down", description=str(row.get("name") or ""),
                uptime=int(n.get("bgpTimerUpMsec") or 0) // 1000 if up else -1,
                received=accepted, accepted=accepted, sent=int(family.get("sentPrefixCounter", 0) or 0))
        return oper.bgp_neighbors(router_id or "0.0.0.0", peers)

    def get_pfc_ecn_counters(self) -> dict[str, dict]:
        """Driver extra (oper.py model): PFC pause frames per priority from `show pfc counters`; ECN-marked
        packets per unicast queue from `show queue wredcounters --json` on 202505+. Earlier releases
        have no ECN-marked counter in their CLI: `ecn_marked` is then oper.UNCOUNTED (-1)."""
        rx, tx = sonic_show.pfc_counters(self._check(self.commands.show_pfc_counters))
        release = self._release()
        ecn = None
        if release is None or release >= self.commands.ecn_counters_from:
            ecn = sonic_show.ecn_marked(self._json(self.commands.show_ecn_json))
        out = {}
        for port in sorted(set(rx) | set(tx)):
            by_tc = (ecn or {}).get(port, {})
            out[port] = oper.pfc_ecn(rx_pause=rx.get(port, {}), tx_pause=tx.get(port, {}),
                                     ecn_marked=sum(by_tc.values()) if ecn is not None else oper.UNCOUNTED,
                                     ecn_marked_by_tc=by_tc)
        return out


    def get_pfc_watchdog_counters(self) -> dict[str, dict]:
        """Driver extra (oper.pfc_watchdog): storms detected/restored per watched queue from
        `show pfcwd stats` (text only: pfcwd has no JSON)."""
        stats = self._parsed(self.commands.show_pfcwd_stats, sonic_show.pfcwd_stats)
        return {port: oper.pfc_watchdog(queues) for port, queues in sorted(stats.items())}

    # --- hardware, optics, time, routes (oper.py models; sonic_show.py parsers) ---------------
    def _parsed(self, command: str, parse):
        """PARSE of COMMAND's text, size-capped (device_data); a refused or unparsable answer is one line."""
        try:
            return parse(checked_text(self._check(command), f"`{command}`"))
        except (DeviceDataError, sonic_show.ParseError) as exc:
            raise CommandFailed(f"{self.where}: {exc}") from None

    def get_environment(self) -> models.EnvironmentDict:
        """psushow / fanshow / tempershow: a PSU or fan is ok when its Status is OK; a sensor is an
        alert when tempershow's Warning is True or it is at or above its High TH, critical at or
        above its Crit High TH."""
        def rows(command: str, key: str) -> list[dict[str, str]]:
            return self._parsed(command, lambda text: sonic_show.table_rows(text, key, f"`{command}`"))

        psus = {r["PSU"]: r.get("Status", "").upper() == "OK" for r in rows(self.commands.show_psus, "PSU")}
        fans = {f"{r.get('Drawer', '')}/{r['FAN']}": r.get("Status", "").upper() == "OK"
                for r in rows(self.commands.show_fans, "FAN")}
        temperatures = {}
        for r in rows(self.commands.show_temperatures, "Sensor"):
            current = sonic_show.number(r.get("Temperature"))
            if current is None:
                continue
            high, crit = sonic_show.number(r.get("High TH")), sonic_show.number(r.get("Crit High TH"))
            critical = crit is not None and current >= crit
            alert = critical or r.get("Warning", "").lower() == "true" or (high is not None and current >= high)
            temperatures[r["Sensor"]] = (current, alert, critical)
        return oper.environment(fans=fans, psus=psus, temperatures=temperatures)

    def get_transceivers(self) -> dict[str, dict]:
        """Driver extra (oper.py): every port's module from one `show interfaces transceiver eeprom --dom`.
        Media: copper ("Copper cable ...", CMIS media interface technology) is a DAC, an optical one an AOC."""
        found = self._parsed(self.commands.show_transceivers, sonic_show.transceivers)
        out = {}
        for port, entry in found.items():
            media_text = entry["media_text"].lower()
            limits = entry["limits"]
            thresholds = {key: (limits[low], limits[high]) for key, low, high in (
                ("rx_power_dbm", "RxPowerLowAlarm", "RxPowerHighAlarm"),
                ("tx_power_dbm", "TxPowerLowAlarm", "TxPowerHighAlarm"),
                ("temperature_c", "TempLowAlarm", "TempHighAlarm")) if low in limits and high in limits}
            out[port] = oper.transceiver(
                present=entry["present"], media="DAC" if "copper" in media_text else "AOC" if media_text else "",
                rx_power_dbm=[v for _, v in sorted(entry["rx"].items())],
                tx_power_dbm=[v for _, v in sorted(entry["tx"].items())],
                temperature_c=entry["temperature"], thresholds=thresholds)
        return out

    def get_optics(self) -> dict[str, models.OpticsDict]:
        return oper.optics(self.get_transceivers())

    def get_phy_counters(self) -> dict[str, dict]:
        """Driver extra (oper.py): `show interfaces counters fec-stats` (portstat -f): corrected and
        uncorrectable codewords, pre-FEC BER where the release prints it. No carrier changes: SONiC's
        CLI tables hold none (carrier_transitions None, verify skips flaps)."""
        out = {}
        for row in self._parsed(self.commands.show_fec_stats,
                                lambda text: sonic_show.table_rows(text, "FEC_CORR", "`show interfaces counters fec-stats`")):
            port = row.get("IFACE", "")
            if port.startswith("Ethernet"):
                out[port] = oper.phy_counters(fec_corrected=sonic_show.count(row.get("FEC_CORR")),
                                              fec_uncorrected=sonic_show.count(row.get("FEC_UNCORR")),
                                              pre_fec_ber=sonic_show.number(row.get("FEC_PRE_BER")),
                                              carrier_transitions=None)
        return out

    def get_ntp_stats(self) -> list[models.NTPStats]:
        """`show ntp`: the ntpq peers; the synchronized one is ntpq's system peer while ntpstat says
        synchronised."""
        source, peers = self._parsed(self.commands.show_ntp, sonic_show.ntp)
        return [oper.ntp_peer(remote=peer, synchronized=source is not None and system_peer,
                              referenceid=source or "") for peer, system_peer in peers]

    def get_route_next_hops(self) -> dict[str, dict]:
        """Driver extra (oper.py): FRR's `show ip route json`, the selected entry's active FIB next hops."""
        routes = self._json(self.commands.show_routes_json)
        if not isinstance(routes, dict):
            raise CommandFailed(f"{self.where}: `{self.commands.show_routes_json}` is not a JSON object")
        out = {}
        for prefix, entries in routes.items():
            if not isinstance(entries, list):
                continue
            chosen = next((e for e in entries if isinstance(e, dict) and e.get("selected")), None)
            if chosen is None:
                continue
            hops = [str(h.get("ip") or h.get("interfaceName") or "") for h in chosen.get("nexthops") or []
                    if isinstance(h, dict) and h.get("active") and h.get("fib", True)]
            out[str(prefix)] = oper.route(protocol=str(chosen.get("protocol", "")), next_hops=hops)
        return out


def _dump(config: dict) -> str:
    return config_db_text(config) + "\n"


def _content_key(config: dict) -> bytes:
    """What decides _dump(config), byte for byte: the same keys and values in sorted order."""
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).digest()


def _uptime_seconds(text: str) -> float:
    """Seconds from `uptime` text: ' 10:32:09 up 2 days,  3:04,  1 user, ...' or 'up 7 min, ...'."""
    match = re.search(r"up\s+(?:(\d+)\s+days?,\s*)?(?:(\d+):(\d+)|(\d+)\s+min)", text)
    if not match:
        return -1.0
    days, hours, minutes, only_minutes = (int(g) if g else 0 for g in match.groups())
    return float(days * 86400 + hours * 3600 + (minutes or only_minutes) * 60)


def patch_text(ops: list[dict]) -> str:
    """One line per op, for `deploy --dry-run` and the diff-line count."""
    lines = []
    for op in ops:
        value = "" if op["op"] == "remove" else " " + json.dumps(op.get("value"), sort_keys=True)
        source = f" from {op['from']}" if "from" in op else ""
        lines.append(f"{op['op']} {op['path']}{source}{value}")
    return "\n".join(lines)
