"""Read a GPU host's ``fabricgen-nic.sh`` and ``nccl.env`` back into the DeviceModel.

The script must be one fabricgen wrote (its ``# fabricgen`` header, one ``nic_*()`` function per NIC, an
``all_nics()`` that calls them); values in it may have been edited by hand. What a line *does* is what is read: the
arguments of the command a ``setting`` line runs (``ip link set ... mtu``, ``mlnx_qos --trust / --dscp2prio / --pfc
/ --prio_tc --tsa --tcbw``, ``cma_roce_tos -t``), the entries a ``dscp_setting`` line makes the DSCP APP table hold
and the value a ``cc_setting`` line writes. The quoted "wanted" value a ``setting`` line checks the NIC for is not
read as a value, but compared with what the command sets: ``--apply`` runs the command only on a NIC that does not
read as checked, so where a hand edit made the two disagree the NIC may run either; :func:`conflicts` lists those
lines (lint's FG-EVD-004), and the command is what is read.

Owned — what ``owned()`` projects and ``read()`` replaces, per NIC (keyed by interface): ``rdma_device`` (``local
... rdma=``), ``mtu``, ``trust``, ``pfc``, ``prio_tc``, ``tsa``, ``tcbw``, ``dscp2prio`` (all 64 DSCPs: the DSCP>>3
map ``--trust dscp`` installs, changed by the script's entries), ``dcqcn_priorities`` (priorities with a
``roce_np``/``roce_rp`` ``enable`` line), ``dcqcn_enabled`` (every such line writes 1; None in ``owned()`` when
there are no such lines, since the script then cannot say), ``cnp_dscp``, ``cnp_priority``, ``roce_tos``; and the
host's ``nccl_env`` (``nccl.env``; a missing file reads as no settings).

Not recoverable, kept from the skeleton: ``cable_m``, ``peer`` and ``xoff_bytes`` of each NIC (comments or
derived numbers, not settings), ``path_mtu``, the host's ports (their MTU is the NIC's, but the NIC is the
owned view), ``qos`` (switch-side maps: the host only carries them for resolve) and role/hardware/name.

NICs: the NICs the script configures, in ``all_nics()`` order. A skeleton NIC the script does not configure
is dropped (the script leaves it at whatever the driver has, which the model cannot state); a NIC the
skeleton lacks is added with no cable, no peer and ``xoff_bytes`` 0. A NIC function missing one of the
settings fabricgen always writes (mtu, trust, pfc, ets, cnp dscp/priority, roce tos) is not a fabricgen
script: ``ConfigReadError``, as for unbalanced quotes, a vector that is not 8 values, or a value outside
what mlnx_qos accepts.
"""

from __future__ import annotations

import optparse
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn

import fabricgen.platforms.common.hostscript as hostscript
from fabricgen.models.device import DeviceModel, NicModel
from fabricgen.platforms import ConfigConflict
from fabricgen.platforms.common.modelcopy import updated
from fabricgen.platforms.connectx.capability import SCRIPT

REQUIRED = ("mtu", "trust", "pfc", "prio_tc", "tsa", "tcbw", "cnp_dscp", "cnp_priority", "roce_tos")
DEFAULT_PATH_MTU = hostscript.DEFAULT_PATH_MTU  # for a skeleton without a host part: not in the script


# --- owned ----------------------------------------------------------------------------------------------

def owned(device: DeviceModel) -> dict[str, Any]:
    """The fields the script and nccl.env express, as plain data (see the module docstring)."""
    return hostscript.owned(device, _owned_nic)


def _owned_nic(nic: NicModel) -> dict[str, Any]:
    return {
        "rdma_device": nic.rdma_device, "mtu": nic.mtu, "trust": nic.trust, "pfc": list(nic.pfc),
        "prio_tc": list(nic.prio_tc), "tsa": list(nic.tsa), "tcbw": list(nic.tcbw),
        "dscp2prio": dict(sorted(nic.dscp2prio.items())), "dcqcn_priorities": sorted(nic.dcqcn_priorities),
        "dcqcn_enabled": nic.dcqcn_enabled if nic.dcqcn_priorities else None,
        "cnp_dscp": nic.cnp_dscp, "cnp_priority": nic.cnp_priority, "roce_tos": nic.roce_tos,
    }


# --- the script -----------------------------------------------------------------------------------------

@dataclass
class _Nic(hostscript.Nic):
    """hostscript.Nic plus what ConnectX lines set outside ``values``: dscp2prio entries, DCQCN writes."""

    # Under DSCP trust mlx5 starts from DSCP d → d>>3 for all 64 (what `--trust dscp` installs); lines change it.
    dscp2prio: dict[int, int] = field(default_factory=lambda: {dscp: dscp >> 3 for dscp in range(64)})
    dscp_entries: set[int] = field(default_factory=set)  # DSCPs a dscp_setting line names
    dcqcn: dict[int, list[int]] = field(default_factory=dict)  # priority → values written (np, rp)


# Errors, shell words and numbers that name this script and the line.
_FILE = hostscript.ScriptFile(SCRIPT)
_error, _words, _number = _FILE.error, _FILE.words, _FILE.number


def _vector(text: str, line: int, what: str) -> list[str]:
    values = [v.strip() for v in text.split(",")]
    if len(values) != 8:
        raise _error(line, f"{what}: expected 8 comma-separated values, found {len(values)} in {text!r}")
    return values


def _numbers(text: str, line: int, what: str, high: int) -> list[int]:
    return [_number(v, line, what, high) for v in _vector(text, line, what)]


def _tsa(text: str, line: int) -> list[Literal["strict", "ets"]]:
    values: list[Literal["strict", "ets"]] = []
    for value in _vector(text, line, "--tsa"):
        if value not in ("strict", "ets"):
            raise _error(line, f"--tsa: {value!r} is not strict or ets")
        values.append("strict" if value == "strict" else "ets")
    return values


class _OptionError(Exception):
    pass


class _MlnxQosOptions(optparse.OptionParser):
    """mlnx_qos 1.2's own option table (Mellanox/mlnx-tools python/mlnx_qos: optparse), so that a call reads as the
    tool reads it: short options (`-f` is `--pfc`), a value attached (`-f0,0,0,1,...`, `--pfc=...`), a long option
    by any unique prefix (`--prio_t`), the last of a repeated option, every `--dscp2prio`. Where optparse would exit
    with a usage error (an option the tool does not have), this raises it instead."""

    def __init__(self) -> None:
        super().__init__(add_help_option=False)
        for flags, dest in ((("-f", "--pfc"), "pfc"), (("-F", "--specific_pfc"), "specific_pfc"),
                            (("-P", "--get_pfc"), "get_pfc"), (("-p", "--prio_tc"), "prio_tc"),
                            (("-s", "--tsa"), "tsa"), (("-t", "--tcbw"), "tc_bw"), (("-r", "--ratelimit"), "ratelimit"),
                            (("-d", "--dcbx"), "dcbx"), (("--trust",), "trust"), (("--cable_len",), "cable_len"),
                            (("--prio2buffer",), "prio2buffer"), (("--buffer_size",), "buffer_size"),
                            (("--defltprio",), "defltprio"), (("-i", "--interface"), "intf")):
            self.add_option(*flags, dest=dest)
        self.add_option("--dscp2prio", dest="dscp2prio", action="append")
        self.add_option("-a", action="store_true", dest="printall", default=False)

    def error(self, msg: str) -> NoReturn:
        raise _OptionError(msg)

    def exit(self, status: int = 0, msg: str | None = None) -> NoReturn:
        raise _OptionError(msg or f"exits with status {status}")


_MLNX_QOS = _MlnxQosOptions()


def _options(words: list[str], line: int) -> dict[str, Any]:
    """An mlnx_qos call's options by their destination in the tool (``pfc``, ``prio_tc``, ``tsa``, ``tc_bw``, ``dcbx``,
    ``trust``, ``dscp2prio``: a list), those it leaves out absent."""
    try:
        values, _ = _MLNX_QOS.parse_args(words)
    except _OptionError as exc:
        raise _error(line, f"mlnx_qos refuses this call: {exc}") from exc
    return {dest: value for dest, value in vars(values).items() if value is not None and dest != "printall"}


def _mlnx_qos(nic: _Nic, words: list[str], line: int) -> None:
    options = _options(words[1:], line)
    if "trust" in options and "dscp2prio" in options:
        raise _error(line, "mlnx_qos refuses this call: trust and dscp2prio cannot be used at the same time")
    if options.get("dcbx") in ("os", "fw"):  # -d os|fw: who runs DCBX (os: the host's settings stand); -d get reads
        nic.values["dcbx"] = "firmware" if options["dcbx"] == "fw" else None
    if "trust" in options:
        if options["trust"] not in ("dscp", "pcp"):
            raise _error(line, f"--trust: {options['trust']!r} is not dscp or pcp")
        nic.values["trust"] = options["trust"]
    _pfc_and_ets(nic, options, line)
    for text in options.get("dscp2prio", []):
        _dscp2prio(nic, text, line)


def _pfc_and_ets(nic: _Nic, options: dict[str, Any], line: int) -> None:
    if "pfc" in options:
        nic.values["pfc"] = _numbers(options["pfc"], line, "--pfc", 1)
    if "specific_pfc" in options:
        nic.values["pfc"] = _specific_pfc(nic, options["specific_pfc"], line)
    if "prio_tc" in options:
        nic.values["prio_tc"] = _numbers(options["prio_tc"], line, "--prio_tc", 7)
    if "tsa" in options:
        nic.values["tsa"] = _tsa(options["tsa"], line)
    if "tc_bw" in options:
        nic.values["tcbw"] = _numbers(options["tc_bw"], line, "--tcbw", 100)


def _specific_pfc(nic: _Nic, text: str, line: int) -> list[int]:
    """``--specific_pfc x,x,x,1,x,x,x,x``: the priorities given (0/1) changed, each ``x`` left as the NIC has it,
    which the script must have set before (else the NIC's PFC is not known from the script)."""
    values = _vector(text, line, "--specific_pfc")
    if "x" in values and "pfc" not in nic.values:
        raise _error(line, "--specific_pfc keeps the priorities marked x as the NIC has them, and nothing before "
                           "this line sets them: write --pfc with all 8")
    current = nic.values.get("pfc", [0] * 8)
    return [current[index] if value == "x" else _number(value, line, "--specific_pfc", 1)
            for index, value in enumerate(values)]


def _dscp2prio(nic: _Nic, text: str, line: int) -> None:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3 or parts[0] not in ("set", "del"):
        raise _error(line, f"--dscp2prio: expected set,DSCP,PRIORITY, found {text!r}")
    dscp, prio = _number(parts[1], line, "--dscp2prio DSCP", 63), _number(parts[2], line, "--dscp2prio priority", 7)
    if parts[0] == "set":
        nic.dscp2prio[dscp] = prio
    elif nic.dscp2prio.get(dscp) == prio:
        nic.dscp2prio[dscp] = 0  # mlx5e_dcbnl_ieee_delapp resets the DSCP's map entry to priority 0


def _dscp_setting(nic: _Nic, text: str, line: int) -> None:
    """``dscp_setting IFACE DSCP:PRIO...``: the APP entries the function makes the table hold, one per DSCP."""
    for word in _words(text, line)[2:]:
        dscp_text, colon, prio_text = word.partition(":")
        if not colon:
            raise _error(line, f"dscp_setting: expected DSCP:PRIORITY, found {word!r}")
        dscp = _number(dscp_text, line, "dscp_setting DSCP", 63)
        if dscp in nic.dscp_entries:
            raise _error(line, f"dscp_setting: DSCP {dscp} given twice (mlx5 keeps one priority per DSCP)")
        nic.dscp_entries.add(dscp)
        nic.dscp2prio[dscp] = _number(prio_text, line, "dscp_setting priority", 7)


def _command(nic: _Nic, words: list[str], line: int) -> None:
    """The command a ``setting`` line runs in apply mode."""
    if not words:
        return
    if words[0] == "mlnx_qos":
        _mlnx_qos(nic, words, line)
    elif words[:3] == ["ip", "link", "set"] and "mtu" in words[:-1]:
        nic.values["mtu"] = _number(words[words.index("mtu") + 1], line, "mtu", 65535)
    elif words[0] == "cma_roce_tos" and "-t" in words[:-1]:
        nic.values["roce_tos"] = _number(words[words.index("-t") + 1], line, "roce tos", 255)
    elif words[0] == "cma_roce_mode" and "-m" in words[:-1]:
        mode = _number(words[words.index("-m") + 1], line, "roce mode", 2)
        nic.values["roce_mode"] = 1 if mode == 1 else None  # cma_roce_mode -m: 1 = IB/RoCE v1, 2 = RoCE v2


_CC_FILES: dict[str, tuple[str, int]] = {"roce_np/cnp_dscp": ("cnp_dscp", 63),
                                         "roce_np/cnp_802p_prio": ("cnp_priority", 7)}


def _cc_setting(nic: _Nic, text: str, line: int) -> None:
    """``cc_setting IFACE NAME OFED_FILE DEBUGFS_FILE WANTED``: WANTED is what gets written."""
    words = _words(text, line)
    if len(words) != 6:
        raise _error(line, f"cc_setting takes 5 arguments, found {len(words) - 1}")
    ofed_file, value = words[3], words[5]
    enable = re.fullmatch(r"roce_(?:np|rp)/enable/(\d+)", ofed_file)
    if enable is not None:
        prio = _number(enable.group(1), line, "dcqcn priority", 7)
        nic.dcqcn.setdefault(prio, []).append(_number(value, line, "dcqcn enable", 1))
    elif ofed_file in _CC_FILES:
        name, high = _CC_FILES[ofed_file]
        nic.values[name] = _number(value, line, name, high)


def _wanted(kind: str, words: list[str], nic: _Nic) -> str | None:
    """What the script's reader of ``kind`` prints once the command (``words``) has set ``nic``, a fresh NIC: the
    text its `setting` line should check for ("" when the command does not set it; None: a kind not known)."""
    shared = hostscript.checked(kind, nic.values, " | ")
    if shared is not None or kind not in ("dcbx", "trust", "roce mode"):
        return shared
    key = "roce_mode" if kind == "roce mode" else kind
    if key not in nic.values:
        return ""
    value = nic.values[key]
    if kind == "dcbx":  # mlnx_qos prints "DCBX mode: OS controlled" or "Firmware controlled"
        return "Firmware controlled" if value == "firmware" else "OS controlled"
    if kind == "roce mode":  # cma_roce_mode prints the mode as the RDMA-CM configfs names it
        return "IB/RoCE v1" if value == 1 else "RoCE v2"
    return str(value)


_LINES: dict[str, Callable[[_Nic, str, int], None]] = {
    "local": _FILE.local, "setting": _FILE.setting(_command, _wanted), "cc_setting": _cc_setting,
    "dscp_setting": _dscp_setting,
    # The same tools run on their own line (a hand edit, or another tool's script merged in; bare or through
    # `bounded`) set the NIC too.
    **dict.fromkeys(("mlnx_qos", "ip", "cma_roce_tos", hostscript.BOUNDED), _FILE.bare(_command)),
}


def _nic_model(nic: _Nic, skeleton: NicModel | None) -> NicModel:
    values = nic.model_values
    if values is None:
        missing = [name for name in REQUIRED if name not in nic.values]
        if not nic.interface or missing:
            what = ", ".join(missing) if missing else "`local ifname=`"
            raise _error(nic.line, f"{nic.function}() does not set {what}: not a script fabricgen wrote")
        values = nic.model_values = {
            **nic.values, "interface": nic.interface, "rdma_device": nic.rdma_device or nic.interface,
            "dscp2prio": dict(sorted(nic.dscp2prio.items())), "dcqcn_priorities": sorted(nic.dcqcn),
            "dcqcn_enabled": bool(nic.dcqcn) and all(v == 1 for vs in nic.dcqcn.values() for v in vs),
        }
    if skeleton is not None:
        return updated(skeleton, values)
    return NicModel(**values, cable_m=None, peer=None, xoff_bytes=0)


# --- read -----------------------------------------------------------------------------------------------

def read(skeleton: DeviceModel, files: Mapping[str, str]) -> DeviceModel:
    """``skeleton`` with every owned field replaced by what the script and nccl.env say."""
    return hostscript.read(skeleton, files, _FILE, _Nic, _LINES, _nic_model)


def conflicts(files: Mapping[str, str]) -> list[ConfigConflict]:
    """The script's `setting` lines that check for one value and set another (read() reads the command's)."""
    return hostscript.conflicts(files, _FILE, _Nic, _LINES)
