"""NVIDIA Cumulus Linux (NVUE): the same settings as an ``nv set`` command file and as an ``nv config patch`` YAML.

Both files come from one list of :class:`Setting` (an NVUE path and its value), so they cannot disagree:
``nvue.commands`` prints each setting as ``nv set <path> <value>`` (DSCP lists grouped per switch priority),
``nvue.yaml`` inserts the same paths into a dict — NVUE's YAML mirrors the command path word by word, list ids
become map keys, presence-only leaves become ``{}`` — and serialises it with sorted keys.

Most settings are the same on many switches: the fabric's QoS, a PFC profile, the state, MTU and profile of a
port (all but its description, which names the peer). Memoized builders make those once, as a :class:`Chunk`
of paths relative to where it is placed (a port's interface), and its command words and YAML are made once
too; a switch's files are then its own few settings and the chunks it places (``_yaml_tree``).

Written for one pinned release, :data:`RELEASE` (Cumulus Linux 5.15). 5.15 renamed many paths; the ones this
renderer touches live in :class:`Release` so another release is one more entry in :data:`RELEASES`:
``interface <if> ipv4 address`` (5.14: ``ip address``), ``interface <if> vrf`` (5.14: ``ip vrf``),
``ipv4 dhcp-client state`` (5.14: ``ip address dhcp``) — `CumulusNetworks/docs:content/cumulus-linux-515/
Whats-New/New-and-Changed-NVUE-Commands.md`.

Both files follow NVIDIA's NVUE object model for 5.15: the OpenAPI 3 document NVIDIA publishes per release
(``openapi 5.15.0.json``, spec version 1.11.0.89; the ones up to 5.3 are also in `CumulusNetworks/docs:static/
cumulus-linux-5N/api/openapi.json`), whose patch schema (``cue-patch-schema-root-root``) is what ``nv config
patch`` and ``PATCH /nvue_v1/`` accept. tests/test_nvue_openapi.py checks every rendered nvue.yaml against it and
walks every ``nv set`` line through it word by word, as the CLI does. What the model says for the paths here:

* an object (an *instance*) takes only its own attributes (``x-unevaluatedProperties: false``); a *collection*
  takes ids as keys (``interface``, ``qos pfc|mapping|…`` profiles, ``dscp``, ``switch-priority``,
  ``traffic-class``, ``vrf``, ``router static`` prefixes and their ``via``, ``bridge domain`` and its ``vlan``,
  ``ipv4 address``); an id with nothing under it is ``{}`` (``switch-priority: {'3': {}}``);
* ``interface <if> link state`` is an object with the presence keys ``up`` and ``down``, not a leaf with a
  value: ``nv set interface swp1 link state up`` is ``link: {state: {up: {}}}`` in YAML (as ``nv config show -o
  yaml`` prints it in NVIDIA's examples);
* ``qos pfc <p> tx|rx``, ``qos congestion-control <p> traffic-class <tc> ecn`` and ``interface <if> qos
  pfc-watchdog state`` take ``enable``/``disable``; ``ipv4|ipv6 dhcp-client state`` takes ``enabled``/
  ``disabled``; ``egress-scheduler … mode`` ``dwrr``/``strict``; ``mapping … trust`` ``l2|l3|port|both``;
  interface ``type`` ``swp``/``eth``/…;
* numbers are integers: ``link mtu`` 552-9216, ``pfc-watchdog polling-interval`` 100-5000 (ms) and
  ``robustness`` 1-1000, ``traffic-pool … memory-percent`` 1-100, ``bw-percent`` 0-100, ``probability``
  0-100, ``cable-length`` 1-100000 (m), ``min-threshold``/``max-threshold`` >= 1 (bytes), ``dscp`` -> ``switch-
  priority`` 0-7, ``switch-priority`` -> ``traffic-class`` 0-7, ``bridge domain … access`` 1-4094; a port
  ``description`` is 1-255 characters;
* ``interface <if> link speed`` takes ``auto`` or ``10M`` … ``800G`` (:data:`LINK_SPEEDS`), ``link fec`` ``auto``,
  ``rs``, ``baser``, ``off`` or ``driver-auto`` (:data:`LINK_FEC`); both are ``auto`` when not set.

Everything is set explicitly; ``nv set qos roce`` is never enabled (it would impose its own maps). Where a
value equals what that profile applies, a comment says so (:data:`ROCE`).

Headroom is Cumulus's: it sizes the lossless buffer from each port's PFC ``cable-length``, so ports are grouped
into one PFC profile per (priorities, cable length). Lossless traffic needs the ``default-lossless`` pool (the
QoS page: "Before configuring PFC, first modify the switch buffer allocation"); there is one lossless pool.
"""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, NamedTuple, cast

from fabricgen import __version__
from fabricgen.models.device import DeviceModel, MgmtModel, PortModel, QosModel, WatchdogModel
from fabricgen.platforms.common.memo import by_identity
from fabricgen.platforms.common.templating import Templates
from fabricgen.platforms.nvue import patchyaml
from fabricgen.platforms.nvue.capability import CAPABILITY, COMMANDS, RELEASE, RENDERED_POOL, YAML_FILE

DATA_ROLES = ("host", "fabric")
PROFILE = "default-global"  # NVUE's profile that applies to every port without a named one
BRIDGE = "br_default"  # Cumulus's default VLAN-aware bridge (access VLANs of an OOB-role switch)
# The keys of `interface <if> link state`, by admin state: presence-only objects (`up: {}`), not enum values.
LINK_STATES = {True: "up", False: "down"}
# `interface <if> link speed`, by Mb/s: the values NVUE's object model takes besides `auto` (its default).
LINK_SPEEDS: dict[int, str] = {10: "10M", 100: "100M", 1_000: "1G", 10_000: "10G", 25_000: "25G", 40_000: "40G",
                               50_000: "50G", 100_000: "100G", 200_000: "200G", 400_000: "400G", 800_000: "800G"}
# `interface <if> link fec`, by the inventory's FEC: RS (Clause 91/108), Base-R FireCode (Clause 74), none. Not set,
# a Spectrum port runs `auto` (Switch-Port-Attributes page, "FEC": the firmware picks; NVIDIA advises against
# setting `fec auto` explicitly, as it flaps the link on every apply).
LINK_FEC: dict[str, str] = {"rs": "rs", "fc": "baser", "none": "off"}
# `qos mapping <profile> trust`, by the model's trust (QoS page, "Classification": l3 = DSCP, l2 = PCP, port = the
# port's default switch priority, nothing in the packet).
TRUST_WORDS: dict[str, str] = {"dscp": "l3", "pcp": "l2", "none": "port"}


# Cumulus defaults fabricgen relies on (QoS page and NVUE command reference unless noted).
DEFAULT_CABLE_M = 10  # `qos pfc <profile> cable-length`: "The default is 10 meters"
WATCHDOG_POLL_RANGE = (100, 5000)  # `qos pfc-watchdog polling-interval 100-5000` (ms)
WATCHDOG_ROBUSTNESS_RANGE = (1, 1000)  # `qos pfc-watchdog robustness 1-1000` (polling intervals)

# What `nv set qos roce` (mode lossless) applies, from the CL 5.15 RoCE page (table "Default RoCE
# Configuration" and `nv show qos roce`): the default trust-L3 map puts DSCP 26 on switch priority 3 and 48 on 6;
# SP 3 -> TC 3, SP 6 -> TC 6; PFC on SP 3, tx and rx; ECN on TC 3 from 150000 to 1500000 B at probability 100;
# TC 6 strict, TC 3 and TC 0 DWRR 50 %. (Its trust is `both`, its cable length 100 m: fabricgen's differ.)
ROCE: dict[str, Any] = {
    "dscp": {26: 3, 48: 6},
    "queue": {3: 3, 6: 6},
    "pfc": [3],
    "ecn": {3: (150_000, 1_500_000, 100)},
    "scheduler": {6: ("strict", None), 3: ("dwrr", 50), 0: ("dwrr", 50)},
}

class UnsupportedOnPlatform(ValueError):
    """A resolved value NVUE cannot express and that resolve does not check yet (named in the message)."""


# --- settings: one NVUE path and its value ------------------------------------------------------------

Word = str | tuple[str, ...]  # a tuple is several ids: `0,1,2` in a command, one map key each in YAML


class Setting(NamedTuple):  # a NamedTuple: a switch has hundreds, and a frozen dataclass is slow to build
    """``nv set <path> <value>``; ``value`` None means the last word is an id (``switch-priority 3``)."""

    path: tuple[Word, ...]
    value: str | int | None = None

    def command(self) -> str:
        return "nv set " + self.words()

    def words(self) -> str:
        """The command after ``nv set``, each word quoted for the shell."""
        path = _words(self.path)
        return path if self.value is None else f"{path} {shlex.quote(str(self.value))}"

    def paths(self) -> Iterable[tuple[str, ...]]:
        """Every concrete path (one per id of each list word)."""
        if tuple not in map(type, self.path):
            return (cast(tuple[str, ...], self.path),)  # the common case: no list word, one path
        return itertools.product(*(word if isinstance(word, tuple) else (word,) for word in self.path))


@lru_cache(maxsize=4096)  # paths repeat on every switch (each port's, each QoS setting's); values mostly do not
def _words(path: tuple[Word, ...]) -> str:
    return " ".join(shlex.quote(",".join(word) if isinstance(word, tuple) else word) for word in path)


@dataclass(frozen=True, eq=False)
class Chunk:
    """Settings that many switches share, their paths relative to where a :class:`Placed` puts them. Memoized
    builders return the same Chunk for the same inputs, so its commands and its YAML are made once."""

    settings: tuple[Setting, ...]

    @cached_property
    def tails(self) -> tuple[str, ...]:
        """Each setting's command after the placement's words."""
        return tuple(setting.words() for setting in self.settings)

    @cached_property
    def block(self) -> patchyaml.Block | None:
        """The chunk's tree as a patchyaml Block: written once, and immutable, so that no other part can add to
        it (``_graft``). None when the settings alone cannot make a tree: the whole tree is then built plainly,
        which says why."""
        try:
            return patchyaml.Block(settings_tree(self.settings))
        except ValueError:
            return None


class Placed(NamedTuple):  # one per port of every switch: a NamedTuple is cheap to build
    """Settings under the path ``base`` (a port's interface, a QoS table), their paths relative to it: a chunk
    that switches share, and the switch's ``own`` settings, which the command file lists after the first
    ``own_at`` of the chunk's (a port's type, then its description, then the rest)."""

    base: tuple[str, ...]
    shared: Chunk
    own: tuple[Setting, ...] = ()
    own_at: int = 0

    @property
    def settings(self) -> tuple[Setting, ...]:
        """Every setting with its full path, in the command file's order."""
        shared, at = self.shared.settings, self.own_at
        return tuple(Setting((*self.base, *s.path), s.value) for s in (*shared[:at], *self.own, *shared[at:]))

    def commands(self) -> str:
        """The commands, one a line: each is ``nv set <base> `` and a setting's words (one join)."""
        if not self.own:  # shared as a whole (a QoS table, a PFC profile): its commands are remembered
            return _shared_commands(self.base, self.shared)
        tails, at = self.shared.tails, self.own_at
        return _lines(self.base, [*tails[:at], *(setting.words() for setting in self.own), *tails[at:]])


@lru_cache(maxsize=1024)
def _shared_commands(base: tuple[str, ...], shared: Chunk) -> str:
    return _lines(base, shared.tails)


def _lines(base: tuple[str, ...], tails: Sequence[str]) -> str:
    prefix = _prefix(base)
    return prefix + f"\n{prefix}".join(tails) if tails else ""


@lru_cache(maxsize=4096)  # the same bases (port names, QoS tables) on every switch
def _prefix(base: tuple[str, ...]) -> str:
    return f"nv set {_words(base)} " if base else "nv set "


Part = Setting | Placed  # a setting of this switch alone (full path), or settings under one path


@dataclass(frozen=True)
class Section:
    title: str
    parts: tuple[Part, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def settings(self) -> tuple[Setting, ...]:
        return tuple(setting for part in self.parts
                     for setting in (part.settings if isinstance(part, Placed) else (part,)))

    def commands(self) -> str:
        """The section's commands, one a line."""
        texts = [part.commands() if isinstance(part, Placed) else part.command() for part in self.parts]
        return "\n".join(filter(None, texts))  # a Placed without settings has no line


def natural_key(text: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


@lru_cache(maxsize=256)  # switches of one model list the same ports: sorted once per port layout
def _natural_order(names: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(sorted(range(len(names)), key=lambda i: natural_key(names[i])))


def pfc_profile_name(priorities: Sequence[int], cable_m: int) -> str:
    """One PFC profile per (priorities, cable length): Cumulus sizes headroom per profile."""
    return f"pfc-sp{''.join(str(p) for p in sorted(priorities))}-{cable_m}m"


def port_cable(port: PortModel) -> int:
    return port.cable_m if port.cable_m is not None else DEFAULT_CABLE_M


def pfc_ports(device: DeviceModel) -> list[PortModel]:
    if device.qos is None:
        return []
    return [p for p in device.ports if p.role in DATA_ROLES and p.pfc_priorities]


PfcGroup = tuple[tuple[int, ...], int]  # (sorted priorities, cable length): one PFC profile


def _pfc_groups(device: DeviceModel) -> dict[str, PfcGroup]:
    """Each PFC port's profile, by port name (port_cable inlined: this runs for every port of every switch)."""
    return {port.name: (tuple(sorted(port.pfc_priorities)), DEFAULT_CABLE_M if port.cable_m is None else port.cable_m)
            for port in pfc_ports(device)}


# --- qos sections ---------------------------------------------------------------------------------------
# They depend on the fabric's one QosModel (by_identity: built once per fabric) or on a PFC profile (lru_cache).

def _in_qos(table: str, settings: Iterable[Setting]) -> Placed:
    return Placed(("qos", table), Chunk(tuple(settings)))  # built once (memoized callers): the chunk is shared


@by_identity
def _classification(qos: QosModel) -> Section:
    by_priority: dict[int, list[int]] = {}
    for dscp, priority in sorted(qos.dscp_to_tc.items()):
        by_priority.setdefault(priority, []).append(dscp)
    settings = [Setting((PROFILE, "trust"), TRUST_WORDS[qos.trust])]
    settings += [Setting((PROFILE, "dscp", tuple(map(str, dscps)), "switch-priority"), priority)
                 for priority, dscps in sorted(by_priority.items())]
    matches = [f"DSCP {dscp} -> switch-priority {sp}" for dscp, sp in ROCE["dscp"].items()
               if qos.dscp_to_tc.get(dscp) == sp]
    return Section("classification: trust DSCP, DSCP -> switch priority", (_in_qos("mapping", settings),),
                   _roce_note(matches))


@by_identity
def _queue_mapping(qos: QosModel) -> Section:
    settings = [Setting((PROFILE, "switch-priority", str(sp), "traffic-class"), queue)
                for sp, queue in sorted(qos.tc_to_queue.items())]
    matches = [f"switch-priority {sp} -> traffic-class {tc}" for sp, tc in ROCE["queue"].items()
               if qos.tc_to_queue.get(sp) == tc]
    return Section("switch priority -> traffic class (egress queue)",
                   (_in_qos("egress-queue-mapping", settings),), _roce_note(matches))


# The lossless pool's share (capability.RENDERED_POOL, which lint FG-ECN-002 places the pause point with), and the
# rest to default-lossy: "The total memory allocation across pools must not exceed 100%" (QoS page).
_POOLS = _in_qos("traffic-pool", (Setting(("default-lossless", "memory-percent"), RENDERED_POOL.percent),
                                  Setting(("default-lossy", "memory-percent"), 100 - RENDERED_POOL.percent)))


@lru_cache(maxsize=1024)  # cable lengths repeat between switches (DAC lengths, spine distances)
def _pfc_profile(group: PfcGroup) -> Placed:
    priorities, cable = group
    name = pfc_profile_name(priorities, cable)
    return _in_qos("pfc", (Setting((name, "switch-priority", tuple(map(str, priorities)))),
                           Setting((name, "tx"), RELEASE.enable), Setting((name, "rx"), RELEASE.enable),
                           Setting((name, "cable-length"), cable)))


def _pfc(groups: Iterable[PfcGroup]) -> Section | None:
    profiles = sorted(set(groups))
    if not profiles:
        return None
    same = {priorities for priorities, _ in profiles} == {tuple(ROCE["pfc"])}
    notes = ["one lossless pool (default-lossless) holds every lossless priority; Cumulus sizes each port's "
             "headroom from its profile's cable length"]
    notes += _roce_note(["PFC on switch-priority 3, tx and rx"] if same else [])
    return Section("PFC: lossless buffer pool, one profile per (priorities, cable length)",
                   (_POOLS, *map(_pfc_profile, profiles)), tuple(notes))


def watchdog_settings(watchdog: WatchdogModel) -> tuple[Setting, ...]:
    """NVUE counts detection in polling intervals (``robustness``) and restores on its own, after one polling
    interval without pause frames: ``restoration_ms`` has no NVUE setting. A detection time that is not a
    whole number of polling intervals, or a timer out of NVUE's range, is refused here (resolve cannot check
    it with today's Capability fields)."""
    return _watchdog_timers(watchdog).settings


def _watchdog_timers(watchdog: WatchdogModel) -> Placed:
    poll, detection = watchdog.poll_ms, watchdog.detection_ms
    if watchdog.action not in CAPABILITY.watchdog_actions:
        raise UnsupportedOnPlatform(f"platform nvue has no PFC watchdog action {watchdog.action!r} (it drops)")
    if not WATCHDOG_POLL_RANGE[0] <= poll <= WATCHDOG_POLL_RANGE[1]:
        raise UnsupportedOnPlatform(f"platform nvue polls the PFC watchdog every 100-5000 ms, not {poll} ms")
    robustness, rest = divmod(detection, poll)
    if rest or not WATCHDOG_ROBUSTNESS_RANGE[0] <= robustness <= WATCHDOG_ROBUSTNESS_RANGE[1]:
        raise UnsupportedOnPlatform(f"platform nvue detects PFC storms after 1-1000 whole polling intervals: "
                                    f"detection_ms {detection} is not a multiple of poll_ms {poll}")
    return _in_qos("pfc-watchdog", (Setting(("polling-interval",), poll), Setting(("robustness",), robustness)))


@by_identity
def _watchdog(qos: QosModel) -> Section | None:
    if qos.watchdog is None:
        return None
    notes = (f"detection = robustness x polling-interval = {qos.watchdog.detection_ms} ms; NVUE restores PFC "
             f"after one polling interval without pause frames (restoration_ms {qos.watchdog.restoration_ms} has "
             "no NVUE setting); armed per port below",)
    return Section("PFC watchdog", (_watchdog_timers(qos.watchdog),), notes)


@by_identity
def _ecn(qos: QosModel) -> Section:
    queues = {q.index: q for q in qos.queues}
    settings: list[Setting] = []
    matches: list[str] = []
    for tc in range(8):
        path = (PROFILE, "traffic-class", str(tc))
        ecn = queues[tc].ecn if tc in queues else None
        if ecn is None:
            settings.append(Setting((*path, "ecn"), RELEASE.disable))
            continue
        settings += [Setting((*path, "ecn"), RELEASE.enable), Setting((*path, "min-threshold"), ecn.min_bytes),
                     Setting((*path, "max-threshold"), ecn.max_bytes),
                     Setting((*path, "probability"), ecn.probability_pct)]
        if ROCE["ecn"].get(tc) == (ecn.min_bytes, ecn.max_bytes, ecn.probability_pct):
            matches.append(f"ECN on traffic-class {tc}, 150000-1500000 B, probability 100")
    notes = ("thresholds in bytes as written; default-global marks traffic-class 0 unless told otherwise, so "
             "every traffic class is set",)
    return Section("ECN per traffic class", (_in_qos("congestion-control", settings),), notes + _roce_note(matches))


@by_identity
def _scheduler(qos: QosModel) -> Section:
    settings: list[Setting] = []
    matches: list[str] = []
    for queue in sorted(qos.queues, key=lambda q: q.index):
        path = (PROFILE, "traffic-class", str(queue.index))
        settings.append(Setting((*path, "mode"), queue.scheduler))
        if queue.scheduler == "dwrr":
            settings.append(Setting((*path, "bw-percent"), queue.weight or 0))
        weight = queue.weight if queue.scheduler == "dwrr" else None
        if ROCE["scheduler"].get(queue.index) == (queue.scheduler, weight):
            matches.append(f"traffic-class {queue.index} {queue.scheduler}" + (f" {weight} %" if weight else ""))
    return Section("egress scheduler (traffic classes without a class: DWRR 0)",
                   (_in_qos("egress-scheduler", settings),), _roce_note(matches))


def _roce_note(matches: list[str]) -> tuple[str, ...]:
    return (f"as `nv set qos roce` applies it: {'; '.join(matches)}",) if matches else ()


# --- interfaces and management --------------------------------------------------------------------------

def _port(port: PortModel, group: PfcGroup | None, watchdog: bool) -> Placed:
    """The port's settings: what it shares with the ports of its kind, and its description (its own: it names
    the peer), listed after its type."""
    kind = _port_kind(port.admin_up, port.mtu if port.role in DATA_ROLES else None, port.access_vlan, group,
                      watchdog, _link_speed(port), None if port.fec is None else LINK_FEC[port.fec])
    own = (Setting(("description",), port.description),) if port.description else ()
    return Placed(("interface", port.name), kind, own, 1)  # own_at 1: after the type


def _link_speed(port: PortModel) -> str | None:
    if port.speed_mbps is None:
        return None
    if port.speed_mbps not in LINK_SPEEDS:
        raise UnsupportedOnPlatform(f"platform nvue has no link speed {port.speed_mbps} Mb/s for {port.name} "
                                    f"(NVUE: {', '.join(LINK_SPEEDS.values())})")
    return LINK_SPEEDS[port.speed_mbps]


@lru_cache(maxsize=1024)  # a fabric's ports come in a few kinds: one Chunk (commands, YAML) per kind
def _port_kind(admin_up: bool, mtu: int | None, access_vlan: int | None, group: PfcGroup | None,
               watchdog: bool, speed: str | None = None, fec: str | None = None) -> Chunk:
    """The type, link state, speed and FEC (NVUE words; None: not set, NVUE's ``auto``), the MTU of a data port,
    the access VLAN, and the PFC profile (``group``) and watchdog of a lossless port."""
    # `link state` is an object whose keys are the states, not a leaf holding one: `state: {up: {}}` (LINK_STATES)
    settings = [Setting(("type",), "swp"), Setting(("link", "state", LINK_STATES[admin_up]))]
    if speed is not None:
        settings.append(Setting(("link", "speed"), speed))
    if fec is not None:
        settings.append(Setting(("link", "fec"), fec))
    if mtu is not None:
        settings.append(Setting(("link", "mtu"), mtu))
    if access_vlan is not None:
        settings.append(Setting(("bridge", "domain", BRIDGE, "access"), access_vlan))
    if group is not None:
        settings.append(Setting(("qos", "pfc", "profile"), pfc_profile_name(*group)))
        if watchdog:
            settings.append(Setting(("qos", "pfc-watchdog", "state"), RELEASE.enable))
    return Chunk(tuple(settings))


def _ports(device: DeviceModel, groups: dict[str, PfcGroup]) -> Section:
    switch_ports = [p for p in device.ports if p.role != "mgmt"]
    ports = [switch_ports[i] for i in _natural_order(tuple(p.name for p in switch_ports))]
    vlans = sorted({p.access_vlan for p in ports if p.access_vlan is not None})
    parts: list[Part] = [Setting(("bridge", "domain", BRIDGE, "vlan", str(vlan))) for vlan in vlans]
    watchdog = device.qos is not None and device.qos.watchdog is not None
    parts += [_port(port, groups.get(port.name), watchdog) for port in ports]
    return Section("switch ports: state, speed, FEC, MTU on data ports, PFC profile and watchdog", tuple(parts))


def _mgmt(mgmt: MgmtModel) -> Section:
    path: tuple[Word, ...] = ("interface", mgmt.interface)
    settings = [Setting((*path, "type"), "eth"), Setting((*path, *RELEASE.interface_vrf), mgmt.vrf)]
    if mgmt.address:
        family = RELEASE.ip_family[6 if ":" in mgmt.address else 4]  # resolve checked the address: no parsing
        if RELEASE.dhcp_client_state:
            settings.append(Setting((*path, family, *RELEASE.dhcp_client_state), RELEASE.disabled))
        settings.append(Setting((*path, family, "address", mgmt.address)))
    settings.append(Setting((*path, "link", "mtu"), mgmt.mtu))
    if mgmt.gateway:
        default = "::/0" if ":" in mgmt.gateway else "0.0.0.0/0"
        settings.append(Setting(("vrf", mgmt.vrf, "router", "static", default, "via", mgmt.gateway)))
    return Section(f"management: {mgmt.interface} in VRF {mgmt.vrf}", tuple(settings))  # this switch's alone


# --- the device -----------------------------------------------------------------------------------------

def sections(device: DeviceModel) -> list[Section]:
    """Everything fabricgen sets on the switch, in the order the command file lists it."""
    found: list[Section | None] = []
    qos = device.qos
    groups = _pfc_groups(device)  # empty without QoS
    if qos is not None:
        found += [_classification(qos), _queue_mapping(qos), _pfc(groups.values()), _watchdog(qos), _ecn(qos),
                  _scheduler(qos)]
    found.append(_ports(device, groups))
    if device.mgmt is not None:
        found.append(_mgmt(device.mgmt))
    return [section for section in found if section is not None]


def settings_tree(settings: Iterable[Setting]) -> dict[str, Any]:
    """The ``set`` body of the patch: each path word a key, ids as keys, presence-only leaves ``{}``."""
    root: dict[str, Any] = {}
    for setting in settings:
        value = setting.value
        for keys in setting.paths():
            node = root
            for key in keys if value is None else keys[:-1]:
                child = node.get(key)
                if child is None:
                    child = node[key] = {}
                elif not isinstance(child, dict):
                    raise ValueError(f"NVUE path {' '.join(keys)} crosses the value of {key}")
                node = child
            if value is not None:
                node[keys[-1]] = value
    return root


def _yaml_tree(found: list[Section]) -> dict[str, Any]:
    """``settings_tree`` of every setting, made of the plain settings and then each Placed part's, put in at its
    base (``_graft``). That is the same tree as long as no two parts write the same leaf or entry; when they
    do, the order of the settings decides (or the paths cross), and the plain tree is built instead."""
    parts = [part for section in found for part in section.parts]
    tree = settings_tree(part for part in parts if not isinstance(part, Placed))
    parents: dict[tuple[str, ...], dict[str, Any]] = {}  # the dicts bases end in: stay where they are
    for part in parts:
        if isinstance(part, Placed) and not _graft(tree, part, parents):
            return settings_tree(setting for section in found for setting in section.settings)
    return tree


def _graft(tree: dict[str, Any], placed: Placed, parents: dict[tuple[str, ...], dict[str, Any]]) -> bool:
    """Put ``placed``'s settings into ``tree``; False when one would land where another part wrote. Where no
    part wrote yet (a port, a QoS table), its node is a Merged of its own settings and its chunk's Block, which
    patchyaml writes as the Block's text and a few lines; a later part there turns it into a dict."""
    block = placed.shared.block
    if block is None:
        return False
    if not block.tree and not placed.own:
        return True  # no settings: no node either
    path, key = placed.base[:-1], placed.base[-1]
    parent = parents.get(path) or _node(tree, path)  # every port's is the same `interface` dict
    if parent is None:
        return False
    parents[path] = parent
    if key not in parent:
        own = _own_tree(placed.own)
        if own is None or not own.keys().isdisjoint(block.tree):
            return False
        parent[key] = patchyaml.Merged(own, block)
        return True
    node = _node(parent, (key,))
    if node is None or not all(_add(node, setting) for setting in placed.own):
        return False
    if not block.entries.keys().isdisjoint(node):
        return False
    node.update(block.entries)
    return True


def _own_tree(own: tuple[Setting, ...]) -> dict[str, Any] | None:
    """``settings_tree(own)``, None where it raises. A port's description (one word, a value) takes a shortcut."""
    if len(own) == 1 and len(own[0].path) == 1 and type(own[0].path[0]) is str and own[0].value is not None:
        return {own[0].path[0]: own[0].value}
    try:
        return settings_tree(own)
    except ValueError:
        return None


def _add(node: dict[str, Any], setting: Setting) -> bool:
    """Insert ``setting`` (its path relative to ``node``) unless its leaf is taken: a value there would make
    the tree depend on the order of the settings. A presence-only leaf merges with a mapping, as in the plain
    tree."""
    for keys in setting.paths():
        parent = _node(node, keys[:-1])
        if parent is None:
            return False
        here = parent.get(keys[-1])
        if here is None:
            parent[keys[-1]] = {} if setting.value is None else setting.value
        elif setting.value is not None or type(here) is not dict:
            return False
    return True


def _node(node: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any] | None:
    """The dict at ``keys`` under ``node``, made where missing (a Merged becomes a dict); None when a value or
    a Block (another part's entry, immutable) is in the way."""
    for key in keys:
        child = node.get(key)
        if child is None:
            child = node[key] = {}
        elif type(child) is patchyaml.Merged:
            child = node[key] = child.expanded()
        elif type(child) is not dict:
            return None
        node = child
    return node


def _header(device: DeviceModel) -> list[str]:
    return [f"fabricgen {__version__} intended NVUE configuration of {device.name} ({device.role}, "
            f"{device.hardware or 'cumulus'}) for {RELEASE.label}",
            "Only what fabricgen owns; generated, do not edit by hand. nvue.yaml holds the same settings."]


def render_yaml(device: DeviceModel, found: list[Section]) -> str:
    tree = _yaml_tree(found)
    notes = [*_header(device), "Load: nv config patch nvue.yaml; nv config diff; nv config apply --confirm 10m -y"]
    notes += [note for section in found for note in section.notes if note.startswith("as `nv set qos roce`")]
    # = yaml.dump([{"set": tree}], Dumper=yaml.SafeDumper, sort_keys=True, default_flow_style=False,
    #            allow_unicode=False, width=1000), without PyYAML's pure-Python emitter (patchyaml)
    return "".join(f"# {line}\n" for line in notes) + patchyaml.dump(tree)


def _items(text: str) -> list[str]:
    return [text] if text else []


def render(device: DeviceModel, templates: Templates) -> dict[str, str]:
    found = sections(device)
    context = {
        "header": _header(device),
        # Each section's commands as one item: the template writes an item per line, and Jinja's loop cost a
        # sixth of the render when it went over 600 commands one by one.
        "sections": [{"title": s.title, "notes": s.notes, "commands": _items(s.commands())} for s in found],
    }
    return {COMMANDS: templates.render("nvue/nvue.commands.j2", **context), YAML_FILE: render_yaml(device, found)}
