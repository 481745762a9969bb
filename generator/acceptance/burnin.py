"""The pairwise RDMA burn-in schedule (`acceptance INTENT --burn-in -o DIR`, issue 39).

perftest's `ib_write_bw` between two NIC ports, in rounds, so that every cable of the plan
carries traffic in some round and a weak one can be told apart from its neighbours:

- host-leaf rounds: the NIC ports on one leaf form a ring (plan order) and each ring edge is a
  pair (client -> server). Every port is in two pairs with two different peers, so a port whose
  two pairs are both low, while its peers' other pairs are fine, is the cable (or NIC) to look
  at (attribution.py). The ring's edges are split into rounds so no port is in two pairs of one
  round (two rounds, a third for an odd ring).
- leaf-spine rounds: the leaves form a ring (by rail, then name: the next leaf is usually the
  same rail's leaf in the next unit) and the k-th port of a leaf sends to the k-th port of the
  next leaf, so every leaf sends over and receives through its uplinks. Each QP is a flow of
  its own (its own UDP source port, RoCEv2), which is what ECMP hashes on. A hash puts flows on
  uplinks like balls in bins: with k flows an uplink, one uplink of a leaf is off the mean by
  about sqrt(k), so the round gives each leaf FLOWS_PER_UPLINK flows an uplink (QPs per pair =
  that x uplinks / the leaf's pairs, at least the ECMP width). Then a healthy hash stays within
  1.25 x the mean (4 standard deviations at 256), and an uplink above it (spread.py) is the
  hash's doing, not the burn-in's few flows.

Expected rate of a pair: the capacity model's NIC efficiency (capacity/allreduce.py
nic_efficiency) times the slowest link on the path, and for a leaf-spine pair never more than
its share of the leaf's uplinks when every pair of the round sends at once.

perftest's options (linux-rdma/perftest README, "Common Options" and "Options for BW tests"):
`-d` RDMA device, `-x` GID index (RoCE: the RoCEv2 GID of the port's address), `-q` QPs,
`-D` seconds, `-p` the server's TCP port (default 18515: two servers on one host need two),
`--report_gbits`, `-F` no CPU-frequency failure. "The SAME OPTIONS must be passed to both
server and client"; "On all unidirectional bandwidth benchmarks, the client measures the
bandwidth", so the client's output is the one judged.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.plan.model import FabricPlan

SCHEMA = "fabricgen.burnin/1"
SCHEDULE_FILE = "burnin.json"
DURATION_S = 10
MESSAGE_BYTES = 65536                # perftest's default message size for BW tests
BASE_PORT = 18515                    # perftest's default -p
TOOL = "ib_write_bw"
GID = "$GID_INDEX"                  # filled in by the script (burnin_scripts.py)
FLOWS_PER_UPLINK = 256
MAX_QPS = 1024          # a pair's QPs at most: each holds NIC memory and a CQ; a leaf with few pairs
                        # and many uplinks then has fewer flows an uplink (its spread says so)


@dataclass(frozen=True, slots=True)
class End:
    host: str
    rdma: str
    netdev: str
    ip: str                 # without prefix length: what the client connects to
    switch: str
    port: str


@dataclass(frozen=True, slots=True)
class Pair:
    id: str
    client: End
    server: End
    qps: int
    tcp_port: int
    expected_gbps: float
    cables: tuple[int, ...]     # cabling.csv rows (line numbers) this pair's traffic may cross


@dataclass(frozen=True, slots=True)
class Round:
    id: str
    kind: str                   # host-leaf | leaf-spine
    pairs: tuple[Pair, ...]


def cable_rows(plan: FabricPlan) -> dict[tuple[str, str], int]:
    """(device, port) -> its cabling.csv line (header is line 1; render/cabling.py writes plan.links in order)."""
    rows: dict[tuple[str, str], int] = {}
    for n, lk in enumerate(plan.links, 2):
        rows[(lk.a_device, lk.a_port)] = n
        rows[(lk.b_device, lk.b_port)] = n
    return rows


def _ends_by_leaf(plan: FabricPlan) -> dict[str, list[End]]:
    out: dict[str, list[End]] = {}
    for host in plan.hosts:
        for nic in host.nics:
            out.setdefault(nic.switch, []).append(
                End(host.name, nic.rdma, nic.netdev, nic.ip.split("/")[0], nic.switch, nic.port))
    return out


def _ring_rounds(n: int) -> list[list[int]]:
    """Edge k joins ring positions k and k+1: edges split into rounds that share no position."""
    if n < 2:
        return []
    if n == 2:
        return [[0]]
    rounds: list[list[int]] = [[], []] + ([[]] if n % 2 else [])
    for k in range(n):
        rounds[2 if n % 2 and k == n - 1 else k % 2].append(k)
    return rounds


def _uplinks(plan: FabricPlan, leaf: str) -> list:
    return [p for p in plan.ports_of(leaf) if p.tier != "host-leaf"]


def schedule(plan: FabricPlan, efficiency: float) -> tuple[list[Round], list[str]]:
    """(rounds, notes): the burn-in rounds of PLAN; notes say what no round can test."""
    rows = cable_rows(plan)
    ends = _ends_by_leaf(plan)
    speeds = {(p.device, p.port): p.speed_g for p in plan.ports}
    leaves = sorted(ends, key=lambda s: (plan.switch(s).rail if plan.switch(s).rail is not None else -1, s))
    notes: list[str] = []
    rounds: list[Round] = []

    def rate(a: End, b: End) -> float:
        return min(plan.nic_speed_g, speeds.get((a.switch, a.port), plan.nic_speed_g),
                   speeds.get((b.switch, b.port), plan.nic_speed_g)) * efficiency

    # host-leaf: one ring per leaf; round r of every leaf runs together (no spine traffic)
    per_round: dict[int, list[tuple[End, End]]] = {}
    for leaf in leaves:
        ring = ends[leaf]
        if len(ring) < 2:
            notes.append(f"{leaf}: one NIC port only; its host-leaf cable is tested by the leaf-spine rounds")
        for r, edges in enumerate(_ring_rounds(len(ring))):
            per_round.setdefault(r, []).extend((ring[k], ring[(k + 1) % len(ring)]) for k in edges)
    for r in sorted(per_round):
        rid = f"hl{r + 1}"
        rounds.append(Round(rid, "host-leaf", tuple(
            Pair(f"{rid}-{i + 1:04d}", a, b, 1, BASE_PORT + _server_slot(per_round[r], i), round(rate(a, b), 3),
                 (rows[(a.switch, a.port)], rows[(b.switch, b.port)]))
            for i, (a, b) in enumerate(per_round[r]))))
    # leaf-spine: a ring of leaves; edge k sends from leaf k to leaf k+1
    if len(leaves) < 2 or not any(_uplinks(plan, leaf) for leaf in leaves):
        if len(leaves) >= 2:
            notes.append("no leaf has an uplink: no leaf-spine round")
        return rounds, notes
    for r, edges in enumerate(_ring_rounds(len(leaves))):
        pairs: list[tuple[End, End, int, float, tuple[int, ...]]] = []
        for k in edges:
            src, dst = leaves[k], leaves[(k + 1) % len(leaves)]
            up_src, up_dst = _uplinks(plan, src), _uplinks(plan, dst)
            count = min(len(ends[src]), len(ends[dst]))
            qps = max(1, len(up_src), min(MAX_QPS, -(-FLOWS_PER_UPLINK * len(up_src) // max(1, count))))
            share = min(sum(p.speed_g for p in up_src), sum(p.speed_g for p in up_dst)) / max(1, count)
            fabric_rows = tuple(rows[(p.device, p.port)] for p in up_src + up_dst)
            for a, b in zip(ends[src][:count], ends[dst][:count], strict=True):
                pairs.append((a, b, qps, min(rate(a, b), share * efficiency),
                              (rows[(a.switch, a.port)], *fabric_rows, rows[(b.switch, b.port)])))
        rid = f"ls{r + 1}"
        ab = [(a, b) for a, b, *_ in pairs]
        rounds.append(Round(rid, "leaf-spine", tuple(
            Pair(f"{rid}-{i + 1:04d}", a, b, qps, BASE_PORT + _server_slot(ab, i), round(expected, 3), cables)
            for i, (a, b, qps, expected, cables) in enumerate(pairs))))
    return rounds, notes


def _server_slot(pairs: list[tuple[End, End]], i: int) -> int:
    """How many earlier pairs of the round have their server on the same host: each server of a
    host listens on a TCP port of its own."""
    host = pairs[i][1].host
    return sum(1 for a, b in pairs[:i] if b.host == host)


def _end(e: End) -> dict:
    return {"host": e.host, "rdma": e.rdma, "netdev": e.netdev, "ip": e.ip, "switch": e.switch, "port": e.port}


def schedule_doc(plan: FabricPlan, rounds: list[Round], notes: list[str], efficiency: float,
                 generator: str, intent_sha256: str) -> dict:
    """burnin.json: what `acceptance --judge DIR` reads."""
    used = sorted({row for rnd in rounds for p in rnd.pairs for row in p.cables})
    links = {n: lk for n, lk in enumerate(plan.links, 2)}
    return {
        "schema": SCHEMA, "generator": generator, "fabric": plan.fabric, "intent_sha256": intent_sha256,
        "tool": TOOL, "duration_s": DURATION_S, "message_bytes": MESSAGE_BYTES, "nic_efficiency": efficiency,
        "comment": "expected_gbps = NIC efficiency x the slowest link of the pair, capped for leaf-spine pairs at "
                   "their share of the leaves' uplinks; cables are cabling.csv line numbers (header = line 1)",
        "cables": {str(n): {"a": f"{links[n].a_device}:{links[n].a_port}", "b": f"{links[n].b_device}:{links[n].b_port}",
                            "tier": links[n].tier, "speed_gbps": links[n].speed_g} for n in used},
        "rounds": [{"id": rnd.id, "kind": rnd.kind, "pairs": [
            {"id": p.id, "client": _end(p.client), "server": _end(p.server), "qps": p.qps, "tcp_port": p.tcp_port,
             "expected_gbps": p.expected_gbps, "cables": list(p.cables),
             "output": output_name(rnd.id, p.id)} for p in rnd.pairs]} for rnd in rounds],
        "notes": notes,
    }


def output_name(round_id: str, pair_id: str) -> str:
    """The client's output file, relative to DIR (the client measures, perftest README)."""
    return f"burnin/{round_id}/{pair_id}.client.txt"


def perftest_command(pair: Pair, side: str) -> str:
    """ib_write_bw for one side: the same options on both (perftest README), each with its own
    RDMA device; the client names the server's rail address. $GID_INDEX is the RoCEv2 GID of the
    port's IPv4 address (`show_gids`), set by the script."""
    end = pair.client if side == "client" else pair.server
    cmd = (f"{TOOL} -d {end.rdma} -x {GID} -q {pair.qps} -D {DURATION_S} -s {MESSAGE_BYTES} "
           f"-p {pair.tcp_port} -F --report_gbits")
    return f"{cmd} {pair.server.ip}" if side == "client" else cmd
