"""NVUE object-model verdicts kept on disk, keyed by everything they are a function of.

Importing one release's model (nvueschema.models.v5_11: ~630 pydantic classes built at import)
takes ~0.75 s, most of the checks' time on a fabric of any size (issue 14), while FG260 validates
only the few documents of a fabric's distinct switch shapes, the same ones run after run. The
verdict on a document (generator.render.nvue_model.validate_nvue) is a pure function of:
- the document's text and the model release it is checked against;
- that release's model source file (nvueschema/models/v<release>.py);
- the code turning pydantic's errors into problems (nvue_model.py, this file);
- pydantic, pydantic-core, PyYAML (the document is read as NVUE reads it) and Python.
The key is a SHA-256 over all of them, so an entry is never stale: any change is another key,
and the model is imported only when a document has no entry yet.

Where: $FABRICGEN_CACHE_DIR, else $XDG_CACHE_HOME/fabricgen, else ~/.cache/fabricgen (XDG Base
Directory spec: "user-specific non-essential (cached) data"), in nvue-model/. FABRICGEN_CACHE_DIR=off
turns it off. Entries are ~100 bytes, one per distinct document; deleting the directory is
always safe. A directory that cannot be written only costs the import. The directory is used
only when it is the user's and nobody else can write in it, and an entry only when its HMAC
under the directory's key (nvue-model/key, 0600) checks out (see "Trust" below).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import importlib.util
import json
import os
import secrets
import stat
import sys
from functools import cache
from pathlib import Path

from generator.common.bounded_read import ReadRefused, read_bounded
from generator.render import nvue_model
from generator.render.nvue_model import MODELS_PACKAGE, ModelProblem, model_release, validate_nvue

CACHE_ENV = "FABRICGEN_CACHE_DIR"
_KINDS = frozenset({"value", "unknown-key", "document"})


def cache_dir() -> Path | None:
    """The verdicts' directory, or None when FABRICGEN_CACHE_DIR=off."""
    env = os.environ.get(CACHE_ENV)
    if env == "off":
        return None
    if env:
        base = Path(env).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        # the spec says a relative XDG path is invalid and must be ignored
        base = (Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache") / "fabricgen"
    return base / "nvue-model"


@cache
def _fingerprint(release: str) -> bytes:
    """What a verdict depends on besides the document, for RELEASE (read once per process)."""
    import pydantic
    import pydantic_core
    import yaml

    spec = importlib.util.find_spec(f"{MODELS_PACKAGE}.v{release.replace('.', '_')}")
    if spec is None or spec.origin is None:
        raise ValueError(f"no NVUE object model module for {release}")
    digest = hashlib.sha256()
    for part in (Path(spec.origin).read_bytes(), Path(nvue_model.__file__).read_bytes(),
                 Path(__file__).read_bytes(), release.encode(),
                 f"pydantic {pydantic.VERSION} core {pydantic_core.__version__} yaml {yaml.__version__} "
                 f"libyaml {getattr(yaml, '__with_libyaml__', False)} python {sys.version_info[:2]}".encode()):
        digest.update(len(part).to_bytes(8, "big"))       # length-prefixed: no two inputs run together
        digest.update(part)
    return digest.digest()


def _entry_name(release: str, text: str) -> str:
    digest = hashlib.sha256(_fingerprint(release))
    digest.update(text.encode("utf-8", "surrogatepass"))
    return f"{digest.hexdigest()}.json"


def _entry(directory: Path, release: str, text: str) -> Path:
    return directory / _entry_name(release, text)


# Trust. A verdict read from disk decides whether FG260 reports a document NVUE would refuse, so
# an entry someone else wrote must never be believed: the directory must be the user's own and
# writable by nobody else, and each entry carries an HMAC-SHA256 under a key only the user can
# read. A planted or copied entry fails the HMAC and is a miss; a refused directory or key turns
# the cache off for the run with one warning line (the verdicts are then computed, the same).
KEY_FILE = "key"
KEY_BYTES = 32                                  # RFC 2104 section 3: not shorter than the hash output
ENTRY_LIMIT = 1 << 20                           # entries are ~100 bytes; a refusal list a few KB
_warned: set[str] = set()


class Untrusted(Exception):
    """Why the cache directory or its key is not used: one phrase."""


def _warn(directory: Path, reason: str) -> None:
    if str(directory) not in _warned:           # once per directory and process, not per document
        _warned.add(str(directory))
        print(f"warning: NVUE model cache {directory}: {reason}; not used (checks run without it, same "
              f"results): remove the directory or set {CACHE_ENV}=off", file=sys.stderr)


def _open_dir(directory: Path) -> int | None:
    """A descriptor of DIRECTORY, made 0700 when missing; None when it cannot be made (that only
    costs the import); Untrusted when it is not the user's alone. Every later access is relative
    to the descriptor, so the directory cannot be swapped for another after the check."""
    try:
        directory.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        directory.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        if not directory.is_dir():
            return None
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        if os.path.islink(directory):           # O_NOFOLLOW: ELOOP, or ENOTDIR with O_DIRECTORY
            raise Untrusted("it is a symbolic link") from None
        return None
    st = os.fstat(fd)
    if st.st_uid != os.geteuid():
        os.close(fd)
        raise Untrusted(f"owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})")
    if st.st_mode & 0o022:
        os.close(fd)
        raise Untrusted(f"mode {stat.S_IMODE(st.st_mode):04o} lets others write in it (want 0700)")
    return fd


def _read_key(dir_fd: int) -> bytes:
    def mine(st: os.stat_result) -> str | None:
        if st.st_uid != os.geteuid():
            return f"{KEY_FILE} is owned by uid {st.st_uid}, not by this user"
        if stat.S_IMODE(st.st_mode) != 0o600:
            return f"{KEY_FILE} has mode {stat.S_IMODE(st.st_mode):04o} (want 0600)"
        return None

    try:
        key = read_bounded(KEY_FILE, KEY_BYTES, follow_symlinks=False, dir_fd=dir_fd, check=mine)
    except ReadRefused as exc:
        if exc.kind == "type":
            raise Untrusted(f"{KEY_FILE} is not a regular file") from None
        if exc.kind == "trust":
            raise Untrusted(exc.message) from None
        if exc.kind == "size":
            raise Untrusted(f"{KEY_FILE} holds {exc.size} bytes, not {KEY_BYTES}") from None
        if exc.kind == "link":
            raise OSError(errno.ELOOP, exc.message) from None      # _key says so
        raise
    if len(key) != KEY_BYTES:
        raise Untrusted(f"{KEY_FILE} holds {len(key)} bytes, not {KEY_BYTES}")
    return key


def _key(dir_fd: int) -> bytes | None:
    """The directory's HMAC key, made on first use: written whole under a fresh O_EXCL name (0600)
    and linked to KEY_FILE, which fails if it exists, so concurrent first runs agree on one key and
    none reads a half-written one. None when it cannot be made (a read-only directory)."""
    try:
        return _read_key(dir_fd)
    except FileNotFoundError:
        pass
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Untrusted(f"{KEY_FILE} is a symbolic link") from None
        return None
    tmp = f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(8)}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=dir_fd)
        try:
            os.fchmod(fd, 0o600)                # whatever the umask
            os.write(fd, secrets.token_bytes(KEY_BYTES))
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):
            os.link(tmp, KEY_FILE, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
    try:
        return _read_key(dir_fd)
    except OSError:
        return None


def _mac(key: bytes, name: str, rows: list) -> str:
    """Over the entry's name (the document's key) and its verdict, so an entry is good only for
    the document it was written for."""
    body = json.dumps([name, rows], ensure_ascii=True, separators=(",", ":"))
    return hmac.new(key, body.encode("ascii"), hashlib.sha256).hexdigest()


def _read(dir_fd: int, key: bytes, name: str) -> list[ModelProblem] | None:
    """The problems stored under NAME; None when there is no entry or it is not one we wrote."""
    try:
        # a link, FIFO or oversized entry is not one we wrote (ReadRefused is an OSError)
        doc = json.loads(read_bounded(name, ENTRY_LIMIT, follow_symlinks=False, dir_fd=dir_fd))
        rows, mac = doc["problems"], doc["hmac"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if type(rows) is not list or not all(
            type(r) is list and len(r) == 3 and type(r[0]) is list and all(type(k) is str for k in r[0])
            and type(r[1]) is str and r[2] in _KINDS for r in rows):
        return None
    if type(mac) is not str or not mac.isascii() or not hmac.compare_digest(mac, _mac(key, name, rows)):
        return None
    return [ModelProblem(tuple(keys), message, kind) for keys, message, kind in rows]


def _write(dir_fd: int, key: bytes, name: str, problems: list[ModelProblem]) -> None:
    rows = [[list(p.path), p.message, p.kind] for p in problems]
    text = json.dumps({"hmac": _mac(key, name, rows), "problems": rows})
    tmp = f".{name}.{os.getpid()}.{secrets.token_hex(8)}.tmp"
    try:
        # the user's own: a refused value (a hashed password, say) is quoted in its problem
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=dir_fd)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        # whole entries only, also with concurrent runs
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)


def _store(directory: Path) -> tuple[int, bytes] | None:
    """(descriptor of DIRECTORY, its key) when the cache may be used; else None, after one
    warning line when it is refused rather than merely unwritable."""
    try:
        dir_fd = _open_dir(directory)
    except Untrusted as exc:
        _warn(directory, str(exc))
        return None
    if dir_fd is None:
        return None
    try:
        key = _key(dir_fd)
    except Untrusted as exc:
        _warn(directory, str(exc))
        key = None
    if key is None:
        os.close(dir_fd)
        return None
    return dir_fd, key


def validate_nvue_cached(text: str, version: str | tuple[int, ...]) -> list[ModelProblem]:
    """validate_nvue(TEXT, VERSION) (a startup.yaml's text), answered from the cache when this
    document was checked before with the same model, code and libraries."""
    directory = cache_dir()
    store = None if directory is None else _store(directory)
    if store is None:
        return validate_nvue(text, version)
    dir_fd, key = store
    try:
        name = _entry_name(model_release(version).release, text)
        problems = _read(dir_fd, key, name)
        if problems is None:
            problems = validate_nvue(text, version)
            _write(dir_fd, key, name, problems)
        return problems
    finally:
        os.close(dir_fd)
