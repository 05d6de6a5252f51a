"""Physical layer (seed §3.1, §6.2): both ends agree on speed and FEC; copper within its reach."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from fabricgen.lint.context import LintContext
from fabricgen.lint.registry import Finding, Rule, rule
from fabricgen.lint.rules._util import end_source

RS_FEC_FROM_MBPS = 100_000  # 100G (25G NRZ x4 and up) and every PAM4 speed need RS-FEC (IEEE 802.3 CL91/CL119)
PAM4_LANE_FROM_MBPS = 50_000  # 50G and faster per lane is PAM4 (50GBASE-CR/SR: RS(544,514), CL134)
# Longest cable that keeps a clean eye, by media and lane speed (seed §3.1: DAC degrades past 3-5 m).
SAFE_REACH_M: dict[str, list[tuple[int, int]]] = {  # media → [(up to Mb/s, metres)]
    "dac": [(100_000, 5), (800_000, 3)],
    "aec": [(800_000, 7)],
    "aoc": [(800_000, 100)],
}


@cache  # a fabric has a handful of media/speed pairs over tens of thousands of links
def _safe_reach(media: str, speed: int) -> int | None:
    return next((metres for upto, metres in SAFE_REACH_M[media] if speed <= upto), None)


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
    """Mismatched FEC gives a link that is 'up' with FEC not agreed — the half-healthy state the field report
    saw after reboots (seed §6.2), with errors that grow slowly.

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


@rule("FG-PHY-004", "copper-past-safe-reach", "warning", "DAC/AEC/AOC within the safe reach for their speed")
def copper_past_safe_reach(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Passive copper loses signal quickly at PAM4 speeds: past ~3 m at 200/400/800G (5 m at 100G and below)
    the link runs on the edge, with FEC counters that climb as the cable ages. AEC reaches ~7 m.

    Fix: AEC or optics for longer runs, or move the switch closer."""
    for a, b in ctx.links:
        media, length = a.media, a.cable_m
        if a.cable_assumed:  # the headroom default (pfc.headroom.default_cable_m), not a measured cable:
            length = None    # a DAC of unknown length was reported as "40 m DAC" (FG-BUF-001 covers it)
        speed = a.speed_mbps or b.speed_mbps
        if media not in SAFE_REACH_M or length is None or speed is None:
            continue
        reach = _safe_reach(media, speed)
        if reach is not None and length > reach:
            yield r.finding(a.device.name, f"{length} m {media.upper()} at {speed // 1000}G (safe reach "
                            f"{reach} m)", "use AEC or optics", port=a.port.name, peer=b.name,
                            source=end_source(a))
