"""The typed snapshot every platform's counter reader produces, whatever the vendor's source looked like.

One :class:`Reading` is one number read off one device: a counter (monotonic, counted since the device or the
counter was last cleared) or a gauge (a level: a BER, a watermark). ``index`` is the PFC priority for the
``pfc_*`` and host ``prio_*`` counters, the egress queue for the ``queue_*`` counters, and None for port-wide
ones. The vocabulary below is fabricgen's, so that `health` judges a SONiC queue and an EOS one by one rule; each
platform reader says which vendor field maps to which name (docs/observe.md lists them).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum


class Layer(StrEnum):
    """Bottom-up troubleshooting order of the field report: physical, link, congestion control, host."""

    PHYSICAL = "physical"
    LINK = "link"
    CONGESTION = "congestion-control"
    HOST = "host"


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str  # Prometheus base unit: "frames", "packets", "codewords", "events", "seconds", "ratio", "bytes"
    kind: str  # "counter" or "gauge"
    layer: Layer
    scope: str  # "port", "priority" or "queue": what `index` means
    help: str


def _m(name: str, unit: str, layer: Layer, scope: str, help_text: str, kind: str = "counter") -> Metric:
    return Metric(name, unit, kind, layer, scope, help_text)


METRICS: dict[str, Metric] = {m.name: m for m in [
    _m("fec_corrected", "codewords", Layer.PHYSICAL, "port", "FEC codewords received with errors the FEC corrected"),
    _m("fec_uncorrected", "codewords", Layer.PHYSICAL, "port", "FEC codewords received with errors beyond repair"),
    _m("fec_symbol_errors", "symbols", Layer.PHYSICAL, "port", "FEC symbol errors"),
    _m("fec_uncorrected_symbols", "symbols", Layer.PHYSICAL, "port",
       "symbol errors the FEC did not correct (or received while FEC was off)"),
    _m("pre_fec_ber", "ratio", Layer.PHYSICAL, "port", "bit error ratio before FEC correction", kind="gauge"),
    _m("fcs_errors", "frames", Layer.PHYSICAL, "port", "frames received with a bad FCS (CRC)"),
    _m("symbol_errors", "symbols", Layer.PHYSICAL, "port", "PCS symbol errors"),
    _m("carrier_transitions", "events", Layer.LINK, "port", "link up/down transitions (flaps)"),
    _m("in_discards", "packets", Layer.LINK, "port", "received packets the port discarded"),
    _m("pfc_rx_pause", "frames", Layer.LINK, "priority", "PFC pause frames received"),
    _m("pfc_tx_pause", "frames", Layer.LINK, "priority", "PFC pause frames sent"),
    _m("pfc_rx_pause_duration", "seconds", Layer.LINK, "priority", "time paused by received PFC frames"),
    _m("pfc_watchdog_storms", "events", Layer.LINK, "queue", "PFC watchdog storm (deadlock) detections"),
    _m("pfc_watchdog_restores", "events", Layer.LINK, "queue", "PFC watchdog restorations"),
    _m("pause_storm_events", "events", Layer.LINK, "port", "NIC pause-storm protection events"),
    _m("queue_dropped", "packets", Layer.LINK, "queue", "packets the egress queue dropped"),
    _m("queue_wred_dropped", "packets", Layer.CONGESTION, "queue", "packets WRED dropped on the egress queue"),
    _m("queue_ecn_marked", "packets", Layer.CONGESTION, "queue", "packets ECN-marked (CE) on the egress queue"),
    _m("queue_watermark", "bytes", Layer.CONGESTION, "queue", "shared-buffer watermark of the queue", kind="gauge"),
    _m("prio_buffer_discards", "packets", Layer.LINK, "priority",
       "receive discards for lack of buffer (NIC; a switch's RoCE ingress)"),
    _m("prio_congestion_discards", "packets", Layer.LINK, "priority", "NIC receive discards, per-host congestion"),
    _m("prio_ecn_marked", "packets", Layer.CONGESTION, "priority", "packets the NIC ECN-marked on receive"),
    _m("rx_discards", "packets", Layer.LINK, "port", "NIC receive discards for lack of buffers (all priorities)"),
    _m("cnp_sent", "packets", Layer.CONGESTION, "port", "CNPs sent by the notification point (receiver)"),
    _m("cnp_handled", "packets", Layer.CONGESTION, "port", "CNPs handled by the reaction point (sender)"),
    _m("cnp_ignored", "packets", Layer.CONGESTION, "port", "CNPs received but ignored by the reaction point"),
    _m("roce_ecn_marked", "packets", Layer.CONGESTION, "port", "ECN-marked RoCEv2 packets received"),
    _m("out_of_sequence", "packets", Layer.HOST, "port", "RoCE packets received out of sequence"),
    _m("packet_seq_errors", "events", Layer.HOST, "port", "NAK sequence errors received"),
    _m("local_ack_timeouts", "events", Layer.HOST, "port", "local ACK timeout expirations (retransmits)"),
    _m("out_of_buffer", "packets", Layer.HOST, "port", "packets dropped for lack of receive WQEs"),
]}


@dataclass(slots=True)
class Reading:
    """Slotted and not frozen (a frozen dataclass's __init__ costs twice as much): a 32k-GPU snapshot holds
    millions of them (bench/observe.py). Treat it as immutable."""

    device: str
    port: str
    metric: str
    index: int | None
    value: float

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.device, self.port, self.metric, -1 if self.index is None else self.index)


@dataclass
class DeviceSnapshot:
    """What one device said, or why it said nothing (``error``)."""

    device: str
    platform: str
    readings: list[Reading] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0


@dataclass
class Snapshot:
    taken_at: float  # UNIX seconds, UTC
    devices: dict[str, DeviceSnapshot] = field(default_factory=dict)
    label: str | None = None
    snapshot_id: int | None = None

    def readings(self) -> list[Reading]:
        return [reading for device in self.devices.values() for reading in device.readings]

    def values(self) -> dict[tuple[str, str, str, int], float]:
        return {reading.key: reading.value for reading in self.readings()}


class ParseError(ValueError):
    """A device's counter output that is not what its platform prints: the device and the command are named."""


def reading(device: str, port: str, metric: str, value: object, index: int | None = None) -> Reading:
    """A reading from a vendor's value (text or number); a metric outside the vocabulary is a programming error."""
    if metric not in METRICS:
        raise KeyError(metric)
    try:
        number = float(value)  # type: ignore[arg-type]  # float() takes the vendors' numbers and numeric text
    except (TypeError, ValueError):
        raise ParseError(f"{device} {port}: {metric} is {value!r}, not a number") from None
    return Reading(device, port, metric, index, number)


_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_was_enabled = False


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a counter reader or the store runs (nestable, thread-safe).

    They build only acyclic objects (readings, lists, parsed JSON): reference counting frees all of it, and the
    cyclic collector's passes, triggered by the millions of allocations of a 32k-GPU snapshot, find nothing while
    re-scanning every live reading — half the CPU of a snapshot (bench/observe.py). The collector is resumed as it
    was when the last pause ends, with what the pause allocated moved to the oldest generation (:func:`_promote`)
    rather than left young for the next allocation to trigger a scan of."""
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                _promote()
                gc.enable()


def _promote() -> None:
    """Move every tracked object to the oldest generation, in constant time (gc.freeze then gc.unfreeze splice
    the generations' lists), and so reset the young generation's count.

    Without it, the first allocation after a pause triggers a collection of everything the pause allocated —
    millions of readings, alive (they are the snapshot) and acyclic — and that walk, and the next generation's
    when it fills, took 1.0-1.4 s of CPU per 8,192-GPU snapshot (bench/observe.py; gc.callbacks timing). In the
    oldest generation they are walked only by a full collection, which CPython runs when the objects that
    survived younger collections since the last full one exceed a quarter of the oldest's: these, never walked
    young, do not count towards it. A cycle among them is still found, by the next full collection.
    Skipped when some other code froze objects (fabricgen.runtime.forked while its workers run): unfreezing
    here would end that freeze early."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
