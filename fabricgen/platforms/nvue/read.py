"""Read NVUE configuration (fabricgen's ``nvue.yaml``/``nvue.commands``, or a switch's own) back into the model.

Input: ``nvue.yaml`` when present — any NVUE YAML: a patch, ``nv config show -o yaml`` or
``/etc/nvue.d/startup.yaml`` (a list of ``- header:``/``- set:``/``- unset:`` blocks, applied in order) — else
``nvue.commands`` (``nv set``/``nv unset`` lines; everything else, comments included, is skipped). Both become
one tree keyed by the NVUE path; id lists and ranges (``swp1-4``, ``swp2-5,10-25``, ``0-7``, ``4,5,7``) under
``interface``/``dscp``/``pcp``/``switch-priority``/``traffic-class`` expand to one key each.

Owned — what ``owned()`` projects and ``read()`` replaces with what the file says. Ports are read as the switch
runs them (each port's *effective* state), with the defaults NVIDIA documents for what a file leaves out:

* every non-management port: ``admin_up`` (``link state``, an object keyed by the state: ``state: {up: {}}``,
  ``nv set … link state up``; a configured port without it is up, a port the file does not mention reads as
  down — Cumulus does not bring up swp ports nobody configured, unverified), ``description``,
  ``speed_mbps`` (``link speed``; not set = ``auto``, None: "the switch advertises all supported speeds") and
  ``fec`` (``link fec`` ``rs``/``baser``/``off`` as rs/fc/none; not set, ``auto`` or ``driver-auto`` = None:
  "Auto FEC … is the current default on the NVIDIA Spectrum switch" — Switch-Port-Attributes page, CL 5.15),
  ``access_vlan`` (``bridge domain <d> access``) and ``tagged_vlans``: a member of a VLAN-aware bridge domain
  without ``access`` is a trunk carrying its own ``vlan`` set, else the domain's ("the bridge port inherits the
  bridge VIDs"), untagged on its ``untagged`` VLAN (else the domain's, else 1: "The Primary VLAN Identifier
  (PVID) of the bridge defaults to 1"; ``none``: "drop untagged frames", every VLAN tagged) — the tagged ones
  are the carried VLANs less the untagged one (VLAN-aware-Bridge-Mode page, CL 5.15);
* ``mode`` on ports resolve gives one (host, fabric, OOB access): ``switched`` when the port is in a bridge
  domain, else ``routed`` (a swp port outside a bridge is a layer 3 port);
* on data ports (role host/fabric): ``mtu`` (``link mtu``, default 9216: "ifupdown2 assigns 9216 as the default
  MTU", Switch-Port-Attributes page) and, on a device with QoS,
  ``pfc_priorities``/``lossless`` (the port's ``qos pfc profile``, else ``default-global``: its
  ``switch-priority`` set when ``tx`` and ``rx`` are both on, absent = on) and, on a port with PFC,
  ``cable_m`` (that profile's ``cable-length``, default 10 m), and ``qos``: the QoS in effect on the port where
  it differs from the switch's (None where it does not): the port's own ``qos mapping profile`` (trust, DSCP
  map), ``qos egress-scheduler profile`` (queues, weights, strictness) and ``qos congestion-control profile``
  (ECN), each else ``default-global`` (QoS page, "Port Groups": "Configurations with port groups override the
  global settings for the ingress ports in the port group. Ports not in a port group use the global settings";
  NVUE binds a named profile with ``nv set interface swp1 qos mapping profile customer1``), and on a lossless port
  its watchdog: armed by ``interface … qos pfc-watchdog`` (``state enable``, or the bare container), else none;
* ``qos`` (the switch's): ``trust`` (``qos mapping <profile> trust``: ``l3`` and ``both`` take an IP packet's
  DSCP — "PCP (802.1p) and DSCP … IP: Accept incoming DSCP IP header marking", QoS page —, ``l2`` the PCP,
  ``port`` nothing; not set reads as DSCP, as fabricgen always sets it), ``dscp_to_tc`` (all 64:
  ``qos mapping <profile> dscp``, over Cumulus's default DSCP 8n..8n+7 → switch priority n; empty when the
  trust is ``l2`` or ``port``), ``tc_to_queue`` (all 8: ``egress-queue-mapping``, over the default identity;
  NVUE has it only in ``default-global``, so never per port), the queues' index/scheduler/weight/ECN
  (``egress-scheduler`` traffic classes; ECN from ``congestion-control``, where ``default-global`` marks
  traffic class 0 at 150000-1500000 B unless told otherwise) and the PFC watchdog: detection =
  ``robustness`` × ``polling-interval`` (defaults 3 × 100 ms), action drop; present when most lossless data
  ports arm it (ties: present; each other port says so in its ``qos``), or — with no lossless port — when its
  timers are set;
* ``mgmt``: ``interface`` (the skeleton's if configured, else the first ``eth*``), ``vrf`` (``interface …
  vrf``; default ``mgmt``, where Cumulus puts eth0), ``address`` (``ipv4``/``ipv6``/``ip address``),
  ``gateway`` (the VRF's static default route, else the interface ``gateway``), ``mtu`` (default 1500,
  Linux's; unverified for eth0 under ifupdown2).

The switch's mapping, egress-scheduler and congestion-control profile is the one most data ports apply (a port
without a binding applies ``default-global``; ties: by name). Also set but not compared:
``qos.lossless_priorities`` (union of the ports' PFC priorities; an unbound PFC profile does nothing), each
queue's ``traffic_class`` (lowest switch priority mapped to it), ``class_name`` (the skeleton's on that index,
else ``queue<N>``) and ``lossless``, and ``qos.lossless_pool``: the lossless PGs' pool as a share of the buffer
(``qos traffic-pool <pool> memory-percent``) and their alpha (``qos advance-buffer-config default-global
ingress-lossless-buffer shared-alpha``), NVIDIA's defaults for what is not set (``_read_lossless_pool``), which
lint FG-ECN-002 places the PFC pause point with. ``advance-buffer-config`` pool sizes (``ingress-pool <id>
memory-percent``, which NVIDIA says "can override the base traffic-pool profiles") are not read.

Not recoverable, kept from the skeleton: ``watchdog.restoration_ms`` (NVUE restores after one polling interval
without pauses; a skeleton without a watchdog gets the polling interval), ``tc_to_pg`` and
``pfc_priority_to_queue`` (NVUE has no such maps), ``qos.rdma_*``/``cnp_*``, headroom (Cumulus computes it),
port roles, peers, lanes, media, ``mgmt.vlan``, hardware/role/name. A skeleton without QoS or management stays
without. A traffic class scheduled DWRR without ``bw-percent`` (DWRR 0: "no egress scheduling") is not a
queue the model can hold and is left out; an empty ``default-global`` scheduler reads as Cumulus's default
(DWRR 12 % on even, 13 % on odd traffic classes).

Brownfield: everything outside those paths is ignored, as are keys inside them fabricgen does not know;
``qos roce`` (modes lossless, lossless-single-ipool and lossy) reads as NVIDIA documents it: its maps, ETS, ECN
and (lossless) PFC under every setting the config leaves unset (see ``_with_qos_roce``); ``lossy-multi-tc`` is
not interpreted, so a switch running it reads as its explicit settings.
Unparseable YAML, or a recognised key with a value the model cannot take (``link mtu jumbo``, ``dscp 70``),
raises ``ConfigReadError(file, line, message)``. So does ``link: {state: up}``, the state as a value: NVUE's
object model has no such leaf and ``nv config patch`` refuses it (fabricgen wrote it so before its nvue.yaml was
checked against NVIDIA's OpenAPI model); render again.
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from ipaddress import ip_address, ip_interface
from typing import Any, Literal, NamedTuple, cast

import yaml

try:
    import ryml  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - rapidyaml is a dependency; without it libyaml reads every file
    ryml = None

from fabricgen.models.device import (
    AlphaRatio,
    DeviceModel,
    EcnThresholds,
    LosslessPoolModel,
    MgmtModel,
    PortModel,
    QosModel,
    QueueModel,
    WatchdogModel,
)
from fabricgen.platforms import ConfigReadError
from fabricgen.platforms.common.modelcopy import updated
from fabricgen.platforms.common.ownedviews import SharedViews
from fabricgen.platforms.nvue.capability import (
    CAPABILITY,
    COMMANDS,
    DEFAULT_LOSSY_POOL_PERCENT,
    LOSSLESS_ALPHA,
    MAX_MTU,
    RENDERED_POOL,
    ROCE_LOSSLESS_POOL_PERCENT,
    YAML_FILE,
)
from fabricgen.platforms.nvue.render import (
    DATA_ROLES,
    DEFAULT_CABLE_M,
    LINK_FEC,
    LINK_SPEEDS,
    PROFILE,
    natural_key,
    port_cable,
)
from fabricgen.runtime.jsondepth import depth_bound
from fabricgen.runtime.rapidyaml import emitted_json, parsed_in_arena

Path = tuple[str, ...]

# Cumulus defaults for what a file leaves out (QoS page, NVUE reference; eth0 MTU is Linux's).
DEFAULT_MGMT_MTU = 1500
DEFAULT_MGMT_VRF = "mgmt"
DEFAULT_ECN = EcnThresholds(min_bytes=150_000, max_bytes=1_500_000, probability_pct=100)  # default-global TC 0
DEFAULT_POLL_MS = 100
DEFAULT_ROBUSTNESS = 3
MIN_MTU = 552
DEFAULT_PVID = 1  # a VLAN-aware bridge's untagged VLAN when none is set (VLAN-aware-Bridge-Mode page)
MODE_ROLES = ("host", "fabric", "oob-access")  # the roles resolve gives a forwarding mode (resolve.ports.port_mode)
SPEEDS_MBPS = {word.lower(): mbps for mbps, word in LINK_SPEEDS.items()}
FEC_MODEL = {word: fec for fec, word in LINK_FEC.items()}
# `qos mapping <profile> trust` as the model says it (QoS page, classification table): `both` takes the DSCP of
# IP packets (RoCEv2 is IP), the PCP of the rest; `port` ignores markings and uses `port-default-sp`.
TRUST_MODEL: dict[str, Literal["dscp", "pcp", "none"]] = {"l3": "dscp", "both": "dscp", "l2": "pcp", "port": "none"}
# The per-port QoS bindings besides PFC (`interface <if> qos <feature> profile <name>`, else default-global).
BOUND_FEATURES = ("mapping", "egress-scheduler", "congestion-control")

LINK_STATE: Path = ("interface", "*", "link", "state")  # an object keyed by up or down: one at a time
# Words whose next word is an id that may be a list or range.
COLLECTIONS = frozenset({"interface", "dscp", "pcp", "switch-priority", "traffic-class"})
# Paths whose last word in a command is an id, not a value (`nv set qos pfc P switch-priority 3`).
ID_LEAVES: tuple[Path, ...] = (
    ("qos", "pfc", "*", "switch-priority"), ("qos", "traffic-pool", "*", "switch-priority"),
    ("interface", "*", "ipv4", "address"), ("interface", "*", "ipv6", "address"), ("interface", "*", "ip", "address"),
    ("interface", "*", "ipv4", "gateway"), ("interface", "*", "ipv6", "gateway"), ("interface", "*", "ip", "gateway"),
    ("vrf", "*", "router", "static", "*", "via"), ("bridge", "domain", "*", "vlan"), LINK_STATE,
    ("interface", "*", "bridge", "domain"), ("interface", "*", "bridge", "domain", "*", "vlan"),
)
_RANGE = re.compile(r"(.*?)(\d+)-(?:\1)?(\d+)")
_MISSING = object()
_DIGITS = re.compile(r"\d+")  # compiled once: re.fullmatch(text) looks its pattern up in re's cache per call
_PREFIX = re.compile(r"\D*")
# Container words that may end a command without a value (`nv set interface swp1 qos pfc-watchdog`).
PRESENCE_WORDS = frozenset({"pfc-watchdog", "roce"})
_ON = frozenset({"on", "enable", "enabled", "yes", "true"})
_OFF = frozenset({"off", "disable", "disabled", "no", "false"})


# --- owned ----------------------------------------------------------------------------------------------

def owned(device: DeviceModel) -> dict[str, Any]:
    """The fields nvue.yaml expresses, as plain data (see the module docstring). Read-only: the views of ports that
    are the same objects as in the last device projected are that projection's (platforms.common.ownedviews)."""
    with_qos = device.qos is not None
    projection = _VIEWS.begin()
    return {
        "ports": {p.name: projection.port(p, with_qos, _owned_port) for p in device.ports if p.role != "mgmt"},
        "qos": _VIEWS.same_qos(_owned_qos(device.qos)) if device.qos is not None else None,
        "mgmt": _owned_mgmt(device.mgmt) if device.mgmt is not None else None,
    }


_VIEWS = SharedViews()


def _owned_port(port: PortModel, with_qos: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"admin_up": port.admin_up, "description": port.description or None,
                             "speed_mbps": port.speed_mbps, "fec": port.fec, "access_vlan": port.access_vlan,
                             "tagged_vlans": port.tagged_vlans or None}
    if port.role in MODE_ROLES:
        entry["mode"] = port.mode
    if port.role in DATA_ROLES:
        entry["mtu"] = port.mtu
        if with_qos:
            entry |= {"pfc_priorities": sorted(port.pfc_priorities), "lossless": port.lossless,
                      "qos": None if port.qos is None else _owned_qos(port.qos)}
            if port.pfc_priorities:
                entry["cable_m"] = port_cable(port)
    return entry


def _owned_qos(qos: QosModel) -> dict[str, Any]:
    watchdog = qos.watchdog
    return {
        "trust": qos.trust,
        # What the switch does: DSCPs and switch priorities the model leaves out keep Cumulus's defaults.
        "dscp_to_tc": {dscp: qos.dscp_to_tc.get(dscp, dscp >> 3) for dscp in range(64)},
        "tc_to_queue": {sp: qos.tc_to_queue.get(sp, sp) for sp in range(8)},
        "queues": [{"index": q.index, "scheduler": q.scheduler, "weight": q.weight if q.scheduler == "dwrr" else None,
                    "ecn": None if q.ecn is None else q.ecn.model_dump()}
                   for q in sorted(qos.queues, key=lambda q: q.index)],
        "watchdog": None if watchdog is None else {"detection_ms": watchdog.detection_ms,
                                                   "poll_ms": watchdog.poll_ms, "action": watchdog.action},
    }


def _owned_mgmt(mgmt: MgmtModel) -> dict[str, Any]:
    return {"interface": mgmt.interface, "vrf": mgmt.vrf, "address": mgmt.address, "gateway": mgmt.gateway,
            "mtu": mgmt.mtu}


# --- the configuration as a tree of NVUE paths ----------------------------------------------------------

@dataclass
class _Tree:
    file: str
    root: dict[str, Any] = field(default_factory=dict)
    lines: dict[Path, int] = field(default_factory=dict)
    # What readers worked out once per read of this tree (a port's fields by its settings, QoS by bindings): a
    # switch's ports differ in little more than their descriptions (issue 26 item 7).
    memo: dict[Any, Any] = field(default_factory=dict)
    # Each port's QoS profiles and whether it arms the watchdog, by port: the switch's QoS asks them of every data
    # port, and each port's own QoS again (issue 26 item 7).
    bindings: dict[str, Any] = field(default_factory=dict)
    armed: dict[str, bool] = field(default_factory=dict)

    def put(self, path: Path, value: Any, line: int) -> None:
        node = self.root
        for depth, key in enumerate(path[:-1]):
            child = node.get(key)
            if not isinstance(child, dict):  # a later setting replaces a value with a container
                child = node[key] = {}
                self.lines.setdefault(path[:depth + 1], line)
            node = child
        if isinstance(value, dict):
            if not isinstance(node.get(path[-1]), dict):
                node[path[-1]] = {}
        else:
            node[path[-1]] = value
        self.lines[path] = line

    def delete(self, path: Path) -> None:
        node: Any = self.root
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(path[-1], None)

    def get(self, path: Path) -> Any:
        node: Any = self.root
        for key in path:  # asked about 1,400 times per switch: one dict look-up per key, not two
            if node.__class__ is not dict and not isinstance(node, dict):
                return None
            node = node.get(key, _MISSING)
            if node is _MISSING:
                return None
        return node

    def node(self, path: Path) -> dict[str, Any]:
        found = self.get(path)
        return found if isinstance(found, dict) else {}

    def line(self, path: Path) -> int:
        for depth in range(len(path), 0, -1):
            if path[:depth] in self.lines:
                return self.lines[path[:depth]]
        return 0

    def error(self, path: Path, message: str) -> ConfigReadError:
        return ConfigReadError(self.file, self.line(path), f"{' '.join(path)}: {message}")

    def number(self, path: Path, low: int, high: int) -> int | None:
        value = self.get(path)
        if value is None or value == {}:
            return None
        if isinstance(value, bool) or not _DIGITS.fullmatch(str(value)) or not low <= int(value) <= high:
            raise self.error(path, f"expected a number {low}-{high}, found {value!r}")
        return int(value)

    def text(self, path: Path) -> str | None:
        value = self.get(path)
        return None if value is None or isinstance(value, dict) else str(value)

    def flag(self, path: Path) -> bool | None:
        """on/enable/enabled (and YAML 1.1 booleans) → True, off/disable/disabled → False, absent → None."""
        value = self.get(path)
        if value is None or value == {}:
            return None
        word = str(value).lower()
        if word in _ON or word in _OFF:
            return word in _ON
        raise self.error(path, f"expected enabled or disabled, found {value!r}")

    def ids(self, path: Path) -> list[str]:
        """A set of ids: map keys (``{'3': {}}``), or a scalar list in a brownfield file (``3,5``)."""
        value = self.get(path)
        if isinstance(value, dict):
            return list(value)
        if value is None:
            return []
        return expand_ids(str(value))


def expand_ids(text: str) -> list[str]:
    """``swp1-3,swp7`` → swp1, swp2, swp3, swp7; ``swp2-5,10-25`` reuses the prefix; ``0-7`` → 0..7."""
    out: list[str] = []
    prefix = ""
    for part in text.split(","):
        if part[:1].isdigit() and prefix:
            part = prefix + part
        prefix = _PREFIX.match(part).group(0)  # type: ignore[union-attr]  # \D* always matches
        match = _RANGE.fullmatch(part)
        if match and int(match.group(2)) <= int(match.group(3)) <= int(match.group(2)) + 4096:
            out += [f"{match.group(1)}{n}" for n in range(int(match.group(2)), int(match.group(3)) + 1)]
        elif part:
            out.append(part)
    return out


# --- YAML -----------------------------------------------------------------------------------------------

# libyaml's parser when PyYAML has it (the same nodes and marks, ~10x faster on a 64-port switch's YAML).
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _from_yaml(text: str) -> _Tree:
    tree = _Tree(YAML_FILE)
    try:
        document = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigReadError(YAML_FILE, mark.line + 1 if mark else 0, f"not YAML: {exc}") from exc
    if document is None:
        return tree
    blocks = document.value if isinstance(document, yaml.SequenceNode) else [document]
    for block in blocks:
        if not isinstance(block, yaml.MappingNode):
            raise ConfigReadError(YAML_FILE, block.start_mark.line + 1, "expected `- set:` / `- unset:` blocks")
        for key, value in block.value:
            if key.value == "set" and isinstance(value, yaml.MappingNode):
                _merge(tree, value, ())
            elif key.value == "unset":
                _unset(tree, value, ())
    return tree


# --- YAML, the fast way ---------------------------------------------------------------------------------
# libyaml's compose builds a Python node with two marks per scalar: most of reading a switch (issue 26 item 7).
# rapidyaml parses in C++ and its tree is walked with its native functions, the same settings put in the same
# order, without lines: lines only serve error messages, so a read that fails is read again through compose,
# which names the line. Only text both parsers read alike takes this road: printable ASCII (comment lines
# aside) without escapes, tags, anchors, aliases, block scalars, directives, explicit keys or flow indicators
# touching a colon (what PyYAML and rapidyaml have been seen to read differently); anything else goes to compose.
# tests/test_lint_configs.py checks both roads make the same tree of every NVUE file in the corpus.
_CONTROL = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]")  # controls (tab and lone CR included): libyaml's call
_OUTSIDE_COMMENTS = re.compile(rb"[\\&*!|>%@`?\"]")  # fine in a comment, not in a setting: compose decides
_COMMENT_LINE = re.compile(rb"[ ]*#")
# Every byte but those of _CONTROL's class, and of _OUTSIDE_COMMENTS' (translate deletes them, keeping the class).
_NOT_CONTROL = bytes(b for b in range(256) if not (b <= 0x09 or 0x0b <= b <= 0x1f or b == 0x7f))
_NOT_OUTSIDE_COMMENTS = bytes(b for b in range(256) if bytes([b]) not in b"\\&*!|>%@`?\"")
_FLOW_TO_NUL = bytes.maketrans(b"[]{},", b"\0" * 5)
_OPENERS_TO_NUL = bytes.maketrans(b"[{,", b"\0" * 3)
# A plain scalar libyaml would not take as one (an indicator first, a comment or a mapping inside): compose.
_PLAIN_INDICATORS = frozenset("[]{},#&*!|>'\"%@`")
_RESOLVER = yaml.resolver.Resolver()  # PyYAML's implicit tags, the ones compose gives plain scalars
# Plain scalar text -> what _scalar makes of it (None: null, a new {} each time); a fabric repeats its texts.
_PLAIN: dict[str, Any] = {}
_PLAIN_SIZE = 65536
FAST_MAX_DEPTH = 64  # lint --configs refuses deeper files first; anything deeper than a config goes to compose


class _NotFast(Exception):
    """The text needs libyaml's compose."""


def _fast_tree(text: str) -> _Tree | None:
    """The tree ``_from_yaml`` makes of ``text``, without lines; None when the text is not for the fast road."""
    raw = text.encode()
    if ryml is None or not _fast_text(raw):
        return None
    try:  # the tree lint --configs' depth check made of this text, when it did
        parsed = parsed_in_arena(raw)
    except Exception:  # rapidyaml's own error types; compose reports the problem with its line
        return None
    try:
        if not _quoted_value(raw):
            json_tree = _json_tree(parsed)
            if json_tree is not None:
                return json_tree
        return _FastWalk(parsed).tree()
    except _NotFast:
        return None


# A quoted scalar where a value may stand (after `: `, `- ` or a flow indicator): the JSON road below cannot tell
# it from a plain one, so such a file is walked node by node. Quoted keys (`'3':`, as fabricgen writes DSCPs)
# are fine: keys are taken as written, untyped, on both roads.
_QUOTED_VALUE = re.compile(rb"[:\-\[{,][ ]*'")
# The same, in the text read backwards: a quote first, which the regex engine finds at memchr speed instead of
# testing the class at every byte.
_QUOTED_VALUE_BACKWARDS = re.compile(rb"'[ ]*[:\-\[{,]")


def _quoted_value(raw: bytes) -> bool:
    """Whether _QUOTED_VALUE occurs in ``raw``."""
    return b"'" in raw and _QUOTED_VALUE_BACKWARDS.search(raw[::-1]) is not None


def _json_tree(parsed: Any) -> _Tree | None:
    """The tree, from rapidyaml's tree written as JSON (C++) and read by json (C): a tenth of the node walk.
    Every value is plain here (see _QUOTED_VALUE), so each is typed from its text as compose types it; numbers
    are kept as their text for that. None: rapidyaml could not write it (the walk decides)."""
    kind = ryml.ryml._ryml.Tree_type(parsed, parsed.root_id())
    if kind & ryml.DOC or (kind & ryml.STREAM) == ryml.STREAM or not kind & (ryml.MAP | ryml.SEQ):
        return None
    try:
        text = emitted_json(parsed)
    except Exception:  # rapidyaml's own error types (its emitter's depth bound)
        return None
    one_block = _one_set_block(text)
    return one_block if one_block is not None else _merged_tree(text)


def _merged_tree(text: str) -> _Tree | None:
    """_json_tree's tree of any document: json reads it, then each block is merged into the tree (or unset)."""
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys, parse_int=str, parse_float=str,
                          parse_constant=_refuse_constant)
    except (_NotFast, RecursionError, ValueError):
        return None
    except Exception:  # anything else json raises: the walk decides, as before
        return None
    result = _Tree(YAML_FILE)
    for block in data if isinstance(data, list) else [data]:
        if not isinstance(block, dict):
            raise _NotFast  # compose reports "expected `- set:` / `- unset:` blocks" at its line
        for word, value in block.items():
            _plain(word)
            if word == "set" and isinstance(value, dict):
                _json_merge(value, 0, None, result.root)
            elif word == "unset":
                _json_unset(result, value, ())
    return result


def _one_set_block(text: str) -> _Tree | None:
    """_json_tree's tree of a document that is one ``set`` block (what fabricgen writes), built as json reads it:
    each object's keys checked and values typed as it closes (_typed_object), so that the merge of the block into
    an empty tree, a copy then, is not needed — it walked every key again in Python (issue 26 item 7). None for
    anything else, and whenever the merge could read the text otherwise (a key it expands, nesting its depth limit
    could meet, a key or value it refuses): the merge road then reads it from the start, as before."""
    if depth_bound(text, FAST_MAX_DEPTH) > FAST_MAX_DEPTH:  # the merge refuses containers a few levels deeper
        return None
    try:
        data = json.loads(text, object_pairs_hook=_typed_object, parse_int=str, parse_float=str,
                          parse_constant=_refuse_constant)
    except (_NotFast, RecursionError, ValueError):
        return None
    block = data[0] if data.__class__ is list and len(data) == 1 else data
    if block.__class__ is not dict or len(block) != 1 or "set" not in block or block["set"].__class__ is not dict:
        return None  # a `set` of null is typed {} here, as the merge leaves an empty tree for it
    return _Tree(YAML_FILE, block["set"])


def _typed_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as _json_merge copies it into an empty tree: keys as _plain takes them, each scalar typed as
    _json_scalar types it, objects as they are (this hook made them). Raises _NotFast where the merge would refuse,
    and where it would expand a key (a collection's ``swp1-3``), which a copy cannot do."""
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _NotFast  # a repeated key: compose merges both, JSON keeps one
    for key, value in pairs:
        if key not in _PLAIN:
            _plain(key)
        kind = value.__class__
        if kind is str:
            typed = _PLAIN[value] if value in _PLAIN else _plain(value)
            if typed is not value:
                found[key] = {} if typed is None else typed
        elif kind is dict:
            if key in COLLECTIONS and not _single_ids(value):
                raise _NotFast
        elif value is not True and value is not False:
            found[key] = _json_scalar(value, 0)
    return found


def _single_ids(node: dict[str, Any]) -> bool:
    """Whether every key of a collection's object is one id, which expand_ids leaves as it is."""
    for key in node:
        single = _SINGLE_IDS.get(key)
        if single is None:
            single = expand_ids(key) == [key]
            if len(_SINGLE_IDS) >= _PLAIN_SIZE:
                _SINGLE_IDS.clear()
            _SINGLE_IDS[key] = single
        if not single:
            return False
    return True


_SINGLE_IDS: dict[str, bool] = {}  # _single_ids' answer per key: a fabric's switches name the same ports


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _NotFast  # a repeated key: compose merges both, JSON keeps one
    return found


def _refuse_constant(word: str) -> Any:
    raise _NotFast  # NaN/Infinity: not what rapidyaml writes for a plain scalar compose would type alike


def _json_merge(node: dict[str, Any], depth: int, parent: str | None, target: dict[str, Any]) -> None:
    if depth >= FAST_MAX_DEPTH:
        raise _NotFast
    expand = parent in COLLECTIONS
    for text, value in node.items():
        if text not in _PLAIN:
            _plain(text)
        for key in expand_ids(text) if expand else (text,):
            if value.__class__ is dict:
                sub = target.get(key)
                if sub.__class__ is not dict:
                    sub = target[key] = {}
                _json_merge(value, depth + 1, key, sub)
            else:
                target[key] = _json_scalar(value, depth)


def _json_scalar(value: Any, depth: int) -> Any:
    """_scalar's value of a plain scalar (its text), a null, an empty mapping or a sequence, as JSON read them."""
    if value.__class__ is str:
        typed = _PLAIN[value] if value in _PLAIN else _plain(value)
        return {} if typed is None else typed
    if value is None or value.__class__ is dict:
        return {}
    if value is True or value is False:
        return value  # plain true/false, written bare
    if value.__class__ is list:
        if depth >= FAST_MAX_DEPTH:
            raise _NotFast
        return ",".join(str(_json_scalar(item, depth + 1)) for item in value)
    raise _NotFast


def _json_unset(tree: _Tree, node: Any, path: Path) -> None:
    if len(path) >= FAST_MAX_DEPTH:
        raise _NotFast
    if not isinstance(node, dict) or not node:
        if path:
            tree.delete(path)
        return
    expand = bool(path) and path[-1] in COLLECTIONS
    for text, value in node.items():
        _plain(text)
        for key in expand_ids(text) if expand else (text,):
            _json_unset(tree, value, (*path, key))


def _fast_text(raw: bytes) -> bool:
    """Whether ``raw`` is text both parsers read alike (see above), each test a scan at C speed."""
    # A regex's character class tests each byte in a loop (a quarter of a millisecond per switch's file);
    # translate keeps just the bytes of the class, at memcpy speed: none kept, no match (issue 26 item 7).
    if not raw.isascii() or raw.translate(None, _NOT_CONTROL) or raw.startswith((b"---", b"...")) \
            or b"\n---" in raw or b"\n..." in raw:
        return False
    flow = raw.translate(_FLOW_TO_NUL)
    if b":\0" in flow or b"\0:" in flow or b"\0:" in raw.translate(_OPENERS_TO_NUL, b" \n"):
        return False  # a flow indicator touching a colon, or a flow entry that starts with one
    # Each of _OUTSIDE_COMMENTS' characters the text has, found where it is by bytes.find (memchr), not by the
    # class tested at every byte: fine only on a comment line.
    for char in set(raw.translate(None, _NOT_OUTSIDE_COMMENTS)):
        at = raw.find(char)
        while at >= 0:
            if not _COMMENT_LINE.match(raw, raw.rfind(b"\n", 0, at) + 1):
                return False
            at = raw.find(char, at + 1)
    return True


def _plain(text: str) -> Any:
    """_scalar's value of the plain scalar ``text`` (None for null); _NotFast for text libyaml may read otherwise."""
    if text in _PLAIN:
        return _PLAIN[text]
    if not text or text[:1] in _PLAIN_INDICATORS or (text[:1] in ("-", ":") and text[1:2] in ("", " ")) \
            or " #" in text or ": " in text or text.endswith(":") or "\n" in text or text != text.strip(" "):
        raise _NotFast
    tag = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    value: Any = text
    if tag == "tag:yaml.org,2002:null":
        value = None
    elif tag == "tag:yaml.org,2002:bool":
        value = text.lower() in ("true", "yes", "on", "y")
    elif tag == "tag:yaml.org,2002:int" and _YAML_INT.fullmatch(text.replace("_", "")):
        value = int(text.replace("_", ""))
    if len(_PLAIN) >= _PLAIN_SIZE:
        _PLAIN.clear()
    _PLAIN[text] = value
    return value


class _FastWalk:
    """rapidyaml's tree put into a _Tree as _from_yaml/_merge/_unset put libyaml's nodes."""

    def __init__(self, parsed: Any) -> None:
        native = ryml.ryml._ryml
        self.parsed = parsed
        self.type, self.key, self.val = native.Tree_type, native.Tree_key, native.Tree_val
        self.first_child, self.next_sibling = native.Tree_first_child, native.Tree_next_sibling
        self.none, self.map, self.seq = ryml.NONE, ryml.MAP, ryml.SEQ
        self.key_quoted, self.val_quoted = ryml.KEYQUO, ryml.VALQUO
        self.refused = (ryml.KEYANCH | ryml.VALANCH | ryml.KEYREF | ryml.VALREF | ryml.KEYTAG | ryml.VALTAG
                        | ryml.KEY_LITERAL | ryml.KEY_FOLDED | ryml.VAL_LITERAL | ryml.VAL_FOLDED)
        self.result = _Tree(YAML_FILE)

    def children(self, node: int) -> list[tuple[int, int]]:
        parsed, kind_of, following = self.parsed, self.type, self.next_sibling
        found = []
        child = self.first_child(parsed, node)
        while child != self.none:
            kind = kind_of(parsed, child)
            if kind & self.refused:
                raise _NotFast
            found.append((child, kind))
            child = following(parsed, child)
        return found

    def tree(self) -> _Tree:
        root = self.parsed.root_id()
        kind = self.type(self.parsed, root)
        if kind & (ryml.DOC | self.refused) or (kind & ryml.STREAM) == ryml.STREAM:
            raise _NotFast
        if kind & self.seq:
            blocks = self.children(root)
        elif kind & self.map:
            blocks = [(root, kind)]
        else:
            raise _NotFast  # an empty document, or a lone scalar: compose says what it is
        for block, block_kind in blocks:
            if not block_kind & self.map:
                raise _NotFast  # compose reports "expected `- set:` / `- unset:` blocks" at its line
            for child, kind in self.children(block):
                word = self.key_text(child, kind)
                if word == "set" and kind & self.map:
                    self.merge(child, 0, None, self.result.root)
                elif word == "unset":
                    self.unset(child, kind, ())
        return self.result

    def key_text(self, node: int, kind: int) -> str:
        text = str(self.key(self.parsed, node), "ascii")
        if not kind & self.key_quoted and text not in _PLAIN:
            _plain(text)
        return text

    def merge(self, node: int, depth: int, parent: str | None, target: dict[str, Any]) -> None:
        """_merge's work on the mapping ``node`` (``depth`` keys down, under the key ``parent``)."""
        if depth >= FAST_MAX_DEPTH:
            raise _NotFast
        parsed, kind_of, key_of, following = self.parsed, self.type, self.key, self.next_sibling
        refused, mapping, key_quoted, none = self.refused, self.map, self.key_quoted, self.none
        expand = parent in COLLECTIONS
        child = self.first_child(parsed, node)
        while child != none:
            kind = kind_of(parsed, child)
            if kind & refused:
                raise _NotFast
            text = str(key_of(parsed, child), "ascii")
            if not kind & key_quoted and text not in _PLAIN:
                _plain(text)
            for key in expand_ids(text) if expand else (text,):
                if kind & mapping:
                    sub = target.get(key)
                    if sub.__class__ is not dict:
                        sub = target[key] = {}
                    self.merge(child, depth + 1, key, sub)
                else:  # a value per key: a null's {} is a container of its own
                    target[key] = self.scalar(child, kind, depth)
            child = following(parsed, child)

    def unset(self, node: int, kind: int, path: Path) -> None:
        if len(path) >= FAST_MAX_DEPTH:
            raise _NotFast
        if not kind & self.map or self.first_child(self.parsed, node) == self.none:  # a leaf: unset it all
            if path:
                self.result.delete(path)
            return
        expand = bool(path) and path[-1] in COLLECTIONS
        for child, child_kind in self.children(node):
            text = self.key_text(child, child_kind)
            for key in expand_ids(text) if expand else (text,):
                self.unset(child, child_kind, (*path, key))

    def scalar(self, node: int, kind: int, depth: int) -> Any:
        """_scalar's value for the node."""
        if kind & self.seq:
            if depth >= FAST_MAX_DEPTH:
                raise _NotFast
            return ",".join(str(self.scalar(child, child_kind, depth + 1)) for child, child_kind in self.children(node))
        if kind & self.map:
            return {}
        value = self.val(self.parsed, node)
        if value is None:
            return {}  # `key:` with nothing after it: null
        text = str(value, "ascii")
        if kind & self.val_quoted:
            return text
        typed = _PLAIN[text] if text in _PLAIN else _plain(text)
        return {} if typed is None else typed


def _keys(parent: Path, key: yaml.Node) -> list[str]:
    if not isinstance(key, yaml.ScalarNode):
        raise ConfigReadError(YAML_FILE, key.start_mark.line + 1, "expected a plain key")
    return expand_ids(key.value) if parent and parent[-1] in COLLECTIONS else [key.value]


def _merge(tree: _Tree, node: yaml.MappingNode, path: Path, target: dict[str, Any] | None = None) -> None:
    """``node``'s settings put under ``path`` as ``tree.put`` puts them; ``target`` is the dict at ``path`` (the
    root when None), so each setting is put without walking down from the root again."""
    if target is None:
        target = tree.root
    for key_node, value_node in node.value:
        line = key_node.start_mark.line + 1
        for key in _keys(path, key_node):
            sub = (*path, key)
            tree.lines[sub] = line
            if isinstance(value_node, yaml.MappingNode):
                child = target.get(key)
                if not isinstance(child, dict):
                    child = target[key] = {}
                _merge(tree, value_node, sub, child)
            else:
                target[key] = _scalar(value_node)


def _unset(tree: _Tree, node: yaml.Node, path: Path) -> None:
    if not isinstance(node, yaml.MappingNode) or not node.value:
        if path:
            tree.delete(path)
        return
    for key_node, value_node in node.value:
        for key in _keys(path, key_node):
            _unset(tree, value_node, (*path, key))


_YAML_INT = re.compile(r"[-+]?\d+")


def _scalar(node: yaml.Node) -> Any:
    """YAML 1.1 scalars as NVUE means them: ints, booleans (``on``), null as an empty container."""
    if isinstance(node, yaml.SequenceNode):
        return ",".join(str(_scalar(item)) for item in node.value)
    if not isinstance(node, yaml.ScalarNode):
        return {}
    if node.tag == "tag:yaml.org,2002:null":
        return {}
    if node.tag == "tag:yaml.org,2002:bool":
        return node.value.lower() in ("true", "yes", "on", "y")
    if node.tag == "tag:yaml.org,2002:int" and _YAML_INT.fullmatch(node.value.replace("_", "")):
        return int(node.value.replace("_", ""))
    return node.value


# --- nv set commands ------------------------------------------------------------------------------------

def _from_commands(text: str) -> _Tree:
    tree = _Tree(COMMANDS)
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip().startswith("nv "):
            continue
        try:
            words = shlex.split(raw, comments=True)
        except ValueError as exc:
            raise ConfigReadError(COMMANDS, number, f"cannot split the line: {exc}") from exc
        if words[:2] not in (["nv", "set"], ["nv", "unset"]) or len(words) < 3:
            continue
        args = words[2:]
        if words[1] == "unset":
            for path in _paths(args):
                tree.delete(path)
            continue
        id_leaf = (len(args) == 1 or args[-2] == "interface" or args[-1] in PRESENCE_WORDS
                   or _is_id_leaf(tuple(args[:-1])))
        value: Any = {} if id_leaf else _word_value(args[-1])
        for path in _paths(args if id_leaf else args[:-1]):
            if _is_pattern(LINK_STATE, path[:-1]):
                tree.delete(path[:-1])  # `link state down` after `link state up`: the later state, not both
            tree.put(path, value, number)
    return tree


def _is_id_leaf(path: Path) -> bool:
    return any(_is_pattern(pattern, path) for pattern in ID_LEAVES)


def _is_pattern(pattern: Path, path: Path) -> bool:
    """Whether ``path`` is ``pattern``, each ``*`` any one word."""
    return len(path) == len(pattern) and all(p in ("*", w) for p, w in zip(pattern, path, strict=True))


def _paths(words: list[str]) -> Iterator[Path]:
    """Each concrete path of a command: id lists after COLLECTIONS words expand."""
    choices = [expand_ids(word) if index and words[index - 1] in COLLECTIONS else [word]
               for index, word in enumerate(words)]
    yield from _product(choices)


def _product(choices: list[list[str]]) -> Iterator[Path]:
    if not choices:
        yield ()
        return
    for head in choices[0]:
        for rest in _product(choices[1:]):
            yield (head, *rest)


def _word_value(word: str) -> Any:
    return int(word) if _DIGITS.fullmatch(word) else word


def _parse(files: Mapping[str, str]) -> _Tree:
    if YAML_FILE in files:
        return _with_qos_roce(_from_yaml(files[YAML_FILE]))
    if COMMANDS in files:
        return _with_qos_roce(_from_commands(files[COMMANDS]))
    raise ConfigReadError(YAML_FILE, 0, "file missing")


# --- `nv set qos roce` ------------------------------------------------------------------------------------
# What the RoCE profile applies, per NVIDIA's Cumulus Linux user guide (Quality of Service > RDMA over Converged
# Ethernet - RoCE, "Default RoCE Configuration" table and the `nv show qos roce` examples, releases 5.x):
# trust both (DSCP for IP packets, over the default DSCP 8n..8n+7 -> switch priority n map), switch priority 3 ->
# traffic class 3 (RoCE), 6 -> 6 (CNP), every other -> 0; ETS TC 6 strict, TC 3 and TC 0 DWRR 50 % each; ECN on
# TC 3 from 150000 to 1500000 bytes; and in lossless mode (the default, also `lossless-single-ipool`) PFC on
# switch priority 3, rx and tx, with cable length 100 m. Explicit `nv set qos ...` settings override it ("Change
# RoCE Configuration" on that page), so the profile only fills what the config leaves unset.
ROCE_SP_TO_TC = {sp: sp if sp in (3, 6) else 0 for sp in range(8)}
ROCE_SCHEDULER: dict[str, dict[str, Any]] = {
    "0": {"mode": "dwrr", "bw-percent": 50}, "3": {"mode": "dwrr", "bw-percent": 50}, "6": {"mode": "strict"}}
ROCE_ECN = {"ecn": "enable", "min-threshold": 150000, "max-threshold": 1500000, "probability": 100}
ROCE_PFC: dict[Path, Any] = {("switch-priority", "3"): {}, ("rx",): "enable", ("tx",): "enable",
                             ("cable-length",): 100}
ROCE_LOSSLESS_MODES = frozenset({"lossless", "lossless-single-ipool"})
ROCE_MODES = ROCE_LOSSLESS_MODES | {"lossy"}  # `lossy-multi-tc` (packet trimming) is not interpreted


def _roce_mode(tree: _Tree) -> str | None:
    """The mode of an enabled ``qos roce`` that is read as NVIDIA documents it (ROCE_MODES); None without one.
    Off is ``enable off`` before 5.15 and ``state disabled`` in it (NVUE object model: "Turn the feature
    'enabled' or 'disabled'")."""
    roce = tree.get(("qos", "roce"))
    if not isinstance(roce, dict) or str(roce.get("enable", "on")) in ("off", "False", "false") \
            or str(roce.get("state", "enabled")) == "disabled":
        return None
    mode = str(roce.get("mode", "lossless"))
    return mode if mode in ROCE_MODES else None


def _with_qos_roce(tree: _Tree) -> _Tree:
    """``tree`` with what an enabled ``qos roce`` implies under every setting the config leaves unset."""
    mode = _roce_mode(tree)
    if mode is None:
        return tree
    line = tree.lines.get(("qos", "roce"), 1)
    _default(tree, ("qos", "mapping", PROFILE, "trust"), "both", line)
    for sp, tc in ROCE_SP_TO_TC.items():
        _default(tree, ("qos", "egress-queue-mapping", PROFILE, "switch-priority", str(sp), "traffic-class"), tc, line)
    if tree.get(("qos", "egress-scheduler", PROFILE, "traffic-class")) is None:
        for name, entry in ROCE_SCHEDULER.items():
            for key, value in entry.items():
                tree.put(("qos", "egress-scheduler", PROFILE, "traffic-class", name, key), value, line)
    for key, value in ROCE_ECN.items():
        _default(tree, ("qos", "congestion-control", PROFILE, "traffic-class", "3", key), value, line)
    if mode in ROCE_LOSSLESS_MODES and tree.get(("qos", "pfc", PROFILE)) is None:
        for keys, value in ROCE_PFC.items():
            tree.put(("qos", "pfc", PROFILE, *keys), value, line)
    return tree


def _default(tree: _Tree, path: Path, value: Any, line: int) -> None:
    if tree.get(path) is None:
        tree.put(path, value, line)


# --- ports ----------------------------------------------------------------------------------------------

def _read_ports(tree: _Tree, skeleton: DeviceModel) -> list[PortModel]:
    interfaces = tree.node(("interface",))
    with_qos = skeleton.qos is not None
    ports = [port if port.role == "mgmt" else _read_port(tree, port, port.name in interfaces, with_qos)
             for port in skeleton.ports]
    known = {p.name for p in skeleton.ports}
    # Only the names to add are sorted: not a natural_key for each of the switch's own ports (issue 26 item 7).
    for name in sorted((n for n in interfaces if n not in known and n.startswith("swp")), key=natural_key):
        blank = PortModel(name=name, role="unused", admin_up=False, mtu=MAX_MTU)
        ports.append(_read_port(tree, blank, True, with_qos))
    return ports


def _read_port(tree: _Tree, port: PortModel, present: bool, with_qos: bool) -> PortModel:
    """The port as its settings say. Ports whose settings (description aside) are alike read alike: each distinct
    set is read once per tree (a read that fails is not kept, so it fails again at its own path)."""
    settings = tree.node(("interface", port.name))
    key = ("port", repr({k: v for k, v in settings.items() if k != "description"}), port.role, present)
    fields = tree.memo.get(key)
    if fields is None:
        fields = tree.memo[key] = _port_fields(tree, port, present, with_qos)
    return updated(port, {**fields, "description": tree.text(("interface", port.name, "description")) or None})


def _port_fields(tree: _Tree, port: PortModel, present: bool, with_qos: bool) -> dict[str, Any]:
    path = ("interface", port.name)
    update: dict[str, Any] = {
        "admin_up": present and _link_state(tree, (*path, "link", "state")) != "down",
        "speed_mbps": _link_speed(tree, (*path, "link", "speed")),
        "fec": _link_fec(tree, (*path, "link", "fec")),
        "mtu": tree.number((*path, "link", "mtu"), MIN_MTU, MAX_MTU) or MAX_MTU,
        "access_vlan": _access_vlan(tree, path),
        "tagged_vlans": _tagged_vlans(tree, path),
    }
    if port.role in MODE_ROLES:  # a port in a bridge domain is switched; any other swp port is a routed port
        update["mode"] = "switched" if tree.node((*path, "bridge", "domain")) else "routed"
    if with_qos:
        priorities, cable = _port_pfc(tree, port.name)
        update |= {"pfc_priorities": priorities, "lossless": bool(priorities)}
        if priorities:
            update["cable_m"] = cable
    return update


def _link_state(tree: _Tree, path: Path) -> str | None:
    """``up`` or ``down``, the one key of the ``link state`` object; None when it is not set."""
    state = tree.get(path)
    if state is None or state == {}:
        return None
    if not isinstance(state, dict):
        raise tree.error(path, f"expected `state: {{up: {{}}}}` or `state: {{down: {{}}}}` (NVUE's object model: "
                               f"the state is a key), found the value {state!r}, which `nv config patch` refuses "
                               "(a fabricgen nvue.yaml that has it predates the fix: render again)")
    if len(state) != 1 or next(iter(state)) not in ("up", "down"):
        raise tree.error(path, f"expected one key, up or down, found {', '.join(map(str, state))}")
    return str(next(iter(state)))


def _link_speed(tree: _Tree, path: Path) -> int | None:
    """Mb/s; None for ``auto`` (the default: the port advertises every speed it supports)."""
    word = tree.text(path)
    if word is None or word == "auto":
        return None
    if word.lower() not in SPEEDS_MBPS:
        raise tree.error(path, f"expected auto or one of {', '.join(LINK_SPEEDS.values())}, found {word!r}")
    return SPEEDS_MBPS[word.lower()]


def _link_fec(tree: _Tree, path: Path) -> str | None:
    """The inventory's FEC word; None for ``auto``/``driver-auto`` (the default: the firmware picks)."""
    if tree.get(path) is False:
        return "none"  # `fec: off` unquoted, which YAML 1.1 reads as false: the word written is `off`
    word = tree.text(path)
    if word is None or word in ("auto", "driver-auto"):
        return None
    if word not in FEC_MODEL:
        raise tree.error(path, f"expected auto, rs, baser, off or driver-auto, found {word!r}")
    return FEC_MODEL[word]


def _access_vlan(tree: _Tree, path: Path) -> int | None:
    for domain in sorted(tree.node((*path, "bridge", "domain"))):
        vlan = tree.number((*path, "bridge", "domain", domain, "access"), 1, 4094)
        if vlan is not None:
            return vlan
    return None


def _tagged_vlans(tree: _Tree, path: Path) -> list[int] | None:
    """The VLANs the port carries tagged: in each bridge domain it is a member of without ``access``, its own
    ``vlan`` set, else the domain's ("the bridge port inherits the bridge VIDs"), less its untagged VLAN (its
    own ``untagged``, else the domain's, else 1; ``none``: every VLAN tagged) — VLAN-aware-Bridge-Mode page."""
    carried: set[int] = set()
    for domain in sorted(tree.node((*path, "bridge", "domain"))):
        member = (*path, "bridge", "domain", domain)
        if tree.get((*member, "access")) is not None:
            continue
        bridge = ("bridge", "domain", domain)
        own = _vlan_ids(tree, (*member, "vlan"))
        vids = _vlan_ids(tree, (*bridge, "vlan")) if own is None else own
        carried |= (vids or set()) - {_untagged(tree, member, bridge)}
    return sorted(carried) or None


def _untagged(tree: _Tree, member: Path, bridge: Path) -> int | None:
    """The member's untagged VLAN: its own, unless ``auto`` (inherit), else the domain's, else 1."""
    for path in ((*member, "untagged"), (*bridge, "untagged")):
        word = tree.text(path)
        if word == "none":
            return None
        if word not in (None, "auto"):
            return _vlan_id(tree, path, word)
    return DEFAULT_PVID


def _vlan_ids(tree: _Tree, path: Path) -> set[int] | None:
    """The VLAN ids of a ``vlan`` set (``10,20``, ``100-110``); None when absent or ``all`` (inherit)."""
    ids = tree.ids(path)
    if not ids or ids == ["all"]:
        return None
    return {_vlan_id(tree, path, vid) for key in ids for vid in expand_ids(key)}


def _vlan_id(tree: _Tree, path: Path, text: str) -> int:
    if not _DIGITS.fullmatch(text) or not 1 <= int(text) <= 4094:
        raise tree.error(path, f"expected a VLAN 1-4094, found {text!r}")
    return int(text)


def _natural(name: str) -> list[Any]:
    """natural_key(name), split once per name: a fabric's switches name the same ports (the key is only compared)."""
    key = _NATURAL.get(name)
    if key is None:
        key = natural_key(name)
        if len(_NATURAL) >= _PLAIN_SIZE:
            _NATURAL.clear()
        _NATURAL[name] = key
    return key


_NATURAL: dict[str, list[Any]] = {}


def _port_pfc(tree: _Tree, port: str) -> tuple[list[int], int]:
    """(priorities, cable length) of the PFC profile the port uses; no PFC unless tx and rx are on."""
    profile = tree.text(("interface", port, "qos", "pfc", "profile")) or PROFILE
    key = ("pfc", profile)
    if key not in tree.memo:
        tree.memo[key] = _profile_pfc(tree, profile)
    priorities, cable = tree.memo[key]
    return list(priorities), cable


def _profile_pfc(tree: _Tree, profile: str) -> tuple[list[int], int]:
    base = ("qos", "pfc", profile)
    ids = tree.ids((*base, "switch-priority"))
    priorities = sorted({_int_id(tree, (*base, "switch-priority"), sp, 7) for sp in ids})
    if not priorities or tree.flag((*base, "tx")) is False or tree.flag((*base, "rx")) is False:
        return [], DEFAULT_CABLE_M
    return priorities, tree.number((*base, "cable-length"), 1, 100_000) or DEFAULT_CABLE_M


def _int_id(tree: _Tree, path: Path, text: str, high: int) -> int:
    if not _DIGITS.fullmatch(text) or int(text) > high:
        raise tree.error((*path, text), f"expected an id 0-{high}, found {text!r}")
    return int(text)


# --- qos ------------------------------------------------------------------------------------------------

class _Bindings(NamedTuple):
    """The QoS profiles that apply to a port (or most data ports): ``qos <feature> profile``, else default-global.
    A named tuple: made for every data port, twice as fast to make as a frozen dataclass, hashed and compared alike."""

    mapping: str = PROFILE
    scheduler: str = PROFILE
    ecn: str = PROFILE


def _port_bindings(tree: _Tree, port: str) -> _Bindings:
    """``interface PORT qos <feature> profile`` of each bound feature (tree.text of each path), from the port's
    ``qos`` object; once per port and tree."""
    found = tree.bindings.get(port)
    if found is None:
        qos = tree.node(("interface", port, "qos"))
        found = tree.bindings[port] = _Bindings(*(_profile_text(qos.get(feature)) or PROFILE
                                                  for feature in BOUND_FEATURES))
    return cast(_Bindings, found)


def _profile_text(feature: Any) -> str | None:
    """tree.text of a feature object's ``profile``: None where the feature is not an object, the profile is absent,
    null or an object; else its text."""
    value = feature.get("profile") if isinstance(feature, dict) else None
    return None if value is None or isinstance(value, dict) else str(value)


def _applied_bindings(tree: _Tree, data_ports: list[PortModel]) -> _Bindings:
    """Per feature, the profile most data ports apply (a port without a binding applies default-global; ties: by
    name); default-global without data ports."""
    bound = [_port_bindings(tree, p.name) for p in data_ports]
    return _Bindings(*(_most_common([getattr(b, name) for b in bound]) for name in ("mapping", "scheduler", "ecn")))


def _most_common(names: list[str]) -> str:
    counts = Counter(names)
    return min(counts, key=lambda name: (-counts[name], name)) if counts else PROFILE


def _read_mapping(tree: _Tree, profile: str) -> tuple[Literal["dscp", "pcp", "none"], dict[int, int]]:
    """The profile's trust and its DSCP → switch priority map (empty when the trust does not look at DSCP)."""
    base = ("qos", "mapping", profile)
    word = tree.text((*base, "trust"))
    if word not in (None, *TRUST_MODEL):
        raise tree.error((*base, "trust"), f"expected l2, l3, both or port, found {word!r}")
    trust = TRUST_MODEL[word] if word else "dscp"  # not set: read as the DSCP map, as fabricgen always sets it
    if trust != "dscp":
        return trust, {}  # DSCP is not looked at
    mapping = {dscp: dscp >> 3 for dscp in range(64)}
    for key in tree.node((*base, "dscp")):
        priority = tree.number((*base, "dscp", key, "switch-priority"), 0, 7)
        if priority is not None:
            mapping[_int_id(tree, (*base, "dscp"), key, 63)] = priority
    return trust, mapping


def _read_queue_map(tree: _Tree) -> dict[int, int]:
    base = ("qos", "egress-queue-mapping", PROFILE, "switch-priority")  # NVUE has only default-global here
    mapping = {sp: sp for sp in range(8)}
    for key in tree.node(base):
        queue = tree.number((*base, key, "traffic-class"), 0, 7)
        if queue is not None:
            mapping[_int_id(tree, base, key, 7)] = queue
    return mapping


def _schedulers(tree: _Tree, profile: str) -> dict[int, tuple[Literal["strict", "dwrr"], int | None]]:
    base = ("qos", "egress-scheduler", profile, "traffic-class")
    entries = tree.node(base)
    if not entries and profile == PROFILE:  # Cumulus's default scheduler
        return {tc: ("dwrr", 12 if tc % 2 == 0 else 13) for tc in range(8)}
    found: dict[int, tuple[Literal["strict", "dwrr"], int | None]] = {}
    for key in entries:
        tc = _int_id(tree, base, key, 7)
        mode = tree.text((*base, key, "mode"))
        weight = tree.number((*base, key, "bw-percent"), 0, 100)
        if mode == "strict":
            found[tc] = ("strict", None)
        elif mode not in (None, "dwrr"):
            raise tree.error((*base, key, "mode"), f"expected strict or dwrr, found {mode!r}")
        elif weight:
            found[tc] = ("dwrr", weight)
    return found


def _read_ecn(tree: _Tree, profile: str, tc: int) -> EcnThresholds | None:
    base = ("qos", "congestion-control", profile, "traffic-class", str(tc))
    if tree.get(base) is None:
        return DEFAULT_ECN if profile == PROFILE and tc == 0 else None
    if tree.flag((*base, "ecn")) is False:
        return None
    return EcnThresholds(
        min_bytes=tree.number((*base, "min-threshold"), 0, 2**32) or DEFAULT_ECN.min_bytes,
        max_bytes=tree.number((*base, "max-threshold"), 0, 2**32) or DEFAULT_ECN.max_bytes,
        probability_pct=tree.number((*base, "probability"), 1, 100) or DEFAULT_ECN.probability_pct)


def _read_queues(tree: _Tree, skeleton: QosModel, bindings: _Bindings, tc_to_queue: dict[int, int],
                 lossless: list[int]) -> list[QueueModel]:
    names = {q.index: q.class_name for q in skeleton.queues}
    queues = []
    for index, (scheduler, weight) in sorted(_schedulers(tree, bindings.scheduler).items()):
        priorities = sorted(sp for sp, queue in tc_to_queue.items() if queue == index)
        priority = priorities[0] if priorities else index
        queues.append(QueueModel(index=index, traffic_class=priority, class_name=names.get(index, f"queue{index}"),
                                 lossless=priority in lossless, scheduler=scheduler, weight=weight,
                                 ecn=_read_ecn(tree, bindings.ecn, index)))
    return queues


def _classes(tree: _Tree, skeleton: QosModel, bindings: _Bindings, tc_to_queue: dict[int, int],
             lossless: list[int]) -> dict[str, Any]:
    """The QosModel fields the bound profiles decide: trust, DSCP map, queues (scheduler and ECN). Once per tree and
    inputs (the skeleton's queue names are all it reads of the skeleton): the switch's QoS reads the profiles most
    ports apply, then the ports applying them read them again (issue 26 item 7). Read, never changed."""
    key = ("classes", bindings, tuple((q.index, q.class_name) for q in skeleton.queues), tuple(tc_to_queue.items()),
           tuple(lossless))
    found = tree.memo.get(key)
    if found is None:
        trust, dscp_to_tc = _read_mapping(tree, bindings.mapping)
        found = tree.memo[key] = {"trust": trust, "dscp_to_tc": dscp_to_tc,
                                  "queues": _read_queues(tree, skeleton, bindings, tc_to_queue, lossless)}
    return cast(dict[str, Any], found)


def _port_watchdog(tree: _Tree, port: str) -> bool:
    """Whether the port arms the PFC watchdog; once per port and tree (a bad value is not kept: it fails again)."""
    armed = tree.armed.get(port)
    if armed is None:
        path = ("interface", port, "qos", "pfc-watchdog")
        # `nv set interface swp1 qos pfc-watchdog` arms it
        armed = tree.armed[port] = tree.get(path) is not None and tree.flag((*path, "state")) is not False
    return armed


def _watchdog_timers(tree: _Tree, skeleton: WatchdogModel | None) -> WatchdogModel:
    poll = tree.number(("qos", "pfc-watchdog", "polling-interval"), 1, 100_000) or DEFAULT_POLL_MS
    robustness = tree.number(("qos", "pfc-watchdog", "robustness"), 1, 100_000) or DEFAULT_ROBUSTNESS
    return WatchdogModel(detection_ms=poll * robustness, restoration_ms=skeleton.restoration_ms if skeleton else poll,
                         poll_ms=poll, action="drop")


def _read_watchdog(tree: _Tree, skeleton: WatchdogModel | None, data_ports: list[PortModel]) -> WatchdogModel | None:
    """The switch's watchdog: armed on most lossless data ports (ties: armed; the others read it in ``port.qos``),
    or — with no lossless port — its timers set."""
    lossless = [p for p in data_ports if p.pfc_priorities]
    if lossless:
        armed = 2 * sum(_port_watchdog(tree, p.name) for p in lossless) >= len(lossless)
    else:
        armed = any(tree.get(("qos", "pfc-watchdog", timer)) is not None
                    for timer in ("polling-interval", "robustness"))
    return _watchdog_timers(tree, skeleton) if armed else None


# NVUE's shared-alpha words (NVIDIA's OpenAPI model, `alpha_0` .. `alpha_infinity`) as the ratios they stand for.
ALPHAS: dict[str, AlphaRatio] = {
    "alpha_0": "0", "alpha_1_128": "1/128", "alpha_1_64": "1/64", "alpha_1_32": "1/32", "alpha_1_16": "1/16",
    "alpha_1_8": "1/8", "alpha_1_4": "1/4", "alpha_1_2": "1/2", "alpha_1": "1", "alpha_2": "2", "alpha_4": "4",
    "alpha_8": "8", "alpha_16": "16", "alpha_32": "32", "alpha_64": "64", "alpha_infinity": "infinity",
}
LOSSLESS_ALPHA_PATH: Path = ("qos", "advance-buffer-config", PROFILE, "ingress-lossless-buffer", "shared-alpha")


def _pool_percent(tree: _Tree, pool: str) -> int | None:
    return tree.number(("qos", "traffic-pool", pool, "memory-percent"), 1, 100)


def _read_lossless_pool(tree: _Tree) -> LosslessPoolModel:
    """The pool the lossless PGs draw from and their alpha, as the config sets them, NVIDIA's defaults for the
    rest (capability.py cites them): with `qos roce` lossless, roce-lossless (50 % unless set); with
    lossless-single-ipool, default-lossy's pool 0, which both kinds share; else default-lossless where its share
    is set, otherwise default-lossy's pool 0 (100 % unless set), where Cumulus keeps lossless PGs by default."""
    mode = _roce_mode(tree)
    lossless_pool = "roce-lossless" if mode == "lossless" else "default-lossless"
    stated = _pool_percent(tree, lossless_pool) if mode != "lossless-single-ipool" else None
    if stated is not None:
        percent, how = stated, f"traffic-pool {lossless_pool} memory-percent {stated} in its config"
    elif mode == "lossless":
        percent, how = ROCE_LOSSLESS_POOL_PERCENT, f"traffic-pool roce-lossless memory-percent not set: qos roce's " \
                                                   f"{ROCE_LOSSLESS_POOL_PERCENT} %"
    else:
        lossy = _pool_percent(tree, "default-lossy")
        why = "qos roce lossless-single-ipool" if mode == "lossless-single-ipool" else \
            "no lossless traffic-pool memory-percent"
        percent = DEFAULT_LOSSY_POOL_PERCENT if lossy is None else lossy
        size = f"memory-percent {lossy} in its config" if lossy is not None else \
            f"memory-percent not set: NVIDIA's default {DEFAULT_LOSSY_POOL_PERCENT} %"
        how = f"{why}: lossless PGs share default-lossy's pool, {size}"
    word = tree.text(LOSSLESS_ALPHA_PATH)
    if word is not None and word not in ALPHAS:
        raise tree.error(LOSSLESS_ALPHA_PATH, f"expected one of {', '.join(ALPHAS)}, found {word!r}")
    alpha = f"shared-alpha {word} in its config" if word is not None else \
        "shared-alpha not set: NVIDIA's default for lossless PGs"
    return LosslessPoolModel(percent=percent, alpha=ALPHAS[word] if word is not None else LOSSLESS_ALPHA,
                             method=f"{how}; {alpha}")


def _read_qos(tree: _Tree, skeleton: QosModel, ports: list[PortModel]) -> QosModel:
    data_ports = sorted((p for p in ports if p.role in DATA_ROLES), key=lambda p: _natural(p.name))
    tc_to_queue = _read_queue_map(tree)
    lossless = sorted({prio for port in data_ports for prio in port.pfc_priorities})
    classes = _classes(tree, skeleton, _applied_bindings(tree, data_ports), tc_to_queue, lossless)
    return updated(skeleton, {
        **classes,
        "tc_to_queue": tc_to_queue,
        "lossless_priorities": lossless,
        "watchdog": _read_watchdog(tree, skeleton.watchdog, data_ports),
        "lossless_pool": None if skeleton.lossless_pool is None and _pool_as_rendered(tree)
        else _read_lossless_pool(tree),
    })


def _pool_as_rendered(tree: _Tree) -> bool:
    """Whether the config sizes the lossless pool exactly as fabricgen renders it (default-lossless at the rendered
    memory-percent, shared-alpha left to NVIDIA's default, no `qos roce` pool of its own). Such a config reads as
    its skeleton's pool (None: the capability's RENDERED_POOL), so a switch read back as rendered is its resolved
    model and lint --configs compares it by identity."""
    return _roce_mode(tree) not in ("lossless", "lossless-single-ipool") and tree.text(LOSSLESS_ALPHA_PATH) is None \
        and _pool_percent(tree, "default-lossless") == RENDERED_POOL.percent


def _with_port_qos(tree: _Tree, device: QosModel, ports: list[PortModel]) -> list[PortModel]:
    """Each data port with ``qos`` set where the QoS in effect on it differs from the switch's: its own mapping,
    egress-scheduler or congestion-control profile, or — on a lossless port — the watchdog armed where the switch's
    is not, or not armed where it is."""
    found: dict[_Bindings, dict[str, Any]] = {}  # ports share a few bindings: each read once
    qos_by_binding: dict[tuple[_Bindings, bool | None], QosModel | None] = {}
    read = []
    for port in ports:
        if port.role not in DATA_ROLES:  # the management port is not read; other ports are not compared
            read.append(port if port.role == "mgmt" else updated(port, {"qos": None}))
            continue
        bindings = _port_bindings(tree, port.name)
        armed = _port_watchdog(tree, port.name) if port.pfc_priorities else None  # None: the switch's watchdog
        key = (bindings, armed)
        if key not in qos_by_binding:  # one QoS object per (bindings, watchdog): ports that run alike share it
            if bindings not in found:
                found[bindings] = _classes(tree, device, bindings, device.tc_to_queue, device.lossless_priorities)
            effective = dict(found[bindings])
            if armed is not None:
                effective["watchdog"] = _watchdog_timers(tree, device.watchdog) if armed else None
            differing = {name: value for name, value in effective.items() if getattr(device, name) != value}
            qos_by_binding[key] = updated(device, differing) if differing else None
        read.append(updated(port, {"qos": qos_by_binding[key]}))
    return read


# --- management -----------------------------------------------------------------------------------------

def _read_mgmt(tree: _Tree, skeleton: DeviceModel) -> MgmtModel | None:
    mgmt = skeleton.mgmt
    if mgmt is None:
        return None
    interfaces = tree.node(("interface",))
    candidates = [mgmt.interface, *(p.name for p in skeleton.ports if p.role == "mgmt"),
                  *sorted((n for n in interfaces if n.startswith("eth")), key=natural_key)]
    name = next((n for n in candidates if n in interfaces), CAPABILITY.mgmt_interface)
    path = ("interface", name)
    vrf = tree.text((*path, "vrf")) or tree.text((*path, "ip", "vrf")) or DEFAULT_MGMT_VRF
    address = _mgmt_address(tree, path, mgmt.address)
    return updated(mgmt, {
        "interface": name, "vrf": vrf, "address": address,
        "gateway": _gateway(tree, path, vrf, address if address else mgmt.address),
        "mtu": tree.number((*path, "link", "mtu"), MIN_MTU, MAX_MTU) or DEFAULT_MGMT_MTU,
    })


def _addresses(keys: list[str]) -> list[str]:
    found = []
    for key in keys:
        try:
            found.append(str(ip_interface(key)))
        except ValueError:
            continue  # `dhcp` and the like
    return found


def _mgmt_address(tree: _Tree, path: Path, wanted: str | None) -> str | None:
    """The interface's address of the skeleton's family when it has both."""
    found = _addresses([key for family in ("ipv4", "ipv6", "ip") for key in tree.ids((*path, family, "address"))])
    want_v6 = wanted is not None and ":" in wanted
    return next((a for a in found if (":" in a) == want_v6), found[0] if found else None)


def _gateway(tree: _Tree, path: Path, vrf: str, address: str | None) -> str | None:
    v6 = address is not None and ":" in address
    hops = tree.ids(("vrf", vrf, "router", "static", "::/0" if v6 else "0.0.0.0/0", "via"))
    hops += [key for family in ("ipv6" if v6 else "ipv4", "ip") for key in tree.ids((*path, family, "gateway"))]
    for hop in hops:
        try:
            return str(ip_address(hop))
        except ValueError:
            continue
    return None


# --- read -----------------------------------------------------------------------------------------------

def read(skeleton: DeviceModel, files: Mapping[str, str]) -> DeviceModel:
    """``skeleton`` with every owned field replaced by what nvue.yaml (else nvue.commands) says."""
    fast = _fast_tree(files[YAML_FILE]) if YAML_FILE in files else None
    if fast is not None:
        try:
            return _read_tree(skeleton, _with_qos_roce(fast))
        except ConfigReadError:
            pass  # read again through compose, whose tree knows the line to name
    return _read_tree(skeleton, _parse(files))


def _read_tree(skeleton: DeviceModel, tree: _Tree) -> DeviceModel:
    ports = _read_ports(tree, skeleton)
    qos = _read_qos(tree, skeleton.qos, ports) if skeleton.qos is not None else None
    if qos is not None:
        ports = _with_port_qos(tree, qos, ports)
    return updated(skeleton, {"ports": ports, "qos": qos, "mgmt": _read_mgmt(tree, skeleton)})
