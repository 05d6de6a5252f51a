"""lint(fabric) → findings: end-to-end consistency across NIC ↔ switch ↔ switch, over the resolved fabric.

Pure: no disk, no network. Every rule is one pass over devices, ports or links, so a fabric of 70k links
lints in linear time (no path enumeration).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from fabricgen.lint.context import LintContext
from fabricgen.lint.evidence import Evidence
from fabricgen.lint.registry import RULES, SEVERITY_ORDER, Finding, Rule, all_rules
from fabricgen.models.device import Fabric, WaiverModel

__all__ = ["RULES", "Evidence", "Finding", "LintReport", "Rule", "all_rules", "lint"]


@dataclass(frozen=True)
class Waived:
    finding: Finding
    reason: str


@dataclass
class LintReport:
    findings: list[Finding] = field(default_factory=list)
    waived: list[Waived] = field(default_factory=list)
    devices: int = 0
    links: int = 0
    skipped: list[str] = field(default_factory=list)  # devices left out on purpose (lint --configs --partial)

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    @property
    def errors(self) -> int:
        return self.count("error")

    @property
    def warnings(self) -> int:
        return self.count("warning")

    def failed(self, strict: bool = False) -> bool:
        return self.errors > 0 or (strict and self.warnings > 0)


def _waiver_for(finding: Finding, waivers: list[WaiverModel]) -> WaiverModel | None:
    """The first waiver of the finding's rule that names its device (and port); a waiver that names a device and a
    port also waives a finding about the cable on that port, listed from the other end (the same cable). A waiver
    of a whole device covers that device's own findings only."""
    far_device, _, far_port = finding.peer.partition(":") if finding.peer else ("", "", "")
    for waiver in waivers:
        if waiver.rule != finding.rule:
            continue
        if _names(waiver, finding.device, finding.port) or \
                (finding.peer and waiver.port is not None and _names(waiver, far_device, far_port)):
            return waiver
    return None


def _names(waiver: WaiverModel, device: str, port: str | None) -> bool:
    return (waiver.device is None or waiver.device == device) and (waiver.port is None or waiver.port == port)


def lint(fabric: Fabric, rules: list[Rule] | None = None, evidence: Evidence | None = None) -> LintReport:
    """Every rule's findings on ``fabric``. With ``evidence`` (``lint --configs``), the FG-EVD rules judge what
    was found on disk, and devices it skips (``--partial``) are left out of the report."""
    with _collector_paused():
        # The context is gone (freed by reference counting) when _run returns, before the collector is back:
        # it would otherwise walk and promote every End on its first pass.
        return _run(fabric, rules, evidence)


def _run(fabric: Fabric, rules: list[Rule] | None, evidence: Evidence | None) -> LintReport:
    ctx = LintContext(fabric, evidence)
    waivers = fabric.policy.waivers if fabric.policy else []
    skipped = sorted(evidence.skipped) if evidence is not None else []
    links = len(ctx.links) if not skipped else sum(
        1 for a, b in ctx.links if a.device.name not in skipped or b.device.name not in skipped)
    report = LintReport(devices=len(fabric.devices) - len(skipped), links=links, skipped=skipped)
    about_skipped = _about_skipped(ctx, set(skipped))
    for rule in rules or all_rules():
        for finding in rule.check(ctx, rule):
            if about_skipped(finding):
                continue
            waiver = _waiver_for(finding, waivers)
            if waiver is None:
                report.findings.append(finding)
            else:
                report.waived.append(Waived(finding, waiver.reason))
    report.findings.sort(key=_order)
    report.waived.sort(key=lambda w: _order(w.finding))
    return report


def _about_skipped(ctx: LintContext, skipped: set[str]) -> Callable[[Finding], bool]:
    """Whether a finding is about a device ``--partial`` left out and about nothing linted: on a skipped device,
    on a port whose cable does not reach a linted device (a link finding names the end listed first, which may
    be the skipped one)."""
    if not skipped:
        return lambda finding: False
    reaching = {(end.device.name, end.port.name) for end, peer in zip(ctx.ends, ctx.peers, strict=True)
                if end.device.name in skipped and peer is not None and peer.device.name not in skipped}
    return lambda finding: finding.device in skipped and (finding.device, finding.port) not in reaching


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while lint runs.

    Lint allocates an End per port and a tuple per cable, and frees them all by reference counting: it makes no
    reference cycles (see context.End), so the collector has nothing to find here. But those allocations trigger
    collections, and a full one walks every object of the resolved fabric: over a second at 32,768 GPUs, more
    than lint itself. The previous state is restored, so a caller that disabled it keeps it disabled."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _order(finding: Finding) -> tuple[int, str, str, str, str]:
    return (SEVERITY_ORDER[finding.severity], finding.rule, finding.device, finding.port or "", finding.message)
