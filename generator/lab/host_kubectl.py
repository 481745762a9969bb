"""The simulated `kubectl` of a lab whose intent's scheduler is kubernetes: one API server's node
list for the whole lab ($FAKE_K8S_STATE, DIR/kubernetes/nodes.json), so a cordon made from the
controller is what every host's kubectl shows. The nodes are the lab's GPU servers (DIR/hosts/<name>),
Ready and schedulable at start, with no pods to evict.

What fabricgen's drain hooks and playbooks/files/fabricgen_sched.py run, in kubectl's own words
(kubectl reference: cordon, uncordon, drain, get): `cordon|uncordon NODE` print `node/NODE cordoned`
(`already cordoned`, ...); `drain NODE [--ignore-daemonsets] [--timeout=D] ...` cordons, evicts
nothing (no pods here) and prints `node/NODE drained`; `get node NODE [-o jsonpath={.spec.unschedulable}]`
prints the table row (STATUS Ready or Ready,SchedulingDisabled) or `true` / nothing (the field is
absent on a schedulable node). An unknown node: `Error from server (NotFound): nodes "X" not found`,
exit 1. Anything else exits 1 naming the lab's limit. Changes are logged to $FAKE_NIC_LOG.
"""

KUBECTL_TOOL = r'''#!/usr/bin/python3
import fcntl, json, os, sys
from pathlib import Path

STATE = Path(os.environ["FAKE_K8S_STATE"])
HOSTS = STATE.parent.parent / "hosts"
VERSION = "v1.30.2"

def log():
    with open(os.environ["FAKE_NIC_LOG"], "a") as f:
        f.write(" ".join(["kubectl"] + sys.argv[1:]) + "\n")

def not_found(node):
    print(f'Error from server (NotFound): nodes "{node}" not found', file=sys.stderr)
    sys.exit(1)

def main(argv):
    STATE.parent.mkdir(parents=True, exist_ok=True)
    lock = open(str(STATE) + ".lock", "a")
    fcntl.flock(lock, fcntl.LOCK_EX)
    nodes = json.loads(STATE.read_text()) if STATE.exists() else {}
    words = [a for a in argv if not a.startswith("-")]
    flags = [a for a in argv if a.startswith("-")]
    output = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-o"), None)
    output = next((a.split("=", 1)[1] for a in flags if a.startswith("-o=") or a.startswith("--output=")), output)
    if output and output in words:
        words.remove(output)
    if not words:
        print("kubectl controls the Kubernetes cluster manager.", file=sys.stderr)
        return 1
    verb, rest = words[0], words[1:]
    if verb in ("cordon", "uncordon", "drain") and len(rest) == 1:
        node = rest[0]
        if not (HOSTS / node).is_dir():
            not_found(node)
        log()
        want = verb != "uncordon"
        had = bool(nodes.get(node, {}).get("unschedulable"))
        nodes[node] = {"unschedulable": want}
        tmp = STATE.with_suffix(".tmp")
        tmp.write_text(json.dumps(nodes))
        tmp.replace(STATE)
        word = "cordoned" if want else "uncordoned"
        print(f"node/{node} {'already ' if had == want else ''}{word}")
        if verb == "drain":
            print(f"node/{node} drained")
        return 0
    if verb == "get" and rest[:1] in (["node"], ["nodes"], ["no"]):
        names = rest[1:] or sorted(p.name for p in HOSTS.iterdir() if p.is_dir())
        for node in names:
            if not (HOSTS / node).is_dir():
                not_found(node)
        if output == "jsonpath={.spec.unschedulable}":
            print("".join("true" if nodes.get(n, {}).get("unschedulable") else "" for n in names), end="")
            return 0
        if output is not None:
            print(f"kubectl: lab host: -o {output} is not simulated (jsonpath={{.spec.unschedulable}})", file=sys.stderr)
            return 1
        width = max(len("NAME"), *(len(n) for n in names)) + 3
        print(f"{'NAME':<{width}}{'STATUS':<29}{'ROLES':<9}{'AGE':<6}VERSION")
        for node in names:
            status = "Ready,SchedulingDisabled" if nodes.get(node, {}).get("unschedulable") else "Ready"
            print(f"{node:<{width}}{status:<29}{'<none>':<9}{'10d':<6}{VERSION}")
        return 0
    print(f"kubectl: lab host: `kubectl {' '.join(argv)}` is not simulated (cordon, uncordon, drain, get node)",
          file=sys.stderr)
    return 1

sys.exit(main(sys.argv[1:]))
'''
