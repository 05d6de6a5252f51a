"""Scheduling: weights that add up, RDMA/TCP/management in separate queues, no starving strict class."""

from __future__ import annotations

from collections.abc import Iterator

from fabricgen.lint.context import LintContext, Nic
from fabricgen.lint.registry import Finding, Rule, rule
from fabricgen.lint.rules._util import Problem, device_source, per_port_qos, port_source, queue_settings
from fabricgen.models.device import DeviceModel, QosModel


@rule("FG-SCH-001", "dwrr-weights-not-100", "error", "DWRR weights sum to 100 on every switch and NIC")
def dwrr_weights(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """ETS shares are percentages of what strict queues leave. A sum other than 100 is refused by the mlx5
    driver ('BW sum is illegal') and means different shares on platforms that normalise differently.

    Fix: weights that add up to exactly 100."""
    yield from per_port_qos(ctx, r, _weights_not_100, queue_settings, located="qos.queues")
    # Every NIC of a fabric carries one of a few TSA/share vectors: sum each distinct pair once.
    ets_sums: dict[tuple[tuple[str, ...], tuple[int, ...]], int | None] = {}
    for host, nics in ctx.host_nics:
        for nic in nics:
            key = (nic.tsa, nic.tcbw)
            if key not in ets_sums:
                ets_sums[key] = _ets_sum(*key)
            total = ets_sums[key]
            if total is not None and total != 100:
                yield r.finding(host.name, f"ETS shares sum to {total}", "mlnx_qos --tcbw summing to 100",
                                port=nic.interface, source=port_source(host.name, nic.interface))


def _weights_not_100(device: DeviceModel, qos: QosModel) -> list[Problem]:
    weights = {q.index: q.weight or 0 for q in qos.queues if q.scheduler == "dwrr"}
    total = sum(weights.values())
    if not weights or total == 100 or _rounded_thirds(device, weights):
        return []
    shares = ", ".join(f"queue {index} {weight}" for index, weight in sorted(weights.items()))
    return [(f"DWRR weights sum to {total} ({shares})", "make the classes' weights add up to 100",
             f"make its DWRR weights ({shares}) add up to 100", ("intent", "qos", "classes"))]


def _rounded_thirds(device: DeviceModel, weights: dict[int, int]) -> bool:
    """NX-OS takes `bandwidth remaining percent` per class and its own reference configs split three ways as
    33/33/33: a sum of 99 from equal shares that round down is 100 as the switch schedules it."""
    values = set(weights.values())
    return device.platform == "nxos" and sum(weights.values()) == 99 and len(values) == 1 and len(weights) == 3


def _ets_sum(tsa: tuple[str, ...], tcbw: tuple[int, ...]) -> int | None:
    """The ETS shares' sum; None where no TC is ETS."""
    ets = [bw for mode, bw in zip(tsa, tcbw, strict=True) if mode == "ets"]
    return sum(ets) if ets else None


@rule("FG-SCH-002", "classes-share-a-queue", "error", "RDMA, TCP and management traffic use different queues")
def classes_share_a_queue(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Two classes in one egress queue share its buffer, its ECN marking and — if one is lossless — its PFC
    pauses: a TCP burst then pauses RDMA, or RDMA's PFC stalls management.

    Fix: give every class its own queue."""
    policy = ctx.policy
    if policy is None:
        return

    def shared_queues(device: DeviceModel, qos: QosModel) -> list[Problem]:
        by_queue: dict[int, set[int]] = {}
        for tc in sorted(set(qos.dscp_to_tc.values())):
            by_queue.setdefault(qos.tc_to_queue.get(tc, tc), set()).add(tc)
        return [(f"traffic classes {sorted(tcs)} share queue {queue}", "map each class to its own queue",
                 f"map traffic classes {sorted(tcs)} to separate queues (all go to queue {queue})",
                 device_source(device.name)) for queue, tcs in sorted(by_queue.items()) if len(tcs) > 1]

    yield from per_port_qos(ctx, r, shared_queues, lambda d: (d.qos.dscp_to_tc, d.qos.tc_to_queue) if d.qos else None)


@rule("FG-SCH-003", "strict-class-may-starve-rdma", "warning", "no unlimited strict class besides CNP")
def strict_may_starve(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Strict priority is served first, always. CNPs are tiny, so strict is right for them; any other strict
    class without a rate limit can take the whole link and starve RDMA and everything weighted.

    Fix: make the class DWRR, or keep only CNP strict."""
    policy = ctx.policy
    if policy is None:
        return
    cnp = policy.cnp_priority

    def unlimited_strict(device: DeviceModel, qos: QosModel) -> list[Problem]:
        return [(f"queue {q.index} ({q.class_name}) is strict priority with no rate limit", "use DWRR for this class",
                 f"schedule queue {q.index} DWRR", ("intent", "qos", "classes", q.class_name))
                for q in qos.queues if q.scheduler == "strict" and q.traffic_class != cnp]

    yield from per_port_qos(ctx, r, unlimited_strict, queue_settings, located="qos.queues")


@rule("FG-SCH-005", "nic-ets-differs-from-switch", "error",
      "a NIC schedules each class as its switch port does (strict or the same DWRR share)")
def nic_ets_differs_from_switch(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """The NIC's ETS decides what leaves the host, the switch port's schedulers what leaves the switch towards it.
    Both carry the same classes: a class strict on one side and weighted on the other, or weighted with another
    share, gives it a different bandwidth guarantee on the way up than on the way down — RoCE starved by bulk
    traffic on the host's uplink while the fabric protects it, or CNPs queued behind data at the NIC. Shares are
    compared as each side's part of its weighted total (SONiC's DWRR weights are relative).

    Fix: the NIC's ETS (`mlnx_qos --tsa/--tcbw`, `dcb ets`) as the switch port's queues: fabricgen's host script
    derives both from the intent's classes."""
    known: dict[tuple[object, ...], list[str]] = {}  # NICs of one ETS on ports of one QoS: compared once
    for host, nics in ctx.host_nics:
        for nic in nics:
            end = ctx.end(host.name, nic.interface)
            switch = ctx.peer_of(end) if end is not None else None
            if switch is None or switch.qos is None or not switch.qos.queues:
                continue
            key = (tuple(nic.tsa), tuple(nic.tcbw), tuple(nic.prio_tc), id(switch.qos))  # the fabric keeps the qos
            wrong = known.get(key)
            if wrong is None:
                wrong = known[key] = _ets_disagreements(nic, switch.qos)
            if wrong:
                yield r.finding(host.name, f"the NIC schedules classes unlike {switch.name}: {'; '.join(wrong)}",
                                "give the NIC's ETS the switch port's strictness and shares (fabricgen's host script "
                                "does)", port=nic.interface, peer=switch.name,
                                source=port_source(host.name, nic.interface))


def _shares(weights: dict[int, int]) -> dict[int, float]:
    total = sum(weights.values())
    return {key: weight * 100 / total for key, weight in weights.items()} if total else {}


def _ets_disagreements(nic: Nic, qos: QosModel) -> list[str]:
    """``priority p: NIC …, switch …`` for each class the two sides schedule differently."""
    switch_dwrr = _shares({q.traffic_class: q.weight or 0 for q in qos.queues if q.scheduler == "dwrr"})
    nic_dwrr = _shares({tc: bw for tc, (mode, bw) in enumerate(zip(nic.tsa, nic.tcbw, strict=True)) if mode == "ets"})
    wrong = []
    for queue in sorted(qos.queues, key=lambda q: q.traffic_class):
        tc = nic.prio_tc[queue.traffic_class] if queue.traffic_class < len(nic.prio_tc) else None
        if tc is None:
            continue
        nic_mode = nic.tsa[tc]
        switch_share = switch_dwrr.get(queue.traffic_class, 0)
        switch_text = "strict" if queue.scheduler == "strict" else f"DWRR {switch_share:.0f} %"
        nic_text = "strict" if nic_mode == "strict" else f"ETS {nic_dwrr.get(tc, 0):.0f} %"
        same_mode = (nic_mode == "strict") == (queue.scheduler == "strict")
        if not same_mode or (queue.scheduler == "dwrr" and
                             abs(nic_dwrr.get(tc, 0) - switch_share) >= 1):
            wrong.append(f"priority {queue.traffic_class}: NIC {nic_text} (TC {tc}), switch {switch_text}")
    return wrong
