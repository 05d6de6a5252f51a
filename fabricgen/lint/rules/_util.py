"""Small helpers shared by rule modules."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from fabricgen.lint.context import End, LintContext
from fabricgen.lint.registry import Finding, KeyPath, Rule, Severity
from fabricgen.models.device import DeviceModel, QosModel, QueueModel


def port_source(device: str, port: str) -> KeyPath:
    return ("inventory", device, "data", "ports", port)


def device_source(device: str) -> KeyPath:
    return ("inventory", device)


def end_source(end: End, key: str | None = None) -> KeyPath:
    """Where the end's port is declared; with ``key`` (``cable_m``, ``media``), where that setting of its cable is:
    the port's key in hosts.yaml, a compact inventory's cabling.csv row (else the port, where the key is not said)."""
    path = port_source(end.device.name, end.port.name)
    return (*path, key) if key is not None else path


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


# One problem a QoS check finds: the message, the fix in the intent, the fix on the device, and the intent key
# path the finding points at when it is about the device's own (switch-wide) QoS.
Problem = tuple[str, str, str, KeyPath]


def per_port_qos(ctx: LintContext, r: Rule, check: Callable[[DeviceModel, QosModel], list[Problem]],
                 setting: Callable[[DeviceModel], object], severity: Severity | None = None,
                 located: str = "qos") -> Iterator[Finding]:
    """``check(device, qos)`` run on every QoS a switch applies: the switch's own (findings on the device), then
    each data port's own where its config binds other maps, trust, queues or watchdog (a reader's ``port.qos``;
    findings on ``device:port``). A port reports only what the switch's own QoS does not already report, so one
    switch-wide fault stays one finding, and one port's fault names that port rather than the switch or FG-CFG-001
    alone.
    ``setting`` reads what the finding is about, for :func:`remedy` (device drifted vs intent asks for it);
    ``located``, the port's model field it is about, where a port's finding points in a config read back
    (Capability.config_words: SONiC's PORT_QOS_MAP, QUEUE or PFC_WD entry of the port)."""
    for device, ports in ctx.switch_own_qos_ports:
        if device.qos is None:
            continue
        own_problems = check(device, device.qos)
        for message, intent_fix, device_fix, source in own_problems:
            yield r.finding(device.name, message, remedy(ctx, device, setting, intent_fix, device_fix), source=source,
                            severity=severity, setting=located)
        reported = {problem[0] for problem in own_problems}
        checked: dict[int, list[Problem]] = {}  # ports of one config often share one QoS object
        for end in ports:  # those whose QoS is their own
            qos = end.port.qos
            if qos is None:
                continue
            problems = checked.get(id(qos))
            if problems is None:
                problems = checked[id(qos)] = check(device, qos)
            for message, _, device_fix, _ in problems:
                if message not in reported:
                    yield r.finding(device.name, f"{message} on this port (the switch's other ports do not)",
                                    f"on {device.name}: {device_fix} on {end.port.name}", port=end.port.name,
                                    source=end_source(end), severity=severity, setting=located)
