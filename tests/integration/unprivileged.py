"""Run the product's commands as an unprivileged user, for tests that must not depend on root.

As itself when the suite is not root; as root, through util-linux setpriv(1) as nobody (65534). The
venv's interpreter may then be out of reach (a pyenv Python in root's 0700 home): nobody gets an
interpreter of its own in the work directory, the system Python of the same minor version with the
venv's site-packages (pyvenv.cfg beside the interpreter, as `python -m venv` lays it out) and the
venv's console scripts (ansible-playbook, ...) pointing at it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

NOBODY = 65534
SETPRIV = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def dropping() -> bool:
    return os.geteuid() == 0


def prefix() -> list[str]:
    """The argv prefix that runs a command without root: none when the suite is not root."""
    if not dropping():
        return []
    assert shutil.which("setpriv"), "running as root: util-linux setpriv is needed to drop to nobody"
    return list(SETPRIV)


def give(path: Path) -> Path:
    """`path` (a directory or file the test made) to the unprivileged user."""
    if dropping():
        os.chown(path, NOBODY, NOBODY)
    return path


def _reachable(python: str) -> bool:
    """nobody can start `python`, and it can start itself again (the lab starts its server so)."""
    probe = "import subprocess, sys; sys.exit(subprocess.run([sys.executable, '-c', 'import generator']).returncode)"
    return subprocess.run([*SETPRIV, python, "-c", probe], capture_output=True, timeout=120).returncode == 0


def interpreter(work: Path) -> tuple[str, str]:
    """(python, PATH entry for its console scripts) the unprivileged user runs the product with."""
    venv_bin = str(Path(sys.executable).parent)
    if not dropping() or _reachable(sys.executable):
        return sys.executable, venv_bin
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = shutil.which(version, path="/usr/bin:/bin")
    assert system, f"the venv's Python is out of nobody's reach and there is no /usr/bin/{version}"
    shim = work / "python"
    (shim / "bin").mkdir(parents=True)
    lib = shim / "lib" / version
    lib.mkdir(parents=True)
    (lib / "site-packages").symlink_to(sysconfig.get_paths()["purelib"])
    (shim / "pyvenv.cfg").write_text(f"home = {os.path.dirname(system)}\ninclude-system-site-packages = false\n")
    python = shim / "bin" / "python3"
    python.symlink_to(system)
    for script in Path(venv_bin).iterdir():
        try:
            head, _, body = script.read_bytes().partition(b"\n")
        except (IsADirectoryError, PermissionError):
            continue
        if script.is_file() and head.startswith(b"#!") and b"python" in head and not script.name.startswith("python"):
            target = shim / "bin" / script.name
            target.write_bytes(b"#!" + str(python).encode() + b"\n" + body)
            target.chmod(0o755)
    for path in (shim, *shim.rglob("*")):
        if not path.is_symlink():
            os.chown(path, NOBODY, NOBODY)
    assert _reachable(str(python)), "nobody cannot run the product even with the system Python"
    return str(python), str(shim / "bin")
