"""Cumulus Linux (NVUE) switch counters: `nv show interface <port> …` per data port, read as NVUE prints them.

Commands and layouts as NVIDIA documents them (Cumulus Linux user guide 5.12, "Monitoring Interfaces and
Transceivers with NVUE" and "RDMA over Converged Ethernet - RoCE"; NVUE command reference, "QoS" show commands):

- ``counters``: carrier-transitions; the "Error Counters" table (FCS Errors, Symbol Errors, Receive) and the
  "Drop Counters" table (Buffer Drops, Receive);
- ``counters qos pfc-stats`` (Cumulus Linux 5.5 and later): rx/tx-pause-frames per switch-priority. The pause
  durations are not read: NVIDIA's pages give no unit for them;
- ``counters qos egress-queue-stats``: wred-discards per traffic-class (tx-uc-buffer-discards is printed in
  bytes, not packets: not read);
- ``qos roce counters``: tx ECN-marked packets and tx unicast-no-buffer-discard of the RoCE traffic, rx
  no-buffer-discard of the RoCE traffic, tx unicast-no-buffer-discard of the CNP traffic. NVUE counts them per
  port for the RoCE (and CNP) class; they are filed under the queue (or priority) the intent gives that class;
- ``link phy-detail`` (the AmBER PHY page): symbol-errors — the same PPCNT phy_symbol_errors counter that mlx5
  exposes as rx_pcs_symbol_err_phy, "symbol errors that wasn't corrected by FEC" (kernel mlx5 counters.rst) —
  raw-ber (the pre-FEC BER) and the RS-FEC histogram rs-num-corr-err-bin<N> (codewords with N symbols
  corrected: the bins from 1 up, summed, are the corrected codewords).

The per-priority and per-queue tables are read by the columns their dash line draws (a cell such as ``0 Bytes``
holds a space), the key/value pages by their keys; a value that is not a plain number (``n/a``, sizes with
units) is not read. A command the switch does not know (an older release) prints no table, and the port simply
has none of its readings.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass

from fabricgen.models.device import DeviceModel
from fabricgen.observe.model import ParseError, Reading

COMMANDS = ("counters", "counters qos pfc-stats", "counters qos egress-queue-stats", "qos roce counters",
            "link phy-detail")
_DASH_LINE = re.compile(r"^-+(?:  +-+)* *$", re.MULTILINE)
_INTEGER = re.compile(r"^[0-9]+$")
_FLOAT = re.compile(r"^[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$")
# `counters`: the operational carrier-transitions, and rows of its Counter/Receive/Transmit tables (Receive).
_COUNTER_KEYS = (("carrier-transitions", "carrier_transitions"), ("    FCS Errors", "fcs_errors"),
                 ("    Symbol Errors", "symbol_errors"), ("    Buffer Drops", "in_discards"))
_DEPTH_1 = re.compile(r"\n  (?! )")
# NVIDIA's layouts of the two per-index pages (header, then rows); another column order takes the general road.
_PFC_HEADER = "switch-priority  rx-pause-frames  rx-pause-duration  tx-pause-frames  tx-pause-duration"
_PFC_ROW = re.compile(r"^([0-7])  +([0-9]+)  +\S+(?: [A-Za-z]+)?  +([0-9]+)  ", re.MULTILINE)
_QUEUE_HEADER = "traffic-class  tx-frames  tx-bytes  tx-uc-buffer-discards  wred-discards\n"
_QUEUE_ROW = re.compile(r"^([0-7])  .*  ([0-9]+) *$", re.MULTILINE)

# `qos roce counters` paths → (metric, which class: "roce" queue, "roce" priority or "cnp" queue).
ROCE_PATHS = {("tx-stats", "tx-ecn-stats", "ecn-marked-packets"): ("queue_ecn_marked", "roce-queue"),
              ("tx-stats", "tx-roce-stats", "unicast-no-buffer-discard"): ("queue_dropped", "roce-queue"),
              ("rx-stats", "rx-roce-stats", "no-buffer-discard"): ("prio_buffer_discards", "roce-priority"),
              ("tx-stats", "tx-cnp-stats", "unicast-no-buffer-discard"): ("queue_dropped", "cnp-queue")}


@dataclass(frozen=True)
class Classes:
    """Where NVUE's per-class RoCE counters are filed: the intent's RoCE priority, its queue, the CNP queue."""

    roce_priority: int | None = None
    roce_queue: int | None = None
    cnp_queue: int | None = None

    @classmethod
    def of(cls, device: DeviceModel) -> Classes:
        qos = device.qos
        if qos is None:
            return cls()
        return cls(qos.rdma_priority, qos.tc_to_queue.get(qos.rdma_priority, qos.rdma_priority),
                   qos.tc_to_queue.get(qos.cnp_priority, qos.cnp_priority))

    def index(self, which: str) -> int | None:
        return {"roce-queue": self.roce_queue, "roce-priority": self.roce_priority, "cnp-queue": self.cnp_queue}[which]


def data_ports(device: DeviceModel) -> list[str]:
    return [port.name for port in device.ports if port.peer and port.role != "mgmt"]


def command(port: str) -> str:
    """One port's counters in one SSH command: each `nv show` after a `== <port> <command>` line."""
    quoted = shlex.quote(port)
    return "; ".join(f"echo {shlex.quote(f'== {port} {what}')}; nv show interface {quoted} {what} 2>&1"
                     for what in COMMANDS) + "; true"


def parse(device: str, text: str, classes: Classes) -> list[Reading]:
    """Readings of every `== <port> <command>` section of ``text``."""
    readings: list[Reading] = []
    sections = 0
    for port, what, body in _sections(text):
        sections += 1
        readings += _SECTION_READERS[what](device, port, body, classes)
    if not sections:
        raise ParseError(f"{device}: the counter command printed none of its `== <port> <command>` sections")
    return readings


def _sections(text: str) -> Iterator[tuple[str, str, str]]:
    for section in ("\n" + text).split("\n== ")[1:]:
        head, _, body = section.partition("\n")
        port, _, what = head.strip().partition(" ")
        if what in COMMANDS:
            yield port, what, "\n" + body  # every line of the page starts after a newline (_value)


def table(body: str, first: str) -> tuple[list[str], list[list[str]]]:
    """The table whose header starts with ``first``: its header names and its rows' cells, cut at the columns its
    dash line draws (a cell such as ``0 Bytes`` holds a space), rows until a blank line. None found: no rows."""
    for dashes in _DASH_LINE.finditer(body):
        above = body.rfind("\n", 0, dashes.start() - 1)
        header = re.split(r"\s{2,}", body[above + 1:dashes.start()].strip())
        if header[:1] != [first]:
            continue
        starts = [match.start() for match in re.finditer(r"-+", dashes.group())]
        ends = [*starts[1:], None]
        rows = []
        for line in body[dashes.end() + 1:].split("\n"):
            if not line.strip():
                break
            rows.append([line[start:end].strip() for start, end in zip(starts, ends, strict=True)])
        return header, rows
    return [], []


def _number(cell: str, pattern: re.Pattern[str] = _INTEGER) -> float | None:
    return float(cell) if pattern.match(cell) else None


def _counters(device: str, port: str, body: str, _classes: Classes) -> list[Reading]:
    """carrier-transitions (the operational column) and the Receive column — the first after the name — of the
    Counter/Receive/Transmit tables. Found with str.find rather than a table per line: a 64-port leaf prints
    8,000 lines a snapshot (bench/observe.py)."""
    readings = []
    for key, metric in _COUNTER_KEYS:
        if (value := _number(_value(body, key))) is not None:
            readings.append(Reading(device, port, metric, None, value))
    return readings


def _value(body: str, key: str, start: int = 0, end: int | None = None) -> str:
    """The first word after ``key`` on its line (``key`` includes the line's indentation and starts after a
    newline), searched within body[start:end]; "" when the key is not there."""
    at = body.find(f"\n{key}  ", start, end)
    if at < 0:
        return ""
    line_end = body.find("\n", at + 1)
    words = body[at + len(key) + 1:line_end if line_end >= 0 else None].split(None, 1)
    return words[0] if words else ""


def _per_index(device: str, port: str, body: str, first: str, columns: dict[str, str]) -> list[Reading]:
    header, rows = table(body, first)
    wanted = [(header.index(name), metric) for name, metric in columns.items() if name in header]
    readings = []
    for row in rows:
        if not row[0].isdigit():
            continue
        for column, metric in wanted:
            if (value := _number(row[column])) is not None:
                readings.append(Reading(device, port, metric, int(row[0]), value))
    return readings


def _pfc(device: str, port: str, body: str, _classes: Classes) -> list[Reading]:
    if _PFC_HEADER in body:  # NVIDIA's layout: one expression over the rows (a 64-port leaf, every snapshot)
        readings: list[Reading] = []
        for priority, rx, tx in _PFC_ROW.findall(body):
            readings += (Reading(device, port, "pfc_rx_pause", int(priority), float(rx)),
                         Reading(device, port, "pfc_tx_pause", int(priority), float(tx)))
        return readings
    return _per_index(device, port, body, "switch-priority",
                      {"rx-pause-frames": "pfc_rx_pause", "tx-pause-frames": "pfc_tx_pause"})


def _queues(device: str, port: str, body: str, _classes: Classes) -> list[Reading]:
    if _QUEUE_HEADER in body:
        return [Reading(device, port, "queue_wred_dropped", int(queue), float(value))
                for queue, value in _QUEUE_ROW.findall(body)]
    return _per_index(device, port, body, "traffic-class", {"wred-discards": "queue_wred_dropped"})


def _roce(device: str, port: str, body: str, classes: Classes) -> list[Reading]:
    """The four per-class counters, each looked up within its parent's block (``unicast-no-buffer-discard`` is
    both the RoCE and the CNP class's): a parent at depth 1, its children at depth 2, as NVUE indents them."""
    readings = []
    for (_, parent, child), (metric, which) in ROCE_PATHS.items():
        index = classes.index(which)
        at = body.find(f"\n  {parent}")
        if index is None or at < 0:
            continue
        following = _DEPTH_1.search(body, at + 1)
        if (value := _number(_value(body, f"    {child}", at, following.start() if following else None))) is not None:
            readings.append(Reading(device, port, metric, index, value))
    return readings


def _phy(device: str, port: str, body: str, _classes: Classes) -> list[Reading]:
    readings = []
    if (symbols := _number(_value(body, "symbol-errors"))) is not None:
        readings.append(Reading(device, port, "fec_uncorrected_symbols", None, symbols))
    histogram = body.find("\nrs-num-corr-err-bin")
    if histogram >= 0:  # the RS-FEC histogram's lines, in bin order, close the page
        corrected = 0.0
        for line in body[histogram + 1:].split("\n"):
            words = line.split()
            if len(words) < 2 or not words[0].startswith("rs-num-corr-err-bin"):
                break
            if words[0] != "rs-num-corr-err-bin0" and (count := _number(words[1])) is not None:
                corrected += count
        readings.append(Reading(device, port, "fec_corrected", None, corrected))
    if (ber := _number(_value(body, "raw-ber"), _FLOAT)) is not None:
        readings.append(Reading(device, port, "pre_fec_ber", None, ber))
    return readings


_SECTION_READERS = {"counters": _counters, "counters qos pfc-stats": _pfc,
                    "counters qos egress-queue-stats": _queues, "qos roce counters": _roce,
                    "link phy-detail": _phy}
