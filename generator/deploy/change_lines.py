"""`deploy --diff`: each switch's change as old -> new, the way drift reads it.

The running config and the candidate are compared as drift compares the intent with a switch
(drift/command.py compare_texts: parsed and canonical, only what fabricgen manages, secrets as
their hash markers), and printed as `fabricgen plan` prints a changed file (`~ path: old -> new`,
`+ path: new`, `- path: old`). NVUE's own `nv config diff` lists only the new values.
"""

from __future__ import annotations

from generator.drift.command import compare_texts
from generator.gitops.plan import _change_lines
from generator.render.managed import ManagedSet


def change_lines(os_name: str, name: str, running_text: str, candidate_text: str, *,
                 managed: ManagedSet | None, version: str, sonic_management: bool, indent: str = "  ") -> list[str]:
    """Old -> new lines of what pushing CANDIDATE_TEXT changes on a switch running RUNNING_TEXT; empty
    when the two agree on everything fabricgen manages (the switch's diff is then defaults or order)."""
    result = compare_texts(os_name, name, candidate_text, running_text, managed=managed, version=version,
                           sonic_management=sonic_management)
    if result.status == "unknown":
        return [f"{indent}(running config could not be compared: {result.error})"]
    changes = []
    for feature in result.features.values():
        # drift's words: `missing` is in the candidate, not on the switch (added by the push), `extra` the reverse
        changes += [{"op": "added", "path": c["path"], "new": c["intended"]} for c in feature.missing]
        changes += [{"op": "removed", "path": c["path"], "old": c["actual"]} for c in feature.extra]
        changes += [{"op": "changed", "path": c["path"], "old": c["actual"], "new": c["intended"]}
                    for c in feature.changed]
    lines: list[str] = []
    for change in sorted(changes, key=lambda c: c["path"]):
        # drift reads both sides as strings (BaseLoader): shown as the files write them, never quoted
        lines += _change_lines(change, indent, typed=False)
    return lines
