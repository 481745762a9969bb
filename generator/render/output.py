"""Write a render atomically: everything goes into a temporary sibling directory
that replaces the previous output in one rename, so a failed render leaves the old
output untouched and files that no longer belong disappear with it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

from generator import __version__
from generator.common.bounded_read import read_bounded
from generator.common.errors import FabricgenError
from generator.plan.model import FabricPlan
from generator.render import leftovers
from generator.render.cabling import render_cabling
from generator.render.nvue import render_switch
from generator.render.plan_json import iter_plan_json

# A target adds files for a plan: (relative path, content) pairs
Target = Callable[[FabricPlan], Iterable[tuple[str, str]]]


def switch_files(plan: FabricPlan) -> Iterable[tuple[str, str]]:
    if plan.switch_os == "cumulus":
        for sw in plan.switches:
            yield f"switches/{sw.name}/startup.yaml", render_switch(plan, sw)
    else:
        from generator.render.sonic import render_config_db

        for sw in plan.switches:
            yield f"switches/{sw.name}/config_db.json", render_config_db(plan, sw)


def host_files(plan: FabricPlan) -> Iterable[tuple[str, str]]:
    from generator.render.hosts import render_host

    for host in plan.hosts:
        yield from sorted(render_host(plan, host).items())


def fabric_files(plan: FabricPlan) -> Iterable[tuple[str, str]]:
    for rel, chunks in fabric_chunks(plan):
        yield rel, "".join(chunks)


def fabric_chunks(plan: FabricPlan) -> Iterable[tuple[str, Iterable[str]]]:
    """The fabric-wide files as pieces: plan.json streams (a 98k-GPU plan.json is ~200 MB)."""
    from generator.render.inventory import render_inventory

    yield "plan.json", iter_plan_json(plan)
    yield "cabling.csv", (render_cabling(plan),)
    yield "inventory.yml", (render_inventory(plan),)


TARGETS: tuple[Target, ...] = (fabric_files, switch_files, host_files)


def render_files(plan: FabricPlan, intent_text: str) -> dict[str, str]:
    files: dict[str, str] = {}
    for target in TARGETS:
        for rel, content in target(plan):
            files[rel] = content
    hashes = {rel: hashlib.sha256(content.encode()).hexdigest() for rel, content in files.items()}
    files["manifest.json"] = manifest_text(plan.fabric, intent_text, hashes, _discovered_sha256(plan))
    return files


def _discovered_sha256(plan: FabricPlan) -> str | None:
    return plan.discovery.sha256 if plan.discovery is not None else None


def manifest_text(fabric: str, intent_text: str, hashes: dict[str, str], discovered_sha256: str | None = None) -> str:
    """manifest.json: json.dumps(manifest, indent=1, sort_keys=True) + newline, byte for byte,
    written directly (json's indenting encoder is pure Python: ~0.5 s for 65k files). With a
    discovery file (hosts.discovered), its sha256 too, as `discovered_sha256`: the render depends on it."""
    from json.encoder import encode_basestring_ascii as enc

    rows = ",\n".join(f"  {enc(rel)}: {enc(hashes[rel])}" for rel in sorted(hashes))
    found = "" if discovered_sha256 is None else f' "discovered_sha256": {enc(discovered_sha256)},\n'
    return (f'{{\n{found} "fabric": {enc(fabric)},\n "files": ' + (f"{{\n{rows}\n }}" if rows else "{}")
            + f',\n "generator": {enc(f"fabricgen {__version__}")},\n'
            f' "intent_sha256": "{hashlib.sha256(intent_text.encode()).hexdigest()}"\n}}\n')


class OutputError(FabricgenError):
    """One line: why OUTPUT cannot be written (nothing was touched)."""


# Rendered files are read-only (issue 27): files with the same bytes are hard links to one inode
# (stream.py, reuse.py), so an in-place edit of one (`echo X >> hosts/gpu001/nccl.conf`) would change
# every twin; without a write bit it fails instead. Replacing a file (a new one renamed over it)
# still works and breaks only its own link. Files are created with these modes (less the umask, as
# open() does); scripts and directories get theirs whatever the umask, as before.
FILE_MODE = 0o444
SCRIPT_MODE = 0o555
DIR_MODE = 0o755


def write_file(path: str | Path, data: bytes) -> None:
    """PATH as a new read-only file (never through a link) holding DATA."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def seal_dirs(root: Path, rels: Iterable[str]) -> None:
    """DIR_MODE on every directory below ROOT that holds one of RELS (mkdir left them to the umask)."""
    done: set[str] = set()
    for rel in rels:
        parent = rel.rpartition("/")[0]
        while parent and parent not in done:
            done.add(parent)
            os.chmod(root / parent, DIR_MODE)
            parent = parent.rpartition("/")[0]


MANIFEST = "manifest.json"
MANIFEST_LIMIT = 64 << 20                     # a 10k-device fabric's manifest is a few MB
_SHA256 = re.compile(r"\A[0-9a-f]{64}\Z")


def read_manifest(directory: Path) -> dict | None:
    """DIR/manifest.json if it is one render_files wrote (a regular file, not a link, with fabricgen's
    generator key, the intent hash and a sha256 per file); None otherwise."""
    path = Path(directory) / MANIFEST
    try:
        doc = json.loads(read_bounded(path, MANIFEST_LIMIT, follow_symlinks=False))
    except (OSError, ValueError):
        return None
    if not (isinstance(doc, dict) and isinstance(doc.get("generator"), str)
            and doc["generator"].startswith("fabricgen ") and isinstance(doc.get("intent_sha256"), str)
            and _SHA256.match(doc["intent_sha256"]) and isinstance(doc.get("files"), dict)):
        return None
    for rel, digest in doc["files"].items():
        parts = PurePosixPath(rel).parts if isinstance(rel, str) else ()
        if (not parts or rel.startswith("/") or ".." in parts or rel == MANIFEST
                or not isinstance(digest, str) or not _SHA256.match(digest)):
            return None
    return doc


# The render's own top-level directories. Inside them, as everywhere, only the files the manifest
# lists are the render's: a file a user put in switches/<name>/ (NOTES.txt) stops a re-render
# like one at the top (issue 34 finding 5; refused rather than kept: a kept file would sit among
# rendered configs that deploy and drift read, unrecorded by the manifest). A device that left the
# plan leaves only listed files, which the re-render removes.
OWNED_TREES = ("switches/", "hosts/")


def _foreign_entry(directory: Path, manifest: dict) -> str | None:
    """The first entry of a previous output that is not the render's (a user's file at the top, a
    `.git`, a link), or None: only then may the directory be replaced."""
    listed = set(manifest["files"]) | {MANIFEST}
    top_dirs = {t.rstrip("/") for t in OWNED_TREES} | {rel.split("/")[0] for rel in listed if "/" in rel}
    for root, dirs, names in os.walk(directory):
        for name in sorted(dirs + names):
            path = Path(root) / name
            rel = path.relative_to(directory).as_posix()
            if path.is_symlink():
                return rel
            if name in names and rel not in listed:
                return rel
            if name in dirs and "/" not in rel and rel not in top_dirs:
                return rel
    return None


def check_target(out_dir: str | Path, command: str | None = None) -> Path:
    """The resolved OUTPUT if render may replace it: it does not exist, is an empty directory, or is
    an earlier fabricgen output (manifest.json plus only the files it lists). Else OutputError."""
    text = str(out_dir)
    if not text.strip():
        raise OutputError("-o '': give the name of a new directory or of an earlier fabricgen output")
    given = Path(text)
    if given.is_symlink() and not given.exists():
        raise OutputError(f"-o {text}: a link to {os.readlink(given)}, which does not exist; "
                          "give the real directory")
    out = given.resolve()
    cwd = Path.cwd().resolve()
    if out == out.parent:
        raise OutputError(f"-o {text}: the root directory cannot be an output directory")
    if out == cwd or out in cwd.parents:
        raise OutputError(f"-o {text}: {out} is the current directory or holds it; "
                          "give a new directory, e.g. -o build/<fabric>")
    if not out.exists():
        for parent in (out.parent, *out.parent.parents):
            if parent.exists():
                if not parent.is_dir():
                    raise OutputError(f"-o {text}: {parent} is a file, not a directory")
                if not os.access(parent, os.W_OK | os.X_OK):
                    raise OutputError(f"-o {text}: no permission to create directories in {parent}")
                break
        return out
    if not out.is_dir():
        raise OutputError(f"-o {text}: {out} is a file, not a directory; nothing written")
    if os.path.ismount(out):
        raise OutputError(f"-o {text}: {out} is a mount point; give a directory inside it")
    try:
        empty = not any(out.iterdir())
    except OSError as exc:
        raise OutputError(f"-o {text}: cannot read {out}: {exc.strerror}") from None
    if not empty:
        manifest = read_manifest(out)
        if manifest is None:
            raise OutputError(f"-o {text}: {out} is not empty and not an earlier fabricgen output (no "
                              f"fabricgen {MANIFEST}); nothing written: give a new or empty directory")
        if manifest.get("command") != command:
            # an earlier output of the same command only: `capacity -o` must not replace a render
            raise OutputError(f"-o {text}: {out} is an earlier output of `fabricgen "
                              f"{manifest.get('command') or 'render'}`, not of `fabricgen {command or 'render'}`; "
                              "nothing written: give a new or empty directory")
        foreign = _foreign_entry(out, manifest)
        if foreign is not None:
            raise OutputError(f"-o {text}: {out / foreign} is not part of the fabricgen output its "
                              f"{MANIFEST} records; nothing written: move it away or give another directory")
    # Replacing a directory renames it, which needs write permission on it and on its parent.
    for need in (out.parent, out):
        if not os.access(need, os.W_OK | os.X_OK):
            raise OutputError(f"-o {text}: no permission to replace {out} (need write access to {need})")
    return out


def write_tree(files: dict[str, str], out_dir: str | Path) -> Path:
    """Write FILES into OUTPUT (check_target's rule) atomically; OutputError leaves nothing behind."""
    def fill(tmp: Path) -> None:
        made: set[Path] = set()
        # manifest.json last, as write_render: its mtime bounds every file's (plan --against, reuse.py)
        for rel in sorted(files, key=lambda rel: (rel == MANIFEST, rel)):
            path = tmp / rel
            parent = path.parent
            if parent not in made:
                parent.mkdir(parents=True, exist_ok=True)
                made.add(parent)
            write_file(path, files[rel].encode("utf-8"))
            if rel.endswith(".sh"):
                path.chmod(SCRIPT_MODE)
        seal_dirs(tmp, files)

    return _replace_atomically(out_dir, fill)


def write_render(plan: FabricPlan, intent_text: str, out_dir: str | Path,
                 workers: int | None = None, stats: dict[str, float] | None = None) -> tuple[Path, int]:
    """render_files + write_tree without the render in memory (`fabricgen render`): the same
    bytes, device files rendered and written over WORKERS processes (generator.render.stream),
    each hashed as it is written. (output directory, number of files); STATS as write_devices
    fills it."""
    from generator.render.reuse import PreviousRender
    from generator.render.stream import write_devices

    count = 0
    # read before the swap: unchanged files of the render this one replaces are linked, not rewritten
    previous = PreviousRender.of(out_dir) if Path(out_dir).is_dir() else None

    def fill(tmp: Path) -> None:
        nonlocal count

        def fabric_wide() -> list[tuple[str, str]]:
            written = []
            for rel, chunks in fabric_chunks(plan):
                digest = hashlib.sha256()
                fd = os.open(tmp / rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
                with os.fdopen(fd, "wb") as fh:
                    for chunk in chunks:
                        data = chunk.encode("utf-8")
                        fh.write(data)
                        digest.update(data)
                written.append((rel, digest.hexdigest()))
            return written

        hashes = dict(write_devices(plan, tmp, fabric_wide, workers, stats, previous))
        write_file(tmp / MANIFEST, manifest_text(plan.fabric, intent_text, hashes,
                                                 _discovered_sha256(plan)).encode("utf-8"))
        seal_dirs(tmp, hashes)
        count = len(hashes) + 1

    return _replace_atomically(out_dir, fill), count


def _replace_atomically(out_dir: str | Path, fill: Callable[[Path], None], command: str | None = None) -> Path:
    """FILL a temporary sibling of OUTPUT, then swap it in with renames (check_target's rule).
    Both temporary trees are claimed (leftovers.py) for this render's lifetime, and the trees
    earlier killed renders left beside OUTPUT are removed first."""
    out = check_target(out_dir, command)
    locks: list[int | None] = []
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        leftovers.remove_stale(out)
        tmp = Path(tempfile.mkdtemp(prefix=leftovers.prefix(out, leftovers.TMP), dir=out.parent))
    except OSError as exc:
        raise OutputError(f"cannot write {out}: {exc.strerror or exc}") from None
    old = None
    try:
        locks.append(leftovers.claim(tmp))
        fill(tmp)
        os.chmod(tmp, DIR_MODE)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=leftovers.prefix(out, leftovers.OLD), dir=out.parent))
            locks.append(leftovers.claim(old))
            os.rename(out, old / "previous")
        leftovers.unmark(tmp)           # OUTPUT holds only the render's files
        try:
            os.rename(tmp, out)
        except OSError:
            if old is not None:
                os.rename(old / "previous", out)
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)      # still locked: a killed removal is a leftover
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        kept = "the previous output is unchanged"
        if old is not None and (old / "previous").exists():
            leftovers.unmark(old)       # kept on purpose: no later render may take it for a leftover
            kept = f"the previous output is in {old / 'previous'}"       # never delete it
        elif old is not None:
            shutil.rmtree(old, ignore_errors=True)
        where = f" ({exc.filename})" if exc.filename else ""
        raise OutputError(f"cannot write {out}: {exc.strerror or exc}{where}; {kept}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        for fd in locks:
            if fd is not None:
                os.close(fd)
    return out
