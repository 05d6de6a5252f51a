"""Lint rules are small registered functions with stable IDs.

A rule gets the :class:`LintContext` (the resolved fabric, its links and capabilities, all indexed once) and
yields :class:`Finding`\\ s that name the device, the port and the peer end, and say how to fix it. IDs are
stable forever (``FG-<TOPIC>-NNN``): waivers, CI baselines and SARIF history refer to them.

A rule looks at one device, its ports and the far end of each (the neighbourhood update lints a changed device
with only its cabled neighbours around it), unless it declares ``fabric_wide``: a rule that compares a device
with devices it is not cabled to must, naming every DeviceModel field it reads (:class:`FabricWide`). The
neighbourhood update runs those rules again over the whole fabric whenever a changed device changed one of those
fields (and trusts the previous render's verdict otherwise), so the declaration is what keeps it right.
tests/test_lint_cases.py checks every other rule on its failing fixtures as the neighbourhood update lints them
and with uncabled devices added, and each fabric-wide rule's failing fixtures against its declaration.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel

from fabricgen.models.device import DeviceModel
from fabricgen.models.diagnostics import (
    CONFIG_UNREADABLE,
    DEVICE_FACT_MISSING,
    INPUT_FILE,
    INPUT_REFERENCE,
    INPUT_SCHEMA,
    PLATFORM_LIMIT,
)

if TYPE_CHECKING:
    from fabricgen.lint.context import LintContext

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}
KeyPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: Severity
    device: str
    message: str
    fix: str
    port: str | None = None
    peer: str | None = None
    source: KeyPath | None = field(default=None, compare=False)  # where in intent/inventory to point
    # Where in a config file to point, (path, line): set by rules that know the line (FG-EVD-002); other
    # findings on a device read from configs point at the first line naming their port.
    where: tuple[str, int] | None = field(default=None, compare=False)
    # The word a config writes the setting with (NCCL_IB_TC): on a device read from configs the finding points at the
    # first line that names it (after its port's), in whichever of the device's files has it.
    setting: str | None = field(default=None, compare=False)

    @property
    def subject(self) -> str:
        here = f"{self.device}:{self.port}" if self.port else self.device
        return f"{here} ↔ {self.peer}" if self.peer else here


RuleFn = Callable[["LintContext", "Rule"], Iterable[Finding]]


@dataclass(frozen=True)
class FabricWide:
    """The DeviceModel fields a fabric-wide rule reads, as dotted paths (``ports.mtu``: the ``mtu`` of each port;
    see :func:`device_field`): of every device, of switches only, of GPU hosts (devices with a host part) only.
    Whether a device is a switch or a host is always part of what is compared."""

    devices: tuple[str, ...] = ()
    switches: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()

    def paths(self) -> tuple[str, ...]:
        return self.devices + self.switches + self.hosts

    def read(self, device: DeviceModel) -> tuple[Any, ...]:
        """What the rule reads of ``device``."""
        kind = "host" if device.host is not None else "switch"
        paths = self.devices + (self.hosts if kind == "host" else self.switches)
        return kind, tuple(device_field(device, path) for path in paths)

    @staticmethod
    def union(declarations: Iterable[FabricWide]) -> FabricWide:
        """Every field any of ``declarations`` reads, each once, in a stable order."""
        found = list(declarations)
        return FabricWide(*(tuple(sorted({path for d in found for path in getattr(d, kind)}))
                            for kind in ("devices", "switches", "hosts")))


@dataclass(frozen=True)
class CatalogEntry:
    """What the catalog (`fabricgen rules`, docs/rules.md, SARIF's rule list) says about a rule ID."""

    id: str
    name: str
    severity: Severity
    summary: str
    explanation: str


@dataclass(frozen=True)
class InputRule(CatalogEntry):
    """An input error (FG-INP-…): found while loading and resolving the intent, inventory or configs, before any
    lint rule runs. Nothing is rendered or linted while one stands, so it cannot be waived."""


@dataclass(frozen=True)
class Rule(CatalogEntry):
    check: RuleFn
    fabric_wide: FabricWide | None = None
    """Set on a rule that compares a device with devices it is not cabled to: the fields it reads."""

    def finding(self, device: str, message: str, fix: str, *, port: str | None = None, peer: str | None = None,
                source: KeyPath | None = None, severity: Severity | None = None,
                where: tuple[str, int] | None = None, setting: str | None = None) -> Finding:
        return Finding(self.id, severity or self.severity, device, message, fix, port, peer, source, where, setting)


RULES: dict[str, Rule] = {}
_ID = re.compile(r"^FG-[A-Z]{3}-\d{3}$")
_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


def rule(rule_id: str, name: str, severity: Severity, summary: str, *,
         fabric_wide: FabricWide | None = None) -> Callable[[RuleFn], RuleFn]:
    """Register a check. Its docstring is the long explanation: the why, then the fix. ``fabric_wide``: see
    :attr:`Rule.fabric_wide`."""

    def register(check: RuleFn) -> RuleFn:
        if not _ID.match(rule_id) or not _NAME.match(name):
            raise ValueError(f"bad rule id/name {rule_id!r}/{name!r}")
        taken = [*RULES.values(), *INPUT_RULES.values()]
        if any(r.id == rule_id or r.name == name for r in taken):
            raise ValueError(f"rule {rule_id} / {name} registered twice")
        for path in fabric_wide.paths() if fabric_wide is not None else ():
            _check_device_path(rule_id, path)
        explanation = inspect.cleandoc(check.__doc__ or "")
        RULES[rule_id] = Rule(rule_id, name, severity, summary, explanation, check, fabric_wide)
        return check

    return register


def device_field(device: DeviceModel, path: str) -> Any:
    """The value at the dotted ``path`` of ``device``: through a list, a list of each element's value; through
    None, None (``host.nics.mtu`` is None on a switch, the list of its NICs' MTUs on a host)."""
    return _read(device, path.split("."))


def _read(value: Any, names: list[str]) -> Any:
    if not names or value is None:
        return value
    if isinstance(value, list):
        return [_read(item, names) for item in value]
    return _read(getattr(value, names[0]), names[1:])


def _check_device_path(rule_id: str, path: str) -> None:
    """A declared path must name DeviceModel fields all the way: a misspelt one would read nothing, and the
    neighbourhood update would never see the field change."""
    model: type[BaseModel] | None = DeviceModel
    for name in path.split("."):
        field_info = model.model_fields.get(name) if model is not None else None
        if field_info is None:
            raise ValueError(f"{rule_id}: fabric_wide path {path!r} names no DeviceModel field at {name!r}")
        model = _model_in(field_info.annotation)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model an annotation holds (``X``, ``X | None``, ``list[X]``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((found for arg in get_args(annotation) if (found := _model_in(arg)) is not None), None)


def all_rules() -> list[Rule]:
    """The lint rules: what `lint` runs."""
    _register_lint_rules()
    return [RULES[key] for key in sorted(RULES)]


def _register_lint_rules() -> None:
    import fabricgen.lint.rules  # noqa: F401  (registers every rule module; after the first call, a dict lookup)


def catalog() -> list[CatalogEntry]:
    """Every rule ID fabricgen reports, by ID: the input errors and the lint rules."""
    entries: list[CatalogEntry] = [*INPUT_RULES.values(), *all_rules()]
    return sorted(entries, key=lambda entry: entry.id)


def catalog_entry(rule_id: str) -> CatalogEntry:
    """The catalog's entry of ``rule_id``, also before lint ran (an input error names a lint rule found while
    loading: its entry is registered here)."""
    if rule_id in INPUT_RULES:
        return INPUT_RULES[rule_id]
    _register_lint_rules()
    return RULES[rule_id]


_NOT_WAIVABLE = (
    "Not waivable: while an input error stands nothing is linted or rendered, so there is nothing a waiver could\n"
    "apply to (a waiver naming an FG-INP rule is itself refused). `fabricgen lint` and `render` exit with status 2\n"
    "and print each error with its file, line and column; `--format json|sarif` reports them as findings.")


def _input_rule(rule_id: str, name: str, summary: str, explanation: str) -> InputRule:
    return InputRule(rule_id, name, "error", summary, f"{inspect.cleandoc(explanation)}\n\n{_NOT_WAIVABLE}")


# Their IDs are fabricgen.models.diagnostics' (the loaders tag each diagnostic); the texts are here, with the catalog's.
INPUT_RULES: dict[str, InputRule] = {entry.id: entry for entry in (
    _input_rule(INPUT_FILE, "input-file-unreadable", "every input file is readable YAML within the size limits", """
        The intent file and the inventory's hosts.yaml (groups.yaml and defaults.yaml when present) must exist, be
        regular UTF-8 files within the size limits, and parse as YAML: no syntax error, duplicate key, merge key
        (<<) or unsupported tag. The diagnostic points at the line and column where the parser stopped.

        Fix: correct the YAML at that position (indentation and quoting are the usual culprits), or raise the
        named limit (FABRICGEN_MAX_*) if the file is legitimately that large."""),
    _input_rule(INPUT_SCHEMA, "input-schema-violation", "every key and value is one the schema accepts", """
        Every key of the intent and of each inventory host must be one the schema knows, with a value of its type
        and range: a misspelt key, a string where a number belongs, a DSCP above 63 or a missing required key
        stops the load. `fabricgen schema intent|inventory` prints the JSON Schema an editor can check as you
        type.

        Fix: as the hint says (a misspelt key gets "did you mean"), or see `fabricgen schema`."""),
    _input_rule(INPUT_REFERENCE, "input-reference-unknown", "every name the input refers to exists", """
        A value that names something else must name something that exists and fits: the RDMA and CNP classes
        (`rdma.class`, `rdma.cnp_class`) must be QoS classes, `rdma.dscp` one of its class's DSCPs, a switch's
        management address inside `management.subnet`.

        Fix: name an existing class, DSCP or address (the hint lists the candidates)."""),
    _input_rule(PLATFORM_LIMIT, "platform-cannot-express", "the intent asks only what each platform can express", """
        A setting some device's platform cannot configure would be silently dropped or refused by the device: a
        PFC watchdog action it lacks, watchdog timers off its step, headroom by a method its buffer model
        overrides, a vendor headroom table for hardware fabricgen has none for, a SONiC release whose headroom
        formula fabricgen does not know. The message names the platform or the device.

        Fix: change the intent to what the platform supports (the hint says what), or the device's platform or
        buffer model in the inventory."""),
    _input_rule(DEVICE_FACT_MISSING, "device-fact-missing", "each device has the facts its platform needs", """
        Some settings are computed from facts only the inventory knows: PFC headroom from a lossless port's speed
        and its switch's ASIC, SONiC's PORT table from each port's `lanes`, a host's NIC script from each RDMA
        port's `rdma_device`, NCCL's bootstrap interface from `frontend_interface`, a switch's management
        interface from its address (`data.mgmt_address` when `hostname` is a DNS name).

        Fix: add the missing key to the device (or its group) in the inventory, as the hint says."""),
    _input_rule(CONFIG_UNREADABLE, "config-unreadable", "every config `lint --configs` reads is parseable text", """
        `fabricgen lint --configs DIR` reads existing configs; a file that is not UTF-8 text, is binary, is nested
        too deep or does not parse as its platform's format cannot be judged, and linting it anyway would turn
        missing evidence into a pass. Nothing is linted while one stands.

        Fix: replace the file with the device's config as the device saves it (or as `fabricgen render` wrote
        it)."""),
)}


def rule_selector(select: tuple[str, ...], ignore: tuple[str, ...]) -> Callable[[str], bool]:
    """Whether a rule ID is reported under `lint --select/--ignore`: each pattern is a rule ID (FG-PFC-003) or a
    prefix of whole parts (FG-PFC, FG); with --select only the rules it matches, less those --ignore matches.
    Raises ValueError naming a pattern that matches no rule of the catalog (a typo would silence nothing, or
    everything)."""
    ids = [entry.id for entry in catalog()]
    for pattern in (*select, *ignore):
        if not any(_matches(rule_id, pattern) for rule_id in ids):
            raise ValueError(f"{pattern!r} matches no rule ID; give an ID (FG-PFC-003) or a prefix of one "
                             "(FG-PFC); `fabricgen rules` lists them")

    def reported(rule_id: str) -> bool:
        chosen = not select or any(_matches(rule_id, pattern) for pattern in select)
        return chosen and not any(_matches(rule_id, pattern) for pattern in ignore)
    return reported


def _matches(rule_id: str, pattern: str) -> bool:
    wanted = pattern.strip().upper()
    return rule_id == wanted or rule_id.startswith(f"{wanted}-")
