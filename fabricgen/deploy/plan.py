"""Which devices a deploy command touches, and in which waves.

Order: GPU hosts first, then leaves, then spines, then the rest (a wave never mixes roles: hosts are undone
alone, before any switch changes under them). Within a role, devices are dealt round-robin over the leaf they
hang off (hosts) so that a batch spreads over rails instead of emptying one leaf's rack; devices with no such
grouping keep name order. The first wave holds the canaries; the rest are batches of --batch devices
(a count, or a percentage of the selection).
"""

from __future__ import annotations

import fnmatch
import math
from collections import defaultdict
from collections.abc import Iterable

from fabricgen.api import shard
from fabricgen.models.device import DeviceModel, Fabric
from fabricgen.platforms import get_platform, platform_names

ROLE_ORDER = ("gpu-host", "leaf", "spine")
# The platforms whose capability record names a deploy driver.
DEPLOYABLE = frozenset(name for name in platform_names() if get_platform(name).capability.napalm_driver)


class PlanError(ValueError):
    """A selection or wave option that cannot be honoured (exit 2)."""


def select(fabric: Fabric, hosts: Iterable[str] = (), role: str | None = None, platform: str | None = None,
           shard_spec: str | None = None, allowed: set[str] | None = None) -> list[str]:
    """The selected devices, in name order: every criterion narrows (``allowed``: what --filter matched).
    Explicitly named devices must exist and have a deploy driver."""
    patterns = [name for name in hosts if name]
    chosen = sorted(name for name, device in fabric.devices.items()
                    if _matches(name, patterns) and (role is None or device.role == role)
                    and (platform is None or device.platform == platform) and (allowed is None or name in allowed))
    if patterns and not chosen:
        raise PlanError(f"--hosts {','.join(patterns)} selects no device of the inventory")
    if allowed is not None and not chosen:
        raise PlanError("--filter selects no device of the inventory")
    unsupported = sorted(name for name in chosen if fabric.devices[name].platform not in DEPLOYABLE)
    if unsupported and (patterns or platform or allowed is not None):
        kinds = sorted({fabric.devices[name].platform for name in unsupported})
        raise PlanError(f"no deploy driver yet for platform {', '.join(kinds)} ({', '.join(unsupported[:5])}): "
                        f"deploy handles {', '.join(sorted(DEPLOYABLE))} so far")
    chosen = [name for name in chosen if name not in unsupported]
    if shard_spec:
        index, count = _shard(shard_spec)
        chosen = shard(chosen, index, count)
    return chosen


def _matches(name: str, patterns: list[str]) -> bool:
    return not patterns or any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _shard(spec: str) -> tuple[int, int]:
    try:
        index_text, count_text = spec.split("/")
        index, count = int(index_text), int(count_text)
    except ValueError:
        raise PlanError(f"--shard {spec}: expected K/N, e.g. 1/4") from None
    if not 1 <= index <= count:
        raise PlanError(f"--shard {spec}: K must be between 1 and N")
    return index, count


def waves(fabric: Fabric, devices: list[str], canary: int, batch: str) -> list[list[str]]:
    if canary < 0:
        raise PlanError("--canary must be 0 or more")
    size = batch_size(batch, len(devices))
    result: list[list[str]] = []
    remaining_canaries = canary
    for group in _by_role(fabric, devices):
        ordered = _spread(fabric, group)
        if remaining_canaries:
            result.append(ordered[:remaining_canaries])
            remaining_canaries -= len(result[-1])
            ordered = ordered[len(result[-1]):]
        result.extend(ordered[start:start + size] for start in range(0, len(ordered), size))
    return [wave for wave in result if wave]


def batch_size(batch: str, total: int) -> int:
    text = batch.strip()
    try:
        if text.endswith("%"):
            percent = float(text[:-1])
            if not 0 < percent <= 100:
                raise ValueError
            return max(1, math.ceil(total * percent / 100))
        size = int(text)
        if size < 1:
            raise ValueError
        return size
    except ValueError:
        raise PlanError(f"--batch {batch}: expected a device count (e.g. 8) or a percentage (e.g. 25%)") from None


def _by_role(fabric: Fabric, devices: list[str]) -> list[list[str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    for name in devices:
        groups[fabric.devices[name].role].append(name)
    rank = {role: index for index, role in enumerate(ROLE_ORDER)}
    return [groups[role] for role in sorted(groups, key=lambda role: (rank.get(role, len(rank)), role))]


def _spread(fabric: Fabric, names: list[str]) -> list[str]:
    """Round-robin over each device's first uplink peer, so consecutive devices sit under different leaves."""
    buckets: dict[str, list[str]] = defaultdict(list)
    for name in sorted(names):
        buckets[_uplink(fabric.devices[name])].append(name)
    ordered: list[str] = []
    queues = [buckets[key] for key in sorted(buckets)]
    while any(queues):
        for queue in queues:
            if queue:
                ordered.append(queue.pop(0))
    return ordered


def _uplink(device: DeviceModel) -> str:
    if device.host is not None:
        peers = sorted(nic.peer.split(":")[0] for nic in device.host.nics if nic.peer)
        return peers[0] if peers else ""
    return ""
