"""Fabric-wide sameness: one intent must mean the same thing on every box, whatever its NOS (issue: mixed
vendors). Checked once per switch against the fabric's majority, so the cost stays linear in devices."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from fabricgen.lint.context import LintContext
from fabricgen.lint.registry import FabricWide, Finding, Rule, rule
from fabricgen.lint.rules._util import device_source, kib, queue_for_tc
from fabricgen.models.device import DeviceModel


def _in_use(ctx: LintContext) -> list[int]:
    policy = ctx.policy
    return sorted({d for values in policy.class_dscps.values() for d in values}) if policy else []


def _data_switches(ctx: LintContext) -> list[DeviceModel]:
    return [device for device, ports in ctx.switch_ports
            if device.qos is not None and any(end.role in ("host", "fabric") for end in ports)]


# Which switches carry data (a QoS, a host or fabric port), and their DSCP maps.
@rule("FG-CLS-006", "dscp-map-differs-between-switches", "error", "every switch classifies the DSCPs in use alike",
      fabric_wide=FabricWide(switches=("qos.dscp_to_tc", "ports.role")))
def dscp_map_differs(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """A DSCP that lands in TC 3 on one leaf and TC 1 on another is lossless on half the fabric: flows that
    cross both lose their guarantees on the hop nobody looked at. Typical of mixed vendors, whose default maps
    differ (SONiC sends DSCP 26 to TC 1, Cumulus to switch-priority 3).

    Fix: the same DSCP→TC map everywhere (fabricgen renders the intent's map on every platform)."""
    switches = _data_switches(ctx)
    dscps = _in_use(ctx)
    for dscp in dscps:
        votes = Counter(d.qos.dscp_to_tc.get(dscp) for d in switches if d.qos)
        if len(votes) < 2:
            continue
        majority = votes.most_common(1)[0][0]
        for device in switches:
            assert device.qos is not None
            tc = device.qos.dscp_to_tc.get(dscp)
            if tc != majority:
                yield r.finding(device.name, f"DSCP {dscp} {_mapped(tc)}, the rest of the fabric "
                                f"{'uses TC ' + str(majority) if majority is not None else 'leaves it unmapped'}",
                                _dscp_fix(ctx, device, dscp, majority), source=device_source(device.name))


def _mapped(tc: int | None) -> str:
    return f"→ TC {tc}" if tc is not None else "is not mapped"


def _dscp_fix(ctx: LintContext, device: DeviceModel, dscp: int, majority: int | None) -> str:
    """The TC the intent maps the DSCP to on this device when it was read from its config (the majority of
    drifted switches is no reference), else the fabric's majority."""
    intended = ctx.intended(device)
    want = intended.qos.dscp_to_tc.get(dscp) if intended is not None and intended.qos is not None else majority
    if want is None:
        return f"remove DSCP {dscp} from the map, as the rest of the fabric does"
    return f"on {device.name}: map DSCP {dscp} to TC {want}" if intended is not None else \
        f"map DSCP {dscp} to TC {want}"


# Which switches carry data, the ECN of the queue their QoS gives the RoCE TC, their platform's granularity.
@rule("FG-ECN-008", "ecn-differs-between-switches", "error", "RoCE ECN thresholds agree across switches",
      fabric_wide=FabricWide(switches=("qos", "ports.role", "platform")))
def ecn_differs(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Each platform rounds ECN thresholds to its own unit (bytes, KB, cells). Beyond that rounding, switches
    marking the same class at different depths make DCQCN react at one hop and not at the next — the fabric's
    behaviour then depends on the path. Two thresholds are equal when they differ by less than the coarser of
    the two platforms' granularity.

    Fix: one ECN setting in the intent; do not hand-tune a single switch."""
    policy = ctx.policy
    if policy is None:
        return
    marks = []
    for device in _data_switches(ctx):
        queue = queue_for_tc(device, policy.rdma_priority)
        if queue is not None and queue.ecn is not None:
            marks.append((device, queue.ecn.min_bytes, queue.ecn.max_bytes, queue.ecn.probability_pct))
    if len(marks) < 2:
        return
    reference = Counter((m[1], m[2], m[3]) for m in marks).most_common(1)[0][0]
    ref_device = next(m[0] for m in marks if (m[1], m[2], m[3]) == reference)
    for device, kmin, kmax, prob in marks:
        step = max(ctx.capability(device).ecn_granularity_bytes, ctx.capability(ref_device).ecn_granularity_bytes)
        if abs(kmin - reference[0]) >= step or abs(kmax - reference[1]) >= step or prob != reference[2]:
            yield r.finding(device.name, f"RoCE ECN {kib(kmin)}..{kib(kmax)} at {prob} %, the fabric marks at "
                            f"{kib(reference[0])}..{kib(reference[1])} at {reference[2]} % (tolerance {step} B)",
                            f"on {device.name}: mark at the intent's ECN thresholds" if ctx.from_config(device)
                            else "use the intent's ECN thresholds", source=device_source(device.name),
                            setting="qos.queues.ecn")
