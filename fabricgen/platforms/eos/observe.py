"""Arista EOS RoCE counters from eAPI JSON (`show … | json`, or eAPI's runCmds with format json).

`show interfaces`: interfaceCounters.inputErrorsDetail.fcsErrors/symbolErrors, inDiscards, linkStatusChanges.
`show interfaces phy detail`: per PHY chip on the port's path, fec.correctedCodewords/uncorrectedCodewords and
preFecBer (the counters are per chip, so they are summed and the worst BER kept). `show priority-flow-control
counters`: rxFrames/txFrames per interface, all priorities together (EOS's JSON has no per-priority split there,
so these readings carry no priority). Field names as in ANTA's VerifyInterfacesCounterDetails, VerifyInterfacesBER
and VerifyInterfacesPFCCounters, whose recorded outputs the tests use.
"""

from __future__ import annotations

from typing import Any

import orjson

from fabricgen.observe.model import ParseError, Reading, reading

COMMANDS = ("show interfaces", "show interfaces phy detail", "show priority-flow-control counters")


def parse(device: str, outputs: dict[str, str]) -> list[Reading]:
    return parse_json(device, {command: _load(device, command, outputs.get(command)) for command in COMMANDS})


def parse_json(device: str, replies: dict[str, dict[str, Any]]) -> list[Reading]:
    readings: list[Reading] = []
    for port, facts in sorted((replies.get(COMMANDS[0]) or {}).get("interfaces", {}).items()):
        counters = facts.get("interfaceCounters") or {}
        errors = counters.get("inputErrorsDetail") or {}
        readings += [reading(device, port, metric, source[field]) for source, field, metric in (
            (errors, "fcsErrors", "fcs_errors"), (errors, "symbolErrors", "symbol_errors"),
            (counters, "inDiscards", "in_discards"), (counters, "linkStatusChanges", "carrier_transitions"))
            if field in source]
    for port, facts in sorted((replies.get(COMMANDS[1]) or {}).get("interfacePhyStatuses", {}).items()):
        readings += _phy(device, port, facts.get("phyStatuses") or [])
    for port, facts in sorted((replies.get(COMMANDS[2]) or {}).get("interfaceCounters", {}).items()):
        readings += [reading(device, port, "pfc_rx_pause", facts["rxFrames"]),
                     reading(device, port, "pfc_tx_pause", facts["txFrames"])]
    return readings


def _phy(device: str, port: str, chips: list[dict[str, Any]]) -> list[Reading]:
    fec = [chip["fec"] for chip in chips if isinstance(chip.get("fec"), dict)]
    if not fec:
        return []
    corrected = sum(f.get("correctedCodewords", {}).get("value", 0) for f in fec)
    uncorrected = sum(f.get("uncorrectedCodewords", {}).get("value", 0) for f in fec)
    readings = [reading(device, port, "fec_corrected", corrected),
                reading(device, port, "fec_uncorrected", uncorrected)]
    bers = [chip["preFecBer"]["value"] for chip in chips if isinstance(chip.get("preFecBer"), dict)]
    if bers:
        readings.append(reading(device, port, "pre_fec_ber", max(bers)))
    return readings


def _load(device: str, command: str, text: str | None) -> dict[str, Any]:
    if not text:
        raise ParseError(f"{device}: `{command} | json` printed nothing")
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ParseError(f"{device}: `{command} | json` is not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise ParseError(f"{device}: `{command} | json` printed a {type(data).__name__}, not an object")
    return data
