"""The base of every refusal fabricgen reports to its user (issue 35 item 6).

A FabricgenError's message is one actionable line (what, where, what to do). EXIT_CODE is the
command's exit status when the error reaches the CLI, which catches it once
(cli_config.ConfigCommand.invoke); CODE, when set, is a stable identifier a script may match
instead of the wording. Subclasses keep their own names and, where callers catch them as such,
their standard bases (ValueError, OSError, RuntimeError)."""

from __future__ import annotations


class FabricgenError(Exception):
    exit_code: int = 1
    code: str | None = None


__all__ = ["FabricgenError"]
