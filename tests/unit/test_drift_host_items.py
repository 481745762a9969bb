"""Host drift names each route, rule, interface setting and sysctl the playbook's probes would
change (generator/drift/host_state.py), from the lines those probes print in check mode:
playbooks/files/fabricgen_rails.py (`change: ip ...`) and the sysctl task (`change: KEY = HAVE -> WANT`)."""

from __future__ import annotations

from generator.drift.host_state import RAILS_TASK, SYSCTL_TASK, host_items


def test_rails_probe_lines_become_routes_rules_and_interfaces():
    out = ("ok: ens1f0np0\n"
           "change: ip link set dev ens2f0np0 mtu 4200\n"
           "change: ip route replace 172.16.0.0/24 via 172.16.0.128 dev ens2f0np0 table 102\n"
           "change: ip rule del priority 102 from 10.9.9.9 table 7\n"
           "change: ip rule add from 172.16.0.129 table 102 priority 102 protocol static\n"
           "change: ip addr add 172.16.0.129/31 dev ens2f0np0\n")
    assert host_items(RAILS_TASK, out) == [
        ("interfaces", {"path": "ens2f0np0 mtu", "intended": "4200", "actual": "different"}),
        ("routes", {"path": "172.16.0.0/24 table 102 dev ens2f0np0", "intended": "via 172.16.0.128",
                    "actual": "missing or different"}),
        ("rules", {"path": "priority 102 from 10.9.9.9 table 7",
                   "intended": "absent (not fabricgen's rule at its priority)", "actual": "present"}),
        ("rules", {"path": "priority 102 from 172.16.0.129", "intended": "lookup 102", "actual": "missing"}),
        ("interfaces", {"path": "ens2f0np0 address 172.16.0.129/31", "intended": "present", "actual": "missing"}),
    ]


def test_sysctl_lines_name_key_and_values():
    out = "change: net.ipv4.conf.all.arp_ignore = 0 -> 1\nabsent: net.ipv4.foo (this kernel has no such key yet)\n"
    assert host_items(SYSCTL_TASK, out) == [
        ("sysctl", {"path": "net.ipv4.conf.all.arp_ignore", "intended": "1", "actual": "0"})]


def test_other_tasks_and_unknown_lines_are_left_to_the_task_level_entry():
    assert host_items("Install the netplan file", "change: ip route replace x via y dev z table 1\n") == []
    assert host_items(RAILS_TASK, "change: ip neigh add 1.2.3.4 dev x\n") == []
