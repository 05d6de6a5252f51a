"""Cisco NX-OS counters from NX-API JSON (`show … | json`, or NX-API's JSON-RPC method ``cli``).

Read, per physical Ethernet port (``Ethernet<slot>/<port>[/<breakout>]``; mgmt0, VLAN, port-channel and
sub-interface rows carry no fabric port of their own):

- ``show interface``: ``eth_crc`` (the CLI's "CRC" input errors) → fcs_errors, ``eth_indiscard`` ("input
  discard") → in_discards, ``eth_reset_cntr`` (the CLI's "interface resets") → carrier_transitions: the one
  counter of link changes in this output (``eth_link_flapped`` is only the age of the last flap, as text);
- ``show interface counters errors``: ``eth_symbol_err`` → symbol_errors. NX-OS prints this table as several
  rows per interface (one per block of the CLI's error table); each field appears in one of them.

Field names as NX-OS prints them in the NX-API responses recorded in greenpau/go-cisco-nx-api's test assets,
which tests/test_observe_parsers.py reads. What NX-OS also has for RoCE is not read: PFC pause frames (`show
interface priority-flow-control`; per CoS in `show queuing interface`, its TABLE_pfc_stats), drops and ECN marks
per QoS group (`show queuing interface`, TABLE_qosgrp_egress_stats), the PFC watchdog's shutdowns, restores and
drops per QoS group (`show queuing pfc-queue detail`), `show hardware internal buffer info pkt-stats`, FEC
codeword counters. Cisco's Nexus 9000 NX-OS show-command reference (release 9.3(x)) gives the JSON schema of the
`show queuing` commands, but no recorded output of any of these commands — from a device or published by Cisco —
was found among public sources to test a parser against (docs/observe.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson

from fabricgen.observe.model import ParseError, Reading, reading

COMMANDS = ("show interface", "show interface counters errors")
_PHYSICAL = re.compile(r"Ethernet[0-9]+(?:/[0-9]+)+")
_FIELDS = {
    COMMANDS[0]: (("eth_crc", "fcs_errors"), ("eth_indiscard", "in_discards"),
                  ("eth_reset_cntr", "carrier_transitions")),
    COMMANDS[1]: (("eth_symbol_err", "symbol_errors"),),
}


def parse(device: str, outputs: dict[str, str]) -> list[Reading]:
    """Readings from the JSON texts of :data:`COMMANDS` (as `… | json` prints them)."""
    return parse_json(device, {command: _load(device, command, outputs.get(command)) for command in COMMANDS})


def parse_json(device: str, replies: dict[str, Any]) -> list[Reading]:
    """Readings from NX-API's structured replies, keyed by command: the ``body`` of each (a whole JSON-RPC
    response or its ``result`` is unwrapped too)."""
    readings: list[Reading] = []
    for command in COMMANDS:
        for row in _rows(device, command, _body(replies.get(command))):
            port = row.get("interface")
            if not isinstance(port, str) or not _PHYSICAL.fullmatch(port):
                continue
            readings += [reading(device, port, metric, row[field]) for field, metric in _FIELDS[command]
                         if field in row]
    return readings


def _body(reply: Any) -> Any:
    for key in ("result", "body"):
        if isinstance(reply, dict) and key in reply:
            reply = reply[key]
    return reply


def _rows(device: str, command: str, body: Any) -> Iterator[dict[str, Any]]:
    """NX-API's ``TABLE_interface`` / ``ROW_interface``: a single row comes as an object, several as a list."""
    if not isinstance(body, dict) or not isinstance(body.get("TABLE_interface"), dict):
        raise ParseError(f"{device}: `{command}` has no TABLE_interface")
    rows = body["TABLE_interface"].get("ROW_interface", [])
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
