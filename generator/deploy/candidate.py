"""The config a Cumulus switch is given: the rendered file plus the running config's
unmanaged subtrees (generator/render/managed.py).

`nv config replace` makes the pending config exactly the file (NVUE-CLI page), so a file
that lacked the switch's eth0, users or ACLs would remove them. The candidate therefore
carries every subtree fabricgen does not manage over from `nv config show -o yaml`, and
replaces what it does manage with the rendered values. Same rendered file + same running
config -> byte-identical candidate; with nothing to carry it is the rendered file itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.render.managed import ManagedSet
from generator.render.nvue_document import dump_document, load_tree


@dataclass(frozen=True)
class Candidate:
    text: str
    kept_management: tuple[str, ...]     # management-plane subtrees carried over ("eth0", "users", ...)
    running: dict                        # the `set` tree it was built from


def build_candidate(rendered_text: str, running_text: str, managed: ManagedSet) -> Candidate:
    header, rendered = load_tree(rendered_text)
    _, running = load_tree(running_text)
    kept = managed.unmanaged(running)
    labels = tuple(managed.kept_management(running))
    if not kept:
        return Candidate(rendered_text, labels, running)
    return Candidate(dump_document(header, managed.candidate(rendered, running)), labels, running)
