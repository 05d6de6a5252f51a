#!/usr/bin/env python3
"""Recorded behaviour models -- NOT the real tools -- of the programs fabricgen-nic.sh runs on ConnectX hosts.

One multi-call program; the name it runs under picks the model (the symlinks next to this file):

* ``mlnx_qos``  -- mlnx_qos 1.2 (Mellanox/mlnx-tools ``python/mlnx_qos``, netlink path) and the mlx5 kernel
  callbacks behind it (``drivers/net/ethernet/mellanox/mlx5/core/en_dcbnl.c``): argument rules and messages,
  the ETS/TC-group arithmetic and its read-back, trust = "DSCP APP entries exist", PFC link toggles.
* ``dcb``       -- iproute2 ``dcb [-N] {pfc|ets|app} show dev DEV [ATTR...]`` (read only), printed like
  ``dcb/dcb_ets.c`` and ``dcb_app.c``: ``prio-tc 0:0 1:1 ... 7:7 `` with a space after every entry.
* ``ip``        -- ``ip link set [dev] DEV mtu N``: writes ``$FABRICGEN_SYSFS/class/net/DEV/mtu``.
* ``cma_roce_tos``, ``cma_roce_mode`` -- mlnx-tools ``sbin/`` wrappers around rdma_cm configfs.
* ``nic-model`` -- test set-up: a freshly initialised netdev or RDMA device; a netdev's state as JSON.

Facts come from /work/shared/reference/nic.md §1, §3.2, §6 and the sources named above. The state lives in
``$NIC_STUB_STATE`` (a JSON file per netdev and per RDMA device); each call is appended to ``$NIC_STUB_LOG``
(JSON lines: tool, argv, status, parent -- the program that started it, ``timeout`` under the script's bound).
Without ``NIC_STUB_STATE`` the models refuse to run, and ``ip`` writes nowhere but a fake ``FABRICGEN_SYSFS`` tree.

Deliberate differences from the real tools:

* errors go to stderr (mlnx_qos 1.2 ``print()``s them on stdout) and a call is all-or-nothing (the real tool
  applies option by option, so a late error leaves earlier options applied);
* no lldpad warning, no buffer/ratelimit lines in the mlnx_qos report, no root or configfs-mount checks;
* what fabricgen-nic.sh has no business using (mlnx_qos ``-F -P -r --prio2buffer --buffer_size``, any ``dcb``
  write, other ``ip`` commands) exits 3 with "not modelled" instead of pretending.

ETS bandwidth read-back: released mlx5 drivers report the firmware's 100 % for strict/vendor TCs ("Currently
for non-ETS 100 bandwidth is being reported ... due to hardware limitation" -- NVIDIA's 2026 patch "net/mlx5e:
Report zero bandwidth for non-ETS traffic classes", merge status unknown). ``nic-model netdev NAME
--report-non-ets-bw-as-zero`` models a kernel with that patch.
"""
# ruff: noqa: PTH103, PTH105, PTH113, PTH118, PTH119, PTH122, PTH123
# (os.path, not pathlib: see the comment at the imports -- the start-up time of every model call)
from __future__ import annotations

import json
import os
import sys

# Every model call is a process start, and a --check makes dozens: typing and pathlib (~10 ms a start together)
# are for the type checker only -- mypy takes this name as True --, the state files are handled with os.path;
# optparse, argparse, getopt and pathlib are imported by the few calls that use them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from optparse import OptionParser, Values
    from pathlib import Path
    from typing import Any, TypeVar

    T = TypeVar("T")

# linux/dcbnl.h
TSA_STRICT, TSA_CB_SHAPER, TSA_ETS, TSA_VENDOR = 0, 1, 2, 255
TSA_BY_NAME = {"strict": TSA_STRICT, "ets": TSA_ETS, "vendor": TSA_VENDOR}
TSA_NAME = {TSA_STRICT: "strict", TSA_CB_SHAPER: "cbs", TSA_ETS: "ets", TSA_VENDOR: "vendor"}
DCBX_HOST, DCBX_LLD_MANAGED, DCBX_VER_CEE, DCBX_VER_IEEE = 0x1, 0x2, 0x4, 0x8
# mlx5 en_dcbnl.c / en.h
MAX_BW_ALLOC = 100
VENDOR_TC_GROUP = 7
LOWEST_PRIO_GROUP = 0
MAX_CABLE_LEN = 1000
DEFAULT_CABLE_LEN = 7
NUM_DSCP = 64
MAX_MTU = 9978  # ConnectX-6/7 netdev max_mtu
MIN_MTU = 68
# What mlnx_qos prints when dcbnl answers an IEEE_SET with an error (dcbnetlink.py check_err).
NETLINK_ERROR = "Netlink error: Bad value. see dmesg."
INVALID_DSCP2PRIO = "Invalid dscp2prio command. Refer to the help."
# iproute2 lib/rt_dsfield names that `dcb app show` prints for a DSCP unless -N is given.
DSCP_NAMES = {**{8 * n: f"CS{n}" for n in range(8)}, 46: "EF",
              **{8 * c + 2 * d: f"AF{c}{d}" for c in range(1, 5) for d in range(1, 4)}}


class ToolError(Exception):
    """Ends the program: ``message`` on stderr (when not empty) and exit ``status``."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def prog() -> str:
    return os.path.basename(sys.argv[0])


def not_modelled(what: str) -> ToolError:
    return ToolError(f"{prog()} (test model): {what} is not modelled; this is not the real tool", 3)


# ---------------------------------------------------------------------------------------------------------
# The mlx5 netdev as its dcbnl callbacks see it


def build_tc_group(tsa: list[int], bw: list[int]) -> list[int]:
    """mlx5e_build_tc_group(): ETS TCs in group 0 (non-zero ones in 1 when zero-BW ETS TCs exist), each strict
    TC in its own group above them, vendor TCs in group 7."""
    ets = [tc for tc in range(8) if tsa[tc] == TSA_ETS]
    ets_zero_bw = any(bw[tc] == 0 for tc in ets)
    strict_group = LOWEST_PRIO_GROUP + (1 if ets else 0) + (1 if ets_zero_bw else 0)
    groups: list[int] = []
    for tc in range(8):
        if tsa[tc] == TSA_VENDOR:
            groups.append(VENDOR_TC_GROUP)
        elif tsa[tc] == TSA_STRICT:
            groups.append(strict_group)
            strict_group += 1
        else:
            groups.append(LOWEST_PRIO_GROUP + 1 if bw[tc] and ets_zero_bw else LOWEST_PRIO_GROUP)
    return groups


def build_tc_tx_bw(tsa: list[int], bw: list[int]) -> list[int]:
    """mlx5e_build_tc_tx_bw(): what the firmware stores -- 100 for strict/vendor TCs; zero-BW ETS TCs share
    100 between them."""
    zero = [tc for tc in range(8) if tsa[tc] == TSA_ETS and not bw[tc]]
    share = MAX_BW_ALLOC // len(zero) if zero else 0
    stored = [(bw[tc] or share) if tsa[tc] == TSA_ETS else MAX_BW_ALLOC for tc in range(8)]
    if zero:
        stored[zero[-1]] += MAX_BW_ALLOC % len(zero)
    return stored


def validate_ets(tsa: list[int], bw: list[int]) -> None:
    """mlx5e_dbcnl_validate_ets(zero_sum_allowed=false): with any ETS TC the ETS shares must sum to 100."""
    ets_bw = [bw[tc] for tc in range(8) if tsa[tc] == TSA_ETS]
    if ets_bw and sum(ets_bw) != MAX_BW_ALLOC:
        raise ToolError(f"{NETLINK_ERROR}\n(model of dmesg: mlx5_core: Failed to validate ETS: "
                        "BW sum is illegal)")


class Netdev:
    """Firmware tables (``hw_*``) plus the driver caches that mlx5's dcbnl callbacks read and write."""

    def __init__(self, name: str, *, report_non_ets_bw_as_zero: bool = False) -> None:
        """A netdev as the driver initialises it: firmware-controlled DCBX, PFC off, trust PCP, and
        mlx5e_ets_init(): all TCs vendor with BW 100, prio 0 -> TC 1 and prio 1 -> TC 0."""
        self.name = name
        self.report_non_ets_bw_as_zero = report_non_ets_bw_as_zero
        self.dcbx_cap = DCBX_VER_CEE | DCBX_VER_IEEE  # no DCB_CAP_DCBX_HOST
        self.pfc_en = 0
        self.cable_len = DEFAULT_CABLE_LEN
        self.link_toggles = 0  # mlx5_toggle_port_link(): once per changed PFC mask
        self.dscp2prio = [dscp >> 3 for dscp in range(NUM_DSCP)]  # firmware default map
        self.app_dscp: dict[int, int] = {}  # kernel DCB APP table, DSCP selector: dscp -> prio
        self.setets_core([1, 0, 2, 3, 4, 5, 6, 7], [TSA_VENDOR] * 8, [MAX_BW_ALLOC] * 8)
        self.ets_request: dict[str, list[int]] = {}  # the last ETS sent over dcbnl (what tests compare)

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Netdev:
        dev = cls(data["name"])
        vars(dev).update(data)
        dev.app_dscp = {int(dscp): prio for dscp, prio in data["app_dscp"].items()}
        return dev

    @property
    def trust(self) -> str:
        """mlnx_qos (netlink path): "dscp" exactly when the APP table holds DSCP entries."""
        return "dscp" if self.app_dscp else "pcp"

    def setets_core(self, prio_tc: list[int], tsa: list[int], bw: list[int]) -> None:
        """mlx5e_dcbnl_ieee_setets_core()."""
        self.hw_prio_tc = list(prio_tc)
        self.hw_tc_group = build_tc_group(tsa, bw)
        self.hw_tc_bw = build_tc_tx_bw(tsa, bw)
        self.tc_tsa = list(tsa)
        self.ets_request = {"prio_tc": list(prio_tc), "tsa": list(tsa), "tc_bw": list(bw)}

    def setets(self, prio_tc: list[int], tsa: list[int], bw: list[int]) -> None:
        validate_ets(tsa, bw)
        self.setets_core(prio_tc, tsa, bw)

    def getets(self) -> tuple[list[int], list[int], list[int]]:
        """mlx5e_dcbnl_ieee_getets(): read back from firmware; updates the driver's TSA cache as it does."""
        groups, bw = self.hw_tc_group, list(self.hw_tc_bw)
        zero_bw_ets = any(bw[tc] < MAX_BW_ALLOC and groups[tc] == LOWEST_PRIO_GROUP + 1 for tc in range(8))
        group6 = VENDOR_TC_GROUP - 1 in groups
        if zero_bw_ets:  # "Report 0% ets tc if exits"
            bw = [0 if groups[tc] == LOWEST_PRIO_GROUP else bw[tc] for tc in range(8)]
        for tc in range(8):
            if bw[tc] < MAX_BW_ALLOC:
                self.tc_tsa[tc] = TSA_ETS
            elif groups[tc] == VENDOR_TC_GROUP and not group6:
                self.tc_tsa[tc] = TSA_VENDOR
        if self.report_non_ets_bw_as_zero:
            bw = [0 if bw[tc] == MAX_BW_ALLOC and self.tc_tsa[tc] != TSA_ETS else bw[tc] for tc in range(8)]
        return list(self.hw_prio_tc), list(self.tc_tsa), bw

    def setpfc(self, pfc_en: int, delay: int) -> None:
        """mlx5e_dcbnl_ieee_setpfc(): a new mask toggles the link; delay = cable length if 0 < N < 1000."""
        if pfc_en != self.pfc_en:
            self.pfc_en = pfc_en
            self.link_toggles += 1
        if 0 < delay < MAX_CABLE_LEN:
            self.cable_len = delay

    def setdcbx(self, mode: int) -> None:
        """mlx5e_dcbnl_setdcbx(): 0 = firmware controlled, DCB_CAP_DCBX_HOST = OS controlled."""
        if mode & DCBX_LLD_MANAGED or (mode and not mode & DCBX_HOST):
            raise ToolError(NETLINK_ERROR)
        self.dcbx_cap = mode if mode else self.dcbx_cap & ~DCBX_HOST

    def setapp(self, dscp: int, prio: int) -> None:
        """mlx5e_dcbnl_ieee_setapp(): the first DSCP entry switches trust to DSCP; replaces an entry."""
        if not 0 <= dscp < NUM_DSCP or not 0 <= prio <= 7:
            raise ToolError(NETLINK_ERROR)
        self.dscp2prio[dscp] = prio
        self.app_dscp[dscp] = prio

    def delapp(self, dscp: int, prio: int) -> None:
        """mlx5e_dcbnl_ieee_delapp(): only an exact entry (ENOENT otherwise); resets that DSCP's map to 0."""
        if self.app_dscp.get(dscp) != prio or self.dscp2prio[dscp] != prio:
            raise ToolError(NETLINK_ERROR)
        del self.app_dscp[dscp]
        self.dscp2prio[dscp] = 0


class Store:
    def __init__(self, root: str) -> None:
        self.root = root

    @classmethod
    def from_env(cls) -> Store:
        root = os.environ.get("NIC_STUB_STATE")
        if not root:
            raise ToolError(f"{prog()} (test model): NIC_STUB_STATE is not set -- this is a behaviour "
                            "model for tests, not the real tool", 3)
        return cls(root)

    def _netdev_file(self, name: str) -> str:
        return os.path.join(self.root, f"netdev-{name}.json")

    def _rdma_file(self, device: str) -> str:
        return os.path.join(self.root, f"rdma-{device}.json")

    def netdev(self, name: str) -> Netdev:
        path = self._netdev_file(name)
        if not os.path.isfile(path):
            raise ToolError(f'Cannot find device "{name}"')
        return Netdev.from_json(json.loads(_read_text(path)))

    def save_netdev(self, dev: Netdev) -> None:
        _write_json(self._netdev_file(dev.name), dev.to_json())

    def rdma(self, device: str) -> dict[str, Any]:
        path = self._rdma_file(device)
        if not os.path.isfile(path):  # cma_roce_*: `mkdir rdma_cm/$DEVICE` fails for a device that does not exist
            raise ToolError(f"Failed to create configuration for {device}")
        data: dict[str, Any] = json.loads(_read_text(path))
        return data

    def save_rdma(self, device: str, data: dict[str, Any]) -> None:
        _write_json(self._rdma_file(device), data)


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8") as stream:
        return stream.read()


def _write_json(path: str, data: Any) -> None:
    """Atomically: a temporary beside it (NAME.tmp for NAME.json), then renamed over it."""
    tmp = os.path.splitext(path)[0] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as stream:
        stream.write(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------------------
# mlnx_qos 1.2


def mlnx_qos_parser() -> OptionParser:
    """The real option table (optparse: unique long-option prefixes work, unknown options exit 2)."""
    from optparse import OptionParser

    parser = OptionParser(usage="%prog -i <interface> [options]", version="%prog 1.2")
    for flags, dest in ((("-f", "--pfc"), "pfc"), (("-F", "--specific_pfc"), "specific_pfc"),
                        (("-P", "--get_pfc"), "get_pfc"), (("-p", "--prio_tc"), "prio_tc"),
                        (("-s", "--tsa"), "tsa"), (("-t", "--tcbw"), "tc_bw"),
                        (("-r", "--ratelimit"), "ratelimit"),
                        (("-d", "--dcbx"), "dcbx"), (("--trust",), "trust"), (("--cable_len",), "cable_len"),
                        (("--prio2buffer",), "prio2buffer"), (("--buffer_size",), "buffer_size"),
                        (("-i", "--interface"), "intf")):
        parser.add_option(*flags, dest=dest)
    parser.add_option("--dscp2prio", dest="dscp2prio", action="append")
    parser.add_option("-a", action="store_true", dest="printall", default=False)
    return parser


UNMODELLED_MLNX_QOS = {"specific_pfc": "--specific_pfc", "get_pfc": "--get_pfc", "ratelimit": "--ratelimit",
                       "prio2buffer": "--prio2buffer", "buffer_size": "--buffer_size"}


def parse_int(text: str, low: int, high: int, description: str) -> int:
    try:
        value = int(text)
        if value < low or value > high:
            raise ValueError(f"{value} is not in the range {low}..{high}")
    except ValueError as err:
        raise ToolError(f"Bad value for {description}: {err}") from None
    return value


def parse_list(text: str, too_many: str, wrong_count: str, item: Callable[[int, str], T]) -> list[T]:
    values: list[T] = []
    for index, token in enumerate(text.split(",")):
        if index >= 8:
            raise ToolError(too_many)
        values.append(item(index, token))
    if len(values) != 8:
        raise ToolError(wrong_count)
    return values


def parse_tsa(_index: int, token: str) -> int:
    if token not in TSA_BY_NAME:
        raise ToolError(str(("Bad TSA value: ", token)))  # mlnx_qos prints this tuple as is
    return TSA_BY_NAME[token]


def apply_dcbx(dev: Netdev, dcbx: str | None) -> None:
    if dcbx is None or dcbx == "get":
        return
    if dcbx not in ("os", "fw"):
        raise ToolError("Invalid dcbx mode command. Refer to the help.")
    dev.setdcbx(dev.dcbx_cap | DCBX_HOST if dcbx == "os" else 0)


def apply_pfc(dev: Netdev, pfc: str | None, cable_len: str | None) -> None:
    delay = parse_int(cable_len, 0, 0xFFFF, "cable_len") if cable_len else 0
    mask = 0  # as in mlnx_qos: --cable_len without --pfc sends an all-off PFC mask
    if pfc:
        flags = parse_list(pfc, "Too many items for PFC", "pfc list must have 8 items",
                           lambda _i, token: parse_int(token, 0, 1, "PFC"))
        mask = sum(flag << prio for prio, flag in enumerate(flags))
    if pfc or cable_len:
        dev.setpfc(mask, delay)


def parse_dscp2prio(options: list[str]) -> list[tuple[str, int, int]]:
    actions: list[tuple[str, int, int]] = []
    for option in options:
        if option == "flush":
            actions.append(("flush", 0, 0))
            continue
        try:
            action, dscp_text, prio_text = option.split(",")
            dscp, prio = int(dscp_text), int(prio_text)
        except ValueError:
            raise ToolError(INVALID_DSCP2PRIO) from None
        if action not in ("set", "del") or dscp > NUM_DSCP - 1 or prio > 7:
            # mlnx_qos calls sys.exit(1) here, inside a bare `except:` that catches it and prints the message
            raise ToolError(INVALID_DSCP2PRIO)
        actions.append((action, dscp, prio))
    return actions


def apply_dscp2prio(dev: Netdev, actions: list[tuple[str, int, int]]) -> None:
    try:
        for action, dscp, prio in actions:
            if action == "set":
                dev.setapp(dscp, prio)
            elif action == "del":
                dev.delapp(dscp, prio)
            else:
                for entry in sorted(dev.app_dscp.items()):
                    dev.delapp(*entry)
    except ToolError:  # negative numbers fail in struct.pack, kernel refusals in check_err: same message
        raise ToolError("dscp2prio command failed") from None


def apply_trust(dev: Netdev, trust: str | None) -> None:
    if trust is None:
        return
    if trust not in ("dscp", "pcp"):
        raise ToolError("Invalid trust state command. Refer to the help.")
    if trust == dev.trust:
        return
    if trust == "pcp":
        for entry in sorted(dev.app_dscp.items()):
            dev.delapp(*entry)
    else:  # DcbAppTable.setDefaultAppEntry(): "firmware default" d -> d>>3 for all 64 DSCPs
        for dscp in range(NUM_DSCP):
            dev.setapp(dscp, dscp >> 3)


def parse_tcbw(token: str, tsa: int) -> int:
    bw = parse_int(token, 0, 100, "ETS BW")
    if tsa != TSA_ETS and bw != 0:
        raise ToolError("ETS BW for a strict/vendor TC must be 0")
    return bw


def apply_ets(dev: Netdev, options: Values) -> None:
    prio_tc, tsa, bw = dev.getets()
    if options.tsa:
        tsa = parse_list(options.tsa, "Too many items for TSA", "tsa list must have 8 items", parse_tsa)
    if options.tc_bw:
        bw = parse_list(options.tc_bw, "Too many items for ETS BW", "tcbw list must have 8 items",
                        lambda tc, token: parse_tcbw(token, tsa[tc]))
    if options.prio_tc:
        prio_tc = parse_list(options.prio_tc, "Too many items in UP => TC mapping",
                             "prio_tc list must have 8 items",
                             lambda _i, token: parse_int(token, 0, 7, "UP => TC mapping"))
    if options.tsa or options.tc_bw or options.prio_tc:
        dev.setets(prio_tc, tsa, bw)


def dscp2prio_lines(app_dscp: dict[int, int]) -> list[str]:
    """DcbAppTable.printAppSelector(): per priority, DSCPs as "NN," in lines of at most 24 characters."""
    per_prio = [""] * 8
    for dscp, prio in sorted(app_dscp.items()):
        per_prio[prio] += f"{dscp:02d},"
    lines: list[str] = []
    for prio, text in enumerate(per_prio):
        while text:
            lines.append(f"\tprio:{prio} dscp:{text[:24]}")
            text = text[24:]
    return lines


def mlnx_qos_report(dev: Netdev, printall: bool) -> list[str]:
    """pretty_print(), without the buffer and ratelimit details."""
    lines = ["DCBX mode: " + ("OS controlled" if dev.dcbx_cap & DCBX_HOST else "Firmware controlled"),
             f"Priority trust state: {dev.trust}"]
    if dev.trust == "dscp":
        lines += ["dscp2prio mapping:", *dscp2prio_lines(dev.app_dscp)]
    lines += [f"Cable len: {dev.cable_len}", "PFC configuration:",
              "\tpriority    0   1   2   3   4   5   6   7",
              "\tenabled     " + "".join(f"{(dev.pfc_en >> prio) & 1}   " for prio in range(8))]
    prio_tc, tsa, bw = dev.getets()
    tc2up: dict[int, list[int]] = {tc: [] for tc in range(8)} if printall else {}
    for prio, tc in enumerate(prio_tc):
        tc2up.setdefault(tc, []).append(prio)
    for tc, prios in tc2up.items():
        algorithm = f"ets, bw: {bw[tc]}%" if tsa[tc] == TSA_ETS else TSA_NAME.get(tsa[tc], "unknown")
        lines.append(f"tc: {tc} ratelimit: unlimited, tsa: {algorithm}")
        lines += [f"\t priority:  {prio}" for prio in prios]
    return lines


def mlnx_qos(argv: list[str]) -> int:
    options, args = mlnx_qos_parser().parse_args(argv)
    if args:
        raise ToolError("Bad arguments")
    if options.intf is None:
        raise ToolError("Interface name is required")
    for dest, flag in UNMODELLED_MLNX_QOS.items():
        if getattr(options, dest) is not None:
            raise not_modelled(flag)
    store = Store.from_env()
    dev = store.netdev(options.intf)
    apply_dcbx(dev, options.dcbx)
    apply_pfc(dev, options.pfc, options.cable_len)
    if options.dscp2prio and options.trust:
        raise ToolError("trust and dscp2prio commands cannot be used at the same time.")
    apply_dscp2prio(dev, parse_dscp2prio(options.dscp2prio or []))
    apply_trust(dev, options.trust)
    apply_ets(dev, options)
    store.save_netdev(dev)
    print("\n".join(mlnx_qos_report(dev, options.printall)))
    return 0


# ---------------------------------------------------------------------------------------------------------
# iproute2: dcb (show only) and ip link set ... mtu


def dcb_map(name: str, values: list[Any]) -> str:
    return f"{name} " + "".join(f"{index}:{value} " for index, value in enumerate(values))


def dcb_ets(dev: Netdev, _numeric: bool) -> dict[str, str]:
    prio_tc, tsa, bw = dev.getets()
    return {"willing": "willing off ", "ets-cap": "ets-cap 8 ", "cbs": "cbs off ",
            "tc-tsa": dcb_map("tc-tsa", [TSA_NAME.get(t, "???") for t in tsa]),
            "tc-bw": dcb_map("tc-bw", bw), "prio-tc": dcb_map("prio-tc", prio_tc)}


def dcb_pfc(dev: Netdev, _numeric: bool) -> dict[str, str]:
    return {"pfc-cap": "pfc-cap 8 ", "macsec-bypass": "macsec-bypass off ",
            "delay": f"delay {dev.cable_len} ",
            "prio-pfc": dcb_map("prio-pfc", ["on" if dev.pfc_en >> prio & 1 else "off" for prio in range(8)])}


def dcb_app(dev: Netdev, numeric: bool) -> dict[str, str]:
    entries = "".join(f"{dscp if numeric else DSCP_NAMES.get(dscp, dscp)}:{prio} "
                      for dscp, prio in sorted(dev.app_dscp.items()))
    return {"dscp-prio": f"dscp-prio {entries}" if entries else ""}  # dcb prints nothing without entries


DCB_OBJECTS: dict[str, Callable[[Netdev, bool], dict[str, str]]] = {
    "pfc": dcb_pfc, "ets": dcb_ets, "app": dcb_app}
DCB_DEFAULT_ATTRS = {"pfc": ["pfc-cap", "prio-pfc"], "ets": ["willing", "tc-bw", "tc-tsa", "prio-tc"],
                     "app": ["dscp-prio"]}


def matches(word: str, keyword: str) -> bool:
    """iproute2 matches(): a non-empty prefix of the keyword."""
    return bool(word) and keyword.startswith(word)


def dcb(argv: list[str]) -> int:
    args, numeric = list(argv), False
    while args and args[0].startswith("-"):
        option = args.pop(0)
        if option not in ("-N", "--Numeric"):
            raise not_modelled(f"dcb option {option}")
        numeric = True
    objects = [name for name in DCB_OBJECTS if args and matches(args[0], name)]
    if not objects or len(args) < 2 or not matches(args[1], "show"):
        raise not_modelled("anything but `dcb [-N] {pfc|ets|app} show dev DEV [ATTR...]`")
    if len(args) < 4 or args[2] != "dev":
        raise ToolError(f'Expected "dev DEV", got "{" ".join(args[2:])}"')
    obj = objects[0]
    printed = DCB_OBJECTS[obj](Store.from_env().netdev(args[3]), numeric)
    lines: list[str] = []
    for word in args[4:] or DCB_DEFAULT_ATTRS[obj]:
        attr = next((name for name in printed if matches(word, name)), None)
        if attr is None:
            raise ToolError(f'What is "{word}"?')
        lines.append(printed[attr])
    print("\n".join(line for line in lines if line))
    return 0


def fake_sysfs() -> Path:
    from pathlib import Path

    root = os.environ.get("FABRICGEN_SYSFS", "")
    if not root or Path(root).resolve() == Path("/sys"):
        raise ToolError("ip (test model): FABRICGEN_SYSFS must point at a fake /sys tree", 3)
    return Path(root)


def ip(argv: list[str]) -> int:
    rest = argv[2:] if argv[:2] == ["link", "set"] else []
    if rest[:1] == ["dev"]:
        rest = rest[1:]
    if len(rest) != 3 or rest[1] != "mtu":
        raise not_modelled("anything but `ip link set [dev] DEV mtu N`")
    ifname, _, value = rest
    mtu_file = fake_sysfs() / "class" / "net" / ifname / "mtu"
    if not mtu_file.parent.is_dir():
        raise ToolError(f'Cannot find device "{ifname}"')
    if not value.isdigit():
        raise ToolError(f'Error: argument "{value}" is wrong: Invalid "mtu" value', 255)
    if int(value) > MAX_MTU:
        raise ToolError("Error: mtu greater than device maximum.", 2)
    if int(value) < MIN_MTU:
        raise ToolError("Error: mtu less than device minimum.", 2)
    mtu_file.write_text(f"{int(value)}\n")
    return 0


# ---------------------------------------------------------------------------------------------------------
# mlnx-tools cma_roce_tos / cma_roce_mode (bash + rdma_cm configfs)

ROCE_MODES = {"1": "IB/RoCE v1", "2": "RoCE v2"}


def cma_options(argv: list[str], spec: str) -> dict[str, str]:
    import getopt

    try:
        pairs, _ = getopt.getopt(argv, spec)
    except getopt.GetoptError as err:
        raise not_modelled(f"{err}") from None
    return {flag.lstrip("-"): value for flag, value in pairs}


def cma_port(options: dict[str, str]) -> tuple[Store, str, dict[str, Any], dict[str, Any]]:
    device, port = options.get("d", "mlx5_0"), options.get("p", "1")
    store = Store.from_env()
    data = store.rdma(device)
    if port not in data["ports"]:
        raise ToolError(f"Device {device} port {port} does not exist")
    return store, device, data, data["ports"][port]


def cma_roce_tos(argv: list[str]) -> int:
    options = cma_options(argv, "d:t:hp:")
    if "h" in options:
        print("Set/Show RoCE default ToS of RDMA_CM applications")
        return 0
    store, device, data, port = cma_port(options)
    tos = options.get("t", "-1")
    if not tos.lstrip("-").isdigit():
        print(f"{prog()}: [: {tos}: integer expression expected", file=sys.stderr)
    elif int(tos) >= 0:  # `[ $MODE -ge 0 ] && echo $MODE > default_roce_tos`
        if int(tos) > 255:  # configfs store: kstrtou8
            print(f"{prog()}: echo: write error: Invalid argument", file=sys.stderr)
        else:
            port["default_roce_tos"] = int(tos)
            store.save_rdma(device, data)
    print(port["default_roce_tos"])
    return 0


def cma_roce_mode(argv: list[str]) -> int:
    options = cma_options(argv, "d:m:hp:")
    if "h" in options:
        print("Set/Show RoCE default mode of RDMA_CM applications")
        return 0
    store, device, data, port = cma_port(options)
    mode = ROCE_MODES.get(options.get("m", "0"))
    if mode is not None:
        port["default_roce_mode"] = mode
        store.save_rdma(device, data)
    print(port["default_roce_mode"])
    return 0


# ---------------------------------------------------------------------------------------------------------
# Test set-up


def nic_model(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="nic-model", description="set up the NIC behaviour models' state")
    commands = parser.add_subparsers(dest="command", required=True)
    netdev = commands.add_parser("netdev", help="a netdev as mlx5 initialises it")
    netdev.add_argument("name")
    netdev.add_argument("--report-non-ets-bw-as-zero", action="store_true",
                        help='kernel with "net/mlx5e: Report zero bandwidth for non-ETS traffic classes"')
    rdma = commands.add_parser("rdma", help="an RDMA device with port 1 in rdma_cm configfs")
    rdma.add_argument("device")
    rdma.add_argument("--tos", type=int, default=0)
    rdma.add_argument("--mode", choices=sorted(ROCE_MODES.values()), default="RoCE v2")
    show = commands.add_parser("show", help="a netdev's state as JSON, with the ETS read-back")
    show.add_argument("name")
    args = parser.parse_args(argv)
    store = Store.from_env()
    os.makedirs(store.root, exist_ok=True)
    if args.command == "netdev":
        store.save_netdev(Netdev(args.name, report_non_ets_bw_as_zero=args.report_non_ets_bw_as_zero))
    elif args.command == "rdma":
        port = {"default_roce_tos": args.tos, "default_roce_mode": args.mode}
        store.save_rdma(args.device, {"ports": {"1": port}})
    else:
        dev = store.netdev(args.name)
        prio_tc, tsa, bw = dev.getets()
        request: dict[str, list[Any]] = dict(dev.ets_request)
        if request:
            request["tsa"] = [TSA_NAME[t] for t in dev.ets_request["tsa"]]
        readback = {"prio_tc": prio_tc, "tsa": [TSA_NAME[t] for t in tsa], "tc_bw": bw}
        shown = {**dev.to_json(), "trust": dev.trust, "ets_request": request, "ets_readback": readback}
        print(json.dumps(shown, sort_keys=True))
    return 0


TOOLS: dict[str, Callable[[list[str]], int]] = {
    "mlnx_qos": mlnx_qos, "dcb": dcb, "ip": ip, "cma_roce_tos": cma_roce_tos, "cma_roce_mode": cma_roce_mode,
    "nic-model": nic_model,
}


def run(tool: str, argv: list[str]) -> int:
    if tool not in TOOLS:
        print(f"{tool}: run me as one of {', '.join(sorted(TOOLS))} (symlinks)", file=sys.stderr)
        return 3
    try:
        return TOOLS[tool](argv)
    except ToolError as err:
        if err.message:
            print(err.message, file=sys.stderr)
        return err.status
    except SystemExit as exc:  # optparse/argparse: --help, --version (0) and usage errors (2)
        return exc.code if isinstance(exc.code, int) else 1


def parent() -> str:
    """The name of the program that started this one: "timeout" when the script bounded the call."""
    try:
        return _read_text(f"/proc/{os.getppid()}/comm").strip()
    except OSError:
        return ""


def main() -> int:
    tool, argv = prog(), sys.argv[1:]
    status = run(tool, argv)
    log = os.environ.get("NIC_STUB_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as stream:
            stream.write(json.dumps({"tool": tool, "argv": argv, "status": status, "parent": parent()}) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
