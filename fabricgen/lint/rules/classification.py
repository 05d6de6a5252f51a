"""Classification: the RoCE DSCP must land on the same lossless priority on every switch and every NIC."""

from __future__ import annotations

from collections.abc import Iterator

from fabricgen.lint.context import LintContext
from fabricgen.lint.registry import Finding, Rule, rule
from fabricgen.lint.rules._util import Problem, device_source, end_source, per_port_qos, port_source
from fabricgen.models.device import DeviceModel, PolicyModel, QosModel
from fabricgen.models.intent import CE


@rule("FG-CLS-001", "dscp-unmapped", "error", "every DSCP maps to exactly one traffic class on every switch")
def dscp_unmapped(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """A DSCP the switch's DSCP→TC map does not list falls into whatever the ASIC defaults to, usually TC 0 or 1,
    so a mis-marked flow silently changes class. SONiC's own templates list all 64 code points.
    On `lint --configs`, a DSCP an EOS or Cumulus config leaves out reads as the class its vendor documents for
    it (EOS's default DSCP-to-traffic-class map, Cumulus's DSCP 8n..8n+7 → switch priority n): not unmapped.

    Fix: map all 64 DSCPs (fabricgen renders all 64; give one intent class `dscp: default`)."""
    yield from per_port_qos(ctx, r, _unmapped_dscps, lambda d: d.qos.dscp_to_tc if d.qos else None)


def _unmapped_dscps(device: DeviceModel, qos: QosModel) -> list[Problem]:
    if qos.trust != "dscp":
        return []  # a port that does not classify by DSCP uses no DSCP map (FG-CLS-002 reports it)
    missing = sorted(set(range(64)) - set(qos.dscp_to_tc))
    if not missing:
        return []
    return [(f"DSCPs {missing[:8]}{'…' if len(missing) > 8 else ''} map to no traffic class ({len(missing)} of 64)",
             "map every DSCP; give one class `dscp: default`", f"map DSCPs {missing[:8]}"
             f"{'…' if len(missing) > 8 else ''} to a traffic class", device_source(device.name))]


@rule("FG-CLS-002", "roce-dscp-not-lossless", "error", "the RoCE DSCP lands on a lossless priority everywhere")
def roce_dscp_not_lossless(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """RoCEv2 only behaves when its packets are classified into a PFC-protected priority at every hop and on
    both NICs. One hop that puts DSCP 26 into a lossy class drops under congestion and NCCL slows to a crawl
    with no error anywhere (SONiC's default map even sends DSCP 26 to lossy TC 1).

    Fix: map the RoCE DSCP to the lossless class's traffic class and enable PFC on that priority."""
    policy = ctx.policy
    if policy is None or not policy.rdma_lossless:
        return  # a deliberately lossy RoCE design (ECN only) has no lossless priority to land on
    yield from _switch_ports_off_lossless(ctx, r, policy)
    yield from _nics_off_lossless(ctx, r, policy)


def _switch_ports_off_lossless(ctx: LintContext, r: Rule, policy: PolicyModel) -> Iterator[Finding]:
    dscp = policy.rdma_dscp
    for device, ends in ctx.ends_by_device:
        for end in ends:  # each port by the QoS in effect on it (its own map or trust, or the device's)
            if end.role not in ("host", "fabric") or end.qos is None:
                continue
            if end.qos.trust != "dscp":
                yield r.finding(device.name, f"the port trusts {end.qos.trust}, not DSCP: RoCE DSCP {dscp} is not "
                                "classified into its lossless class here", "trust DSCP on the port",
                                port=end.port.name, source=end_source(end), setting="qos.trust")
                continue
            tc = end.qos.dscp_to_tc.get(dscp)
            if tc is None or tc not in end.pfc_priorities:
                got = "maps to no traffic class" if tc is None else f"→ TC {tc}"
                yield r.finding(device.name, f"RoCE DSCP {dscp} {got}, which is not lossless here (PFC on "
                                f"{sorted(end.pfc_priorities)})", f"map DSCP {dscp} to TC {policy.rdma_priority} "
                                f"and enable PFC on it", port=end.port.name, source=end_source(end))


def _nics_off_lossless(ctx: LintContext, r: Rule, policy: PolicyModel) -> Iterator[Finding]:
    dscp = policy.rdma_dscp
    for host, nics in ctx.host_nics:
        for nic in nics:
            prio = nic.dscp2prio.get(dscp)
            if prio is not None and nic.pfc[prio]:
                continue
            spelling = ctx.capability(host).spelling
            got = "has no entry in the NIC's DSCP map" if prio is None else f"→ NIC priority {prio}, which has no PFC"
            fix = f"PFC on priority {policy.rdma_priority} ({spelling.get('pfc', 'pfc')})"
            if prio != policy.rdma_priority:
                fix = f"map DSCP {dscp} to priority {policy.rdma_priority} on the NIC " \
                      f"({spelling.get('dscp_map', 'DSCP APP entry')}) and {fix}"
            yield r.finding(host.name, f"RoCE DSCP {dscp} {got}", fix, port=nic.interface,
                            source=port_source(host.name, nic.interface))


@rule("FG-CLS-003", "nic-trust-not-dscp", "error", "NICs trust DSCP, as the routed switches do")
def nic_trust_not_dscp(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """The switches classify routed RoCEv2 by DSCP. A NIC left in PCP trust (the ConnectX boot default) classifies
    its own egress and the CNPs it sends by the VLAN priority bits, which untagged traffic does not carry: RoCE
    leaves the host in priority 0, outside the lossless class.

    Fix: `mlnx_qos -i <if> --trust dscp` (fabricgen-nic.sh does it)."""
    for host, nics in ctx.host_nics:
        for nic in nics:
            if nic.trust != "dscp":
                yield r.finding(host.name, f"NIC trusts {nic.trust}, the switches trust DSCP",
                                f"trust DSCP ({ctx.capability(host).spelling.get('trust', 'trust dscp')})",
                                port=nic.interface, peer=nic.peer,
                                source=port_source(host.name, nic.interface))


@rule("FG-CLS-004", "nic-dscp-priority-mismatch", "error", "NIC DSCP→priority equals the switch DSCP→TC map")
def nic_dscp_priority_mismatch(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """For all 64 DSCPs, the priority the NIC assigns (its DSCP map under DSCP trust) must equal the traffic class
    the attached switch assigns. Otherwise the NIC sends PFC for one priority while the switch pauses another, and
    traffic the switch treats as best effort leaves the host in the RoCE or CNP priority: the ConnectX firmware
    map (DSCP d → priority d>>3) puts DSCP 24-31 beside RDMA on priority 3 and 48-55 on priority 6, which an intent
    whose default class takes them does not.

    Fix: set the NIC's entry for each DSCP to the switch's traffic class (`mlnx_qos --dscp2prio set,<dscp>,<prio>`,
    `dcb app` on other NICs; fabricgen's host script sets all 64)."""
    for host, nics in ctx.host_nics:
        for nic in nics:
            end = ctx.end(host.name, nic.interface)
            switch = ctx.peer_of(end) if end is not None else None
            if switch is None or switch.qos is None or nic.trust != "dscp":
                continue  # no switch to agree with; a NIC that does not trust DSCP is FG-CLS-003's
            wrong = _dscp_disagreements(nic.dscp2prio, switch.qos.dscp_to_tc)  # the map in effect on its port
            if wrong:
                spelling = ctx.capability(host).spelling.get("dscp_map", "DSCP APP entries")
                yield r.finding(host.name, f"{len(wrong)} of 64 DSCPs leave the NIC in another priority than the "
                                f"switch's traffic class: {_first(wrong)}",
                                f"on the NIC, give each of those DSCPs the switch's traffic class ({spelling})",
                                port=nic.interface, peer=switch.name, source=port_source(host.name, nic.interface))


def _dscp_disagreements(nic_map: dict[int, int], switch_map: dict[int, int]) -> list[str]:
    """``DSCP d: NIC n, switch t`` for each DSCP the two maps classify differently (a missing entry shown as such)."""
    if nic_map == switch_map:  # the common case, compared in C: nothing to spell out
        return []
    wrong = []
    for dscp in range(64):
        nic_prio, switch_tc = nic_map.get(dscp), switch_map.get(dscp)
        if nic_prio != switch_tc:
            nic_text = "no entry" if nic_prio is None else f"priority {nic_prio}"
            switch_text = "no class" if switch_tc is None else f"TC {switch_tc}"
            wrong.append(f"DSCP {dscp}: NIC {nic_text}, switch {switch_text}")
    return wrong


def _first(items: list[str], shown: int = 4) -> str:
    more = len(items) - shown
    return "; ".join(items[:shown]) + (f"; and {more} more" if more > 0 else "")


@rule("FG-CLS-005", "roce-tos-mismatch", "error", "application ToS (cma_roce_tos, NCCL_IB_TC) = RoCE DSCP<<2")
def roce_tos_mismatch(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """RDMA-CM applications take their ToS from cma_roce_tos and NCCL from NCCL_IB_TC; both are a ToS byte,
    DSCP<<2 plus ECN bits. NCCL's default is 0 — DSCP 0, a lossy class — the most common reason NCCL is slower
    than a point-to-point test.

    The two low bits are the ECN field: CE (3, Congestion Experienced) there marks every packet congested before it
    leaves the host, so each one draws a CNP and DCQCN throttles a sender nothing congested (RFC 3168 code points;
    the intent refuses rdma.tos_ecn_bits 3 at load).

    Fix: set both to the RoCE DSCP<<2 (104 for DSCP 26), as fabricgen's nccl.env and script do."""
    policy = ctx.policy
    if policy is None:
        return
    want = policy.rdma_dscp << 2 | policy.tos_ecn_bits
    for host, nics in ctx.host_nics:
        assert host.host is not None
        for nic in nics:
            if nic.roce_tos & CE == CE:
                yield r.finding(host.name, f"cma_roce_tos {nic.roce_tos} carries ECN CE (Congestion Experienced): "
                                "every RoCE packet leaves the host marked congested", f"cma_roce_tos -t {want}",
                                port=nic.interface, source=port_source(host.name, nic.interface),
                                setting="roce tos")
            elif nic.roce_tos >> 2 != policy.rdma_dscp:
                yield r.finding(host.name, f"cma_roce_tos {nic.roce_tos} is DSCP {nic.roce_tos >> 2}, RoCE is DSCP "
                                f"{policy.rdma_dscp}", f"cma_roce_tos -t {want}", port=nic.interface,
                                source=port_source(host.name, nic.interface), setting="roce tos")
        tc = host.host.nccl_env.get("NCCL_IB_TC")
        if tc is not None and tc.isdigit() and int(tc) & CE == CE:
            yield r.finding(host.name, f"NCCL_IB_TC {tc} carries ECN CE (Congestion Experienced): every NCCL packet "
                            "leaves the host marked congested", f"NCCL_IB_TC={want}", source=device_source(host.name),
                            setting="NCCL_IB_TC")
            continue
        if tc is None or not tc.isdigit() or int(tc) >> 2 != policy.rdma_dscp:
            # Say which DSCP the value carries, as for cma_roce_tos: "NCCL_IB_TC is 26, not DSCP 26" (the DSCP
            # written where the ToS byte belongs) read as a contradiction.
            got = f"NCCL_IB_TC {tc} is DSCP {int(tc) >> 2}" if tc and tc.isdigit() else \
                f"NCCL_IB_TC is {tc or 'unset (NCCL uses 0)'}"
            yield r.finding(host.name, f"{got}, RoCE is DSCP {policy.rdma_dscp}", f"NCCL_IB_TC={want}",
                            source=device_source(host.name), setting="NCCL_IB_TC")


@rule("FG-CLS-007", "roce-v1-on-routed-fabric", "error", "NICs run RoCE v2, the version routers forward")
def roce_v1_on_routed_fabric(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """RoCE v1 is an Ethernet protocol of its own (Ethertype 0x8915) with no IP header: it never crosses a routed
    hop, and no switch can classify it by DSCP. A NIC whose RDMA-CM default mode is v1 reaches only hosts on its own
    leaf port's subnet — in a routed leaf/spine fabric, none — and connections fall back or fail.

    Fix: RoCE v2 as the RDMA-CM default (`cma_roce_mode -d <dev> -p 1 -m 2`; generic NICs: write "RoCE v2" to the
    RDMA-CM configfs default_roce_mode), as fabricgen's host script does."""
    for host, nics in ctx.host_nics:
        for nic in nics:
            if nic.roce_mode == 1:
                yield r.finding(host.name, "the RDMA-CM default RoCE mode is v1 (Ethertype 0x8915, no IP header): it "
                                "cannot cross the routed fabric", "make RoCE v2 the default (cma_roce_mode -m 2, or "
                                "'RoCE v2' in the RDMA-CM configfs default_roce_mode)", port=nic.interface,
                                source=port_source(host.name, nic.interface))
