"""Host drift item by item: the routes, rules, interfaces and sysctls a check run of
playbooks/hosts.yml would change, read from what its probes print.

A changed task alone says only that something under it differs. Two of the host playbook's
probes name each difference, and run in check mode too (they compare, they do not apply):
- "Rail interfaces (...)" runs playbooks/files/fabricgen_rails.py, one `change: ip ...` line per
  iproute2 command it would run: `route replace DST via GW dev NETDEV table T` (the rail pool's
  route missing or different in table 100+rail), `rule add from SRC table T priority P ...` (the
  source rule missing), `rule del priority P ...` (a rule at our priority that is not ours),
  `link set dev NETDEV mtu N|up` and `addr add|del A/N dev NETDEV`.
- "Reload the net.* sysctls of the drop-in" prints `change: KEY = HAVE -> WANT`.
Anything else from them (a line this module does not know) stays a task-level entry.
"""

from __future__ import annotations

RAILS_TASK = "Rail interfaces (MTU, addresses, table 100+rail route, source rule)"
SYSCTL_TASK = "Reload the net.* sysctls of the drop-in"
ITEM_TASKS = (RAILS_TASK, SYSCTL_TASK)


def _ip_item(words: list[str]) -> tuple[str, dict[str, str]] | None:
    """(feature, change) for the arguments of one `ip` command fabricgen_rails.py would run."""
    def after(key: str) -> str:
        return words[words.index(key) + 1] if key in words[:-1] else ""

    if words[:2] == ["route", "replace"] and len(words) > 2:
        return "routes", {"path": f"{words[2]} table {after('table') or 'main'} dev {after('dev')}",
                          "intended": f"via {after('via')}", "actual": "missing or different"}
    if words[:2] == ["rule", "add"]:
        return "rules", {"path": f"priority {after('priority')} from {after('from')}",
                         "intended": f"lookup {after('table')}", "actual": "missing"}
    if words[:2] == ["rule", "del"]:
        rest = " ".join(w for w in words[4:])
        return "rules", {"path": f"priority {after('priority')}" + (f" {rest}" if rest else ""),
                         "intended": "absent (not fabricgen's rule at its priority)", "actual": "present"}
    if words[:3] == ["link", "set", "dev"] and len(words) > 4:
        what = "mtu" if words[4] == "mtu" else "state"
        return "interfaces", {"path": f"{words[3]} {what}",
                              "intended": after("mtu") if what == "mtu" else "up",
                              "actual": "different" if what == "mtu" else "down"}
    if words[:1] == ["addr"] and len(words) > 4 and words[1] in ("add", "del"):
        return "interfaces", {"path": f"{after('dev')} address {words[2]}",
                              "intended": "present" if words[1] == "add" else "absent",
                              "actual": "missing" if words[1] == "add" else "present"}
    return None


def host_items(task: str, stdout: str) -> list[tuple[str, dict[str, str]]]:
    """(feature, {"path", "intended", "actual"}) per difference TASK's probe printed; [] when it
    printed none this module can read (the caller then reports the task as a whole)."""
    items: list[tuple[str, dict[str, str]]] = []
    for line in stdout.splitlines():
        if not line.startswith("change: "):
            continue
        body = line[len("change: "):].strip()
        if task == RAILS_TASK and body.startswith("ip "):
            item = _ip_item(body.split()[1:])
            if item is not None:
                items.append(item)
        elif task == SYSCTL_TASK and " = " in body and " -> " in body:
            key, _, values = body.partition(" = ")
            have, _, want = values.partition(" -> ")
            items.append(("sysctl", {"path": key.strip(), "intended": want.strip(), "actual": have.strip()}))
    return items


__all__ = ["ITEM_TASKS", "RAILS_TASK", "SYSCTL_TASK", "host_items"]
