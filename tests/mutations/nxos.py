"""nxos.cfg, damaged on one port: its lines edited, gone, or followed by a stray line (NX-OS keeps the last).

Every edit stays inside the port's ``interface`` block, except the QoS ``change``, which also defines the other
policy the port is bound to, as a person would before binding it.
"""

from __future__ import annotations

from fabricgen.models.device import DeviceModel
from fabricgen.platforms.nxos.capability import FILE, QOS_POLICY

from mutations import Files, Mutation


def _in_block(text: str, port: str, old: str, new: str) -> str:
    """``text`` with ``old`` replaced by ``new`` once, inside ``interface <port>``'s block; fails loudly when the
    block or the text is not there, so a renderer change cannot turn a mutation into a no-op."""
    start = text.index(f"\ninterface {port}\n")
    end = text.find("\n\n", start + 1) + 1  # the block's last line keeps its newline
    end = len(text) if end == 0 else end
    block = text[start:end]
    if old not in block:
        raise AssertionError(f"mutation: {old!r} not in interface {port}")
    return text[:start] + block.replace(old, new, 1) + text[end:]


def edit(old: str, new: str) -> Mutation:
    """The port's line ``old`` (without indentation) replaced by ``new`` (lines, without indentation)."""
    def mutate(files: Files, device: DeviceModel, port: str) -> Files:
        lines = "".join(f"  {line}\n" for line in new.split("\n")) if new else ""
        return {**files, FILE: _in_block(files[FILE], port, f"  {old}\n", lines)}
    return mutate


def drop(line: str) -> Mutation:
    """The port's line ``line`` removed."""
    return edit(line, "")


def after(line: str, stray: str) -> Mutation:
    """``stray`` added after the port's ``line`` (the later line wins on NX-OS)."""
    return edit(line, f"{line}\n{stray}")


OTHER_POLICY = "OTHER_QOS"


def bound_to_another_policy(files: Files, device: DeviceModel, port: str) -> Files:
    """The port classifies with another type-qos policy: the RDMA class lands in the default qos-group."""
    text = files[FILE]
    head, found, tail = text.partition("\nsystem qos\n")
    if not found:
        raise AssertionError("mutation: no system qos block")
    other = f"\npolicy-map type qos {OTHER_POLICY}\n  class FG_CNP\n    set qos-group 6\n" \
            f"  class class-default\n    set qos-group 0\n"
    text = head + other + found + tail
    return {**files, FILE: _in_block(text, port, f"  service-policy type qos input {QOS_POLICY}\n",
                                     f"  service-policy type qos input {OTHER_POLICY}\n")}


MUTATIONS: dict[str, dict[str, Mutation]] = {
    "admin_up": {
        "change": edit("no shutdown", "shutdown"),
        "remove": drop("no shutdown"),  # Ethernet ports are shut by default
        "add": after("no shutdown", "shutdown"),
    },
    "description": {
        "change": lambda files, device, port: edit(*_description(device, port))(files, device, port),
        "remove": lambda files, device, port: drop(_description(device, port)[0])(files, device, port),
        "add": lambda files, device, port: after(_description(device, port)[0], "description stray")(
            files, device, port),
    },
    # A routed port has no access VLAN; the damage makes it an access port (its mode changes with it).
    "access_vlan": {
        "change": edit("no switchport", "switchport\nswitchport mode access\nswitchport access vlan 30"),
        "add": edit("no switchport", "switchport access vlan 30"),  # an L2 line alone makes the port L2
    },
    # Removing `no switchport` leaves the port routed (the Nexus 9000 default): no damage to find, so no remove.
    "mode": {
        "change": edit("no switchport", "switchport"),
        "add": after("no switchport", "switchport"),
    },
    "tagged_vlans": {
        "change": edit("no switchport", "switchport\nswitchport mode trunk\nswitchport trunk allowed vlan 100"),
        "add": after("no shutdown", "switchport\nswitchport mode trunk"),  # every VLAN but the native one
    },
    "mtu": {
        "change": edit("mtu 9100", "mtu 1500"),
        "remove": drop("mtu 9100"),
        "add": after("mtu 9100", "mtu 9216"),
    },
    # The example's 400G data ports run RS(544,514): `fec kp-fec`.
    "speed_mbps": {
        "change": edit("speed 400000", "speed 100000"),
        "remove": drop("speed 400000"),  # negotiated: the config no longer says 400G
        "add": after("speed 400000", "speed auto"),
    },
    "fec": {
        "change": edit("fec kp-fec", "fec fc-fec"),
        "remove": drop("fec kp-fec"),  # auto: NX-OS picks, the config no longer holds the port to RS-FEC
        "add": after("fec kp-fec", "fec off"),
    },
    "pfc_priorities": {
        "change": edit("priority-flow-control mode on", "priority-flow-control mode off"),
        "remove": drop("priority-flow-control mode on"),  # mode auto: DCBX decides, nothing guaranteed
        "add": after("priority-flow-control mode on", "priority-flow-control mode off"),
    },
    "lossless": {
        "change": edit("priority-flow-control mode on", "priority-flow-control mode auto"),
        "remove": drop(f"service-policy type qos input {QOS_POLICY}"),  # nothing classified: nothing paused
        "add": after("priority-flow-control mode on", "no priority-flow-control mode on"),
    },
    "qos": {
        "change": bound_to_another_policy,
        "remove": drop(f"service-policy type qos input {QOS_POLICY}"),  # trust none: all in qos-group 0
        "add": after("priority-flow-control watch-dog-interval on", "priority-flow-control watch-dog-interval off"),
    },
}


def _description(device: DeviceModel, port: str) -> tuple[str, str]:
    description = next(p.description for p in device.ports if p.name == port)
    return f"description {description}", f"description {description} (moved)"
