"""Waves that never bounce two leaves of the same GPU host's rails at once, and what a rollback bounces.

A SONiC leaf's QoS change takes ports admin-down and up again (GCU's patch sorter: sonic-utilities
``patch_sorter.py``, fabricgen/platforms/sonic/gcu.py ``bounced_ports``). A GPU host reaches each of its rails
through a leaf; when two leaves it hangs off bounce its links in the same wave, the host loses two rails at once
(with one rail per leaf, every rail it has on them). So a wave is split: a disruptive leaf waits for a later wave
while a leaf of the same wave already bounces a link to one of its GPU hosts. Which hosts a leaf's bounce reaches
is read from the resolved models' cabling (each port's ``peer``): the GPU hosts cabled to its bounced ports, or to
any of its ports when what it bounces is not known yet (``push --yes`` asks no device before its wave: every leaf
whose platform can bounce ports counts as bouncing all of its host links).

A rollback says the same before it acts (``disruptive_gate``): the ports each device's revert bounces, read from
the device first; those devices are rolled back only with ``--allow-disruptive`` or when the user, asked, agrees
(never under ``--yes`` alone), as push commits a disruptive change only with ``--allow-disruptive``.

Pure: no device is contacted here; the CLI and rollback hand in what the devices said.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from fabricgen.deploy.outcome import Outcome
from fabricgen.models.device import DeviceModel, Fabric
from fabricgen.platforms import get_platform

Bounced = Mapping[str, Sequence[str] | None]
"""device → the ports its change bounces ([]: none; None: not known, so every host link may bounce)"""


def may_bounce(device: DeviceModel) -> bool:
    """A device whose platform says a change can take ports down (its capability's deploy row ``disruption``)."""
    return "disruption" in get_platform(device.platform).capability.deploy


def gpu_hosts(fabric: Fabric, leaf: str, ports: Sequence[str] | None = None) -> set[str]:
    """The GPU hosts cabled to ``leaf``'s ``ports`` (None: to any of its ports), from the resolved cabling."""
    wanted = None if ports is None else set(ports)
    hosts = set()
    for port in fabric.devices[leaf].ports:
        if not port.peer or (wanted is not None and port.name not in wanted):
            continue
        peer = fabric.devices.get(port.peer.split(":", 1)[0])
        if peer is not None and peer.host is not None:
            hosts.add(peer.name)
    return hosts


def reach(fabric: Fabric, devices: Sequence[str], bounced: Bounced | None = None) -> dict[str, set[str]]:
    """Each disruptive leaf of ``devices`` → the GPU hosts whose links its change bounces. ``bounced`` is what the
    devices' own diffs said (None: nothing asked yet); a leaf missing from it, or given None, may bounce any of its
    host links when its platform can bounce ports."""
    reached = {}
    for name in devices:
        device = fabric.devices[name]
        if device.role != "leaf" or not may_bounce(device):
            continue
        ports = bounced.get(name) if bounced is not None else None
        if ports is not None and not ports:
            continue
        hosts = gpu_hosts(fabric, name, ports)
        if hosts:
            reached[name] = hosts
    return reached


@dataclass(frozen=True)
class Held:
    """A leaf moved out of its wave: it waits for ``after``, which bounces links of the same GPU ``hosts``."""

    leaf: str
    after: str
    hosts: tuple[str, ...]


def apart(fabric: Fabric, waves: Sequence[Sequence[str]], bounced: Bounced | None = None
          ) -> tuple[list[list[str]], list[Held]]:
    """The waves with every wave split so that no two of its leaves bounce links of one GPU host (first fit, in
    the wave's order; the devices that bounce nothing stay in the wave's first part), and the leaves that were
    held back, each with the leaf it waits for."""
    result: list[list[str]] = []
    held: list[Held] = []
    for wave in waves:
        reached = reach(fabric, wave, bounced)
        parts: list[list[str]] = [[]]
        taken: list[dict[str, set[str]]] = [{}]  # per part: its disruptive leaves and the hosts they reach
        for name in wave:
            if name not in reached:
                parts[0].append(name)
                continue
            index = next((i for i, leaves in enumerate(taken)
                          if not any(hosts & reached[name] for hosts in leaves.values())), None)
            if index is None:
                parts.append([])
                taken.append({})
                index = len(parts) - 1
            if index:
                first = next(leaf for leaf, hosts in taken[index - 1].items() if hosts & reached[name])
                held.append(Held(name, first, tuple(sorted(taken[index - 1][first] & reached[name]))))
            parts[index].append(name)
            taken[index][name] = reached[name]
        result.extend(part for part in parts if part)
    return result, held


def notes(held: Sequence[Held], before: int, after: int) -> list[str]:
    """What the split did, for the push prompt: one line per held leaf, then the wave counts."""
    if not held:
        return []
    lines = [f"{item.leaf} waits for {item.after}'s wave: both bounce links of GPU host(s) "
             f"{_few(item.hosts)} (never two leaves of one host's rails at once)" for item in held]
    return [*lines, f"waves: {before} → {after}"]


def _few(names: Sequence[str], shown: int = 4) -> str:
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def disruption_lines(bounced: Mapping[str, Sequence[str]], what: str) -> list[str]:
    """One line per device whose ``what`` (push, rollback) takes ports admin-down and up again."""
    return [f"{name}: the {what} takes {', '.join(ports)} admin-down and up again (SONiC GCU)"
            for name, ports in sorted(bounced.items()) if ports]


def disruptive_gate(bounced: Mapping[str, Sequence[str]], allowed: bool, yes: bool, ask: Callable[[str], bool],
                    tell: Callable[[str], None]) -> tuple[list[str], dict[str, Outcome]]:
    """Before a rollback acts: every device whose revert bounces ports is named with them (``tell``); it goes on
    with --allow-disruptive (``allowed``), or when the user agrees (``ask``, never asked under --yes); otherwise it
    is skipped, saying how to go on. The devices to roll back (in ``bounced``'s order) and the skipped ones."""
    for line in disruption_lines(bounced, "rollback"):
        tell(line)
    chosen: list[str] = []
    skipped: dict[str, Outcome] = {}
    for name, ports in bounced.items():
        if not ports or allowed or (not yes and ask(f"{name}: its rollback takes {', '.join(ports)} admin-down and "
                                                    "up again; roll it back now?")):
            chosen.append(name)
        else:
            skipped[name] = Outcome(name, "skipped", message=f"its rollback takes {', '.join(ports)} admin-down "
                                    "and up again (SONiC GCU): drain them, then roll back with --allow-disruptive",
                                    bounced=list(ports))
    return chosen, skipped
