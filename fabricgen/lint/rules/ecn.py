"""ECN/DCQCN: marking that starts before PFC, on every switch, answered by every NIC, with CNPs that travel."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction

from fabricgen.lint.context import End, LintContext
from fabricgen.lint.registry import Finding, Rule, rule
from fabricgen.lint.rules._util import (
    Problem,
    device_source,
    end_source,
    kib,
    per_port_qos,
    port_source,
    queue_for_tc,
    queue_in,
    queue_settings,
    rdma_ecn,
    remedy,
)
from fabricgen.models.device import DeviceModel, LosslessPoolModel, PolicyModel, QosModel, QueueModel
from fabricgen.resolve.headroom import (
    ASIC_BUFFER_BYTES,
    ASIC_CONSTANTS,
    PAUSE_QUANTA,
    HeadroomInputs,
    spectrum_headroom,
)

ECN_SOURCE = ("intent", "qos", "classes")


@rule("FG-ECN-001", "ecn-min-not-below-max", "error", "ECN kmin < kmax")
def ecn_min_not_below_max(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """WRED/ECN marks with a probability rising from kmin to kmax. kmin = kmax turns marking into a cliff (all or
    nothing, which makes DCQCN oscillate); kmin > kmax is refused by SONiC's YANG.

    Fix: kmin well below kmax (e.g. 150 KB / 1.5 MB, or the seed's 5 KB / 40 KB)."""
    yield from per_port_qos(ctx, r, _ecn_order_problems, queue_settings, located="qos.queues.ecn")


def _ecn_order_problems(device: DeviceModel, qos: QosModel) -> list[Problem]:
    return [(f"queue {q.index} ECN min {low} is not below max {high}", "lower ecn.min or raise ecn.max",
             f"set queue {q.index}'s ECN minimum threshold ({low}) below its maximum ({high})",
             (*ECN_SOURCE, q.class_name, "ecn"))
            for q in qos.queues for low, high in [_ecn_range(q)] if low is not None and high is not None]


def _ecn_range(queue: QueueModel) -> tuple[str, str] | tuple[None, None]:
    """The queue's ECN thresholds as written in a message when min is not below max (both in one unit, so a
    config's thresholds in segments or time are compared too), else (None, None)."""
    if queue.ecn is not None and queue.ecn.min_bytes >= queue.ecn.max_bytes:
        return kib(queue.ecn.min_bytes), kib(queue.ecn.max_bytes)
    other = queue.ecn_unconverted
    if other is not None and other.min >= other.max:
        return f"{other.min} {other.unit}", f"{other.max} {other.unit}"
    return None, None


@rule("FG-ECN-002", "ecn-max-above-pfc-pause-point", "error", "ECN kmax below the port's PFC pause point")
def ecn_max_above_pause_point(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """ECN must fire before PFC: if an ingress priority group can reach its pause point before the egress queue
    marks at full probability, PFC pauses the link while DCQCN has barely started.

    On shared-buffer switches the pause point is dynamic. A lossless PG may take alpha times the free buffer of
    the pool it draws from (SAI saibuffer.h, SAI_BUFFER_PROFILE_ATTR_SHARED_DYNAMIC_TH,
    https://github.com/opencomputeproject/SAI/blob/master/inc/saibuffer.h), so one congested PG alone stops
    growing, and pauses, at alpha/(1+alpha) of the pool: 1/2 at alpha 1, 1/5 at 1/4, 2/3 at 2.
    SONiC: a lossless PG's buffer profile sets alpha = 2^dynamic_th (0 is SONiC's default_dynamic_th and what
    fabricgen writes); the pool is the profile's BUFFER_POOL size where the config states it, else what the
    ASIC's buffer leaves after the lossless headroom reservations (SONiC's dynamic buffer model sizes the pool
    so, https://github.com/sonic-net/SONiC/blob/master/doc/qos/dynamically-headroom-calculation.md).
    Cumulus: the pool is a share of that buffer, `qos traffic-pool <pool> memory-percent`, and alpha is
    `qos advance-buffer-config default-global ingress-lossless-buffer shared-alpha`. Where a config sets
    neither, NVIDIA's defaults apply: all the buffer in default-lossy's pool, where lossless PGs stay, alpha 1
    (Cumulus Linux 5.14 User Guide, "Quality of Service", sections "Flow Control Buffers", "Advanced Buffer
    Tuning" and "Default Configuration Files", https://docs.nvidia.com/networking-ethernet-software/
    cumulus-linux-514/Layer-1-and-Switch-Ports/Quality-of-Service/); with `qos roce`, roce-lossless 50 % (5.9
    guide, "RDMA over Converged Ethernet - RoCE", "Verify RoCE Configuration", https://docs.nvidia.com/
    networking-ethernet-software/cumulus-linux-59/Layer-1-and-Switch-Ports/Quality-of-Service/
    RDMA-over-Converged-Ethernet-RoCE/). On the intent road: the 50 % fabricgen renders.
    Checked with the device's own numbers: on a device read from its config, its ECN maximum, its alpha (SONiC:
    the smallest dynamic_th, the port that pauses first) and pool, and the headroom its config reserves on the
    ports it makes lossless. A lossless port whose model holds no headroom (the switch sizes it itself: SONiC's
    dynamic buffer model, Cumulus) reserves what the Spectrum formula gives for its speed, cable and MTU. The
    ASIC's buffer size is fabricgen's for spectrum1-4 (data.asic): where it is unknown, a Cumulus switch's pause
    point cannot be placed, and a warning says so instead of guessing a size.

    Fix: lower ecn.max (NVIDIA uses 1.5 MB; the field report 40 KB); on a device whose config drifted, lower
    its RoCE queue's ECN maximum threshold or give the lossless pool back its share and alpha (SONiC: raise the
    lossless profile's dynamic_th; Cumulus: raise the lossless traffic-pool's memory-percent)."""
    estimate = _HeadroomEstimate(ctx.policy)
    pause_points: dict[str, _PausePoint | None] = {}

    def point_of(device: DeviceModel) -> _PausePoint | None:
        if device.name not in pause_points:
            pause_points[device.name] = _pause_point(estimate, device, ctx.switch_ports_of(device),
                                                     _lossless_pool(ctx, device))
        return pause_points[device.name]

    def above_pause_point(device: DeviceModel, qos: QosModel) -> list[Problem]:
        point = point_of(device)
        queue = queue_in(qos, qos.rdma_priority)
        if point is None or point.bytes is None or queue is None or queue.ecn is None \
                or queue.ecn.max_bytes < point.bytes:
            return []
        whose = "its config" if ctx.from_config(device) else "the intent"
        on_device = f"lower queue {queue.index}'s ECN maximum threshold ({kib(queue.ecn.max_bytes)}) below " \
                    f"{kib(point.bytes)}"
        if point.pool_share is not None:
            on_device += f", or give the lossless pool a larger memory-percent (now {point.pool_share.percent} %)"
        return [(f"ECN max {kib(queue.ecn.max_bytes)} is not below the PFC pause point ≈ {kib(point.bytes)} "
                 f"({point.describe(device, whose)})", "lower ecn.max", on_device,
                 (*ECN_SOURCE, queue.class_name, "ecn", "max"))]

    def setting(device: DeviceModel) -> object:
        """What the finding is about: the RoCE queue's ECN and the pool's share and alpha (a config that drifted
        in either is fixed on the device)."""
        pool = _lossless_pool(ctx, device)
        return rdma_ecn(device), (pool.percent, pool.alpha) if pool is not None else None

    yield from per_port_qos(ctx, r, above_pause_point, setting, located="qos.queues.ecn")
    yield from _unplaced_pause_points(ctx, r, point_of)


def _lossless_pool(ctx: LintContext, device: DeviceModel) -> LosslessPoolModel | None:
    """The lossless pool as a share of the buffer: the config's (a reader's), else what the platform renders."""
    if device.qos is not None and device.qos.lossless_pool is not None:
        return device.qos.lossless_pool
    return ctx.capability(device).lossless_pool


def _unplaced_pause_points(ctx: LintContext, r: Rule,
                           point_of: Callable[[DeviceModel], _PausePoint | None]) -> Iterator[Finding]:
    """A warning on each switch whose pool is a share of a buffer of unknown size: its RoCE queue's ECN maximum
    cannot be held against the pause point, and no size is guessed."""
    for device, _ in ctx.switch_ports:
        queue = queue_for_tc(device, device.qos.rdma_priority) if device.qos is not None else None
        point = point_of(device) if queue is not None and queue.ecn is not None else None
        if point is None or point.bytes is not None or queue is None or queue.ecn is None:
            continue
        fix = (f"set data.asic on {device.name} to its Spectrum generation (fabricgen knows the buffer of "
               f"{', '.join(ASIC_BUFFER_BYTES)})" if device.asic is None else
               f"fabricgen knows no buffer size for {device.asic}: hold ECN max below {point.share} of the lossless "
               "pool the switch reports")
        whose = "its config" if ctx.from_config(device) else "the intent"
        yield r.finding(device.name, f"ECN max {kib(queue.ecn.max_bytes)} cannot be held against the PFC pause "
                        f"point ({point.describe(device, whose)}): the size of {_buffer_of(device)} is unknown", fix,
                        source=(*ECN_SOURCE, queue.class_name, "ecn", "max"), severity="warning",
                        setting="qos.queues.ecn")


def _buffer_of(device: DeviceModel) -> str:
    return f"the {device.asic} buffer" if device.asic else "the switch's buffer"


DEFAULT_DYNAMIC_TH = 0  # SONiC: DEFAULT_LOSSLESS_BUFFER_PARAMETER default_dynamic_th, and fabricgen's profiles


@dataclass(frozen=True)
class _PausePoint:
    """Where one congested lossless PG of a switch pauses: alpha/(1+alpha) of its pool."""

    bytes: int | None  # None: the pool is a share of a buffer whose size is unknown
    share: str  # alpha/(1+alpha), as a fraction
    pool: int | None
    pool_stated: bool  # the pool's size is the config's BUFFER_POOL size (else: buffer minus headroom)
    dynamic_th: int
    th_stated: bool  # dynamic_th is the config's (else: the default)
    pool_share: LosslessPoolModel | None = None  # the pool as a share of the buffer, and its alpha (Cumulus)

    def pool_text(self, device: DeviceModel, whose: str) -> str:
        if self.pool_stated:
            return f"the lossless pool {whose} sizes"
        left = f"what {_buffer_of(device)} leaves after the headroom {whose} reserves"
        return left if self.pool_share is None else f"{self.pool_share.percent} % of {left}"

    def describe(self, device: DeviceModel, whose: str) -> str:
        pool = kib(self.pool) if self.pool is not None else "the lossless pool"
        if self.pool_share is not None:
            share = self.pool_share
            return f"{self.share} of {pool}, {self.pool_text(device, whose)}, alpha {share.alpha} ({share.method})"
        if self.th_stated:
            th = f"dynamic_th {self.dynamic_th} in {whose}"
        elif device.platform == "sonic":
            th = f"dynamic_th {self.dynamic_th}: SONiC's default"
        else:  # a platform that states no pool: the same alpha 1 is assumed
            th = f"dynamic_th {self.dynamic_th} assumed: {device.platform} is not read for it"
        return f"{self.share} of {pool}, {self.pool_text(device, whose)}; alpha = 2^dynamic_th, {th}"


def _pause_share(alpha: Fraction | None) -> Fraction:
    """alpha/(1+alpha): what one congested region may take of its pool (None: alpha infinity, all of it)."""
    return Fraction(1) if alpha is None else alpha / (1 + alpha)


def _share_text(share: Fraction) -> str:
    return "all" if share == 1 else "none" if share == 0 else f"{share.numerator}/{share.denominator}"


def _pause_point(estimate: _HeadroomEstimate, device: DeviceModel, ports: list[End],
                 pool_share: LosslessPoolModel | None) -> _PausePoint | None:
    """Where one congested PG pauses (None: neither the ASIC's buffer size nor the pool's is known, on a platform
    that does not size its pool as a share of the buffer)."""
    lossless = [end for end in ports if end.pfc_priorities]
    headrooms = [end.headroom for end in lossless if end.headroom is not None]
    pools = [h.pool_bytes for h in headrooms if h.pool_bytes is not None] if pool_share is None else []
    thresholds = [h.dynamic_th for h in headrooms if h.dynamic_th is not None]
    th = min(thresholds, default=DEFAULT_DYNAMIC_TH)
    share = _pause_share(_alpha(pool_share, th))
    buffer = ASIC_BUFFER_BYTES.get(device.asic or "")
    pool: int | None = None
    if pools:
        pool = min(pools)
    elif buffer is not None:
        pool = buffer - sum(estimate.size(device, end) * len(end.pfc_priorities) for end in lossless)
        if pool_share is not None:
            pool = pool * pool_share.percent // 100
    elif pool_share is None:
        return None
    # A share of a buffer of unknown size is placed only where the PG may take none of it.
    point = (0 if share == 0 else None) if pool is None else max(pool, 0) * share.numerator // share.denominator
    return _PausePoint(point, _share_text(share), pool, bool(pools), th, bool(thresholds), pool_share)


def _alpha(pool_share: LosslessPoolModel | None, dynamic_th: int) -> Fraction | None:
    """The lossless PGs' alpha: the pool's where it is stated as a share (None: infinity), else 2^dynamic_th."""
    if pool_share is None:
        return Fraction(2) ** dynamic_th
    return None if pool_share.alpha == "infinity" else Fraction(pool_share.alpha)


class _HeadroomEstimate:
    """A lossless port's headroom: the model's where it has one, else the Spectrum formula's for the port (memoised:
    thousands of ports share a handful of speed/cable/MTU combinations)."""

    def __init__(self, policy: PolicyModel | None) -> None:
        self.policy = policy
        self.sizes: dict[tuple[str, int, int, int, int], int] = {}

    def size(self, device: DeviceModel, end: End) -> int:
        if end.headroom is not None:
            return end.headroom.size
        speed, cable, asic = end.speed_mbps, end.cable_m, device.asic or ""
        if speed is None or speed not in PAUSE_QUANTA or cable is None or asic not in ASIC_CONSTANTS:
            return 0  # nothing to size it from: counted as no reservation, as before the switch sizes it
        lanes = end.lanes.count(",") + 1 if end.lanes else 4
        key = (asic, speed, cable, end.port_mtu, lanes)
        if key not in self.sizes:
            params = HeadroomInputs(speed, cable, end.port_mtu, lanes)
            if self.policy is not None:
                params = HeadroomInputs(speed, cable, end.port_mtu, lanes, lossless_mtu=self.policy.lossless_mtu,
                                        small_packet_percent=self.policy.small_packet_percent)
            self.sizes[key] = spectrum_headroom(asic, params).size
        return self.sizes[key]


@rule("FG-ECN-003", "ecn-min-below-one-frame", "warning", "ECN kmin is at least one MTU-sized frame")
def ecn_min_below_frame(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """A kmin smaller than one frame marks the first jumbo frame that waits in the queue: any two flows meeting
    on a port get marked, and DCQCN halves their rate although the queue was never really congested.

    Fix: kmin ≥ the port MTU (with MTU 9100, ≥ 9.1 KB; NVIDIA uses 150 KB at 400G)."""
    def below_one_frame(device: DeviceModel, qos: QosModel) -> list[Problem]:
        data_mtus = [end.port_mtu for end in ctx.switch_ports_of(device) if end.role in ("host", "fabric")]
        frame = max(data_mtus, default=0)
        return [(f"queue {q.index} ({q.class_name}) ECN min {kib(q.ecn.min_bytes)} is below one {frame}-byte frame",
                 "raise ecn.min to at least one MTU",
                 f"raise queue {q.index}'s ECN minimum threshold ({kib(q.ecn.min_bytes)}) to at least {frame} B",
                 (*ECN_SOURCE, q.class_name, "ecn", "min"))
                for q in qos.queues if q.ecn and q.ecn.min_bytes < frame]

    yield from per_port_qos(ctx, r, below_one_frame, queue_settings, located="qos.queues.ecn")


@rule("FG-ECN-004", "ecn-off-on-roce-queue", "error", "ECN marks on the RoCE queue of every switch")
def ecn_off_on_roce(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """DCQCN only reacts to CE marks. One switch whose RoCE queue does not mark lets that hop congest until PFC
    takes over — the 'switch has ECN, nothing marks' complaint.

    Fix: ECN thresholds on the RoCE class (SONiC WRED_PROFILE with ecn_all, EOS random-detect ecn)."""
    for device, ports in ctx.switch_ports:
        if device.qos is None or not any(end.role in ("host", "fabric") for end in ports):
            continue
        yield from _ports_without_ecn(r, device, ports)
        queue = queue_for_tc(device, device.qos.rdma_priority)
        if queue is None or not queue.marks_ecn:
            tc = device.qos.rdma_priority
            what = (f"RoCE queue {queue.index} marks no ECN" if queue is not None else f"RoCE traffic class {tc} "
                    f"egresses on queue {device.qos.tc_to_queue.get(tc, tc)}, which is not configured: no ECN")
            yield r.finding(device.name, what, remedy(
                ctx, device, rdma_ecn, "add ecn to the RDMA class",
                f"configure ECN marking on the queue of traffic class {device.qos.rdma_priority}"),
                source=(*ECN_SOURCE,), setting="qos")  # no queue marks: the switch's QoS profile or table


def _ports_without_ecn(r: Rule, device: DeviceModel, ports: list[End]) -> Iterator[Finding]:
    """Data ports bound to their own queues (a reader's port.qos) whose RoCE queue marks no ECN, on a switch whose
    own RoCE queue does (the switch-wide case is one finding on the switch)."""
    assert device.qos is not None
    switch_queue = queue_for_tc(device, device.qos.rdma_priority)
    if switch_queue is None or not switch_queue.marks_ecn:
        return
    for end in ports:
        own = end.port.qos
        if own is None or end.role not in ("host", "fabric"):
            continue
        queue = queue_in(own, own.rdma_priority)
        if queue is None or not queue.marks_ecn:
            yield r.finding(device.name, "the port's RoCE queue marks no ECN (the switch's other ports mark)",
                            f"on {device.name}: bind {end.port.name} to the switch's ECN profile on the RoCE queue",
                            port=end.port.name, source=end_source(end))


@rule("FG-ECN-005", "dcqcn-off-on-nic", "error", "NICs run DCQCN on the RoCE priority")
def dcqcn_off_on_nic(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """The switch marks, the receiving NIC (notification point) turns marks into CNPs, the sending NIC (reaction
    point) slows down. A NIC with DCQCN off on the RoCE priority ignores all of it.

    Fix: enable roce_np and roce_rp on the RoCE priority (or set rdma.dcqcn: false fabric-wide on purpose)."""
    policy = ctx.policy
    if policy is None or not policy.dcqcn:
        return
    for host, nics in ctx.host_nics:
        for nic in nics:
            if not nic.dcqcn_enabled or policy.rdma_priority not in nic.dcqcn_priorities:
                yield r.finding(host.name, f"DCQCN is not enabled on RoCE priority {policy.rdma_priority}",
                                "enable ecn/roce_np and roce_rp for that priority", port=nic.interface,
                                source=port_source(host.name, nic.interface))


@rule("FG-ECN-006", "cnp-marking-mismatch", "error", "NIC CNP DSCP and priority equal the switches' CNP class")
def cnp_marking_mismatch(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """CNPs are marked by the NIC (firmware default DSCP 48, 802.1p 6; NVIDIA's operator uses DSCP 4). If that
    DSCP is not the switches' CNP class, CNPs queue behind data and arrive too late to help.

    Fix: set cnp_dscp / cnp_802p_prio on the NIC to the intent's CNP class."""
    policy = ctx.policy
    if policy is None:
        return
    for host, nics in ctx.host_nics:
        for nic in nics:
            if nic.cnp_dscp != policy.cnp_dscp or nic.cnp_priority != policy.cnp_priority:
                yield r.finding(host.name, f"NIC sends CNPs with DSCP {nic.cnp_dscp} / priority {nic.cnp_priority},"
                                f" the fabric's CNP class is DSCP {policy.cnp_dscp} / priority {policy.cnp_priority}",
                                f"set roce_np cnp_dscp {policy.cnp_dscp} and cnp_802p_prio {policy.cnp_priority} on "
                                "the NIC", port=nic.interface,
                                source=port_source(host.name, nic.interface))

    def cnp_misclassified(device: DeviceModel, qos: QosModel) -> list[Problem]:
        if qos.trust != "dscp":
            return []  # a port that does not classify by DSCP is FG-CLS-002's
        tc = qos.dscp_to_tc.get(policy.cnp_dscp)
        if tc == policy.cnp_priority:
            return []
        mapped = f"→ TC {tc}" if tc is not None else "maps to no traffic class"
        return [(f"CNP DSCP {policy.cnp_dscp} {mapped}, not the CNP class's {policy.cnp_priority}",
                 "map the CNP DSCP to the CNP class",
                 f"map DSCP {policy.cnp_dscp} to traffic class {policy.cnp_priority} "
                 f"(it {mapped.replace('→', 'goes to')})",
                 ("intent", "rdma", "cnp_class"))]

    yield from per_port_qos(ctx, r, cnp_misclassified,
                            lambda d: d.qos.dscp_to_tc.get(policy.cnp_dscp) if d.qos else None)


@rule("FG-ECN-007", "cnp-not-strict", "warning", "the CNP class is scheduled strict priority")
def cnp_not_strict(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """CNPs are small and urgent; in a weighted queue they wait behind bulk traffic exactly when congestion is
    worst.

    Fix: `scheduling: strict` on the CNP class."""
    policy = ctx.policy
    if policy is None:
        return

    def not_strict(device: DeviceModel, qos: QosModel) -> list[Problem]:
        queue = queue_in(qos, policy.cnp_priority)
        if queue is None or queue.scheduler == "strict":
            return []
        return [(f"CNP queue {queue.index} is {queue.scheduler}, not strict", "scheduling: strict for the CNP class",
                 f"schedule queue {queue.index} strict priority (it is {queue.scheduler})",
                 ("intent", "rdma", "cnp_class"))]

    yield from per_port_qos(ctx, r, not_strict, queue_settings, located="qos.queues")


@rule("FG-ECN-009", "dcqcn-left-to-vendor-tool", "error", "DCQCN/CNP on hosts whose platform cannot set them")
def dcqcn_left_to_vendor(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Generic dcbnl has no DCQCN or CNP knobs: on such hosts (platform linux-dcb) fabricgen cannot program or
    verify the reaction/notification points, so a NIC may run without congestion control while every switch
    marks ECN. An intent feature a platform cannot express is an error, never dropped in silence; the finding
    says what to set with the vendor's tool, and a waiver records that it was done.

    Fix: configure DCQCN on the RoCE priority and the CNP DSCP/priority with the NIC vendor's tool (Broadcom:
    bnxt_re configfs cc/ or niccli), then waive this finding with that reason."""
    policy = ctx.policy
    if policy is None or not policy.dcqcn:
        return
    for host in ctx.hosts:
        if "dcqcn" in ctx.capability(host).delegated_features:
            yield r.finding(host.name, f"platform {host.platform} does not program DCQCN/CNP", f"with the NIC "
                            f"vendor's tool: DCQCN on priority {policy.rdma_priority}, CNP DSCP {policy.cnp_dscp} / "
                            f"priority {policy.cnp_priority}", source=device_source(host.name))


@rule("FG-ECN-010", "ecn-thresholds-not-in-bytes", "info", "a config's ECN thresholds are bytes, which lint can judge")
def ecn_thresholds_not_in_bytes(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """fabricgen sizes ECN against the PFC pause point, the frame size and the rest of the fabric in bytes. A
    config read back may mark at thresholds that are no byte count: EOS `segments` or, on Jericho, `microseconds`
    and `milliseconds`; NX-OS `packets`. Such a queue marks ECN (FG-ECN-004 and FG-PFC-006 count it as marking)
    and its minimum is still held below its maximum (FG-ECN-001), but FG-ECN-002, FG-ECN-003 and FG-ECN-008
    cannot judge it: this finding says so, so that a clean report is not read as "checked".

    Fix: nothing, if the thresholds are deliberate; to have them checked, write them in bytes (or kbytes/mbytes)."""
    def not_in_bytes(device: DeviceModel, qos: QosModel) -> list[Problem]:
        return [(f"queue {q.index} ({q.class_name}) marks ECN at {other.min}..{other.max} {other.unit}: not checked "
                 "against the PFC pause point, one frame or the fabric's thresholds (fabricgen checks bytes)",
                 "nothing to change in the intent",
                 f"write queue {q.index}'s ECN thresholds in bytes to have them checked",
                 (*ECN_SOURCE, q.class_name, "ecn"))
                for q in qos.queues if (other := q.ecn_unconverted) is not None]

    yield from per_port_qos(ctx, r, not_in_bytes, queue_settings, located="qos.queues.ecn")
