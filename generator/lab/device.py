"""What every simulated device shares: identity, its file-system root, faults, I/O."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Protocol

from generator.lab.faults import FaultSource


class Io(Protocol):
    def write(self, text: str) -> None: ...

    async def ask(self, prompt: str) -> str | None: ...


class CommandError(Exception):
    """A command failed: the message is printed and the exit status is 1."""


class Device:
    os_name = "linux"

    def __init__(self, name: str, version: str, root: Path, faults: FaultSource):
        self.name = name
        self.version = version
        self.root = Path(root)
        self.faults = faults
        self.booted = time.time()
        for sub in ("tmp", "home", "etc"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)

    @property
    def hostname(self) -> str:
        return self.name

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
