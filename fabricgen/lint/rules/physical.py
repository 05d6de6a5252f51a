"""Physical layer: both ends agree on speed and FEC; copper within its reach."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from fabricgen.lint.context import End, LintContext
from fabricgen.lint.registry import Finding, Rule, rule
from fabricgen.lint.rules._util import end_source

RS_FEC_FROM_MBPS = 100_000  # 100G (25G NRZ x4 and up) and every PAM4 speed need RS-FEC (IEEE 802.3 CL91/CL119)
PAM4_LANE_FROM_MBPS = 50_000  # 50G and faster per lane is PAM4 (50GBASE-CR/SR: RS(544,514), CL134)
# Passive copper (DAC) by lane signalling: the longest DAC the vendor specifies, beyond which the receiver cannot
# recover the signal — a physical fact (error). 25G-NRZ lanes: 5 m (IEEE 802.3 Clause 92, 100GBASE-CR4; NVIDIA
# LinkX 100GbE DACs); PAM4 lanes at 50G and 100G: 3 m (IEEE 802.3cd Clause 136; NVIDIA LinkX User Guide for
# 100G-PAM4 cables: "For 100G-PAM4 speeds, reach is up to 3 meters"). [(lane rate up to Mb/s, metres)]
DAC_REACH_M: list[tuple[int, int]] = [(25_000, 5), (100_000, 3)]
# Active copper and optical cables: the reach their makers build them for, past which a run is unusual rather
# than out of spec (warning): AEC ~7 m (NVIDIA's linear active copper goes to 5 m), AOC ~100 m (NVIDIA Cable
# Management Guidelines and FAQ: "not practical to install AOCs that are longer than 100 meters").
SAFE_REACH_M: dict[str, int] = {"aec": 7, "aoc": 100}
NRZ_PORT_UPTO_MBPS = 100_000  # a port of unknown lanes up to 100G is taken as 25G-NRZ lanes (100GBASE-CR4)


@cache  # a fabric has a handful of speed/lane pairs over tens of thousands of links
def _dac_reach(lane_mbps: int) -> int | None:
    """The DAC reach at this lane rate; None above 100G-PAM4 lanes, where no DAC is specified."""
    return next((metres for upto, metres in DAC_REACH_M if lane_mbps <= upto), None)


def _lane_mbps(speed: int, lanes: str | None) -> int:
    if lanes:
        return speed // (lanes.count(",") + 1)
    return 25_000 if speed <= NRZ_PORT_UPTO_MBPS else 50_000  # unknown lanes: the commonest signalling


def _ends_differ(ctx: LintContext, r: Rule, attr: str, message: str, fix: str) -> Iterator[Finding]:
    """Links whose two ends both declare ``attr`` and disagree (an end that says nothing is not a mismatch)."""
    for a, b in ctx.links:
        ours, theirs = getattr(a, attr), getattr(b, attr)
        if ours and theirs and ours != theirs:
            yield r.finding(a.device.name, message.format(ours, theirs), fix, port=a.port.name,
                            peer=b.name, source=end_source(a))


@rule("FG-PHY-001", "link-speed-mismatch", "error", "both ends of a link run the same speed")
def link_speed_mismatch(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Ends at different speeds do not link up, or come up at the lower speed and halve the fabric's bandwidth
    on that path — and the headroom computed for the faster speed is wrong.

    Fix: set the same speed on both ports."""
    yield from _ends_differ(ctx, r, "speed_mbps", "speed {} vs {} Mb/s", "set the same speed at both ends")


@rule("FG-PHY-002", "link-fec-mismatch", "error", "both ends of a link use the same FEC")
def link_fec_mismatch(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Mismatched FEC gives a link that is 'up' with FEC not agreed — the half-healthy state a link
    gets after reboots, with errors that grow slowly.

    Fix: the same FEC (rs at 100G and above) on both ends."""
    yield from _ends_differ(ctx, r, "fec", "FEC {} vs {}", "set the same FEC at both ends")


@rule("FG-PHY-003", "fec-required", "error", "RS-FEC on 100G and faster ports")
def fec_required(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """At 100G and above (and every PAM4 lane) the raw bit error rate is above what Ethernet tolerates; without
    RS-FEC the link errors constantly or does not come up.

    Fix: fec: rs."""
    for end in ctx.ends:
        if end.fec not in ("none", "fc"):
            continue  # tested first: almost every port runs RS-FEC, and the lane count is not needed then
        speed = end.speed_mbps
        # Where the lanes are known, also a PAM4 port below 100G (50G on one lane): the docstring promised
        # "every PAM4 lane" but only the port speed was compared, so a 50G breakout without FEC passed.
        lanes = len(end.lanes.split(",")) if end.lanes else None
        pam4 = bool(speed and lanes and speed // lanes >= PAM4_LANE_FROM_MBPS)
        if speed and (speed >= RS_FEC_FROM_MBPS or pam4):
            yield r.finding(end.device.name, f"{speed // 1000}G port with FEC {end.fec}", "fec: rs",
                            port=end.port.name, peer=end.peer_ref, source=end_source(end))


@rule("FG-PHY-004", "copper-past-safe-reach", "error", "DAC within its reach at its lane rate; AEC/AOC within theirs")
def copper_past_safe_reach(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Passive copper loses the signal with length, faster at PAM4 lane rates: a DAC longer than its specified
    reach does not come up, or comes up with FEC counters that climb as it ages. That is a physical fact, an
    error: 5 m at 25G-NRZ lanes (IEEE 802.3 Clause 92, 100GBASE-CR4), 3 m at 50G- and 100G-PAM4 lanes (IEEE
    802.3cd Clause 136; NVIDIA LinkX User Guide for 400Gb/s 100G-PAM4 cables: "for 100G-PAM4 speeds, reach is
    up to 3 meters"; NVIDIA Cable Management Guidelines and FAQ: DAC signals become "unrecognizable at the
    receiver" after 2-5 m, rate dependent). The lane rate is the port speed over its lanes (unknown lanes: NRZ
    up to 100G, PAM4 above). AEC past ~7 m and AOC past ~100 m are warnings: longer than such cables are made
    for, not out of a standard.

    Fix: AEC, linear active copper or optics for longer runs, or move the switch closer."""
    for a, b in ctx.links:
        media, length = a.media, _physical_length(ctx, a)
        speed = a.speed_mbps or b.speed_mbps
        if length is None or speed is None:
            continue
        if media == "dac":
            lane = _lane_mbps(speed, a.lanes or b.lanes)
            reach = _dac_reach(lane)
            if reach is not None and length > reach:
                yield r.finding(a.device.name, f"{length} m DAC at {speed // 1000}G: passive copper reaches "
                                f"{reach} m at {lane // 1000}G lanes", "use AEC or optics for this run",
                                port=a.port.name, peer=b.name, source=end_source(a, "cable_m"))
        elif media in SAFE_REACH_M and length > SAFE_REACH_M[media]:
            yield r.finding(a.device.name, f"{length} m {media.upper()} at {speed // 1000}G (safe reach "
                            f"{SAFE_REACH_M[media]} m)", "use optics for this run", port=a.port.name,
                            peer=b.name, source=end_source(a, "cable_m"), severity="warning")


def _physical_length(ctx: LintContext, end: End) -> int | None:
    """The cable's length as the inventory measures it. A config's cable length is a buffer setting (SONiC
    CABLE_LENGTH sizes headroom and is often rounded up to a profile's row), not proof of the cable: a port read
    from its config takes the length from the port as the intent resolves it. The headroom default
    (pfc.headroom.default_cable_m) is no measurement either: a DAC of unknown length is FG-BUF-001's."""
    port = ctx.intended_port(end.device, end.port.name)
    if port is not None:
        return None if port.cable_assumed else port.cable_m
    return None if end.cable_assumed else end.cable_m
