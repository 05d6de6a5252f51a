"""Inventory integrity: every cable's two ends exist and name each other; no port takes two cables."""

from __future__ import annotations

from collections.abc import Iterator

from fabricgen.lint.context import LintContext
from fabricgen.lint.registry import Finding, Rule, rule
from fabricgen.lint.rules._util import end_source


@rule("FG-INV-001", "link-end-disagrees", "error", "each link's ends exist and name each other")
def link_end_disagrees(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """A cable whose far end is missing or names a third port means the model of the fabric is wrong, and every
    per-link check (PFC, MTU, speed) silently skipped it.

    Fix: correct the peer on one end (the load step reports these with file and line)."""
    for end in ctx.ports.values():
        if end.port.peer is None:
            continue
        peer = ctx.peer_of(end)
        if peer is None:
            yield r.finding(end.device.name, f"peer {end.port.peer} does not exist", "fix the peer",
                            port=end.port.name, source=end_source(end))
        elif peer.port.peer not in (None, f"{end.device.name}:{end.port.name}"):
            yield r.finding(end.device.name, f"peer {peer.name} names {peer.port.peer} as its peer",
                            "make both ends name each other", port=end.port.name, peer=peer.name,
                            source=end_source(end))


@rule("FG-INV-002", "port-used-twice", "error", "no port is the far end of two cables")
def port_used_twice(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """Two ports claiming the same far end is a cabling record error: one of the two links does not exist as
    modelled.

    Fix: correct one of the peer entries."""
    claims: dict[str, list[str]] = {}
    for end in ctx.ports.values():
        if end.port.peer is not None:
            claims.setdefault(end.port.peer, []).append(end.name)
    for target, claimants in sorted(claims.items()):
        if len(claimants) > 1:
            device, _, port = target.partition(":")
            yield r.finding(device, f"claimed as peer by {', '.join(sorted(claimants))}", "one cable per port",
                            port=port, source=("inventory", device, "data", "ports", port))
