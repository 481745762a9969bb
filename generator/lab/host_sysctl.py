"""The kernel parameters of a lab GPU server: its own /proc/sys below the sandbox root and the
procps-ng `sysctl` that reads and writes them there, never the lab machine's /proc/sys.

A lab host's commands run as the lab's own user, which is root on CI: a `printf ... >
/proc/sys/net/...` there would set the lab machine's kernel. So the host's /proc/sys is
$FABRICGEN_SYSROOT/proc/sys (playbooks/hosts.yml's sysctl task writes below $FABRICGEN_SYSROOT, as
its NIC tools read $FABRICGEN_SYSROOT/sys), seeded at build with what a booted Ubuntu server holds
for the keys fabricgen's render sets.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

# Kernel defaults (Documentation/networking/ip-sysctl.rst; net/core/sock.c SK_RMEM_MAX/SK_WMEM_MAX
# on 64-bit; net/ipv4/tcp.c tcp_init for tcp_rmem/tcp_wmem), except rp_filter: Ubuntu's procps ships
# /usr/lib/sysctl.d/10-network-security.conf with net.ipv4.conf.{default,all}.rp_filter = 2, and an
# interface takes `default`'s value when it is created.
CORE_DEFAULTS = {
    "net/core/rmem_max": "212992",
    "net/core/wmem_max": "212992",
    "net/ipv4/tcp_rmem": "4096\t131072\t6291456",
    "net/ipv4/tcp_wmem": "4096\t16384\t4194304",
}
CONF_DEFAULTS = {"arp_ignore": "0", "arp_announce": "0", "rp_filter": "2"}


def write_proc_sys(root: Path, netdevs: Sequence[str]) -> None:
    """root/proc/sys with the keys above, for `all`, `default`, `lo` and each rail netdev."""
    proc = root / "proc" / "sys"
    for key, value in CORE_DEFAULTS.items():
        path = proc / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")
    for device in ("all", "default", "lo", *netdevs):
        conf = proc / "net" / "ipv4" / "conf" / device
        conf.mkdir(parents=True, exist_ok=True)
        for key, value in CONF_DEFAULTS.items():
            (conf / key).write_text(value + "\n")


# procps-ng sysctl(8), 4.0 (src/sysctl.c): `KEY` prints `KEY = VALUE`; -n the value alone; -w (or a
# KEY=VALUE argument) writes and echoes `KEY = VALUE` unless -q; -p FILE (default /etc/sysctl.conf)
# and --system apply files, --system printing `* Applying FILE ...` before each. A key without a file:
# `sysctl: cannot stat /proc/sys/KEY: No such file or directory`, a write refused: `sysctl: permission
# denied on key "KEY"`, both exit 1. Keys use `.` or `/` as separator; a `.` in a path component
# (vlan netdev) is written `/` in a dotted key, so the two swap (sysctl.c slashdot).
SYSCTL_TOOL = r'''#!/usr/bin/python3
import glob, os, sys

ROOT = os.environ.get("FABRICGEN_SYSROOT", "")
PROC = ROOT + "/proc/sys/"
# sysctl.d(5): later directories lose to earlier ones for a file of the same name; files apply sorted by name
SYSTEM_DIRS = ("/etc/sysctl.d", "/run/sysctl.d", "/usr/local/lib/sysctl.d", "/usr/lib/sysctl.d", "/lib/sysctl.d")

def rel(key):
    key = key.strip()
    if "/" in key and "." not in key.split("/")[0]:
        return key.lstrip("/")
    return key.translate(str.maketrans("./", "/."))

def dotted(key):
    return rel(key).translate(str.maketrans("/.", "./"))

def show(text):
    return " ".join(text.split("\t")).rstrip("\n")

def read(key):
    path = PROC + rel(key)
    if not os.path.isfile(path):
        print(f"sysctl: cannot stat /proc/sys/{rel(key)}: No such file or directory", file=sys.stderr)
        return None
    with open(path) as fh:
        return show(fh.read())

def write(key, value, quiet):
    path = PROC + rel(key)
    if not os.path.isfile(path):
        print(f"sysctl: cannot stat /proc/sys/{rel(key)}: No such file or directory", file=sys.stderr)
        return 1
    if not os.access(path, os.W_OK):
        print(f'sysctl: permission denied on key "{dotted(key)}"', file=sys.stderr)
        return 1
    value = " ".join(value.split())
    with open(path, "w") as fh:
        fh.write(value.replace(" ", "\t") + "\n")
    if not quiet:
        print(f"{dotted(key)} = {value}")
    return 0

def sandbox(path):
    # the host's / is its sandbox root: /etc/sysctl.d there is ROOT/etc/sysctl.d
    return path if not ROOT or path.startswith(ROOT + "/") or not path.startswith("/") else ROOT + path

def apply_file(path, quiet):
    status = 0
    try:
        with open(sandbox(path)) as fh:
            lines = fh.read().splitlines()
    except OSError:
        print(f"sysctl: cannot open \"{path}\": No such file or directory", file=sys.stderr)
        return 1
    for line in lines:
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        ignore_error = line.startswith("-")
        key, sep, value = line.lstrip("-").partition("=")
        if not sep:
            continue
        rc = write(key, value.strip(), quiet)
        if rc and not ignore_error:
            status = rc
    return status

def main(argv):
    quiet = names_only = value_only = want_write = False
    files, keys, system, all_keys = [], [], False, False
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in ("-q", "--quiet"):
            quiet = True
        elif arg in ("-n", "--values"):
            value_only = True
        elif arg in ("-N", "--names"):
            names_only = True
        elif arg in ("-w", "--write"):
            want_write = True
        elif arg in ("-a", "-A", "-X", "--all"):
            all_keys = True
        elif arg == "--system":
            system = True
        elif arg in ("-p", "--load") or arg.startswith("-p") or arg.startswith("--load="):
            given = arg[2:] if arg.startswith("-p") and len(arg) > 2 else arg.split("=", 1)[1] if "=" in arg else ""
            if not given and args and not args[0].startswith("-"):
                given = args.pop(0)
            files.append(given or "/etc/sysctl.conf")
        elif arg.startswith("-"):
            print(f"sysctl: invalid option -- '{arg.lstrip('-')[:1]}'", file=sys.stderr)
            return 1
        else:
            keys.append(arg)
    status = 0
    if system:
        chosen = {}
        for directory in reversed(SYSTEM_DIRS):
            for path in glob.glob(sandbox(directory) + "/*.conf"):
                chosen[os.path.basename(path)] = directory + "/" + os.path.basename(path)
        for name in sorted(chosen):
            print(f"* Applying {chosen[name]} ...")
            status |= apply_file(chosen[name], quiet)
        if os.path.isfile(sandbox("/etc/sysctl.conf")):
            print("* Applying /etc/sysctl.conf ...")
            status |= apply_file("/etc/sysctl.conf", quiet)
        return status
    for path in files:
        status |= apply_file(path, quiet)
    if files:
        return status
    if all_keys:
        for dirpath, _, names in sorted(os.walk(PROC)):
            for name in sorted(names):
                keys.append(os.path.relpath(os.path.join(dirpath, name), PROC))
    for key in keys:
        if "=" in key:
            name, _, value = key.partition("=")
            status |= write(name, value, quiet)
            continue
        if want_write:
            print(f'sysctl: "{key}" must be of the form name=value', file=sys.stderr)
            status = 1
            continue
        value = read(key)
        if value is None:
            status = 1
        elif names_only:
            print(dotted(key))
        elif value_only:
            print(value)
        else:
            print(f"{dotted(key)} = {value}")
    return status

sys.exit(main(sys.argv[1:]))
'''
