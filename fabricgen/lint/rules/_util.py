"""Small helpers shared by rule modules."""

from __future__ import annotations

from fabricgen.lint.context import End
from fabricgen.lint.registry import KeyPath
from fabricgen.model import DeviceModel, QueueModel


def port_source(device: str, port: str) -> KeyPath:
    return ("inventory", device, "data", "ports", port)


def device_source(device: str) -> KeyPath:
    return ("inventory", device)


def end_source(end: End) -> KeyPath:
    return port_source(end.device.name, end.port.name)


def fmt_set(values: frozenset[int] | set[int] | list[int]) -> str:
    return "{" + ",".join(str(v) for v in sorted(values)) + "}"


def queue_for_tc(device: DeviceModel, tc: int) -> QueueModel | None:
    """The queue a traffic class egresses on, per the device's own TC→queue map."""
    if device.qos is None:
        return None
    index = device.qos.tc_to_queue.get(tc, tc)
    return next((q for q in device.qos.queues if q.index == index), None)


def kib(value: int) -> str:
    """Bytes as people read thresholds: 5000 B, 150 KB, 1.5 MB (decimal, as the intent writes them)."""
    if value >= 1_000_000 and value % 100_000 == 0:
        return f"{value / 1_000_000:g} MB"
    if value >= 1000 and value % 1000 == 0:
        return f"{value // 1000} KB"
    return f"{value} B"
