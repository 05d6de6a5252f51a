"""Headroom and buffers: lossless PGs sized for the cable they sit on, within the switch's buffer."""

from __future__ import annotations

from collections.abc import Iterator

from fabricgen.lint.context import LintContext
from fabricgen.lint.registry import Finding, Rule, rule
from fabricgen.lint.rules._util import device_source, end_source, kib
from fabricgen.model import PortModel
from fabricgen.resolve.headroom import (
    ASIC_BUFFER_BYTES,
    ASIC_CONSTANTS,
    PAUSE_QUANTA,
    HeadroomInputs,
    spectrum_headroom,
)


@rule("FG-BUF-001", "cable-length-unknown", "warning", "cable length is known for every lossless port")
def cable_length_unknown(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Headroom grows with the cable: 100 m at 400G holds ~50 KB in flight. A guessed length either wastes
    buffer or drops packets before PAUSE takes effect (NVIDIA: 'congestion occurs before flow control
    activates').

    Fix: set cable_m on the port (or its peer) in the inventory."""
    for end in ctx.ports.values():
        # Only where the switch sizes headroom from the cable (capability programs_headroom): EOS (FADT) takes
        # no cable length, so its end of the same cable was reported a second time, with "headroom assumes
        # 40 m" although no headroom was ever computed for it.
        if not ctx.capability(end.device).programs_headroom:
            continue
        if end.port.lossless and end.nic is None and (end.port.cable_m is None or end.port.cable_assumed):
            yield r.finding(end.device.name, "lossless port with no cable length in the inventory "
                            f"(headroom assumes {end.port.cable_m} m)", "set cable_m", port=end.port.name,
                            peer=end.port.peer, source=end_source(end))


def _required_xoff(ctx: LintContext, asic: str | None, port: PortModel) -> int | None:
    """The formula's xoff for this port under the intent's own headroom assumptions (small packets, lossless
    packet size); None where the ASIC's constants are unknown."""
    speed, cable = port.speed_mbps, port.cable_m
    if asic not in ASIC_CONSTANTS or speed not in PAUSE_QUANTA or cable is None:
        return None
    lanes = len(port.lanes.split(",")) if port.lanes else 4
    policy = ctx.policy
    params = HeadroomInputs(speed, cable, port.mtu, lanes)
    if policy is not None:
        params = HeadroomInputs(speed, cable, port.mtu, lanes, lossless_mtu=policy.lossless_mtu,
                                small_packet_percent=policy.small_packet_percent)
    return spectrum_headroom(asic, params).xoff


@rule("FG-BUF-002", "headroom-insufficient", "error", "configured headroom covers speed × cable × MTU")
def headroom_insufficient(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """The xoff headroom must hold everything in flight after PAUSE is sent: one MTU waiting, the round trip on
    the cable, the peer's reaction time and cell overhead. Less, and a lossless class drops under exactly the
    congestion PFC exists for. Checked where the ASIC's constants are known (NVIDIA Spectrum formula, with the
    intent's small-packet and lossless-MTU assumptions). Fabrics that take headroom from the SKU's shipped
    tables (pfc.headroom.method: vendor-table) trust those tables and are not checked.

    Fix: let fabricgen size headroom (pfc.headroom.method: formula) or raise the profile's xoff."""
    if ctx.policy is not None and ctx.policy.headroom_method == "vendor-table":
        return
    for end in ctx.ports.values():
        headroom = end.port.headroom
        if headroom is None:
            continue
        need = _required_xoff(ctx, end.device.asic, end.port)
        if need is not None and headroom.xoff < need:
            yield r.finding(end.device.name, f"headroom xoff {kib(headroom.xoff)} < required {kib(need)} for "
                            f"{end.port.speed_mbps} Mb/s over {end.port.cable_m} m", "raise xoff",
                            port=end.port.name, peer=end.port.peer, source=end_source(end))


@rule("FG-BUF-003", "headroom-over-budget", "error", "total lossless headroom fits the switch buffer")
def headroom_over_budget(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Headroom is reserved per lossless PG per port out of one shared buffer. Long cables on many ports can
    reserve more than the ASIC has, and buffer allocation then fails on apply (or starves the shared pool).
    Above half the buffer is a warning: little is left for the shared pool that absorbs bursts.

    Fix: shorter cables, fewer lossless ports/classes, or a shared headroom pool."""
    for device in ctx.switches():
        budget = ASIC_BUFFER_BYTES.get(device.asic or "")
        total = sum(p.headroom.size * len(p.pfc_priorities) for p in device.ports if p.headroom)
        if budget is None or not total:
            continue
        if total > budget:
            yield r.finding(device.name, f"lossless headroom {kib(total)} exceeds the {device.asic} buffer "
                            f"{kib(budget)}", "reduce lossless ports, classes or cable lengths",
                            source=device_source(device.name))
        elif total > budget // 2:
            yield r.finding(device.name, f"lossless headroom {kib(total)} takes over half of the {device.asic} "
                            f"buffer {kib(budget)}", "consider a shared headroom pool",
                            source=device_source(device.name), severity="warning")
