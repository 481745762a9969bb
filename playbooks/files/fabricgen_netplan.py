#!/usr/bin/python3
"""Apply the rendered netplan file to the rail NICs only, run on a GPU server by playbooks/hosts.yml
(ansible.builtin.script). Python 3.7+ standard library only.

`netplan generate` has no per-interface mode: it reads every /{lib,etc,run}/netplan/*.yaml, deletes
all of its earlier output under /run (a stale 10-netplan-*.network goes; netplan 0.106 src/generate.c)
and writes it again, and `networkctl reload` then reconfigures every link whose .network file is new,
modified or removed (networkctl(1), systemd 252, "reload"). A management-NIC edit an admin left
unapplied in another netplan file would so go live with our rails. Here netplan generates into a
staging root instead (`--root-dir`, netplan-generate(8): it reads ROOT_DIR/{lib,etc,run}/netplan;
the stage holds a copy of the host's netplan files), and only what it wrote for the rails is installed: /run/systemd/network/10-netplan-<rail>.{network,link} and the rails' blocks
of /run/udev/rules.d/90-netplan.rules (plus, on systemd < 246, an IgnoreCarrierLoss= drop-in: DROPIN). Every other output stays as it is; when it differs from what
netplan would write now, a `note:` line says so (someone else's change, left pending). Then, when
told to (systemd runs), `networkctl reload` (which reconfigures only links whose files changed: the
rails) and `networkctl reconfigure <rail>...` for the rails whose files changed.

Input: $FG_NETPLAN, JSON {"root": prefix ("" for /), "rails": [netdev, ...], "check": bool,
"networkctl": bool}. Output: `change: <path>` per file written (`check`: would write), `note: ...`,
`ok: rails as netplan generates them` when nothing differs; `error: ...` and exit 1 on failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

NETPLAN_DIRS = ("lib/netplan", "etc/netplan", "run/netplan")
NETWORKD = "run/systemd/network"
UDEV_RULES = "run/udev/rules.d/90-netplan.rules"
# what netplan 0.106 writes besides the per-interface networkd files (src/generate.c, src/nm.c, src/sriov.c)
OTHER_OUTPUT = ("run/systemd/system", "run/NetworkManager/system-connections", "run/udev/rules.d")


# netplan's `ignore-carrier: true` is ConfigureWithoutCarrier=yes alone (netplan 0.106 src/networkd.c). Only
# from systemd 246 does IgnoreCarrierLoss= default to ConfigureWithoutCarrier= (systemd PR #15619, merged
# 2020-05-29, "all the configuration added during initial interface bring-up will be lost at the first
# carrier up/down"); before it a link flap drops the rail's address and with it the RoCEv2 GID. There the
# older equivalent goes in as a drop-in of netplan's .network file (systemd.network(5), "foo.network.d/").
CARRIER_LOSS_FIXED = 246
DROPIN = "etc/systemd/network/10-netplan-{rail}.network.d/fabricgen-ignore-carrier-loss.conf"
DROPIN_TEXT = (b"# fabricgen: systemd < 246 does not keep a ConfigureWithoutCarrier= link's addresses on a carrier "
               b"loss by itself\n[Network]\nIgnoreCarrierLoss=yes\n")


class Failed(RuntimeError):
    pass


def read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def stage_config(root: str, stage: str) -> None:
    """Copy the host's netplan YAML (every file, ours and the others) under `stage`, modes kept: netplan
    warns about world-readable files, and a warning is not ours to add."""
    for d in NETPLAN_DIRS:
        src = os.path.join(root + "/", d)
        if not os.path.isdir(src):
            continue
        os.makedirs(os.path.join(stage, d), exist_ok=True)
        for name in sorted(os.listdir(src)):
            if name.endswith(".yaml") and os.path.isfile(os.path.join(src, name)):
                shutil.copy2(os.path.join(src, name), os.path.join(stage, d, name))


def generate(stage: str) -> None:
    try:
        done = subprocess.run(["netplan", "generate", "--root-dir", stage], capture_output=True, text=True,
                              timeout=120)
    except FileNotFoundError:
        raise Failed("netplan is not installed (fabricgen_netplan_apply: false applies with iproute2 only)") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise Failed(f"netplan generate failed: {last} (fix the netplan file it names, then run again)")


def rule_blocks(text: str) -> list:
    """90-netplan.rules as [(key, lines)]: netplan heads each device's rules with a
    `# netplan: network.<type>.<id> ...` comment (src/util.c), lines before the first one have key ""."""
    blocks: list = [("", [])]
    for line in text.splitlines(keepends=True):
        m = re.match(r"# netplan: (network\.\S+)", line)
        if m:
            blocks.append((m.group(1), []))
        blocks[-1][1].append(line)
    return [b for b in blocks if b[1]]


def rails_rules(installed: bytes | None, staged: bytes | None, rails: list) -> bytes | None:
    """The installed rules file with the rails' blocks as netplan generates them now, every other block
    as it is installed."""
    mine = {f"network.ethernets.{r}" for r in rails}
    keep = [b for b in rule_blocks((installed or b"").decode()) if b[0] not in mine]
    new = [b for b in rule_blocks((staged or b"").decode()) if b[0] in mine]
    text = "".join("".join(lines) for _, lines in keep + new)
    return text.encode() if text else None


def others_differ(root: str, stage: str, rails: list) -> list:
    """netplan output (not the rails') that differs between the host and what netplan would write now."""
    mine = {f"10-netplan-{r}.{ext}" for r in rails for ext in ("network", "link")}
    out = []
    for d in (NETWORKD,) + OTHER_OUTPUT:
        names = set()
        for base in (root + "/", stage):
            path = os.path.join(base, d)
            if os.path.isdir(path):
                names |= {n for n in os.listdir(path) if "netplan" in n and n not in mine}
        for name in sorted(names):
            have, want = os.path.join(root + "/", d, name), os.path.join(stage, d, name)
            if os.path.isdir(have) or os.path.isdir(want):
                continue
            if d == "run/udev/rules.d" and name == os.path.basename(UDEV_RULES):
                mine_keys = {f"network.ethernets.{r}" for r in rails}
                a = [b for b in rule_blocks((read(have) or b"").decode()) if b[0] not in mine_keys]
                b = [b for b in rule_blocks((read(want) or b"").decode()) if b[0] not in mine_keys]
                if a != b:
                    out.append(f"/{d}/{name} (other devices' blocks)")
            elif read(have) != read(want):
                out.append(f"/{d}/{name}")
    return out


def write_atomic(path: str, data: bytes | None) -> None:
    if data is None:
        if os.path.exists(path):
            os.unlink(path)
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".fabricgen-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)          # as netplan writes them
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def networkctl(*args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["networkctl", *args], capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        raise Failed("networkctl not found, yet systemd runs: install systemd-networkd or set "
                     "fabricgen_netplan_apply: false") from None


def systemd_version() -> int | None:
    """networkd's version as `networkctl --version` prints it ("systemd 245 (245.4-4ubuntu3)"), or None."""
    try:
        done = subprocess.run(["networkctl", "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r"systemd (\d+)", done.stdout)
    return int(m.group(1)) if done.returncode == 0 and m else None


def apply(args: dict) -> list:
    root = (args.get("root") or "").rstrip("/")
    rails = sorted(args.get("rails") or [])
    check = bool(args.get("check"))
    lines = []
    with tempfile.TemporaryDirectory(prefix="fabricgen-netplan-") as stage:
        stage_config(root, stage)
        generate(stage)
        writes = []             # (path on the host, content or None to remove)
        changed_rails = []
        version = systemd_version()
        for rail in rails:
            differs = False
            for ext in ("network", "link"):
                rel = f"{NETWORKD}/10-netplan-{rail}.{ext}"
                want = read(os.path.join(stage, rel))
                if read(os.path.join(root + "/", rel)) != want:
                    writes.append((f"{root}/{rel}", want))
                    differs = True
            # unsure of the version (networkctl unreadable): the drop-in, which a newer systemd reads as its default
            old = version is None or version < CARRIER_LOSS_FIXED
            staged = read(os.path.join(stage, f"{NETWORKD}/10-netplan-{rail}.network")) or b""
            want = DROPIN_TEXT if old and b"ConfigureWithoutCarrier=yes" in staged else None
            dropin = f"{root}/{DROPIN.format(rail=rail)}"
            if read(dropin) != want:
                writes.append((dropin, want))
                differs = True
            if differs:
                changed_rails.append(rail)
        installed_rules = read(f"{root}/{UDEV_RULES}")
        rules = rails_rules(installed_rules, read(os.path.join(stage, UDEV_RULES)), rails)
        if rules != installed_rules:
            writes.append((f"{root}/{UDEV_RULES}", rules))
        pending = others_differ(root, stage, rails)
    if pending:
        lines.append("note: other netplan configuration is not applied yet and was left as it is: "
                     + ", ".join(pending) + " (its owner applies it, e.g. `netplan apply`)")
    for path, data in writes:
        if not check:
            write_atomic(path, data)
        lines.append(f"change: {'remove ' if data is None else ''}{path}")
    if not writes:
        lines.append("ok: rails as netplan generates them")
    if check or not changed_rails or not args.get("networkctl"):
        return lines
    done = networkctl("reload")
    if done.returncode != 0:
        raise Failed(f"networkctl reload failed: {done.stderr.strip() or done.returncode}")
    done = networkctl("reconfigure", *changed_rails)
    # `reconfigure` came with systemd 246 (NEWS); before it, `reload` left the links as they were and
    # fabricgen_rails.py sets the same state with iproute2 right after this
    if done.returncode != 0 and "Unknown command verb" not in done.stderr:
        raise Failed(f"networkctl reconfigure {' '.join(changed_rails)} failed: "
                     f"{done.stderr.strip() or done.returncode}")
    lines.append("change: networkctl reconfigure " + " ".join(changed_rails))
    return lines


def main() -> int:
    try:
        args = json.loads(os.environ.get("FG_NETPLAN") or "{}")
        # a netdev name is at most 15 bytes without "/" or whitespace (IFNAMSIZ, dev_valid_name()): it
        # becomes part of paths here, so nothing else passes
        if not isinstance(args, dict) or not all(
                isinstance(r, str) and re.fullmatch(r"[A-Za-z0-9_.:@-]{1,15}", r) and r not in (".", "..")
                for r in args.get("rails") or []):
            raise ValueError("rails must be a list of netdev names")
    except ValueError as exc:
        print(f"error: $FG_NETPLAN is not the rails' apply settings: {exc}")
        return 2
    try:
        for line in apply(args):
            print(line)
    except (Failed, OSError, subprocess.SubprocessError) as exc:
        print(f"error: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
