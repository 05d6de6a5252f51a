"""Platforms: a small capability record plus one renderer each, behind a registry.

Adding a platform means adding one package under ``fabricgen/platforms/<name>/`` exporting ``PLATFORM``
(and its templates under ``templates/<name>/`` when it renders text) and one line in ``BUILTIN``.
The core never asks "is this EOS?": it reads capabilities.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fabricgen.models.device import DeviceModel, LosslessPoolModel
from fabricgen.platforms.common.templating import Templates

RenderFn = Callable[[DeviceModel, Templates], dict[str, str]]
# read(skeleton, files): the skeleton (resolved from intent + inventory) with every owned field replaced by
# what the device's config files say. Lint then checks configs that already exist, ours or not.
ReadFn = Callable[[DeviceModel, Mapping[str, str]], DeviceModel]
# owned(device): the fields this platform's config expresses; read(render(m)) must give back owned(m). A port entry
# whose ``qos`` is None runs the device's QoS: the ``qos`` section, or PORT_QOS where the platform views a port's QoS
# with other fields than the device's (lint then compares a port with QoS of its own against that).
OwnedFn = Callable[[DeviceModel], dict[str, Any]]
PORT_QOS = "port_qos"


@dataclass(frozen=True)
class ConfigConflict:
    """A config that sets one setting two ways, so that the device may run either (a hand edit that changed one of
    two places): the file, its line, what disagrees, and the port or NIC it is on (None: device-wide)."""

    file: str
    line: int
    message: str
    port: str | None = None


# conflicts(files): what a platform's config files set two ways (read() reads one of the two).
ConflictsFn = Callable[[Mapping[str, str]], list[ConfigConflict]]


class ConfigReadError(Exception):
    """A config file that cannot be read back: names the file, the line and what was expected."""

    def __init__(self, file: str, line: int, message: str) -> None:
        self.file, self.line, self.message = file, line, message
        super().__init__(f"{file}:{line}: {message}")


@dataclass(frozen=True)
class Capability:
    """What a platform can express, and how fabricgen owns config on it."""

    name: str
    kind: Literal["switch", "host"]
    target: str = field(metadata={"doc": "the OS release the output is written and validated for"})
    max_mtu: int
    mtu_semantics: Literal["l3", "l2"]
    lossless_class_limit: int
    ecn_threshold_unit: str
    ecn_granularity_bytes: int
    programs_headroom: bool
    mgmt_interface: str
    mgmt_vrf_fixed_name: str | None
    watchdog_step_ms: int
    watchdog_actions: tuple[str, ...]
    owned_sections: tuple[str, ...]
    commit_strategy: str
    output_files: tuple[str, ...]
    # Watchdog timers the platform sets as a whole number of polls (NX-OS: detection and restoration
    # multipliers; NVUE: detection = robustness × polling-interval).
    watchdog_timers_in_polls: tuple[str, ...] = ()
    # Intent features the platform leaves to another tool (linux-dcb: DCQCN/CNP need the NIC vendor's tool);
    # lint warns on every device where the intent asks for them.
    delegated_features: tuple[str, ...] = ()
    # The per-port settings the platform's reader reads back: the keys of each port's (hosts: each NIC's) entry in
    # its owned view. lint --configs compares every one with the intent (FG-CFG-001), and
    # tests/test_lint_completeness.py mutates every one on one port of a rendered config and expects findings
    # there and nowhere else: a setting read but not listed here, or listed without a mutation, fails it.
    port_settings: tuple[str, ...] = ()
    # Where a config of the platform defines its ports (a regular expression, read line by line; `{port}` stands
    # for the port's name): each line it matches is the port's entry, or, without `{port}`, the port's name as a
    # key from its first match on (a SONiC config_db.json names a port in BUFFER_PG or CABLE_LENGTH long before
    # its PORT entry). lint --configs points a port's findings there (fabricgen.lint.configlines). None, or no
    # match: the first line naming the port.
    port_anchor: str | None = None
    # Where the platform's config writes a port's setting, for a finding that names the setting by its model field
    # (Finding.setting "cable_m"; a dotted field, "qos.watchdog", is looked up before its parent): names joined by
    # " > ", each looked for as a whole name after the one before, `{port}` the port's name (first: the port's own
    # entry, see port_anchor), and a name after the port within the port's entry (its indented block: a port
    # without the key is not pointed at the next port's). SONiC: cable_m "CABLE_LENGTH > {port}". lint --configs
    # points the finding there, else at the port. A setting not listed is looked for as it is named (a host's
    # NCCL_IB_TC); lint rules name only the settings listed here or host words.
    config_words: Mapping[str, str] = field(default_factory=dict)
    # Where the config writes a switch-wide setting, for a finding about the device rather than a port (its QoS
    # profile, queues, ECN, watchdog): names joined by " > " as in config_words, without `{port}`, the first one the
    # line that opens the block, the one such line at the top level (EOS: qos.queues.ecn "qos profile > random-detect
    # ecn"; lint.configlines.ConfigText.only_block). A setting not listed, or a block of which the file has two,
    # points at line 1.
    device_words: Mapping[str, str] = field(default_factory=dict)
    # Host NIC drivers: whether the driver takes an ETS traffic class at 0 % beside an ETS total of 100 (None on
    # switches). fabricgen renders a layout every driver takes (resolve.host.nic_ets); lint holds configs read
    # back against this.
    ets_zero_share: Literal["accepted", "refused"] | None = None
    # How the platform spells each intent feature (docs/platforms.md); a feature it cannot express is absent
    # here and refused by resolve, never dropped.
    spelling: Mapping[str, str] = field(default_factory=dict)
    # The NAPALM driver `fabricgen push` uses (custom_napalm.<name>, or a core driver name); None: deploy does not
    # handle the platform yet. A switch driver's candidate is the platform's first output file; a GPU host's is
    # the bundle of its rendered files (fabricgen/deploy/hostbundle.py).
    napalm_driver: str | None = None
    # How deploy does each step on the platform (keys of DEPLOY_STEPS), and what fabricgen's test lab emulates
    # there (no vendor image runs in CI): docs/platforms.md shows them side by side.
    deploy: Mapping[str, str] = field(default_factory=dict)
    # Where the lossless-class limit is the SKU's (SONiC: the PGs its buffer templates provision): SKU → limit,
    # for the SKUs whose files are known. Any other SKU's limit is unknown unless the inventory declares it
    # (data.lossless_limit): above lossless_class_limit, lint warns (FG-PFC-002) instead of resolve refusing.
    lossless_limit_per_sku: Mapping[str, int] | None = None
    # Whether a lossless port's headroom is sized from its cable length, by fabricgen or by the switch (SONiC: the
    # buffer profile fabricgen or buffermgrd computes; Cumulus: from `qos pfc <profile> cable-length`): where it
    # is, an unknown cable length is an error (lint FG-BUF-001). EOS and NX-OS carve buffers without one.
    headroom_from_cable: bool = False
    # Where the switch sizes its lossless pool as a share of the ASIC's buffer: the share and alpha the platform's
    # rendered config gives it (Cumulus: traffic-pool memory-percent), which lint FG-ECN-002 places the PFC pause
    # point with on the intent road; a config read back states its own (QosModel.lossless_pool). None: the
    # platform sizes no pool as a share.
    lossless_pool: LosslessPoolModel | None = None
    # The management port MTUs the platform takes, where it limits them more than the intent's schema does (SONiC:
    # sonic-mgmt_port.yang ranges MGMT_PORT mtu 1500..9216, and a config outside it is refused): resolve refuses
    # the others, and the reader an MTU outside it.
    mgmt_mtu_range: tuple[int, int] | None = None

    def lossless_limit(self, sku: str | None, declared: int | None = None) -> int | None:
        """A device's lossless-class limit: the inventory's declaration, else its SKU's where the limit is per SKU,
        else the platform's; None: unknown (a SKU whose files fabricgen does not know)."""
        if declared is not None:
            return declared
        if self.lossless_limit_per_sku is None:
            return self.lossless_class_limit
        return self.lossless_limit_per_sku.get(sku or "")


@dataclass(frozen=True)
class Imported:
    """A platform's function named by its module and name, for :class:`Platform` to import when first used."""

    module: str
    name: str

    def load(self) -> Any:
        return getattr(importlib.import_module(self.module), self.name)


class Platform:
    """A platform's capability, and its renderer, reader and owned view: each a function, or an
    :class:`Imported` reference that the first access imports. Checking devices against their capabilities
    (load, resolve, lint) must not import every platform's renderer and reader: an incremental render of one
    cable validates devices of all six platforms, renders two, and reads none back."""

    def __init__(self, capability: Capability, render: RenderFn | Imported, read: ReadFn | Imported | None = None,
                 owned: OwnedFn | Imported | None = None, conflicts: ConflictsFn | Imported | None = None) -> None:
        self.capability = capability
        self._render, self._read, self._owned, self._conflicts = render, read, owned, conflicts

    @property
    def render(self) -> RenderFn:
        function: RenderFn = self._loaded("_render")
        return function

    @property
    def read(self) -> ReadFn | None:
        function: ReadFn | None = self._loaded("_read")
        return function

    @property
    def owned(self) -> OwnedFn | None:
        function: OwnedFn | None = self._loaded("_owned")
        return function

    @property
    def conflicts(self) -> ConflictsFn | None:
        function: ConflictsFn | None = self._loaded("_conflicts")
        return function

    def _loaded(self, slot: str) -> Any:
        value = getattr(self, slot)
        if isinstance(value, Imported):
            value = value.load()
            setattr(self, slot, value)
        return value


BUILTIN: Mapping[str, str] = {
    "sonic": "fabricgen.platforms.sonic",
    "eos": "fabricgen.platforms.eos",
    "nvue": "fabricgen.platforms.nvue",
    "nxos": "fabricgen.platforms.nxos",
    "connectx": "fabricgen.platforms.connectx",
    "linux-dcb": "fabricgen.platforms.linux_dcb",
}

_loaded: dict[str, Platform] = {}


DEPLOY_STEPS: tuple[tuple[str, str], ...] = (
    ("diff", "diff (dry run, leaves no trace)"),
    ("commit", "commit with an on-device revert timer"),
    ("confirm", "confirm"),
    ("rollback", "rollback to before a run"),
    ("save", "saved across reboot"),
    ("limits", "what the device's own rules keep fabricgen from changing"),
    ("disruption", "what a change disrupts"),
    ("lab", "test lab: real vs emulated"),
)

FEATURES: tuple[tuple[str, str], ...] = (
    ("trust", "classify by DSCP"),
    ("dscp_map", "DSCP → traffic class"),
    ("queue_map", "traffic class → egress queue"),
    ("pfc", "PFC on the lossless priorities"),
    ("pfc_watchdog", "PFC watchdog"),
    ("headroom", "PFC headroom / cable length"),
    ("ecn", "ECN marking thresholds"),
    ("scheduling", "strict / DWRR scheduling"),
    ("mtu", "MTU"),
    ("mgmt", "management VRF and interface"),
    ("dcqcn", "DCQCN and CNP marking"),
    ("roce_tos", "RoCE ToS for applications"),
    ("nccl", "NCCL environment"),
)


def platform_names() -> list[str]:
    return sorted(BUILTIN)


def get_platform(name: str) -> Platform:
    """The platform registered as ``name``. Raises KeyError for unknown names."""
    if name not in _loaded:
        module = importlib.import_module(BUILTIN[name])
        platform: Platform = module.PLATFORM
        if platform.capability.name != name:
            raise RuntimeError(f"{BUILTIN[name]} registers {platform.capability.name!r}, expected {name!r}")
        _loaded[name] = platform
    return _loaded[name]
