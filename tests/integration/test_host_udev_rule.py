"""The rendered udev rule, run by the real `udevadm test` (systemd's udev, the same code udevd runs
for an event): on an "add" of a rail netdev it tags the device "systemd" and sets SYSTEMD_WANTS to
that netdev's instance of fabricgen-roce-qos@.service, which the real `systemd-analyze verify`
accepts (tests/integration/test_host_unit_verify.py checks the unit itself).

Where this stops short of a GPU server, and why:
- There is no ConnectX NIC here, and sysfs cannot be faked for udev: `udevadm test` reads the
  device from the kernel's /sys, where a netdev's driver is whatever bound it. So the device is a
  veth named as the rail, in a network namespace of its own (a private sysfs), and the rule's
  DRIVERS=="mlx5_core" is first shown to keep the rule away from it (a netdev of another driver gets
  nothing), then left out so the rest of each line is run: ACTION, SUBSYSTEM, NAME/KERNEL, the TAG
  and the SYSTEMD_WANTS assignment.
- What PID 1 does with SYSTEMD_WANTS (the device unit's Wants=) is not run: no systemd is PID 1
  here. The property is shown as udev hands it over, backslashes kept; systemd 233 to 257 then drop
  them (systemd issue 16735), which FG330 warns about.
- systemd 252 has no `udevadm verify` (new in 254); `udevadm test` logs "<file>:<line> Invalid
  key ..." for a line it cannot parse, and the tests read that.

Each run is in a private mount and network namespace (unshare): its own /sys, a tmpfs on /run and
on every udev rules directory (so only the files under test are read, and nothing on the machine
is written), and the veth, which goes with the namespace. udevadm comes from $FABRICGEN_UDEVADM or
PATH; .ci/run takes it out of Debian's udev package without installing the package (whose postinst
would start systemd-udevd on a machine that has none).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_host_unit_verify import SYSTEM_UNITS, _root, _verify

from generator.intent.loader import parse_yaml, validate_data
from generator.plan.compile import compile_plan
from generator.render.hosts import UDEV_RULES, render_host, systemd_escape

pytestmark = [pytest.mark.integration, pytest.mark.root]

INTENT = """
fabric: {name: udev}
topology: {kind: single-switch, nodes: 2, rails: 3, nic_speed: 400G, switches: {leaf: {model: SN4700}}}
addressing: {loopbacks: 10.255.0.0/24, rails: 172.16.0.0/24, management: 192.168.0.0/24}
hosts:
  rails:
    - {netdev: ens1f0np0, rdma: mlx5_0}
    - {netdev: enp9s0f1np1, rdma: mlx5_1}
    - {netdev: rail-2, rdma: mlx5_2}
"""
NETDEVS = ["ens1f0np0", "enp9s0f1np1", "rail-2"]

# In the namespace: the device, a sysfs of this namespace, tmpfs over /run and the rules
# directories (udev reads /etc/udev/rules.d, /run/udev/rules.d, /usr/local/lib/udev/rules.d and
# /usr/lib/udev/rules.d, udev(7)), the files under test in /run/udev/rules.d, then one event.
_IN_NAMESPACE = r"""set -eu
ip link add "$FG_KERNEL" type veth peer name fgpeer0
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /run
for d in /etc/udev/rules.d /usr/local/lib/udev/rules.d /usr/lib/udev/rules.d /lib/udev/rules.d; do
    if [ -d "$d" ]; then mount -t tmpfs tmpfs "$d"; fi
done
mkdir -p /run/udev/rules.d
cp "$FG_RULES"/*.rules /run/udev/rules.d/
exec "$FG_UDEVADM" test --action=add "/sys/class/net/$FG_KERNEL"
"""
_PROPERTY = re.compile(r"^([A-Z][A-Z0-9_]*)=(.*)$")


@pytest.fixture(scope="module")
def udevadm() -> str:
    path = os.environ.get("FABRICGEN_UDEVADM") or shutil.which("udevadm")
    if not path:
        pytest.skip("udevadm not found: set FABRICGEN_UDEVADM (.ci/run extracts it from Debian's udev package)")
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("udevadm test runs in a private mount and network namespace: needs root and unshare")
    r = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        pytest.skip(f"{path} does not run here: {r.stderr.strip()}")
    return path


def _rules() -> str:
    data, lines = parse_yaml(INTENT, "udev.yaml")
    plan = compile_plan(validate_data(data, lines, "udev.yaml"))
    host = plan.hosts[0]
    return render_host(plan, host)[f"hosts/{host.name}/{UDEV_RULES}"]


def _event(udevadm: str, tmp_path: Path, kernel: str, rules: dict[str, str]) -> tuple[dict[str, str], str]:
    """(properties udev gives the netdev KERNEL on "add", udevadm's log) with only RULES loaded."""
    rules_dir = tmp_path / f"rules-{len(list(tmp_path.glob('rules-*')))}"
    rules_dir.mkdir()
    for name, text in rules.items():
        (rules_dir / name).write_text(text)
    env = {**os.environ, "FG_KERNEL": kernel, "FG_RULES": str(rules_dir), "FG_UDEVADM": udevadm}
    r = subprocess.run(["unshare", "--mount", "--net", "--propagation", "private", "sh", "-c", _IN_NAMESPACE],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    props = dict(m.groups() for line in r.stdout.splitlines() if (m := _PROPERTY.match(line)))
    return props, r.stderr


def _complaints(log: str) -> list[str]:
    """udevadm's lines about a line of the rules file under test ("<file>:<n> Invalid key ...")."""
    return [line for line in log.splitlines() if re.search(rf"{re.escape(UDEV_RULES)}:\d+ ", line)]


def test_the_rendered_rule_parses_and_keeps_away_from_other_drivers(udevadm, tmp_path):
    rules = _rules()
    assert rules.count('DRIVERS=="mlx5_core"') == 3 * len(NETDEVS)      # two net lines and one infiniband line each
    props, log = _event(udevadm, tmp_path, "ens1f0np0", {UDEV_RULES: rules})
    assert f"Reading rules file: /run/udev/rules.d/{UDEV_RULES}" in log
    assert _complaints(log) == []
    # a veth named as a rail: its driver is not mlx5_core, so nothing is wanted
    assert props["INTERFACE"] == "ens1f0np0" and "SYSTEMD_WANTS" not in props and "TAGS" not in props, props


def test_a_broken_line_is_reported(udevadm, tmp_path):
    """The check above can fail: a misspelt key is named with its file and line."""
    broken = _rules().replace("TAG+=", "TAGS+=", 1)
    _, log = _event(udevadm, tmp_path, "ens1f0np0", {UDEV_RULES: broken})
    first = next(n for n, line in enumerate(broken.splitlines(), 1) if "TAGS+=" in line)
    assert _complaints(log) and all(f"{UDEV_RULES}:{first} " in line for line in _complaints(log)), log


@pytest.mark.parametrize("netdev", NETDEVS)
def test_an_added_rail_netdev_wants_its_unit_instance(udevadm, tmp_path, netdev):
    """KERNEL== (no rule named the netdev: net.ifnames=0, or the kernel's own name)."""
    rules = _rules().replace(', DRIVERS=="mlx5_core"', "")
    props, log = _event(udevadm, tmp_path, netdev, {UDEV_RULES: rules})
    assert _complaints(log) == []
    assert props["TAGS"] == ":systemd:"
    # one instance, the netdev as systemd-escape writes it ('-' -> \x2d), backslash and all
    want = {"ens1f0np0": "ens1f0np0", "enp9s0f1np1": "enp9s0f1np1", "rail-2": r"rail\x2d2"}[netdev]
    assert want == systemd_escape(netdev)
    assert props["SYSTEMD_WANTS"] == f"fabricgen-roce-qos@{want}.service", props


def test_a_netdev_renamed_by_an_earlier_rule_is_matched_by_its_new_name(udevadm, tmp_path):
    """NAME==: at a driver reload the kernel calls the new netdev eth<n> and 80-net-setup-link.rules
    names it (here an 80- rule sets NAME= as net_setup_link would); the KERNEL== line must not add
    the instance a second time."""
    rules = _rules().replace(', DRIVERS=="mlx5_core"', "")
    naming = 'ACTION=="add", SUBSYSTEM=="net", KERNEL=="eth7", NAME="enp9s0f1np1"\n'
    props, log = _event(udevadm, tmp_path, "eth7", {"80-name.rules": naming, UDEV_RULES: rules})
    assert _complaints(log) == []
    assert props["INTERFACE_OLD"] == "eth7" and props["INTERFACE"] == "enp9s0f1np1", props
    assert props["SYSTEMD_WANTS"] == "fabricgen-roce-qos@enp9s0f1np1.service"
    # an eth<n> no rule names is no rail
    props, _ = _event(udevadm, tmp_path, "eth7", {UDEV_RULES: rules})
    assert "SYSTEMD_WANTS" not in props


def test_the_wanted_instance_verifies(udevadm, tmp_path):
    """The instance name udev hands over is one `systemd-analyze verify` accepts with the rendered
    unit (for names without a backslash: systemd before 258 drops it, FG330)."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None or not (SYSTEM_UNITS / "sysinit.target").exists():
        pytest.skip("systemd-analyze and the systemd unit files are needed (apt-get install -y systemd)")
    data, lines = parse_yaml(INTENT, "udev.yaml")
    plan = compile_plan(validate_data(data, lines, "udev.yaml"))
    host = plan.hosts[0]
    files = render_host(plan, host)
    rules = files[f"hosts/{host.name}/{UDEV_RULES}"].replace(', DRIVERS=="mlx5_core"', "")
    props, _ = _event(udevadm, tmp_path, "enp9s0f1np1", {UDEV_RULES: rules})
    unit = props["SYSTEMD_WANTS"]
    root = _root(tmp_path, files, host.name)
    instance = unit.removeprefix("fabricgen-roce-qos@").removesuffix(".service")
    r = _verify(analyze, root, instance)
    assert r.returncode == 0 and r.stderr == "", r.stderr


# An RDMA device for the "infiniband" event. No RDMA device exists here (no ConnectX, no rdma_rxe in
# this kernel), so /sys is a tmpfs laid out as the kernel lays out an mlx5 function
# (drivers/infiniband/core/device.c registers <pci>/infiniband/<dev> in class "infiniband"; its
# uevent carries NAME=<dev>, ib_device_uevent) with the `driver` link DRIVERS== follows up the
# parents. sd-device refuses a syspath not on sysfs unless $SYSTEMD_DEVICE_VERIFY_SYSFS=0
# (systemd docs/ENVIRONMENT.md: "useful for testing purposes"); udev runs the rules as for a
# real device, and `udevadm test` prints the RUN programs it would run ("run: '...'") without
# running them.
_IB_IN_NAMESPACE = r"""set -eu
mount -t tmpfs tmpfs /sys
pci=/sys/devices/pci0000:00/0000:08:00.0
mkdir -p "$pci/infiniband/$FG_RDMA" "/sys/bus/pci/drivers/$FG_DRIVER" /sys/class/infiniband
printf 'DRIVER=%s\nPCI_SLOT_NAME=0000:08:00.0\n' "$FG_DRIVER" > "$pci/uevent"
ln -s "../../../bus/pci/drivers/$FG_DRIVER" "$pci/driver"
ln -s ../../../bus/pci "$pci/subsystem"
printf 'NAME=%s\n' "$FG_RDMA" > "$pci/infiniband/$FG_RDMA/uevent"
ln -s ../../../../../class/infiniband "$pci/infiniband/$FG_RDMA/subsystem"
ln -s "../../devices/pci0000:00/0000:08:00.0/infiniband/$FG_RDMA" "/sys/class/infiniband/$FG_RDMA"
mount -t tmpfs tmpfs /run
for d in /etc/udev/rules.d /usr/local/lib/udev/rules.d /usr/lib/udev/rules.d /lib/udev/rules.d; do
    if [ -d "$d" ]; then mount -t tmpfs tmpfs "$d"; fi
done
mkdir -p /run/udev/rules.d
cp "$FG_RULES"/*.rules /run/udev/rules.d/
exec "$FG_UDEVADM" test --action="$FG_ACTION" "/sys/class/infiniband/$FG_RDMA"
"""


def _ib_event(udevadm: str, tmp_path: Path, rdma: str, *, action: str = "add", driver: str = "mlx5_core"
              ) -> tuple[list[str], str]:
    """(the programs udev would RUN for the RDMA device RDMA's ACTION, udevadm's log) with the rendered rule."""
    rules_dir = tmp_path / f"ib-{len(list(tmp_path.glob('ib-*')))}"
    rules_dir.mkdir()
    (rules_dir / UDEV_RULES).write_text(_rules())
    env = {**os.environ, "FG_RDMA": rdma, "FG_ACTION": action, "FG_DRIVER": driver, "FG_RULES": str(rules_dir),
           "FG_UDEVADM": udevadm, "SYSTEMD_DEVICE_VERIFY_SYSFS": "0"}
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", _IB_IN_NAMESPACE],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    props = dict(m.groups() for line in r.stdout.splitlines() if (m := _PROPERTY.match(line)))
    assert props["SUBSYSTEM"] == "infiniband" and props["ACTION"] == action, r.stdout
    return re.findall(r"^run: '(.*)'$", r.stdout, re.M), r.stderr


@pytest.mark.parametrize(("rdma", "netdev"), [("mlx5_0", "ens1f0np0"), ("mlx5_2", "rail-2")])
def test_an_rdma_device_registering_again_restarts_its_rails_unit(udevadm, tmp_path, rdma, netdev):
    """mlx5 suspend/resume or devlink reload: the RDMA device registers again ("infiniband" add) and
    no "net" add comes. The rule restarts the rail's instance (still active, so a start would do
    nothing); the unit's command then sets the ToS again (test_roce_qos_script.py)."""
    runs, log = _ib_event(udevadm, tmp_path, rdma)
    # udevadm traces each RUN it collects with its file and line; anything else there is a complaint
    assert [line for line in _complaints(log) if " RUN '" not in line] == [], log
    assert runs == [f"/bin/systemctl --no-block restart fabricgen-roce-qos@{systemd_escape(netdev)}.service"], log
    # rdma-core renames an inbox device after its "add"; the kernel announces the name with "move"
    runs, _ = _ib_event(udevadm, tmp_path, rdma, action="move")
    assert runs == [f"/bin/systemctl --no-block restart fabricgen-roce-qos@{systemd_escape(netdev)}.service"]


def test_other_rdma_devices_and_events_restart_nothing(udevadm, tmp_path):
    assert _ib_event(udevadm, tmp_path, "mlx5_7")[0] == []                   # not a rail of this host
    assert _ib_event(udevadm, tmp_path, "mlx5_0", driver="irdma")[0] == []   # another driver's device
    assert _ib_event(udevadm, tmp_path, "mlx5_0", action="remove")[0] == []
