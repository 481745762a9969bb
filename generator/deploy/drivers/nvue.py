"""napalm driver for Cumulus Linux NVUE over SSH (netmiko `cumulus_linux`).

optional_args: port, known_hosts, accept_new_host_keys, key_file, cumulus_version
(picks the command generation in commands.py; default: the newest).

Commit-confirm follows napalm-srlinux: `commit_config(revert_in=N)` applies with
NVUE's own confirm timer, a second commit while one is pending raises CommitError,
`confirm_commit` keeps it and `rollback` with a pending confirm rejects it at once.
"""

from __future__ import annotations

import json

import yaml
from napalm.base.exceptions import CommitError, MergeConfigException, ReplaceConfigException

from generator.deploy.drivers.commands import nvue_commands
from generator.deploy.drivers.ssh import CommandFailed, SSHCliDriver


class NVUEDriver(SSHCliDriver):
    platform = "nvue"
    netmiko_device_type = "cumulus_linux"

    def __init__(self, hostname: str, username: str, password: str, timeout: int = 60,
                 optional_args: dict | None = None) -> None:
        super().__init__(hostname, username, password, timeout, optional_args)
        self.commands = nvue_commands(self.optional_args.get("cumulus_version"))

    # --- candidate ------------------------------------------------------
    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        self._load(self.commands.replace, filename, config, ReplaceConfigException)

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        self._load(self.commands.patch, filename, config, MergeConfigException)

    def _load(self, template: str, filename, config, error: type[Exception]) -> None:
        try:
            text = self._read_source(filename, config)
        except (OSError, ValueError) as exc:
            raise error(f"{self.where}: cannot read candidate: {exc}") from None
        path = self.commands.candidate_path
        try:
            self._upload(text, path)
            self._check(template.format(path=path))
        except CommandFailed as exc:
            raise error(f"{self.where}: {exc}") from None
        except OSError as exc:
            raise error(f"{self.where}: upload of the candidate failed: {self._scrub(str(exc))}") from None

    def compare_config(self) -> str:
        return self._check(self.commands.diff).strip()

    def discard_config(self) -> None:
        self._check(self.commands.detach)

    # --- commit ---------------------------------------------------------
    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        if self.has_pending_commit():
            raise CommitError(f"{self.where}: a commit is pending confirmation; confirm or roll it back first")
        try:
            self._check(self.commands.commit(message, revert_in), read_timeout=max(self.timeout, 120))
            if revert_in is None and self.commands.save:
                self._check(self.commands.save)
        except CommandFailed as exc:
            raise CommitError(f"{self.where}: {exc}") from None

    def confirm_commit(self) -> None:
        if not self.has_pending_commit():
            raise CommitError(f"{self.where}: no commit is pending confirmation")
        try:
            self._check(self.commands.confirm_yes)
            if self.commands.save:
                self._check(self.commands.save)
        except CommandFailed as exc:
            raise CommitError(f"{self.where}: {exc}") from None

    def has_pending_commit(self) -> bool:
        output = self._check(self.commands.confirm_status)
        return not self.commands.no_pending_confirm.search(output)

    def rollback(self) -> None:
        try:
            if self.has_pending_commit():
                self._check(self.commands.confirm_no)
                return
            revision = self._previous_revision()
            self._check(self.commands.apply_revision.format(revision=revision), read_timeout=max(self.timeout, 120))
            if self.commands.save:
                self._check(self.commands.save)
        except CommandFailed as exc:
            raise CommitError(f"{self.where}: rollback failed: {exc}") from None

    def _previous_revision(self) -> str:
        """The revision that was applied before the current one (history is newest first)."""
        try:
            events = json.loads(self._check(self.commands.history_json) or "[]")
        except json.JSONDecodeError:
            raise CommitError(f"{self.where}: cannot read the revision history") from None
        applied = [str(e["rev-id"]) for e in events if "rev-id" in e]
        for rev in applied[1:]:
            if rev != applied[0]:
                return rev
        raise CommitError(f"{self.where}: no earlier revision to roll back to")

    # --- getters --------------------------------------------------------
    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False,
                   format: str = "text") -> dict:
        config = {"running": "", "startup": "", "candidate": ""}
        if retrieve in ("all", "running"):
            config["running"] = self._check(self.commands.show_running) + "\n"
        if retrieve in ("all", "startup"):
            config["startup"] = self._check(self.commands.show_startup) + "\n"
        return config

    def get_facts(self) -> dict:
        system = self._json(self.commands.show_system_json)
        platform = self._json(self.commands.show_platform_json)
        interfaces = self._json(self.commands.show_interface_json)
        hostname = str(system.get("hostname", ""))
        return {
            "uptime": float(system.get("uptime", -1)),
            "vendor": "NVIDIA",
            "os_version": str(system.get("product-release") or system.get("build", "")),
            "serial_number": str(platform.get("serial-number", "")),
            "model": str(platform.get("product-name", "")),
            "hostname": hostname,
            "fqdn": hostname,
            "interface_list": sorted(interfaces),
        }

    def _json(self, command: str) -> dict:
        output = self._check(command)
        try:
            return json.loads(output) if output else {}
        except json.JSONDecodeError:
            raise CommandFailed(f"{self.where}: `{command}` did not return JSON") from None


def load_nvue_document(text: str) -> dict:
    """The `set` part of an NVUE document with every scalar a string (on/off stay strings)."""
    merged: dict = {}
    for item in yaml.load(text, Loader=yaml.BaseLoader) or []:
        if isinstance(item, dict) and isinstance(item.get("set"), dict):
            merged.update(item["set"])
    return merged
