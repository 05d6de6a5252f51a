"""nvue.yaml, damaged on one port: a value edited in the port's entry, a key of it removed, or a stray setting added.

`lint --configs` reads nvue.yaml when a device has it (nvue.commands only without it), so the damage is done there,
as a person edits the file: a line of the port's entry changed or deleted (with what is nested under it), or a
``- set:`` block appended at the end, as ``nv config diff`` prints one and as NVUE applies it (after the blocks
before it). Each edit fails loudly when the text it edits is not in the port's entry.
"""

from __future__ import annotations

from collections.abc import Callable

from fabricgen.models.device import DeviceModel
from fabricgen.platforms.nvue.capability import YAML_FILE

from mutations import Files, Mutation, replace_once

PORT_INDENT = 6  # `      swp1:` under `- set:` / `    interface:`


def _entry(text: str, port: str) -> tuple[int, int]:
    """The line range of ``port``'s entry under ``interface``: its key line and the lines indented under it."""
    lines = text.splitlines(keepends=True)
    key = " " * PORT_INDENT + f"{port}:\n"
    if key not in lines:
        raise AssertionError(f"mutation: no entry {key.strip()!r} in {YAML_FILE}")
    start = lines.index(key)
    end = start + 1
    while end < len(lines) and _indent(lines[end]) > PORT_INDENT:
        end += 1
    return start, end


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _in_entry(text: str, port: str, change: Callable[[list[str]], list[str]]) -> str:
    lines = text.splitlines(keepends=True)
    start, end = _entry(text, port)
    return "".join([*lines[:start], *change(lines[start:end]), *lines[end:]])


def edit(old: str, new: str) -> Mutation:
    """``old`` replaced by ``new`` once, inside the port's entry."""
    def mutate(files: Files, device: DeviceModel, port: str) -> Files:
        def change(entry: list[str]) -> list[str]:
            return [replace_once("".join(entry), old, new)]
        return {**files, YAML_FILE: _in_entry(files[YAML_FILE], port, change)}
    return mutate


def drop(key: str) -> Mutation:
    """The port's line ``key:`` (``key: value`` or a mapping) deleted with everything nested under it."""
    def mutate(files: Files, device: DeviceModel, port: str) -> Files:
        def change(entry: list[str]) -> list[str]:
            at = next((i for i, line in enumerate(entry) if line.strip().startswith(f"{key}:")), None)
            if at is None:
                raise AssertionError(f"mutation: no {key!r} in the entry of {port}")
            end = at + 1
            while end < len(entry) and _indent(entry[end]) > _indent(entry[at]):
                end += 1
            return [*entry[:at], *entry[end:]]
        return {**files, YAML_FILE: _in_entry(files[YAML_FILE], port, change)}
    return mutate


def append(block: Callable[[str], str], rebind: tuple[str, str] | None = None) -> Mutation:
    """A ``- set:`` block appended to the file (``block(port)``: its body, indented under ``set:``), and, with
    ``rebind``, the port's entry edited to use what the block adds."""
    def mutate(files: Files, device: DeviceModel, port: str) -> Files:
        text = files[YAML_FILE] + "- set:\n" + block(port)
        if rebind is not None:
            return edit(*rebind)({**files, YAML_FILE: text}, device, port)
        return {**files, YAML_FILE: text}
    return mutate


def _port_set(port: str, body: str) -> str:
    """``interface: <port>:`` with ``body`` (written at the port's settings' indentation, 8) under it."""
    return f"    interface:\n      {port}:\n{body}"


def _bridge_member(port: str, member: str = "{}", vlans: str = "") -> str:
    """``port`` put in br_default (``member``: its own settings there), the bridge's VLAN list set to ``vlans``."""
    bridge = f"    bridge:\n      domain:\n        br_default:\n          vlan:\n{vlans}" if vlans else ""
    return bridge + _port_set(port, f"        bridge:\n          domain:\n            br_default: {member}\n")


def _pfc_profile(name: str, rx: str) -> str:
    """A copy of the host ports' PFC profile (priority 3, 3 m) named ``name``, receive set to ``rx``."""
    return (f"    qos:\n      pfc:\n        {name}:\n          cable-length: 3\n          rx: {rx}\n"
            "          switch-priority:\n            '3': {}\n          tx: enable\n")


HOST_PROFILE = "profile: pfc-sp3-3m"  # the PFC profile of the mixed example's host ports (3 m DACs)

MUTATIONS: dict[str, dict[str, Mutation]] = {
    "admin_up": {"change": edit("            up: {}", "            down: {}")},
    "description": {
        "change": edit("description: GPU_node1_ens2f0np0", "description: GPU_node9_ens2f0np0"),
        "remove": drop("description"),
    },
    "speed_mbps": {"change": edit("speed: 400G", "speed: 200G"), "remove": drop("speed")},
    "fec": {"change": edit("fec: rs", "fec: off"), "remove": drop("fec")},
    # a port put in the bridge is switched (and, without `access`, a trunk member carrying the bridge's VLANs)
    "mode": {"add": append(lambda port: _bridge_member(port))},
    "access_vlan": {"add": append(lambda port: _bridge_member(port, "{access: 100}", "            '100': {}\n"))},
    "tagged_vlans": {"add": append(lambda port: _bridge_member(port, "{}", "            '10': {}\n"))},
    "mtu": {"change": edit("mtu: 9100", "mtu: 1500"), "remove": drop("mtu")},  # without it: Cumulus's 9216
    # No `change` or `add`: NVUE has one lossless priority group per switch (Capability.lossless_class_limit), so
    # another priority on one port is also the switch's error (FG-PFC-002), rightly reported for the switch.
    "pfc_priorities": {"remove": drop("pfc")},  # the port falls back to default-global: no lossless priority
    # PFC is lossless only when the port both sends and honours pauses: a profile that ignores them is lossy
    "lossless": {"change": append(lambda port: _pfc_profile("pfc-sp3-3m-norx", "disable"),
                                  (HOST_PROFILE, "profile: pfc-sp3-3m-norx"))},
    "cable_m": {"change": edit(HOST_PROFILE, "profile: pfc-sp3-34m")},  # another port's profile: 34 m
    "qos": {
        "change": edit("pfc-watchdog:\n            state: enable", "pfc-watchdog:\n            state: disable"),
        "remove": drop("pfc-watchdog"),
        # a DSCP map of the port's own: RoCE's DSCP 26 classified to switch priority 0 there
        "add": append(lambda port: "    qos:\n      mapping:\n        port-map:\n          dscp:\n            '26':\n"
                                   "              switch-priority: 0\n          trust: l3\n"
                      + _port_set(port, "        qos:\n          mapping:\n            profile: port-map\n")),
    },
}
