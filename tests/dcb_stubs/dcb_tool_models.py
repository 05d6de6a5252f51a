#!/usr/bin/env python3
"""Recorded behaviour models -- NOT the real tools -- of the programs fabricgen-dcb.sh runs on a generic Linux host.

One multi-call program; the name it runs under picks the model (the symlinks next to this file):

* ``dcb``       -- iproute2 ``dcb`` (objects app, dcbx, ets, pfc, and apptrust when ``DCB_STUB_IPROUTE2`` is 6.2)
  over the kernel's dcbnl (net/dcb/dcbnl.c) and a bnxt_en-like driver (drivers/net/ethernet/broadcom/bnxt/
  bnxt_dcb.c, torvalds/linux): argument syntax, ``dcb app replace`` as dcb/dcb_app.c runs it, the messages
  and exit statuses, and the driver's rules.
* ``ip``        -- ``ip link set [dev] DEV mtu N``: writes ``$FABRICGEN_SYSFS/class/net/DEV/mtu``.
* ``mkdir``     -- configfs: ``mkdir $FABRICGEN_CONFIGFS/rdma_cm/DEV`` makes the kernel populate ``ports/1/
  default_roce_tos`` and ``default_roce_mode`` for an RDMA device that exists (drivers/infiniband/core/
  cma_configfs.c), and fails with "No such device" for one that does not.
* ``dcb-model`` -- test set-up: a netdev as the driver initialises it, an RDMA device; a netdev's state as JSON.

Facts: /work/shared/reference/nic.md §3.2 and §6, the sources above, and what iproute2 6.1's ``dcb`` (Debian 12)
prints on this machine for a netdev without dcbnl ops ("Attribute read: Operation not supported") and for an
object it lacks ('Object "apptrust" is unknown'). The state lives in ``$DCB_STUB_STATE`` (a JSON file per netdev
and per RDMA device); each call is appended to ``$DCB_STUB_LOG`` (JSON lines: tool, argv, status, parent -- the
program that started it, ``timeout`` under the script's bound). Without ``DCB_STUB_STATE`` the models refuse to
run; ``ip`` and ``mkdir`` write only under the fake trees.

The driver model (what ``bnxt_dcb.c`` does):

* DCBX: ``host ieee`` on a PF without the firmware LLDP agent; with it (``--fw-lldp-agent``) the host may not
  take over (setdcbx answers 1) and every IEEE set is refused with EINVAL.
* ETS: before the first set, ``dcb ets show`` reads all zeros (prio-tc 0, TSA strict, 0 %); a set needs host
  mode, TCs below ``--max-tc``, TSA strict or ets (else ENOTSUPP), ETS shares summing to at most 100, and no
  ETS TC at 0 % when they sum to 100 (``bnxt_ets_validate``: "starving a TC"); the driver keeps the ETS it was
  given and reads exactly that back.
* PFC: refused (EINVAL) until ETS is set, and when more TCs are lossless than ``pfc-cap`` (``--max-lltc``);
  ``delay`` is stored and never used.
* APP (DSCP selector): the kernel's table allows one DSCP with several priorities (only an exact duplicate is
  EEXIST, a missing entry on delete ENOENT); the driver copies each add into its hardware DSCP map and on
  delete writes that DSCP's hardware entry with mask 0, modelled as removing it (``hw_dscp``).
* dcbnl answers a set error as a u8 (net/dcb/dcbnl.c: ``nla_put_u8(skb, DCB_ATTR_IEEE, err)``), so ``dcb``
  prints strerror(-errno & 0xff): "Unknown error 234" for EINVAL.

Deliberate differences: only the DSCP selector of ``dcb app``; no ``-j``, ``-s``, ``buffer``, ``maxrate``,
``rewr`` or ``reco-*`` (exit 3, "not modelled"); one netdev per file, no netlink notifications.
"""
# ruff: noqa: PTH103, PTH105, PTH113, PTH118, PTH119, PTH120, PTH122, PTH123
# (os.path, not pathlib: see the comment at the imports -- the start-up time of every model call)
from __future__ import annotations

import json
import os
import sys

# Every model call is a process start, and a --check makes dozens: typing and pathlib (~10 ms a start together)
# are for the type checker only -- mypy takes this name as True --, the state files are handled with os.path;
# argparse and pathlib are imported by the few calls that use them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

DCBX_HOST, DCBX_LLD_MANAGED, DCBX_CEE, DCBX_IEEE, DCBX_STATIC = 0x1, 0x2, 0x4, 0x8, 0x10
DCBX_FLAGS = (("host", DCBX_HOST), ("lld-managed", DCBX_LLD_MANAGED), ("cee", DCBX_CEE), ("ieee", DCBX_IEEE),
              ("static", DCBX_STATIC))
TSA = {"strict": 0, "cbs": 1, "ets": 2, "vendor": 255}
TSA_NAME = {value: name for name, value in TSA.items()}
EINVAL, ENOENT, EEXIST, EOPNOTSUPP, ENOTSUPP = 22, 2, 17, 95, 524
# /etc/iproute2/rt_dsfield as Debian 12 ships it: the names `dcb app show` prints without -N.
DSCP_NAMES = {0: "default", **{8 * n: f"CS{n}" for n in range(1, 8)}, 46: "EF",
              **{8 * c + 2 * d: f"AF{c}{d}" for c in range(1, 5) for d in range(1, 4)}}
MAX_MTU, MIN_MTU = 9500, 60  # bnxt_en: BNXT_MAX_MTU, ETH_ZLEN
SELECTORS = ("ethtype", "stream-port", "dgram-port", "port", "dscp", "pcp")


class ToolError(Exception):
    """Ends the program: ``message`` on stderr (when not empty) and exit ``status``."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class KernelError(Exception):
    """A dcbnl callback's negative errno."""

    def __init__(self, errno: int) -> None:
        super().__init__(errno)
        self.errno = errno


def prog() -> str:
    return os.path.basename(sys.argv[0])


def not_modelled(what: str) -> ToolError:
    return ToolError(f"{prog()} (test model): {what} is not modelled; this is not the real tool", 3)


def set_error(err: KernelError) -> ToolError:
    """dcb_set_attribute_attr_cb(): the u8 the kernel put in DCB_ATTR_IEEE, through strerror()."""
    return ToolError(f"Error when attempting to set attribute: {os.strerror(-err.errno & 0xFF)}")


# ---------------------------------------------------------------------------------------------------------
# The netdev: kernel dcbnl + a bnxt_en-like driver


class Netdev:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    @classmethod
    def fresh(cls, name: str, **options: Any) -> Netdev:
        fw_agent = bool(options.get("fw_lldp_agent"))
        return cls({
            "name": name, "dcbnl": options.get("dcbnl", True), "fw_lldp_agent": fw_agent,
            "dcbx": DCBX_IEEE | (0 if fw_agent else DCBX_HOST),  # bnxt_dcb_init()
            "max_tc": options.get("max_tc", 8), "max_lltc": options.get("max_lltc", 8),
            "max_dscp": options.get("max_dscp", 63), "apptrust_ops": bool(options.get("apptrust")),
            "apptrust": [], "ets": None, "pfc": None, "app": [], "hw_dscp": {},
            "writes": {"dcbx": 0, "ets": 0, "pfc": 0, "app": 0, "apptrust": 0},
        })

    @property
    def name(self) -> str:
        return str(self.data["name"])

    def host_ieee(self) -> None:
        if not (self.data["dcbx"] & DCBX_IEEE and self.data["dcbx"] & DCBX_HOST):
            raise KernelError(EINVAL)

    def count(self, what: str) -> None:
        self.data["writes"][what] += 1

    # --- dcbx
    def setdcbx(self, mode: int) -> int:
        """bnxt_dcbnl_setdcbx(): 1 = refused."""
        if self.data["dcbx"] & DCBX_LLD_MANAGED:
            return 1
        if mode & DCBX_HOST and (self.data["fw_lldp_agent"] or mode & DCBX_CEE or not mode & DCBX_IEEE):
            return 1
        if mode != self.data["dcbx"]:
            self.data["dcbx"] = mode
            self.count("dcbx")
        return 0

    # --- ets
    def getets(self) -> dict[str, list[int]]:
        ets: dict[str, list[int]] | None = self.data["ets"]
        return dict(ets) if ets else {"prio_tc": [0] * 8, "tsa": [0] * 8, "tc_bw": [0] * 8}

    def setets(self, ets: dict[str, list[int]]) -> None:
        """bnxt_dcbnl_ieee_setets() / bnxt_ets_validate() / bnxt_setup_mq_tc()."""
        self.host_ieee()
        if max(ets["prio_tc"]) >= self.data["max_tc"]:
            raise KernelError(EINVAL)
        if any(tsa not in (TSA["strict"], TSA["ets"]) for tsa in ets["tsa"]):
            raise KernelError(ENOTSUPP)
        ets_bw = [bw for bw, tsa in zip(ets["tc_bw"], ets["tsa"], strict=True) if tsa == TSA["ets"]]
        if sum(ets_bw) > 100:
            raise KernelError(EINVAL)  # "rejecting ETS config exceeding available bandwidth"
        if 0 in ets_bw and sum(ets_bw) == 100:
            # "rejecting ETS config starving a TC". Kernels before b74c2a2e ("bnxt_en: Fix DCB ETS validation",
            # 2025) check all 8 TCs, later ones only the TCs prio-tc uses; this models the older, stricter rule.
            raise KernelError(EINVAL)
        self.data["ets"] = {key: list(value) for key, value in ets.items()}
        self.count("ets")

    # --- pfc
    def getpfc(self) -> dict[str, int]:
        pfc: dict[str, int] | None = self.data["pfc"]
        return dict(pfc) if pfc else {"pfc_en": 0, "delay": 0, "macsec": 0}

    def setpfc(self, pfc: dict[str, int]) -> None:
        """bnxt_dcbnl_ieee_setpfc() / bnxt_hwrm_queue_pfc_cfg(): needs ETS; lossless TCs <= pfc-cap."""
        self.host_ieee()
        ets = self.data["ets"]
        if ets is None:
            raise KernelError(EINVAL)
        lossless_tcs = {ets["prio_tc"][prio] for prio in range(8) if pfc["pfc_en"] >> prio & 1}
        if len(lossless_tcs) > self.data["max_lltc"]:
            raise KernelError(EINVAL)
        self.data["pfc"] = dict(pfc)
        self.count("pfc")

    # --- app (DSCP selector)
    def app(self) -> list[tuple[int, int]]:
        return [(int(dscp), int(prio)) for dscp, prio in self.data["app"]]

    def dscp_checks(self, dscp: int) -> None:
        """bnxt_dcbnl_ieee_dscp_app_prep()."""
        self.host_ieee()
        if not self.data["max_dscp"]:
            raise KernelError(ENOTSUPP)
        if dscp > self.data["max_dscp"]:
            raise KernelError(EINVAL)

    def setapp(self, dscp: int, prio: int) -> None:
        self.dscp_checks(dscp)
        if (dscp, prio) in self.app():  # dcb_ieee_setapp(): only an exact duplicate is refused
            raise KernelError(EEXIST)
        self.data["app"].append([dscp, prio])
        self.data["hw_dscp"][str(dscp)] = prio  # bnxt_hwrm_queue_dscp2pri_cfg(add): mask 0x3f
        self.count("app")

    def delapp(self, dscp: int, prio: int) -> None:
        self.dscp_checks(dscp)
        if (dscp, prio) not in self.app():  # dcb_ieee_delapp()
            raise KernelError(ENOENT)
        self.data["app"].remove([dscp, prio])
        self.data["hw_dscp"].pop(str(dscp), None)  # bnxt_hwrm_queue_dscp2pri_cfg(del): mask 0
        self.count("app")


class Store:
    def __init__(self, root: str) -> None:
        self.root = root

    @classmethod
    def from_env(cls) -> Store:
        root = os.environ.get("DCB_STUB_STATE")
        if not root:
            raise ToolError(f"{prog()} (test model): DCB_STUB_STATE is not set -- this is a behaviour model for "
                            "tests, not the real tool", 3)
        return cls(root)

    def netdev(self, name: str) -> Netdev:
        path = os.path.join(self.root, f"netdev-{name}.json")
        if not os.path.isfile(path):
            raise ToolError(f'Cannot find device "{name}"')
        dev = Netdev(json.loads(read_text(path)))
        if not dev.data["dcbnl"]:  # dcbnl_ieee_get(): no ops -> EOPNOTSUPP; what dcb 6.1 prints for it
            raise ToolError("Attribute read: Operation not supported")
        return dev

    def save(self, dev: Netdev) -> None:
        write_json(os.path.join(self.root, f"netdev-{dev.name}.json"), dev.data)

    def rdma(self, device: str) -> dict[str, Any] | None:
        path = os.path.join(self.root, f"rdma-{device}.json")
        data: dict[str, Any] | None = json.loads(read_text(path)) if os.path.isfile(path) else None
        return data


def read_text(path: str) -> str:
    with open(path, encoding="utf-8") as stream:
        return stream.read()


def write_json(path: str, data: Any) -> None:
    """Atomically: a temporary beside it (NAME.tmp for NAME.json), then renamed over it."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = os.path.splitext(path)[0] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as stream:
        stream.write(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------------------
# iproute2 dcb


def matches(word: str, keyword: str) -> bool:
    """iproute2 matches(): a non-empty prefix of the keyword."""
    return bool(word) and keyword.startswith(word)


def parse_int(text: str, high: int, what: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise ToolError(f"Invalid {what} {text}") from None
    if not 0 <= value <= high:
        raise ToolError(f"In {what} mapping, value is expected to be 0..{high}")
    return value


def take_mapping(args: list[str]) -> list[tuple[str, str]]:
    """parse_mapping(): KEY:VALUE words up to the next keyword."""
    pairs: list[tuple[str, str]] = []
    while args and ":" in args[0]:
        key, _, value = args.pop(0).partition(":")
        pairs.append((key, value))
    if not pairs:
        raise ToolError("Invalid mapping: expected KEY:VALUE")
    return pairs


def set_array(array: list[int], pairs: list[tuple[str, str]], value: Callable[[str], int]) -> None:
    """The array syntax of dcb(8): left to right, `all` first or anywhere, later entries override."""
    for key, text in pairs:
        parsed = value(text)
        for index in range(8) if key == "all" else [parse_int(key, 7, "KEY")]:
            array[index] = parsed


def print_array(name: str, values: list[str]) -> str:
    return f"{name} " + "".join(f"{index}:{value} " for index, value in enumerate(values))


def show(printed: dict[str, str], attrs: list[str], default: list[list[str]]) -> int:
    """The attributes asked for, one line each; without any, ``default`` (lines of attributes), as dcb prints."""
    lines: list[str] = []
    for word in attrs:
        attr = next((name for name in printed if matches(word, name)), None)
        if attr is None:
            raise ToolError(f'What is "{word}"?')
        lines.append(printed[attr])
    if not attrs:
        lines = ["".join(printed[name] for name in line) for line in default]
    print("\n".join(line for line in lines if line))
    return 0


def dcbx_cmd(store: Store, dev: Netdev, command: str, args: list[str]) -> int:
    if command == "show":
        print(" ".join(name for name, bit in DCBX_FLAGS if dev.data["dcbx"] & bit) + " ")
        return 0
    mode = 0
    for word in args:
        flag = next((bit for name, bit in DCBX_FLAGS if matches(word, name)), None)
        if flag is None:
            raise ToolError(f'What is "{word}"?')
        mode |= flag
    status = dev.setdcbx(mode)
    if status:  # dcbnl_setdcbx() returns the driver's u8 as is
        raise ToolError(f"Error when attempting to set attribute: {os.strerror(status)}")
    store.save(dev)
    return 0


def ets_cmd(store: Store, dev: Netdev, command: str, args: list[str]) -> int:
    ets = dev.getets()
    if command == "show":
        printed = {"willing": "willing off ", "ets-cap": f"ets-cap {dev.data['max_tc']} ", "cbs": "cbs off ",
                   "tc-bw": print_array("tc-bw", [str(v) for v in ets["tc_bw"]]),
                   "tc-tsa": print_array("tc-tsa", [TSA_NAME.get(v, "???") for v in ets["tsa"]]),
                   "prio-tc": print_array("prio-tc", [str(v) for v in ets["prio_tc"]])}
        return show(printed, args, [["willing", "ets-cap", "cbs"], ["tc-bw"], ["tc-tsa"], ["prio-tc"]])
    while args:
        word = args.pop(0)
        if matches(word, "willing"):
            args.pop(0)
        elif word in ("tc-tsa", "tc-bw", "prio-tc"):
            key, parse = {"tc-tsa": ("tsa", tsa_value), "tc-bw": ("tc_bw", lambda t: parse_int(t, 100, "BW")),
                          "prio-tc": ("prio_tc", lambda t: parse_int(t, 7, "TC"))}[word]
            set_array(ets[key], take_mapping(args), parse)
        else:
            raise not_modelled(f"dcb ets set {word}")
    validate_bw(ets)
    try:
        dev.setets(ets)
    except KernelError as err:
        raise set_error(err) from None
    store.save(dev)
    return 0


def tsa_value(text: str) -> int:
    if text not in TSA:
        raise ToolError(f'"{text}" is not a valid TSA')
    return TSA[text]


def validate_bw(ets: dict[str, list[int]]) -> None:
    """dcb_ets_validate_bw(): the sum is 100, or 0 when no TC is ETS."""
    total, has_ets = sum(ets["tc_bw"]), TSA["ets"] in ets["tsa"]
    if total != 100 and (has_ets or total):
        raise ToolError(f"Bandwidth percentages in tc-bw sum to {total}%, expected {100 if has_ets else 0}%")


def pfc_cmd(store: Store, dev: Netdev, command: str, args: list[str]) -> int:
    pfc = dev.getpfc()
    flags = [pfc["pfc_en"] >> prio & 1 for prio in range(8)]
    if command == "show":
        printed = {"pfc-cap": f"pfc-cap {dev.data['max_lltc']} ",
                   "macsec-bypass": f"macsec-bypass {'on' if pfc['macsec'] else 'off'} ",
                   "delay": f"delay {pfc['delay']} ",
                   "prio-pfc": print_array("prio-pfc", ["on" if flag else "off" for flag in flags])}
        return show(printed, args, [["pfc-cap", "macsec-bypass", "delay"], ["prio-pfc"]])
    while args:
        word = args.pop(0)
        if matches(word, "prio-pfc"):
            set_array(flags, take_mapping(args), on_off)
        elif matches(word, "delay"):
            pfc["delay"] = parse_int(args.pop(0), 0xFFFF, "delay")
        elif matches(word, "macsec-bypass"):
            pfc["macsec"] = on_off(args.pop(0))
        else:
            raise ToolError(f'What is "{word}"?')
    pfc["pfc_en"] = sum(flag << prio for prio, flag in enumerate(flags))
    try:
        dev.setpfc(pfc)
    except KernelError as err:
        raise set_error(err) from None
    store.save(dev)
    return 0


def on_off(text: str) -> int:
    if text not in ("on", "off"):
        raise ToolError(f'"{text}" is not a valid on/off value')
    return 1 if text == "on" else 0


def dscp_key(text: str) -> list[int]:
    if text == "all":
        return list(range(64))
    names = {name: dscp for dscp, name in DSCP_NAMES.items()}
    return [names[text]] if text in names else [parse_int(text, 63, "DSCP")]


def app_entries(args: list[str]) -> list[tuple[int, int]]:
    """dcb_cmd_app_parse_add_del(), DSCP selector: `all` pushes 64 entries; nothing is deduplicated."""
    if not args or not matches(args.pop(0), "dscp-prio"):
        raise not_modelled("any APP selector but dscp-prio")
    entries: list[tuple[int, int]] = []
    for key, value in take_mapping(args):
        prio = parse_int(value, 7, "PRIO")
        entries += [(dscp, prio) for dscp in dscp_key(key)]
    if args:
        raise not_modelled(f"dcb app {' '.join(args)}")
    return entries


def app_send(store: Store, dev: Netdev, entries: list[tuple[int, int]], add: bool) -> None:
    """One DCB_CMD_IEEE_SET/DEL: dcbnl_ieee_set()/del() stop at the first failing entry (earlier ones stay)."""
    try:
        for dscp, prio in entries:
            (dev.setapp if add else dev.delapp)(dscp, prio)
    except KernelError as err:
        store.save(dev)
        raise set_error(err) from None
    store.save(dev)


def app_replace(store: Store, dev: Netdev, args: list[str]) -> int:
    """dcb_cmd_app_replace(): add what is new, then delete the other priorities of the DSCPs named -- and exit 0
    whatever happened after the table was read."""
    orig, tab = dev.app(), app_entries(args)
    new = [entry for entry in tab if entry not in orig]
    try:
        if new:
            app_send(store, dev, new, add=True)
    except ToolError as err:
        print(f"{err.message}\nCould not add new APP entries", file=sys.stderr)
        return 0
    named = {dscp for dscp, _ in tab}
    obsolete = [entry for entry in orig if entry[0] in named and entry not in tab]
    try:
        if obsolete:
            app_send(store, dev, obsolete, add=False)
    except ToolError as err:
        print(f"{err.message}\nCould not remove replaced APP entries", file=sys.stderr)
    return 0


def app_cmd(store: Store, dev: Netdev, command: str, args: list[str], numeric: bool) -> int:
    if command == "show":
        if args and not matches(args[0], "dscp-prio"):
            raise not_modelled("any APP selector but dscp-prio")
        entries = "".join(f"{dscp if numeric else DSCP_NAMES.get(dscp, dscp)}:{prio} "
                          for dscp, prio in sorted(dev.app()))
        print(f"dscp-prio {entries}" if entries else "", end="\n" if entries else "")
        return 0
    if command == "flush":
        if args and not matches(args[0], "dscp-prio"):
            raise not_modelled("any APP selector but dscp-prio")
        if dev.app():
            app_send(store, dev, dev.app(), add=False)
        return 0
    if command == "replace":
        return app_replace(store, dev, args)
    app_send(store, dev, app_entries(args), add=command == "add")
    return 0


def apptrust_cmd(store: Store, dev: Netdev, command: str, args: list[str]) -> int:
    if command == "show":
        if not dev.data["apptrust_ops"]:  # dcbnl_ieee_fill() leaves DCB_ATTR_DCB_APP_TRUST_TABLE out
            raise ToolError("Attribute not found: Success")
        print("order: " + "".join(f"{selector} " for selector in dev.data["apptrust"]))
        return 0
    if args[:1] != ["order"] or any(word not in SELECTORS for word in args[1:]):
        raise ToolError("Invalid list of selectors")
    order = args[1:]
    if len(set(order)) != len(order):
        raise ToolError(f"Duplicate selector: {next(s for s in order if order.count(s) > 1)}")
    if not dev.data["apptrust_ops"]:  # dcbnl_ieee_set(): no dcbnl_setapptrust
        raise set_error(KernelError(EOPNOTSUPP))
    dev.data["apptrust"] = order
    dev.count("apptrust")
    store.save(dev)
    return 0


COMMANDS = {"app": ("show", "flush", "add", "del", "replace"), "apptrust": ("show", "set"),
            "dcbx": ("show", "set"), "ets": ("show", "set"), "pfc": ("show", "set")}


def dcb(argv: list[str]) -> int:
    args, numeric = list(argv), False
    while args and args[0].startswith("-"):
        option = args.pop(0)
        if option not in ("-N", "--Numeric"):
            raise not_modelled(f"dcb option {option}")
        numeric = True
    objects = ["app", "buffer", "dcbx", "ets", "maxrate", "pfc"]
    if os.environ.get("DCB_STUB_IPROUTE2", "6.1") != "6.1":
        objects.insert(1, "apptrust")  # iproute2 6.2
    obj = next((name for name in objects if args and matches(args[0], name)), None)
    if obj is None:
        raise ToolError(f'Object "{args[0] if args else ""}" is unknown')
    if obj not in COMMANDS:
        raise not_modelled(f"dcb {obj}")
    command = next((name for name in COMMANDS[obj] if len(args) > 1 and matches(args[1], name)), None)
    if command is None or len(args) < 4 or args[2] != "dev":
        raise not_modelled(f"dcb {' '.join(args)}")
    store = Store.from_env()
    dev, rest = store.netdev(args[3]), args[4:]
    if obj == "app":
        return app_cmd(store, dev, command, rest, numeric)
    handler = {"apptrust": apptrust_cmd, "dcbx": dcbx_cmd, "ets": ets_cmd, "pfc": pfc_cmd}[obj]
    return handler(store, dev, command, rest)


# ---------------------------------------------------------------------------------------------------------
# ip link set ... mtu, and configfs mkdir


def fake_root(variable: str) -> Path:
    """A fake tree the test made: never the real /sys (or configfs under it)."""
    from pathlib import Path

    Store.from_env()
    root = os.environ.get(variable, "")
    if not root or Path(root).resolve().is_relative_to("/sys"):
        raise ToolError(f"{prog()} (test model): {variable} must point at a fake tree, not the real one", 3)
    return Path(root)


def ip(argv: list[str]) -> int:
    rest = argv[2:] if argv[:2] == ["link", "set"] else []
    if rest[:1] == ["dev"]:
        rest = rest[1:]
    if len(rest) != 3 or rest[1] != "mtu":
        raise not_modelled("anything but `ip link set [dev] DEV mtu N`")
    ifname, _, value = rest
    mtu_file = fake_root("FABRICGEN_SYSFS") / "class" / "net" / ifname / "mtu"
    if not mtu_file.parent.is_dir():
        raise ToolError(f'Cannot find device "{ifname}"')
    if not value.isdigit():
        raise ToolError(f'Error: argument "{value}" is wrong: Invalid "mtu" value', 255)
    if not MIN_MTU <= int(value) <= MAX_MTU:
        raise ToolError(f"Error: mtu {'greater' if int(value) > MAX_MTU else 'less'} than device "
                        f"{'maximum' if int(value) > MAX_MTU else 'minimum'}.", 2)
    mtu_file.write_text(f"{int(value)}\n")
    return 0


def mkdir(argv: list[str]) -> int:
    """make_cma_dev(): rdma_cm/DEV for an RDMA device that exists, with ports/N/default_roce_{tos,mode}."""
    from pathlib import Path

    rdma_cm = fake_root("FABRICGEN_CONFIGFS") / "rdma_cm"
    if len(argv) != 1 or Path(argv[0]).parent != rdma_cm:
        raise not_modelled("anything but `mkdir $FABRICGEN_CONFIGFS/rdma_cm/DEV`")
    group = Path(argv[0])
    device = Store.from_env().rdma(group.name)
    if group.exists():
        raise ToolError(f"mkdir: cannot create directory '{group}': File exists")
    if device is None:
        raise ToolError(f"mkdir: cannot create directory '{group}': No such device")
    for port in device["ports"]:
        directory = group / "ports" / port
        directory.mkdir(parents=True)
        (directory / "default_roce_tos").write_text(f"{device['tos']}\n")
        (directory / "default_roce_mode").write_text(f"{device['mode']}\n")
    return 0


# ---------------------------------------------------------------------------------------------------------
# Test set-up


def dcb_model(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="dcb-model", description="set up the dcb behaviour models' state")
    commands = parser.add_subparsers(dest="command", required=True)
    netdev = commands.add_parser("netdev", help="a netdev as the driver initialises it")
    netdev.add_argument("name")
    netdev.add_argument("--max-tc", type=int, default=8, help="ets-cap (firmware's configurable queues)")
    netdev.add_argument("--max-lltc", type=int, default=8, help="pfc-cap (firmware's lossless queues)")
    netdev.add_argument("--no-dscp", action="store_true", help="firmware without DSCP classification")
    netdev.add_argument("--fw-lldp-agent", action="store_true", help="firmware LLDP/DCBX agent owns DCB")
    netdev.add_argument("--apptrust", action="store_true", help="a driver with dcbnl apptrust ops")
    netdev.add_argument("--no-dcbnl", action="store_true", help="a driver without dcbnl ops")
    rdma = commands.add_parser("rdma", help="an RDMA device with port 1 (rdma_cm configfs on mkdir)")
    rdma.add_argument("device")
    rdma.add_argument("--tos", type=int, default=0)
    rdma.add_argument("--mode", choices=["IB/RoCE v1", "RoCE v2"], default="RoCE v2")
    shown = commands.add_parser("show", help="a netdev's state as JSON")
    shown.add_argument("name")
    args = parser.parse_args(argv)
    store = Store.from_env()
    if args.command == "netdev":
        store.save(Netdev.fresh(args.name, max_tc=args.max_tc, max_lltc=args.max_lltc, fw_lldp_agent=args.fw_lldp_agent,
                                max_dscp=0 if args.no_dscp else 63, apptrust=args.apptrust, dcbnl=not args.no_dcbnl))
    elif args.command == "rdma":
        write_json(os.path.join(store.root, f"rdma-{args.device}.json"),
                   {"ports": ["1"], "tos": args.tos, "mode": args.mode})
    else:
        print(read_text(os.path.join(store.root, f"netdev-{args.name}.json")), end="")
    return 0


TOOLS: dict[str, Callable[[list[str]], int]] = {"dcb": dcb, "ip": ip, "mkdir": mkdir, "dcb-model": dcb_model}


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
    except IndexError:  # a keyword without its value
        print(f"{tool}: Command line is not complete. Try option \"help\"", file=sys.stderr)
        return 1
    except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
        return exc.code if isinstance(exc.code, int) else 1


def parent() -> str:
    """The name of the program that started this one: "timeout" when the script bounded the call."""
    try:
        return read_text(f"/proc/{os.getppid()}/comm").strip()
    except OSError:
        return ""


def main() -> int:
    tool, argv = prog(), sys.argv[1:]
    status = run(tool, argv)
    log = os.environ.get("DCB_STUB_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as stream:
            stream.write(json.dumps({"tool": tool, "argv": argv, "status": status, "parent": parent()}) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
