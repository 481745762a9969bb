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
always safe. A directory that cannot be written only costs the import.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import sys
from functools import cache
from pathlib import Path

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


def _entry(directory: Path, release: str, text: str) -> Path:
    digest = hashlib.sha256(_fingerprint(release))
    digest.update(text.encode("utf-8", "surrogatepass"))
    return directory / f"{digest.hexdigest()}.json"


def _read(path: Path) -> list[ModelProblem] | None:
    """The problems stored at PATH; None when there is no entry or it is not one of ours."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))["problems"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if type(rows) is not list or not all(
            type(r) is list and len(r) == 3 and type(r[0]) is list and all(type(k) is str for k in r[0])
            and type(r[1]) is str and r[2] in _KINDS for r in rows):
        return None
    return [ModelProblem(tuple(keys), message, kind) for keys, message, kind in rows]


def _write(path: Path, problems: list[ModelProblem]) -> None:
    text = json.dumps({"problems": [[list(p.path), p.message, p.kind] for p in problems]})
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        # the user's own: a refused value (a hashed password, say) is quoted in its problem
        path.parent.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.parent.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)                   # whole entries only, also with concurrent runs
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def validate_nvue_cached(text: str, version: str | tuple[int, ...]) -> list[ModelProblem]:
    """validate_nvue(TEXT, VERSION) (a startup.yaml's text), answered from the cache when this
    document was checked before with the same model, code and libraries."""
    directory = cache_dir()
    if directory is None:
        return validate_nvue(text, version)
    path = _entry(directory, model_release(version).release, text)
    problems = _read(path)
    if problems is None:
        problems = validate_nvue(text, version)
        _write(path, problems)
    return problems
