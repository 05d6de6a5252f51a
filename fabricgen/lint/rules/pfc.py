"""PFC: the same priorities paused at both ends of every link, a watchdog against deadlocks, never on CNPs."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from fabricgen.lint.context import End, LintContext
from fabricgen.lint.registry import Finding, Rule, rule
from fabricgen.lint.rules._util import (
    Problem,
    device_source,
    end_source,
    fmt_set,
    per_port_qos,
    port_source,
    queue_settings,
    remedy,
)
from fabricgen.models.device import DeviceModel, QosModel


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
    port = ctx.intended_port(end.device, end.port.name)
    return frozenset(port.pfc_priorities) if port is not None else None


@rule("FG-PFC-002", "too-many-lossless-classes", "error", "lossless classes within the platform's limit")
def too_many_lossless(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Each lossless priority needs its own headroom buffer per port; platforms support few (Cumulus one lossless
    pool, NX-OS one no-drop class). Beyond that the switch either refuses the config or silently shares headroom
    that is then too small.

    On SONiC the limit is the SKU's: its buffer templates (sonic-buildimage device/<vendor>/<platform>/<SKU>/
    buffers_defaults_*.j2) provision the lossless PGs — files/build_templates/buffers_config.j2's 3-4 (two) unless
    the SKU has PG macros of its own, as NVIDIA's with extra lossless PGs 2-4 and 6 (four) do. fabricgen knows
    some SKUs' files (`fabricgen platforms`); the inventory declares any other's (`data.lossless_limit`). A SKU
    whose limit is unknown running more lossless priorities than the generic template's two is a warning: not
    refused, not guessed.

    Fix: make fewer classes lossless (one RoCE class is the norm); for an unknown SONiC SKU, read its buffer
    templates and declare the lossless priorities they provision as data.lossless_limit."""
    for device in ctx.devices:
        if device.qos is None:
            continue
        cap = ctx.capability(device)
        limit = cap.lossless_limit(device.hardware, device.lossless_limit)
        count, priorities = len(device.qos.lossless_priorities), device.qos.lossless_priorities
        if limit is None:
            if count > cap.lossless_class_limit:
                yield _unknown_sku_limit(r, device, cap.lossless_class_limit)
            continue
        if count > limit:
            if device.lossless_limit is not None:
                whose = f"{device.name} declares {limit} (data.lossless_limit)"
            elif cap.lossless_limit_per_sku is not None:
                whose = f"{device.platform} SKU {device.hardware} supports {limit}"
            else:
                whose = f"platform {device.platform} supports {limit}"
            yield r.finding(device.name, f"{count} lossless priorities {priorities}; {whose}", remedy(
                                ctx, device, lambda d: d.qos.lossless_priorities if d.qos else None,
                                "make fewer classes lossless", "keep PFC on the intent's lossless priorities only"),
                            source=("intent", "qos", "classes"))


def _unknown_sku_limit(r: Rule, device: DeviceModel, generic: int) -> Finding:
    """A device whose SKU's lossless-class limit fabricgen does not know, running more than the generic template's."""
    assert device.qos is not None
    sku = device.hardware or "(no data.hardware)"
    return r.finding(device.name, f"{len(device.qos.lossless_priorities)} lossless priorities "
                     f"{device.qos.lossless_priorities}; the limit of {device.platform} SKU {sku} is unknown to "
                     f"fabricgen (the generic buffer template provisions {generic})",
                     f"count the lossless PGs {sku}'s buffers_defaults_*.j2 provisions and declare them as "
                     f"data.lossless_limit on {device.name} (or make fewer classes lossless)",
                     source=("inventory", device.name, "data"), severity="warning")


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
    yield from per_port_qos(ctx, r, _watchdog_polls_too_slowly, _watchdog, located="qos.watchdog")
    yield from per_port_qos(ctx, r, _watchdog_restores_too_soon, _watchdog, severity="warning",
                            located="qos.watchdog")


def _watchdog_polls_too_slowly(device: DeviceModel, qos: QosModel) -> list[Problem]:
    wd = qos.watchdog
    if wd is None or wd.poll_ms <= wd.detection_ms:
        return []
    return [(f"watchdog polls every {wd.poll_ms} ms but detects after {wd.detection_ms} ms",
             "poll at most as long as detection",
             f"set the watchdog's polling interval ({wd.poll_ms} ms) at most its detection time ({wd.detection_ms} ms)",
             ("intent", "pfc", "watchdog", "poll_ms"))]


def _watchdog_restores_too_soon(device: DeviceModel, qos: QosModel) -> list[Problem]:
    wd = qos.watchdog
    if wd is None or wd.restoration_ms >= wd.detection_ms:
        return []
    return [(f"watchdog restores after {wd.restoration_ms} ms, faster than it detects ({wd.detection_ms} ms)",
             "restoration_ms ≥ detection_ms",
             f"set the watchdog's restoration time ({wd.restoration_ms} ms) at least its detection time "
             f"({wd.detection_ms} ms)", ("intent", "pfc", "watchdog", "restoration_ms"))]


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
    yield from per_port_qos(ctx, r, _lossless_queues_without_ecn, queue_settings, severity="warning",
                            located="qos.queues")


def _lossless_queues_without_ecn(device: DeviceModel, qos: QosModel) -> list[Problem]:
    return [(f"lossless queue {queue.index} ({queue.class_name}) marks no ECN", "add ecn thresholds to the class",
             f"configure ECN marking on queue {queue.index}", ("intent", "qos", "classes", queue.class_name))
            for queue in qos.queues if queue.lossless and not queue.marks_ecn]


@rule("FG-PFC-007", "lossless-tc-outside-lossless-pg", "error",
      "each lossless traffic class lands in a lossless priority group, and only those")
def lossless_tc_outside_lossless_pg(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Ingress buffering, headroom and the PAUSE decision are per priority group (PG), not per traffic class:
    the switch reserves headroom on the lossless PGs and pauses a priority when its PG fills. A lossless TC
    mapped to a lossy PG (SONiC's TC_TO_PRIORITY_GROUP_MAP; PG 0 when a port binds none) has no headroom and
    drops before PAUSE can act; a lossy TC mapped into a lossless PG eats that PG's headroom and gets its
    traffic paused with RoCE's.

    Fix: map each lossless TC n to PG n and every other TC to a lossy PG (fabricgen's map: TC n → PG n for the
    lossless TCs, PG 0 for the rest; SONiC's AZURE map does the same for TCs 3 and 4)."""
    yield from _per_lossless_port(ctx, r, _tc_pg_problems, lambda d: d.qos.tc_to_pg if d.qos else None)


# A check of the maps one lossless port runs: the port's QoS and the priorities its PFC pauses.
PortCheck = Callable[[QosModel, frozenset[int]], list[Problem]]


def _per_lossless_port(ctx: LintContext, r: Rule, check: PortCheck,
                       setting: Callable[[DeviceModel], object]) -> Iterator[Finding]:
    """``check`` on every lossless switch port, with the QoS in effect on it and its own PFC priorities (a
    switch read from its config has the union of its ports' PFC priorities as its lossless ones, so the port's
    own set is what its maps must serve). When every lossless port has the same problems under the switch's own
    QoS, they are one finding on the switch; otherwise each port's are its own."""
    for device, ports in ctx.switch_ports:
        if device.qos is None:
            continue
        checked: dict[tuple[int, frozenset[int]], list[Problem]] = {}  # the ports of a switch share a few QoS
        found = []
        for end in ports:
            if end.pfc_priorities and end.qos is not None:
                key = (id(end.qos), frozenset(end.pfc_priorities))  # the device keeps each qos alive meanwhile
                problems = checked.get(key)
                if problems is None:
                    problems = checked[key] = check(end.qos, key[1])
                found.append((end, problems))
        shared = [problems for end, problems in found if end.qos is device.qos]
        switch_wide = shared[0] if shared and shared[0] and all(p == shared[0] for p in shared) else []
        for message, intent_fix, device_fix, source in switch_wide:
            yield r.finding(device.name, message, remedy(ctx, device, setting, intent_fix, device_fix), source=source)
        for end, problems in found:
            if end.qos is device.qos and switch_wide:
                continue
            for message, _, device_fix, _ in problems:
                # setting "qos": where the config binds the port's own maps (SONiC: its PORT_QOS_MAP entry)
                yield r.finding(device.name, message, f"on {device.name}: {device_fix} on {end.port.name}",
                                port=end.port.name, source=end_source(end), setting="qos")


def _tc_pg_problems(qos: QosModel, lossless: frozenset[int]) -> list[Problem]:
    problems: list[Problem] = []
    for tc in sorted(lossless):
        pg = qos.tc_to_pg.get(tc)
        if pg not in lossless:
            got = f"PG {pg}" if pg is not None else "no priority group (the ASIC's default PG 0)"
            problems.append((f"lossless traffic class {tc} → {got}, which holds no lossless headroom (lossless PGs "
                             f"{fmt_set(lossless)})", f"map TC {tc} to PG {tc} (qos maps)",
                             f"map traffic class {tc} to priority group {tc} (it goes to {got})",
                             ("intent", "qos", "classes")))
    for tc, pg in sorted(qos.tc_to_pg.items()):
        if tc not in lossless and pg in lossless:
            problems.append((f"lossy traffic class {tc} → lossless PG {pg}: its traffic shares RoCE's headroom and "
                             "pauses", f"map TC {tc} to a lossy PG", f"map traffic class {tc} to a lossy priority "
                             f"group (PG 0), not lossless PG {pg}", ("intent", "qos", "classes")))
    return problems


@rule("FG-PFC-008", "pfc-pauses-another-queue", "error",
      "a PAUSE for priority p stops the queue traffic class p egresses on")
def pfc_pauses_another_queue(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """A PFC frame names a priority; the switch stops the egress queue its PFC-priority→queue map gives for it
    (SONiC MAP_PFC_PRIORITY_TO_QUEUE). If that is not the queue the lossless traffic class egresses on
    (TC→queue map), a PAUSE from the peer stops some other queue while RoCE keeps sending into a full
    buffer downstream — drops on a 'lossless' class — and the other queue stalls for nothing.

    Fix: map PFC priority n to the queue TC n egresses on (identity maps, as SONiC's AZURE maps and fabricgen)."""
    yield from _per_lossless_port(ctx, r, _pfc_queue_problems,
                            lambda d: (d.qos.pfc_priority_to_queue, d.qos.tc_to_queue) if d.qos else None)


def _pfc_queue_problems(qos: QosModel, lossless: frozenset[int]) -> list[Problem]:
    problems: list[Problem] = []
    for priority in sorted(lossless):
        paused = qos.pfc_priority_to_queue.get(priority, priority)
        sending = qos.tc_to_queue.get(priority, priority)
        if paused != sending:
            problems.append((f"a PAUSE for priority {priority} stops queue {paused}, but traffic class {priority} "
                             f"egresses on queue {sending}", f"map PFC priority {priority} to queue {sending}",
                             f"map PFC priority {priority} to queue {sending} (it maps to queue {paused})",
                             ("intent", "qos", "classes")))
    return problems


@rule("FG-PFC-009", "nic-dcbx-not-host-controlled", "error", "the host, not DCBX negotiation, sets a NIC's PFC and ETS")
def nic_dcbx_not_host_controlled(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """With DCBX left to the NIC's firmware (ConnectX `mlnx_qos -d fw`) or to an LLDP agent, the PFC and ETS the
    NIC runs are whatever it negotiates with the switch port: the host script's settings may be replaced at the
    next LLDP exchange, and a switch that advertises nothing (or another PFC set) leaves the NIC without the
    fabric's lossless priority — a fault no config shows.

    Fix: host-controlled DCBX (`mlnx_qos -i <if> -d os`; generic NICs: `dcb dcbx set dev <if> host ieee`), as
    fabricgen's host script sets it."""
    for host, nics in ctx.host_nics:
        for nic in nics:
            if nic.dcbx == "firmware":
                yield r.finding(host.name, "DCBX is left to the NIC firmware or an LLDP agent: the PFC and ETS it runs "
                                "are negotiated with the switch, not the host's", "host-controlled DCBX (mlnx_qos -d "
                                "os; dcb dcbx set dev IF host ieee)", port=nic.interface,
                                source=port_source(host.name, nic.interface))
