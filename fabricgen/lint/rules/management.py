"""Management isolation: the OOB VLAN, VRF and subnet never touch the data fabric."""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import ip_network

from fabricgen.lint.context import LintContext
from fabricgen.lint.registry import Finding, Rule, rule
from fabricgen.lint.rules._util import device_source, end_source, port_source


@rule("FG-MGT-001", "mgmt-vlan-on-data-port", "error", "the management VLAN is never on a data or fabric port")
def mgmt_vlan_on_data_port(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """BMC traffic that leaks into the data fabric competes with training traffic and spreads congestion — the
    periodic training jitter operators of such fabrics report. The VLAN leaks wherever a port carries it: as its
    access VLAN, as a trunk's native (untagged) VLAN — readers give a trunk's native VLAN as its access VLAN — or in
    a trunk's tagged/allowed list (a trunk without an allowed list carries every VLAN, the management one too).

    Fix: the management VLAN only on OOB access ports."""
    policy = ctx.policy
    if policy is None:
        return
    vlan = policy.mgmt_vlan
    for end in ctx.ends:
        if end.role == "oob-access":
            continue
        tagged = end.port.tagged_vlans
        if end.access_vlan == vlan:
            how, where = ("as its access VLAN" if not tagged else "as its native (untagged) VLAN"), "this port"
        elif tagged is not None and vlan in tagged:
            how, where = "tagged in its trunk's allowed VLANs", "this port's allowed (tagged) VLANs"
        else:
            continue
        # Said without one vendor's syntax: the same rule reads EOS, NX-OS, Cumulus and SONiC configs.
        yield r.finding(end.device.name, f"management VLAN {vlan} on a {end.role} port, {how}",
                        f"remove VLAN {vlan} from {where}", port=end.port.name, peer=end.peer_ref,
                        source=end_source(end))


@rule("FG-MGT-002", "mgmt-interface-outside-vrf", "error", "management interfaces live in the management VRF")
def mgmt_outside_vrf(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """A management interface in the default VRF shares the routing table with the fabric: a default route can
    send management traffic over data links, or data prefixes leak into management.

    Fix: put the management interface in the management VRF (SONiC: MGMT_VRF_CONFIG, VRF `mgmt`)."""
    policy = ctx.policy
    if policy is None:
        return
    for device in ctx.switches:
        if device.mgmt is None:
            continue
        wanted = ctx.capability(device).mgmt_vrf_fixed_name or policy.mgmt_vrf
        if device.mgmt.vrf != wanted:
            yield r.finding(device.name, f"{device.mgmt.interface} is in VRF {device.mgmt.vrf!r}, not {wanted!r}",
                            f"vrf {wanted} on the management interface", port=device.mgmt.interface,
                            source=device_source(device.name))


@rule("FG-MGT-003", "mgmt-subnet-overlaps-data", "error", "the management subnet overlaps no data subnet")
def mgmt_subnet_overlap(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Overlapping subnets make the same address reachable two ways: the OOB network stops being independent of
    the fabric it exists to rescue.

    Fix: a management subnet disjoint from every data subnet."""
    policy = ctx.policy
    if policy is None:
        return
    mgmt = ip_network(policy.mgmt_subnet)
    for index, text in enumerate(policy.data_subnets):
        data = ip_network(text)
        if data.version == mgmt.version and data.overlaps(mgmt):
            yield r.finding("fabric", f"management subnet {mgmt} overlaps data subnet {data}",
                            "choose disjoint subnets", source=("intent", "data_subnets", index))


@rule("FG-MGT-004", "mgmt-port-off-oob", "error", "BMC and management ports connect only to OOB switches")
def mgmt_port_off_oob(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """A switch management port or a BMC cabled into a data switch puts the management plane on the fabric
    (and a data switch port into the management VLAN).

    Fix: cable management ports to the OOB switch."""
    for end, peer in zip(ctx.ends, ctx.peers, strict=True):
        if peer is None:
            continue
        if end.role in ("mgmt", "bmc") and peer.device.role != "oob":
            yield r.finding(end.device.name, f"management port is cabled to {peer.device.role} {peer.device.name}",
                            "cable it to the OOB switch", port=end.port.name, peer=peer.name, source=end_source(end))
        if end.role == "oob-access" and peer.role not in ("mgmt", "bmc"):
            yield r.finding(end.device.name, f"OOB access port reaches {peer.role} port {peer.name}",
                            "OOB ports serve only BMCs and management interfaces", port=end.port.name,
                            peer=peer.name, source=end_source(end))


@rule("FG-MGT-005", "nccl-socket-on-wrong-interface", "error", "NCCL_SOCKET_IFNAME is neither RDMA nor BMC")
def nccl_socket_interface(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """NCCL bootstraps over TCP on NCCL_SOCKET_IFNAME. On an RDMA NIC that TCP traffic lands in the fabric's
    classes; on the OOB network it rides the management plane the field report keeps isolated.

    Fix: point NCCL_SOCKET_IFNAME at the front-end interface (inventory data.frontend_interface)."""
    for host in ctx.hosts:
        assert host.host is not None
        value = host.host.nccl_env.get("NCCL_SOCKET_IFNAME", "")
        # NCCL's syntax: a leading `^` excludes, then a leading `=` asks for exact names; without `=` every entry
        # is a prefix. Stripping both and comparing whole names took `^bmc` (which keeps NCCL off the BMC) for
        # the BMC and let `ens` (a prefix of both RDMA NICs) or `^docker,lo` (anything else) pass.
        exclude = value.startswith("^")
        spec = value[1:] if exclude else value
        exact = spec.startswith("=")
        names = {name for name in (spec[1:] if exact else spec).split(",") if name}
        roles = {p.name: p.role for p in host.ports}
        prefixes = tuple(names)  # str.startswith takes them all at once
        selected = [p for p in roles if (p in names if exact else p.startswith(prefixes)) != exclude]
        bad = sorted(name for name in selected if roles[name] in ("rdma", "bmc", "mgmt"))
        if not names or bad:
            what = f"selects {', '.join(f'{n} ({roles[n]})' for n in bad)}" if bad else "is unset"
            yield r.finding(host.name, f"NCCL_SOCKET_IFNAME {what}", "set it to the front-end interface",
                            source=port_source(host.name, bad[0]) if bad else device_source(host.name),
                            setting="NCCL_SOCKET_IFNAME")
