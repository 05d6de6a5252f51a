"""Small formatting helpers shared by the device pages, the fabric report and the runbook.

Every value shown comes from the resolved models, whose strings are constrained types (no line breaks, no
markup characters in names); text is still escaped for the syntax it lands in — a Markdown table cell, HTML —
so a description with a ``|`` or ``<`` stays text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fabricgen.models.device import DeviceModel, EcnThresholds, PortModel, QosModel, QueueModel

_MD_SPECIAL = str.maketrans({"|": "\\|", "`": "\\`", "<": "&lt;", ">": "&gt;", "*": "\\*", "_": "\\_",
                             "[": "\\[", "]": "\\]"})


class Code(str):
    """A table cell shown as code, verbatim but for ``|``: GitHub's tables split on it even inside code spans.
    Only fabricgen's own command texts are Code, and they hold no backtick."""


def md_cell(value: object) -> str:
    """A Markdown table cell: ``-`` for nothing, specials escaped, never a line break."""
    if isinstance(value, Code):
        return "`" + " ".join(value.split()).replace("|", "\\|") + "`"
    if value is None or value == "" or value == []:
        return "-"
    return " ".join(str(value).split()).translate(_MD_SPECIAL)


def md_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(md_cell(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def size(value: int | None) -> str:
    """Bytes as people read buffer sizes: decimal KB/MB when exact (the intent's own unit), else bytes."""
    if value is None:
        return "-"
    if value and value % 1_000_000 == 0:
        return f"{value // 1_000_000} MB"
    if value and value % 1000 == 0:
        return f"{value // 1000} KB"
    return f"{value:,} B"


def speed(mbps: int | None) -> str:
    if not mbps:
        return "-"
    return f"{mbps // 1000}G" if mbps % 1000 == 0 else f"{mbps}M"


def priorities(values: Iterable[int]) -> str:
    listed = sorted(values)
    return ",".join(str(value) for value in listed) if listed else "-"


def ecn(thresholds: EcnThresholds | None) -> str:
    if thresholds is None:
        return "-"
    return f"{size(thresholds.min_bytes)} / {size(thresholds.max_bytes)} / {thresholds.probability_pct} %"


def scheduler(queue: QueueModel) -> str:
    return f"DWRR {queue.weight} %" if queue.scheduler == "dwrr" else "strict"


def port_qos(device: DeviceModel, port: PortModel) -> QosModel | None:
    """The QoS in effect on a port: its own where its config binds other maps, else the device's."""
    return port.qos or device.qos


def port_ecn(device: DeviceModel, port: PortModel) -> str:
    """ECN marking on the port's lossless queues (the RoCE queues), as kmin / kmax / probability."""
    qos = port_qos(device, port)
    if qos is None:
        return "-"
    marked = [queue for queue in qos.queues if queue.ecn is not None and queue.lossless] or \
             [queue for queue in qos.queues if queue.ecn is not None]
    return "; ".join(f"q{queue.index}: {ecn(queue.ecn)}" for queue in marked) or "-"


def dscp_ranges(dscps: Iterable[int]) -> str:
    """``0-2,5,8-63``: the DSCPs of a class, compact."""
    values = sorted(set(dscps))
    parts: list[str] = []
    start = previous = None
    for value in values:
        if start is None:
            start = previous = value
        elif previous is not None and value == previous + 1:
            previous = value
        else:
            parts.append(_span(start, previous))
            start = previous = value
    if start is not None:
        parts.append(_span(start, previous))
    return ",".join(parts) or "-"


def _span(start: int, end: int | None) -> str:
    return str(start) if end in (None, start) else f"{start}-{end}"
