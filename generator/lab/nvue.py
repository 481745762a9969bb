"""Simulated Cumulus Linux NVUE: pending/applied revisions, apply with a confirm timer."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import re
import time
import zlib
from dataclasses import dataclass, field

from generator.lab import flat_files, nvue_oper, platform_oper
from generator.lab import tree as nvtree
from generator.lab.device import CommandError, Device, Io
from generator.lab.factory import (
    Management,
    authorized_keys,
    check_password,
    factory_config,
    hash_password,
    lease_for,
    management_loss,
    manages_users,
    users_of,
)
from generator.lab.schema import SchemaError, resolve_cli, schema_for, validate_tree, version_key
from generator.lab.values import check_values
from generator.lab.world import chassis_mac

DEFAULT_CONFIRM_SECONDS = 600
STARTUP_FILE = "/etc/nvue.d/startup.yaml"
_DURATION = re.compile(r"^(\d+)([smh]?)$")
# NVUE's refusal when an apply would remove the account of a user with an open session (DEVICE_STATE.md).
LOGGED_IN_USER_MESSAGE = "You cannot delete a logged in user account"
log = logging.getLogger("generator.lab")


@dataclass
class Revision:
    rev_id: int
    config: dict
    state: str = "pending"
    message: str = ""
    date: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    user: str = "cumulus"


@dataclass
class PendingConfirm:
    rev_id: int
    previous_id: int
    deadline: float
    handle: asyncio.TimerHandle


# Files someone else writes into a switch's /etc are seen within this many seconds (flat_files.py)
FLAT_FILES_REREAD_S = 0.5


NVUE_START_SECONDS = 2.0


class _ExitZero(Exception):
    """An nv command that printed its error and still exits 0."""


class NvueDevice(Device):
    os_name = "cumulus"

    def __init__(self, *args, platform: str = "SN5600", mgmt: Management | None = None,
                 users: dict[str, str] | None = None, factory_hostname: str | None = None,
                 mac: str | None = None, serial: str | None = None, **kwargs):
        """users: login name -> hashed password of the factory accounts (none: nobody can log in).

        factory_hostname, mac, serial: a switch as it leaves the factory (`lab up --ztp`): its
        shipped hostname and the eth0 MAC and serial number printed on its label (the inventory).
        """
        super().__init__(*args, **kwargs)
        self.platform = platform
        self.schema = schema_for(self.version)
        self.mgmt = mgmt or lease_for(0)
        self.factory_hostname = factory_hostname or self.name
        self.eth0_mac = mac or chassis_mac(self.name)
        self.serial = serial or f"MT{zlib.crc32(self.name.encode()):010d}"
        # The switch boots from its factory startup.yaml: applied revision 0 is that file (NVUE-CLI page).
        self.factory = factory_config(self.version, self.factory_hostname, self.mgmt, users or {})
        self.revisions: dict[int, Revision] = {
            0: Revision(0, copy.deepcopy(self.factory), state="applied", message="factory default")}
        self.applied_id = 0
        self.startup: dict = {}
        self.pending: Revision | None = None
        self.history: list[dict] = []
        self.confirm: PendingConfirm | None = None
        self._next_id = 1
        self.cut_off: str | None = None  # why the switch cannot be reached, while it cannot
        self._save_startup(self.factory)
        self._write_flat_files()

    # --- identity -------------------------------------------------------
    @property
    def applied(self) -> dict:
        return self.revisions[self.applied_id].config

    @property
    def hostname(self) -> str:
        configured = self.applied.get("system", {}).get("hostname")
        # DHCP option 12 names a switch that still has its factory hostname (Cumulus ZTP page: the
        # ZTP script finds the switch by the hostname DHCP gave it); a configured one wins.
        if self.dhcp_hostname and (not configured or configured == self.factory_hostname):
            return self.dhcp_hostname
        return str(configured or self.name)

    @property
    def release(self) -> str:
        parts = self.version.split(".")
        return ".".join(parts + ["0"] * (3 - len(parts)))

    @property
    def autosaves(self) -> bool:
        return version_key(self.version) >= (5, 9)

    def prompt(self, username: str) -> str:
        return f"{username}@{self.hostname}:mgmt:~$ "

    # --- logins: the switch's own accounts, at its eth0 address -------------
    def check_password(self, username: str, password: str) -> bool:
        # Only accounts of the APPLIED config exist (system aaa user); the password is crypt(3)-checked
        # against the hash /etc/shadow holds: what NVUE last applied, or what usermod -p set since.
        if not manages_users(self.version):
            return super().check_password(username, password)
        hashed = self._shadow(username)
        return hashed is not None and check_password(password, hashed)

    # --- /etc/shadow: the Linux side of NVUE's accounts -------------------
    # An apply that gives a user a new hashed-password writes it with usermod -p, which also records
    # the change (shadow-utils usermod.c: sp_lstchg = today) and so ends a forced change; a hash
    # set with usermod -p outside NVUE lasts until NVUE applies another one for that user.
    expired: set[str]
    _shadow_hash: dict[str, str]
    _nvue_hash: dict[str, str]

    def _shadow(self, username: str) -> str | None:
        if not hasattr(self, "_shadow_hash"):
            self.expired, self._shadow_hash, self._nvue_hash = set(), {}, {}
        user = users_of(self.applied).get(username)
        if user is None:
            return None
        nvue = str(user.get("hashed-password") or "")
        if self._nvue_hash.setdefault(username, nvue) != nvue:
            self._nvue_hash[username] = self._shadow_hash[username] = nvue
            self.expired.discard(username)
        return self._shadow_hash.setdefault(username, nvue)

    def expire_password(self, username: str) -> None:
        """`passwd -e USER`: the factory `cumulus` account ships so (User-Accounts page)."""
        self._shadow(username)
        self.expired.add(username)

    def must_change_password(self, username: str) -> bool:
        self._shadow(username)
        return username in self.expired

    def change_password(self, username: str, old: str, new: str) -> bool:
        if not new or new == old or not self.check_password(username, old):
            return False
        self._shadow_hash[username] = hash_password(new)
        self.expired.discard(username)
        return True

    def usermod_password(self, username: str, hashed: str) -> bool:
        """`usermod -p HASH USER` (False: no such user)."""
        if self._shadow(username) is None:
            return False
        self._shadow_hash[username] = hashed
        self.expired.discard(username)
        return True

    def has_user(self, username: str) -> bool:
        return self._shadow(username) is not None

    def check_public_key(self, username: str, key_type: str, key_b64: str) -> bool:
        user = users_of(self.applied).get(username)
        return user is not None and (key_type, key_b64) in authorized_keys(user)

    def awaiting_confirmation(self) -> bool:
        return self.confirm is not None

    def refuses_connections(self) -> str | None:
        return self.cut_off

    nvue_ready_at = 0.0     # time.monotonic() from which nv answers

    def eth0_vrf(self) -> str:
        # Cumulus Linux 5.x: the management VRF `mgmt` is on by default and eth0 sits in it
        # (Management-VRF page; DEVICE_STATE.md)
        return "mgmt"

    def take_lease(self, mgmt: Management, hostname: str | None) -> None:
        super().take_lease(mgmt, hostname)
        # the DHCP answer that starts ZTP comes early in boot, before nvued is up: NVUE answers
        # NVUE_START_SECONDS later (the lab's short stand-in for the switch's boot)
        self.nvue_ready_at = time.monotonic() + NVUE_START_SECONDS * self.time_scale
        self._check_management()

    def _check_management(self) -> None:
        """After the applied revision changed: is eth0 still at its address in the mgmt VRF?"""
        loss = management_loss(self.applied, self.version, self.mgmt)
        if loss and not self.cut_off:
            until = (f"until the confirm timer reverts revision {self.confirm.rev_id}" if self.confirm
                     else "for good: no confirm timer is pending (a real switch now needs its console)")
            log.warning("%s: applied revision %s cuts management: %s; SSH to %s is refused %s",
                        self.name, self.applied_id, loss, self.mgmt.ip, until)
            self.cut_off = loss
            # Sessions that came in over eth0 lose their address too; let the apply's output go first.
            asyncio.get_running_loop().call_later(0.1, self.cut_connections)
        elif not loss and self.cut_off:
            log.warning("%s: revision %s restores management: eth0 %s in the mgmt VRF, logins work again",
                        self.name, self.applied_id, self.mgmt.address)
            self.cut_off = None

    def _check_logged_in_users(self, config: dict) -> None:
        # NVUE refuses an apply that would delete the account of a logged-in user (DEVICE_STATE.md).
        if not manages_users(self.version):
            return
        remaining = users_of(config)
        gone = sorted(u for u in self.logged_in_users() if u not in remaining)
        if gone:
            raise CommandError(f"Error: {LOGGED_IN_USER_MESSAGE}: {', '.join(gone)}")

    # --- dispatch -------------------------------------------------------
    async def run(self, argv: list[str], io: Io) -> int | None:
        if argv[:1] == ["vtysh"]:
            return self._vtysh(argv[1:], io)
        if not argv or argv[0] != "nv":
            return None
        args = argv[1:]
        if time.monotonic() < self.nvue_ready_at:
            # nvued starts late in boot, after DHCP may already have started ZTP: until it answers,
            # nv fails (the lab's wording; a script must go by the exit status, DEVICE_STATE.md)
            io.write("Error: Unable to connect to nvued: the NVUE service is not ready yet\n")
            return 1
        try:
            if args[:1] == ["set"]:
                self._cli_set(args[1:], io)
            elif args[:1] == ["unset"]:
                self._cli_unset(args[1:], io)
            elif args[:1] == ["config"]:
                await self._config(args[1:], io)
            elif args[:1] == ["show"]:
                self._show(args[1:], io)
            else:
                raise CommandError("Error: usage: nv [set|unset|config|show] ...")
        except (CommandError, SchemaError, nvtree.DocumentError) as exc:
            io.write(f"{exc}\n")
            return 1
        except _ExitZero:
            return 0
        return 0

    # --- pending edits --------------------------------------------------
    def _pending(self) -> Revision:
        if self.pending is None:
            self.pending = Revision(self._take_id(), copy.deepcopy(self.applied))
            self.revisions[self.pending.rev_id] = self.pending
        return self.pending

    def _take_id(self) -> int:
        rev_id, self._next_id = self._next_id, self._next_id + 1
        return rev_id

    def _cli_set(self, tokens: list[str], io: Io) -> None:
        if not tokens:
            raise CommandError("Error: nv set needs a path")
        keys, value = resolve_cli(self.schema, tokens)
        patch = nvtree.nest(keys, {} if value is None else value)
        try:
            check_values(patch, self.version)   # NVUE-Object-Model: a bad value is refused, pending unchanged
        except SchemaError:
            # The path lists document some string leaves with a placeholder (`system hostname
            # <idn-hostname>`), which the trie reads as a key; NVUE types the leaf by its object
            # model, so `nv set system hostname leaf7` sets a string. Retry the last token as the value.
            if value is not None or len(keys) < 2:
                raise
            scalar = nvtree.nest(keys[:-1], keys[-1])
            check_values(scalar, self.version)
            patch = scalar
        nvtree.merge(self._pending().config, patch)

    def _cli_unset(self, tokens: list[str], io: Io) -> None:
        if not tokens:
            raise CommandError("Error: nv unset needs a path")
        keys, value = resolve_cli(self.schema, tokens)
        if value is not None:
            keys = [*keys, value]
        nvtree.remove(self._pending().config, nvtree.nest(keys, {}))

    def _load_file(self, path: str) -> list[dict]:
        return self._checked_document(self.read_file(path))

    def _checked_document(self, document: str) -> list[dict]:
        items = nvtree.load_document(document)
        for item in items:
            for kind, body in item.items():
                if kind != "header":
                    validate_tree(self.schema, body)
                if kind == "set":
                    # NVUE-Object-Model: one bad value refuses the whole file (replace and patch alike)
                    check_values(body, self.version)
        return items

    def boot_applied(self, document: str, message: str = "applied before the lab started") -> None:
        """LabDevice.applied: the switch as `nv config patch FILE`, `nv config apply` and
        `nv config save` left it before this boot: revision 1 applied over the factory's revision
        0 (superseded), in the history and in startup.yaml, checked as `nv config patch` checks a
        file. A document the switch would refuse stops the lab."""
        items = self._checked_document(document)
        revision = Revision(self._take_id(), nvtree.apply_document(copy.deepcopy(self.applied), items),
                            state="applied", message=message)
        self.revisions[revision.rev_id] = revision
        self.revisions[self.applied_id].state = "superseded"
        self.applied_id = revision.rev_id
        self._record(revision.rev_id, "applied", message)
        self._save_startup(self.applied)

    # --- nv config ------------------------------------------------------
    async def _config(self, args: list[str], io: Io) -> None:
        sub, rest = (args[0], args[1:]) if args else ("", [])
        if sub == "replace" and len(rest) == 1:
            items = self._load_file(rest[0])
            self._pending().config = nvtree.apply_document({}, items)
        elif sub == "patch" and len(rest) == 1:
            items = self._load_file(rest[0])
            pending = self._pending()
            pending.config = nvtree.apply_document(pending.config, items)
        elif sub == "diff":
            self._diff(rest, io)
        elif sub == "apply":
            await self._apply(rest, io)
        elif sub == "detach":
            if self.pending is not None:
                self.pending.state = "detached"
                self.pending = None
        elif sub == "save":
            self._save_startup(self.applied)
            io.write("saved\n")
        elif sub == "history":
            self._history(rest, io)
        elif sub == "revision":
            self._revision(rest, io)
        elif sub == "show":
            self._show_config(rest, io)
        else:
            raise CommandError(f"Error: unknown or incomplete command: nv config {' '.join(args)}")

    @staticmethod
    def _option(args: list[str], flag: str, default: str) -> str:
        for i, arg in enumerate(args):
            if arg == flag and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith(flag + "="):
                return arg.split("=", 1)[1]
        return default

    def _diff(self, args: list[str], io: Io) -> None:
        output = self._option(args, "-o", "yaml")
        if self.pending is None:
            return
        items = nvtree.diff_document(self.applied, self.pending.config)
        if not items:
            return
        if output == "commands":
            io.write("\n".join(nvtree.document_commands(items)) + "\n")
        elif output == "json":
            io.write(json.dumps(items, indent=2) + "\n")
        else:
            io.write(nvtree.dump_yaml(items))

    def _header(self) -> dict:
        return {"model": self.platform, "nvue-api-version": "nvue_v1", "rev-id": "1.0",
                "version": f"Cumulus Linux {self.release}"}

    def _document(self, config: dict) -> list[dict]:
        return [{"header": self._header()}, {"set": copy.deepcopy(config)}]

    def _rev_config(self, which: str) -> dict:
        if which == "applied":
            return self.applied
        if which == "startup":
            return self.startup
        if which == "empty":
            return {}
        if which == "pending":
            return self.pending.config if self.pending else self.applied
        if which.isdigit() and int(which) in self.revisions:
            return self.revisions[int(which)].config
        raise CommandError(f"Error: unknown revision '{which}'")

    def _show_config(self, args: list[str], io: Io) -> None:
        config = self._rev_config(self._option(args, "-r", "applied"))
        output = self._option(args, "-o", "yaml")
        document = self._document(config)
        if output == "commands":
            io.write("\n".join(nvtree.to_commands(config)) + "\n")
        elif output == "json":
            io.write(json.dumps(document, indent=2) + "\n")
        else:
            io.write(nvtree.dump_yaml(document))

    def _history(self, args: list[str], io: Io) -> None:
        events = list(reversed(self.history))
        if self._option(args, "-o", "table") == "json":
            io.write(json.dumps(events, indent=2) + "\n")
            return
        for event in events:
            io.write(f"rev-id: {event['rev-id']}  state: {event['state']}  date: {event['date']}  "
                     f"user: {event['user']}  message: {event['message']}\n")

    def _revision(self, args: list[str], io: Io) -> None:
        listing = {str(r.rev_id): {"state": r.state, "message": r.message, "date": r.date}
                   for r in self.revisions.values()}
        if self._option(args, "-o", "table") == "json":
            io.write(json.dumps(listing, indent=2) + "\n")
            return
        for rev_id, info in listing.items():
            io.write(f"{rev_id:>6}  {info['state']:<12} {info['date']}  {info['message']}\n")

    # --- nv config apply ------------------------------------------------
    async def _apply(self, args: list[str], io: Io) -> None:
        flags = set()
        confirm_seconds: int | None = None
        message = ""
        target = None
        i = 0
        while i < len(args):
            arg = args[i]
            if arg in ("-y", "--assume-yes"):
                flags.add("yes")
            elif arg in ("--confirm-yes", "--confirm-no", "--confirm-status"):
                flags.add(arg)
            elif arg == "--confirm" or arg.startswith("--confirm="):
                value = arg.split("=", 1)[1] if "=" in arg else None
                if value is None and i + 1 < len(args) and _DURATION.match(args[i + 1]):
                    i += 1
                    value = args[i]
                confirm_seconds = _parse_duration(value) if value else DEFAULT_CONFIRM_SECONDS
            elif arg in ("-m", "--message") and i + 1 < len(args):
                i += 1
                message = args[i]
            elif not arg.startswith("-") and target is None:
                target = arg
            else:
                raise CommandError(f"Error: unknown option '{arg}' for nv config apply")
            i += 1

        if "--confirm-status" in flags:
            self._confirm_status(io)
        elif "--confirm-yes" in flags:
            self._confirm_target(target)
            self._confirm_yes(io)
        elif "--confirm-no" in flags:
            if self.confirm is None:
                raise CommandError("Error: there is no pending confirm to reject")
            self._confirm_target(target)
            self._revert("rejected")
            io.write("Pending confirm rejected; previous revision restored\n")
        else:
            await self._apply_config(target, confirm_seconds, message, "yes" in flags, io)

    async def _apply_config(self, target: str | None, confirm_seconds: int | None, message: str,
                            assume_yes: bool, io: Io) -> None:
        if self.confirm is not None:
            raise CommandError(
                f"Error: revision {self.confirm.rev_id} is waiting for confirmation; "
                "run 'nv config apply --confirm-yes' or '--confirm-no' first")
        if target is None:
            config = self.pending.config if self.pending else self.applied
        else:
            config = self._rev_config(target)
        if not assume_yes:
            answer = await io.ask("Are you sure? [y/N] ")
            if (answer or "").strip().lower() not in ("y", "yes"):
                raise CommandError("Aborted")
        self._check_logged_in_users(config)
        faults = self.faults.current()
        if faults.apply_error:
            if faults.apply_error_status == 0:
                # NVUE can print an error and still exit 0 (DEVICE_STATE.md, netlab PR 1726): nothing applied
                io.write(f"Error: {faults.apply_error}\n")
                raise _ExitZero()
            raise CommandError(f"Error: {faults.apply_error}")

        if target is None and self.pending is not None:
            revision = self.pending
            self.pending = None
        else:
            revision = Revision(self._take_id(), copy.deepcopy(config))
            self.revisions[revision.rev_id] = revision
        revision.state, revision.message = "applied", message
        previous_id = self.applied_id
        self.revisions[previous_id].state = "superseded"
        self.applied_id = revision.rev_id
        if self.pending is not None:
            # Other pending edits are rebased on what is now applied.
            self.pending.state = "detached"
            self.pending = None
        self._record(revision.rev_id, "applied", message)
        self._write_flat_files()
        if confirm_seconds is not None:
            loop = asyncio.get_running_loop()
            wall = confirm_seconds / self.time_scale
            handle = loop.call_later(wall, self._revert, "confirm timeout")
            self.confirm = PendingConfirm(revision.rev_id, previous_id, time.monotonic() + wall, handle)
            revision.state = "confirm"
            io.write(f"applied [rev_id: {revision.rev_id}]; confirm within {confirm_seconds}s "
                     "with 'nv config apply --confirm-yes'\n")
        else:
            if self.autosaves:
                self._save_startup(self.applied)
            io.write(f"applied [rev_id: {revision.rev_id}]\n")
        self._check_management()

    def _record(self, rev_id: int, state: str, message: str) -> None:
        self.history.append({"rev-id": rev_id, "state": state, "message": message,
                             "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "user": "cumulus"})

    def _confirm_target(self, target: str | None) -> None:
        # napalm-cumulus confirms `nv config apply <rev> --confirm-yes` (commands.py table, V3):
        # a revision that is not the one waiting is refused. The bare form is kept (unverified).
        if target is not None and (self.confirm is None or target != str(self.confirm.rev_id)):
            raise CommandError(f"Error: revision {target} is not waiting for confirmation")

    def _confirm_status(self, io: Io) -> None:
        if self.confirm is None:
            io.write("No pending confirm\n")
            return
        left = max(0, round((self.confirm.deadline - time.monotonic()) * self.time_scale))
        io.write(f"Revision {self.confirm.rev_id} pending confirm: {left} seconds remaining\n")

    def _confirm_yes(self, io: Io) -> None:
        if self.confirm is None:
            raise CommandError("Error: there is no pending confirm")
        self.confirm.handle.cancel()
        rev_id = self.confirm.rev_id
        self.confirm = None
        self.revisions[rev_id].state = "applied"
        self._record(rev_id, "confirmed", "")
        if self.autosaves:
            self._save_startup(self.applied)
        io.write(f"confirmed [rev_id: {rev_id}]\n")

    def _revert(self, reason: str) -> None:
        pending = self.confirm
        if pending is None:
            return
        pending.handle.cancel()
        self.confirm = None
        self.revisions[pending.rev_id].state = "confirm_fail"
        self.applied_id = pending.previous_id
        self.revisions[pending.previous_id].state = "applied"
        self._record(pending.previous_id, "rollback", f"{reason} of revision {pending.rev_id}")
        self._write_flat_files()
        self._check_management()

    def _save_startup(self, config: dict) -> None:
        self.startup = copy.deepcopy(config)
        self.write_file(STARTUP_FILE, nvtree.dump_yaml(self._document(config)))

    # --- operational state: the lab world asks the applied config (world.py) ---------
    fabric = None   # world.Fabric, set by the lab server; None: no world, every port is down

    @property
    def applied_id(self) -> int:
        return self._applied_id

    @applied_id.setter
    def applied_id(self, rev_id: int) -> None:
        # when the applied config last changed: a BGP session of it is up SESSION_SETTLE_S after
        # that moment, whether or not anyone asked meanwhile (world.py)
        self._applied_id, self._applied_at = rev_id, time.time()

    def config_changed_at(self) -> float:
        flat = [s[0] / 1e9 for s in self._flat_stamp() if s is not None]
        return max([self._applied_at, *flat])

    def config_token(self) -> int:
        # flat files someone else writes configure the switch too (flat_files.py): a new state of
        # them is a new config for the world's caches
        return hash((self.applied_id, self._flat_stamp()))

    @property
    def mgmt_ip(self) -> str:
        return self.mgmt.ip

    @property
    def lldp_description(self) -> str:
        return f"Cumulus Linux version {self.release} running on NVIDIA {self.platform}"

    def oper_ports(self):
        return self._oper("ports", lambda: nvue_oper.ports_of(self.running))

    def oper_bgp(self):
        return self._oper("bgp", lambda: nvue_oper.bgp_of(self.running))

    @property
    def running(self) -> dict:
        """What the switch runs: the applied NVUE tree, and what flat files NVUE did not write
        configure (flat_files.py); `nv config show` prints the applied tree only."""
        return self._oper("running", lambda: flat_files.merged(self.applied, flat_files.foreign_config(
            self._flat_text(flat_files.INTERFACES), self._flat_text(flat_files.FRR_CONF))))

    def _flat_text(self, path: str) -> str:
        try:
            return self.local_path(path).read_text()
        except (OSError, UnicodeDecodeError):
            return ""

    def _flat_stamp(self) -> tuple:
        """The files' state, re-read at most every FLAT_FILES_REREAD_S: the world asks a switch for
        its ports hundreds of times per answer, and two stat calls each time cost more than the answer."""
        now = time.monotonic()
        cached = self.__dict__.get("_stamp")
        if cached is not None and now - cached[0] < FLAT_FILES_REREAD_S:
            return cached[1]
        stamp = []
        for path in (flat_files.INTERFACES, flat_files.FRR_CONF):
            try:
                info = self.local_path(path).stat()
                stamp.append((info.st_mtime_ns, info.st_size))
            except OSError:
                stamp.append(None)
        self._stamp = (now, tuple(stamp))
        return self._stamp[1]

    def _write_flat_files(self) -> None:
        """NVUE renders both files on apply (and the factory's at first boot), removing what others wrote."""
        applied = self.applied
        self.write_file(flat_files.INTERFACES, flat_files.interfaces_file(self.mgmt, nvue_oper.ports_of(applied)))
        self.write_file(flat_files.FRR_CONF, flat_files.frr_conf(self.hostname, nvue_oper.bgp_of(applied)))
        self.__dict__.pop("_stamp", None)

    def _vtysh(self, args: list[str], io: Io) -> int:
        """FRR's shell: the lab answers `vtysh -c 'show bgp summary json'` from what bgpd runs."""
        command = args[1].split() if args[:1] == ["-c"] and len(args) == 2 else []
        if command == ["show", "bgp", "summary", "json"]:
            io.write(flat_files.bgp_summary_json(self.fabric, self.name, self.oper_bgp()))
            return 0
        io.write(f"% vtysh {' '.join(args)}: not simulated\n")
        return 1

    def _oper(self, what: str, build):
        """What the world reads of the running config, built once per applied revision and state of
        the flat files (an applied revision's config never changes: edits go to a new pending revision)."""
        key = (what, self.applied_id, self._flat_stamp())
        cache = self.__dict__.setdefault("_oper_cache", {})
        if key not in cache:
            value = build()
            if len(cache) > 8:          # only the current state's entries are ever asked again
                cache.clear()
            cache[key] = value
        return cache[key]

    # --- nv show --------------------------------------------------------
    def _show(self, args: list[str], io: Io) -> None:
        what, view = [], None
        i = 0
        while i < len(args):
            arg = args[i]
            if arg in ("-o", "--output", "--view") and i + 1 < len(args):
                view = args[i + 1] if arg == "--view" else view
                i += 2
                continue
            if arg.startswith("--view="):
                view = arg.split("=", 1)[1]
            elif not arg.startswith("-"):
                what.append(arg)
            i += 1
        as_json = self._option(args, "-o", "table") == "json"
        with self.fabric.frozen() if self.fabric is not None else contextlib.nullcontext():
            data = self._show_data(what, view, args)
        if as_json:
            io.write(json.dumps(data, indent=2) + "\n")
        else:
            io.write("".join(f"{k:<16} {v}\n" for k, v in data.items()))

    def _show_data(self, what: list[str], view: str | None, args: list[str]) -> dict:
        # `nv show interface` is the kernel's view: ports flat files configure are there too
        running = self.running
        ports = running.get("interface", {})
        if what == ["system"]:
            release = platform_oper.os_version(self.faults.current(), self.release)
            return {"hostname": self.hostname, "build": f"Cumulus Linux {release}",
                    "product-name": "Cumulus Linux", "product-release": release,
                    "uptime": int(time.time() - self.booted), "timezone": "Etc/UTC"}
        if what == ["platform"]:
            # ONIE gives eth0 the system's base MAC (the label's MAC, the inventory's mac column)
            return {"manufacturer": "NVIDIA", "product-name": f"M{self.platform}",
                    "serial-number": self.serial, "system-mac": self.eth0_mac}
        if what == ["platform", "environment"]:
            return nvue_oper.environment_json(self.faults.current())
        if what == ["platform", "transceiver"]:
            return nvue_oper.transceivers_json(self.name, self.applied, self.fabric, self.faults.current())
        # NTP page: 5.15 moved `service ntp <vrf>` to `system ntp`
        if what == (["system", "ntp"] if version_key(self.version) >= (5, 15) else ["service", "ntp", "mgmt"]):
            return nvue_oper.ntp_json(self.applied, self.faults.current())
        if what == ["vrf", "default", "router", "rib", "ipv4", "route"]:
            return nvue_oper.rib_json(self.name, self.fabric)[0]
        if what == ["router", "nexthop"]:
            return nvue_oper.rib_json(self.name, self.fabric)[1]
        if what == ["interface"] and view is None:
            # 5.5+ `counters qos ...`; 5.4 and earlier `qos counters ...` (NVUE reference QoS page)
            qos_path = ("counters", "qos") if _release_key(self.version) >= (5, 5) else ("qos", "counters")
            return nvue_oper.interfaces_json(self.name, running, self.fabric, self.faults.current(), qos_path,
                                             watchdog=_release_key(self.version) >= (5, 6))
        if len(what) >= 3 and what[0] == "interface" and what[1] in ports:
            port, rest = what[1], what[2:]
            faults = self.faults.current()
            # 5.5+ `counters qos ...`; 5.4 and earlier `qos counters ...` (NVUE reference QoS page)
            if rest == ["lldp"]:
                return nvue_oper.lldp_json(self.name, port, self.fabric)
            if rest == ["lldp", "neighbor"]:
                return nvue_oper.lldp_json(self.name, port, self.fabric)["neighbor"]
            if rest == ["counters"]:
                return nvue_oper.counters_json(self.name, port, self.fabric, faults)
            if rest == ["link", "phy-detail"]:
                return nvue_oper.phy_detail_json(self.name, port, self.fabric, faults)
            if rest in (["counters", "qos", "pfc-stats"], ["qos", "counters", "pfc-stats"]):
                return nvue_oper.pfc_stats_json(self.name, port, self.fabric, faults)
            if rest in (["counters", "qos", "port-stats"], ["qos", "counters", "port-stats"]):
                return nvue_oper.port_stats_json(self.name, port, self.fabric, faults)
            # QoS page, PFC Watchdog (5.6+): no such object before the watchdog's release
            if rest == ["qos", "pfc-watchdog"] and _release_key(self.version) >= (5, 6):
                return nvue_oper.pfc_watchdog_json(self.name, port, running, self.fabric, faults)
        if what == ["router", "bgp"]:
            bgp = nvue_oper.bgp_of(self.applied)   # BGP page: `nv show router bgp` (global AS, router-id)
            return {} if bgp is None else {"autonomous-system": bgp.asn, "router-id": bgp.router_id,
                                           "enable": "on" if bgp.enabled else "off"}
        if what == ["vrf", "default", "router", "bgp", "neighbor"] and view in (None, "detail"):
            # 5.12+ prints a summary without --view=detail; the lab prints the detail for both.
            return nvue_oper.bgp_neighbors_json(self.name, self.fabric)
        raise CommandError(f"Error: nv show {' '.join(args)}: not simulated")


def _release_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in str(version).split(".")[:2] if part.isdigit())


def _parse_duration(text: str) -> int:
    # NVUE reference, Config Commands: "nv config apply --confirm 60 requires you to confirm
    # within one hour": a number without a unit is minutes (commands.py table, V2).
    match = _DURATION.match(text)
    if not match:
        raise CommandError(f"Error: invalid confirm time '{text}' (use e.g. 300s, 10m, 1h)")
    return int(match.group(1)) * {"": 60, "s": 1, "m": 60, "h": 3600}[match.group(2)]
