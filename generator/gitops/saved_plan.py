"""The reviewed plan as a file: `fabricgen plan ... --out PLANFILE` writes it, `fabricgen deploy
--plan PLANFILE` pushes exactly what it holds (Terraform's `plan -out` / `apply PLAN`).

The file is JSON, sorted and indented, with nothing that changes between two runs on the same
intent and switches (no timestamp, no host name), so a CI job can attach it to the pull request
and a reviewer can read it. It holds

- the fabricgen version that rendered it;
- the intent's sha256 (as manifest.json records it) and the render's sha256: one hash over every
  rendered file and its sha256, manifest.json left out (it carries the two hashes above);
- the rendered files themselves, the candidate of every device (switches/<name>/..., hosts/<name>/...)
  and the fabric-wide files the hosts' playbook reads (inventory.yml);
- with --endpoints, each switch's running-config sha256 (devices/running_digest.py).

Rendered switch files hold password hashes and keys, so the file is written 0600, atomically,
never through a link. Read back it is hostile input like any other file: a regular file of at
most MAX_PLAN_FILE_BYTES, every key and value checked, file names relative and plain, and the
stored files must still hash to the stored render sha256 (a candidate edited inside the plan
file is refused, not pushed).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from generator.common.atomic_write import write_atomic
from generator.common.bounded_read import ReadRefused, read_bounded
from generator.common.errors import FabricgenError
from generator.safe_text import for_terminal

FORMAT = "fabricgen-plan/1"
MANIFEST = "manifest.json"
# A rendered 98k-GPU fabric is ~1 GB (its plan.json alone ~200 MB); a plan file for a fabric that a
# pull request reviews is far below this, and a /dev/zero-sized mistake is refused before it is read.
MAX_PLAN_FILE_BYTES = 256 << 20
MAX_FILES = 1_000_000
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
# what render_files writes: fabric-wide files at the top, device files one directory down
_REL = re.compile(r"^(?:[A-Za-z0-9_.-]+|(?:switches|hosts)/[A-Za-z0-9_.-]+/[A-Za-z0-9_.@-]+)$")   # unit@.service
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_VERSION = re.compile(r"^[A-Za-z0-9_.+-]{1,64}$")
KEYS = {"format", "fabricgen", "fabric", "switch_os", "intent_sha256", "render_sha256", "files"}
OPTIONAL_KEYS = {"running_sha256"}


class PlanFileError(FabricgenError):
    """One line: what is wrong with the plan file and what to do."""


@dataclass(frozen=True)
class SavedPlan:
    version: str
    fabric: str
    switch_os: str
    intent_sha256: str
    render_sha256: str
    files: dict[str, str]
    running_sha256: dict[str, str] | None       # None: made without --endpoints

    def switch_file(self, name: str) -> str | None:
        suffix = "startup.yaml" if self.switch_os == "cumulus" else "config_db.json"
        return self.files.get(f"switches/{name}/{suffix}")


def intent_sha256(intent_text: str) -> str:
    """As manifest.json records it (render/output.py manifest_text)."""
    return hashlib.sha256(intent_text.encode()).hexdigest()


def render_sha256(files: dict[str, str]) -> str:
    """One hash over every rendered file but manifest.json: its name and its content's sha256."""
    digest = hashlib.sha256()
    for rel in sorted(files):
        if rel != MANIFEST:
            digest.update(f"{rel}\0{hashlib.sha256(files[rel].encode()).hexdigest()}\n".encode())
    return digest.hexdigest()


def plan_document(*, version: str, fabric: str, switch_os: str, intent_text: str, files: dict[str, str],
                  running: dict[str, str] | None) -> str:
    kept = {rel: text for rel, text in files.items() if rel != MANIFEST}
    doc = {"format": FORMAT, "fabricgen": version, "fabric": fabric, "switch_os": switch_os,
           "intent_sha256": intent_sha256(intent_text), "render_sha256": render_sha256(kept), "files": kept}
    if running is not None:
        doc["running_sha256"] = dict(sorted(running.items()))
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def write_plan_file(path: str | Path, text: str) -> None:
    """PATH replaced atomically by a 0600 file (whatever the umask); a link at PATH is replaced, never
    followed."""
    target = Path(path)
    if not target.parent.is_dir():
        raise PlanFileError(f"--out {path}: the directory {target.parent} does not exist; create it or give "
                            "another path")
    if target.is_dir():
        raise PlanFileError(f"--out {path} is a directory; give a file name, e.g. {target / 'fabric.plan.json'}")
    try:
        write_atomic(target, text, mode=0o600)
    except OSError as exc:
        raise PlanFileError(f"--out {path}: cannot write there: {exc.strerror}") from None


def _bounded_text(path: Path) -> str:
    try:
        raw = read_bounded(path, MAX_PLAN_FILE_BYTES)
    except FileNotFoundError as exc:
        raise PlanFileError(f"{path}: cannot read the plan file: {exc.strerror}; give the file "
                            "`fabricgen plan ... --out` wrote") from None
    except ReadRefused as exc:
        if exc.kind == "type":          # a directory, a FIFO, a device: never read
            raise PlanFileError(f"{path}: not a regular file; give the file `fabricgen plan ... --out` wrote") from None
        if exc.kind == "size":
            raise PlanFileError(f"{path}: more than {MAX_PLAN_FILE_BYTES >> 20} MiB, larger than any plan file; "
                                "give the file `fabricgen plan ... --out` wrote") from None
        raise PlanFileError(f"{path}: cannot read the plan file: {exc.reason}; give the file "
                            "`fabricgen plan ... --out` wrote") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PlanFileError(f"{path}: not UTF-8 text; give the file `fabricgen plan ... --out` wrote") from None


def _check(ok: bool, path: Path, what: str) -> None:
    if not ok:
        raise PlanFileError(f"{path}: {what}; it is not a plan file as `fabricgen plan ... --out` writes "
                            "it: make the plan again")


def read_plan_file(path: str | Path) -> SavedPlan:
    """The plan file, every field checked (PlanFileError: one line naming the field)."""
    path = Path(path)
    text = _bounded_text(path)
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise PlanFileError(f"{path}: not JSON ({exc.__class__.__name__}); give the file "
                            "`fabricgen plan ... --out` wrote") from None
    _check(isinstance(doc, dict), path, "not a JSON object")
    _check(doc.get("format") == FORMAT, path, f"`format` is not {FORMAT!r}")
    unknown = sorted(set(doc) - KEYS - OPTIONAL_KEYS)
    _check(not unknown, path, f"unknown key {for_terminal(str(unknown[:1])[1:-1])[:60]}")
    missing = sorted(KEYS - set(doc))
    _check(not missing, path, f"`{missing[0] if missing else ''}` is missing")
    _check(isinstance(doc["fabricgen"], str) and bool(_VERSION.fullmatch(doc["fabricgen"])), path,
           "`fabricgen` is not a version")
    _check(isinstance(doc["fabric"], str) and bool(_NAME.fullmatch(doc["fabric"])), path, "`fabric` is not a name")
    _check(doc["switch_os"] in ("cumulus", "sonic"), path, "`switch_os` is not cumulus or sonic")
    for key in ("intent_sha256", "render_sha256"):
        _check(isinstance(doc[key], str) and bool(_SHA256.fullmatch(doc[key])), path, f"`{key}` is not a sha256")
    files = doc["files"]
    _check(isinstance(files, dict) and len(files) <= MAX_FILES, path, "`files` is not a map of rendered files")
    for rel, body in files.items():
        _check(bool(_REL.fullmatch(rel)) and rel != MANIFEST and isinstance(body, str), path,
               f"`files` holds '{for_terminal(rel)[:80]}', not a rendered file name with its text")
    running = doc.get("running_sha256")
    if running is not None:
        _check(isinstance(running, dict), path, "`running_sha256` is not a map")
        for name, digest in running.items():
            _check(bool(_NAME.fullmatch(name)) and isinstance(digest, str) and bool(_SHA256.fullmatch(digest)), path,
                   f"`running_sha256` holds '{for_terminal(name)[:80]}', not a switch name with a sha256")
    if render_sha256(files) != doc["render_sha256"]:
        raise PlanFileError(f"{path}: its rendered files no longer hash to its render_sha256: the candidates "
                            "were edited after the plan was made; make the plan again, nothing was pushed")
    return SavedPlan(doc["fabricgen"], doc["fabric"], doc["switch_os"], doc["intent_sha256"],
                     doc["render_sha256"], files, running)


def moved(saved: SavedPlan, *, intent_path: str, intent_text: str, files: dict[str, str], version: str,
          fabric: str) -> list[str]:
    """One line per thing that differs from the plan: the fabric, fabricgen's version, the intent, the
    render (naming the files). Empty: the plan still describes what this intent renders."""
    lines = []
    if fabric != saved.fabric:
        lines.append(f"the plan is for fabric {saved.fabric!r}, {intent_path} is fabric {fabric!r}")
    if version != saved.version:
        lines.append(f"fabricgen version: the plan was made by fabricgen {saved.version}, this is {version}")
    now = intent_sha256(intent_text)
    if now != saved.intent_sha256:
        lines.append(f"intent {intent_path} changed since the plan was made (sha256 {now[:12]}, the plan's "
                     f"{saved.intent_sha256[:12]})")
    current = {rel: text for rel, text in files.items() if rel != MANIFEST}
    if render_sha256(current) != saved.render_sha256:
        differ = sorted(rel for rel in set(current) | set(saved.files) if current.get(rel) != saved.files.get(rel))
        shown = ", ".join(differ[:5]) + (f" and {len(differ) - 5} more" if len(differ) > 5 else "")
        lines.append(f"render: {len(differ)} rendered file(s) differ from the plan's: {shown}")
    return lines
