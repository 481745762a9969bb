"""Read an intent as it was at a git ref, with real `git` (no library: CI images have git)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from generator.common.errors import FabricgenError


class GitRefError(FabricgenError):
    """One line a person can act on: the ref, the repo, what to do."""


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60,
                              check=False)
    except FileNotFoundError:
        raise GitRefError("git is not installed: install git or pass --against a rendered directory") from None


def repo_root(path: Path) -> Path:
    """The work-tree root of the repository that holds `path`."""
    where = path if path.is_dir() else path.parent
    done = _git(where, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise GitRefError(f"{path} is not inside a git repository: pass --against a rendered directory instead")
    return Path(done.stdout.strip()).resolve()


def config_change(intent_path: str | Path, ref: str, name: str) -> str | None:
    """"added", "changed" or "removed" when NAME beside the intent differs between REF and the work
    tree, else None. A config file chooses endpoints, passwords and backups without touching a
    rendered file, so a change to it alone must still show in the plan (issue 34 finding 1)."""
    intent = Path(intent_path).resolve()
    root = repo_root(intent)
    beside = intent.parent / name
    rel = beside.relative_to(root).as_posix()
    done = subprocess.run(["git", "-C", str(root), "show", f"{ref}:{rel}"], capture_output=True, timeout=60,
                          check=False)
    before = done.stdout if done.returncode == 0 else None
    try:
        now: bytes | None = beside.read_bytes() if beside.is_file() else None
    except OSError:
        now = b""               # unreadable now: say it changed rather than nothing
    if before == now:
        return None
    return "added" if before is None else "removed" if now is None else "changed"


def show_at_ref(intent_path: str | Path, ref: str) -> tuple[str | None, str]:
    """(text of the intent at `ref` or None if the file did not exist there, "REF:relpath")."""
    intent = Path(intent_path).resolve()
    root = repo_root(intent)
    rel = intent.relative_to(root).as_posix()
    # verify first: a typo in the ref is an error, a missing file at a good ref is "new fabric"
    if ref.startswith("-") or _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode != 0:
        raise GitRefError(f"--against {ref!r}: not a commit in {root} (run `git fetch` or check the name), "
                          "and not a directory")
    done = _git(root, "show", f"{ref}:{rel}")
    if done.returncode != 0:
        if _git(root, "cat-file", "-e", f"{ref}:{rel}").returncode != 0:
            return None, f"{ref}:{rel}"
        raise GitRefError(f"git show {ref}:{rel} failed: {done.stderr.strip().splitlines()[-1:]}")
    return done.stdout, f"{ref}:{rel}"
