#!/usr/bin/env python3
"""Ask the scheduler about a node, on the controller (playbooks/hosts.yml, deploy.hosts.scheduler).

    fabricgen_sched.py state SCHEDULER NODE     one JSON line: {"drained", "drain", "reason", "by", "at",
                                                 "ours", "state"}
    fabricgen_sched.py wait slurm NODE TIMEOUT POLL
                                                 poll until no job runs on NODE; exit 1 after TIMEOUT s
    fabricgen_sched.py restore slurm NODE REASON BY AT
                                                 put NODE back to DRAIN with REASON (unless it is so)
    fabricgen_sched.py hook BOUND GRACE COMMAND  run the drain hook (a shell command line) in its own
                                                 process group; past BOUND s, TERM the group, KILL it
                                                 GRACE s later, and return once no process of it is left

Exit status: 0 done, 1 a problem, told in ONE line starting "error: "; restore: 3 the reason is back
but not its user and time (scontrol sets them to the caller and now, and has no way to set others).

Slurm (scontrol(1) "show node", sinfo(1) "NODE STATE CODES", slurm.conf(5)):
- `scontrol update State=DRAIN` only stops new jobs; running ones go on. While jobs run the node
  is DRAINING: scontrol prints the base state with the DRAIN flag, MIXED+DRAIN or ALLOCATED+DRAIN
  (sinfo "drng"); COMPLETING+DRAIN while a job's epilog still runs. Once no job is left it is
  DRAINED: IDLE+DRAIN (or DOWN+DRAIN; sinfo "drain"), with CPUAlloc=0.
- `Reason=` is printed followed by " [user@timestamp]" (who set it, when); the reason an operator
  gave is the text before that. `scontrol update State=DRAIN Reason=...` replaces reason, user and
  time alike (node_mgr.c update_node), so a drain fabricgen did not set is never drained over.
- Ownership: the rollout's drains carry a reason starting OWN_PREFIX ("fabricgen:", required of the
  drain hook by deploy.hosts); a drain with any other reason is someone else's (an operator's, or
  roce-qos.sh --health's "fabricgen-roce-qos:"), neither replaced nor resumed by the rollout.
Kubernetes (kubectl drain / cordon reference): `kubectl drain` cordons the node (spec.unschedulable)
and blocks until the pods are evicted, bounded by its own --timeout (default 0: no bound), after which
it exits 1 ("error: timed out waiting for the condition") and leaves the node cordoned; its exit
status is the wait. A node cordoned before the run has spec.unschedulable true; Kubernetes keeps no
reason for it.
The hook: an Ansible task `timeout` fails the task but leaves the process it started running (its
evictions go on while the undrain uncordons the node), so the hook runs here, where its whole process
group is ended at the bound, and the undrain comes only after the last process of it is gone.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

_STATE = re.compile(r"(?:^|\s)State=(\S+)")
_ALLOC = re.compile(r"(?:^|\s)CPUAlloc=(\d+)")
_REASON = re.compile(r"^\s*Reason=(.*)$", re.MULTILINE)
_WHO = re.compile(r"\s*\[([^\]\s]*)@([^\]\s]*)\]\s*$")     # " [root@2026-12-04T13:00:00]"
# the reason prefix of the rollout's own drains (generator/intent/model.py SLURM_DRAIN_PREFIX)
OWN_PREFIX = "fabricgen:"
# base states of a node that runs no job (sinfo(1) NODE STATE CODES)
_NO_JOB = {"IDLE", "DOWN", "DRAINED", "FUTURE", "UNKNOWN"}


def slurm_state(text: str) -> dict:
    """`scontrol show node NODE` -> {"state", "drain", "drained", "reason"}."""
    found = _STATE.search(text)
    if found is None:
        raise ValueError("no State= in scontrol's answer")
    state = found.group(1)
    parts = state.split("+")
    base, flags = parts[0].rstrip("*~#%$@^-!"), set(parts[1:])
    drain = "DRAIN" in flags or base in ("DRAIN", "DRAINED", "DRAINING")
    alloc = _ALLOC.search(text)
    reason = _REASON.search(text)
    # DRAINED: the drain flag and no job left: an idle (or down) base state, nothing completing,
    # no CPU allocated (a bare DRAIN base state is read by CPUAlloc alone)
    no_job = base in _NO_JOB or (base == "DRAIN" and alloc is not None)
    drained = (drain and no_job and "COMPLETING" not in flags
               and (alloc is None or alloc.group(1) == "0"))
    text = reason.group(1) if reason else ""
    who = _WHO.search(text)
    text = _WHO.sub("", text).strip()
    return {"state": state, "drain": drain, "drained": drained, "reason": text,
            "by": who.group(1) if who else "", "at": who.group(2) if who else "",
            "ours": drain and text.startswith(OWN_PREFIX)}


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except FileNotFoundError:
        raise SystemExit(f"error: {argv[0]} not found on the controller (deploy.hosts.scheduler)") from None
    except subprocess.TimeoutExpired:
        raise SystemExit(f"error: {' '.join(argv[:3])} did not answer in 60 s") from None


def _slurm(node: str) -> dict:
    r = _run(["scontrol", "show", "node", node])
    if r.returncode != 0:
        detail = (r.stderr.strip() or r.stdout.strip()).splitlines()
        raise SystemExit(f"error: scontrol show node {node}: {detail[-1] if detail else f'exit {r.returncode}'}")
    try:
        return slurm_state(r.stdout)
    except ValueError as exc:
        raise SystemExit(f"error: scontrol show node {node}: {exc}") from None


def _kubernetes(node: str) -> dict:
    r = _run(["kubectl", "get", "node", node, "-o", "jsonpath={.spec.unschedulable}"])
    if r.returncode != 0:
        detail = (r.stderr.strip() or r.stdout.strip()).splitlines()
        raise SystemExit(f"error: kubectl get node {node}: {detail[-1] if detail else f'exit {r.returncode}'}")
    cordoned = r.stdout.strip() == "true"
    # drained or not is kubectl drain's exit status; a cordon carries no reason
    return {"state": "SchedulingDisabled" if cordoned else "Ready", "drain": cordoned, "drained": cordoned,
            "reason": "cordoned" if cordoned else "", "by": "", "at": "", "ours": False}


def _group_alive(pgid: int) -> bool:
    """Whether a process of group PGID still runs. Signal 0 finds zombies too: a killed process of
    the hook whose parent died first waits for PID 1 to reap it, which this VM's init does about
    once a second and a container's shell as PID 1 never does. A zombie evicts nothing, so the
    group's members are read from /proc (proc(5): /proc/PID/stat, state then ppid then pgrp after
    the command's closing parenthesis) and those in state Z do not count."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True                     # no procfs: signal 0 is all there is
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue                    # gone while listed, or not ours to read
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def _group_gone(pgid: int, wait: float) -> bool:
    """True once no process of group PGID is left (zombies aside), within WAIT seconds."""
    deadline = time.monotonic() + wait
    while True:
        if not _group_alive(pgid):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def run_hook(bound: float, grace: float, command: str) -> int:
    """The drain hook in its own session (so its own process group), its output passed on."""
    proc = subprocess.Popen(["/bin/sh", "-c", command], stdout=sys.stdout, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        return proc.wait(timeout=bound if bound > 0 else None)
    except subprocess.TimeoutExpired:
        pass
    sys.stdout.flush()
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        if _group_gone(proc.pid, wait):
            break
    if not _group_gone(proc.pid, 10.0):
        print(f"error: the drain hook outlived its bound of {bound:g} s and part of it survived SIGKILL: "
              "not undrained while it may still evict")
        return 2
    print(f"error: the drain hook outlived its bound of {bound:g} s (deploy.hosts.drain_timeout): its processes "
          "were ended, nothing evicts any more; give kubectl drain a --timeout within the bound")
    return 1


def main(argv: list[str]) -> int:
    if argv[:1] == ["hook"] and len(argv) == 4:
        return run_hook(float(argv[1]), float(argv[2]), argv[3])
    if len(argv) < 3 or argv[0] not in ("state", "wait", "restore") or argv[1] not in ("slurm", "kubernetes"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    action, scheduler, node = argv[:3]
    read = _slurm if scheduler == "slurm" else _kubernetes
    if action == "state":
        print(json.dumps(read(node)))
        return 0
    if scheduler != "slurm":
        print("error: only Slurm is waited for and restored here (kubectl drain waits itself)")
        return 1
    if action == "wait":
        timeout, poll = float(argv[3]), max(float(argv[4]), 0.1)
        deadline = time.monotonic() + timeout
        while True:
            now = read(node)
            if now["drained"]:
                print(f"drained: {node} State={now['state']}")
                return 0
            if not now["drain"]:
                print(f"error: {node} is not draining (State={now['state']}): the drain hook did not drain it")
                return 1
            if time.monotonic() + poll > deadline:
                print(f"error: {node} still runs jobs after {argv[3]} s (State={now['state']}): "
                      "nothing was changed on it; raise deploy.hosts.drain_timeout or wait for its jobs")
                return 1
            time.sleep(poll)
    reason, by, at = argv[3], (argv[4:5] or [""])[0], (argv[5:6] or [""])[0]
    now = read(node)
    if now["drain"] and now["reason"] == reason:
        print(f"kept: {node} drained, Reason={reason}")
        return 0
    if now["drain"] or now["reason"]:
        # someone drained (or downed) it again meanwhile: theirs now, not ours to replace
        print(f"error: the drain of {node} (Reason={reason}) was replaced during the run by Reason={now['reason']} "
              f"[{now['by']}@{now['at']}]: left as it is")
        return 1
    r = _run(["scontrol", "update", f"NodeName={node}", "State=DRAIN", f"Reason={reason}"])
    if r.returncode != 0:
        print(f"error: cannot restore the drain of {node} (Reason={reason}): {r.stderr.strip() or r.stdout.strip()}")
        return 1
    # scontrol has no way to give a reason's user or time: slurmctld records the caller and now
    print(f"error: {node} was resumed during the run; drained again with Reason={reason}, but Slurm now records "
          f"this run's user and time instead of {by or '?'}@{at or '?'} (scontrol cannot set them)")
    return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
