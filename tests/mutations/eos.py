"""eos.cfg, damaged on one data port: its interface lines edited, removed or joined by stray ones, and the port bound
to QoS other than the device's (its own trust, tx-queue ECN, a profile without the PFC watchdog).

Every edit stays inside the port's ``interface`` block (or adds a profile only that port uses), so the device-wide
sections read the same and the damage can only show on that port.
"""

from __future__ import annotations

from collections.abc import Callable

from fabricgen.models.device import DeviceModel
from fabricgen.platforms.eos.render import PROFILE

from mutations import Files, Mutation, replace_once

FILE = "eos.cfg"
ROUTED = "   no switchport\n"


def _in_block(edit: Callable[[str, DeviceModel, str], str]) -> Mutation:
    """A mutation that rewrites the port's ``interface`` block (up to the next ``!``) with ``edit``."""
    def mutate(files: Files, device: DeviceModel, port: str) -> Files:
        text = files[FILE]
        head = f"\ninterface {port}\n"
        start = text.index(head) + len(head)
        end = text.index("!\n", start)
        return {**files, FILE: text[:start] + edit(text[start:end], device, port) + text[end:]}
    return mutate


def replace(old: str | Callable[[DeviceModel, str], str], new: str | Callable[[DeviceModel, str], str]) -> Mutation:
    """``old`` replaced by ``new`` in the port's block; either may depend on the device and port."""
    def edit(block: str, device: DeviceModel, port: str) -> str:
        before = old(device, port) if callable(old) else old
        after = new(device, port) if callable(new) else new
        return replace_once(block, before, after)
    return _in_block(edit)


def append(lines: str) -> Mutation:
    """Stray ``lines`` at the end of the port's block, as a later paste leaves them (the last line wins on EOS)."""
    return _in_block(lambda block, device, port: block + lines)


def _description(device: DeviceModel, name: str) -> str:
    """The port's description line as rendered (the intent's description)."""
    description = next(p.description for p in device.ports if p.name == name)
    return f"   description {description}\n"


def _mtu(device: DeviceModel, name: str) -> str:
    return f"   mtu {next(p.mtu for p in device.ports if p.name == name)}\n"


def _other_profile(files: Files, device: DeviceModel, port: str) -> Files:
    """The port bound to a copy of the fabric's profile without ``priority-flow-control pause watchdog``: the
    watchdog is off on that port alone."""
    text = files[FILE]
    start = text.index(f"qos profile {PROFILE}\n")
    end = text.index("\n!\n", start) + 1
    copy = replace_once(text[start:end], f"qos profile {PROFILE}\n", f"qos profile {PROFILE}_NO_WATCHDOG\n")
    copy = replace_once(copy, "   priority-flow-control pause watchdog\n", "")
    text = text[:end] + "!\n" + copy + text[end:]
    bound = replace(f"   service-profile {PROFILE}\n", f"   service-profile {PROFILE}_NO_WATCHDOG\n")
    return bound({**files, FILE: text}, device, port)


# A routed data port made a switchport with the given switchport lines (in pyavd's order, before `switchport`).
def _switched(lines: str) -> Mutation:
    return replace(ROUTED, lines + "   switchport\n")


MUTATIONS: dict[str, dict[str, Mutation]] = {
    "admin_up": {"change": replace("   no shutdown\n", "   shutdown\n"), "add": append("   shutdown\n")},
    "description": {"change": replace(_description, "   description spare\n"), "remove": replace(_description, "")},
    # A routed port has no VLANs: membership takes making it a switchport.
    "access_vlan": {"add": _switched("   switchport access vlan 200\n   switchport mode access\n")},
    "tagged_vlans": {
        "change": _switched("   switchport trunk allowed vlan 100,200\n   switchport mode trunk\n"),
        "add": _switched("   switchport mode trunk\n"),  # no allowed list: every VLAN but the native one
    },
    "mode": {"change": replace(ROUTED, "   switchport\n"), "remove": replace(ROUTED, ""),
             "add": append("   switchport\n")},
    "mtu": {"change": replace(_mtu, "   mtu 1500\n"), "remove": replace(_mtu, ""), "add": append("   mtu 1500\n")},
    "speed_mbps": {"change": replace("   speed 400g\n", "   speed 100g-4\n"), "remove": replace("   speed 400g\n", ""),
                   "add": append("   speed auto\n")},
    "fec": {
        "change": replace("   error-correction encoding reed-solomon\n", "   error-correction encoding fire-code\n"),
        "remove": replace("   error-correction encoding reed-solomon\n", ""),
        "add": append("   no error-correction encoding\n"),
    },
    "pfc_priorities": {
        "change": append("   priority-flow-control priority 3 drop\n   priority-flow-control priority 4 no-drop\n"),
        "remove": append("   priority-flow-control priority 3 drop\n"),
        "add": append("   priority-flow-control priority 4 no-drop\n"),
    },
    "lossless": {"change": append("   no priority-flow-control\n"),
                 "remove": replace(f"   service-profile {PROFILE}\n", "")},
    "qos": {
        "change": append("   qos trust cos\n"),
        "remove": _other_profile,
        "add": append("   !\n   uc-tx-queue 3\n      random-detect ecn minimum-threshold 1000 bytes maximum-threshold "
                      "2000 bytes max-mark-probability 100\n"),
    },
}
