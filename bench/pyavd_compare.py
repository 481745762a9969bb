"""fabricgen and pyavd side by side in one run: devices/s of each on the same switch fabric (issue 14).

One invocation runs, back to back on the same machine state:

1. fabricgen, as `bench/render_scale.py --gpus G [--pod P] --keep DIR` in a subprocess of this
   interpreter (fabricgen's venv): load the three-tier SN5600 intent, compile, run every check,
   render and write NVUE startup.yaml per switch, the host files per GPU node (netplan, sysctl,
   NCCL, RoCE QoS unit...), plan.json, cabling.csv, inventory.yml and manifest.json, over
   render_scale's render workers (FABRICGEN_WORKERS, else every CPU it may run on). Its own
   figures (timed after its imports) are parsed from what it prints.
2. pyavd, in its own venv (bench/.venv-pyavd, made here on first use: pyavd is never a
   dependency of fabricgen nor imported into its venv), on the same switches and the same
   cabling, read from the plan.json that step 1 wrote. The AVD inputs are built here, untimed:
   one eos_designs input dict per switch (l3leaf / spine / super-spine, its own bgp_as and id,
   p2p uplinks listed link by link as `uplink_switches` / `uplink_interfaces` /
   `uplink_switch_interfaces`, the leaf's GPU-facing ports as routed `l3_interfaces` with the
   plan's /31 addresses, a `service-profile` on every fabric and GPU port, loopback and uplink
   address pools for AVD to allocate from, no EVPN overlay and no VXLAN, as a pure L3 GPU
   back-end is). Each switch's inputs hold its own node only: the peers' facts come from
   get_avd_facts, so AVD's work stays linear in the fabric size (inventory group vars holding
   every node would make each switch's validation scale with the fabric). The child process
   (`--pyavd-worker`) imports pyavd before its clock starts, then times, through pyavd's
   public API: validate_inputs per switch and loading into AVDDesign (as get_avd_facts's
   docstring asks), get_avd_facts over the fabric, then per switch
   get_device_structured_config (eos_designs) + get_device_config (eos_cli_config_gen: EOS
   CLI) and writing the config to a file. It does the per-switch step serially, then (a second
   child, a fresh process) over a fork pool of every CPU, as AVD's own build scripts run
   devices in process workers; validate and facts stay on one core, as in pyavd.

What is compared: devices/s = devices / wall seconds of the timed part, each side timed from
after its imports. fabricgen is given both ways: switches + GPU hosts (every device it writes
files for) and switches only (the like-for-like count against pyavd, which makes no host
files). The process wall of each child (interpreter start and imports included) is printed
too. pyavd writes only the EOS config per switch (no structured_config YAML, no docs); fabricgen
writes NVUE YAML, host files and the fabric-wide files. The EOS and NVUE configs are of similar
scope (interfaces with descriptions, MTU and addresses, BGP with one neighbor per fabric link,
loopback, hostname, management), but not the same text: fabricgen's also carries the RoCE QoS
(PFC/ECN/buffers) it derives; AVD's carries its platform defaults.

Run: `make bench-pyavd` or `/usr/bin/time -v .venv/bin/python bench/pyavd_compare.py --gpus 16384`
(896 switches; --gpus 2048 gives 112). The figures are upper bounds of the time on a loaded
machine: the 1-minute load average is printed before and after.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv-pyavd"
# pinned so that figures from different days compare; the venv is remade when this changes
PYAVD_SPEC = "pyavd==6.4.0"

# fabricgen role -> (AVD node_type key, AVD type)
AVD_ROLES = {"leaf": ("l3leaf", "l3leaf"), "spine": ("spine", "spine"), "super-spine": ("super_spine", "super-spine")}
TIER_RANK = {"leaf": 0, "spine": 1, "super-spine": 2}
QOS_PROFILE = "ROCE-LOSSLESS"

# Only the node types this fabric uses, each a pure L3 router: no VTEP, no L2/L3 network
# services, no EVPN role (AVD's default l3leaf is an EVPN VTEP; a GPU back-end is plain eBGP).
NODE_TYPE_KEYS = [
    {"key": "l3leaf", "type": "l3leaf", "default_evpn_role": "none", "vtep": False,
     "network_services": {"l2": False, "l3": False}},
    {"key": "spine", "type": "spine", "default_evpn_role": "none"},
    {"key": "super_spine", "type": "super-spine", "default_evpn_role": "none"},
]


# ---------------------------------------------------------------- AVD inputs (pure logic)

def eos_port(port: str) -> str:
    """NVUE swpN (whole 800G OSFP port) / swpNsM (its 2x400G breakout) -> the EOS name on an
    800G-OSFP Arista switch: EthernetN/1 and EthernetN/(4M+1) (8 lanes, 4 per 400G half)."""
    m = re.fullmatch(r"swp(\d+)(?:s(\d+))?", port)
    if not m:
        raise ValueError(f"{port!r}: not an NVUE swp port name")
    return f"Ethernet{m[1]}/{int(m[2] or 0) * 4 + 1}"


def _pool(base: ipaddress.IPv4Network, addresses: int) -> ipaddress.IPv4Network:
    """The smallest network at BASE's start holding ADDRESSES addresses."""
    bits = max(0, (addresses - 1).bit_length())
    return ipaddress.ip_network(f"{base.network_address}/{32 - bits}")


def avd_inputs(plan: dict) -> dict[str, dict]:
    """plan.json (fabricgen's documented shape: switches, hosts, links) -> {switch: eos_designs
    inputs}. Same switches, roles, ASNs and cabling as the plan; AVD allocates loopbacks (same
    addresses as the plan: one pool, offsets by role) and fabric /31s from pools itself."""
    switches = plan["switches"]
    role_of = {s["name"]: s["role"] for s in switches}
    unknown = sorted({r for r in role_of.values()} - set(AVD_ROLES))
    if unknown:
        raise ValueError(f"plan has switch roles {unknown}; this bench knows {sorted(AVD_ROLES)}")
    uplinks: dict[str, list[tuple[str, str, str]]] = {s["name"]: [] for s in switches}
    for link in plan["links"]:
        a, b = link["a"], link["b"]
        if a["device"] not in role_of or b["device"] not in role_of:
            continue                                    # host links: below, from the hosts' NICs
        lo, hi = sorted((a, b), key=lambda end: TIER_RANK[role_of[end["device"]]])
        if role_of[lo["device"]] == role_of[hi["device"]]:
            raise ValueError(f"{lo['device']}-{hi['device']}: a link between two {role_of[lo['device']]}s "
                             "(dragonfly-plus?); this bench models leaf-spine(-super-spine) uplinks only")
        uplinks[lo["device"]].append((eos_port(lo["port"]), hi["device"], eos_port(hi["port"])))
    host_ports: dict[str, list[dict]] = {s["name"]: [] for s in switches}
    for host in plan["hosts"]:
        for nic in host["nics"]:
            prefix = nic["ip"].split("/")[1]
            host_ports[nic["switch"]].append({
                "name": eos_port(nic["port"]), "description": f"{host['name']}:{nic['netdev']}",
                "ip_address": f"{nic['gateway']}/{prefix}", "peer": host["name"],
                "peer_interface": nic["netdev"], "speed": "400g-4", "qos_profile": QOS_PROFILE,
            })

    # Loopbacks: the plan numbers them super-spine, spine, leaf from the pool's first address.
    by_role = {role: [s for s in switches if s["role"] == role] for role in AVD_ROLES}
    first = min(ipaddress.ip_address(s["loopback"]) for s in switches)
    lo_pool = ipaddress.ip_network(f"{first - 1}/16", strict=False)
    offsets, offset = {}, 0
    for role in ("super-spine", "spine", "leaf"):
        offsets[role], offset = offset, offset + len(by_role[role])
    # Fabric /31s: one pool per node type, each (nodes x uplinks per node x 2) addresses large.
    next_base = ipaddress.ip_network("10.128.0.0/32")
    p2p_pools = {}
    for role in ("leaf", "spine"):
        most = max((len(uplinks[s["name"]]) for s in by_role[role]), default=0)
        pool = _pool(next_base, 2 * most * max(1, len(by_role[role])))
        p2p_pools[role] = str(pool)
        next_base = ipaddress.ip_network(f"{pool.broadcast_address + 1}/32")

    common = {
        "fabric_name": plan.get("fabric", "fabric").upper(),
        "underlay_routing_protocol": "ebgp",
        "overlay_routing_protocol": "none",
        "node_type_keys": NODE_TYPE_KEYS,
        "p2p_uplinks_mtu": 9214,                        # EOS's largest L3 MTU
        "p2p_uplinks_qos_profile": QOS_PROFILE,
        "bgp_maximum_paths": 128,
    }
    inputs = {}
    for role, members in by_role.items():
        key, avd_type = AVD_ROLES[role]
        for node_id, sw in enumerate(members, 1):
            name = sw["name"]
            node = {"name": name, "id": node_id, "bgp_as": str(sw["asn"]), "mgmt_ip": f"{sw['mgmt_ip']}/16"}
            if ups := uplinks[name]:
                node["uplink_interfaces"] = [u[0] for u in ups]
                node["uplink_switches"] = [u[1] for u in ups]
                node["uplink_switch_interfaces"] = [u[2] for u in ups]
            if host_ports[name]:
                node["l3_interfaces"] = host_ports[name]
            defaults = {"loopback_ipv4_pool": str(lo_pool), "loopback_ipv4_offset": offsets[role]}
            if role in p2p_pools:
                defaults["uplink_ipv4_pool"] = p2p_pools[role]
            inputs[name] = {**common, "type": avd_type, key: {"defaults": defaults, "nodes": [node]}}
    return inputs


# ---------------------------------------------------------------- pyavd side (its own venv)

_STATE: dict = {}


def _render(structured) -> str:
    """get_device_config, or (reuse mode) its body with one Templar per process: the public
    function builds a new Templar per call, whose template loading costs ~40 ms per device
    before any config is rendered (pyavd 6.4.0, measured here on a near-empty config)."""
    if _STATE["templar"] is None:
        from pyavd import get_device_config
        return get_device_config(structured)
    from pyavd.constants import EOS_CLI_CONFIG_GEN_JINJA2_CONFIG_TEMPLATE
    return _STATE["templar"].render_template_from_file(
        template_file=EOS_CLI_CONFIG_GEN_JINJA2_CONFIG_TEMPLATE, template_vars=structured._as_dict())


def _one_device(hostname: str) -> tuple[str, int, float, float]:
    from pyavd import get_device_structured_config

    t0 = time.perf_counter()
    structured = get_device_structured_config(hostname, _STATE["inputs"][hostname], _STATE["facts"])
    t1 = time.perf_counter()
    data = _render(structured).encode()
    (_STATE["out"] / f"{hostname}.cfg").write_bytes(data)
    return hostname, len(data), t1 - t0, time.perf_counter() - t1


def _pyavd_worker(inputs_path: Path, procs: int, reuse: bool, out: Path) -> None:
    """Runs in bench/.venv-pyavd: time pyavd on INPUTS_PATH, print the figures as one JSON line."""
    # pyavd and the modules its functions import lazily on first call, before the clock starts:
    # imports are untimed on both sides (render_scale.py starts its clock after its imports)
    t_imp = time.perf_counter()
    import multiprocessing

    import pyavd
    from pyavd import get_avd_facts, get_device_config, get_device_structured_config, validate_inputs
    from pyavd._eos_designs.eos_designs_facts.get_facts import get_facts  # noqa: F401
    from pyavd._eos_designs.structured_config import get_structured_config  # noqa: F401
    from pyavd.api.schemas import AVDDesign, EOSConfig  # noqa: F401
    from pyavd.constants import EOS_CLI_CONFIG_GEN_JINJA2_PRECOMPILED_TEMPLATE_PATH
    from pyavd.templater import Templar
    import_s = time.perf_counter() - t_imp

    raw = json.loads(inputs_path.read_text())
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    inputs, warned = {}, set()
    for hostname, data in raw.items():
        result = validate_inputs(data)
        if result.validated_data is None or result.validation_result.violations:
            errors = [str(e) for e in result.validation_result.violations]
            sys.exit(f"pyavd: {hostname}: inputs invalid: {errors[:3]}")
        warned.update(str(w) for w in (*result.validation_result.deprecations,
                                       *result.validation_result.ignored_eos_config_keys))
        inputs[hostname] = AVDDesign._from_dict(result.validated_data)
    t1 = time.perf_counter()
    facts = get_avd_facts(inputs)
    t2 = time.perf_counter()
    # the Templar is made in the timed part (once, inherited by the fork workers)
    templar = Templar(precompiled_templates_path=EOS_CLI_CONFIG_GEN_JINJA2_PRECOMPILED_TEMPLATE_PATH) if reuse else None
    _STATE.update(inputs=inputs, facts=facts, out=out, templar=templar)
    names = list(inputs)
    if procs == 1:
        done = [_one_device(h) for h in names]
    else:
        # fork: the workers inherit inputs and facts instead of unpickling them per task
        with multiprocessing.get_context("fork").Pool(procs) as pool:
            done = pool.map(_one_device, names, chunksize=max(1, len(names) // (procs * 8)))
    t3 = time.perf_counter()
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    # untimed: the reuse mode renders the same bytes as the public get_device_config
    first = names[0]
    same = get_device_config(get_device_structured_config(first, inputs[first], facts)).encode() \
        == (out / f"{first}.cfg").read_bytes()
    print(json.dumps({
        "pyavd": pyavd.__version__, "procs": procs, "reuse_templar": reuse, "devices": len(done),
        "bytes": sum(d[1] for d in done), "import_s": import_s,
        "validate_s": t1 - t0, "facts_s": t2 - t1, "devices_s": t3 - t2, "total_s": t3 - t0,
        "structured_task_s": sum(d[2] for d in done), "config_task_s": sum(d[3] for d in done),
        "user_s": me.ru_utime + kids.ru_utime, "sys_s": me.ru_stime + kids.ru_stime,
        "peak_rss_mb": max(me.ru_maxrss, kids.ru_maxrss) / 1024, "warnings": sorted(warned)[:5],
        "same_as_public_api": same,
    }))


# ---------------------------------------------------------------- the driver (fabricgen's venv)

def ensure_venv() -> Path:
    """bench/.venv-pyavd with PYAVD_SPEC installed; made once, remade when the spec changes."""
    python = VENV / "bin" / "python"
    stamp = VENV / ".pyavd-spec"
    if python.exists() and stamp.exists() and stamp.read_text().strip() == PYAVD_SPEC:
        return python
    print(f"making {VENV.relative_to(HERE.parent)} with {PYAVD_SPEC} (once)...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", PYAVD_SPEC],
                   check=True)
    stamp.write_text(PYAVD_SPEC + "\n")
    return python


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def run_fabricgen(gpus: int, pod: int | None, keep: Path) -> dict:
    cmd = [sys.executable, str(HERE / "render_scale.py"), "--gpus", str(gpus), "--keep", str(keep)]
    if pod:
        cmd += ["--pod", str(pod)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parent)
    wall = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"render_scale.py failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    text = proc.stdout

    def grab(pattern: str, cast=float):
        m = re.search(pattern, text)
        if not m:
            sys.exit(f"render_scale.py's output has no {pattern!r} (format changed?):\n{text}")
        return cast(m[1])

    return {
        "output": text.rstrip(), "process_wall_s": wall,
        "switches": grab(r"switches: (\d+)", int), "hosts": grab(r"hosts: (\d+)", int),
        "total_s": grab(r"total: ([\d.]+) s wall"), "workers": grab(r"workers: (\d+)", int),
        "cpu_s": grab(r"user: ([\d.]+) s") + grab(r"sys: ([\d.]+) s"),
    }


def run_pyavd(python: Path, inputs_path: Path, run: tuple[int, bool], out: Path) -> dict:
    procs, reuse = run
    cmd = [str(python), str(Path(__file__).resolve()), "--pyavd-worker", str(inputs_path),
           "--procs", str(procs), "--out", str(out)] + (["--reuse-templar"] if reuse else [])
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"pyavd worker failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["process_wall_s"] = wall
    return result


def parse_runs(text: str) -> list[tuple[int, bool]]:
    """'1,2,2r' -> [(1, False), (2, False), (2, True)]: processes for the per-device step, and
    r for one reused Templar per process instead of the public get_device_config."""
    runs = []
    for item in text.split(","):
        m = re.fullmatch(r"\s*(\d+)(r?)\s*", item)
        if not m or int(m[1]) < 1:
            raise argparse.ArgumentTypeError(f"{item!r}: give N or Nr, N >= 1 (e.g. '1,2,2r')")
        runs.append((int(m[1]), bool(m[2])))
    return runs


def _label(r: dict) -> str:
    how = "one reused Templar" if r["reuse_templar"] else "public get_device_config"
    return f"{r['procs']} process{'es' if r['procs'] > 1 else ''}, {how}"


def main() -> None:
    cpus = os.cpu_count() or 1
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpus", type=int, default=16384,
                    help="fabricgen intent size, 8 GPUs per node (default 16384: 896 switches; 2048: 112)")
    ap.add_argument("--pod", type=int, help="nodes per pod, passed to render_scale.py")
    ap.add_argument("--pyavd-runs", type=parse_runs, default=parse_runs(f"1,{cpus},{cpus}r"),
                    help="pyavd runs, each a fresh process: N processes for the per-device step, "
                         "Nr with one reused Templar per process (default '1,CPUS,CPUSr')")
    ap.add_argument("--pyavd-worker", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--procs", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--reuse-templar", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.pyavd_worker:
        _pyavd_worker(args.pyavd_worker, args.procs, args.reuse_templar, args.out)
        return
    python = ensure_venv()
    load_before = _load()
    with tempfile.TemporaryDirectory(prefix="pyavd-compare-") as tmp:
        tmp_path = Path(tmp)
        fg = run_fabricgen(args.gpus, args.pod, tmp_path / "fabricgen")
        plan = json.loads((tmp_path / "fabricgen" / "plan.json").read_text())
        inputs = avd_inputs(plan)
        del plan
        inputs_path = tmp_path / "avd_inputs.json"
        inputs_path.write_text(json.dumps(inputs))
        nodes = [n for d in inputs.values() for v in d.values() if isinstance(v, dict) and "nodes" in v
                 for n in v["nodes"]]
        uplinks = sum(len(n.get("uplink_interfaces", [])) for n in nodes)
        gpu_ports = sum(len(n.get("l3_interfaces", [])) for n in nodes)
        avd = [run_pyavd(python, inputs_path, run, tmp_path / f"pyavd-{i}") for i, run in enumerate(args.pyavd_runs)]
    load_after = _load()

    switches, hosts = fg["switches"], fg["hosts"]
    fg_all = (switches + hosts) / fg["total_s"]
    fg_sw = switches / fg["total_s"]
    print("== fabricgen: bench/render_scale.py (load, compile, checks; NVUE startup.yaml per switch, "
          "host files per node, plan.json, cabling, inventory, manifest) ==")
    print(fg["output"])
    print(f"cores: load/compile/checks on 1, render+write over {fg['workers']} workers; "
          f"process wall (interpreter + imports included): {fg['process_wall_s']:.2f} s")
    print(f"== pyavd {avd[0]['pyavd']} (bench/.venv-pyavd): {len(inputs)} switches, {uplinks} p2p uplinks, "
          f"{gpu_ports} GPU-facing routed ports; validate_inputs + get_avd_facts on 1 core, then per switch "
          f"eos_designs structured config + eos_cli_config_gen EOS CLI, written to a file ==")
    for r in avd:
        print(f"[{_label(r)}] validate+load {r['validate_s']:.2f} s  get_avd_facts {r['facts_s']:.2f} s  "
              f"per-switch step {r['devices_s']:.2f} s wall (summed over switches: eos_designs "
              f"{r['structured_task_s']:.2f} s, eos_cli_config_gen+write {r['config_task_s']:.2f} s)  "
              f"total {r['total_s']:.2f} s  user {r['user_s']:.2f} s  sys {r['sys_s']:.2f} s  "
              f"peak RSS {r['peak_rss_mb']:.0f} MB  configs {r['bytes'] / 1e6:.1f} MB  "
              f"(imports {r['import_s']:.2f} s untimed; process wall {r['process_wall_s']:.2f} s)"
              + ("" if r["same_as_public_api"] else "  WARNING: bytes differ from get_device_config")
              + (f"  validation warnings: {r['warnings']}" if r["warnings"] else ""))
    print("== devices/s (wall), each side timed from after its imports; per CPU second (user+sys, "
          "all its processes: steadier than wall on a shared machine) ==")
    print(f"fabricgen: {fg_all:.1f} (switches + hosts: {switches} + {hosts} in {fg['total_s']:.2f} s), "
          f"{fg_sw:.1f} (switches only); per CPU s: {(switches + hosts) / fg['cpu_s']:.1f}, "
          f"{switches / fg['cpu_s']:.1f} (switches only)")
    for r in avd:
        rate = r["devices"] / r["total_s"]
        per_cpu = r["devices"] / (r["user_s"] + r["sys_s"])
        print(f"pyavd [{_label(r)}]: {rate:.2f}  ->  fabricgen/pyavd: {fg_all / rate:.1f}x (switches + hosts), "
              f"{fg_sw / rate:.1f}x (switches only); per CPU s: {per_cpu:.2f}  ->  "
              f"{(switches + hosts) / fg['cpu_s'] / per_cpu:.1f}x, {switches / fg['cpu_s'] / per_cpu:.1f}x")
    best = min(avd, key=lambda r: r["total_s"])
    rate = best["devices"] / best["total_s"]
    print(f"against pyavd's fastest run here [{_label(best)}]: {fg_all / rate:.1f}x (switches + hosts), "
          f"{fg_sw / rate:.1f}x (switches only)")
    print(f"load average (1 min): {load_before} before, {load_after} after; cpus: {cpus}")


if __name__ == "__main__":
    main()
