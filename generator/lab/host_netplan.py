"""`netplan` on a lab GPU server: the lab machine's REAL netplan generate, rooted in the server's sandbox.

The hosts playbook calls netplan on a server in one way only: playbooks/files/fabricgen_netplan.py
runs `netplan generate --root-dir STAGE` on a copy of the host's netplan files and installs the
rails' networkd output (it never runs `netplan apply`, which reconfigures every link). A stock
Ubuntu server has netplan.io, so a lab server has it when the lab machine does: this stand-in runs
that real netplan, whose parser and generator are then the ones judging the rendered netplan.yaml.

What keeps it off the lab machine's network: `generate` always gets a --root-dir (without one the
real generator writes the lab machine's /run/systemd/network: netplan-generate(8), "--root-dir";
here the server's / is its sandbox, $FABRICGEN_SYSROOT), and $SNAP is dropped (with it netplan
0.106 cli/commands/generate.py asks the system bus's io.netplan.Netplan to generate instead).
`generate --root-dir` runs no systemctl (the daemon-reload after generating is only for /,
cli/commands/generate.py). Every other subcommand (apply, try, set, ...) acts on the running
system's links or on /etc/netplan through D-Bus: not simulated here, one line and exit 1, nothing
changed. Without netplan on the lab machine the server has no netplan (command not found, as on a
server without netplan.io) and the lab does not ask the playbook to use it.
"""

from __future__ import annotations

import shutil

NETPLAN_TOOL = r'''#!/usr/bin/python3
import os, sys

REAL = @REAL@
ROOT = os.environ.get("FABRICGEN_SYSROOT", "")
args = sys.argv[1:]
lead = []
# netplan's global options come before the subcommand (cli/core.py: --debug, -h)
while args and args[0] in ("--debug", "-h", "--help"):
    lead.append(args.pop(0))
if not args or lead[-1:] in (["-h"], ["--help"]):
    os.execv(REAL, [REAL, *lead, *args])
command, rest = args[0], args[1:]
if command != "generate":
    print(f"netplan {command}: not simulated on a lab server: the hosts playbook runs only `netplan generate` "
          f"(files/fabricgen_netplan.py); nothing was changed", file=sys.stderr)
    sys.exit(1)
if not any(a == "--root-dir" or a.startswith("--root-dir=") for a in rest) and not {"-h", "--help"} & set(rest):
    if not ROOT:
        print("netplan generate: no sandbox root ($FABRICGEN_SYSROOT unset): refusing to write the lab machine's /run",
              file=sys.stderr)
        sys.exit(1)
    rest = ["--root-dir", ROOT, *rest]
env = {k: v for k, v in os.environ.items() if k != "SNAP"}
os.execve(REAL, [REAL, *lead, "generate", *rest], env)
'''


def netplan_tool() -> str | None:
    """The server's netplan (the script above, pointing at the lab machine's netplan), or None when
    the lab machine has no netplan: the server then has none either."""
    # where Debian/Ubuntu's netplan.io installs its CLI (a Python script running /usr/lib/netplan/generate)
    real = shutil.which("netplan", path="/usr/sbin:/sbin")
    if real is None:
        return None
    return NETPLAN_TOOL.replace("@REAL@", repr(real))
