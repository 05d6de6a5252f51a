"""`fabricgen health`: counter rates over a window and their trend against a baseline, judged against the intent.

The method is the field report's: troubleshoot bottom-up, layer by layer — physical (FEC, BER, CRC), link (flaps,
PFC, lossless drops, watchdog storms), congestion control (ECN marks vs pauses, CNPs), host (retransmission) —
and judge *trends* (slow optics ageing) rather than absolute values. Each rule knows what the intent promised:
which priorities are lossless, that ECN must mark before PFC pauses, which priority CNPs travel on. A finding
names device:port, the counters with their increase and rate, the likely cause, and the lint rule or intent key
to look at. Rule IDs are stable (FG-OBS-1xx physical, 2xx link, 3xx congestion control, 4xx host).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from fabricgen.models.device import DeviceModel, Fabric
from fabricgen.observe.delta import counter_delta
from fabricgen.observe.model import METRICS, Layer, Snapshot

LAYER_ORDER = {Layer.PHYSICAL: 0, Layer.LINK: 1, Layer.CONGESTION: 2, Layer.HOST: 3}
# Pre-FEC BER above which RS(544,514) FEC runs out of margin on 100G-per-lane PAM4 links: IEEE 802.3ck/802.3df
# budget the KP4 FEC for a pre-FEC BER of 2.4e-4; 1e-5 leaves one decade of margin, as optics vendors advise.
PRE_FEC_BER_LIMIT = 1e-5
TREND_FACTOR = 10.0  # corrected-FEC rate this many times its baseline rate: the optics are ageing


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    layer: Layer
    severity: str
    points_to: str  # the lint rule or intent key behind the expectation


RULES: dict[str, Rule] = {r.id: r for r in [
    Rule("FG-OBS-101", "fec-uncorrectable", Layer.PHYSICAL, "error", "FG-PHY-002/FG-PHY-003; inventory ports.fec"),
    Rule("FG-OBS-102", "pre-fec-ber-high", Layer.PHYSICAL, "error", "FG-PHY-004; inventory ports.cable_m/media"),
    Rule("FG-OBS-103", "fec-corrected-trend", Layer.PHYSICAL, "warning", "baseline comparison (optics ageing)"),
    Rule("FG-OBS-104", "crc-errors", Layer.PHYSICAL, "error", "FG-PHY-004; inventory ports.cable_m/media"),
    Rule("FG-OBS-201", "link-flap", Layer.LINK, "warning", "FG-PHY-001/FG-PHY-002"),
    Rule("FG-OBS-202", "lossless-drops", Layer.LINK, "error", "FG-BUF-002 headroom; intent classes.lossless"),
    Rule("FG-OBS-203", "pause-on-lossy-priority", Layer.LINK, "error", "FG-CLS-002/FG-CLS-004/FG-PFC-001"),
    Rule("FG-OBS-204", "pfc-storm", Layer.LINK, "error", "FG-PFC-003/FG-PFC-004 watchdog"),
    Rule("FG-OBS-301", "pause-without-ecn", Layer.CONGESTION, "warning", "FG-ECN-002/FG-ECN-004; intent ecn"),
    Rule("FG-OBS-302", "cnp-not-handled", Layer.CONGESTION, "error", "FG-ECN-006/FG-PFC-005; intent cnp class"),
    Rule("FG-OBS-401", "retransmissions", Layer.HOST, "warning", "FG-MTU-003; NCCL_IB_TIMEOUT; bottom layers"),
]}


@dataclass(frozen=True)
class HealthFinding:
    rule: str
    severity: str
    layer: Layer
    device: str
    port: str | None
    counters: dict[str, float]  # "metric[index]" → increase over the window
    rates: dict[str, float]  # "metric[index]" → per second
    cause: str
    points_to: str

    @property
    def subject(self) -> str:
        return f"{self.device}:{self.port}" if self.port else self.device

    def to_json(self) -> dict[str, object]:
        return {"rule": self.rule, "name": RULES[self.rule].name, "severity": self.severity, "layer": self.layer.value,
                "device": self.device, "port": self.port, "counters": self.counters, "rates": self.rates,
                "cause": self.cause, "points_to": self.points_to}


@dataclass
class Window:
    """Increases per (device, port, metric, index) between two snapshots, and the gauges at the end."""

    seconds: float
    increase: dict[tuple[str, str, str, int], float] = field(default_factory=dict)
    gauges: dict[tuple[str, str, str, int], float] = field(default_factory=dict)
    resets: int = 0

    def get(self, device: str, port: str, metric: str, index: int | None = None) -> float | None:
        return self.increase.get((device, port, metric, -1 if index is None else index))

    def rate(self, value: float) -> float:
        return value / self.seconds if self.seconds > 0 else 0.0


def window(before: Snapshot, after: Snapshot) -> Window:
    start = before.values()
    result = Window(seconds=after.taken_at - before.taken_at)
    for key, value in after.values().items():
        if METRICS[key[2]].kind == "gauge":
            result.gauges[key] = value
        elif key in start:
            delta = counter_delta(start[key], value)
            result.increase[key] = delta.increase
            result.resets += delta.reset
    return result


def judge(fabric: Fabric, before: Snapshot, after: Snapshot, baseline: Snapshot | None = None) -> list[HealthFinding]:
    """Findings, bottom-up (physical first), then by device and port."""
    recent = window(before, after)
    since_baseline = window(baseline, before) if baseline is not None and baseline.taken_at < before.taken_at else None
    findings: list[HealthFinding] = []
    for check in CHECKS:
        findings += check(fabric, recent, since_baseline)
    return sorted(findings, key=lambda f: (LAYER_ORDER[f.layer], f.device, f.port or "", f.rule))


# --- the checks -------------------------------------------------------------------------------------------

Check = Callable[[Fabric, Window, Window | None], list[HealthFinding]]


def _finding(rule_id: str, device: str, port: str | None, counters: dict[str, float], win: Window,
             cause: str) -> HealthFinding:
    rule = RULES[rule_id]
    return HealthFinding(rule.id, rule.severity, rule.layer, device, port, counters,
                         {name: win.rate(value) for name, value in counters.items()}, cause, rule.points_to)


def _grown(win: Window, metric: str) -> Iterator[tuple[str, str, int, float]]:
    for (device, port, name, index), value in sorted(win.increase.items()):
        if name == metric and value > 0:
            yield device, port, index, value


def _label(metric: str, index: int) -> str:
    return metric if index < 0 else f"{metric}[{index}]"


def _fec_uncorrectable(fabric: Fabric, win: Window, _since: Window | None) -> list[HealthFinding]:
    """Uncorrectable codewords (switches) or symbol errors the FEC did not correct (mlx5, NVUE): one finding per
    port and counter, whichever the platform counts."""
    what = {"fec_uncorrected": "uncorrectable FEC codewords", "fec_uncorrected_symbols": "symbol errors the FEC "
            "did not correct"}
    return [_finding("FG-OBS-101", device, port, {metric: value}, win,
                     f"{label}: frames are being lost on this link — a dirty or failing optic or cable, or FEC not "
                     "agreed after a reboot (check both ends' FEC mode before letting traffic in)")
            for metric, label in what.items() for device, port, _, value in _grown(win, metric)]


def _pre_fec_ber(fabric: Fabric, win: Window, _since: Window | None) -> list[HealthFinding]:
    return [_finding("FG-OBS-102", device, port, {"pre_fec_ber": value}, Window(0.0),
                     f"pre-FEC BER {value:.1e} above {PRE_FEC_BER_LIMIT:.0e}: the FEC is close to running out of "
                     "margin — clean or replace the optic/cable before errors become uncorrectable")
            for (device, port, metric, _), value in sorted(win.gauges.items())
            if metric == "pre_fec_ber" and value > PRE_FEC_BER_LIMIT]


def _fec_trend(fabric: Fabric, win: Window, since: Window | None) -> list[HealthFinding]:
    if since is None:
        return []
    findings = []
    for device, port, index, value in _grown(win, "fec_corrected"):
        earlier = since.increase.get((device, port, "fec_corrected", index), 0.0)
        if win.rate(value) > TREND_FACTOR * max(since.rate(earlier), 1e-9):
            findings.append(_finding(
                "FG-OBS-103", device, port, {"fec_corrected": value}, win,
                f"corrected-FEC rate {win.rate(value):.3g}/s is over {TREND_FACTOR:g}× its baseline rate "
                f"{since.rate(earlier):.3g}/s: the link is degrading (optics ageing, a bent cable) — plan a swap"))
    return findings


def _crc(fabric: Fabric, win: Window, _since: Window | None) -> list[HealthFinding]:
    return [_finding("FG-OBS-104", device, port, {metric: value}, win,
                     "frames arrive with a bad FCS: a physical-layer fault (optic, cable, connector) on this link")
            for metric in ("fcs_errors", "symbol_errors") for device, port, _, value in _grown(win, metric)]


def _flaps(fabric: Fabric, win: Window, _since: Window | None) -> list[HealthFinding]:
    return [_finding("FG-OBS-201", device, port, {"carrier_transitions": value}, win,
                     "the link went down and up: a flapping link resets every RDMA QP using it — check the optic "
                     "and the far end's logs")
            for device, port, _, value in _grown(win, "carrier_transitions")]


def _lossless(device: DeviceModel | None) -> set[int]:
    if device is None:
        return set()
    if device.qos is not None:
        return set(device.qos.lossless_priorities)
    if device.host is not None:
        return {priority for nic in device.host.nics for priority, on in enumerate(nic.pfc) if on}
    return set()


def _lossless_queues(device: DeviceModel | None) -> set[int]:
    if device is None or device.qos is None:
        return set()
    return {device.qos.pfc_priority_to_queue.get(p, p) for p in device.qos.lossless_priorities}


def _lossless_drops(fabric: Fabric, win: Window, _since: Window | None) -> list[HealthFinding]:
    findings = []
    for metric in ("queue_dropped", "queue_wred_dropped"):
        for device, port, queue, value in _grown(win, metric):
            if queue in _lossless_queues(fabric.devices.get(device)):
                findings.append(_finding("FG-OBS-202", device, port, {_label(metric, queue): value}, win,
                                         f"queue {queue} is lossless by intent but dropped packets: headroom too "
                                         "small for the cable, PFC not honoured by the neighbour, or WRED drop "
                                         "enabled on a lossless queue"))
    for metric in ("prio_buffer_discards", "prio_congestion_discards"):
        for device, port, priority, value in _grown(win, metric):
            if priority in _lossless(fabric.devices.get(device)):
                findings.append(_finding("FG-OBS-202", device, port, {_label(metric, priority): value}, win,
                                         f"the NIC discarded lossless priority {priority} on receive: its PFC is "
                                         "off or its receive buffer is too small for the pause round trip"))
    return findings


def _pause_on_lossy(fabric: Fabric, win: Window, _since: Window | None) -> list[HealthFinding]:
    findings = []
    for metric in ("pfc_rx_pause", "pfc_tx_pause"):
        for device, port, priority, value in _grown(win, metric):
            lossless = _lossless(fabric.devices.get(device))
            if priority >= 0 and lossless and priority not in lossless:
                findings.append(_finding(
                    "FG-OBS-203", device, port, {_label(metric, priority): value}, win,
                    f"PFC pauses on priority {priority}, which the intent makes lossy "
                    f"(lossless: {', '.join(map(str, sorted(lossless)))}): a classification mismatch — a DSCP→"
                    "priority map or a PFC enable list differs between this device and its neighbour"))
    return findings


def _storms(fabric: Fabric, win: Window, _since: Window | None) -> list[HealthFinding]:
    findings = [_finding("FG-OBS-204", device, port, {_label("pfc_watchdog_storms", queue): value}, win,
                         f"the PFC watchdog found queue {queue} paused past its detection time (a PFC storm): a "
                         "deadlock risk — a host or port sending endless pauses, or a cyclic buffer dependency")
                for device, port, queue, value in _grown(win, "pfc_watchdog_storms")]
    findings += [_finding("FG-OBS-204", device, port, {"pause_storm_events": value}, win,
                          "the NIC's pause-storm protection fired: it was sending pauses for too long (a stuck "
                          "receive path) and stopped honouring PFC — a deadlock risk for the fabric")
                 for device, port, _, value in _grown(win, "pause_storm_events")]
    return findings


def _pause_without_ecn(fabric: Fabric, win: Window, _since: Window | None) -> list[HealthFinding]:
    totals: dict[tuple[str, str, int], float] = defaultdict(float)
    for metric in ("pfc_rx_pause", "pfc_tx_pause"):
        for device, port, priority, value in _grown(win, metric):
            totals[(device, port, priority)] += value
    findings = []
    for (device, port, priority), pauses in sorted(totals.items()):
        model = fabric.devices.get(device)
        if priority < 0 or priority not in _lossless(model):
            continue
        marks_metric, marks_index = _ecn_counter(model, priority)
        marks = win.get(device, port, marks_metric, marks_index)
        if marks is not None and marks == 0:
            findings.append(_finding(
                "FG-OBS-301", device, port, {f"pfc_pause[{priority}]": pauses,
                                             _label(marks_metric, marks_index): 0.0}, win,
                f"priority {priority} paused {pauses:g} times with no ECN mark on the same queue: ECN marks "
                "above the PFC pause point (kmin/kmax over xoff), so DCQCN never slows senders before PFC does"))
    return findings


def _ecn_counter(device: DeviceModel | None, priority: int) -> tuple[str, int]:
    if device is not None and device.host is not None:
        return "prio_ecn_marked", priority
    queue = device.qos.pfc_priority_to_queue.get(priority, priority) if device and device.qos else priority
    return "queue_ecn_marked", queue


def _cnp_not_handled(fabric: Fabric, win: Window, _since: Window | None) -> list[HealthFinding]:
    sent = {(device, port): value for device, port, _, value in _grown(win, "cnp_sent")}
    handled = sum(value for (_, _, metric, _), value in win.increase.items() if metric == "cnp_handled")
    has_handled = any(metric == "cnp_handled" for (_, _, metric, _) in win.increase)
    if not sent or not has_handled or handled > 0:
        return []
    return [_finding("FG-OBS-302", device, port, {"cnp_sent": value, "cnp_handled (all hosts)": 0.0}, win,
                     "receivers sent CNPs but no sender handled one: CNPs are lost or ignored on the way — the CNP "
                     "DSCP/priority differs between NICs and switches, or the CNP class is dropped or paused")
            for (device, port), value in sorted(sent.items())]


def _retransmissions(fabric: Fabric, win: Window, _since: Window | None) -> list[HealthFinding]:
    findings = []
    for metric in ("out_of_sequence", "packet_seq_errors", "local_ack_timeouts"):
        for device, port, _, value in _grown(win, metric):
            findings.append(_finding("FG-OBS-401", device, port, {metric: value}, win,
                                     "RoCE retransmissions: packets were lost or reordered below — read the "
                                     "physical and link findings first; then NCCL_IB_TIMEOUT and ECMP"))
    return findings


CHECKS: list[Check] = [_fec_uncorrectable, _pre_fec_ber, _fec_trend, _crc, _flaps, _lossless_drops, _pause_on_lossy,
                       _storms, _pause_without_ecn, _cnp_not_handled, _retransmissions]
