"""A fake Slurm `scontrol` for the controller side of the host rollout (deploy.hosts.scheduler: slurm).

It keeps every node in one JSON state file ($FAKE_SLURM_STATE) and logs each call ($FAKE_SLURM_LOG).
What it reproduces, from Slurm's scontrol(1), sinfo(1) "NODE STATE CODES" and the layout of
`scontrol show node` (slurm_sprint_node_table in src/api/node_info.c):

- `scontrol show node NAME` prints the node block, one `Key=Value` group per line, with
  `State=<BASE>[+FLAG...]`, `CPUAlloc=`, and `Reason=<text> [<user>@<time>]` when a reason is set.
  BASE is MIXED while jobs run on part of the CPUs, IDLE once none runs. Each `show` call is one
  step of time: a node with `jobs` > 0 finishes one step of its jobs per call (0 steps: jobs that
  never end, "jobs": -1). Unknown node: "Node NAME not found", exit 1.
- `scontrol update NodeName=NAME State=DRAIN Reason=TEXT` adds the DRAIN flag and the reason
  (running jobs go on: MIXED+DRAIN until they end, then IDLE+DRAIN); State=DRAIN without a
  Reason is refused as the real one refuses it ("You must specify a reason when DOWNING or
  DRAINING a node. Request denied"). `State=RESUME` clears DRAIN and the reason. Every drain
  records who asked and when, as slurmctld does (node_mgr.c update_node: reason_uid is the
  caller's uid, reason_time now): a drain over a drain replaces reason, user and time alike,
  and scontrol has no way to give another user or time.
- $FAKE_SLURM_WATCH, a path with {node} in it: each `show` also logs whether that path exists
  then, so a test sees what the host looked like while the node still ran jobs.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

FAKE_SCONTROL = r'''#!/usr/bin/env python3
import fcntl, json, os, pwd, sys, time
state_path = os.environ["FAKE_SLURM_STATE"]
# slurmctld serialises every request; hosts in one Ansible batch call scontrol at the same moment,
# so the whole read-modify-write holds one lock (released when the process exits).
_lock = open(state_path + ".lock", "a")
fcntl.flock(_lock, fcntl.LOCK_EX)
with open(state_path) as fh:
    nodes = json.load(fh)
argv = sys.argv[1:]
def save():
    with open(state_path + ".tmp", "w") as fh:
        json.dump(nodes, fh)
    os.replace(state_path + ".tmp", state_path)
def log(line):
    with open(os.environ["FAKE_SLURM_LOG"], "a") as fh:
        fh.write(line + "\n")
def state(n):
    base = "MIXED" if n["jobs"] != 0 else "IDLE"
    return base + ("+DRAIN" if n["drain"] else "")
if argv[:2] == ["show", "node"] and len(argv) == 3:
    name = argv[2]
    n = nodes.get(name)
    if n is None:
        print(f"Node {name} not found", file=sys.stderr)
        sys.exit(1)
    if n["jobs"] > 0:
        n["jobs"] -= 1
        save()
    watch = os.environ.get("FAKE_SLURM_WATCH")
    seen = f" watched={os.path.exists(watch.replace('{node}', name))}" if watch else ""
    log(f"show {name} {state(n)}{seen}")
    alloc = 64 if n["jobs"] != 0 else 0
    print(f"NodeName={name} Arch=x86_64 CoresPerSocket=56\n"
          f"   CPUAlloc={alloc} CPUEfctv=224 CPUTot=224 CPULoad=1.00\n"
          f"   AvailableFeatures=(null)\n   ActiveFeatures=(null)\n   Gres=gpu:8\n"
          f"   NodeAddr={name} NodeHostName={name} Version=23.11.4\n"
          f"   OS=Linux 6.8.0 #1 SMP\n"
          f"   RealMemory=2000000 AllocMem=0 FreeMem=1900000 Sockets=2 Boards=1\n"
          f"   State={state(n)} ThreadsPerCore=2 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
          f"   Partitions=gpu\n   BootTime=2026-11-01T00:00:00 SlurmdStartTime=2026-11-01T00:01:00\n"
          f"   LastBusyTime=2026-12-04T12:00:00 ResumeAfterTime=None\n"
          f"   CfgTRES=cpu=224,mem=2000000M,billing=224,gres/gpu=8\n"
          f"   AllocTRES=cpu={alloc}\n   CapWatts=n/a\n   CurrentWatts=0 AveWatts=0\n"
          + (f"   Reason={n['reason']} [{n['by']}@{n['at']}]\n" if n["reason"] else ""))
    sys.exit(0)
if argv[:1] == ["update"]:
    args = dict(a.split("=", 1) for a in argv[1:] if "=" in a)
    name = args.get("NodeName") or args.get("nodename")
    n = nodes.get(name)
    if n is None:
        print(f"Invalid node name specified", file=sys.stderr)
        sys.exit(1)
    want = args.get("State", "").upper()
    log("update " + " ".join(argv[1:]))
    if want == "DRAIN":
        if not args.get("Reason"):
            print("You must specify a reason when DOWNING or DRAINING a node. Request denied", file=sys.stderr)
            sys.exit(1)
        n.update(drain=True, reason=args["Reason"], by=pwd.getpwuid(os.getuid()).pw_name,
                 at=time.strftime("%Y-%m-%dT%H:%M:%S"))
    elif want == "RESUME":
        n.update(drain=False, reason="", by="", at="")
    else:
        print(f"fake scontrol: State={want} not modelled", file=sys.stderr)
        sys.exit(1)
    save()
    sys.exit(0)
print("fake scontrol: " + " ".join(argv) + " not modelled", file=sys.stderr)
sys.exit(1)
'''


def write_fake_scontrol(bin_dir: Path) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / "scontrol"
    path.write_text(FAKE_SCONTROL)
    path.chmod(0o755)
    return bin_dir


def set_nodes(state_file: Path, nodes: dict[str, dict]) -> None:
    """nodes: name -> {"jobs": steps until its jobs end (0 none, -1 never), "drain": bool, "reason": str,
    "by": user, "at": time of the reason}. Under the fakes' lock: a test may change a node mid-run."""
    with open(f"{state_file}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = json.loads(state_file.read_text()) if state_file.exists() else {}
        for name, node in nodes.items():
            data[name] = {"jobs": 0, "drain": False, "reason": "", "by": "admin", "at": "2026-12-04T12:00:00",
                          **data.get(name, {}), **node}
        tmp = state_file.with_name(state_file.name + ".set")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, state_file)


def node(state_file: Path, name: str) -> dict:
    return json.loads(state_file.read_text())[name]


# A fake `kubectl` for deploy.hosts.scheduler: kubernetes (kubectl reference: drain, uncordon, get).
# `kubectl drain NODE ... [--timeout=DURATION]` cordons first (spec.unschedulable: true), then evicts
# the pods and returns once they are gone: here it takes the node's "evict" seconds (-1: pods that
# never go, e.g. a PodDisruptionBudget that allows no eviction). --timeout (a Go duration, default 0:
# no bound) ends the wait as kubectl does: exit 1, "error: timed out waiting for the condition" on
# stderr after "There are pending nodes to be drained:", the node left cordoned. While it evicts, the
# node's state holds the process id ("evicting"); `kubectl uncordon NODE` clears the cordon and logs
# "evicting=True" when a drain of that node is still running then, which a real cluster would let
# happen and a test must catch. `kubectl get node NODE -o jsonpath={.spec.unschedulable}` prints
# "true" for a cordoned node and nothing for a schedulable one (the field is then absent).
FAKE_KUBECTL = r'''#!/usr/bin/env python3
import fcntl, json, os, re, sys, time
state_path = os.environ["FAKE_SLURM_STATE"]
# The API server serialises updates; the lock keeps concurrent calls from losing one another's.
_lock = open(state_path + ".lock", "a")
def load():
    fcntl.flock(_lock, fcntl.LOCK_EX)
    with open(state_path) as fh:
        return json.load(fh)
def save(nodes):
    with open(state_path + ".tmp", "w") as fh:
        json.dump(nodes, fh)
    os.replace(state_path + ".tmp", state_path)
    fcntl.flock(_lock, fcntl.LOCK_UN)
def log(line):
    with open(os.environ["FAKE_SLURM_LOG"], "a") as fh:
        fh.write(line + "\n")
def alive(pid):
    # a killed kubectl whose parent died first is a zombie until PID 1 reaps it: signal 0 still
    # finds it, but it sends the API server nothing (proc(5): state Z in /proc/PID/stat)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
def seconds(text):
    if text == "0":
        return 0
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?", text)
    if not m or not any(m.groups()):
        print(f'error: invalid argument "{text}" for "--timeout" flag: time: invalid duration "{text}"',
              file=sys.stderr)
        sys.exit(1)
    h, mi, s = (int(g or 0) for g in m.groups())
    return h * 3600 + mi * 60 + s
argv = sys.argv[1:]
log("kubectl " + " ".join(argv))
nodes = load()
name = argv[2] if argv[:2] == ["get", "node"] else (argv[1] if len(argv) > 1 else "")
if name not in nodes:
    print(f'Error from server (NotFound): nodes "{name}" not found', file=sys.stderr)
    sys.exit(1)
n = nodes[name]
if argv[:2] == ["get", "node"] and argv[3:] == ["-o", "jsonpath={.spec.unschedulable}"]:
    print("true" if n["drain"] else "", end="")
elif argv[0] == "drain":
    bound = 0
    for i, a in enumerate(argv):
        if a.startswith("--timeout="):
            bound = seconds(a.split("=", 1)[1])
        elif a == "--timeout" and i + 1 < len(argv):
            bound = seconds(argv[i + 1])
    n["drain"] = True
    n["evicting"] = os.getpid()
    save(nodes)
    print(f"node/{name} cordoned", flush=True)
    evict = n.get("evict", 0)
    start = time.monotonic()
    while evict < 0 or time.monotonic() - start < evict:
        if bound and time.monotonic() - start >= bound:
            nodes = load()
            nodes[name]["evicting"] = 0
            save(nodes)
            log(f"drain {name} ended: timed out")
            print("There are pending nodes to be drained:\n " + name + "\nerror: timed out waiting for the condition",
                  file=sys.stderr)
            sys.exit(1)
        time.sleep(0.05)
    nodes = load()
    nodes[name]["evicting"] = 0
    save(nodes)
    log(f"drain {name} ended: drained")
    print(f"node/{name} drained")
elif argv[0] == "uncordon":
    pid = n.get("evicting") or 0
    if pid and alive(pid):
        log(f"uncordon {name} evicting=True")
    n["drain"] = False
    save(nodes)
    print(f"node/{name} uncordoned")
else:
    print("fake kubectl: " + " ".join(argv) + " not modelled", file=sys.stderr)
    sys.exit(1)
'''


def write_fake_kubectl(bin_dir: Path) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / "kubectl"
    path.write_text(FAKE_KUBECTL)
    path.chmod(0o755)
    return bin_dir
