"""lint(fabric) → findings: end-to-end consistency across NIC ↔ switch ↔ switch, over the resolved fabric.

Pure: no disk, no network. Every rule is one pass over devices, ports or links, so a fabric of 70k links
lints in linear time (no path enumeration).
"""

from __future__ import annotations

import gc
import multiprocessing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fabricgen.lint.context import LintContext
from fabricgen.lint.evidence import Evidence
from fabricgen.lint.registry import RULES, SEVERITY_ORDER, Finding, Rule, all_rules
from fabricgen.models.device import Fabric, WaiverModel
from fabricgen.runtime.forked import can_fork, fork_map

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
    for waiver in waivers:
        if waiver.rule != finding.rule:
            continue
        if waiver.device is not None and waiver.device != finding.device:
            continue
        if waiver.port is not None and waiver.port != finding.port:
            continue
        return waiver
    return None


# Ports (Ends) from which a second process shares the rules (``jobs`` > 1): the rules cost about 5 µs a port
# (0.7 s at 32,768 GPUs, 146k ports), a fork of a process that large 10 ms plus the pages it then copies.
SHARED_RULES_MIN_ENDS = 20_000


def lint(fabric: Fabric, rules: list[Rule] | None = None, evidence: Evidence | None = None,
         jobs: int = 1) -> LintReport:
    """Every rule's findings on ``fabric``. With ``evidence`` (``lint --configs``), the FG-EVD rules judge what
    was found on disk, and devices it skips (``--partial``) are left out of the report. ``jobs`` > 1: on a large
    fabric, a forked process runs some of the rules beside this one (the report is the same)."""
    with _collector_paused():
        # The context is gone (freed by reference counting) when _run returns, before the collector is back:
        # it would otherwise walk and promote every End on its first pass.
        return _run(fabric, rules, evidence, jobs)


def _run(fabric: Fabric, rules: list[Rule] | None, evidence: Evidence | None, jobs: int = 1) -> LintReport:
    ctx = LintContext(fabric, evidence)
    waivers = fabric.policy.waivers if fabric.policy else []
    skipped = sorted(evidence.skipped) if evidence is not None else []
    links = len(ctx.links) if not skipped else sum(
        1 for a, b in ctx.links if a.device.name not in skipped or b.device.name not in skipped)
    report = LintReport(devices=len(fabric.devices) - len(skipped), links=links, skipped=skipped)
    about_skipped = _about_skipped(ctx, set(skipped))
    chosen = rules or all_rules()
    for findings in _findings_by_rule(ctx, chosen, jobs):
        for finding in findings:
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


def _findings_by_rule(ctx: LintContext, rules: list[Rule], jobs: int) -> list[list[Finding]]:
    """Each rule's findings, in the order of ``rules``. With ``jobs`` > 1 on a large fabric, a forked process
    that inherits ``ctx`` shares the rules with this one: each process takes the next rule neither has taken (a
    counter they share), so neither waits on the other when it gets less of the CPU (render workers run beside
    lint), and the other's findings come back by rule. At 32,768 GPUs that takes half of the rules' 0.7 s off
    the render's critical path (the parent's load, resolve and lint): the index they share (0.5 s) is built
    once, here, before the fork."""
    if jobs < 2 or len(ctx.ends) < SHARED_RULES_MIN_ENDS or not can_fork():
        return [list(rule.check(ctx, rule)) for rule in rules]
    taken = multiprocessing.get_context("fork").Value("i", 0)

    def share(_: Any = None) -> dict[int, list[Finding]]:
        done: dict[int, list[Finding]] = {}
        while (index := _take(taken)) < len(rules):
            done[index] = list(rules[index].check(ctx, rules[index]))
        return done

    here: list[dict[int, list[Finding]]] = []
    [there] = fork_map(share, [[None]], meanwhile=lambda: here.append(share()))
    found = {**there, **here[0]}
    return [found[index] for index in range(len(rules))]


def _take(counter: Any) -> int:
    """The next rule's index, claimed from the counter the processes share."""
    with counter.get_lock():
        index: int = counter.value
        counter.value = index + 1
    return index


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
