"""The push soak's counter check: did a device get worse while it held the new config?

Pure: two readings of one device (right after the commit, and after the soak) and the device's intent in, a
verdict out.
The field report's advice after a reboot or a change — check FEC before letting traffic in; a link can be up
with FEC not agreed — becomes: any growth, during the soak, of uncorrectable FEC codewords, CRC/symbol errors,
PFC watchdog storms or NIC pause storms, drops on a lossless queue or priority, or link flaps fails the device,
and so does a lossless priority held paused by received PFC frames for half the soak or more (a pause storm
the watchdog has not caught yet). Corrected-FEC growth alone does not (FEC exists to correct), nor do PFC pause
frames or ECN marks as such (they are how a lossless fabric works under load); `health` judges their trends.
:class:`SoakLimits` holds the thresholds (docs/observe.md).

Push calls it through fabricgen/deploy/soak.py: read right after the commit, again after the soak on the health
check's fresh login, judge; an unhealthy verdict's reason makes push revert the device.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from fabricgen.models.device import DeviceModel
from fabricgen.observe.delta import counter_delta
from fabricgen.observe.model import Reading

# Counters whose growth during the soak fails the device, whatever priority or queue they are on.
ALWAYS = {"fec_uncorrected": "uncorrectable FEC codewords",
          "fec_uncorrected_symbols": "symbol errors FEC did not correct", "fcs_errors": "CRC errors", "symbol_errors":
          "symbol errors", "pfc_watchdog_storms": "PFC watchdog storms", "pause_storm_events": "NIC pause storms",
          "carrier_transitions": "link flaps"}
# Counters whose growth fails the device on a lossless priority (or the queue a lossless priority uses).
LOSSLESS = {"queue_dropped": "drops", "queue_wred_dropped": "WRED drops", "prio_buffer_discards": "buffer discards",
            "prio_congestion_discards": "congestion discards"}


@dataclass(frozen=True)
class SoakLimits:
    """How much a device may get worse during the soak. ``allowed``: metric → increase tolerated per port (and
    priority or queue) over the whole soak, 0 for every metric not named. ``paused_fraction``: a lossless priority
    whose received-PFC pause time grew by this fraction of the soak or more is a pause storm (where the platform
    counts pause time: mlx5's rx_prio<p>_pause_duration)."""

    allowed: Mapping[str, float] = field(default_factory=dict)
    paused_fraction: float = 0.5


@dataclass(frozen=True)
class SoakVerdict:
    healthy: bool
    problems: list[str] = field(default_factory=list)

    @property
    def reason(self) -> str:
        return "counters grew during the soak: " + "; ".join(self.problems) if self.problems else "healthy"


def soak_verdict(before: list[Reading], after: list[Reading], device: DeviceModel, seconds: float | None = None,
                 limits: SoakLimits | None = None) -> SoakVerdict:
    """``seconds``: the soak's length between the two readings (the paused-fraction check needs it)."""
    limits = limits or SoakLimits()
    if not after:
        return SoakVerdict(False, [f"{device.name}: no counters could be read after the soak"])
    start = {reading.key: reading.value for reading in before}
    lossless_priorities, lossless_queues = _lossless(device)
    problems = []
    for reading in sorted(after, key=lambda r: r.key):
        if reading.key not in start:
            continue
        if reading.metric == "pfc_rx_pause_duration":
            if seconds and reading.index in lossless_priorities:
                paused = counter_delta(start[reading.key], reading.value).increase
                if paused >= limits.paused_fraction * seconds:
                    problems.append(f"{device.name}:{reading.port} paused by PFC on lossless {reading.index} for "
                                    f"{paused:.3g} s of a {seconds:.3g} s soak (pause storm)")
            continue
        label = ALWAYS.get(reading.metric)
        if label is None and reading.metric in LOSSLESS:
            watched = lossless_queues if reading.metric.startswith("queue_") else lossless_priorities
            label = f"{LOSSLESS[reading.metric]} on lossless {reading.index}" if reading.index in watched else None
        if label is None:
            continue
        grown = counter_delta(start[reading.key], reading.value).increase
        if grown > limits.allowed.get(reading.metric, 0.0):
            problems.append(f"{device.name}:{reading.port} {label} +{grown:g}")
    return SoakVerdict(not problems, problems)


def _lossless(device: DeviceModel) -> tuple[set[int], set[int]]:
    if device.qos is None:
        priorities = {p for nic in (device.host.nics if device.host else []) for p, on in enumerate(nic.pfc) if on}
        return priorities, priorities
    priorities = set(device.qos.lossless_priorities)
    return priorities, {device.qos.pfc_priority_to_queue.get(p, p) for p in priorities}
