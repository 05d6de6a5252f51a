"""The resolved fabric: one DeviceModel per device with every decision already made.

Renderers read these and only format; lint (and config readers) compare these. Dumped as YAML/JSON by
``fabricgen resolve`` and golden-tested on its own, like AVD's structured config.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

# pydantic's four instance slots (BaseModel.__slots__), set by their descriptors in Resolved._holding.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_new_object = object.__new__


class Resolved(BaseModel):
    """A resolved model. Every field that may be None defaults to None: dumps leave out None values (resolved.json
    is written with exclude_none), and a dump must validate back to the model it came from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    _field_order: ClassVar[tuple[str, ...]] = ()
    _required: ClassVar[tuple[str, ...]] = ()
    _every_field: ClassVar[set[str]] = set()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls._field_order = tuple(cls.model_fields)
        cls._required = tuple(name for name, field in cls.model_fields.items() if field.is_required())
        cls._every_field = set(cls.model_fields)

    @classmethod
    def from_resolve(cls, values: dict[str, Any]) -> Self:
        """An instance holding ``values`` as they are: what resolve computed, from validated inputs, with nested
        models already built. Validating them again cost a third of resolve (146k ports at 32,768 GPUs) and
        found nothing: tests/test_resolve.py checks that every bundled and generated fabric resolves to models
        equal to their validation. Unknown names are still refused, and missing ones get their defaults.

        The fields are stored in declaration order, as validation stores them (pydantic dumps a model in the
        order of its ``__dict__``): resolve lists them in that order, and anything else is put in order here."""
        if tuple(values) == cls._field_order:
            # Every field given: the one set of all field names, shared by every such instance. A set of 19 names
            # is 1.2 KB, and resolve builds 178k ports and NICs at 32,768 GPUs (220 MB). Sharing is safe: the
            # models are frozen, and pydantic copies the set before it changes one (model_copy, __copy__).
            given = cls._every_field
        else:
            given = set(values)
            values = cls._complete(values)
        return cls._holding(values, given)

    @classmethod
    def all_in_field_order(cls, many: list[dict[str, Any]]) -> list[Self]:
        """:meth:`from_resolve` of each of ``many``, dicts that list every field in declaration order, as the
        caller builds them (resolve's switch ports, 105k at 32,768 GPUs): not checked again per instance; a test
        holds the caller's keys to the order. One call per switch, not per port, with _holding's four slots
        inline."""
        every_field = cls._every_field
        models = []
        for values in many:
            model = _new_object(cls)
            _set_dict(model, values)
            _set_fields_set(model, every_field)
            _set_extra(model, None)
            _set_private(model, None)
            models.append(model)
        return models

    @classmethod
    def _holding(cls, values: dict[str, Any], given: set[str]) -> Self:
        model = _new_object(cls)
        # What pydantic's own model_construct sets, without its per-field Python loop, through the slots' own
        # descriptors (object.__setattr__ looks each name up on the class first: 65 models per leaf).
        _set_dict(model, values)
        _set_fields_set(model, given)
        _set_extra(model, None)
        _set_private(model, None)
        return model

    @classmethod
    def _complete(cls, values: dict[str, Any]) -> dict[str, Any]:
        unknown = values.keys() - set(cls._field_order)
        missing = [name for name in cls._required if name not in values]
        if unknown or missing:
            raise TypeError(f"{cls.__name__}: unknown fields {sorted(unknown)}, missing fields {missing}")
        fields = cls.model_fields
        return {name: values[name] if name in values else fields[name].get_default(call_default_factory=True)
                for name in cls._field_order}


class EcnThresholds(Resolved):
    min_bytes: int
    max_bytes: int
    probability_pct: int


EcnUnit = Literal["segments", "packets", "microseconds", "milliseconds"]  # no byte count: EcnUnconverted's


class EcnUnconverted(Resolved):
    """ECN marking a config read back sets at thresholds that are no byte count (EOS segments or time, NX-OS
    packets), as written. fabricgen sizes and checks ECN in bytes: such a queue marks, but its thresholds are not
    judged (FG-ECN-010 says so). The intent road never has one."""

    min: int
    max: int
    unit: EcnUnit
    probability_pct: int


class QueueModel(Resolved):
    """One egress queue and the class mapped to it."""

    index: int
    traffic_class: int
    class_name: str
    lossless: bool
    scheduler: Literal["strict", "dwrr"]
    weight: int | None = Field(default=None, description="DWRR share, percent; required for dwrr queues")
    ecn: EcnThresholds | None = None
    ecn_unconverted: EcnUnconverted | None = None  # a config's ECN in other units (then ecn is None)

    @property
    def marks_ecn(self) -> bool:
        """Whether the queue marks ECN at all, in bytes or in units fabricgen does not convert."""
        return self.ecn is not None or self.ecn_unconverted is not None

    @model_validator(mode="after")
    def _dwrr_has_weight(self) -> QueueModel:
        if self.scheduler == "dwrr" and not self.weight:
            raise ValueError(f"DWRR queue {self.index} needs a weight")
        return self


class WatchdogModel(Resolved):
    detection_ms: int
    restoration_ms: int
    poll_ms: int
    action: Literal["drop", "forward", "alert"]


# A shared-buffer dynamic threshold: one region (a lossless PG) may hold alpha × the pool's free buffer, so one
# congested PG alone stops growing, and pauses, at alpha/(1+alpha) of the pool. The values Spectrum takes (NVIDIA
# Cumulus Linux qos_infra.conf, "ALPHA_0" .. "ALPHA_INFINITY"), as exact ratios.
AlphaRatio = Literal["0", "1/128", "1/64", "1/32", "1/16", "1/8", "1/4", "1/2", "1", "2", "4", "8", "16", "32", "64",
                     "infinity"]


class LosslessPoolModel(Resolved):
    """The shared-buffer pool a switch's lossless priority groups draw from, as a share of the ASIC's buffer, and
    the alpha that bounds one PG in it: what lint FG-ECN-002 places the PFC pause point with where a platform
    sizes its pools as shares (Cumulus: NVUE ``qos traffic-pool <pool> memory-percent`` and ``qos
    advance-buffer-config default-global ingress-lossless-buffer shared-alpha``). Read from a config; None in a
    resolved model (the pool the platform's renderer writes: ``Capability.lossless_pool``)."""

    percent: int = Field(ge=0, le=100, description="the pool's share of the buffer the headroom leaves, percent")
    alpha: AlphaRatio
    method: str = Field(description="which settings gave both numbers, and whose defaults filled what is not set")


class QosModel(Resolved):
    """Classification and scheduling, identical on every device of the fabric by construction."""

    dscp_to_tc: dict[int, int] = Field(description="all 64 DSCPs")
    tc_to_pg: dict[int, int] = Field(description="lossless TC n → PG n; everything else → PG 0")
    tc_to_queue: dict[int, int]
    pfc_priority_to_queue: dict[int, int]
    lossless_priorities: list[int]
    queues: list[QueueModel]
    rdma_dscp: int
    rdma_priority: int
    cnp_dscp: int
    cnp_priority: int
    watchdog: WatchdogModel | None = None
    trust: Literal["dscp", "pcp", "none"] = Field(default="dscp", description="what ingress classification reads: "
                                                  "the DSCP (routed RoCEv2), the VLAN tag's PCP, or nothing")
    lossless_pool: LosslessPoolModel | None = Field(default=None, description="the lossless PGs' pool as a config "
                                                    "read back sizes it (None: see LosslessPoolModel)")


class HeadroomModel(Resolved):
    """PFC headroom of one lossless priority group, bytes."""

    xon: int
    xoff: int
    size: int
    method: str = Field(description="how it was sized, with the constants' source")
    # A SONiC switch's headroom depends on two facts of the device that the config alone may not state; the
    # config reader needs them to say what the switch really reserves (see platforms/sonic/read.py).
    release: str | None = Field(default=None, description="SONiC: the release whose buffermgrd formula gave the "
                                                          "numbers")
    buffer_model: Literal["traditional", "dynamic"] | None = Field(
        default=None, description="SONiC DEVICE_METADATA buffer_model: dynamic = buffermgrd computes these numbers "
                                  "on the switch (the config holds no profile); traditional = the config's profile")
    lossless_mtu: int | None = Field(default=None, description="dynamic model: the lossless packet size buffermgrd "
                                                               "is told to size for (LOSSLESS_TRAFFIC_PATTERN)")
    small_packet_percent: int | None = Field(default=None, description="dynamic model: the share of small packets "
                                                                       "buffermgrd is told to size for")
    # Where the PG pauses (SAI saibuffer.h SAI_BUFFER_PROFILE_ATTR_SHARED_DYNAMIC_TH): read from a SONiC config;
    # None where the config does not say (the platform's default applies, see lint FG-ECN-002).
    dynamic_th: int | None = Field(default=None, description="SONiC: the lossless PG profile's dynamic_th, alpha = "
                                                             "2^dynamic_th of the pool's free buffer")
    pool_bytes: int | None = Field(default=None, description="SONiC: the size of the pool the profile draws from, "
                                                             "where the config sizes it (BUFFER_POOL)")


PortRole = Literal["host", "fabric", "mgmt", "oob-access", "rdma", "bmc", "frontend", "unused"]
# How a switch port forwards, which decides the MTU that applies to it: a routed (L3) port's `mtu` is its IP MTU;
# a switched (L2) port's frames follow the platform's L2 limit, which on some platforms is another knob (EOS:
# `l2 mtu`). Each platform's Capability says how it spells the MTU in each mode.
PortMode = Literal["routed", "switched"]


class PortModel(Resolved):
    name: str
    role: PortRole
    admin_up: bool
    speed_mbps: int | None = None
    lanes: str | None = None
    fec: str | None = None
    mtu: int
    peer: str | None = Field(default=None, description="`device:port` at the other end of the cable")
    cable_m: int | None = None
    cable_assumed: bool = Field(default=False, description="cable length not in inventory; default used")
    media: str | None = None
    description: str | None = None
    lossless: bool = False
    pfc_priorities: list[int] = Field(default_factory=list)
    headroom: HeadroomModel | None = None
    access_vlan: int | None = None
    mode: PortMode | None = Field(default=None, description="routed: data ports (host/fabric), the RoCE leaf/spine "
                                  "norm; switched: OOB access ports; None: ports fabricgen leaves in the "
                                  "platform's default mode (unused, management, host NICs)")
    tagged_vlans: list[int] | None = Field(default=None, description="VLANs the port carries tagged (trunk "
                                           "membership), as a config read back says; fabricgen renders none")
    qos: QosModel | None = Field(default=None, description="the QoS in effect on this port where its config binds "
                                 "other maps, trust, queues or watchdog than the device's; None: the device's qos")


class MgmtModel(Resolved):
    vrf: str
    interface: str
    address: str | None = Field(default=None, description="ip/prefix on the management interface")
    gateway: str | None = None
    vlan: int
    mtu: int


class NicModel(Resolved):
    """One RDMA NIC port on a GPU host, in the vocabulary of mlnx_qos and the mlx5 sysfs files."""

    interface: str
    rdma_device: str
    mtu: int
    trust: Literal["dscp", "pcp"]
    pfc: list[int] = Field(description="8 flags, index = priority")
    prio_tc: list[int] = Field(description="8 TCs, index = priority; a priority no class uses goes to the "
                                           "default class's TC")
    tsa: list[Literal["strict", "ets"]] = Field(description="8 values, index = TC; TCs no priority maps to are "
                                                          "strict with 0 %")
    tcbw: list[int] = Field(description="8 ETS shares, index = TC; sum 100, zero on strict TCs")
    dscp2prio: dict[int, int] = Field(description="the priority of every DSCP 0..63 under DSCP trust: the "
                                                  "switches' DSCP→TC map, all 64 code points")
    dcqcn_priorities: list[int]
    dcqcn_enabled: bool
    cnp_dscp: int
    cnp_priority: int
    roce_tos: int
    cable_m: int | None = None
    peer: str | None = None
    xoff_bytes: int = Field(description="mlx5 port_buffer.c xoff for this speed/cable/MTU")
    # Read from a host's config only (resolve leaves both None, so resolved models and their dumps are unchanged):
    roce_mode: Literal[1] | None = Field(default=None, description="1: the NIC's RDMA-CM default RoCE mode is v1, "
                                         "as its config sets it; None: RoCE v2, what fabricgen sets")
    dcbx: Literal["firmware"] | None = Field(default=None, description="firmware: DCBX left to the NIC firmware or "
                                             "an LLDP agent, as its config sets it; None: host-controlled, what "
                                             "fabricgen sets")


NIC_SHARED_FIELDS = ("pfc", "prio_tc", "tsa", "tcbw", "dscp2prio", "dcqcn_priorities")
"""the NicModel fields whose value resolve makes once for every NIC of a fabric (fabricgen.resolve.host): a dump of
the resolved models writes each one's text once (fabricgen.api.dump_device)"""


class HostModel(Resolved):
    nics: list[NicModel]
    nccl_env: dict[str, str]
    path_mtu: int


class DeviceModel(Resolved):
    name: str
    role: str
    platform: str
    hardware: str | None = None
    asic: str | None = None
    lossless_limit: int | None = Field(default=None, description="the SKU's lossless-class limit as the inventory "
                                                                 "declares it (data.lossless_limit)")
    mgmt: MgmtModel | None = Field(default=None, description="None on hosts: their BMC is not ours")
    qos: QosModel | None = Field(default=None, description="None on devices that carry no data traffic")
    ports: list[PortModel]
    host: HostModel | None = None


class WaiverModel(Resolved):
    rule: str
    reason: str
    device: str | None = None
    port: str | None = None


class PolicyModel(Resolved):
    """Fabric-wide expectations lint checks devices against (what the intent asked for)."""

    mgmt_vlan: int
    mgmt_subnet: str
    mgmt_vrf: str
    data_subnets: list[str]
    rdma_dscp: int
    rdma_priority: int
    cnp_dscp: int
    cnp_priority: int
    tos_ecn_bits: int
    dcqcn: bool
    rdma_lossless: bool = Field(description="false: a deliberately lossy RoCE design (ECN only)")
    headroom_method: str
    small_packet_percent: int
    lossless_mtu: int
    shared_headroom_pool: bool
    host_mtu: int
    fabric_mtu: int
    path_mtu: int
    class_dscps: dict[str, list[int]] = Field(description="explicitly listed DSCPs per class (the DSCPs in use)")
    waivers: list[WaiverModel]


class Fabric(Resolved):
    name: str
    devices: dict[str, DeviceModel]
    policy: PolicyModel | None = None
