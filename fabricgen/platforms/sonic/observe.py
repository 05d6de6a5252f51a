"""SONiC's RoCE counters, read from COUNTERS_DB (and APPL_DB's PORT_TABLE for link flaps).

Collected with `sonic-db-dump -n COUNTERS_DB -y` and `sonic-db-dump -n APPL_DB -k 'PORT_TABLE:*' -y`: the dump
`show techsupport` (sonic-utilities scripts/generate_dump) saves, one JSON object of key → hash. The same JSON
shape is what sonic-utilities' tests/mock_tables hold, which is what this reader is tested against. The counter
maps name the objects: COUNTERS_PORT_NAME_MAP (port → oid), COUNTERS_QUEUE_NAME_MAP ("Ethernet0:3" → oid),
COUNTERS_QUEUE_INDEX_MAP and COUNTERS_QUEUE_TYPE_MAP (only unicast queues carry RoCE). Field names are SAI's
(saiport.h, saiqueue.h) as syncd's flex counters write them; PFC watchdog fields are orchagent's pfcwdorch.
"""

from __future__ import annotations

from typing import Any

import orjson

from fabricgen.observe.model import ParseError, Reading

COMMANDS = ("sonic-db-dump -n COUNTERS_DB -y", "sonic-db-dump -n APPL_DB -k 'PORT_TABLE:*' -y")

_PORT_FIELDS = {
    "SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES": "fec_corrected",
    "SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES": "fec_uncorrected",
    "SAI_PORT_STAT_IF_IN_FEC_SYMBOL_ERRORS": "fec_symbol_errors",
    "SAI_PORT_STAT_ETHER_STATS_CRC_ALIGN_ERRORS": "fcs_errors",
    "SAI_PORT_STAT_IF_IN_DISCARDS": "in_discards",
}
# (SAI field, metric, priority, scale): looked up by name — a port hash has ~100 fields, PFC is 24 of them.
_PFC_FIELDS = [(f"SAI_PORT_STAT_PFC_{p}_{suffix}", metric, p, scale) for p in range(8)
               for suffix, metric, scale in (("RX_PKTS", "pfc_rx_pause", 1.0), ("TX_PKTS", "pfc_tx_pause", 1.0),
                                             ("RX_PAUSE_DURATION_US", "pfc_rx_pause_duration", 1e-6))]
_PORT_ITEMS = tuple(_PORT_FIELDS.items())
_QUEUE_FIELDS = {
    "SAI_QUEUE_STAT_DROPPED_PACKETS": "queue_dropped",
    "SAI_QUEUE_STAT_WRED_DROPPED_PACKETS": "queue_wred_dropped",
    "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS": "queue_ecn_marked",
    "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES": "queue_watermark",
    "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED": "pfc_watchdog_storms",
    "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED": "pfc_watchdog_restores",
}


def parse(device: str, outputs: dict[str, str]) -> list[Reading]:
    """Readings from the text outputs of :data:`COMMANDS` (the second may be absent)."""
    counters = _load(device, COMMANDS[0], outputs.get(COMMANDS[0]))
    appl = _load(device, COMMANDS[1], outputs.get(COMMANDS[1])) if outputs.get(COMMANDS[1]) else {}
    return parse_tables(device, counters, appl)


def parse_tables(device: str, counters: dict[str, Any], appl: dict[str, Any]) -> list[Reading]:
    port_oids = _hash(counters.get("COUNTERS_PORT_NAME_MAP"))
    if not isinstance(port_oids, dict) or not port_oids:
        raise ParseError(f"{device}: COUNTERS_DB has no COUNTERS_PORT_NAME_MAP (are the flex counters enabled? "
                         "`counterpoll port enable`)")
    readings: list[Reading] = []
    try:
        for port, oid in sorted(port_oids.items()):
            _port(readings, device, port, _table(counters, f"COUNTERS:{oid}"), _table(counters, f"RATES:{oid}"))
        _queues(readings, device, counters)
        for key, value in sorted(appl.items()):
            fields = _hash(value)
            if key.startswith("PORT_TABLE:") and "flap_count" in fields:
                readings.append(Reading(device, key.split(":", 1)[1], "carrier_transitions", None,
                                        float(fields["flap_count"])))
    except (TypeError, ValueError) as exc:
        raise ParseError(f"{device}: COUNTERS_DB holds a counter that is not a number ({exc})") from None
    return readings


def _table(counters: dict[str, Any], key: str) -> Any:
    """One hash of the dump, unwrapped; only the hashes the readings need are looked at (a switch's dump holds
    ~600 of them: bench/observe.py)."""
    return _hash(counters.get(key)) or {}


def _port(readings: list[Reading], device: str, port: str, stats: dict[str, str], rates: dict[str, str]) -> None:
    """Appends to ``readings`` rather than returning a list: 32k ports per 32k-GPU snapshot."""
    get = stats.get
    append = readings.append
    for name, metric in _PORT_ITEMS:
        value = get(name)
        if value is not None:
            append(Reading(device, port, metric, None, float(value)))
    for name, metric, priority, scale in _PFC_FIELDS:
        value = get(name)
        if value is not None:
            append(Reading(device, port, metric, priority, float(value) * scale))
    ber = rates.get("FEC_PRE_BER")
    if ber not in (None, "", "N/A"):
        append(Reading(device, port, "pre_fec_ber", None, float(ber)))


def _queues(readings: list[Reading], device: str, counters: dict[str, Any]) -> None:
    names = _table(counters, "COUNTERS_QUEUE_NAME_MAP")
    types = _table(counters, "COUNTERS_QUEUE_TYPE_MAP")
    indexes = _table(counters, "COUNTERS_QUEUE_INDEX_MAP")
    queue_fields = tuple(_QUEUE_FIELDS.items())
    get_type, get_index, get_hash = types.get, indexes.get, counters.get
    append = readings.append
    for name, oid in sorted(names.items()):
        if get_type(oid, "SAI_QUEUE_TYPE_UNICAST") != "SAI_QUEUE_TYPE_UNICAST":
            continue  # multicast queues carry no RoCE; their drops would hide the unicast ones
        port, _, number = name.rpartition(":")
        index = int(get_index(oid, number))
        stats = _hash(get_hash("COUNTERS:" + oid)) or {}  # one lookup per queue: 32k queues at 32k GPUs
        get = stats.get
        for field, metric in queue_fields:
            value = get(field)
            if value is not None:
                append(Reading(device, port, metric, index, float(value)))


def _load(device: str, command: str, text: str | None) -> dict[str, Any]:
    if not text:
        raise ParseError(f"{device}: `{command}` printed nothing")
    try:
        data = orjson.loads(text)  # a 64-port switch's dump is ~1 MB; orjson parses it 3-5x faster than json
    except orjson.JSONDecodeError as exc:
        raise ParseError(f"{device}: `{command}` is not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise ParseError(f"{device}: `{command}` printed a {type(data).__name__}, not a key → hash object")
    return data


def _hash(value: Any) -> Any:
    """sonic-db-dump wraps each hash as {"type": "hash", "value": {...}, "ttl": …}; the mock tables do not."""
    if isinstance(value, dict) and value.get("type") == "hash" and isinstance(value.get("value"), dict):
        return value["value"]
    return value
