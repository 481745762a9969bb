"""`deploy --plan PLANFILE`: what to push is the plan's, or nothing.

The intent is loaded and checked as for any deploy and rendered again; the plan is refused, one
line per thing that moved, when its fabricgen version, intent sha256 or render differ from now
(gitops/saved_plan.py). Otherwise the deploy pushes the plan's own files, and each switch must
still run what the plan read from it (rollout._still_as_planned).
"""

from __future__ import annotations

from dataclasses import dataclass

from generator import __version__
from generator.common.errors import FabricgenError
from generator.gitops.saved_plan import PlanFileError, moved, read_plan_file


@dataclass(frozen=True)
class Planned:
    files: dict[str, str]                 # the render to push (the plan's, with the manifest of now)
    running: dict[str, str] | None        # switch -> running-config sha256 when the plan was made


class PlanRefused(FabricgenError):
    """The plan cannot be applied; `lines` says why, one thing per line."""

    def __init__(self, lines: list[str], *, unreadable: bool = False):
        super().__init__("; ".join(lines))
        self.lines = lines
        self.unreadable = unreadable          # the plan file itself, not what it describes


def load_planned(plan_file: str, *, intent_path: str, intent_text: str, fabric: str,
                 files: dict[str, str]) -> Planned:
    """FILES: what the intent renders now (render_files)."""
    try:
        saved = read_plan_file(plan_file)
    except PlanFileError as exc:
        raise PlanRefused([str(exc)], unreadable=True) from None
    lines = moved(saved, intent_path=intent_path, intent_text=intent_text, files=files, version=__version__,
                  fabric=fabric)
    if lines:
        raise PlanRefused([f"{plan_file}: {line}" for line in lines])
    pushed = dict(saved.files)
    pushed["manifest.json"] = files["manifest.json"]      # same intent and version: same manifest
    return Planned(pushed, saved.running_sha256)
