"""systemd's transient units as a SONiC switch's shell sees them: `systemd-run` and `systemctl`.

Stock SONiC has no commit-confirm (DEVICE_STATE.md). The deploy builds its revert timer and its
detached day-0 `config reload` from these two stock tools (generator/devices/commands.py,
SonicCommands); the lab implements what they do, with systemd 252's wording (Debian 12, the base
of SONiC 202311 and later):

  systemd-run [--unit NAME] [--on-active=SPAN] [--description TEXT] [-q] [-G] [--no-block] CMD...
  systemctl stop|show|is-active|reset-failed UNIT...   (show: -p/--property A,B  --value)

What the lab follows (systemd-run(1), systemctl(1), systemd.timer(5), src/run/run.c,
src/core/dbus-manager.c):
- With --on-active, systemd-run makes a transient NAME.timer (active, waiting) and NAME.service
  (loaded, inactive) and prints "Running timer as unit: NAME.timer" and "Will run service as
  unit: NAME.service". Without a timer option NAME.service starts at once: "Running as unit:
  NAME.service". Either way it returns at once; the command runs under systemd, not under the
  SSH session, so it survives the session.
- systemd-run gives its timers RemainAfterElapse=no (run.c: "Automatically clean up our transient
  timers"): once the timer fired and its service ended, the timer is unloaded.
- A transient service that ends with status 0 is garbage-collected. One that fails stays loaded,
  ActiveState=failed, Result=exit-code, until `systemctl reset-failed` (unless started with
  --collect).
- A name that is already loaded cannot be used again: "Failed to start transient timer unit: Unit
  NAME.service was already loaded or has a fragment file." and exit status 1 (systemd < 248 said
  "Unit NAME.service already exists.").
- `systemctl stop` of a unit that is not loaded: "Failed to stop X: Unit X not loaded." exit 5;
  stopping a waiting timer unloads it and its never-started service.
- `systemctl show` prints Key=Value lines, a blank line between units; a unit that does not exist
  shows LoadState=not-found, ActiveState=inactive, SubState=dead and its own name as Description.
- `systemctl is-active` prints one state per unit; exit 0 only when all are active, else 3.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from generator.lab.device import CommandError, Io

log = logging.getLogger("generator.lab")

# `show` prints a unit type's own interface first (Service: Result ...; Timer: Unit, Result ...),
# then org.freedesktop.systemd1.Unit's properties in their D-Bus order.
SERVICE_PROPERTIES = ("Result", "ExecMainStatus", "Id", "Description", "LoadState", "ActiveState", "SubState")
TIMER_PROPERTIES = ("Unit", "Result", "RemainAfterElapse", "Id", "Description", "LoadState", "ActiveState",
                    "SubState")
_SPAN = re.compile(r"(\d+(?:\.\d+)?)\s*(us|usec|ms|msec|s|sec|second|seconds|m|min|minute|minutes|h|hr|hour|"
                   r"hours|d|day|days)?")
_SECONDS = {None: 1, "us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1, "sec": 1, "second": 1,
            "seconds": 1, "m": 60, "min": 60, "minute": 60, "minutes": 60, "h": 3600, "hr": 3600,
            "hour": 3600, "hours": 3600, "d": 86400, "day": 86400, "days": 86400}
# What a transient service can run besides the switch's own commands (coreutils)
BUILTINS = ("true", "false", "sleep")


class SystemdError(CommandError):
    def __init__(self, message: str, status: int = 1):
        super().__init__(message)
        self.status = status


@dataclass
class Unit:
    id: str
    description: str
    active: str = "inactive"            # ActiveState
    sub: str = "dead"                   # SubState
    result: str = "success"
    exec_status: int = 0
    argv: list[str] = field(default_factory=list)      # a service's command
    service: str | None = None                          # a timer's service
    collect: bool = False
    handle: asyncio.TimerHandle | None = None
    task: asyncio.Task | None = None

    @property
    def is_timer(self) -> bool:
        return self.id.endswith(".timer")


class JournalIo:
    """Where a unit's output goes: the journal (the lab's log). No terminal, so no answers."""

    def __init__(self, device: str, unit: str):
        self.prefix = f"{device}: {unit}"
        self.text: list[str] = []

    def write(self, text: str) -> None:
        self.text.append(text)
        for line in text.splitlines():
            if line.strip():
                log.info("%s: %s", self.prefix, line)

    async def ask(self, prompt: str) -> str | None:
        self.write(prompt)
        return None


def parse_span(text: str) -> float:
    """A systemd time span ("30", "30s", "2min", "1h 30min") in seconds (systemd.time(7))."""
    total, pos, value = 0.0, 0, text.strip()
    if not value:
        raise ValueError(text)
    while pos < len(value):
        match = _SPAN.match(value, pos)
        if not match or match.end() == pos:
            raise ValueError(text)
        total += float(match.group(1)) * _SECONDS[match.group(2)]
        pos = match.end()
        while pos < len(value) and value[pos] == " ":
            pos += 1
    return total


class Systemd:
    """The transient units of one switch. `run(argv, io)` runs a switch command (its exit status, or
    None when the switch has no such command); `knows(name)` says whether it has one."""

    def __init__(self, device: str, run: Callable[[list[str], Io], Awaitable[int | None]],
                 knows: Callable[[str], bool], time_scale: Callable[[], float] = lambda: 1.0):
        self.device = device
        self._time_scale = time_scale          # `lab up --time-scale`: timers elapse N times sooner
        self._run = run
        self._knows = knows
        self.units: dict[str, Unit] = {}
        self._serial = 0

    def waiting_timers(self) -> list[Unit]:
        return [u for u in self.units.values() if u.is_timer and u.sub == "waiting"]

    # --- systemd-run -------------------------------------------------------------------------
    async def systemd_run(self, args: list[str], io: Io) -> None:
        unit = description = on_active = None
        quiet = collect = False
        i = 0
        while i < len(args) and args[i].startswith("-"):
            arg = args[i]
            if arg == "--":
                i += 1
                break
            name, eq, value = arg.partition("=")
            if name in ("--unit", "-u", "--on-active", "--description", "-p", "--property", "--timer-property"):
                if not eq:
                    i += 1
                    if i >= len(args):
                        raise SystemdError(f"systemd-run: option '{name}' requires an argument")
                    value = args[i]
                if name in ("--unit", "-u"):
                    unit = value
                elif name == "--on-active":
                    try:
                        on_active = parse_span(value)
                    except ValueError:
                        raise SystemdError(f"Failed to parse timer value: {value}") from None
                elif name == "--description":
                    description = value
                else:
                    raise SystemdError(f"systemd-run: {name} is not simulated by the lab")
            elif arg in ("-q", "--quiet"):
                quiet = True
            elif arg in ("-G", "--collect"):
                collect = True
            elif arg == "--no-block":
                pass
            else:
                raise SystemdError(f"systemd-run: unrecognized option '{arg}'")
            i += 1
        argv = args[i:]
        if not argv:
            raise SystemdError("Command line to execute required.")
        program = argv[0].rsplit("/", 1)[-1]
        if not (self._knows(program) or program in BUILTINS):
            raise SystemdError(f"Failed to find executable {argv[0]}: No such file or directory")
        if unit is None:
            self._serial += 1
            unit = f"run-u{self._serial}"
        base = re.sub(r"\.(service|timer)$", "", unit)
        service = Unit(f"{base}.service", description or f"[systemd-run] {' '.join(argv)}",
                       argv=[program] + argv[1:], collect=collect)
        if on_active is None:
            self._refuse_loaded("service", service.id)
            self.units[service.id] = service
            self._start(service)
            if not quiet:
                io.write(f"Running as unit: {service.id}\n")
            return
        timer = Unit(f"{base}.timer", description or f"[systemd-run] {' '.join(argv)}", service=service.id)
        self._refuse_loaded("timer", timer.id, service.id)
        self.units[service.id] = service
        self.units[timer.id] = timer
        timer.active, timer.sub = "active", "waiting"
        timer.handle = asyncio.get_running_loop().call_later(on_active / self._time_scale(), self._fire, timer.id)
        if not quiet:
            io.write(f"Running timer as unit: {timer.id}\nWill run service as unit: {service.id}\n")

    def _refuse_loaded(self, kind: str, *names: str) -> None:
        for name in names:
            if name in self.units:
                raise SystemdError(f"Failed to start transient {kind} unit: Unit {name} was already loaded or "
                                   "has a fragment file.")

    def _fire(self, timer_id: str) -> None:
        timer = self.units.get(timer_id)
        if timer is None or timer.sub != "waiting":
            return
        timer.handle = None
        timer.sub = "elapsed"                    # still ActiveState=active until its service ends
        service = self.units.get(timer.service or "")
        if service is None or service.active in ("active", "activating"):
            self._unload(timer_id)
            return
        log.warning("%s: %s elapsed: running %s", self.device, timer_id, " ".join(service.argv))
        self._start(service)

    def _start(self, service: Unit) -> None:
        service.active, service.sub, service.result = "active", "running", "success"
        service.task = asyncio.get_running_loop().create_task(self._exec(service))

    async def _exec(self, service: Unit) -> None:
        io = JournalIo(self.device, service.id)
        argv = service.argv
        try:
            if argv[0] == "true":
                status = 0
            elif argv[0] == "false":
                status = 1
            elif argv[0] == "sleep":
                await asyncio.sleep(parse_span(argv[1]) if len(argv) > 1 else 0)
                status = 0
            else:
                status = await self._run(list(argv), io)
        except asyncio.CancelledError:
            status = None                          # stopped: SIGTERM
        except Exception as exc:  # noqa: BLE001 - a failing unit must not take the lab down
            log.warning("%s: %s failed: %s", self.device, service.id, exc)
            status = 1
        service.task = None
        if status is None and service.active == "deactivating":
            self._unload(service.id)
        elif status == 0:
            self._unload(service.id)
        else:
            service.exec_status = 127 if status is None else status
            service.active, service.sub, service.result = "failed", "failed", "exit-code"
            log.warning("%s: %s failed with status %s", self.device, service.id, service.exec_status)
            if service.collect:
                self._unload(service.id)
        for timer in [u for u in self.units.values() if u.is_timer and u.service == service.id]:
            if timer.sub == "elapsed":
                self._unload(timer.id)             # RemainAfterElapse=no

    def _unload(self, name: str) -> None:
        unit = self.units.pop(name, None)
        if unit is not None and unit.handle is not None:
            unit.handle.cancel()

    # --- systemctl ---------------------------------------------------------------------------
    async def systemctl(self, args: list[str], io: Io) -> None:
        verb, properties, value_only, names = None, [], False, []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg in ("-p", "--property") and i + 1 < len(args):
                i += 1
                properties += args[i].split(",")
            elif arg.startswith("--property="):
                properties += arg.split("=", 1)[1].split(",")
            elif arg.startswith("-p") and len(arg) > 2:
                properties += arg[2:].split(",")
            elif arg == "--value":
                value_only = True
            elif arg in ("--no-pager", "-q", "--quiet", "--no-block"):
                pass
            elif arg.startswith("-"):
                raise SystemdError(f"systemctl: unrecognized option '{arg}'")
            elif verb is None:
                verb = arg
            else:
                names.append(arg if "." in arg else f"{arg}.service")
            i += 1
        if verb == "show" and names:
            self._show(names, properties, value_only, io)
        elif verb == "stop" and names:
            await self._stop(names, io)
        elif verb == "is-active" and names:
            states = [self.units[n].active if n in self.units else "inactive" for n in names]
            io.write("".join(f"{s}\n" for s in states))
            if any(s != "active" for s in states):
                raise SystemdError("", status=3)
        elif verb == "reset-failed":
            for name in names or [n for n, u in self.units.items() if u.active == "failed"]:
                unit = self.units.get(name)
                if unit is None:
                    raise SystemdError(f"Failed to reset failed state of unit {name}: Unit {name} not loaded.")
                if unit.active == "failed":
                    self._unload(name)
        else:
            raise SystemdError(f"systemctl {' '.join(args)}: not simulated (the lab knows show, stop, is-active "
                               "and reset-failed of transient units)")

    def _show(self, names: list[str], wanted: list[str], value_only: bool, io: Io) -> None:
        blocks = []
        for name in names:
            unit = self.units.get(name)
            props = {"Id": name, "Description": unit.description if unit else name,
                     "LoadState": "loaded" if unit else "not-found",
                     "ActiveState": unit.active if unit else "inactive", "SubState": unit.sub if unit else "dead",
                     "Result": unit.result if unit else "success"}
            if name.endswith(".timer"):
                order = TIMER_PROPERTIES
                props.update({"Unit": (unit.service if unit else "") or "", "RemainAfterElapse": "no" if unit else "yes"})
            else:
                order = SERVICE_PROPERTIES
                props["ExecMainStatus"] = str(unit.exec_status if unit else 0)
            keys = [k for k in order if not wanted or k in wanted]
            blocks.append("".join(f"{props[k]}\n" if value_only else f"{k}={props[k]}\n" for k in keys))
        io.write("\n".join(blocks))

    async def _stop(self, names: list[str], io: Io) -> None:
        missing = []
        for name in names:
            unit = self.units.get(name)
            if unit is None:
                missing.append(name)
                continue
            if unit.is_timer:
                self._unload(name)
                service = self.units.get(unit.service or "")
                if service is not None and service.active == "inactive":
                    self._unload(service.id)   # never started, now unreferenced: collected
            elif unit.task is not None:
                unit.active, unit.sub = "deactivating", "stop-sigterm"
                task = unit.task
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            elif unit.active != "failed":
                self._unload(name)
        if missing:
            io.write("".join(f"Failed to stop {n}: Unit {n} not loaded.\n" for n in missing))
            raise SystemdError("", status=5)
