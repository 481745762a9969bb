"""A kit script in a box: `lab ztp` runs every script of a kit contained (issue 34 finding 2).

A kit is input: `fabricgen day0` wrote it, but anyone who could write DAY0DIR chose what runs.
On a switch the script can only harm that switch; in the lab it runs on the user's machine, so
each run gets, with util-linux's unshare(1) and setpriv(1) (no root needed):

- a user namespace (--map-root-user: the script is "root" as on the switch, with no power over
  anything outside), a mount namespace in which every mount is remounted read-only except the
  run's private directory (bind-mounted on itself first, so it keeps its own write permission);
  device nodes such as /dev/null stay writable on a read-only mount (open(2) checks EROFS for
  regular files and directories only);
- a network namespace with nothing but a down loopback: the script reaches the simulated switch
  and the kit the way it does today, through the shims' Unix socket and the kit files, which are
  file-system objects (connect(2) on a pathname socket needs no network and, like device nodes,
  is not refused on a read-only mount);
- a PID namespace whose init is the script: when it ends, the kernel kills every process left in
  the namespace, `setsid` daemons included (pid_namespaces(7)); --kill-child ends the namespace
  when unshare itself is killed (the lab's timeout, `lab down`);
- all capabilities dropped before the script starts (setpriv --bounding-set=-all
  --no-new-privs), so it cannot remount what was made read-only.

Where user namespaces are unavailable (user.max_user_namespaces=0, an AppArmor restriction, an
old kernel) `lab ztp` refuses before any switch moves, naming why: it never runs a kit bare.
"""

from __future__ import annotations

import functools
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from generator.common.errors import FabricgenError

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
TOOLS = ("unshare", "setpriv", "mount", "awk", "sort", "sh")
UNSHARE_FLAGS = ("--user", "--map-root-user", "--mount", "--pid", "--fork", "--kill-child", "--net", "--mount-proc")

# Run inside the namespaces: $1 the private directory, then the script's command line. Mount
# points are read deepest first from mountinfo (octal escapes such as \040 decoded by printf %b).
_SETUP = """set -eu
dir=$1; shift
{mount} --bind "$dir" "$dir"
{awk} '{{print $5}}' /proc/self/mountinfo | {sort} -ru | while IFS= read -r mp; do
  mp=$(printf '%b' "$mp")
  [ "$mp" = "$dir" ] && continue
  {mount} -o remount,bind,ro "$mp" 2>/dev/null && continue
  # Gone since mountinfo was read: unlinking a mount point (`ip netns del` does, any time another
  # program likes) detaches every other namespace's copy of that mount (mount_namespaces(7), Linux
  # 3.18+); no path reaches it any more, so nothing can write through it.
  [ -e "$mp" ] || [ -L "$mp" ] || continue
  echo "lab sandbox: cannot make $mp read-only" >&2; exit 125
done
exec {setpriv} --bounding-set=-all --inh-caps=-all --no-new-privs -- "$@"
"""


class SandboxError(FabricgenError, RuntimeError):
    """One line: why kit scripts cannot be contained here, and what to do."""


@functools.cache
def _tools() -> dict[str, str]:
    found = {tool: shutil.which(tool, path=SYSTEM_PATH) for tool in TOOLS}
    missing = sorted(tool for tool, path in found.items() if path is None)
    if missing:
        raise SandboxError(f"lab ztp: cannot contain kit scripts: {', '.join(missing)} not found (util-linux); "
                           "install util-linux")
    return found  # type: ignore[return-value]


def command(argv: list[str], private: Path) -> list[str]:
    """ARGV run in the box, with PRIVATE its only writable directory."""
    tools = _tools()
    setup = _SETUP.format(**{tool: shlex.quote(path) for tool, path in tools.items()})
    return [tools["unshare"], *UNSHARE_FLAGS, tools["sh"], "-c", setup, "fabricgen-ztp-sandbox", str(private), *argv]


@functools.cache
def check() -> None:
    """SandboxError unless a box can be made here (tried once per process, with a real run)."""
    try:
        with tempfile.TemporaryDirectory(prefix="fabricgen-ztp-probe-") as probe:
            done = subprocess.run(command([_tools()["sh"], "-c", "exit 0"], Path(probe)), capture_output=True,
                                  text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxError(f"lab ztp: cannot contain kit scripts: {exc}") from None
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1][:200]
        raise SandboxError(f"lab ztp: cannot contain kit scripts: unshare --user --mount --pid --net failed ({why}); "
                           "user namespaces are needed (sysctl user.max_user_namespaces > 0, and "
                           "kernel.apparmor_restrict_unprivileged_userns=0 where AppArmor restricts them)")


__all__ = ["SandboxError", "check", "command"]
