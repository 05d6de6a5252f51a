"""Each platform's counter reader against outputs the vendor's own tools recorded (fixtures name source and commit).

SONiC: sonic-utilities' tests/mock_tables (what portstat/pfcstat/pfcwd are tested on). EOS: ANTA's recorded eAPI
outputs. ConnectX / generic dcb: counter names from the kernel's mlx5 counters documentation. NVUE: the example
outputs of NVIDIA's Cumulus Linux documentation. NX-OS: NX-API responses recorded in greenpau/go-cisco-nx-api; its
`show queuing` replies, of which no recording was found, are built from Cisco's published JSON schema and named so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from napalm.nxapi_plumbing import NXAPICommandError

from fabricgen.load.fabric import load
from fabricgen.models.device import DeviceModel
from fabricgen.observe.hosttext import split
from fabricgen.observe.model import METRICS, ParseError, Reading
from fabricgen.platforms.connectx import observe as connectx
from fabricgen.platforms.eos import observe as eos
from fabricgen.platforms.linux_dcb import observe as linux_dcb
from fabricgen.platforms.nvue import observe as nvue
from fabricgen.platforms.nxos import observe as nxos
from fabricgen.platforms.sonic import observe as sonic
from fabricgen.resolve import resolve

FIXTURES = Path(__file__).parent / "observe_fixtures"
ROOT = Path(__file__).resolve().parent.parent


def by_key(readings: list[Reading]) -> dict[tuple[str, str, int | None], float]:
    table = {(r.port, r.metric, r.index): r.value for r in readings}
    assert len(table) == len(readings), "one reading per (port, metric, index)"
    assert all(r.metric in METRICS for r in readings)
    return table


def sonic_outputs() -> dict[str, str]:
    recorded = json.loads((FIXTURES / "sonic_mock_tables.json").read_text())
    assert recorded["_source"].startswith("sonic-net/sonic-utilities@691b1bbc")
    return {sonic.COMMANDS[0]: json.dumps(recorded["COUNTERS_DB"]), sonic.COMMANDS[1]: json.dumps(recorded["APPL_DB"])}


def test_sonic_counters_db_pfc_fec_queues_watchdog_and_flaps() -> None:
    table = by_key(sonic.parse("leaf1", sonic_outputs()))
    # Port counters of Ethernet0 as the mock table holds them (pfcstat shows 1200 / 1210 for priority 0).
    assert table[("Ethernet0", "pfc_rx_pause", 0)] == 1200
    assert table[("Ethernet0", "pfc_tx_pause", 3)] == 213
    assert table[("Ethernet0", "fec_corrected", None)] == 130402
    assert table[("Ethernet0", "fec_uncorrected", None)] == 3
    assert table[("Ethernet0", "in_discards", None)] == 100
    # Queue 3 of Ethernet0 is the one pfcwd reports "stormed": one deadlock detected, none restored.
    assert table[("Ethernet0", "pfc_watchdog_storms", 3)] == 1
    assert table[("Ethernet0", "pfc_watchdog_restores", 3)] == 0
    assert table[("Ethernet0", "queue_ecn_marked", 3)] == 19
    assert table[("Ethernet0", "queue_wred_dropped", 3)] == 52
    assert table[("Ethernet0", "carrier_transitions", None)] == 3  # APPL_DB PORT_TABLE flap_count


def test_sonic_reads_unicast_queues_only() -> None:
    recorded = json.loads((FIXTURES / "sonic_mock_tables.json").read_text())["COUNTERS_DB"]
    kinds, indexes = recorded["COUNTERS_QUEUE_TYPE_MAP"], recorded["COUNTERS_QUEUE_INDEX_MAP"]
    unicast = {(name.rpartition(":")[0], int(indexes[oid])) for name, oid in recorded["COUNTERS_QUEUE_NAME_MAP"].items()
               if kinds[oid] == "SAI_QUEUE_TYPE_UNICAST" and f"COUNTERS:{oid}" in recorded}
    assert len(set(kinds.values())) == 3, "the recorded table has unicast, multicast and 'all' queues"
    readings = sonic.parse("leaf1", sonic_outputs())
    assert {(r.port, r.index) for r in readings if r.metric.startswith("queue_")} == unicast


def test_sonic_db_dump_wrapping_is_read_like_the_mock_tables() -> None:
    """sonic-db-dump -y wraps each hash as {"type": "hash", "value": …}; both shapes give the same readings."""
    plain = sonic_outputs()
    counters = json.loads(plain[sonic.COMMANDS[0]])
    wrapped = {key: {"expireat": 0, "ttl": -0.001, "type": "hash", "value": value} for key, value in counters.items()}
    dumped = {sonic.COMMANDS[0]: json.dumps(wrapped), sonic.COMMANDS[1]: plain[sonic.COMMANDS[1]]}
    assert sonic.parse("leaf1", dumped) == sonic.parse("leaf1", plain)


@pytest.mark.parametrize(("text", "message"), [
    ("", "printed nothing"),
    ("not json", "is not JSON"),
    ("[]", "not a key → hash object"),
    ("{}", "COUNTERS_PORT_NAME_MAP"),
])
def test_sonic_bad_output_is_named(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        sonic.parse("leaf1", {sonic.COMMANDS[0]: text})


def eos_outputs() -> dict[str, str]:
    recorded = json.loads((FIXTURES / "eos_anta.json").read_text())
    assert recorded["_source"].startswith("aristanetworks/anta@68667e0e")
    return {command: json.dumps(recorded[command]) for command in eos.COMMANDS}


def test_eos_interfaces_phy_and_pfc() -> None:
    table = by_key(eos.parse("spine1", eos_outputs()))
    assert table[("Ethernet10", "carrier_transitions", None)] == 12
    assert table[("Ethernet2", "in_discards", None)] == 10
    # Ethernet1/1's three PHY chips: corrected 3 + 32 + 0, uncorrected 10 + 10 + 0, worst pre-FEC BER kept.
    assert table[("Ethernet1/1", "fec_corrected", None)] == 35
    assert table[("Ethernet1/1", "fec_uncorrected", None)] == 20
    assert table[("Ethernet1/1", "pre_fec_ber", None)] == pytest.approx(1.3399973239803202e-22)
    assert table[("Ethernet3/2/1", "pfc_tx_pause", None)] == 2
    assert table[("Ethernet3/1/1", "pfc_rx_pause", None)] == 1


def test_eos_missing_command_output_is_named() -> None:
    outputs = eos_outputs()
    del outputs["show interfaces phy detail"]
    with pytest.raises(ParseError, match=r"spine1: `show interfaces phy detail \| json` printed nothing"):
        eos.parse("spine1", outputs)


def nxos_replies() -> dict[str, object]:
    recorded = json.loads((FIXTURES / "nxos_nxapi.json").read_text())
    assert recorded["_source"].startswith("greenpau/go-cisco-nx-api@cb94de41")
    return {command: recorded[command] for command in nxos.INTERFACE_COMMANDS}


def nxos_queuing_replies() -> dict[str, Any]:
    """Not a recording: built from the __readonly__ schema of Cisco's show-command reference (its header)."""
    built = json.loads((FIXTURES / "nxos_queuing_constructed_from_cisco_schema.json").read_text())
    assert built["_source"].startswith("constructed from the __readonly__ schema") and \
        "not a device recording" in built["_source"]
    return {command: built[command] for command in nxos.QUEUING_COMMANDS}


def test_nxos_interface_counters_from_recorded_nxapi_responses() -> None:
    table = by_key(nxos.parse_json("leaf4", nxos_replies()))
    # `show interface`: the physical ports only (mgmt0, Vlan, port-channel rows are not fabric ports), breakouts
    # included; Ethernet1/24/2's "interface resets" is 3 in the recording, every error counter 0.
    assert {port for port, _, _ in table} == {"Ethernet1/1", "Ethernet1/5", "Ethernet1/9", "Ethernet1/24/1",
                                              "Ethernet1/24/2", "Ethernet1/24/3"}
    assert table[("Ethernet1/24/2", "carrier_transitions", None)] == 3
    assert table[("Ethernet1/1", "carrier_transitions", None)] == 0
    assert table[("Ethernet1/5", "fcs_errors", None)] == 0  # eth_crc, a numeric string in NX-API's JSON
    assert table[("Ethernet1/5", "in_discards", None)] == 0
    # `show interface counters errors`: several rows per port, eth_symbol_err in one of them.
    assert table[("Ethernet1/1", "symbol_errors", None)] == 0
    assert {metric for _, metric, _ in table} == {"fcs_errors", "in_discards", "carrier_transitions",
                                                  "symbol_errors"}


def test_nxos_reads_the_numbers_the_recording_holds() -> None:
    """The recorded numbers, not zeros the parser might default to: a copy of the recording with one counter
    changed reads that counter, and a whole JSON-RPC response is unwrapped as NAPALM may hand it."""
    replies = nxos_replies()
    shown = json.loads(json.dumps(replies["show interface"]))
    rows = shown["result"]["body"]["TABLE_interface"]["ROW_interface"]
    next(row for row in rows if row["interface"] == "Ethernet1/5")["eth_crc"] = "41"
    table = by_key(nxos.parse_json("leaf4", {**replies, "show interface": shown}))
    assert table[("Ethernet1/5", "fcs_errors", None)] == 41
    assert table[("Ethernet1/1", "fcs_errors", None)] == 0


def test_nxos_reply_without_interface_table_is_named() -> None:
    with pytest.raises(ParseError, match=r"leaf4: `show interface counters errors` has no TABLE_interface"):
        nxos.parse_json("leaf4", {**nxos_replies(), "show interface counters errors": {"body": {}}})
    with pytest.raises(ParseError, match=r"leaf4: `show interface \| json` printed nothing"):
        nxos.parse("leaf4", {})


def test_nxos_queuing_counters_from_replies_built_on_ciscos_schema() -> None:
    table = by_key(nxos.parse_json("leaf4", {**nxos_replies(), **nxos_queuing_replies()}))
    # `show queuing tabular`: per qos-group drops and ECN marks on the egress queue of that number (qos-group =
    # queue on NX-OS); PFC per qos-group filed under the priority of the same number (QosGroups.same).
    assert table[("Ethernet1/2", "queue_dropped", 3)] == 12
    assert table[("Ethernet1/1", "queue_ecn_marked", 3)] == 2104417
    assert table[("Ethernet1/1", "pfc_rx_pause", 3)] == 18342
    assert table[("Ethernet1/63", "pfc_tx_pause", 3)] == 31877
    assert table[("Ethernet1/63", "queue_dropped", 0)] == 0
    assert {index for port, metric, index in table if port == "Ethernet1/1" and metric == "queue_dropped"} == \
        set(range(8))
    # `show queuing pfc-queue detail`: the watchdog's shutdowns and restores of the no-drop qos-group.
    assert table[("Ethernet1/2", "pfc_watchdog_storms", 3)] == 2
    assert table[("Ethernet1/2", "pfc_watchdog_restores", 3)] == 2
    assert table[("Ethernet1/1", "pfc_watchdog_storms", 3)] == 0
    assert {metric for _, metric, _ in table} == {"fcs_errors", "in_discards", "carrier_transitions",
                                                  "symbol_errors", "queue_dropped", "queue_ecn_marked",
                                                  "pfc_rx_pause", "pfc_tx_pause", "pfc_watchdog_storms",
                                                  "pfc_watchdog_restores"}


def test_nxos_pauses_are_filed_under_the_priority_the_model_maps_to_the_qos_group() -> None:
    """qos-group 5 carries lossless priority 3 and lossy 4; no priority maps to qos-group 3, whose pauses then
    carry no priority (summed with any other such group's)."""
    groups = nxos.QosGroups({5: 3, 0: 0})
    replies = nxos_queuing_replies()
    tabular = json.loads(json.dumps(replies["show queuing tabular"]))
    row = tabular["result"]["body"]["TABLE_queuing_interface"]["ROW_queuing_interface"][0]
    row.update({"pfc_rx_qos_5": "7", "pfc_rx_qos_4": 2})  # numeric text, as NX-API prints some counters
    table = by_key(nxos.parse_json("leaf4", {**nxos_replies(), "show queuing tabular": tabular}, groups))
    assert table[("Ethernet1/1", "pfc_rx_pause", 3)] == 7
    assert table[("Ethernet1/1", "pfc_rx_pause", None)] == 18342 + 2  # qos-groups 3 and 4: no priority
    assert table[("Ethernet1/1", "queue_dropped", 3)] == 0  # queues keep the qos-group's number


def test_nxos_qos_groups_of_the_resolved_model() -> None:
    """The mixed example's leaf4 (NX-OS): each priority on the qos-group of its number; with priority 3 (lossless)
    and 4 both on qos-group 5, that group's pauses are priority 3's."""
    loaded = load(ROOT / "intent" / "mixed.yaml", ROOT / "inventory" / "mixed")
    leaf4 = resolve(loaded.intent, loaded.inventory, loaded.locate).devices["leaf4"]
    assert nxos.QosGroups.of(leaf4).priority == {group: group for group in range(8)}
    assert leaf4.qos is not None and leaf4.qos.lossless_priorities == [3]
    moved = DeviceModel.model_validate({**leaf4.model_dump(), "qos": {**leaf4.qos.model_dump(), "pfc_priority_to_queue":
                                                                      {**leaf4.qos.pfc_priority_to_queue, 3: 5, 4: 5}}})
    assert nxos.QosGroups.of(moved).priority == {0: 0, 1: 1, 2: 2, 5: 3, 6: 6, 7: 7}


def test_nxos_queuing_rows_named_eth_short_are_the_same_ports() -> None:
    """The queuing replies may name a port as NX-OS's short form does (``Eth1/1``): its readings are the
    port's, not dropped."""
    replies = nxos_queuing_replies()
    tabular = json.loads(json.dumps(replies["show queuing tabular"]))
    for row in tabular["result"]["body"]["TABLE_queuing_interface"]["ROW_queuing_interface"]:
        row["if_name_str"] = row["if_name_str"].replace("Ethernet", "Eth")
    table = by_key(nxos.parse_json("leaf4", {**nxos_replies(), "show queuing tabular": tabular}))
    assert table[("Ethernet1/1", "queue_ecn_marked", 3)] == 2104417
    assert table[("Ethernet1/63", "pfc_tx_pause", 3)] == 31877


def test_nxos_single_rows_come_as_objects_and_optional_replies_may_be_missing() -> None:
    replies = nxos_queuing_replies()
    watchdog = json.loads(json.dumps(replies["show queuing pfc-queue detail"]))
    rows = watchdog["result"]["body"]["TABLE_queuing_interface"]
    rows["ROW_queuing_interface"] = rows["ROW_queuing_interface"][1]  # one interface: an object, not a list
    table = by_key(nxos.parse_json("leaf4", {**nxos_replies(), "show queuing pfc-queue detail": watchdog}))
    assert {(port, metric) for port, metric, _ in table if metric.startswith("pfc_watchdog")} == {
        ("Ethernet1/2", "pfc_watchdog_storms"), ("Ethernet1/2", "pfc_watchdog_restores")}
    # A switch that refused `show queuing …` (no reply) or has no queuing table: its interface counters only.
    assert by_key(nxos.parse_json("leaf4", nxos_replies())) == \
        by_key(nxos.parse_json("leaf4", {**nxos_replies(), "show queuing tabular": {"body": {}}}))
    with pytest.raises(ParseError, match=r"leaf4 Ethernet1/1: `show queuing pfc-queue detail` names qos-group "
                                         r"'nine', not 0-7"):
        broken = json.loads(json.dumps(replies["show queuing pfc-queue detail"]))
        first = broken["result"]["body"]["TABLE_queuing_interface"]["ROW_queuing_interface"][0]
        first["TABLE_qosgrp_stats"]["ROW_qosgrp_stats"][3]["eq-qosgrp"] = "nine"
        nxos.parse_json("leaf4", {**nxos_replies(), "show queuing pfc-queue detail": broken})


def test_nxos_text_outputs_with_and_without_the_queuing_commands() -> None:
    texts = {command: json.dumps(reply) for command, reply in {**nxos_replies(), **nxos_queuing_replies()}.items()}
    both = by_key(nxos.parse("leaf4", texts))
    assert both[("Ethernet1/2", "pfc_watchdog_storms", 3)] == 2
    interfaces_only = by_key(nxos.parse("leaf4", {c: texts[c] for c in nxos.INTERFACE_COMMANDS}))
    assert set(interfaces_only) < set(both)


class RefusingNxapi:
    """NAPALM's NX-API client as the reader uses it (``show_list``: one JSON-RPC request), answering from the
    fixtures and refusing the commands in ``refused`` as NX-API does (the client raises NXAPICommandError)."""

    def __init__(self, refused: set[str]) -> None:
        self.refused = refused
        self.requests: list[list[str]] = []
        self.replies = {**nxos_replies(), **nxos_queuing_replies()}

    def show_list(self, commands: list[str]) -> list[dict[str, Any]]:
        self.requests.append(list(commands))
        for command in commands:
            if command in self.refused:
                raise NXAPICommandError(command, "% Invalid command at '^' marker.")
        return [{"command": command, "result": self.replies[command]} for command in commands]


def test_nxos_reads_in_one_request_and_a_refused_queuing_command_costs_only_its_readings() -> None:
    api = RefusingNxapi(set())
    assert set(nxos.ask(api)) == set(nxos.COMMANDS) and api.requests == [list(nxos.COMMANDS)]
    api = RefusingNxapi({"show queuing pfc-queue detail"})
    readings = nxos.parse_json("leaf4", nxos.ask(api))
    assert api.requests == [list(nxos.COMMANDS), list(nxos.COMMANDS[:3])]
    assert {r.metric for r in readings} >= {"queue_dropped", "fcs_errors"}
    assert not {r.metric for r in readings} & {"pfc_watchdog_storms", "pfc_watchdog_restores"}
    with pytest.raises(NXAPICommandError, match="show interface counters errors"):
        nxos.ask(RefusingNxapi({"show interface counters errors"}))


def test_connectx_ethtool_and_hw_counters() -> None:
    text = (FIXTURES / "mlx5_host.txt").read_text()
    table = by_key(connectx.parse("gpu1", text, {"mlx5_0": "ens1f0np0", "mlx5_1": "ens2f0np0"}))
    assert table[("ens1f0np0", "pfc_rx_pause", 3)] == 41927
    assert table[("ens1f0np0", "pfc_tx_pause", 3)] == 1290418
    assert table[("ens1f0np0", "pfc_rx_pause_duration", 3)] == pytest.approx(0.048736)  # µs → s
    assert table[("ens1f0np0", "prio_ecn_marked", 3)] == 9147732
    assert table[("ens1f0np0", "prio_buffer_discards", 3)] == 0
    assert table[("ens1f0np0", "carrier_transitions", None)] == 2
    assert table[("ens2f0np0", "fcs_errors", None)] == 17
    assert table[("ens2f0np0", "fec_uncorrected_symbols", None)] == 28  # rx_pcs_symbol_err_phy
    assert table[("ens1f0np0", "fec_uncorrected_symbols", None)] == 0
    assert ("ens2f0np0", "carrier_transitions", None) not in table  # sysfs unreadable (-1): absent, not 0
    assert table[("ens1f0np0", "cnp_sent", None)] == 4410  # mlx5_0 filed under its interface
    assert table[("ens1f0np0", "cnp_handled", None)] == 4388
    assert table[("ens1f0np0", "out_of_sequence", None)] == 12
    assert table[("ens2f0np0", "cnp_sent", None)] == 0
    # Counters outside the vocabulary (rx_icrc_encapsulated, rx_prio3_pause_transition) are not invented.
    assert not any(metric == "rx_icrc_encapsulated" for _, metric, _ in table)


def test_generic_dcb_host_reads_what_its_driver_prints() -> None:
    text = "== eth2\nNIC statistics:\n     rx_packets: 10\ncarrier_changes: 5\n"
    table = by_key(linux_dcb.parse("host9", text, {}))
    assert table == {("eth2", "carrier_transitions", None): 5}


def test_host_output_without_counters_is_an_error() -> None:
    with pytest.raises(ParseError, match="gpu1: the counter command printed no ethtool statistics"):
        connectx.parse("gpu1", "bash: ethtool: command not found\n", {})


def ethtool_readings_as_first_written(device: str, text: str) -> list[Reading]:
    """The ConnectX reader's first algorithm, kept here as the reference its one-pass slot filing must equal:
    split the text into {interface: {stat: int}}, then per interface look up the port-wide statistics in
    PORT_STATS order, then the per-priority ones in (priority, kind) order."""
    interfaces, _ = split(device, text)
    readings: list[Reading] = []
    for interface, stats in sorted(interfaces.items()):
        readings += [Reading(device, interface, metric, None, float(stats[name]))
                     for name, metric in connectx.PORT_STATS.items() if name in stats and stats[name] >= 0]
        for p in range(8):
            for direction, name, metric, scale in (
                    ("rx", "pause", "pfc_rx_pause", 1.0), ("tx", "pause", "pfc_tx_pause", 1.0),
                    ("rx", "pause_duration", "pfc_rx_pause_duration", 1e-6),
                    ("rx", "buf_discard", "prio_buffer_discards", 1.0),
                    ("rx", "cong_discard", "prio_congestion_discards", 1.0), ("rx", "marked", "prio_ecn_marked", 1.0)):
                if (value := stats.get(f"{direction}_prio{p}_{name}")) is not None:
                    readings.append(Reading(device, interface, metric, p, value * scale))
    return readings


@pytest.mark.parametrize("extra", [
    "",
    # The same interface printed twice (a re-run loop): its statistics merge, the later value winning.
    "== ens1f0np0\nNIC statistics:\n     rx_prio3_pause: 7\n     rx_crc_errors_phy: 4\ncarrier_changes: 9\n",
])
def test_connectx_one_pass_reader_yields_the_first_algorithms_readings(extra: str) -> None:
    text = (FIXTURES / "mlx5_host.txt").read_text()
    ethtool_part, _, rdma_part = text.partition("/sys/class/infiniband/")
    text = ethtool_part + extra + "/sys/class/infiniband/" + rdma_part
    readings = connectx.parse("gpu1", text, {"mlx5_0": "ens1f0np0", "mlx5_1": "ens2f0np0"})
    ethtool_only = [r for r in readings if r.metric not in connectx.HW_COUNTERS.values()]
    assert ethtool_only == ethtool_readings_as_first_written("gpu1", text)
    # Not vacuous: both ports, port-wide and per-priority statistics are compared.
    assert {r.port for r in ethtool_only} == {"ens1f0np0", "ens2f0np0"}
    assert {r.index is None for r in ethtool_only} == {True, False}


def nvue_docs() -> str:
    text = (FIXTURES / "nvue_docs.txt").read_text()
    assert "CumulusNetworks/docs" in text.splitlines()[1]
    return text


def test_nvue_counters_as_nvidia_documents_them() -> None:
    table = by_key(nvue.parse("leaf3", nvue_docs(), nvue.Classes(roce_priority=3, roce_queue=3, cnp_queue=6)))
    # `counters`: the operational carrier-transitions and the Receive column of the error and drop tables.
    assert table[("swp1", "carrier_transitions", None)] == 4
    assert table[("swp1", "fcs_errors", None)] == 0 and table[("swp1", "symbol_errors", None)] == 0
    assert table[("swp1", "in_discards", None)] == 0  # Buffer Drops
    # `counters qos pfc-stats`: every switch priority, both directions; durations (no unit given) not read.
    assert {(m, i) for (_, m, i) in table if m.startswith("pfc_")} == {
        (m, p) for m in ("pfc_rx_pause", "pfc_tx_pause") for p in range(8)}
    # `counters qos egress-queue-stats`: WRED discards per traffic class; its byte-valued discards not read.
    assert [table[("swp1", "queue_wred_dropped", q)] for q in range(8)] == [0] * 8
    # `qos roce counters` (swp16 on NVIDIA's page): per-class counters filed under the intent's classes.
    assert table[("swp16", "queue_ecn_marked", 3)] == 693777677344
    assert table[("swp16", "queue_dropped", 3)] == 663060754115  # tx unicast-no-buffer-discard of RoCE traffic
    assert table[("swp16", "prio_buffer_discards", 3)] == 0  # rx no-buffer-discard of RoCE traffic
    assert table[("swp16", "queue_dropped", 6)] == 0  # CNP traffic
    # `link phy-detail`: symbols FEC did not correct, the RS-FEC histogram's corrected codewords, raw BER.
    assert table[("swp1", "fec_uncorrected_symbols", None)] == 0
    assert table[("swp1", "fec_corrected", None)] == 598244758 + 807002 + 3371 + 180 + 1 + 1  # bins 1-15
    assert table[("swp1", "pre_fec_ber", None)] == pytest.approx(1e-7)
    # Sizes with units ("56.52 MB", "0 Bytes") and "n/a" are never read as numbers.
    assert not any(v in (56.52, 144.0, 16.02) for v in table.values())


def test_nvue_tables_are_read_by_the_columns_of_their_dash_line() -> None:
    page = nvue_docs().split("== swp1 counters qos egress-queue-stats\n")[1].split("\n== ")[0]
    header, rows = nvue.table(page, "traffic-class")  # past the page's repeated prompt and title lines
    assert header == ["traffic-class", "tx-frames", "tx-bytes", "tx-uc-buffer-discards", "wred-discards"]
    assert rows[3] == ["3", "0", "0 Bytes", "0 Bytes", "0"] and len(rows) == 8  # a cell with a space stays whole
    assert nvue.table(page, "switch-priority") == ([], [])


def test_nvue_without_intent_classes_files_no_per_class_counters() -> None:
    table = by_key(nvue.parse("leaf3", nvue_docs(), nvue.Classes()))
    assert not any(port == "swp16" for port, _, _ in table)


def test_nvue_output_without_sections_is_an_error() -> None:
    with pytest.raises(ParseError, match="leaf3: the counter command printed none of its"):
        nvue.parse("leaf3", "bash: nv: command not found\n", nvue.Classes())


def test_nvue_command_reads_one_port_and_nothing_else() -> None:
    command = nvue.command("swp1")
    assert command.count("nv show interface swp1 ") == len(nvue.COMMANDS)
    assert " set " not in command and "config" not in command and "clear" not in command


def test_nvue_row_expressions_equal_the_column_reader_they_stand_in_for() -> None:
    """The per-priority and per-queue pages are read with one expression when NVIDIA's header is there (speed:
    bench/observe.py); the column reader is the road for any other column order and must agree on the page."""
    text = nvue_docs().replace("\n3                0                0                  0                0",
                               "\n3                41927            48736              1290418          91104")
    pages = {what: body for _, what, body in nvue._sections(text)}
    classes = nvue.Classes()
    fast = nvue._pfc("leaf3", "swp1", pages["counters qos pfc-stats"], classes)
    assert fast == nvue._per_index("leaf3", "swp1", pages["counters qos pfc-stats"], "switch-priority",
                                   {"rx-pause-frames": "pfc_rx_pause", "tx-pause-frames": "pfc_tx_pause"})
    assert by_key(fast)[("swp1", "pfc_tx_pause", 3)] == 1290418
    queues = pages["counters qos egress-queue-stats"]
    assert nvue._queues("leaf3", "swp1", queues, classes) == nvue._per_index(
        "leaf3", "swp1", queues, "traffic-class", {"wred-discards": "queue_wred_dropped"})
    # Another column order (not NVIDIA's): the header names the columns.
    reordered = ("switch-priority  tx-pause-frames  rx-pause-frames\n"
                 "---------------  ---------------  ---------------\n"
                 "3                7                5\n")
    assert by_key(nvue._pfc("leaf3", "swp1", reordered, classes)) == {("swp1", "pfc_rx_pause", 3): 5,
                                                                     ("swp1", "pfc_tx_pause", 3): 7}
