"""Fake ConnectX NIC tools and a fake /sys tree that behave like the real ones.

There are no ConnectX NICs on the test machines. The tools below stand in for the real
ones: each is a small Python script that logs its arguments (one line per call in
$FAKE_NIC_LOG) and keeps what the real NIC, firmware or kernel would keep in
$FAKE_NIC_STATE (one JSON file per tool and device), so roce-qos.sh, the host playbook
and discovery run their read-compare-set logic against realistic output. This is the one
stand-in the test plan allows. $FABRICGEN_SYSROOT prefixes /sys (and /proc) for the fakes as
for roce-qos.sh.

What each fake reproduces, and from where:

- `cma_roce_tos`: mlnx-tools sbin/cma_roce_tos (github.com/Mellanox/mlnx-tools @8fbfd9cf),
  a bash script. Options -d <dev> (default mlx5_0), -p <port> (default 1), -t <tos>, -h.
  It needs <configfs>/rdma_cm ("Module rdma_cm is not loaded or does not support configfs",
  exit 1); it mkdirs the group rdma_cm/<dev> when missing (the kernel refuses with ENODEV
  when there is no such RDMA device: "Failed to create configuration for <dev>", exit 1),
  fails "Device <dev> port <p> does not exist" (exit 1, leaving the group it made, as the
  real script does), writes -t into ports/<p>/default_roce_tos, prints the file, and
  rmdirs the group again when it created it. The value itself lives in the kernel's
  cma_device (drivers/infiniband/core/cma_configfs.c reads and writes it through
  cma_get/set_default_roce_tos), so it survives the group's removal: the fake keeps it in
  $FAKE_NIC_STATE, not in the directory. Not reproduced: the root check ("You must be root
  to run this") and mounting configfs (the fake needs $SYSROOT/sys/kernel/config to exist,
  else "Failed to mount configfs").
- `mlxconfig`: mstflint mlxconfig (github.com/Mellanox/mstflint @b9d9e844,
  mlxconfig/mlxcfg_ui.cpp): `-d <pci> [-e] q [PARAM...]` prints the device block and the
  "Configurations:" table (Next Boot column; Default and Current with -e, '*' where the next
  value differs); `[-y] -d <pci> set PARAM=VALUE...` prints the table with a New column,
  asks "Apply new Configuration? (y/n) [n] :" (answered by -y, else read from stdin),
  then "Applying... Done!" and "-I- Please reboot machine to load new configurations.".
  Errors print "-E- ..." on stdout and exit 3 (MLX_CFG_ERROR). Only LINK_TYPE_P1/P2
  (IB(1), ETH(2), VPI(3)) exist here. A set value is pending until a firmware reset: the
  current value follows the port's sysfs link_layer, which only firmware_reset() changes.
- `mlnx_qos`: mlnx-tools python/mlnx_qos output (trust state, dscp2prio only under DSCP trust,
  PFC table); --trust dscp/pcp adds/removes the 64 DSCP APP entries.
- `dcb`: iproute2 dcb(8) `app show|add|replace ... dscp-prio`, `pfc show|set ... prio-pfc`.
  Both act on one per-netdev DCB state as mlx5_core keeps it (default trust pcp, PFC off,
  dscp>>3 map, no APP entries; the first DSCP APP entry switches trust to DSCP, the last one
  removed back to PCP: en_dcbnl.c mlx5e_dcbnl_ieee_setapp/delapp).
- `scontrol`: Slurm scontrol; `update` logs its arguments and prints nothing on success, and keeps
  the node's drain, reason, user and time as slurmctld does; `show node` prints them (see
  FAKE_SCONTROL). FAKE_SCONTROL_FAIL=1 makes an update fail as for an unknown node
  ("slurm_update error: Invalid node name specified", exit 1).
- `ibv_devinfo` (read-only, not logged): rdma-core libibverbs/examples/devinfo.c, `-d <dev> -i
  <port>`: the device block, then the port's state ("PORT_ACTIVE (4)", from sysfs ports/<p>/state),
  max_mtu and active_mtu ("4096 (5)") and link_layer. The active MTU is the kernel's for a RoCE
  port: mlx5_query_port_roce reports min(max_mtu, iboe_get_mtu(netdev MTU)) (include/rdma/
  ib_addr.h: minus 96 header bytes, rounded down to 256..4096). "IB device '<dev>' wasn't found"
  and exit 255 for an unknown device.
- `ethtool -S <netdev>` (read-only, not logged): mlx5's "NIC statistics:" with the per-priority
  pause counters rx_prio<N>_pause / tx_prio<N>_pause (and _duration) listed only for priorities
  with PFC enabled (mlx5 en_stats.c, per-prio PFC group), as the fake mlnx_qos/dcb hold it;
  the counts come from add_pause_frames().

write_fake_sysfs lays out the kernel's device model (Documentation/ABI/stable/
sysfs-class-infiniband, sysfs-class-net; drivers/infiniband/core/sysfs.c):
/sys/class/net/<netdev> -> /sys/devices/pci0000:00/<pci>/net/<netdev> (with `device` back to
the PCI function, `dev_port`, OFED `ecn/`), /sys/class/infiniband/<rdma> ->
/sys/devices/pci0000:00/<pci>/infiniband/<rdma> (ports/1/{state, phys_state, rate,
link_layer, gids/, gid_attrs/}, `device`, OFED `tc/1/traffic_class`), /sys/bus/pci/devices/<pci>,
/sys/kernel/config/rdma_cm (the rdma_cm module loaded) and the GPUDirect modules.
reset_nic_qos() is a driver reload (mlx5_core/mlx5_ib re-probe, mlxfwreset, health
recovery): trust back to PCP, PFC and ECN off, traffic class unset, ToS 0.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

_FAKE_COMMON = r'''#!/usr/bin/python3
import json, os, sys
from pathlib import Path

SYSROOT = os.environ.get("FABRICGEN_SYSROOT", "")

def log():
    with open(os.environ["FAKE_NIC_LOG"], "a") as f:
        f.write(" ".join([Path(sys.argv[0]).name] + sys.argv[1:]) + "\n")

def state(key, default):
    base = Path(os.environ["FAKE_NIC_STATE"])
    base.mkdir(parents=True, exist_ok=True)
    path = base / (Path(sys.argv[0]).name + "-" + key + ".json")
    data = json.loads(path.read_text()) if path.exists() else default
    return path, data

def save(path, data):
    path.write_text(json.dumps(data))

log()
'''

# The NIC's DCB state as mlx5_core keeps it (drivers/net/ethernet/mellanox/mlx5/core/en_dcbnl.c),
# shared by the mlnx_qos and dcb fakes as by the real tools (both talk dcbnl to the driver):
# trust state, the hardware DSCP->priority map (dscp2prio[], default DSCP >> 3), the DSCP APP
# entries of the dcbnl app table and PFC per priority. mlx5e_dcbnl_ieee_setapp() switches trust
# to DSCP when the first DSCP APP entry is added and writes the map; delapp() switches back to
# PCP when the last one goes. Kept in $FAKE_NIC_STATE/mlnx_qos-<netdev>.json.
_FAKE_DCBNL = _FAKE_COMMON + r"""
def nic(ifc):
    if not Path(SYSROOT + "/sys/class/net/" + ifc).exists():
        return None, None
    path = Path(os.environ["FAKE_NIC_STATE"]) / f"mlnx_qos-{ifc}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    st = json.loads(path.read_text()) if path.exists() else {}
    st.setdefault("trust", "pcp")
    st.setdefault("pfc", [0] * 8)
    st.setdefault("dscp", [d >> 3 for d in range(64)])
    st.setdefault("app", {})                 # DSCP APP entries: "dscp" -> priority
    # A lab host's `pcp_trust` fault ($FAKE_NIC_FAULTS, lab/fault_file.py): mlx5 health recovery keeps
    # resetting the port's QoS from the firmware, PCP trust and no APP entries (DEVICE_STATE.md), so
    # whatever was set last is gone at the next read
    faults = os.environ.get("FAKE_NIC_FAULTS")
    if faults and Path(faults).is_file():
        if ifc in ((json.loads(Path(faults).read_text() or "{}").get("host") or {}).get("pcp_trust") or []):
            st["app"], st["trust"] = {}, "pcp"
    return path, st

def setapp(st, d, p):
    if not st["app"]:
        st["trust"] = "dscp"
    st["dscp"][d] = p
    st["app"][str(d)] = p

def delapp(st, d):
    st["app"].pop(str(d), None)
    if not st["app"]:
        st["trust"] = "pcp"
"""

# mlnx-tools python/mlnx_qos: `-i IFC` prints the state; --trust, --pfc, --dscp2prio set,D,P change
# it. Under DSCP trust it prints "dscp2prio mapping:" with one "prio:N dscp:.." line per priority
# (DSCPs high to low, each "%02d,"); under PCP trust there is no such block (the map is not in use).
# --trust dscp adds one DSCP APP entry per DSCP (with the current map; the driver switches trust on
# the first), --trust pcp removes them all (the driver switches back on the last).
FAKE_MLNX_QOS = _FAKE_DCBNL + r"""
args = sys.argv[1:]
ifc = args[args.index("-i") + 1]
path, st = nic(ifc)
if path is None:
    print(f"Netlink error: no such device {ifc}", file=sys.stderr)
    sys.exit(1)
changed = False
if "--trust" in args:
    trust = args[args.index("--trust") + 1]
    if trust == "dscp":
        for d in range(64):
            setapp(st, d, st["dscp"][d])
    else:
        for d in list(st["app"]):
            delapp(st, int(d))
    st["trust"] = trust
    changed = True
if "--pfc" in args:
    st["pfc"] = [int(x) for x in args[args.index("--pfc") + 1].split(",")]
    changed = True
if "--dscp2prio" in args:
    op, d, p = args[args.index("--dscp2prio") + 1].split(",")
    if op == "set":
        setapp(st, int(d), int(p))
    else:
        delapp(st, int(d))
    changed = True
if changed:
    save(path, st)
print("DCBX mode: OS controlled")
print("Priority trust state: " + st["trust"])
if st["trust"] == "dscp":
    print("dscp2prio mapping:")
    for prio in range(8):
        ds = [d for d in range(63, -1, -1) if st["dscp"][d] == prio]
        print(f"\tprio:{prio} dscp:" + "".join(f"{d:02d}," for d in ds))
print("default priority:")
print("Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,")
print("Cable len: 7")
print("PFC configuration:")
print("\tpriority    0   1   2   3   4   5   6   7")
print("\tenabled     " + "   ".join(str(v) for v in st["pfc"]))
print("\tbuffer      " + "   ".join(str(v) for v in st["pfc"]))
for tc in range(8):
    print(f"tc: {tc} ratelimit: unlimited, tsa: vendor")
    print(f"\t priority:  {tc}")
"""

# iproute2 dcb(8): `app show dev IFC dscp-prio` lists the DSCP APP entries ("dscp-prio D:P ...",
# by DSCP), `app add|replace ... dscp-prio D:P` adds them (replace drops the DSCP's others),
# `pfc show|set ... prio-pfc` reads and sets PFC per priority.
FAKE_DCB = _FAKE_DCBNL + r"""
args = [a for a in sys.argv[1:] if a != "-N"]
obj, cmd = args[0], args[1]
ifc = args[args.index("dev") + 1]
path, st = nic(ifc)
if path is None:
    print(f"Cannot find device \"{ifc}\"", file=sys.stderr)
    sys.exit(1)
if obj == "app" and cmd == "show":
    print("dscp-prio " + " ".join(f"{d}:{p}" for d, p in sorted((int(d), p) for d, p in st["app"].items())))
elif obj == "app" and cmd in ("add", "replace"):
    for item in args[args.index("dscp-prio") + 1:]:
        d, p = (int(x) for x in item.split(":"))
        setapp(st, d, p)
    save(path, st)
elif obj == "pfc" and cmd == "show":
    print("prio-pfc " + " ".join(f"{i}:{'on' if v else 'off'}" for i, v in enumerate(st["pfc"])))
elif obj == "pfc" and cmd == "set":
    for item in args[args.index("prio-pfc") + 1:]:
        k, v = item.split(":")
        for i in (range(8) if k == "all" else [int(k)]):
            st["pfc"][i] = 1 if v == "on" else 0
    save(path, st)
else:
    print("unsupported by the fake: " + " ".join(args), file=sys.stderr)
    sys.exit(2)
"""

# The configfs group as the kernel shows it: one ports/<n> per port of the RDMA device,
# each with default_roce_mode and default_roce_tos (drivers/infiniband/core/cma_configfs.c).
FAKE_CMA_ROCE_TOS = _FAKE_COMMON + r'''
import getopt, shutil
DEVICE, PORT, MODE = "mlx5_0", "1", "-1"
try:
    opts, _ = getopt.getopt(sys.argv[1:], "d:t:hp:")
except getopt.GetoptError as e:             # bash getopts: message, then carry on
    print(f"{Path(sys.argv[0]).name}: {e.msg}", file=sys.stderr)
    opts = []
for opt, val in opts:
    if opt == "-h":
        print("Set/Show RoCE default ToS of RDMA_CM applications")
        sys.exit(0)
    DEVICE, PORT, MODE = {"-d": (val, PORT, MODE), "-p": (DEVICE, val, MODE), "-t": (DEVICE, PORT, val)}[opt]

config = Path(SYSROOT + "/sys/kernel/config")
if not config.is_dir():
    print("mount: /sys/kernel/config: mount point does not exist.", file=sys.stderr)
    print("Failed to mount configfs")
    sys.exit(1)
if not (config / "rdma_cm").is_dir():
    print("Module rdma_cm is not loaded or does not support configfs")
    sys.exit(1)
group = config / "rdma_cm" / DEVICE
ibdev = Path(SYSROOT + "/sys/class/infiniband") / DEVICE
path, st = state(DEVICE, {"tos": {}})
need_clean = False
if not group.is_dir():
    if not ibdev.is_dir():                  # make_cma_dev(): -ENODEV without such a device
        print(f"mkdir: cannot create directory '{DEVICE}': No such device", file=sys.stderr)
        print(f"Failed to create configuration for {DEVICE}")
        sys.exit(1)
    for port_dir in sorted((ibdev / "ports").iterdir()):
        p = group / "ports" / port_dir.name
        p.mkdir(parents=True)
        (p / "default_roce_mode").write_text("RoCE v2\n")
        (p / "default_roce_tos").write_text(f"{st['tos'].get(port_dir.name, 0)}\n")
    need_clean = True
port = group / "ports" / PORT
if not port.is_dir():
    print(f"Device {DEVICE} port {PORT} does not exist")
    sys.exit(1)
tos_file = port / "default_roce_tos"
# a group kept in place by someone else shows the kernel value, also one written through it
st["tos"][PORT] = int(tos_file.read_text().strip() or 0)
try:
    mode = int(MODE)
except ValueError:
    print(f"{sys.argv[0]}: line 109: [: {MODE}: integer expression expected", file=sys.stderr)
    mode = -1
if mode >= 0:
    if mode > 255:                          # kstrtou8 in default_roce_tos_store
        print(f"{sys.argv[0]}: line 110: echo: write error: Invalid argument", file=sys.stderr)
    else:
        st["tos"][PORT] = mode
        tos_file.write_text(f"{mode}\n")
save(path, st)
print(tos_file.read_text(), end="")
if need_clean:
    shutil.rmtree(group)
'''

# configfs rdma_cm as the kernel runs it (drivers/infiniband/core/cma_configfs.c;
# Documentation/ABI/testing/configfs-rdma_cm), for a script that does cma_roce_tos' work itself
# with mkdir/echo/cat/rmdir. A plain directory cannot do what configfs does on mkdir and rmdir,
# so `mkdir` and `rmdir` on PATH stand in for the kernel there and hand every other path to the
# real coreutils binaries (the script's own `echo >`/`cat` hit plain files in between):
# - mkdir rdma_cm/<dev>: make_cma_dev() finds the RDMA device or fails ENODEV ("No such device");
#   the new group shows ports/<n>/{default_roce_mode, default_roce_tos} for every port, with the
#   value the kernel keeps in its cma_device (so it survives the group; kept in the same
#   $FAKE_NIC_STATE file as the cma_roce_tos fake's). An existing group: EEXIST. mkdir anywhere
#   else below rdma_cm (inside a group): EPERM, as configfs has no make_group there.
# - rmdir rdma_cm/<dev>: drops the group and its default groups (ports/...); the values written
#   into default_roce_tos while it existed stay in the kernel (written to $FAKE_NIC_STATE here,
#   with one "configfs write <dev> port <p> default_roce_tos=<v>" line in $FAKE_NIC_LOG for each
#   file that was written, as the kernel's store would have run). rmdir of a default group
#   (ports, ports/<n>): EPERM. A non-number would have been refused by kstrtou8 (EINVAL) at
#   write time: the fake keeps the old value then.
FAKE_CONFIGFS_DIR = r"""#!/usr/bin/python3
import json, os, shutil, sys
from pathlib import Path

NAME = Path(sys.argv[0]).name
SYSROOT = os.environ.get("FABRICGEN_SYSROOT", "")

def real():
    here = Path(sys.argv[0]).resolve().parent
    dirs = [d for d in os.environ.get("PATH", "").split(":") if d and Path(d).resolve() != here]
    found = shutil.which(NAME, path=":".join(dirs + ["/usr/bin", "/bin"]))
    os.execv(found, [found] + sys.argv[1:])

args = [a for a in sys.argv[1:] if not a.startswith("-")]
flags = [a for a in sys.argv[1:] if a.startswith("-")]
rdma_cm = Path(SYSROOT + "/sys/kernel/config/rdma_cm") if SYSROOT else None
def below(p):
    try:
        return Path(os.path.abspath(p)).relative_to(rdma_cm).parts
    except ValueError:
        return None
if rdma_cm is None or not args or any(below(a) is None for a in args):
    real()

def kernel(dev):
    path = Path(os.environ["FAKE_NIC_STATE"]) / f"cma_roce_tos-{dev}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path, (json.loads(path.read_text()) if path.exists() else {"tos": {}})

def err(a, why):
    verb = "cannot create directory" if NAME == "mkdir" else "failed to remove"
    print(f"{NAME}: {verb} '{a}': {why}", file=sys.stderr)
    return 1

rc = 0
for a in args:
    parts = below(a)
    group = rdma_cm.joinpath(*parts[:1]) if parts else rdma_cm
    if NAME == "mkdir":
        if not rdma_cm.is_dir():
            rc |= err(a, "No such file or directory")
        elif len(parts) != 1:
            if not ("-p" in flags and Path(a).is_dir()):
                rc |= err(a, "Operation not permitted" if parts else "File exists")
        elif group.is_dir():
            if "-p" not in flags:
                rc |= err(a, "File exists")
        elif not Path(SYSROOT + "/sys/class/infiniband", parts[0]).is_dir():
            rc |= err(a, "No such device")
        else:
            _, st = kernel(parts[0])
            for port in sorted(Path(SYSROOT + "/sys/class/infiniband", parts[0], "ports").iterdir()):
                d = group / "ports" / port.name
                d.mkdir(parents=True)
                (d / "default_roce_mode").write_text("RoCE v2\n")
                tos = d / "default_roce_tos"
                tos.write_text(f"{st['tos'].get(port.name, 0)}\n")
                os.utime(tos, ns=(0, 0))    # written since the group was made: mtime moves
    else:
        if len(parts) != 1:
            rc |= err(a, "Operation not permitted" if parts else "Device or resource busy")
        elif not group.is_dir():
            rc |= err(a, "No such file or directory")
        else:
            path, st = kernel(parts[0])
            for tos in sorted(group.glob("ports/*/default_roce_tos")):
                text = tos.read_text().strip()
                if tos.stat().st_mtime_ns != 0:
                    port = tos.parent.name
                    with open(os.environ["FAKE_NIC_LOG"], "a") as f:
                        f.write(f"configfs write {parts[0]} port {port} default_roce_tos={text}\n")
                    if text.isdigit() and int(text) <= 255:
                        st["tos"][port] = int(text)
            path.write_text(json.dumps(st))
            shutil.rmtree(group)
sys.exit(rc)
"""

FAKE_MLXCONFIG = _FAKE_COMMON + r'''
import re
VALUES = {1: "IB", 2: "ETH", 3: "VPI"}
WIDTH, NAME_WIDTH = 33, 56                  # CONFIG_TABLE_VALUE_WIDTH / _NAME_WIDTH

def die(msg, rc=3):
    print(f"-E- {msg}")
    sys.exit(rc)

args, device, yes, verbose = sys.argv[1:], None, False, False
while args and args[0].startswith("-"):
    flag = args.pop(0)
    if flag in ("-d", "--dev"):
        device = args.pop(0) if args else die("missing device")
    elif flag in ("-y", "--yes"):
        yes = True
    elif flag in ("-e", "--enable_verbosity"):
        verbose = True
    else:
        die(f"Unknown flag {flag}")
if not args:
    die("No command found. For more information please read the help message:")
command, params = args[0], args[1:]
if device is None:
    die("Device is not specified")
pci = device if re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", device) else "0000:" + device
if not Path(SYSROOT + "/sys/bus/pci/devices/" + pci).exists():
    die("Failed to open the device")

def port_of(param):
    """The PCI function whose port the parameter configures: P1 this one, P2 its sibling."""
    if param == "LINK_TYPE_P1":
        return pci
    if param == "LINK_TYPE_P2":
        return pci[:-1] + str(int(pci[-1]) ^ 1)
    return None

def current(param):
    fn = port_of(param)
    ib = Path(SYSROOT + "/sys/bus/pci/devices") / fn / "infiniband" if fn else None
    if ib is None or not ib.is_dir():
        return None
    for dev in sorted(ib.iterdir()):
        layer = (dev / "ports/1/link_layer").read_text().strip()
        return 2 if layer == "Ethernet" else 1
    return None

path, st = state(pci, {"default": {}, "next": {}})
names = params and [p.split("=")[0] for p in params] or ["LINK_TYPE_P1", "LINK_TYPE_P2"]
rows = []
for name in names:
    cur = current(name)
    if cur is None:
        if params:
            die(f"The Device doesn't support {name} parameter")
        continue
    st["default"].setdefault(name, cur)
    rows.append((name, st["default"][name], cur, st["next"].get(name, cur)))
save(path, st)

def value(v):
    return f"{VALUES[v]}({v})"

print(f"\nDevice #1:\n----------\n")
for label, text in (("Device type:", "ConnectX7"), ("Name:", "MCX75310AAS-NEA_Ax"),
                    ("Description:", "NVIDIA ConnectX-7 HHHL Adapter Card; 400GbE / NDR IB (default mode); "
                                     "Single-port OSFP; PCIe 5.0 x16; Crypto Disabled; Secure Boot Enabled"),
                    ("Device:", device)):
    print(f"{label:<20}{text:<20}")
print()
if command in ("q", "query"):
    cols = (["Default", "Current"] if verbose else []) + ["Next Boot"]
    print(f"{'Configurations:':<{NAME_WIDTH}}" + " ".join(f"{c:<{WIDTH}}" for c in cols))
    starred = False
    for name, default, cur, nxt in rows:
        star = "*" if verbose and (nxt != default or nxt != cur) else " "
        starred |= star == "*"
        vals = ([default, cur] if verbose else []) + [nxt]
        print(f"{star}       {name:<48}" + " ".join(f"{value(v):<{WIDTH}}" for v in vals))
    if starred:
        print("The '*' shows parameters with next value different from default/current value.")
    sys.exit(0)
if command not in ("s", "set"):
    die(f"Unknown command {command}")
new = {}
for item in params:
    name, _, raw = item.partition("=")
    by_name = {v: k for k, v in VALUES.items()}
    if raw.isdigit() and int(raw) in VALUES:
        new[name] = int(raw)
    elif raw.upper() in by_name:
        new[name] = by_name[raw.upper()]
    else:
        die(f"Bad value {raw} for {name}")
print(f"{'Configurations:':<{NAME_WIDTH}}{'Next Boot':<{WIDTH}} {'New':<{WIDTH}}")
for name, default, cur, nxt in rows:
    print(f"        {name:<48}{value(nxt):<{WIDTH}} {value(new[name]):<{WIDTH}}")
print("\n Apply new Configuration? (y/n) [n] : ", end="")
if yes:
    print("y")
else:
    answer = sys.stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        print("-E- Aborted by user.")
        sys.exit(2)                         # MLX_CFG_ABORTED
print("Applying... Done!")
st["next"].update(new)
save(path, st)
print("-I- Please reboot machine to load new configurations.")
'''

# Readers that change nothing: the same helpers without the call log.
_FAKE_READER = _FAKE_COMMON.replace("\nlog()\n", "\n")

FAKE_SCONTROL = _FAKE_READER + r'''
import fcntl, pwd, time
# Slurm's scontrol as a node's health check uses it: `show node NAME` (a read, not logged) and
# `update NodeName=NAME State=DRAIN Reason=TEXT | State=RESUME` (logged). The nodes live in
# $FAKE_SLURM_STATE, the file tests/fake_scontrol.py keeps for the controller (the same slurmctld),
# else in $FAKE_NIC_STATE/scontrol-nodes.json; a node not in it is IDLE with no reason. As slurmctld
# does (node_mgr.c update_node), a drain records the caller's user and the time, replacing those of
# a drain already there; `show` prints them after the reason: "Reason=TEXT [user@time]".
args = sys.argv[1:]
path = Path(os.environ.get("FAKE_SLURM_STATE") or Path(os.environ["FAKE_NIC_STATE"]) / "scontrol-nodes.json")
path.parent.mkdir(parents=True, exist_ok=True)
lock = open(str(path) + ".lock", "a")
fcntl.flock(lock, fcntl.LOCK_EX)
nodes = json.loads(path.read_text()) if path.exists() else {}
if args[:2] == ["show", "node"] and len(args) == 3:
    n = {"jobs": 0, "drain": False, "reason": "", "by": "", "at": "", **nodes.get(args[2], {})}
    base = "MIXED" if n["jobs"] != 0 else "IDLE"
    print(f"NodeName={args[2]} Arch=x86_64 CoresPerSocket=56\n   CPUAlloc={64 if n['jobs'] else 0} CPUTot=224\n"
          f"   State={base}{'+DRAIN' if n['drain'] else ''} ThreadsPerCore=2 TmpDisk=0 Weight=1\n   Partitions=gpu\n"
          + (f"   Reason={n['reason']} [{n['by']}@{n['at']}]\n" if n["reason"] else ""))
    sys.exit(0)
log()
if os.environ.get("FAKE_SCONTROL_FAIL"):
    print("slurm_update error: Invalid node name specified", file=sys.stderr)
    sys.exit(1)
if args[:1] == ["update"]:
    kv = dict(a.split("=", 1) for a in args[1:] if "=" in a)
    n = nodes.setdefault(kv.get("NodeName", ""), {"jobs": 0, "drain": False, "reason": "", "by": "", "at": ""})
    if kv.get("State", "").upper() == "DRAIN":
        n.update(drain=True, reason=kv.get("Reason", ""), by=pwd.getpwuid(os.getuid()).pw_name,
                 at=time.strftime("%Y-%m-%dT%H:%M:%S"))
    elif kv.get("State", "").upper() == "RESUME":
        n.update(drain=False, reason="", by="", at="")
    tmp = Path(str(path) + ".host")
    tmp.write_text(json.dumps(nodes))
    os.replace(tmp, path)
'''


FAKE_IBV_DEVINFO = _FAKE_READER + r'''
args = sys.argv[1:]
dev = args[args.index("-d") + 1] if "-d" in args else None
port = args[args.index("-i") + 1] if "-i" in args else "1"
ib = Path(SYSROOT + "/sys/class/infiniband")
if dev is None or not (ib / dev).is_dir():
    print(f"IB device '{dev}' wasn't found", file=sys.stderr)
    sys.exit(255)
pdir = ib / dev / "ports" / port
if not pdir.is_dir():
    print(f"Failed to query port {port} props", file=sys.stderr)
    sys.exit(255)
num = int((pdir / "state").read_text().split(":")[0])
names = {1: "PORT_DOWN", 2: "PORT_INIT", 3: "PORT_ARMED", 4: "PORT_ACTIVE", 5: "PORT_ACTIVE_DEFER"}
layer = (pdir / "link_layer").read_text().strip()
active = 4096
nets = list((ib / dev / "device/net").glob("*/mtu")) if (ib / dev / "device/net").is_dir() else []
if layer == "Ethernet" and nets:
    room = int(nets[0].read_text()) - (40 + 8 + 12 + 4 + 28 + 4)
    active = next((m for m in (4096, 2048, 1024, 512, 256) if room >= m), 256)
enum = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
print(f"hca_id:\t{dev}")
print("\ttransport:\t\t\tInfiniBand (0)")
# ibv_query_device's fw_ver is the driver's, the string sysfs fw_ver shows
fw = (ib / dev / "fw_ver").read_text().strip() if (ib / dev / "fw_ver").is_file() else "28.39.1002"
print(f"\tfw_ver:\t\t\t\t{fw}")
print("\tvendor_id:\t\t\t0x02c9")
print("\tvendor_part_id:\t\t\t4129")
print("\tphys_port_cnt:\t\t\t1")
print(f"\t\tport:\t{port}")
print(f"\t\t\tstate:\t\t\t{names.get(num, 'PORT_NOP')} ({num})")
print("\t\t\tmax_mtu:\t\t4096 (5)")
print(f"\t\t\tactive_mtu:\t\t{active} ({enum[active]})")
print("\t\t\tsm_lid:\t\t\t0")
print("\t\t\tport_lid:\t\t0")
print("\t\t\tport_lmc:\t\t0x00")
print(f"\t\t\tlink_layer:\t\t{layer}")
print()
'''

FAKE_ETHTOOL = _FAKE_READER + r'''
args = sys.argv[1:]
if len(args) != 2 or args[0] != "-S":
    print("unsupported by the fake: ethtool " + " ".join(args), file=sys.stderr)
    sys.exit(2)
ifc = args[1]
if not Path(SYSROOT + "/sys/class/net/" + ifc).exists():
    print(f"netlink error: no device matches name ({ifc})", file=sys.stderr)
    sys.exit(1)
base = Path(os.environ["FAKE_NIC_STATE"])
qos = base / f"mlnx_qos-{ifc}.json"
dcb = base / f"dcb-{ifc}.json"
pfc = [0] * 8
if qos.exists():
    pfc = [int(v) for v in json.loads(qos.read_text())["pfc"]]
elif dcb.exists():
    pfc = [1 if v == "on" else 0 for v in json.loads(dcb.read_text())["pfc"]]
counts = base / f"ethtool-{ifc}.json"
counts = json.loads(counts.read_text()) if counts.exists() else {}
print("NIC statistics:")
for name in ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "rx_pause_ctrl_phy", "tx_pause_ctrl_phy"):
    print(f"     {name}: {counts.get(name, 0)}")
for prio in range(8):
    if pfc[prio]:
        for name in (f"rx_prio{prio}_pause", f"rx_prio{prio}_pause_duration",
                     f"tx_prio{prio}_pause", f"tx_prio{prio}_pause_duration", f"rx_prio{prio}_pause_transition"):
            print(f"     {name}: {counts.get(name, 0)}")
'''

FAKE_TOOLS = {"mlnx_qos": FAKE_MLNX_QOS, "dcb": FAKE_DCB, "cma_roce_tos": FAKE_CMA_ROCE_TOS,
              "mlxconfig": FAKE_MLXCONFIG, "scontrol": FAKE_SCONTROL,
              "mkdir": FAKE_CONFIGFS_DIR, "rmdir": FAKE_CONFIGFS_DIR,
              "ibv_devinfo": FAKE_IBV_DEVINFO, "ethtool": FAKE_ETHTOOL}


def write_fake_nic_tools(bin_dir: Path, *, without: Sequence[str] = ()) -> Path:
    """mlnx_qos, dcb, cma_roce_tos, mlxconfig, scontrol, ibv_devinfo and ethtool fakes in bin_dir
    (put it first on PATH), and the configfs stand-ins mkdir/rmdir; `without` leaves tools out
    (("cma_roce_tos",): an inbox host without mlnx-tools)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, text in FAKE_TOOLS.items():
        if name in without:
            continue
        path = bin_dir / name
        path.write_text(text)
        path.chmod(0o755)
    return bin_dir


GID_TABLE_LEN = 16      # a real ConnectX port has 256 entries; the unused tail looks the same
ZERO_GID = ":".join(["0000"] * 8)
ROCE_V1, ROCE_V2 = "IB/RoCE v1", "RoCE v2"


def write_fake_gids(root: Path, rdma: str, netdev: str, nic: int, addresses: Sequence[str],
                    types: tuple[str, ...] = (ROCE_V1, ROCE_V2)) -> None:
    """The RoCE GID table of port 1 of `rdma` as a ConnectX port shows it.

    The kernel fills 0 and 1 with the default GIDs (fe80:: from the MAC, RoCE v1 and
    v2), then one v1/v2 pair per address of the netdev in the order they were added:
    2 and 3 for the first one, IPv4 as ::ffff:a.b.c.d. gids/N is printed with %pI6,
    types/N reads "IB/RoCE v1" or "RoCE v2", ndevs/N the netdev; an unused entry reads
    as zeros and its type and ndev cannot be read (EINVAL), modelled by leaving them
    out (drivers/infiniband/core/sysfs.c, roce_gid_mgmt.c; show_gids in mlnx-tools
    reads the same files). `types` ("IB/RoCE v1",) is a port that runs RoCE v1 only."""
    port = root / "sys/class/infiniband" / rdma / "ports/1"
    for sub in ("gids", "gid_attrs/types", "gid_attrs/ndevs"):
        d = port / sub
        if d.is_dir():
            shutil.rmtree(d)
        d.mkdir(parents=True)
    gids = [f"fe80::e42:a1ff:fe00:{nic:x}"] + list(addresses)     # MAC 0c:42:a1:00:00:<nic> as EUI-64
    entries = []
    for address in gids:
        ip = ipaddress.ip_address(address)
        mapped = ipaddress.IPv6Address(b"\0" * 10 + b"\xff\xff" + ip.packed) if ip.version == 4 else ip
        entries += [(t, mapped.exploded) for t in types]
    for n in range(GID_TABLE_LEN):
        if n < len(entries):
            (port / "gid_attrs/types" / str(n)).write_text(entries[n][0] + "\n")
            (port / "gid_attrs/ndevs" / str(n)).write_text(netdev + "\n")
            (port / "gids" / str(n)).write_text(entries[n][1] + "\n")
        else:
            (port / "gids" / str(n)).write_text(ZERO_GID + "\n")


# ib_port_state / ib_port_phys_state as state_show and phys_state_show print them
# (drivers/infiniband/core/sysfs.c). An mlx5 RoCE port whose netdev is down or has no
# carrier reports DOWN and Disabled (mlx5_query_port_roce).
PORT_STATES = {"DOWN": ("1: DOWN", "3: Disabled"), "INIT": ("2: INIT", "5: LinkUp"),
               "ARMED": ("3: ARMED", "5: LinkUp"), "ACTIVE": ("4: ACTIVE", "5: LinkUp")}
# Gb/s -> (active width, speed) as rate_show prints them: "%d Gb/sec (%dX%s)"; an Ethernet
# port's speed is translated to IB width and lane speed by mlx5_query_port_roce.
RATES = {400: (4, "NDR"), 200: (4, "HDR"), 100: (4, "EDR"), 50: (1, "HDR"), 40: (4, "QDR"),
         25: (1, "EDR"), 10: (1, "QDR")}
# ports/<p>/hw_counters of an mlx5 RoCE port (drivers/infiniband/hw/mlx5/counters.c; a few of
# its many files): each reads as a decimal count
HW_COUNTERS = ("duplicate_request", "local_ack_timeout_err", "np_cnp_sent", "np_ecn_marked_roce_packets",
               "out_of_sequence", "packet_seq_err", "rnr_nak_retry_err", "rp_cnp_handled", "rp_cnp_ignored")
GPUDIRECT = ("nvidia-peermem", "dmabuf", "none")
FW_VER = "28.39.1002"           # a ConnectX-7 firmware as sysfs fw_ver and ibv_devinfo print it
PCIE_MAX = (16, "32.0 GT/s PCIe")   # ConnectX-7 in a Gen5 x16 slot
NVIDIA_VERSION = {      # /proc/driver/nvidia/version, first line, per kernel module flavour
    "nvidia-peermem": "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024",
    "dmabuf": "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  "
              "(dvs-builder@U16-T02-35-3)  Tue Mar  5 22:18:27 UTC 2024",
}


def _per_nic(value, netdev: str, default):
    if isinstance(value, Mapping):
        return value.get(netdev, default)
    return value


def _symlink(link: Path, target: Path) -> None:
    """A relative link ending in the target's name, as sysfs makes them (device -> ../../../0000:08:00.0)."""
    link.parent.mkdir(parents=True, exist_ok=True)
    if not link.is_symlink():
        link.symlink_to(os.path.join(os.path.relpath(target.parent, link.parent), target.name))


def _rate_text(rate: int | str) -> str:
    if isinstance(rate, str):
        return rate
    width, speed = RATES[rate]
    return f"{rate} Gb/sec ({width}X {speed})"


def _fresh_qos_files(root: Path, netdev: str, pci: str) -> None:
    """The QoS files as a freshly loaded driver shows them (also what reset_nic_qos restores)."""
    ecn = root / "sys/class/net" / netdev / "ecn"
    if ecn.is_dir():
        for point in ("roce_np", "roce_rp"):
            for prio in range(8):
                (ecn / point / "enable" / str(prio)).write_text("0\n")
        (ecn / "roce_np/cnp_dscp").write_text("0\n")
        (ecn / "roce_np/cnp_802p_prio").write_text("0\n")
    cc = root / "sys/kernel/debug/mlx5" / pci / "cc_params"
    if cc.is_dir():
        (cc / "np_cnp_dscp").write_text("0\n")


def write_fake_sysfs(root: Path, netdevs: Sequence[str], *, ofed: bool = True,
                     ecn_prios: tuple[int, ...] = (3,), rdma: Sequence[str] | None = None,
                     pci: Sequence[str] | None = None,
                     link_layer: str | Mapping[str, str] = "Ethernet",
                     state: str | Mapping[str, str] = "ACTIVE",
                     rate_gbps: int | str | Mapping[str, int | str] = 400,
                     gpudirect: str | bool = "nvidia-peermem", rdma_cm: bool = True,
                     addresses: Mapping[str, Sequence[str]] | None = None, lockdown: str = "none",
                     mtu: int | Mapping[str, int] = 4200, fw_ver: str | Mapping[str, str] = FW_VER,
                     pcie: tuple[int, str] | Mapping[str, tuple[int, str]] = PCIE_MAX,
                     switch_acs: Mapping[str, int] | None = None) -> Path:
    """A /sys tree of ConnectX rail NICs for roce-qos.sh, the playbook and discovery.

    netdevs[i] is PCI function pci[i] (default 0000:<08+i>:00.0) with RDMA device rdma[i]
    (default mlx5_<i>; "rocep8s0f0" is inbox naming for 0000:08:00.0, DGX compute NICs
    are mlx5_0,3,4,5,6,9,10,11). ofed: MLNX_OFED/DOCA driver (ecn/ per netdev and
    tc/1/traffic_class per RDMA device) or inbox (neither; mlx5 debugfs cc_params instead).
    link_layer ("Ethernet" | "InfiniBand"), state ("ACTIVE" | "DOWN" | "INIT" | "ARMED") and
    rate_gbps (400, 200, 100, ... or the sysfs text) apply to every NIC, or per netdev as a
    mapping {netdev: value} (netdevs left out keep the default). gpudirect: "nvidia-peermem"
    (nvidia + nvidia_peermem modules, proprietary driver), "dmabuf" (nvidia module of the
    open kernel driver, no peermem) or "none"; True/False mean nvidia-peermem/none.
    rdma_cm: the rdma_cm module loaded (/sys/kernel/config/rdma_cm). addresses: the IPv4/IPv6
    addresses per netdev the GID table is built from (default one address, 192.0.2.<i+1>;
    write_fake_gids changes it later). lockdown: the kernel lockdown level ("none", "integrity",
    "confidentiality"; /sys/kernel/security/lockdown), see lock_fake_debugfs. mtu: the netdev MTU
    (/sys/class/net/<netdev>/mtu), for every NIC or per netdev. Every port has hw_counters
    (HW_COUNTERS, at 0; bump_hw_counters). `ecn_prios` is accepted for older callers: every
    priority gets its ecn file. fw_ver: the RDMA device's firmware (sysfs fw_ver, as mlx5 prints it),
    for every NIC or per netdev. pcie: the (width, speed) the NIC's PCIe link trained at
    (current_link_width/current_link_speed, drivers/pci/pci-sysfs.c; speed as pci_speed_string()
    prints it), for every NIC or per netdev; the NIC and slot can do PCIE_MAX (max_link_*), a
    ConnectX-7's Gen5 x16. switch_acs {netdev: ACS Control value}: that NIC sits behind a PCIe
    switch (root port 0000:00:0<i+1>.0, upstream port 0000:<1+2i>:00.0, downstream port
    0000:<2+2i>:00.0, each with its config space, pci_config_space) whose downstream port has
    that ACS Control register (0: off; 0x1d: SrcValid, ReqRedir, CmplRedir, UpstreamFwd on, as
    Linux sets it with the IOMMU on). Calling it again on the same root keeps what is there (fw_ver and the
    PCIe link are written again)."""
    if gpudirect is True:
        gpudirect = "nvidia-peermem"
    elif gpudirect is False or gpudirect is None:
        gpudirect = "none"
    if gpudirect not in GPUDIRECT:
        raise ValueError(f"gpudirect must be one of {GPUDIRECT}, not {gpudirect!r}")
    sys_dir = root / "sys"
    for i, ifc in enumerate(netdevs):
        fn = pci[i] if pci else f"0000:{8 + i:02x}:00.0"
        ib_name = rdma[i] if rdma else f"mlx5_{i}"
        dev = sys_dir / "devices/pci0000:00" / fn
        if switch_acs and ifc in switch_acs:
            ports = [(f"0000:00:{i + 1:02x}.0", 4, None), (f"0000:{1 + 2 * i:02x}:00.0", 5, None),
                     (f"0000:{2 + 2 * i:02x}:00.0", 6, switch_acs[ifc])]
            parent = sys_dir / "devices/pci0000:00"
            for bdf, port_type, acs in ports:
                parent = parent / bdf
                parent.mkdir(parents=True, exist_ok=True)
                (parent / "config").write_bytes(pci_config_space(port_type, acs))
            dev = parent / fn
        net = dev / "net" / ifc
        ibdev = dev / "infiniband" / ib_name
        net.mkdir(parents=True, exist_ok=True)
        ibdev.mkdir(parents=True, exist_ok=True)
        _symlink(net / "device", dev)
        _symlink(ibdev / "device", dev)
        _symlink(sys_dir / "class/net" / ifc, net)
        _symlink(sys_dir / "class/infiniband" / ib_name, ibdev)
        _symlink(sys_dir / "bus/pci/devices" / fn, dev)
        (net / "dev_port").write_text("0\n")
        width, speed = _per_nic(pcie, ifc, PCIE_MAX)
        for name, value in (("current_link_width", width), ("current_link_speed", speed),
                            ("max_link_width", PCIE_MAX[0]), ("max_link_speed", PCIE_MAX[1])):
            (dev / name).write_text(f"{value}\n")
        (ibdev / "fw_ver").write_text(f"{_per_nic(fw_ver, ifc, FW_VER)}\n")
        if not (net / "address").exists():     # the MAC the link-local GID below is built from
            (net / "address").write_text(f"0c:42:a1:00:00:{i:02x}\n")
        layer = _per_nic(link_layer, ifc, "Ethernet")
        port_state, phys = PORT_STATES[_per_nic(state, ifc, "ACTIVE")]
        port = ibdev / "ports/1"
        port.mkdir(parents=True, exist_ok=True)
        (port / "link_layer").write_text(layer + "\n")
        (port / "state").write_text(port_state + "\n")
        (port / "phys_state").write_text(phys + "\n")
        (port / "rate").write_text(_rate_text(_per_nic(rate_gbps, ifc, 400)) + "\n")
        if not (net / "mtu").exists():
            (net / "mtu").write_text(f"{_per_nic(mtu, ifc, 4200)}\n")
        if not (port / "hw_counters").is_dir():
            (port / "hw_counters").mkdir()
            for name in HW_COUNTERS:
                (port / "hw_counters" / name).write_text("0\n")
        if layer == "InfiniBand":       # one port GID (subnet prefix + GUID), type printed as IB/RoCE v1
            write_fake_gids(root, ib_name, ifc, i, [], types=(ROCE_V1,))
        elif not (port / "gids").is_dir():
            ips = addresses[ifc] if addresses and ifc in addresses else [f"192.0.2.{i + 1}"]
            write_fake_gids(root, ib_name, ifc, i, ips)
        if ofed:
            for point in ("roce_np", "roce_rp"):
                (net / "ecn" / point / "enable").mkdir(parents=True, exist_ok=True)
            tc = ibdev / "tc/1/traffic_class"
            if not tc.exists():
                tc.parent.mkdir(parents=True, exist_ok=True)
                tc.write_text("")           # unset until written (the driver starts at -1)
            if not (net / "ecn/roce_np/cnp_dscp").exists():
                _fresh_qos_files(root, ifc, fn)
        else:
            cc = sys_dir / "kernel/debug/mlx5" / fn / "cc_params"
            if not cc.is_dir():
                cc.mkdir(parents=True)
                _fresh_qos_files(root, ifc, fn)
    if rdma_cm:
        (sys_dir / "kernel/config/rdma_cm").mkdir(parents=True, exist_ok=True)
    if lockdown not in LOCKDOWN_LEVELS:
        raise ValueError(f"lockdown must be one of {LOCKDOWN_LEVELS}, not {lockdown!r}")
    # security/lockdown/lockdown.c lockdown_read(): every level, the current one in brackets
    security = sys_dir / "kernel/security"
    security.mkdir(parents=True, exist_ok=True)
    (security / "lockdown").write_text(" ".join(f"[{lv}]" if lv == lockdown else lv for lv in LOCKDOWN_LEVELS) + "\n")
    if gpudirect != "none":
        (sys_dir / "module/nvidia").mkdir(parents=True, exist_ok=True)
        (sys_dir / "module/nvidia/initstate").write_text("live\n")
        version = root / "proc/driver/nvidia/version"
        version.parent.mkdir(parents=True, exist_ok=True)
        version.write_text(NVIDIA_VERSION[gpudirect] + "\nGCC version:  gcc version 12.3.0\n")
    if gpudirect == "nvidia-peermem":
        (sys_dir / "module/nvidia_peermem").mkdir(parents=True, exist_ok=True)
        (sys_dir / "module/nvidia_peermem/initstate").write_text("live\n")
    return root


def pci_config_space(port_type: int, acs: int | None) -> bytes:
    """4096 bytes of a PCIe bridge's config space as root reads sysfs `config` (PCIe Base
    Specification): a PCIe switch or root port (header type 1, a bridge) whose capability list (from
    0x34) holds the PCI Express capability (ID 0x10, v2) with Device/Port Type PORT_TYPE (4 root
    port, 5 switch upstream, 6 switch downstream) in bits 7:4 of its flags, and, when ACS is not
    None, the ACS extended capability at 0x100 (ID 0x000d, v1, last in the list) with ACS
    Capability 0x007f and ACS Control ACS."""
    b = bytearray(4096)
    b[0:4] = bytes((0xb5, 0x10, 0x87, 0x87))     # vendor 0x10b5 (a PCIe switch vendor), device
    b[0x06] = 0x10                                  # status: capability list present
    b[0x0e] = 0x01                                  # header type 1 (bridge)
    b[0x34] = 0x40
    b[0x40:0x44] = bytes((0x10, 0x00, (port_type << 4) | 0x2, 0x00))
    if acs is not None:
        b[0x100:0x104] = (0x000d | (1 << 16)).to_bytes(4, "little")
        b[0x104:0x106] = (0x007f).to_bytes(2, "little")
        b[0x106:0x108] = acs.to_bytes(2, "little")
    return bytes(b)


LOCKDOWN_LEVELS = ("none", "integrity", "confidentiality")

# MLNX_OFED/DOCA mlx5_ib tc/<port>/traffic_class (mlnx-ofa_kernel drivers/infiniband/hw/mlx5/
# main.c): traffic_class_store() takes a number (kstrtoint, 0..255) as the port's global class or
# a rule "[src_ip=...,][dst_ip=...,]tclass=N"; traffic_class_show() prints "Global tclass=<n>\n"
# once a global class is set (nothing while it is -1, as after every driver load), then the rules.
_TCLASS_NUMBER = re.compile(r"^\s*(-?(?:0x[0-9a-fA-F]+|[0-9]+))\s*$")


def show_fake_sysfs(root: Path) -> None:
    """What the driver's show functions print for what was stored since: a plain file cannot
    turn a write into the driver's output, so tests call this after every run of a script (a
    script that wrote N and read it back in the same run would see N; roce-qos.sh does not).
    traffic_class: a stored number becomes "Global tclass=N" (a negative one: unset, empty)."""
    for tc in sorted((root / "sys/class/infiniband").glob("*/tc/*/traffic_class")):
        m = _TCLASS_NUMBER.match(tc.read_text())
        if m:
            value = int(m.group(1), 0)
            tc.write_text(f"Global tclass={value}\n" if 0 <= value <= 0xFF else "")


def qp_traffic_class(root: Path, rdma: str, requested: int, port: int = 1) -> int:
    """The traffic class a RoCE QP on `rdma` sends with when its owner asked for `requested`
    (NCCL: NCCL_IB_TC): OFED/DOCA's global class, when set, replaces it (tclass_get_tclass_locked;
    writing traffic_class also rewrites live QPs, tclass_update_qps); else the QP's own."""
    tc = root / "sys/class/infiniband" / rdma / "tc" / str(port) / "traffic_class"
    text = tc.read_text() if tc.exists() else ""
    m = re.match(r"^Global tclass=([0-9]+)$", text.splitlines()[0]) if text.strip() else None
    return int(m.group(1)) if m else requested


def lock_fake_debugfs(root: Path) -> bool:
    """Make the mlx5 debugfs files refuse writes with EPERM, as debugfs does under kernel lockdown
    (fs/debugfs/file.c debugfs_locked_down(): LOCKDOWN_DEBUGFS, an integrity reason, refuses
    every open of a file with a write bit; mlx5 creates cc_params/* 0600, drivers/infiniband/hw/
    mlx5/cong.c). Done with the immutable attribute (chattr +i: writes fail EPERM, for root too);
    reads still work here, where the kernel would refuse them too. False when this machine cannot
    (no chattr, no CAP_LINUX_IMMUTABLE, a filesystem without it): the caller skips then.
    unlock_fake_debugfs undoes it (pytest cannot remove an immutable file)."""
    files = sorted(str(f) for f in (root / "sys/kernel/debug/mlx5").glob("*/cc_params/*"))
    if not files or shutil.which("chattr") is None:
        return False
    if subprocess.run(["chattr", "+i", *files], capture_output=True).returncode != 0:
        return False
    try:
        Path(files[0]).write_text("0\n")
    except PermissionError:
        return True
    unlock_fake_debugfs(root)
    return False


def unlock_fake_debugfs(root: Path) -> None:
    files = sorted(str(f) for f in (root / "sys/kernel/debug/mlx5").glob("*/cc_params/*"))
    if files and shutil.which("chattr"):
        subprocess.run(["chattr", "-i", *files], capture_output=True)


def bump_hw_counters(root: Path, rdma: str, **deltas: int) -> None:
    """Traffic on port 1 of `rdma`: add each delta to its hw_counters file (np_cnp_sent=500, ...)."""
    counters = root / "sys/class/infiniband" / rdma / "ports/1/hw_counters"
    for name, delta in deltas.items():
        f = counters / name
        f.write_text(f"{int(f.read_text()) + delta}\n")


def add_pause_frames(state_dir: Path, netdev: str, prio: int, *, rx: int = 0, tx: int = 0) -> None:
    """PFC pause frames on `prio` of `netdev`, as `ethtool -S` counts them (rx: the leaf paused us)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / f"ethtool-{netdev}.json"
    counts = json.loads(path.read_text()) if path.exists() else {}
    for direction, n in (("rx", rx), ("tx", tx)):
        key = f"{direction}_prio{prio}_pause"
        counts[key] = counts.get(key, 0) + n
    path.write_text(json.dumps(counts))


def _nic_of(root: Path, netdev: str) -> tuple[str, list[str]]:
    """(PCI function, RDMA device names) of a netdev in the fake tree."""
    dev = (root / "sys/class/net" / netdev / "device").resolve()
    ib = dev / "infiniband"
    return dev.name, sorted(p.name for p in ib.iterdir()) if ib.is_dir() else []


def reset_nic_qos(root: Path, state_dir: Path, netdev: str) -> None:
    """What a driver reload (or mlxfwreset, or mlx5 health recovery) does to a NIC's QoS.

    mlx5_core comes back with PCP trust, PFC off, the default DSCP map and ECN as loaded;
    mlx5_ib re-registers the RDMA device, so the rdma_cm ToS is 0 again (the cma_device
    holding it is freed and made anew) and OFED's traffic class is unset again. The GID
    table is rebuilt from the netdev's addresses, so it is left as it is."""
    fn, ib_names = _nic_of(root, netdev)
    for tool in ("mlnx_qos", "dcb"):
        (state_dir / f"{tool}-{netdev}.json").unlink(missing_ok=True)
    _fresh_qos_files(root, netdev, fn)
    for ib_name in ib_names:
        (state_dir / f"cma_roce_tos-{ib_name}.json").unlink(missing_ok=True)
        group = root / "sys/kernel/config/rdma_cm" / ib_name
        if group.is_dir():
            for tos in group.glob("ports/*/default_roce_tos"):
                tos.write_text("0\n")
        tc = root / "sys/class/infiniband" / ib_name / "tc/1/traffic_class"
        if tc.exists():
            tc.write_text("")


def remove_rdma_device(root: Path, rdma: str) -> None:
    """No RDMA device `rdma` any more, as with mlx5_ib not loaded: its class link and its
    directory under the PCI function go; the netdev stays."""
    link = root / "sys/class/infiniband" / rdma
    target = link.resolve()
    link.unlink()
    shutil.rmtree(target)
    if target.parent.name == "infiniband" and not any(target.parent.iterdir()):
        target.parent.rmdir()


def reregister_rdma_device(root: Path, state_dir: Path, rdma: str) -> None:
    """mlx5 suspending and resuming the Ethernet function with the netdev still registered (a
    firmware reset recovered in place, `devlink dev reload`; en_main.c mlx5e_suspend/mlx5e_resume):
    mlx5_ib unregisters the RDMA device and registers it again. The netdev, its DCB state (trust,
    PFC, DSCP map) and ECN stay; the cma_device holding the rdma_cm ToS is freed and made anew (ToS
    0, drivers/infiniband/core/cma.c), and OFED's traffic class starts unset again (DEVICE_STATE.md,
    GPU servers at fleet scale). Only the RDMA half of reset_nic_qos, as that one treats it."""
    (state_dir / f"cma_roce_tos-{rdma}.json").unlink(missing_ok=True)
    group = root / "sys/kernel/config/rdma_cm" / rdma
    for tos in group.glob("ports/*/default_roce_tos"):
        tos.write_text("0\n")
    tc = root / "sys/class/infiniband" / rdma / "tc/1/traffic_class"
    if tc.exists():
        tc.write_text("")


def firmware_reset(root: Path, state_dir: Path, pci: str) -> None:
    """mlxfwreset (or a reboot) of the adapter at `pci`: mlxconfig values set since become
    current (a LINK_TYPE_P1/P2 change flips the port's link_layer) and, as after any reset,
    the NIC's QoS is back at the driver's defaults (reset_nic_qos)."""
    path = state_dir / f"mlxconfig-{pci}.json"
    if path.exists():
        st = json.loads(path.read_text())
        for name, value in st.get("next", {}).items():
            fn = pci if name == "LINK_TYPE_P1" else pci[:-1] + str(int(pci[-1]) ^ 1)
            for layer in (root / "sys/bus/pci/devices" / fn / "infiniband").glob("*/ports/1/link_layer"):
                layer.write_text(("Ethernet" if value == 2 else "InfiniBand") + "\n")
        st["next"] = {}
        path.write_text(json.dumps(st))
    for net in (root / "sys/bus/pci/devices" / pci / "net").glob("*"):
        reset_nic_qos(root, state_dir, net.name)


__all__ = ["FAKE_TOOLS", "GID_TABLE_LEN", "HW_COUNTERS", "LOCKDOWN_LEVELS", "ROCE_V1", "ROCE_V2", "ZERO_GID",
           "add_pause_frames", "bump_hw_counters", "firmware_reset",
           "lock_fake_debugfs", "unlock_fake_debugfs", "pci_config_space", "qp_traffic_class", "show_fake_sysfs",
           "remove_rdma_device", "reregister_rdma_device", "reset_nic_qos", "write_fake_gids", "write_fake_nic_tools",
           "write_fake_sysfs"]
