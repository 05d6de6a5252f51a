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
  corrected: bins 1-15 summed are the corrected codewords).

Tables are read by the columns their dash line draws (values such as ``56.52 MB`` hold spaces); a value that is
not a plain number (``n/a``, sizes with units) is not read. A command the switch does not know (an older
release) prints no table, and the port simply has none of its readings.
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
_DASHES = re.compile(r"^ *-+(?: +-+)* *$")
_INTEGER = re.compile(r"^[0-9]+$")
_FLOAT = re.compile(r"^[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$")

# "Counter / Receive / Transmit" tables of `counters`: row → metric (the Receive column).
COUNTER_ROWS = {"FCS Errors": "fcs_errors", "Symbol Errors": "symbol_errors", "Buffer Drops": "in_discards"}
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
            yield port, what, body


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]  # cells by the dash line's columns; the first keeps its indentation


def tables(text: str) -> list[Table]:
    """Every table NVUE printed: a header line, a dash line drawing the columns, rows until a blank line or the
    next section title (a line underlined with ``=``)."""
    lines = text.splitlines()
    found = []
    for at, line in enumerate(lines):
        if at == 0 or not _DASHES.match(line):
            continue
        starts = [match.start() for match in re.finditer(r"-+", line)]
        rows = []
        for number in range(at + 1, len(lines)):
            row = lines[number]
            following = lines[number + 1].strip() if number + 1 < len(lines) else ""
            if not row.strip() or (following and set(following) == {"="}):
                break
            rows.append([row[start:end].rstrip() for start, end in zip(starts, [*starts[1:], None], strict=True)])
        found.append(Table(re.split(r"\s{2,}", lines[at - 1].strip()), rows))
    return found


def tree(table: Table) -> dict[tuple[str, ...], str]:
    """A key/value table (`operational` column) as {path of keys by indentation: value}."""
    values: dict[tuple[str, ...], str] = {}
    stack: list[tuple[int, str]] = []
    for row in table.rows:
        key = row[0]
        indent = len(key) - len(key.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, key.strip()))
        if len(row) > 1 and row[1].strip():
            values[tuple(name for _, name in stack)] = row[1].strip()
    return values


def _number(cell: str, pattern: re.Pattern[str] = _INTEGER) -> float | None:
    cell = cell.strip()
    return float(cell) if pattern.match(cell) else None


def _counters(device: str, port: str, body: str, _classes: Classes) -> list[Reading]:
    readings = []
    for table in tables(body):
        if table.header[:1] == ["Counter"] and "Receive" in table.header:
            column = table.header.index("Receive")
            for row in table.rows:
                metric = COUNTER_ROWS.get(row[0].strip())
                value = _number(row[column]) if metric and column < len(row) else None
                if metric and value is not None:
                    readings.append(Reading(device, port, metric, None, value))
        elif table.header[:1] != ["Counter"]:
            value_text = tree(table).get(("carrier-transitions",))
            if value_text is not None and (value := _number(value_text)) is not None:
                readings.append(Reading(device, port, "carrier_transitions", None, value))
    return readings


def _per_index(device: str, port: str, body: str, first: str, columns: dict[str, str]) -> list[Reading]:
    readings = []
    for table in tables(body):
        if table.header[:1] != [first]:
            continue
        for row in table.rows:
            index = _number(row[0])
            if index is None:
                continue
            for name, metric in columns.items():
                if name in table.header and (value := _number(row[table.header.index(name)])) is not None:
                    readings.append(Reading(device, port, metric, int(index), value))
    return readings


def _pfc(device: str, port: str, body: str, _classes: Classes) -> list[Reading]:
    return _per_index(device, port, body, "switch-priority",
                      {"rx-pause-frames": "pfc_rx_pause", "tx-pause-frames": "pfc_tx_pause"})


def _queues(device: str, port: str, body: str, _classes: Classes) -> list[Reading]:
    return _per_index(device, port, body, "traffic-class", {"wred-discards": "queue_wred_dropped"})


def _roce(device: str, port: str, body: str, classes: Classes) -> list[Reading]:
    readings = []
    for table in tables(body)[:1]:
        values = tree(table)
        for path, (metric, which) in ROCE_PATHS.items():
            index = classes.index(which)
            if index is not None and path in values and (value := _number(values[path])) is not None:
                readings.append(Reading(device, port, metric, index, value))
    return readings


def _phy(device: str, port: str, body: str, _classes: Classes) -> list[Reading]:
    readings = []
    for table in tables(body)[:1]:
        values = {path[0]: text for path, text in tree(table).items() if len(path) == 1}
        if (symbols := _number(values.get("symbol-errors", ""))) is not None:
            readings.append(Reading(device, port, "fec_uncorrected_symbols", None, symbols))
        bins = [_number(values.get(f"rs-num-corr-err-bin{n}", "")) for n in range(1, 16)]
        if any(count is not None for count in bins):
            readings.append(Reading(device, port, "fec_corrected", None, sum(count or 0.0 for count in bins)))
        if (ber := _number(values.get("raw-ber", ""), _FLOAT)) is not None:
            readings.append(Reading(device, port, "pre_fec_ber", None, ber))
    return readings


_SECTION_READERS = {"counters": _counters, "counters qos pfc-stats": _pfc,
                    "counters qos egress-queue-stats": _queues, "qos roce counters": _roce,
                    "link phy-detail": _phy}
