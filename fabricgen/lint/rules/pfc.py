"""PFC: the same priorities paused at both ends of every link, a watchdog against deadlocks, never on CNPs."""

from __future__ import annotations

from collections.abc import Iterator

from fabricgen.lint.context import End, LintContext
from fabricgen.lint.registry import Finding, Rule, rule
from fabricgen.lint.rules._util import device_source, end_source, fmt_set, port_source, queue_settings, remedy
from fabricgen.model import DeviceModel


@rule("FG-PFC-001", "pfc-priority-mismatch", "error", "PFC priorities are equal at both ends of every link")
def pfc_priority_mismatch(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """PFC is hop by hop: the receiver pauses a priority and the sender must honour that same priority. If the
    two ends of a cable disagree, one side's lossless class is paused by nobody and drops, or a lossy class gets
    paused and spreads congestion (head-of-line blocking, the road to a PFC deadlock).

    Fix: enable PFC on exactly the lossless priorities on both ends (NIC: mlnx_qos --pfc; switch: pfc_enable /
    priority-flow-control priority N no-drop)."""
    for a, b in ctx.data_links:
        if a.pfc != b.pfc:
            yield r.finding(a.device.name, f"PFC priorities {fmt_set(a.pfc)} vs {fmt_set(b.pfc)}",
                            _pfc_fix(ctx, a, b), port=a.port.name, peer=b.name, source=end_source(a))


def _pfc_fix(ctx: LintContext, a: End, b: End) -> str:
    """Which end to change: the one(s) whose PFC differs from what the intent resolves for it, when the ends were
    read from configs; else both (the intent itself disagrees with itself)."""
    drifted = [(end, want) for end in (a, b) if (want := _intended_pfc(ctx, end)) is not None and want != end.pfc]
    if not drifted:
        return "enable PFC on the same priorities at both ends"
    return "; ".join(f"on {end.name}: PFC on {fmt_set(want)}, as the intent says" for end, want in drifted)


def _intended_pfc(ctx: LintContext, end: End) -> frozenset[int] | None:
    intended = ctx.intended(end.device)
    if intended is None:
        return None
    if end.nic is not None and intended.host is not None:
        nic = next((n for n in intended.host.nics if n.interface == end.nic.interface), None)
        return frozenset(p for p, flag in enumerate(nic.pfc) if flag) if nic is not None else None
    port = next((p for p in intended.ports if p.name == end.port.name), None)
    return frozenset(port.pfc_priorities) if port is not None else None


@rule("FG-PFC-002", "too-many-lossless-classes", "error", "lossless classes within the platform's limit")
def too_many_lossless(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Each lossless priority needs its own headroom buffer per port; platforms support few (SONiC's templates
    two, Cumulus one lossless pool). Beyond that the switch either refuses the config or silently shares
    headroom that is then too small.

    Fix: make fewer classes lossless (one RoCE class is the norm)."""
    for device in ctx.devices:
        if device.qos is None:
            continue
        limit = ctx.capability(device).lossless_class_limit
        count = len(device.qos.lossless_priorities)
        if count > limit:
            yield r.finding(device.name, f"{count} lossless priorities {device.qos.lossless_priorities}; platform "
                            f"{device.platform} supports {limit}", remedy(
                                ctx, device, lambda d: d.qos.lossless_priorities if d.qos else None,
                                "make fewer classes lossless", "keep PFC on the intent's lossless priorities only"),
                            source=("intent", "qos", "classes"))


@rule("FG-PFC-003", "pfc-watchdog-missing", "error", "a PFC watchdog guards every lossless port")
def pfc_watchdog_missing(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """A PFC storm (a NIC that pauses forever) or a cyclic buffer dependency stops every flow of the priority
    across the fabric. The watchdog detects a queue paused for too long and drops or forwards its traffic so
    the rest of the fabric keeps moving — the deadlock the field report lost a day to.

    Fix: `pfc.watchdog.enabled: true` (SONiC PFC_WD per port, EOS pause watchdog)."""
    for device, ports in ctx.switch_ports:
        guarded = device.qos is not None and device.qos.watchdog is not None
        for end in ports:  # a port whose own QoS leaves out the watchdog the rest of the switch has
            if guarded and end.pfc_priorities and end.port.qos is not None and end.port.qos.watchdog is None:
                yield r.finding(device.name, "lossless port without the PFC watchdog the switch's other ports run",
                                f"on {device.name}: enable the PFC watchdog on {end.port.name}", port=end.port.name,
                                source=end_source(end))
        if guarded:
            continue  # no need to count the lossless ports that run the switch's watchdog
        lossless = [end.port.name for end in ports if end.pfc_priorities and (end.qos is None or
                                                                              end.qos.watchdog is None)]
        if lossless:
            yield r.finding(device.name, f"{len(lossless)} lossless ports without a PFC watchdog "
                            f"({', '.join(lossless[:4])}{'…' if len(lossless) > 4 else ''})",
                            remedy(ctx, device, lambda d: d.qos.watchdog if d.qos else None, "enable pfc.watchdog",
                                   "enable the PFC watchdog on its lossless ports"),
                            source=device_source(device.name))


@rule("FG-PFC-004", "pfc-watchdog-timing", "error", "watchdog poll ≤ detection, and a sane restoration time")
def pfc_watchdog_timing(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """The watchdog can only notice a stuck queue at its polling interval: a poll longer than the detection
    time makes detection meaningless (SONiC refuses it). Restoring faster than detecting flaps the queue in
    and out of drop mode while the storm lasts.

    Fix: poll ≤ detection ≤ restoration (e.g. 100 / 200 / 200 ms); EOS wants poll ≤ half the timeout."""
    for device in ctx.switches:
        wd = device.qos.watchdog if device.qos else None
        if wd is None:
            continue
        if wd.poll_ms > wd.detection_ms:
            yield r.finding(device.name, f"watchdog polls every {wd.poll_ms} ms but detects after "
                            f"{wd.detection_ms} ms", remedy(
                                ctx, device, _watchdog, "poll at most as long as detection",
                                "set the watchdog's polling interval at most its detection time"),
                            source=("intent", "pfc", "watchdog", "poll_ms"))
        if wd.restoration_ms < wd.detection_ms:
            yield r.finding(device.name, f"watchdog restores after {wd.restoration_ms} ms, faster than it detects "
                            f"({wd.detection_ms} ms)", remedy(
                                ctx, device, _watchdog, "restoration_ms ≥ detection_ms",
                                "set the watchdog's restoration time at least its detection time"),
                            source=("intent", "pfc", "watchdog", "restoration_ms"), severity="warning")


def _watchdog(device: DeviceModel) -> object:
    return device.qos.watchdog if device.qos is not None else None


@rule("FG-PFC-005", "pfc-on-cnp-class", "error", "no PFC on the CNP priority")
def pfc_on_cnp(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """CNPs tell senders to slow down. Pausing them delays the very signal that would end the congestion, and
    a paused CNP priority can join a pause loop. CNPs belong in a strict-priority, lossy class.

    Fix: take the CNP priority out of the PFC set."""
    policy = ctx.policy
    if policy is None:
        return
    cnp = policy.cnp_priority
    for end in ctx.ends:
        if cnp in end.pfc:
            yield r.finding(end.device.name, f"PFC is on for CNP priority {policy.cnp_priority}",
                            f"disable PFC on priority {policy.cnp_priority}", port=end.port.name,
                            source=port_source(end.device.name, end.port.name))


@rule("FG-PFC-006", "lossless-without-ecn", "warning", "a lossless class also marks ECN")
def lossless_without_ecn(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Without ECN, PFC is the only brake: every congestion event becomes pause frames that spread upstream
    (PFC storms, victim flows). ECN lets DCQCN slow the senders before PFC has to act.

    Fix: give the lossless class `ecn: {min, max, probability}`."""
    for device in ctx.switches:
        for queue in device.qos.queues if device.qos else []:
            if queue.lossless and queue.ecn is None:
                yield r.finding(device.name, f"lossless queue {queue.index} ({queue.class_name}) marks no ECN",
                                remedy(ctx, device, queue_settings, "add ecn thresholds to the class",
                                       f"configure ECN marking on queue {queue.index}"),
                                source=("intent", "qos", "classes", queue.class_name))
