"""What every simulated device shares: identity, its file-system root, faults, I/O."""

from __future__ import annotations

import hmac
import os
import time
from pathlib import Path
from typing import Protocol

from generator.lab.faults import FaultSource

SYSLOG_MAX_BYTES = 1 << 20


class Io(Protocol):
    def write(self, text: str) -> None: ...

    async def ask(self, prompt: str) -> str | None: ...


class CommandError(Exception):
    """A command failed: the message is printed and the exit status is 1."""


class Device:
    os_name = "linux"
    # `lab up --time-scale N`: the device's own timers (NVUE's confirm timer, systemd's
    # --on-active) run N times faster than the wall clock, so a product-side 30 s confirm timer
    # expires in 30/N s in a test. Times the device prints stay in device seconds.
    time_scale: float = 1.0

    def __init__(self, name: str, version: str, root: Path, faults: FaultSource):
        self.name = name
        self.version = version
        self.root = Path(root)
        self.faults = faults
        self.booted = time.time()
        self.login_user: str | None = None
        self.login_password: str | None = None
        # Open SSH connections (duck-typed: .abort()) -> the user they authenticated as (None: not yet).
        self.connections: dict[object, str | None] = {}
        # ZTP day 0 (`lab up --ztp`, generator/lab/ztp.py): the switch boots waiting for a DHCP
        # answer; the lease's hostname (option 12) names it until its own config sets one.
        self.ztp_booted = self.ztp_waiting = False
        self.dhcp_hostname: str | None = None
        for sub in ("tmp", "home", "etc"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)

    # --- logins -----------------------------------------------------------
    def set_login(self, username: str, password: str) -> None:
        """The lab's account; an OS that keeps its own user database (NVUE) seeds it from this."""
        self.login_user, self.login_password = username, password

    def check_password(self, username: str, password: str) -> bool:
        if self.login_user is None or self.login_password is None:
            return False
        return hmac.compare_digest(username, self.login_user) and hmac.compare_digest(
            password.encode(), self.login_password.encode())

    def check_public_key(self, username: str, key_type: str, key_b64: str) -> bool:
        return False

    def must_change_password(self, username: str) -> bool:
        """The account's password is expired (`passwd -e`): a login meets the change dialogue."""
        return False

    def change_password(self, username: str, old: str, new: str) -> bool:
        """passwd(1) at such a login; False: the old password was wrong or the new one unusable."""
        return False

    def refuses_connections(self) -> str | None:
        """Why a new SSH connection is refused right now (None: it is accepted)."""
        return None

    def restarting_for(self) -> float:
        """Seconds until a management port that is restarting (a SONiC `config reload`) is up again."""
        return 0.0

    def awaiting_confirmation(self) -> bool:
        """A commit of this device waits for confirmation (its revert timer runs)."""
        return False

    def logged_in_users(self) -> set[str]:
        return {user for user in self.connections.values() if user}

    def cut_connections(self) -> None:
        for connection in list(self.connections):
            connection.abort()

    @property
    def hostname(self) -> str:
        return self.name

    # --- day 0 ------------------------------------------------------------
    eth0_mac = "02:00:00:00:00:01"
    serial = "LAB0000000"

    def take_lease(self, mgmt, hostname: str | None) -> None:
        """eth0's DHCP client took a lease: its address (and option 12's hostname) from now on."""
        self.mgmt = mgmt
        self.dhcp_hostname = hostname or None

    def eth0_vrf(self) -> str:
        """The VRF eth0 is enslaved to ("default": none); a program reaches the management network
        only from that VRF (`ip vrf exec NAME`), as on Linux with a VRF device."""
        return "default"

    def eth0_link(self) -> str:
        """`ip -br link show dev eth0` (iproute2's brief format: name, state, MAC, flags)."""
        return f"eth0             UP             {self.eth0_mac} <BROADCAST,MULTICAST,UP,LOWER_UP> \n"

    def syslog(self, tag: str, message: str) -> None:
        """logger(1): one line in the switch's /var/log/syslog (capped, as logrotate would)."""
        path = self.local_path("/var/log/syslog")
        path.parent.mkdir(parents=True, exist_ok=True)
        line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {self.hostname} {tag}: {message}\n"
        if path.exists() and path.stat().st_size > SYSLOG_MAX_BYTES:
            path.write_text("")
        with path.open("a") as fh:
            fh.write(line)

    def prompt(self, username: str) -> str:
        return f"{username}@{self.hostname}:~$ "

    def local_path(self, path: str) -> Path:
        """Map a device path into this device's root; `..` cannot escape it."""
        if not path.startswith("/"):
            path = "/home/" + path
        return self.root / os.path.normpath("/" + path).lstrip("/")

    def read_file(self, path: str) -> str:
        local = self.local_path(path)
        try:
            return local.read_text()
        except FileNotFoundError:
            raise CommandError(f"Error: {path}: No such file or directory") from None
        except (IsADirectoryError, UnicodeDecodeError):
            raise CommandError(f"Error: {path}: not a readable text file") from None

    def write_file(self, path: str, text: str) -> None:
        local = self.local_path(path)
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_text(text)

    async def run(self, argv: list[str], io: Io) -> int | None:
        """Run a device command; None when the command is not this OS's."""
        return None
