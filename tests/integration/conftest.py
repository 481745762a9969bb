"""Lab fixtures: a real simulator process per test, always stopped afterwards."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from generator.lab.control import LabDevice, holding, lab_down, lab_up, set_faults

LAB_PASSWORD = "lab-Secret-7f3"


@dataclass
class LabHandle:
    directory: Path
    endpoints: dict
    password: str = LAB_PASSWORD
    started: list = field(default_factory=list)

    @property
    def known_hosts(self) -> Path:
        return self.directory / "known_hosts"

    def port(self, name: str) -> int:
        return int(self.endpoints["switches"][name]["port"])

    def username(self, name: str) -> str:
        return self.endpoints["switches"][name]["username"]

    def optional_args(self, name: str, **extra) -> dict:
        return {"port": self.port(name), "known_hosts": str(self.known_hosts), **extra}

    def driver(self, name: str, driver_name: str = "nvue", *, password: str | None = None,
               timeout: int = 10, **extra):
        import napalm

        cls = napalm.get_network_driver(driver_name)
        return cls("127.0.0.1", self.username(name), password or self.password, timeout=timeout,
                   optional_args=self.optional_args(name, **extra))

    def set_faults(self, name: str, **faults) -> None:
        set_faults(self.directory, name, faults)

    def holding(self, name: str) -> bool:
        """The switch holds a command line (fault hold="any"/"pending") until set_faults lifts it."""
        return holding(self.directory, name)


@pytest.fixture
def lab_start(tmp_path):
    """Factory: lab_start([LabDevice(...)], faults=...) -> LabHandle; every lab is stopped at teardown."""
    directories: list[Path] = []

    def start(devices: list[LabDevice], *, faults: dict | None = None, subdir: str = "lab",
              username: str = "cumulus", time_scale: float = 1.0) -> LabHandle:
        directory = tmp_path / subdir
        directories.append(directory)
        path = lab_up(devices, directory, username=username, password=LAB_PASSWORD, faults=faults, timeout=30,
                      time_scale=time_scale)
        return LabHandle(directory, yaml.safe_load(path.read_text()))

    yield start
    for directory in directories:
        lab_down(directory)


@pytest.fixture
def lab_nvue(lab_start) -> LabHandle:
    return lab_start([LabDevice("leaf01", "cumulus", "5.11")])


@pytest.fixture
def lab_sonic(lab_start) -> LabHandle:
    return lab_start([LabDevice("sonic01", "sonic", "202311")], username="admin")


def _wait_for(predicate, timeout: float = 8.0, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


@pytest.fixture
def lab_wait():
    """lab_wait(predicate, timeout) polls until truthy: device timers run in real time."""
    return _wait_for
