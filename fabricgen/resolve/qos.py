"""DSCP → TC → PG → queue, PFC priorities, ECN and schedulers: the same on every device by construction.

Conventions (the ones SONiC, NVIDIA and ConnectX share): a class's priority is also its traffic class and,
for lossless classes, its priority group; PG 0 holds all lossy traffic.
"""

from __future__ import annotations

from fabricgen.models.device import EcnThresholds, QosModel, QueueModel, WatchdogModel
from fabricgen.models.intent import Intent, QosClass


def dscp_owner(intent: Intent) -> dict[int, str]:
    """Every DSCP 0..63 → the name of its class (explicit lists first, then the default class)."""
    owner: dict[int, str] = {}
    default_class = None
    for name, cls in intent.qos.classes.items():
        if cls.dscp == "default":
            default_class = name
            continue
        for dscp in cls.dscp:
            owner[dscp] = name
    if default_class is not None:
        for dscp in range(64):
            owner.setdefault(dscp, default_class)
    return owner


def _queue(name: str, cls: QosClass) -> QueueModel:
    ecn = None
    if cls.ecn is not None:
        ecn = EcnThresholds(min_bytes=cls.ecn.min, max_bytes=cls.ecn.max, probability_pct=cls.ecn.probability)
    return QueueModel(
        index=cls.egress_queue, traffic_class=cls.priority, class_name=name, lossless=cls.lossless,
        scheduler="strict" if cls.scheduling.strict else "dwrr", weight=cls.scheduling.weight, ecn=ecn,
    )


def resolve_qos(intent: Intent) -> QosModel:
    classes = intent.qos.classes
    owner = dscp_owner(intent)
    by_priority = {cls.priority: cls for cls in classes.values()}
    lossless = sorted(cls.priority for cls in classes.values() if cls.lossless)
    tc_to_queue = {tc: by_priority[tc].egress_queue if tc in by_priority else tc for tc in range(8)}
    wd = intent.pfc.watchdog
    return QosModel(
        dscp_to_tc={dscp: classes[owner[dscp]].priority for dscp in range(64)},
        tc_to_pg={tc: tc if tc in lossless else 0 for tc in range(8)},
        tc_to_queue=tc_to_queue,
        pfc_priority_to_queue=dict(tc_to_queue),
        lossless_priorities=lossless,
        queues=sorted((_queue(name, cls) for name, cls in classes.items()), key=lambda q: q.index),
        rdma_dscp=intent.rdma_dscp(),
        rdma_priority=intent.rdma_class().priority,
        cnp_dscp=_first_dscp(intent.cnp_class()),
        cnp_priority=intent.cnp_class().priority,
        watchdog=WatchdogModel(detection_ms=wd.detection_ms, restoration_ms=wd.restoration_ms,
                               poll_ms=wd.poll_ms, action=wd.action) if wd.enabled else None,
    )


def _first_dscp(cls: QosClass) -> int:
    assert isinstance(cls.dscp, list)  # check_intent() refuses a default CNP class
    return cls.dscp[0]
