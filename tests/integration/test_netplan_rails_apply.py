"""playbooks/files/fabricgen_netplan.py with the real `netplan generate` on a root prefix (issue 33,
item 7): the rails' networkd files are installed and reconfigured, and another netplan file's edit
that nobody applied yet stays unapplied, where a global `netplan generate` (the old apply) rewrites it.

networkctl is the one stand-in (no systemd-networkd runs here): a fake on PATH that logs its argv and,
as networkctl(1) does, refuses an unknown verb and a link that does not exist.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

SCRIPT = Path(__file__).resolve().parents[2] / "playbooks/files/fabricgen_netplan.py"
RAILS = ["ens1f0np0", "ens2f0np0"]

OURS = """network:
  version: 2
  ethernets:
    ens1f0np0:
      renderer: networkd
      optional: true
      ignore-carrier: true
      mtu: 4200
      addresses: [172.16.0.1/31]
      routes:
        - {to: 172.16.0.0/24, via: 172.16.0.0, table: 101}
      routing-policy:
        - {from: 172.16.0.1, table: 101, priority: 101}
    ens2f0np0:
      renderer: networkd
      optional: true
      ignore-carrier: true
      mtu: 4200
      addresses: [172.16.0.3/31]
"""
MGMT_APPLIED = "network:\n  version: 2\n  ethernets:\n    eno1:\n      dhcp4: true\n"
MGMT_PENDING = "network:\n  version: 2\n  ethernets:\n    eno1:\n      addresses: [10.9.9.9/24]\n"

# networkctl(1), systemd 252 (or FAKE_SYSTEMD_VERSION): src/network/networkctl.c dispatches on the verb table ("Unknown command
# verb '%s'." from src/shared/verbs.c otherwise) and resolves each link name over rtnetlink
# ("Failed to resolve interface \"%s\": No such device" from rtnl_resolve_interface_or_warn)
FAKE_NETWORKCTL = """#!/bin/sh
# --version: "systemd <N> (<package version>)" then the feature line (src/shared/build.c version())
if [ "$1" = --version ]; then
  echo "systemd $FAKE_SYSTEMD_VERSION ($FAKE_SYSTEMD_VERSION.4-4ubuntu3)"
  echo "+PAM +AUDIT +SELINUX +APPARMOR +IMA +SMACK +SECCOMP +GCRYPT"
  exit 0
fi
echo "$*" >> "$FAKE_NETWORKCTL_LOG"
verb="$1"; shift
case "$verb" in
  reload) exit 0 ;;
  reconfigure)
    for link in "$@"; do
      case " $FAKE_NETWORKCTL_LINKS " in
        *" $link "*) ;;
        *) echo "Failed to resolve interface \\"$link\\": No such device" >&2; exit 1 ;;
      esac
    done
    exit 0 ;;
  *) echo "Unknown command verb '$verb'." >&2; exit 1 ;;
esac
"""


@pytest.fixture(scope="module")
def netplan() -> str:
    path = shutil.which("netplan") or ("/usr/sbin/netplan" if Path("/usr/sbin/netplan").exists() else None)
    if path is None:
        pytest.skip("netplan not found: apt-get install -y netplan.io")
    return path


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)


def _tree(root: Path) -> dict:
    """Every file netplan writes under root/run, with its content."""
    run = root / "run"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(run.rglob("*"))
            if p.is_file() and p.parent != run / "netplan"} if run.exists() else {}


@pytest.fixture
def host(tmp_path, netplan):
    """A root prefix as a host has it: the admin's management file applied (generated) at boot, then
    edited and not applied yet, and our rendered file just installed."""
    root = tmp_path / "root"
    _write(root / "etc/netplan/50-cloud-init.yaml", MGMT_APPLIED)
    subprocess.run([netplan, "generate", "--root-dir", str(root)], check=True, capture_output=True, timeout=60)
    _write(root / "etc/netplan/50-cloud-init.yaml", MGMT_PENDING)
    _write(root / "etc/netplan/60-fabricgen.yaml", OURS)
    fakes = tmp_path / "bin"
    fakes.mkdir()
    (fakes / "networkctl").write_text(FAKE_NETWORKCTL)
    (fakes / "networkctl").chmod(0o755)
    return root, fakes, tmp_path / "networkctl.log"


def _run(root: Path, fakes: Path, log: Path, links=RAILS, systemd=252, **args) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{fakes}:{os.environ.get('PATH', '')}:/usr/sbin:/sbin",
           "FAKE_NETWORKCTL_LOG": str(log), "FAKE_NETWORKCTL_LINKS": " ".join(links),
           "FAKE_SYSTEMD_VERSION": str(systemd),
           "FG_NETPLAN": json.dumps({"root": str(root), "rails": RAILS, "networkctl": True, **args})}
    return subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env, timeout=180)


def test_rails_applied_and_the_pending_management_edit_left_alone(host, netplan, tmp_path):
    root, fakes, log = host
    mgmt = root / "run/systemd/network/10-netplan-eno1.network"
    before = mgmt.read_bytes()
    assert b"DHCP=ipv4" in before
    rules_before = (root / "run/udev/rules.d/90-netplan.rules").read_text()

    # what netplan writes for the whole of /etc/netplan: the rails' files are compared with it
    full = tmp_path / "full"
    shutil.copytree(root / "etc", full / "etc")
    subprocess.run([netplan, "generate", "--root-dir", str(full)], check=True, capture_output=True, timeout=60)

    checked = _run(root, fakes, log, check=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "change: " in checked.stdout and not (root / "run/systemd/network/10-netplan-ens1f0np0.network").exists()
    assert not log.exists()

    done = _run(root, fakes, log)
    assert done.returncode == 0, done.stdout + done.stderr
    for rail in RAILS:
        for ext in ("network", "link"):
            rel = f"run/systemd/network/10-netplan-{rail}.{ext}"
            assert (root / rel).read_bytes() == (full / rel).read_bytes(), rel
    # the admin's edit is not live: eno1's networkd file is the one generated before it, and the run says so
    assert mgmt.read_bytes() == before
    assert "note: other netplan configuration is not applied yet" in done.stdout
    assert "/run/systemd/network/10-netplan-eno1.network" in done.stdout
    # the rails' NetworkManager deny-list blocks are added after eno1's, which stays as it was
    rules = (root / "run/udev/rules.d/90-netplan.rules").read_text()
    assert rules.startswith(rules_before) and "network.ethernets.eno1 " in rules_before
    assert all(f"network.ethernets.{r} " in rules[len(rules_before):] for r in RAILS)
    assert log.read_text().splitlines() == ["reload", "reconfigure " + " ".join(RAILS)]

    # idempotent: nothing written, networkd not touched again
    again = _run(root, fakes, log)
    assert again.returncode == 0 and "change: " not in again.stdout, again.stdout
    assert "ok: rails as netplan generates them" in again.stdout
    assert len(log.read_text().splitlines()) == 2

    # one rail's address changes: only that rail's file is written and only that rail reconfigured
    _write(root / "etc/netplan/60-fabricgen.yaml", OURS.replace("172.16.0.3/31", "172.16.0.5/31"))
    one = _run(root, fakes, log)
    assert one.returncode == 0, one.stdout
    assert [x for x in one.stdout.splitlines() if x.startswith("change: ")] == [
        f"change: {root}/run/systemd/network/10-netplan-ens2f0np0.network",
        "change: networkctl reconfigure ens2f0np0"]
    assert log.read_text().splitlines()[2:] == ["reload", "reconfigure ens2f0np0"]
    assert mgmt.read_bytes() == before


def test_the_old_global_generate_applies_the_pending_edit(host, netplan):
    """Why the apply stages: what the old apply ran (`netplan generate` over the whole root, then
    `networkctl reload`) rewrites eno1's networkd file from the unapplied edit, and networkd would
    reconfigure eno1 on the reload (networkctl(1) "reload": a modified .network file)."""
    root, _, _ = host
    mgmt = root / "run/systemd/network/10-netplan-eno1.network"
    before = mgmt.read_bytes()
    subprocess.run([netplan, "generate", "--root-dir", str(root)], check=True, capture_output=True, timeout=60)
    assert mgmt.read_bytes() != before and b"Address=10.9.9.9/24" in mgmt.read_bytes()


def test_a_bad_netplan_file_is_one_error_and_nothing_written(host):
    root, fakes, log = host
    _write(root / "etc/netplan/60-fabricgen.yaml", OURS.replace("mtu: 4200", "mtu: [4200"))
    before = _tree(root)
    bad = _run(root, fakes, log)
    assert bad.returncode == 1
    errors = [x for x in bad.stdout.splitlines() if x.startswith("error: ")]
    assert len(errors) == 1 and "netplan generate failed" in errors[0], bad.stdout
    assert _tree(root) == before and not log.exists()


def test_a_rail_networkd_does_not_know_fails(host):
    root, fakes, log = host
    done = _run(root, fakes, log, links=RAILS[:1])
    assert done.returncode == 1
    assert 'networkctl reconfigure ens1f0np0 ens2f0np0 failed: Failed to resolve interface "ens2f0np0"' \
        in done.stdout, done.stdout


def test_ignore_carrier_on_systemd_before_246_gets_ignore_carrier_loss(host, netplan):
    """netplan writes ignore-carrier as ConfigureWithoutCarrier=yes only; systemd < 246 then drops the
    rail's address on the first carrier loss (IgnoreCarrierLoss= defaults to it only from 246, systemd
    PR #15619): there each rail gets an IgnoreCarrierLoss=yes drop-in, reconfigured; after an upgrade it goes."""
    root, fakes, log = host
    dropins = [root / f"etc/systemd/network/10-netplan-{r}.network.d/fabricgen-ignore-carrier-loss.conf"
               for r in RAILS]
    done = _run(root, fakes, log, systemd=245)
    assert done.returncode == 0, done.stdout
    for d in dropins:
        assert d.read_text().splitlines()[1:] == ["[Network]", "IgnoreCarrierLoss=yes"]
    assert "ConfigureWithoutCarrier=yes" in (root / "run/systemd/network/10-netplan-ens1f0np0.network").read_text()
    again = _run(root, fakes, log, systemd=245)
    assert "change: " not in again.stdout, again.stdout

    upgraded = _run(root, fakes, log, systemd=252)
    assert upgraded.returncode == 0 and not any(d.exists() for d in dropins), upgraded.stdout
    assert log.read_text().splitlines()[-2:] == ["reload", "reconfigure " + " ".join(RAILS)]
    # a host on 246 or later never gets one
    assert "fabricgen-ignore-carrier-loss" not in _run(root, fakes, log, systemd=246).stdout


@pytest.mark.parametrize("rail", ["../../etc/x", "a b", "", "x" * 16, ".."])
def test_a_rail_that_is_no_netdev_name_is_refused(host, rail):
    root, fakes, log = host
    env = {**os.environ, "FG_NETPLAN": json.dumps({"root": str(root), "rails": [rail]})}
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env, timeout=60)
    assert (done.returncode, done.stdout) == (2, "error: $FG_NETPLAN is not the rails' apply settings: rails must "
                                                 "be a list of netdev names\n")
