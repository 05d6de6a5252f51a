"""Small helpers shared by rule modules."""

from __future__ import annotations

from collections.abc import Callable

from fabricgen.lint.context import End, LintContext
from fabricgen.lint.registry import KeyPath
from fabricgen.model import DeviceModel, QosModel, QueueModel


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
    return queue_in(device.qos, tc)


def queue_in(qos: QosModel | None, tc: int) -> QueueModel | None:
    """The queue a traffic class egresses on under ``qos`` (a device's, or one port's own)."""
    if qos is None:
        return None
    index = qos.tc_to_queue.get(tc, tc)
    return next((q for q in qos.queues if q.index == index), None)


def kib(value: int) -> str:
    """Bytes as people read thresholds: 5000 B, 150 KB, 1.5 MB (decimal, as the intent writes them)."""
    if value >= 1_000_000 and value % 100_000 == 0:
        return f"{value / 1_000_000:g} MB"
    if value >= 1000 and value % 1000 == 0:
        return f"{value // 1000} KB"
    return f"{value} B"


def remedy(ctx: LintContext, device: DeviceModel, setting: Callable[[DeviceModel], object], intent: str,
           on_device: str) -> str:
    """The fix for a finding about one ``setting`` of ``device``. When the device was read from its config and
    the setting there differs from the intent's, the device drifted and is what is wrong: the fix is on the device
    (changing the intent to match it would spread the fault). Otherwise the intent asks for what the finding
    reports, and the fix is in the intent."""
    intended = ctx.intended(device)
    if intended is not None and setting(device) != setting(intended):
        return f"on {device.name}: {on_device}"
    return intent


def rdma_ecn(device: DeviceModel) -> object:
    """The RoCE queue's ECN thresholds (the setting several ECN findings are about)."""
    queue = queue_for_tc(device, device.qos.rdma_priority) if device.qos is not None else None
    return queue.ecn if queue is not None else None


def queue_settings(device: DeviceModel) -> object:
    """Every queue's scheduling and ECN, by index."""
    return {q.index: (q.scheduler, q.weight, q.ecn) for q in device.qos.queues} if device.qos is not None else None
