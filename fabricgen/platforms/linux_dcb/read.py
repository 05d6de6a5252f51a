"""Read a GPU host's ``fabricgen-dcb.sh`` and ``nccl.env`` back into the DeviceModel.

The script must be one fabricgen wrote (its ``# fabricgen`` header, one ``nic_*()`` function per NIC, an
``all_nics()`` that calls them); values in it may have been edited by hand. What a line *does* is what is
read: the command a ``setting`` line runs (``ip link set ... mtu``, ``dcb ets set``, ``dcb pfc set``,
``write_file .../default_roce_tos``), the entries a ``dscp_setting`` line installs and the selector an
``apptrust`` line trusts. The quoted "wanted" value a ``setting`` line checks the NIC for is not read as a value,
but compared with what the command sets: ``--apply`` runs the command only on a NIC that does not read as checked,
so where a hand edit made the two disagree the NIC may run either; :func:`conflicts` lists those lines (lint's
FG-EVD-004), and the command is what is read. ``dcb`` arrays may use ``all:`` and later entries override earlier
ones, as ``dcb`` evaluates them; an array that leaves an entry out is refused (``dcb`` keeps that entry from the
kernel, which a script cannot tell).

Owned -- what ``owned()`` projects and ``read()`` replaces, per NIC (keyed by interface): ``rdma_device`` (``local
... rdma=``), ``mtu``, ``trust`` (the ``apptrust`` line), the NIC's DSCP map (``dscp2prio``: the priority of each of
the 64 DSCPs under DSCP trust, none under PCP trust -- read into ``dscp2prio``, all 64 under DSCP trust; a DSCP the
script gives no entry reads as priority 0, the priority of traffic no APP entry matches), ``pfc``, ``prio_tc``,
``tsa``, ``tcbw``, ``roce_tos``; and the host's ``nccl_env`` (``nccl.env``; a missing file reads as no settings).

Not owned, kept from the skeleton: DCQCN and CNP (``dcqcn_priorities``, ``dcqcn_enabled``, ``cnp_dscp``,
``cnp_priority``: the script only prints them for the vendor tool), ``cable_m``, ``peer``, ``xoff_bytes``,
``path_mtu``, the host's ports, ``qos`` and role/hardware/name. The DCBX line and the RoCE mode line are
settings with one value fabricgen always writes; they are not read.

NICs: those the script configures, in ``all_nics()`` order. A skeleton NIC the script does not configure is
dropped; a NIC the skeleton lacks is added with no cable, no peer, ``xoff_bytes`` 0 and DCQCN/CNP unknown
(off, 0). A NIC function missing a setting fabricgen always writes (mtu, ets, pfc, DSCP entries, apptrust, roce
tos) is not a fabricgen script: ``ConfigReadError``, as for unbalanced quotes, an array that misses an entry, a
DSCP given two priorities or a value outside what ``dcb`` accepts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import fabricgen.platforms.common.hostscript as hostscript
from fabricgen.models.device import DeviceModel, NicModel
from fabricgen.platforms import ConfigConflict
from fabricgen.platforms.common.hostscript import Nic
from fabricgen.platforms.common.modelcopy import updated
from fabricgen.platforms.linux_dcb.capability import SCRIPT
from fabricgen.platforms.linux_dcb.render import dscp_map

# What every NIC function of a fabricgen script sets, and how an error names it.
REQUIRED = {"mtu": "mtu", "prio_tc": "prio-tc", "tsa": "tc-tsa", "tcbw": "tc-bw", "pfc": "prio-pfc",
            "dscp": "the DSCP entries (dscp_setting)", "trust": "trust (apptrust)", "roce_tos": "roce tos"}
DEFAULT_PATH_MTU = hostscript.DEFAULT_PATH_MTU  # for a skeleton without a host part: not in the script
# iproute2 accepts the names of /etc/iproute2/rt_dsfield for DSCPs (dcb-app(8)); these are the DSCP ones.
DSCP_NAMES = {**{f"CS{n}": 8 * n for n in range(8)}, "EF": 46,
              **{f"AF{c}{d}": 8 * c + 2 * d for c in range(1, 5) for d in range(1, 4)}}
# The `dcb ... set` keywords that take a one-word value rather than KEY:VALUE entries.
SINGLE_VALUE = ("willing", "delay", "macsec-bypass")


# --- owned ----------------------------------------------------------------------------------------------

def owned(device: DeviceModel) -> dict[str, Any]:
    """The fields the script and nccl.env express, as plain data (see the module docstring)."""
    return hostscript.owned(device, _owned_nic)


def _owned_nic(nic: NicModel) -> dict[str, Any]:
    return {
        "rdma_device": nic.rdma_device, "mtu": nic.mtu, "trust": nic.trust, "dscp2prio": dscp_map(nic),
        "pfc": list(nic.pfc), "prio_tc": list(nic.prio_tc), "tsa": list(nic.tsa), "tcbw": list(nic.tcbw),
        "roce_tos": nic.roce_tos,
    }


# --- the script -----------------------------------------------------------------------------------------

# Errors, shell words and numbers that name this script and the line.
_FILE = hostscript.ScriptFile(SCRIPT)
_error, _words, _number = _FILE.error, _FILE.words, _FILE.number


def _tsa(text: str, line: int, what: str) -> str:
    if text not in ("strict", "ets"):
        raise _error(line, f"{what}: {text!r} is not strict or ets (the only TSAs fabricgen models)")
    return text


def _on_off(text: str, line: int, what: str) -> int:
    if text not in ("on", "off"):
        raise _error(line, f"{what}: expected on or off, found {text!r}")
    return 1 if text == "on" else 0


_ARRAYS: dict[str, tuple[str, Callable[[str, int, str], Any]]] = {
    "prio-tc": ("prio_tc", lambda text, line, what: _number(text, line, what, 7)),
    "tc-tsa": ("tsa", _tsa),
    "tc-bw": ("tcbw", lambda text, line, what: _number(text, line, what, 100)),
    "prio-pfc": ("pfc", _on_off),
}
# Arrays `dcb` takes that no NicModel field holds: parsed for syntax only.
_OTHER_ARRAYS = ("pg-bw", "reco-tc-bw", "reco-tc-tsa", "reco-prio-tc")


def _array(keyword: str, entries: list[str], line: int) -> list[Any]:
    """``KEY:VALUE`` entries of an 8-entry ``dcb`` array, evaluated left to right like ``dcb`` does."""
    parse = _ARRAYS[keyword][1] if keyword in _ARRAYS else (lambda text, _line, _what: text)
    values: list[Any] = [None] * 8
    for entry in entries:
        key, _, value = entry.partition(":")
        parsed = parse(value, line, f"{keyword} {entry}")
        keys = range(8) if key == "all" else [_number(key, line, f"{keyword} {entry}", 7)]
        for index in keys:
            values[index] = parsed
    missing = [str(index) for index, value in enumerate(values) if value is None]
    if missing:
        raise _error(line, f"{keyword} leaves out {', '.join(missing)}: dcb keeps those from the NIC, which a script "
                           "cannot state; list all 8 (or start with all:)")
    return values


def _dcb_set(nic: Nic, words: list[str], line: int) -> None:
    """``dcb {ets|pfc} set dev DEV KEYWORD ...``: the arrays it sets."""
    if words[3:4] != ["dev"] or len(words) < 5:
        raise _error(line, f"expected `dcb {words[1]} set dev DEV ...`")
    index = 5
    while index < len(words):
        keyword = words[index]
        if keyword in SINGLE_VALUE:
            index += 2
            continue
        if keyword not in _ARRAYS and keyword not in _OTHER_ARRAYS:
            raise _error(line, f"dcb {words[1]} set: unknown keyword {keyword!r}")
        entries: list[str] = []
        index += 1
        while index < len(words) and ":" in words[index]:
            entries.append(words[index])
            index += 1
        values = _array(keyword, entries, line)
        if keyword in _ARRAYS:
            nic.values[_ARRAYS[keyword][0]] = values


def _command(nic: Nic, words: list[str], line: int) -> None:
    """The command a ``setting`` line runs in apply mode."""
    if words[:1] == ["dcb"] and len(words) > 2 and words[1] in ("ets", "pfc") and words[2] == "set":
        _dcb_set(nic, words, line)
    elif words[:3] == ["ip", "link", "set"] and "mtu" in words[:-1]:
        nic.values["mtu"] = _number(words[words.index("mtu") + 1], line, "mtu", 65535)
    elif words[:1] == ["write_file"] and len(words) == 3 and words[1].endswith("/default_roce_tos"):
        nic.values["roce_tos"] = _number(words[2], line, "roce tos", 255)
    elif words[:1] == ["write_file"] and len(words) == 3 and words[1].endswith("/default_roce_mode"):
        nic.values["roce_mode"] = 1 if "v1" in words[2] else None  # RDMA-CM configfs: "IB/RoCE v1" or "RoCE v2"
    elif words[:3] == ["dcb", "dcbx", "set"]:  # `host`: the host's dcbnl settings stand; else an LLDP agent's
        nic.values["dcbx"] = None if "host" in words[3:] else "firmware"
    elif words[:2] == ["dcb", "app"] and len(words) > 2 and words[2] in ("add", "replace", "del"):
        _dcb_app(nic, words, line)


def _dcb_app(nic: Nic, words: list[str], line: int) -> None:
    """``dcb app add|replace|del dev IF dscp-prio D:P ...`` beside the script's own DSCP entries: the driver's last
    write for a DSCP is what it classifies by (bnxt_en copies each add into its hardware map; a delete clears it)."""
    if "dscp-prio" not in words:
        return  # other selectors are not owned
    entries: dict[int, int] = dict(nic.values.get("dscp", {}))
    for entry in words[words.index("dscp-prio") + 1:]:
        key, sep, value = entry.partition(":")
        if not sep:
            break  # the next keyword
        prio = _number(value, line, "dscp-prio priority", 7)
        for dscp in _dscp_key(key, line):
            if words[2] != "del":
                entries[dscp] = prio
            elif entries.get(dscp) == prio:
                del entries[dscp]
    nic.values["dscp"] = entries


def _dscp_key(text: str, line: int) -> list[int]:
    if text == "all":
        return list(range(64))
    if text in DSCP_NAMES:
        return [DSCP_NAMES[text]]
    return [_number(text, line, "dscp-prio DSCP", 63)]


def _dscp_setting(nic: Nic, text: str, line: int) -> None:
    """``dscp_setting IFACE [DSCP:PRIO ...]``: the DSCP APP entries (none: flushed)."""
    entries: dict[int, int] = {}
    for entry in _words(text, line)[2:]:
        key, sep, value = entry.partition(":")
        if not sep:
            raise _error(line, f"dscp-prio: expected DSCP:PRIORITY, found {entry!r}")
        prio = _number(value, line, "dscp-prio priority", 7)
        for dscp in _dscp_key(key, line):
            if entries.setdefault(dscp, prio) != prio:
                raise _error(line, f"dscp-prio gives DSCP {dscp} priorities {entries[dscp]} and {prio}: the APP table "
                                   "keeps both (it is a table, not an array), so the NIC's choice is undefined")
    nic.values["dscp"] = entries


def _apptrust(nic: Nic, text: str, line: int) -> None:
    words = _words(text, line)
    if len(words) != 3 or words[2] not in ("dscp", "pcp"):
        raise _error(line, "expected `apptrust IFACE dscp|pcp`")
    nic.values["trust"] = words[2]


def _wanted(kind: str, words: list[str], nic: Nic) -> str | None:
    """What the script's reader of ``kind`` prints once the command (``words``) has set ``nic``, a fresh NIC: the
    text its `setting` line should check for ("" when the command does not set it; None: a kind not known)."""
    shared = hostscript.checked(kind, nic.values, " ")
    if shared is not None:
        return shared
    if kind == "dcbx":  # `dcb dcbx show` prints the mode's flags in its own order
        return " ".join(f for f in hostscript.DCBX_FLAGS if f in words[5:]) if words[:3] == ["dcb", "dcbx", "set"] \
            else ""
    if kind == "roce mode":  # the RDMA-CM configfs reads back the mode written to it
        return " ".join(words[2].split()) if "roce_mode" in nic.values else ""
    return None


_LINES: dict[str, Callable[[Nic, str, int], None]] = {
    "local": _FILE.local, "setting": _FILE.setting(_command, _wanted), "dscp_setting": _dscp_setting,
    "apptrust": _apptrust,
    # The same tools run on their own line (a hand edit, or another tool's script merged in; bare or through
    # `bounded`) set the NIC too.
    **dict.fromkeys(("dcb", "ip", "write_file", hostscript.BOUNDED), _FILE.bare(_command)),
}


def _dscp2prio(trust: str, entries: dict[int, int]) -> dict[int, int]:
    """NicModel's dscp2prio: under DSCP trust every DSCP, a DSCP without an entry at the priority of unmatched
    traffic, 0 (dcbnl has no firmware map behind the APP table); under PCP trust the entries as they are."""
    if trust == "dscp":
        return {dscp: entries.get(dscp, 0) for dscp in range(64)}
    return dict(sorted(entries.items()))


def _nic_model(nic: Nic, skeleton: NicModel | None) -> NicModel:
    values = nic.model_values
    if values is None:
        missing = [what for name, what in REQUIRED.items() if name not in nic.values]
        if not nic.interface or missing:
            what = ", ".join(missing) if missing else "`local ifname=`"
            raise _error(nic.line, f"{nic.function}() does not set {what}: not a script fabricgen wrote")
        values = {key: value for key, value in nic.values.items() if key != "dscp"}
        values.update(interface=nic.interface, rdma_device=nic.rdma_device or nic.interface,
                      dscp2prio=_dscp2prio(values["trust"], nic.values["dscp"]))
        nic.model_values = values
    if skeleton is not None:
        return updated(skeleton, values)
    return NicModel(**values, dcqcn_priorities=[], dcqcn_enabled=False, cnp_dscp=0, cnp_priority=0,
                    cable_m=None, peer=None, xoff_bytes=0)


# --- read -----------------------------------------------------------------------------------------------

def read(skeleton: DeviceModel, files: Mapping[str, str]) -> DeviceModel:
    """``skeleton`` with every owned field replaced by what the script and nccl.env say."""
    return hostscript.read(skeleton, files, _FILE, Nic, _LINES, _nic_model)


def conflicts(files: Mapping[str, str]) -> list[ConfigConflict]:
    """The script's `setting` lines that check for one value and set another (read() reads the command's)."""
    return hostscript.conflicts(files, _FILE, Nic, _LINES)
