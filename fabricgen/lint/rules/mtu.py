"""MTU: equal on both ends of every link, big enough for the host's frames and RoCE's path MTU everywhere, and
the intended one actually in effect in each switch port's mode."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from fabricgen.lint.context import End, LintContext
from fabricgen.lint.registry import FabricWide, Finding, Rule, rule
from fabricgen.lint.rules._util import end_source, port_source

L2_OVERHEAD = 22  # Ethernet header 14 + one 802.1Q tag 4 + FCS 4: what a host's IP MTU needs on the wire
# What the kernel subtracts from the netdev MTU before picking the RoCE active MTU (include/rdma/ib_addr.h
# iboe_get_mtu: GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4). Less would pass
# NICs at MTU 4176-4191 that the kernel still runs at active_mtu 2048.
ROCE_OVERHEAD = 96


@rule("FG-MTU-001", "link-mtu-mismatch", "error", "MTU is equal at both ends of every switch-to-switch link")
def link_mtu_mismatch(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """A jumbo frame that one end accepts and the other drops disappears without an error counter anyone
    watches: the 'MTU black hole'.

    Fix: the same MTU on both ends (intent mtu.fabric on every switch hop)."""
    fabric_mtu = ctx.policy.fabric_mtu if ctx.policy is not None else None
    for a, b in ctx.data_links:
        if a.nic is None and b.nic is None and a.mtu != b.mtu:
            yield r.finding(a.device.name, f"MTU {a.mtu} vs {b.mtu}", _same_mtu_fix(a, b, fabric_mtu),
                            port=a.port.name, peer=b.name, source=end_source(a), setting="mtu")


def _same_mtu_fix(a: End, b: End, fabric_mtu: int | None) -> str:
    """Which end to change, where the intent says it: the one that is not at the intent's mtu.fabric."""
    off = [end for end in (a, b) if end.mtu != fabric_mtu]
    if fabric_mtu is not None and len(off) == 1:
        kept = b if off[0] is a else a
        return f"set {off[0].name} back to MTU {fabric_mtu}, the intent's mtu.fabric, as {kept.name} has it"
    return "set the same MTU on both"


# The bar is the intent's host MTU; a NIC above it is judged on its own link. Reads every NIC's MTU and the MTU of
# every data port that is not a NIC's.
@rule("FG-MTU-002", "hop-mtu-below-host", "error", "every switch hop carries the host MTU plus L2 overhead",
      fabric_wide=FabricWide(devices=("ports.name", "ports.role", "ports.mtu", "ports.peer"),
                             hosts=("host.nics.mtu", "host.nics.interface")))
def hop_mtu_below_host(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Hosts send IP packets of the NIC MTU; every switch port on the path must take them plus the Ethernet
    header, a VLAN tag and FCS. One 1500-byte hop in a 9000-byte fabric drops every jumbo RoCE packet.

    The bar is the fabric's host MTU (the intent's mtu.host; without an intent, the MTU most NICs run): a
    switch port below it plus 22 is reported on that port. One NIC set above it is reported on that NIC's link
    — its oversized frames are the fault, not every switch port of the fabric.

    Fix: switch MTU ≥ host MTU + 22 (9100 for hosts at 9000); a NIC above the host MTU back to it."""
    host_mtus = [nic.mtu for _, nics in ctx.host_nics for nic in nics]
    policy = ctx.policy
    bar = policy.host_mtu if policy is not None else Counter(host_mtus).most_common(1)[0][0] if host_mtus else 0
    needed = bar + L2_OVERHEAD
    hops = [end.port_mtu for end in ctx.ends if end.nic is None and end.role in ("host", "fabric")]
    for end in ctx.ends:
        if end.nic is None and end.role in ("host", "fabric") and end.port_mtu < needed:
            yield r.finding(end.device.name, f"MTU {end.port_mtu} is below host MTU + L2 overhead ({needed})",
                            f"raise the port MTU to at least {needed}", port=end.port.name, peer=end.peer_ref,
                            source=end_source(end), setting="mtu")
    smallest_hop = min(hops, default=None)
    for host, nics in ctx.host_nics:
        for nic in nics:
            frame = nic.mtu + L2_OVERHEAD
            if nic.mtu > bar and smallest_hop is not None and smallest_hop < frame:
                yield r.finding(host.name, f"NIC MTU {nic.mtu} is above the fabric's host MTU {bar}: its {frame}-byte "
                                f"frames exceed switch ports at MTU {smallest_hop}",
                                f"set the NIC's MTU back to {bar}", port=nic.interface, peer=nic.peer,
                                source=port_source(host.name, nic.interface), setting="mtu")


@rule("FG-MTU-003", "roce-path-mtu-too-big", "error", "RoCE path MTU plus headers fits the NIC MTU")
def roce_path_mtu(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """RoCE negotiates an IB path MTU (1024/2048/4096) that must fit in the netdev MTU with its headers; a NIC at
    MTU 4096 cannot carry 4096-byte RoCE payloads and silently falls back to 2048, halving message efficiency.

    Fix: NIC MTU ≥ path MTU + 96, the headers the kernel reserves (4192 for path MTU 4096; 9000 is the norm)."""
    for host, nics in ctx.host_nics:
        assert host.host is not None
        least = host.host.path_mtu + ROCE_OVERHEAD
        for nic in nics:
            if nic.mtu < least:
                yield r.finding(host.name, f"NIC MTU {nic.mtu} cannot carry RoCE path MTU {host.host.path_mtu}",
                                f"NIC MTU ≥ {host.host.path_mtu + ROCE_OVERHEAD} or a smaller rdma.path_mtu",
                                port=nic.interface, source=port_source(host.name, nic.interface), setting="mtu")


@rule("FG-MTU-004", "mtu-above-platform-max", "error", "no MTU above the platform's maximum")
def mtu_above_platform_max(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Platforms cap the MTU differently (SONiC 9216, EOS 9214, ConnectX 9978); a value above the cap is refused
    on commit, or clamped on some images — never rely on 9216 being accepted everywhere.

    Fix: stay at or under the smallest maximum on the path."""
    for device, ends in ctx.ends_by_device:
        limit = ctx.capability(device).max_mtu
        for end in ends:
            if end.mtu > limit:
                yield r.finding(device.name, f"MTU {end.mtu} exceeds {device.platform}'s maximum {limit}",
                                f"MTU ≤ {limit}", port=end.port.name, source=end_source(end), setting="mtu")


@rule("FG-MTU-005", "mtu-not-in-effect", "error", "every switch data port has the intent's fabric MTU in effect")
def mtu_not_in_effect(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """A switch port's MTU only counts if it is the one its forwarding mode applies. The trap is EOS: `mtu` is
    the Layer 3 MTU of routed interfaces, so a data port left a switchport (EOS's default) shows `mtu 9214` and
    forwards frames at its Layer 2 limit (`l2 mtu`, else the platform's default) — the intended MTU is nowhere
    in effect. Config readers give each port the MTU in effect in its mode (EOS: `mtu` routed, `l2 mtu`
    switched; NX-OS: the port's `mtu` in both; SONiC PORT.mtu and NVUE `link mtu` apply in both modes), and this
    rule compares it with the intent's mtu.fabric on every data port of every switch: below it is an error
    (jumbo RoCE frames are dropped), above it a warning (not what the intent says).

    Fix, on the device: make the intended MTU the one in effect. fabricgen routes data ports (EOS `no
    switchport` + `mtu N`, NX-OS `no switchport` + `mtu N`); a port kept switched needs its mode's MTU (EOS `l2
    mtu N`)."""
    if ctx.policy is None:
        return
    intended = ctx.policy.fabric_mtu
    for device, ends in ctx.ends_by_device:
        if device.host is not None:
            continue
        spelling = ctx.capability(device).spelling.get("mtu", "the port MTU")
        for end in ends:
            if end.role in ("host", "fabric") and end.port_mtu != intended:
                yield _not_in_effect(r, end, intended, spelling)


def _not_in_effect(r: Rule, end: End, intended: int, spelling: str) -> Finding:
    mode = f" ({end.port.mode} port)" if end.port.mode else ""
    return r.finding(end.device.name, f"MTU {end.port_mtu} in effect{mode}, the intent's mtu.fabric is {intended}",
                     f"make {intended} the MTU in effect — {end.device.platform}: {spelling}", port=end.port.name,
                     peer=end.peer_ref, source=end_source(end), setting="mtu",
                     severity="error" if end.port_mtu < intended else "warning")
