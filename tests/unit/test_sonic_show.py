"""SONiC output parsers and the SONiC driver's getters on outputs in the formats SONiC prints.

The samples are written here by hand from their sources, not taken from the lab: tabulate
"simple" tables as intfutil / pfcstat print them (sonic-utilities @691b1bbc scripts/intfutil,
scripts/pfcstat: right-aligned cells, headers padded by 2, "Last cached time was ..." after a
`sonic-clear pfccounters`), portstat -j (utilities_common/portstat.py header_std with
netstat.table_as_json, counts with thousands commas), wredstat -j (scripts/wredstat build_json),
lldpd's json0 (lldpd tests/integration/test_lldpcli.py test_json0_output) and FRR's neighbor
JSON (the fields FRR topotests read from `show ip bgp neighbor X json`).
"""

from __future__ import annotations

import json

import pytest
from napalm.base import models
from napalm.base.test import helpers

from generator.devices import sonic_show
from generator.devices.commands import SONIC
from generator.devices.sonic import SonicDriver
from generator.lab.sonic_oper import speed_text, world_name

STATUS = """\
  Interface            Lanes    Speed    MTU    FEC    Alias    Vlan    Oper    Admin                                             Type    Asym PFC
-----------  ---------------  -------  -----  -----  -------  ------  ------  -------  -----------------------------------------------  ----------
  Ethernet0          0,1,2,3     400G   9216     rs    etp1a  routed      up       up  QSFP-DD Double Density 8X Pluggable Transceiver         off
  Ethernet4          4,5,6,7     400G   9100     rs    etp1b  routed    down       up                                              N/A         off
Ethernet256  256,257,258,259     200G   9216    N/A   etp33a   trunk    down     down                                              N/A         off
"""

PFC = """\
Last cached time was 2025-01-10 10:00:00.000000
  Port Rx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7
---------  ------  ------  ------  ------  ------  ------  ------  ------
Ethernet0       0       0       0   1,204       0       0       0       0
Ethernet4       0       0       0       0       0       0       0       0

Last cached time was 2025-01-10 10:00:00.000000
  Port Tx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7
---------  ------  ------  ------  ------  ------  ------  ------  ------
Ethernet0       0       0       0       7       0       0       0       0
Ethernet4       0       0       0       0     N/A       0       0       0
"""

PORTSTAT = {"Ethernet0": {"STATE": "U", "RX_OK": "1,234,567", "RX_BPS": "1.02 MB/s", "RX_UTIL": "0.00%",
                          "RX_ERR": "12", "RX_DRP": "3", "RX_OVR": "0", "TX_OK": "7,654,321",
                          "TX_BPS": "0.00 B/s", "TX_UTIL": "0.00%", "TX_ERR": "0", "TX_DRP": "1", "TX_OVR": "0"},
            "Ethernet4": {"STATE": "X", "RX_OK": "N/A", "RX_BPS": "N/A", "RX_UTIL": "N/A", "RX_ERR": "N/A",
                          "RX_DRP": "N/A", "RX_OVR": "N/A", "TX_OK": "0", "TX_BPS": "0.00 B/s", "TX_UTIL": "0.00%",
                          "TX_ERR": "0", "TX_DRP": "0", "TX_OVR": "0"}}

WRED = {"Ethernet0": {"time": "2025-01-10T10:00:00", "UC0": {"wreddroppacket": "0", "wreddropbytes": "0",
                                                            "ecnmarkedpacket": "0", "ecnmarkedbytes": "0"},
                      "UC3": {"wreddroppacket": "0", "wreddropbytes": "0", "ecnmarkedpacket": "2,500",
                              "ecnmarkedbytes": "2560000"},
                      "MC8": {"wreddroppacket": "0", "wreddropbytes": "0", "ecnmarkedpacket": "99",
                              "ecnmarkedbytes": "0"}}}

LLDP = {"lldp": [{"interface": [
    {"name": "eth0", "via": "LLDP", "rid": "1", "age": "0 day, 00:01:02",
     "chassis": [{"id": [{"type": "mac", "value": "00:00:00:00:00:02"}], "name": [{"value": "oob-sw"}],
                  "descr": [{"value": "Spectacular GNU/Linux 2016"}], "mgmt-ip": [{"value": "fe80::200:ff:fe00:2"}],
                  "capability": [{"type": "Bridge", "enabled": True}, {"type": "Wlan", "enabled": False}]}],
     "port": [{"id": [{"type": "mac", "value": "00:00:00:00:00:02"}], "descr": [{"value": "eth1"}],
               "ttl": [{"value": "120"}]}]},
    {"name": "Ethernet256", "via": "LLDP", "rid": "2", "age": "0 day, 00:01:02",
     "chassis": [{"id": [{"type": "mac", "value": "1c:34:da:00:00:01"}], "name": [{"value": "spine-1"}],
                  "descr": [{"value": "SONiC Software Version: SONiC.202411.1-abc - HwSku: Mellanox-SN5600-O128"}],
                  "capability": [{"type": "Bridge", "enabled": True}, {"type": "Router", "enabled": True},
                                 {"type": "Wlan", "enabled": False}, {"type": "Station", "enabled": False}]}],
     "port": [{"id": [{"type": "local", "value": "etp1a"}], "descr": [{"value": "leaf-1:swp33s0"}],
               "ttl": [{"value": "120"}]}]}]}]}

BGP = {"10.254.0.1": {"remoteAs": 65000, "localAs": 65101, "nbrExternalLink": True, "bgpVersion": 4,
                      "remoteRouterId": "10.255.0.1", "localRouterId": "10.255.0.3", "bgpState": "Established",
                      "bgpTimerUpMsec": 42000, "bgpTimerUpString": "00:00:42",
                      "bgpTimerUpEstablishedEpoch": 1736503200,
                      "addressFamilyInfo": {"ipv4Unicast": {"updateGroupId": 1, "subGroupId": 1,
                                                            "acceptedPrefixCounter": 5, "sentPrefixCounter": 6}},
                      "connectionsEstablished": 1, "connectionsDropped": 0},
       "10.254.0.3": {"remoteAs": 65000, "localAs": 65101, "bgpState": "Active",
                      "addressFamilyInfo": {"ipv4Unicast": {"acceptedPrefixCounter": 0}}}}

RUNNING = {"DEVICE_METADATA": {"localhost": {"hostname": "leaf-1", "mac": "1c:34:da:00:00:03"}},
           "PORT": {"Ethernet0": {"alias": "etp1a", "description": "gpu001:ens1f0np0"}},
           "BGP_GLOBALS": {"default": {"local_asn": "65101", "router_id": "10.255.0.3"}},
           "BGP_NEIGHBOR": {"default|10.254.0.1": {"asn": "65000", "name": "spine-1"},
                            "default|10.254.0.3": {"asn": "65000", "name": "spine-2", "admin_status": "down"}}}


def test_interfaces_status_columns_come_from_the_dash_runs():
    rows = sonic_show.interfaces_status(STATUS)
    assert sorted(rows) == ["Ethernet0", "Ethernet256", "Ethernet4"]
    assert rows["Ethernet0"]["Type"] == "QSFP-DD Double Density 8X Pluggable Transceiver"
    assert rows["Ethernet0"]["Asym PFC"] == "off"
    assert (rows["Ethernet4"]["Oper"], rows["Ethernet4"]["Admin"], rows["Ethernet4"]["MTU"]) == ("down", "up", "9100")
    assert rows["Ethernet256"]["Speed"] == "200G" and rows["Ethernet256"]["Alias"] == "etp33a"


def test_interfaces_status_without_a_table_is_an_error():
    with pytest.raises(sonic_show.ParseError):
        sonic_show.interfaces_status("Error: Redis connection refused\n")


def test_pfc_counters_both_tables_after_a_clear():
    rx, tx = sonic_show.pfc_counters(PFC)
    assert rx["Ethernet0"][3] == 1204 and set(rx["Ethernet0"]) == set(range(8))
    assert tx["Ethernet0"][3] == 7 and tx["Ethernet4"][4] == 0       # N/A counts as 0
    with pytest.raises(sonic_show.ParseError):
        sonic_show.pfc_counters(PFC.split("\n\n")[0])


def test_ecn_marked_per_unicast_queue():
    assert sonic_show.ecn_marked(WRED) == {"Ethernet0": {0: 0, 3: 2500}}


def test_lldp_json0():
    found = sonic_show.lldp_json0(LLDP)
    assert found["Ethernet256"] == [{"system_name": "spine-1", "port_id": "etp1a", "port_description": "leaf-1:swp33s0",
                                     "chassis_id": "1c:34:da:00:00:01",
                                     "system_description": LLDP["lldp"][0]["interface"][1]["chassis"][0]["descr"][0]
                                     ["value"], "capabilities": ["bridge", "router", "wlan", "station"],
                                     "enabled_capabilities": ["bridge", "router"]}]
    assert found["eth0"][0]["system_name"] == "oob-sw"


@pytest.mark.parametrize(("text", "release"), [
    ("SONiC Software Version: SONiC.202411.123-0a1b2c3\n", "202411"),
    ("SONiC Software Version: SONiC.202505\n", "202505"),
    ("SONiC Software Version: SONiC.master.1234-abcd\n", None)])
def test_release(text, release):
    assert sonic_show.release(text) == release


def test_counts_with_commas():
    assert [sonic_show.count(v) for v in ("1,234", "0", "N/A", "", None, "-5")] == [1234, 0, 0, 0, 0, -5]


@pytest.mark.parametrize(("ethernet", "alias", "name"), [
    ("Ethernet0", "etp1", "swp1"), ("Ethernet0", "etp1a", "swp1s0"), ("Ethernet4", "etp1b", "swp1s1"),
    ("Ethernet264", "etp34a", "swp34s0"), ("Ethernet8", "fortyGigE0/8", "Ethernet8"), ("Ethernet8", None, "Ethernet8")])
def test_world_name_from_the_alias(ethernet, alias, name):
    assert world_name(ethernet, alias) == name


@pytest.mark.parametrize(("mbps", "text"), [("400000", "400G"), ("25000", "25G"), ("2500", "2.5G"), ("100", "100M"),
                                            (None, None)])
def test_speed_as_intfutil_prints_it(mbps, text):
    assert speed_text(mbps) == text


# --- the driver's getters on these outputs (the SSH transport replaced: pure parsing) --------------
class FakeSonic(SonicDriver):
    def __init__(self, version: str):
        super().__init__("192.0.2.1", "admin", "x")
        self.outputs = {
            SONIC.show_version: f"SONiC Software Version: SONiC.{version}.5-abc\n",
            SONIC.show_interfaces_status: STATUS, SONIC.show_running: json.dumps(RUNNING),
            SONIC.show_counters_json: json.dumps(PORTSTAT), SONIC.show_pfc_counters: PFC,
            SONIC.show_ecn_json: json.dumps(WRED), SONIC.show_lldp_json: json.dumps(LLDP),
            SONIC.show_bgp_neighbors_json: json.dumps(BGP)}
        self.sent: list[str] = []

    def _check(self, command: str, **kwargs) -> str:
        self.sent.append(command)
        return self.outputs[command]

    def _run(self, command: str, read_timeout=None) -> tuple[str, int]:
        # an image without /etc/sonic/sonic_version.yml: the release comes from `show version`
        self.sent.append(command)
        return (self.outputs[command], 0) if command in self.outputs else ("No such file or directory", 1)


def test_getters_return_napalm_models():
    d = FakeSonic("202411")
    interfaces = d.get_interfaces()
    assert all(helpers.test_model(models.InterfaceDict, v) for v in interfaces.values())
    assert interfaces["Ethernet0"] == {"is_up": True, "is_enabled": True, "description": "gpu001:ens1f0np0",
                                       "last_flapped": -1.0, "speed": 400000.0, "mtu": 9216,
                                       "mac_address": "1c:34:da:00:00:03"}
    assert interfaces["Ethernet256"]["is_enabled"] is False and interfaces["Ethernet256"]["speed"] == 200000.0
    counters = d.get_interfaces_counters()
    assert all(helpers.test_model(models.InterfaceCounterDict, v) for v in counters.values())
    assert counters["Ethernet0"]["rx_errors"] == 12 and counters["Ethernet0"]["rx_unicast_packets"] == 1234567
    assert counters["Ethernet4"]["rx_errors"] == 0
    lldp = d.get_lldp_neighbors()
    assert lldp == {"Ethernet256": [{"hostname": "spine-1", "port": "etp1a"}]}     # eth0 (management) left out
    detail = d.get_lldp_neighbors_detail("Ethernet256")["Ethernet256"][0]
    assert helpers.test_model(models.LLDPNeighborDetailDict, detail)
    bgp = d.get_bgp_neighbors()
    assert bgp["global"]["router_id"] == "10.255.0.3"
    up, down = bgp["global"]["peers"]["10.254.0.1"], bgp["global"]["peers"]["10.254.0.3"]
    assert all(helpers.test_model(models.PeerDict, p) for p in (up, down))
    assert (up["is_up"], up["uptime"], up["remote_id"], up["description"]) == (True, 42, "10.255.0.1", "spine-1")
    assert up["address_family"]["ipv4"] == {"received_prefixes": 5, "accepted_prefixes": 5, "sent_prefixes": 6}
    assert (down["is_up"], down["is_enabled"], down["uptime"]) == (False, False, -1)


def test_ecn_is_read_only_where_the_release_counts_it():
    old = FakeSonic("202411")
    pfc = old.get_pfc_ecn_counters()
    assert pfc["Ethernet0"]["rx_pause"][3] == 1204 and pfc["Ethernet0"]["ecn_marked"] == -1
    assert SONIC.show_ecn_json not in old.sent
    new = FakeSonic("202505")
    pfc = new.get_pfc_ecn_counters()
    assert pfc["Ethernet0"]["ecn_marked"] == 2500 and pfc["Ethernet0"]["ecn_marked_by_tc"] == {0: 0, 3: 2500}
    assert pfc["Ethernet4"]["ecn_marked"] == 0


# --- hardware, NTP, transceivers (formats: generator/lab/sonic_platform.py) -------------------
PSUSHOW = """\
PSU    Model          Serial        HW Rev      Voltage (V)    Current (A)    Power (W)  Status    LED
-----  -------------  ------------  --------  -------------  -------------  -----------  --------  -----
PSU 1  MTEF-PSF-AC-C  MT1946X07684  A3                12.08           5.19        62.62  OK        green
PSU 2  MTEF-PSF-AC-C  MT1946X07685  A3                 0.00           0.00         0.00  NOT OK    red
"""


def test_psushow_rows_keep_cells_with_spaces():
    rows = sonic_show.table_rows(PSUSHOW, "PSU", "show platform psustatus")
    assert [(r["PSU"], r["Status"]) for r in rows] == [("PSU 1", "OK"), ("PSU 2", "NOT OK")]
    with pytest.raises(sonic_show.ParseError):
        sonic_show.table_rows("Traceback (most recent call last):\n  boom\n", "PSU", "show platform psustatus")


def test_show_ntp_names_the_system_peer_and_the_state():
    synced = ("synchronised to NTP server (10.0.0.10) at stratum 3\n   time correct to within 10 ms\n"
              "     remote           refid      st t when poll reach   delay   offset  jitter\n" + "=" * 78 + "\n"
              "*10.0.0.10       10.1.1.1         2 u   33   64  377    0.123    0.045   0.012\n"
              " 10.0.0.11       .INIT.          16 u    -   64    0    0.000    0.000   0.000\n")
    assert sonic_show.ntp(synced) == ("10.0.0.10", [("10.0.0.10", True), ("10.0.0.11", False)])
    assert sonic_show.ntp("unsynchronised\n  time server re-starting\n") == (None, [])
    with pytest.raises(sonic_show.ParseError):
        sonic_show.ntp("bash: ntpstat: command not found\n")


def test_transceiver_dump_gives_presence_power_and_the_modules_alarms():
    text = """\
Ethernet0: SFP EEPROM detected
        Media Interface Technology: 850 nm VCSEL
        ChannelMonitorValues:
                RX1Power: -14.0000dBm
                RX2Power: -1.2000dBm
                TX1Power: 1.0000dBm
        ChannelThresholdValues:
                RxPowerHighAlarm  : 5.0000dBm
                RxPowerLowAlarm   : -10.4000dBm
        ModuleMonitorValues:
                Temperature: 41.5000C
        ModuleThresholdValues:
                TempHighAlarm  : 75.0000C

Ethernet8: SFP EEPROM Not detected
"""
    found = sonic_show.transceivers(text)
    assert found["Ethernet8"]["present"] is False
    port = found["Ethernet0"]
    assert (port["present"], port["media_text"], port["rx"], port["tx"], port["temperature"]) == (
        True, "850 nm VCSEL", {1: -14.0, 2: -1.2}, {1: 1.0}, 41.5)
    assert port["limits"] == {"RxPowerHighAlarm": 5.0, "RxPowerLowAlarm": -10.4, "TempHighAlarm": 75.0}
    with pytest.raises(sonic_show.ParseError):
        sonic_show.transceivers("Ethernet0 is not a port\n")


def test_an_oversized_answer_is_one_refusal_line_before_any_parse():
    from generator.device_data import MAX_DEVICE_BYTES, DeviceDataError, checked_text

    with pytest.raises(DeviceDataError, match=r"^`show ntp`: .* refused$"):
        checked_text("x" * (MAX_DEVICE_BYTES + 1), "`show ntp`")
    assert checked_text(PSUSHOW, "`show platform psustatus`") == PSUSHOW


def test_fec_stats_rows_and_a_ber_in_e_notation():
    text = """\
      IFACE    STATE    FEC_CORR    FEC_UNCORR    FEC_SYMBOL_ERR    FEC_PRE_BER    FEC_POST_BER
-----------  -------  ----------  ------------  ----------------  -------------  --------------
  Ethernet0        U   1,234,567             0                 0       1.00e-05        0.00e+00
  Ethernet8        D           0             0                 0            N/A             N/A
"""
    rows = {r["IFACE"]: r for r in sonic_show.table_rows(text, "FEC_CORR", "fec-stats")}
    assert sonic_show.count(rows["Ethernet0"]["FEC_CORR"]) == 1234567
    assert sonic_show.number(rows["Ethernet0"]["FEC_PRE_BER"]) == 1e-5
    assert sonic_show.number(rows["Ethernet8"]["FEC_PRE_BER"]) is None


# `show pfcwd stats` as sonic-utilities' own test vector prints it (tests/pfcwd_input/
# pfcwd_test_vectors.py pfcwd_show_stats_output): only queues with a non-zero counter have a row.
PFCWD_STATS = """\
      QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP
-----------  -----------  -------------------------  ------------  ------------  -----------------  -----------------
Ethernet0:3      stormed                        1/0       100/300       100/300              0/200              0/200
Ethernet4:3  operational                        2/2       100/100       100/100                0/0                0/0
Ethernet8:4      stormed                        3/2       100/300       100/300              0/200              0/200
"""


def test_pfcwd_stats_storms_per_queue_detected_and_restored():
    assert sonic_show.pfcwd_stats(PFCWD_STATS) == {"Ethernet0": {3: (1, 0)}, "Ethernet4": {3: (2, 2)},
                                                   "Ethernet8": {4: (3, 2)}}
    empty = PFCWD_STATS.splitlines()[:2]
    assert sonic_show.pfcwd_stats("\n".join(empty) + "\n") == {}
    with pytest.raises(sonic_show.ParseError, match="pfcwd"):
        sonic_show.pfcwd_stats("Usage: show [OPTIONS] COMMAND [ARGS]...\nError: No such command \"pfcwd\".\n")


def test_the_driver_reads_watchdog_storms_per_port_and_queue():
    d = FakeSonic("202411")
    d.outputs[SONIC.show_pfcwd_stats] = PFCWD_STATS
    storms = d.get_pfc_watchdog_counters()
    assert storms["Ethernet8"] == {4: {"storm_detected": 3, "storm_restored": 2}}


def test_the_labs_pfcwd_table_reads_back_through_the_parser():
    """The lab prints the watched ports' queues that had storms, as pfcwd does (no -e)."""
    from types import SimpleNamespace

    from generator.lab.sonic_oper import pfcwd_stats

    class World:             # the world's side of a read: links down, 10 s of each fault rate integrated
        def port_config(self, device, port):
            return None

        def link(self, device, port):
            return SimpleNamespace(up=False)

        def counters(self, device, port, rates):
            return {k: int(v * 10) for k, v in rates.items()}

    running = {"PORT": {"Ethernet0": {"alias": "etp1"}, "Ethernet8": {"alias": "etp2"}},
               "PFC_WD": {"Ethernet0": {"detection_time": "200"}, "GLOBAL": {"POLL_INTERVAL": "200"}}}
    faults = SimpleNamespace(counters={"swp1": {"pfc_wd_storm": {3: 0.5}}, "swp2": {"pfc_wd_storm": {3: 1.0}}},
                             ports=None, switch=None)
    text = pfcwd_stats("leaf", running, World(), faults)
    # Ethernet8 has no PFC_WD entry: its watchdog is off and counts nothing
    assert sonic_show.pfcwd_stats(text) == {"Ethernet0": {3: (5, 5)}}
