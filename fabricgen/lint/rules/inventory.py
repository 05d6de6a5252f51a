"""Inventory integrity: every cable's two ends exist and name each other; no port takes two cables."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from fabricgen.lint.context import LintContext
from fabricgen.lint.registry import FabricWide, Finding, Rule, rule
from fabricgen.lint.rules._util import end_source


@rule("FG-INV-001", "link-end-disagrees", "error", "each link's ends exist and name each other")
def link_end_disagrees(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """A cable whose far end is missing or names a third port means the model of the fabric is wrong, and every
    per-link check (PFC, MTU, speed) silently skipped it.

    Fix: correct the peer on one end (the load step reports these with file and line)."""
    peers = ctx.peers
    for end, peer in zip(ctx.ends, peers, strict=True):
        if end.peer_ref is None:
            continue
        if peer is None:
            yield r.finding(end.device.name, f"peer {end.peer_ref} does not exist", "fix the peer",
                            port=end.port.name, source=end_source(end))
        # A peer that resolves back to this end names it (the common case, decided without comparing text).
        elif peers[peer.index] is not end and peer.peer_ref not in (None, end.name):
            yield r.finding(end.device.name, f"peer {peer.name} names {peer.peer_ref} as its peer",
                            "make both ends name each other", port=end.port.name, peer=peer.name,
                            source=end_source(end))


# Every port's peer, across the fabric: two claims of one far end need not be cabled to each other.
@rule("FG-INV-002", "port-used-twice", "error", "no port is the far end of two cables",
      fabric_wide=FabricWide(devices=("ports.name", "ports.peer")))
def port_used_twice(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Two ports claiming the same far end is a cabling record error: one of the two links does not exist as
    modelled.

    Fix: correct one of the peer entries."""
    # A correct inventory has no target claimed twice: tell that in C (a set as long as the list), and sort or
    # list nothing per port. Only targets claimed more than once get their claimants collected, in target order.
    targets = [end.peer_ref for end in ctx.ends if end.peer_ref is not None]
    if len(set(targets)) == len(targets):
        return
    claims: dict[str, list[str]] = {t: [] for t in sorted(t for t, n in Counter(targets).items() if n > 1)}
    for end in ctx.ends:
        claimed = end.peer_ref
        if claimed is not None and claimed in claims:
            claims[claimed].append(end.name)
    for target, claimants in claims.items():
        device, _, port = target.partition(":")
        yield r.finding(device, f"claimed as peer by {', '.join(sorted(claimants))}", "one cable per port",
                        port=port, source=("inventory", device, "data", "ports", port))
