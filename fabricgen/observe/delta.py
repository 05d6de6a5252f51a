"""What a counter did between two snapshots: the increase, taking counter resets and wraps into account.

A counter that went *down* was either cleared / restarted from zero (`sonic-clear counters`, `clear counters`, a
reboot, a driver reload) or wrapped past its width. A wrap is recognised when the earlier value sat in the top
quarter of a 32-bit or 64-bit range: the increase is then the distance to the top plus the new value. Anything
else that went down is a reset: the new value is what was counted since, so it is the increase (the part counted
before the reset and after the earlier snapshot is lost, and the delta says so with ``reset``).
"""

from __future__ import annotations

from dataclasses import dataclass

_WIDTHS = (2 ** 32, 2 ** 64)


@dataclass(frozen=True)
class Delta:
    increase: float
    reset: bool = False
    wrapped: bool = False


def counter_delta(before: float, after: float) -> Delta:
    if after >= before:
        return Delta(after - before)
    for width in _WIDTHS:
        if width * 0.75 <= before < width:
            return Delta(width - before + after, wrapped=True)
    return Delta(after, reset=True)


def rate(before: float, after: float, seconds: float) -> float:
    """Increase per second; a zero or negative window (same snapshot twice) gives 0 rather than a division error."""
    return counter_delta(before, after).increase / seconds if seconds > 0 else 0.0
