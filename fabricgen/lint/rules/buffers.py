"""Headroom and buffers: lossless PGs sized for the cable they sit on, within the switch's buffer."""

from __future__ import annotations

from collections.abc import Iterator

from fabricgen.lint.context import End, LintContext
from fabricgen.lint.registry import Finding, Rule, rule
from fabricgen.lint.rules._util import device_source, end_source, kib
from fabricgen.models.device import DeviceModel, PolicyModel
from fabricgen.resolve.headroom import (
    ASIC_BUFFER_BYTES,
    ASIC_CONSTANTS,
    DEFAULT_SONIC_RELEASE,
    PAUSE_QUANTA,
    SONIC_RELEASES,
    HeadroomInputs,
    spectrum_headroom,
)


@rule("FG-BUF-001", "cable-length-unknown", "error", "cable length is known for every lossless port")
def cable_length_unknown(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Headroom grows with the cable: 100 m at 400G holds ~50 KB in flight. A guessed length either wastes
    buffer or drops packets before PAUSE takes effect (NVIDIA: 'congestion occurs before flow control
    activates'). The cable is a physical fact of the port, so not knowing it is an error, not a warning.

    Checked where headroom is sized from the cable (SONiC: fabricgen's or buffermgrd's profile; Cumulus: the
    switch, from its PFC profile's cable-length); EOS and NX-OS take no cable length.

    Fix: set cable_m on the port (or its peer) in the inventory; on a switch read from its config, set the
    port's cable length there (SONiC: CABLE_LENGTH; Cumulus: qos pfc <profile> cable-length)."""
    for device, ends in ctx.ends_by_device:
        # Only where headroom is sized from the cable (capability headroom_from_cable), whether fabricgen or the
        # switch sizes it: EOS (FADT) takes no cable length, so its end of the same cable was reported a second
        # time, with "headroom assumes 40 m" although no headroom was ever computed for it.
        if not ctx.capability(device).headroom_from_cable:
            continue
        for end in ends:
            if end.lossless and end.nic is None and (end.cable_m is None or end.cable_assumed) \
                    and not _headroom_stated_by_config(end):
                yield _unknown_cable(ctx, r, device, end)


def _headroom_stated_by_config(end: End) -> bool:
    """A config without the port's cable length but with its headroom in numbers: SONiC's BUFFER_PG naming a
    BUFFER_PROFILE with xon/xoff/size (the traditional buffer model's pg_lossless_<speed>_<cable>_profile, or a
    static override in the dynamic one). The switch reserves those numbers whatever CABLE_LENGTH says, so its
    headroom is not "sized for no cable". A reader computes headroom only from a cable length, so headroom
    without one can only be the config's own."""
    return end.cable_m is None and end.headroom is not None


def _unknown_cable(ctx: LintContext, r: Rule, device: DeviceModel, end: End) -> Finding:
    if end.cable_m is None:  # only a config can say nothing: resolve always sizes for some length
        return r.finding(device.name, "lossless port whose config sets no cable length (its headroom is sized "
                         "for no cable)", f"set {end.port.name}'s cable length on {device.name} (SONiC: "
                         "CABLE_LENGTH)", port=end.port.name, peer=end.peer_ref, source=end_source(end),
                         setting="cable_m")
    where = "the config keeps the default" if ctx.from_config(device) else "headroom assumes"
    return r.finding(device.name, f"lossless port with no cable length in the inventory ({where} "
                     f"{end.cable_m} m)", "set the cable's cable_m in the inventory (on the port or its peer; in a "
                     "compact inventory, its cabling.csv line)",
                     port=end.port.name, peer=end.peer_ref, source=end_source(end, "cable_m"), setting="cable_m")


def _required_xoff(policy: PolicyModel | None, asic: str, port: tuple[int, int, int, int], release: str) -> int:
    """The formula's xoff for a port (speed, cable, MTU, lanes) under the intent's own headroom assumptions (small
    packets, lossless packet size), as the device's SONiC release computes it (its buffer Lua's revision)."""
    speed, cable, mtu, lanes = port
    formula = SONIC_RELEASES[release].formula if release in SONIC_RELEASES else \
        SONIC_RELEASES[DEFAULT_SONIC_RELEASE].formula
    params = HeadroomInputs(speed, cable, mtu, lanes, formula=formula)
    if policy is not None:
        params = HeadroomInputs(speed, cable, mtu, lanes, lossless_mtu=policy.lossless_mtu,
                                small_packet_percent=policy.small_packet_percent, formula=formula)
    return spectrum_headroom(asic, params).xoff


@rule("FG-BUF-002", "headroom-insufficient", "error", "configured headroom covers speed × cable × MTU")
def headroom_insufficient(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """The xoff headroom must hold everything in flight after PAUSE is sent: one MTU waiting, the round trip on
    the cable, the peer's reaction time and cell overhead. Less, and a lossless class drops under exactly the
    congestion PFC exists for. Checked where the ASIC's constants are known (NVIDIA Spectrum formula, with the
    intent's small-packet and lossless-MTU assumptions). Fabrics that take headroom from the SKU's shipped
    tables (pfc.headroom.method: vendor-table) trust those tables and are not checked.

    Fix: let fabricgen size headroom (pfc.headroom.method: formula) or raise the profile's xoff."""
    policy = ctx.policy
    if policy is not None and policy.headroom_method == "vendor-table":
        return
    # The required xoff depends only on the ASIC and four port facts (the policy is fixed for the run), and
    # thousands of ports share a handful of combinations: each is computed once.
    required: dict[tuple[str, str, int, int, int, int], int] = {}
    for device, ends in ctx.ends_by_device:
        asic = device.asic
        if asic is None or asic not in ASIC_CONSTANTS:
            continue  # constants unknown: nothing to check against
        for end in ends:
            headroom, speed, cable = end.headroom, end.speed_mbps, end.cable_m
            if headroom is None or speed is None or speed not in PAUSE_QUANTA or cable is None:
                continue
            lanes = end.lanes.count(",") + 1 if end.lanes else 4
            release = headroom.release or DEFAULT_SONIC_RELEASE  # the release the headroom was sized for
            key = (asic, release, speed, cable, end.port_mtu, lanes)
            need = required.get(key)
            if need is None:
                need = required[key] = _required_xoff(policy, asic, (speed, cable, end.port_mtu, lanes), release)
            if headroom.xoff < need:
                yield r.finding(device.name, f"headroom xoff {kib(headroom.xoff)} < required {kib(need)} for "
                                f"{speed} Mb/s over {cable} m", "raise xoff",
                                port=end.port.name, peer=end.peer_ref, source=end_source(end))


@rule("FG-BUF-003", "headroom-over-budget", "error", "total lossless headroom fits the switch buffer")
def headroom_over_budget(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Headroom is reserved per lossless PG per port out of one shared buffer. Long cables on many ports can
    reserve more than the ASIC has, and buffer allocation then fails on apply (or starves the shared pool).
    Above half the buffer is a warning: little is left for the shared pool that absorbs bursts.

    Fix: shorter cables, fewer lossless ports/classes, or a shared headroom pool."""
    for device, ports in ctx.switch_ports:
        budget = ASIC_BUFFER_BYTES.get(device.asic or "")
        if budget is None:
            continue
        total = sum(end.headroom.size * len(end.pfc_priorities) for end in ports if end.headroom)
        if not total:
            continue
        if total > budget:
            yield r.finding(device.name, f"lossless headroom {kib(total)} exceeds the {device.asic} buffer "
                            f"{kib(budget)}", "reduce lossless ports, classes or cable lengths",
                            source=device_source(device.name))
        elif total > budget // 2:
            yield r.finding(device.name, f"lossless headroom {kib(total)} takes over half of the {device.asic} "
                            f"buffer {kib(budget)}", "consider a shared headroom pool",
                            source=device_source(device.name), severity="warning")
