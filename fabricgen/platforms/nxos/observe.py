"""Cisco NX-OS counters from NX-API JSON (`show … | json`, or NX-API's JSON-RPC method ``cli``).

Read, per physical Ethernet port (``Ethernet<slot>/<port>[/<breakout>]``; mgmt0, VLAN, port-channel and
sub-interface rows carry no fabric port of their own), all four commands in one NX-API JSON-RPC request:

- ``show interface``: ``eth_crc`` (the CLI's "CRC" input errors) → fcs_errors, ``eth_indiscard`` ("input
  discard") → in_discards, ``eth_reset_cntr`` (the CLI's "interface resets") → carrier_transitions: the one
  counter of link changes in this output (``eth_link_flapped`` is only the age of the last flap, as text);
- ``show interface counters errors``: ``eth_symbol_err`` → symbol_errors. NX-OS prints this table as several
  rows per interface (one per block of the CLI's error table); each field appears in one of them;
- ``show queuing tabular``: one row per interface (``if_name_str``) with, per qos-group N (0-7),
  ``tx_uc_drop_pkt_qos_N`` → queue_dropped[N], ``tx_uc_ecn_pkt_qos_N`` → queue_ecn_marked[N], and
  ``pfc_rx_qos_N`` / ``pfc_tx_qos_N`` → pfc_rx_pause / pfc_tx_pause filed under the PFC priority whose pauses
  qos-group N carries (:class:`QosGroups`: the device model's ``pfc_priority_to_queue``, since on NX-OS the
  qos-group is the egress queue, platforms/nxos/render.py); a qos-group no priority maps to has its pauses
  summed into a reading with no priority;
- ``show queuing pfc-queue detail``: per interface and qos-group (``TABLE_qosgrp_stats``, ``eq-qosgrp``), the PFC
  watchdog's ``q-shutdown`` → pfc_watchdog_storms[N] and ``q-restored`` → pfc_watchdog_restores[N], summed over
  the group's ``TABLE_qosgrp_stats_entry`` rows (the schema does not say which values ``q-stat-type`` takes).

NX-API puts a table as ``TABLE_x: {ROW_x: rows}`` — several rows as a list, a single one as an object (as in
greenpau/go-cisco-nx-api@60ca947's recorded assets/requests/resp.show.interface.mgmt0.json) — and prints counters
as numbers or as numeric text (both in tests/observe_fixtures/nxos_nxapi.json): both are read.
Field names of the first two commands as NX-OS prints them in those recordings, which tests/test_observe_parsers.py
reads. No recorded output of the two `show queuing` commands was found among public sources: their field names
are those of the ``__readonly__`` JSON schema in Cisco's Nexus 9000 Series NX-OS show-command reference,
release 9.3(x) ("Q Show Commands"), and the test fixture is built from that schema
(tests/observe_fixtures/nxos_queuing_constructed_from_cisco_schema.json). That schema lists qos-group 0's
``show queuing tabular`` fields by name and groups 1-7 only as ``<qos_grp_1>``…``<qos_grp_7>``; their keys are
taken to be group 0's with the group's number (``tx_uc_drop_pkt_qos_3``), which no recording confirms.

A switch that refuses one of the `show queuing` commands (a release or line card without it) loses those
readings only: the request is sent again without it. Not read: the unicast counters of the out-of-band
flow-control path (``tx_oobfc_uc_*``, whose relation to ``tx_uc_*`` the schema does not give), multicast and
flood queues, ``ing_drop_pkt`` (``eth_indiscard`` is the port's input discards already), the watchdog's
dropped and drained packets (no metric of fabricgen's carries them), `show hardware internal buffer info
pkt-stats`, FEC codeword counters (docs/observe.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson
from napalm.nxapi_plumbing import NXAPICommandError

from fabricgen.models.device import DeviceModel
from fabricgen.observe.model import ParseError, Reading, reading

COMMANDS = ("show interface", "show interface counters errors", "show queuing tabular",
            "show queuing pfc-queue detail")
INTERFACE_COMMANDS = COMMANDS[:2]  # every switch answers them: a reply without its table is an error
QUEUING_COMMANDS = COMMANDS[2:]  # optional: a switch may not know them
QOS_GROUPS = range(8)  # NX-OS's 8q mode: qos-groups 0-7
_PHYSICAL = re.compile(r"Ethernet[0-9]+(?:/[0-9]+)+")
# The queuing replies' ``if_name_str``: no recording shows whether NX-OS spells it ``Ethernet1/1`` or, as its
# queuing text output's headers and `show interface brief` do, ``Eth1/1``; both are read as ``Ethernet1/1``.
_QUEUING_PORT = re.compile(r"Eth(?:ernet)?([0-9]+(?:/[0-9]+)+)")
_FIELDS = {
    COMMANDS[0]: (("eth_crc", "fcs_errors"), ("eth_indiscard", "in_discards"),
                  ("eth_reset_cntr", "carrier_transitions")),
    COMMANDS[1]: (("eth_symbol_err", "symbol_errors"),),
}
_QUEUE_FIELDS = (("tx_uc_drop_pkt", "queue_dropped"), ("tx_uc_ecn_pkt", "queue_ecn_marked"))
_PAUSE_FIELDS = (("pfc_rx", "pfc_rx_pause"), ("pfc_tx", "pfc_tx_pause"))
# `show queuing tabular` keys read: (key, metric, qos-group, whether it is a pause counter filed by priority).
_TABULAR_KEYS = tuple((f"{field}_qos_{group}", metric, group, pause) for group in QOS_GROUPS
                      for fields, pause in ((_QUEUE_FIELDS, False), (_PAUSE_FIELDS, True)) for field, metric in fields)
_WATCHDOG_FIELDS = (("q-shutdown", "pfc_watchdog_storms"), ("q-restored", "pfc_watchdog_restores"))


@dataclass(frozen=True)
class QosGroups:
    """qos-group → the PFC priority its pause counters are filed under (absent: no priority maps to it)."""

    priority: dict[int, int]

    @classmethod
    def of(cls, device: DeviceModel) -> QosGroups:
        """From ``pfc_priority_to_queue``; a qos-group several priorities map to takes the lowest lossless one
        (a no-drop group pauses for its ``pfc-cos``), else the lowest."""
        if device.qos is None:
            return cls.same()
        lossless = set(device.qos.lossless_priorities)
        priority: dict[int, int] = {}
        for prio in sorted(device.qos.pfc_priority_to_queue, key=lambda prio: (prio not in lossless, prio)):
            priority.setdefault(device.qos.pfc_priority_to_queue[prio], prio)
        return cls(priority)

    @classmethod
    def same(cls) -> QosGroups:
        """qos-group N carries priority N: fabricgen's rendering unless the intent moves a class's queue."""
        return cls({group: group for group in QOS_GROUPS})


def read(api: Any, device: DeviceModel) -> list[Reading]:
    """One device's readings over NAPALM's NX-API client (``driver.device``), in one JSON-RPC request."""
    return parse_json(device.name, ask(api), QosGroups.of(device))


def ask(api: Any) -> dict[str, Any]:
    """Each command's ``body``, keyed by command; a `show queuing` command the switch refuses is left out and
    the rest asked again (NX-API answers a request's commands up to the first that fails)."""
    commands = list(COMMANDS)
    while True:
        try:
            return {answer["command"]: answer["result"] for answer in api.show_list(commands)}
        except NXAPICommandError as refused:
            if refused.command not in QUEUING_COMMANDS or refused.command not in commands:
                raise
            commands.remove(refused.command)


def parse(device: str, outputs: dict[str, str], groups: QosGroups | None = None) -> list[Reading]:
    """Readings from the JSON texts of :data:`COMMANDS` (as `… | json` prints them; the `show queuing` ones may
    be absent)."""
    replies = {command: _load(device, command, outputs.get(command)) for command in INTERFACE_COMMANDS}
    replies.update({command: _load(device, command, outputs[command]) for command in QUEUING_COMMANDS
                    if command in outputs})
    return parse_json(device, replies, groups)


def parse_json(device: str, replies: dict[str, Any], groups: QosGroups | None = None) -> list[Reading]:
    """Readings from NX-API's structured replies, keyed by command: the ``body`` of each (a whole JSON-RPC
    response or its ``result`` is unwrapped too). ``groups``: where pause counters are filed (default:
    :meth:`QosGroups.same`)."""
    readings: list[Reading] = []
    for command in INTERFACE_COMMANDS:
        for row in _rows(device, command, _body(replies.get(command)), "interface", required=True):
            port = row.get("interface")
            if not isinstance(port, str) or not _PHYSICAL.fullmatch(port):
                continue
            readings += [reading(device, port, metric, row[field]) for field, metric in _FIELDS[command]
                         if field in row]
    tabular, watchdog = (_body(replies.get(command)) for command in QUEUING_COMMANDS)
    for port, row in _ports(device, QUEUING_COMMANDS[0], tabular):
        readings += _tabular(device, port, row, groups or QosGroups.same())
    for port, row in _ports(device, QUEUING_COMMANDS[1], watchdog):
        readings += _watchdog(device, port, row)
    return readings


def _tabular(device: str, port: str, row: dict[str, Any], groups: QosGroups) -> list[Reading]:
    """Readings built directly rather than through model.reading: 48 per port, 850k for a 32k-GPU fabric's
    NX-OS leaves (bench/observe.py); a value that is not a number is still named (_not_a_number)."""
    readings: list[Reading] = []
    append = readings.append
    unmapped: dict[str, float] = {}
    for key, metric, group, is_pause in _TABULAR_KEYS:
        value = row.get(key)
        if value is None:
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise _not_a_number(device, port, key, value) from None
        index = groups.priority.get(group) if is_pause else group
        if index is None:
            unmapped[metric] = unmapped.get(metric, 0.0) + number
        else:
            append(Reading(device, port, metric, index, number))
    readings += [Reading(device, port, metric, None, value) for metric, value in unmapped.items()]
    return readings


def _watchdog(device: str, port: str, row: dict[str, Any]) -> list[Reading]:
    readings: list[Reading] = []
    for stats in _rows(device, QUEUING_COMMANDS[1], row, "qosgrp_stats"):
        group = _group(device, port, stats.get("eq-qosgrp"))
        entries = list(_rows(device, QUEUING_COMMANDS[1], stats, "qosgrp_stats_entry"))
        for field, metric in _WATCHDOG_FIELDS:
            total, found = 0.0, False
            for entry in entries:
                value = entry.get(field)
                if value is None:
                    continue
                try:
                    total += float(value)
                except (TypeError, ValueError):
                    raise _not_a_number(device, port, f"{field} of qos-group {group}", value) from None
                found = True
            if found:
                readings.append(Reading(device, port, metric, group, total))
    return readings


def _not_a_number(device: str, port: str, field: str, value: Any) -> ParseError:
    return ParseError(f"{device} {port}: {field} is {value!r}, not a number")


def _group(device: str, port: str, value: Any) -> int:
    text = str(value).strip()
    if not text.isdigit() or int(text) not in QOS_GROUPS:
        raise ParseError(f"{device} {port}: `{QUEUING_COMMANDS[1]}` names qos-group {value!r}, not 0-7")
    return int(text)


def _ports(device: str, command: str, body: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """The physical ports' rows of ``TABLE_queuing_interface`` (none when the reply is absent or has none)."""
    if body is None:
        return
    for row in _rows(device, command, body, "queuing_interface"):
        name = row.get("if_name_str")
        physical = _QUEUING_PORT.fullmatch(name) if isinstance(name, str) else None
        if physical is not None:
            yield f"Ethernet{physical.group(1)}", row


def _body(reply: Any) -> Any:
    for key in ("result", "body"):
        if isinstance(reply, dict) and key in reply:
            reply = reply[key]
    return reply


def _rows(device: str, command: str, body: Any, table: str, required: bool = False) -> Iterator[dict[str, Any]]:
    """NX-API's ``TABLE_<table>`` / ``ROW_<table>``: a single row comes as an object, several as a list. An
    optional table may be missing (nothing to report), not malformed."""
    found = body.get(f"TABLE_{table}") if isinstance(body, dict) else None
    if found is None and isinstance(body, dict) and not required:
        return
    if not isinstance(found, dict):
        raise ParseError(f"{device}: `{command}` has no TABLE_{table}")
    rows = found.get(f"ROW_{table}", [])
    for row in rows if isinstance(rows, list) else [rows]:
        if isinstance(row, dict):
            yield row


def _load(device: str, command: str, text: str | None) -> Any:
    if not text:
        raise ParseError(f"{device}: `{command} | json` printed nothing")
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ParseError(f"{device}: `{command} | json` is not JSON ({exc.msg} at line {exc.lineno})") from None
