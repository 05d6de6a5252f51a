"""The intent: what the fabric must do, once, independent of vendor.

One file says which DSCP is RDMA, which priority is lossless, where ECN marks, how CNPs travel, the MTUs,
the PFC watchdog and headroom policy, and the out-of-band management network. ``profile: roce`` fills in
a complete, sensible class set (NVIDIA's ``nv set qos roce`` recipe) that every key can override.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, PlainValidator, WithJsonSchema, model_validator
from pydantic_core import PydanticCustomError

from fabricgen.models.common import (
    DEVICE_NAME,
    PORT_NAME,
    ClassName,
    IpAddress,
    IpNetwork,
    StrictModel,
    Text,
    name_like,
    not_a_path,
)
from fabricgen.models.diagnostics import INPUT_REFERENCE, INPUT_SCHEMA
from fabricgen.models.units import ByteSize

Dscp = Annotated[int, Field(ge=0, le=63)]
Priority = Annotated[int, Field(ge=0, le=7, description="802.1p / switch priority; also the traffic class")]


class Scheduling(StrictModel):
    """Egress scheduling of a class: strict priority, or a DWRR share in percent."""

    strict: bool
    weight: int | None = None


def _parse_scheduling(value: Any) -> Any:
    if isinstance(value, Scheduling):
        return value
    if value == "strict":
        return Scheduling(strict=True)
    if isinstance(value, dict) and set(value) == {"dwrr"}:
        weight = value["dwrr"]
        if isinstance(weight, int) and not isinstance(weight, bool) and 1 <= weight <= 100:
            return Scheduling(strict=False, weight=weight)
    raise ValueError("write `strict` or `{dwrr: <weight 1-100>}`")


SchedulingSpec = Annotated[
    Scheduling,
    BeforeValidator(_parse_scheduling),
    WithJsonSchema({"anyOf": [{"const": "strict"},
                              {"type": "object", "additionalProperties": False, "required": ["dwrr"],
                               "properties": {"dwrr": {"type": "integer", "minimum": 1, "maximum": 100}}}]}),
]


def _parse_dscp_set(value: Any) -> Literal["default"] | list[int]:
    """`default`, one DSCP, or a list of DSCPs 0..63 — one clear message instead of a union's two."""
    if value == "default":
        return "default"
    values = [value] if isinstance(value, int) else value
    if not isinstance(values, list) or not values:
        raise ValueError("write `default` or a list of DSCP values, e.g. [26]")
    for dscp in values:
        if not isinstance(dscp, int) or isinstance(dscp, bool) or not 0 <= dscp <= 63:
            raise ValueError(f"{dscp!r} is not a DSCP value (0-63)")
    if len(set(values)) != len(values):
        raise ValueError("a DSCP is listed twice")
    return sorted(values)


DscpSet = Annotated[
    Literal["default"] | list[int],
    PlainValidator(_parse_dscp_set),
    WithJsonSchema({"anyOf": [{"const": "default"},
                              {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 63},
                               "minItems": 1, "uniqueItems": True}],
                    "description": "DSCP values of the class, or `default` for every DSCP no other class lists"}),
]


def lint_condition(rule: str, kind: str, message: str) -> PydanticCustomError:
    """A model validator's refusal that is a lint rule's condition, found while loading: load names the rule
    (``ctx["rule"]``) at the end of the message, as `fabricgen lint` would."""
    return PydanticCustomError(kind, message.replace("{", "{{").replace("}", "}}"), {"rule": rule})


class Ecn(StrictModel):
    """WRED/ECN marking on the class's egress queue: marking starts at ``min`` and reaches
    ``probability`` % at ``max`` (queue depth)."""

    min: ByteSize
    max: ByteSize
    probability: int = Field(default=100, ge=1, le=100, description="mark probability at max, percent")

    @model_validator(mode="after")
    def _min_not_above_max(self) -> Ecn:
        if self.min > self.max:
            raise lint_condition("FG-ECN-001", "ecn_min_above_max",
                                 f"ECN min ({self.min} B) is above max ({self.max} B); swap them")
        return self


class QosClass(StrictModel):
    dscp: DscpSet
    priority: Priority
    queue: int | None = Field(default=None, ge=0, le=7, description="egress queue; default = priority")
    lossless: bool = Field(default=False, description="PFC on this priority (no-drop)")
    scheduling: SchedulingSpec
    ecn: Ecn | None = None

    @property
    def egress_queue(self) -> int:
        return self.priority if self.queue is None else self.queue


class Qos(StrictModel):
    classes: dict[ClassName, QosClass] = Field(min_length=1)


CE = 3  # the ECN field's Congestion Experienced code point (RFC 3168)


def _not_congestion_experienced(bits: int) -> int:
    """lint helper (issue 26): CE in the ToS is refused at the key that says it."""
    if bits == CE:
        raise lint_condition("FG-CLS-005", "tos_ecn_ce", "tos_ecn_bits 3 is CE (Congestion Experienced, RFC 3168): "
                             "every RoCE packet would leave the host already marked congested, and the receiving NIC "
                             "would send a CNP for each one; use 2 (ECT(0)), 1 (ECT(1)) or 0")
    return bits


class Rdma(StrictModel):
    traffic_class: ClassName = Field(alias="class", description="the QoS class that carries RoCEv2")
    dscp: Dscp | None = Field(default=None, description="DSCP applications mark RoCE with; default: the "
                                                         "class's only DSCP")
    cnp_class: ClassName = Field(description="the QoS class CNPs travel in (normally strict priority)")
    dcqcn: bool = Field(default=True, description="DCQCN reaction+notification points on the NICs")
    tos_ecn_bits: Annotated[int, AfterValidator(_not_congestion_experienced)] = Field(default=0, ge=0, le=3,
                              description="ECN bits in the application ToS byte: ToS = DSCP<<2 | bits")
    path_mtu: Literal[1024, 2048, 4096] = Field(default=4096, description="RoCE path MTU (IB MTU enum)")
    gid_index: int = Field(default=3, ge=0, le=255,
                           description="NCCL_IB_GID_INDEX: 3 is RoCEv2/IPv4 in the default mlx5 GID table")


class Mtu(StrictModel):
    host: int = Field(default=9000, ge=1280, le=9978, description="NIC netdev MTU on GPU hosts")
    fabric: int = Field(default=9100, ge=1280, le=9216, description="switch port MTU on every data hop")
    management: int = Field(default=1500, ge=1280, le=9216)


class Watchdog(StrictModel):
    enabled: bool = True
    detection_ms: int = Field(default=200, ge=100, le=5000)
    restoration_ms: int = Field(default=200, ge=100, le=60000)
    poll_ms: int = Field(default=100, ge=100, le=1000)
    action: Literal["drop", "forward", "alert"] = "drop"

    @model_validator(mode="after")
    def _poll_fits(self) -> Watchdog:
        if self.poll_ms > min(self.detection_ms, self.restoration_ms):
            raise lint_condition("FG-PFC-004", "watchdog_poll_too_long",
                                 "poll_ms must not exceed detection_ms or restoration_ms")
        return self


class Headroom(StrictModel):
    """How PFC headroom (xon/xoff/size) is sized per lossless port."""

    method: Literal["formula", "vendor-table"] = Field(
        default="formula",
        description="formula: SONiC/NVIDIA headroom formula with the ASIC's constants; vendor-table: the "
                    "SKU's shipped pg_profile_lookup rows (cable rounded up to the next row)")
    small_packet_percent: int = Field(default=50, ge=0, le=100)
    lossless_mtu: int = Field(default=1024, ge=64, le=9216, description="assumed lossless packet size")
    default_cable_m: int = Field(default=40, ge=1, le=10000,
                                 description="used where the inventory gives no cable length")
    shared_headroom_pool: bool = False


class Pfc(StrictModel):
    watchdog: Watchdog = Watchdog()
    headroom: Headroom = Headroom()


class Management(StrictModel):
    """The out-of-band network: its own VLAN on OOB switches, its own VRF on every device."""

    vlan: int = Field(ge=2, le=4094)
    subnet: IpNetwork
    gateway: IpAddress
    vrf: ClassName = "mgmt"

    @model_validator(mode="after")
    def _gateway_in_subnet(self) -> Management:
        if self.gateway not in self.subnet:
            raise ValueError(f"gateway {self.gateway} is outside subnet {self.subnet}")
        if self.vrf.lower() == "default":
            raise ValueError("the management VRF cannot be the default VRF: management must not share the "
                             "fabric's routing table")
        return self


# A waiver refers to a device or port by name (lint prints it): the inventory's name rules, not a new pattern.
DeviceRef = Annotated[str, name_like(DEVICE_NAME, "device")]
PortRef = Annotated[str, name_like(PORT_NAME, "port"), AfterValidator(not_a_path)]


class Waiver(StrictModel):
    """Accept one lint finding on purpose. The reason is mandatory: it is what the next engineer reads."""

    rule: Annotated[str, Field(pattern=r"^FG-[A-Z]+-\d{3}$", description="rule ID, e.g. FG-ECN-004")]
    reason: Annotated[Text, Field(min_length=10, description="why this is acceptable here")]
    device: DeviceRef | None = Field(default=None, description="only on this device (default: everywhere)")
    port: PortRef | None = Field(default=None, description="only on this port of `device`")


class Lint(StrictModel):
    waive: list[Waiver] = Field(default_factory=list)


class Intent(StrictModel):
    fabric: ClassName = Field(description="fabric name")
    description: Text = ""
    profile: Literal["roce"] | None = Field(
        default=None, description="one knob: `roce` expands to NVIDIA's RoCE recipe (`fabricgen profile show roce` "
                                  "prints it); any key the intent writes overrides the profile's")
    qos: Qos = Field(description="the QoS classes; with `profile:`, overrides of the profile's (any key may be "
                                 "left out, `null` removes one of its classes)")
    rdma: Rdma = Field(description="which class carries RoCEv2 and which CNPs; with `profile:`, overrides of the "
                                   "profile's")
    mtu: Mtu = Mtu()
    pfc: Pfc = Pfc()
    management: Management
    data_subnets: list[IpNetwork] = Field(
        default_factory=list, description="IP subnets of the data fabric; none may overlap management.subnet")
    lint: Lint = Lint()

    def rdma_class(self) -> QosClass:
        return self.qos.classes[self.rdma.traffic_class]

    def cnp_class(self) -> QosClass:
        return self.qos.classes[self.rdma.cnp_class]

    def rdma_dscp(self) -> int:
        if self.rdma.dscp is not None:
            return self.rdma.dscp
        dscps = self.rdma_class().dscp
        assert isinstance(dscps, list)  # check_intent() guarantees a single explicit DSCP here
        return dscps[0]


# The one-knob profile. Values follow NVIDIA's `nv set qos roce` (lossless mode): DSCP 26 → prio 3 lossless
# with ECN 150 KB..1.5 MB at 100 %, CNP DSCP 48 → prio 6 strict, everything else prio 0; DWRR 50/50.
PROFILES: dict[str, dict[str, Any]] = {
    "roce": {
        "qos": {"classes": {
            "default": {"dscp": "default", "priority": 0, "scheduling": {"dwrr": 50}},
            "rdma": {"dscp": [26], "priority": 3, "lossless": True, "scheduling": {"dwrr": 50},
                     "ecn": {"min": "150KB", "max": "1500KB", "probability": 100}},
            "cnp": {"dscp": [48], "priority": 6, "scheduling": "strict"},
        }},
        "rdma": {"class": "rdma", "cnp_class": "cnp", "dcqcn": True},
    },
}


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Override wins; mappings merge key by key; ``null`` in the override deletes the key."""
    merged = dict(base)
    for key, value in override.items():
        if value is None and key in base and isinstance(base[key], dict):
            merged.pop(key)
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            merged[key] = deep_merge(base[key], value)
        else:
            merged[key] = value
    return merged


def expand_profile(raw: dict[str, Any]) -> dict[str, Any]:
    """Apply ``profile:`` (if any) under the user's keys. Unknown profiles are left to schema validation."""
    profile = PROFILES.get(str(raw.get("profile")))
    return deep_merge(profile, raw) if profile else raw


# A cross-field problem: (key path, message, hint, rule ID). The rule is the lint rule whose condition it is
# (load stops on it, and its text ends with the ID), or an input-error rule (fabricgen.models.diagnostics).
IntentProblem = tuple[tuple[str | int, ...], str, str, str]
DSCP_UNMAPPED, CLASSES_SHARE_A_QUEUE, DWRR_NOT_100 = "FG-CLS-001", "FG-SCH-002", "FG-SCH-001"


def check_intent(intent: Intent) -> list[IntentProblem]:
    """Cross-field rules a schema cannot express. Returns (key path, message, hint, rule ID) tuples."""
    problems: list[IntentProblem] = []
    classes = intent.qos.classes
    problems += _check_dscp_coverage(classes)
    problems += _check_unique(classes, "priority", lambda c: c.priority, INPUT_SCHEMA)
    problems += _check_unique(classes, "queue", lambda c: c.egress_queue, CLASSES_SHARE_A_QUEUE)
    problems += _check_weights(classes)
    problems += _check_rdma(intent)
    problems += _check_waivers(intent)
    return problems


def _check_waivers(intent: Intent) -> list[IntentProblem]:
    """An input error stops the load before lint runs: a waiver cannot reach it, so naming one is a mistake."""
    return [(("lint", "waive", index, "rule"), f"{waiver.rule} is an input error, which cannot be waived",
             "fix the input instead; lint.waive takes lint rules (`fabricgen rules`)", INPUT_SCHEMA)
            for index, waiver in enumerate(intent.lint.waive) if waiver.rule.startswith("FG-INP-")]


def _check_dscp_coverage(classes: dict[str, QosClass]) -> list[IntentProblem]:
    problems: list[IntentProblem] = []
    owner: dict[int, str] = {}
    defaults = [name for name, cls in classes.items() if cls.dscp == "default"]
    for name, cls in classes.items():
        for dscp in cls.dscp if isinstance(cls.dscp, list) else []:
            if dscp in owner:
                problems.append((("qos", "classes", name, "dscp"), f"DSCP {dscp} is already in class "
                                 f"{owner[dscp]!r}", "every DSCP belongs to exactly one class", DSCP_UNMAPPED))
            owner[dscp] = name
    if len(defaults) > 1:
        problems.append((("qos", "classes", defaults[1], "dscp"), "more than one class has `dscp: default`",
                         "keep `default` on one class", DSCP_UNMAPPED))
    if not defaults and len(owner) < 64:
        problems.append((("qos", "classes"), f"{64 - len(owner)} DSCP values belong to no class",
                         "give one class `dscp: default` to catch them", DSCP_UNMAPPED))
    return problems


def _check_unique(classes: dict[str, QosClass], what: str, key: Any, rule: str) -> list[IntentProblem]:
    seen: dict[int, str] = {}
    problems: list[IntentProblem] = []
    for name, cls in classes.items():
        value = key(cls)
        if value in seen:
            problems.append((("qos", "classes", name, what), f"{what} {value} is also used by class "
                             f"{seen[value]!r}", f"give each class its own {what}", rule))
        seen[value] = name
    return problems


def _check_weights(classes: dict[str, QosClass]) -> list[IntentProblem]:
    weights = {name: cls.scheduling.weight for name, cls in classes.items() if not cls.scheduling.strict}
    total = sum(w or 0 for w in weights.values())
    if weights and total != 100:
        shares = ", ".join(f"{n}={w}" for n, w in weights.items())
        return [(("qos", "classes"), f"DWRR weights sum to {total}, not 100 ({shares})",
                 "NIC ETS (mlnx_qos --tcbw) rejects any other sum; adjust the weights", DWRR_NOT_100)]
    return []


def _check_rdma(intent: Intent) -> list[IntentProblem]:
    classes = intent.qos.classes
    rdma = intent.rdma
    problems: list[IntentProblem] = []
    for key, name in (("class", rdma.traffic_class), ("cnp_class", rdma.cnp_class)):
        if name not in classes:
            problems.append((("rdma", key), f"no QoS class named {name!r}",
                             f"one of: {', '.join(sorted(classes))}", INPUT_REFERENCE))
    if problems:
        return problems
    if rdma.traffic_class == rdma.cnp_class:
        problems.append((("rdma", "cnp_class"), "CNPs must not share the RDMA class",
                         "give CNPs their own strict-priority class", CLASSES_SHARE_A_QUEUE))
    return problems + _check_rdma_dscps(intent)


def _check_rdma_dscps(intent: Intent) -> list[IntentProblem]:
    """The RoCE and CNP DSCPs: each one explicit value (applications and NICs mark one)."""
    classes = intent.qos.classes
    rdma = intent.rdma
    problems: list[IntentProblem] = []
    rdma_dscps = classes[rdma.traffic_class].dscp
    if rdma_dscps == "default":
        problems.append((("qos", "classes", rdma.traffic_class, "dscp"),
                         "the RDMA class cannot be the default class", "list the RoCE DSCP (e.g. [26])",
                         INPUT_SCHEMA))
    elif rdma.dscp is None and len(rdma_dscps) != 1:
        problems.append((("rdma", "dscp"), "the RDMA class has several DSCPs",
                         "say which one applications mark: rdma.dscp", INPUT_SCHEMA))
    elif rdma.dscp is not None and rdma.dscp not in rdma_dscps:
        problems.append((("rdma", "dscp"), f"DSCP {rdma.dscp} is not in class {rdma.traffic_class!r}",
                         "add it to the class's dscp list", INPUT_REFERENCE))
    if classes[rdma.cnp_class].dscp == "default":
        problems.append((("qos", "classes", rdma.cnp_class, "dscp"), "the CNP class cannot be the "
                         "default class", "list the CNP DSCP (e.g. [48])", INPUT_SCHEMA))
    return problems
    if rdma.traffic_class == rdma.cnp_class:
        problems.append((("rdma", "cnp_class"), "CNPs must not share the RDMA class",
                         "give CNPs their own strict-priority class"))
    rdma_dscps = classes[rdma.traffic_class].dscp
    if rdma_dscps == "default":
        problems.append((("qos", "classes", rdma.traffic_class, "dscp"),
                         "the RDMA class cannot be the default class", "list the RoCE DSCP (e.g. [26])"))
    elif rdma.dscp is None and len(rdma_dscps) != 1:
        problems.append((("rdma", "dscp"), "the RDMA class has several DSCPs",
                         "say which one applications mark: rdma.dscp"))
    elif rdma.dscp is not None and rdma.dscp not in rdma_dscps:
        problems.append((("rdma", "dscp"), f"DSCP {rdma.dscp} is not in class {rdma.traffic_class!r}",
                         "add it to the class's dscp list"))
    if classes[rdma.cnp_class].dscp == "default":
        problems.append((("qos", "classes", rdma.cnp_class, "dscp"), "the CNP class cannot be the "
                         "default class", "list the CNP DSCP (e.g. [48])"))
    return problems
