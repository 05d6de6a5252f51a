"""Lint output people's tools already read: compiler-style text, JSON, and SARIF 2.1.0 for code scanning."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fabricgen import __version__
from fabricgen.diagnostics import Location
from fabricgen.lint import LintReport
from fabricgen.lint.registry import RULES, Finding, Rule, all_rules
from fabricgen.platforms.matrix import readers_markdown

Locate = Callable[[Finding], Location]
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _line(finding: Finding, where: Location, waived: str | None = None) -> str:
    text = f"{where.file}:{where.line}: {finding.rule} {finding.severity} {finding.subject}: {finding.message}"
    text += f" (fix: {finding.fix})"
    return f"{text} [waived: {waived}]" if waived is not None else text


def summary(report: LintReport) -> str:
    text = (f"{report.errors} error(s), {report.warnings} warning(s), {report.count('info')} info, "
            f"{len(report.waived)} waived — {report.devices} devices, {report.links} links checked")
    if report.skipped:
        shown = ", ".join(report.skipped[:8]) + ("…" if len(report.skipped) > 8 else "")
        text += f"; partial (--partial): {len(report.skipped)} device(s) without configs not linted: {shown}"
    return text


def to_text(report: LintReport, locate: Locate) -> str:
    lines = [_line(f, locate(f)) for f in report.findings]
    lines += [_line(w.finding, locate(w.finding), w.reason) for w in report.waived]
    return "\n".join([*lines, summary(report)]) + "\n"


def _finding_json(finding: Finding, where: Location, waived: str | None) -> dict[str, Any]:
    return {"rule": finding.rule, "name": RULES[finding.rule].name, "severity": finding.severity,
            "device": finding.device, "port": finding.port, "peer": finding.peer, "message": finding.message,
            "fix": finding.fix, "file": where.file, "line": where.line, "waived": waived is not None,
            "waiver_reason": waived}


def to_json(report: LintReport, locate: Locate) -> str:
    data = {
        "findings": [_finding_json(f, locate(f), None) for f in report.findings]
        + [_finding_json(w.finding, locate(w.finding), w.reason) for w in report.waived],
        "summary": {"errors": report.errors, "warnings": report.warnings, "info": report.count("info"),
                    "waived": len(report.waived), "devices": report.devices, "links": report.links,
                    "skipped": report.skipped},
    }
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def _sarif_rule(rule: Rule) -> dict[str, Any]:
    return {"id": rule.id, "name": rule.name, "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.explanation}, "help": {"text": rule.explanation},
            "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
            "helpUri": f"https://fabricgen.dev/rules#{rule.id.lower()}"}


def _sarif_result(finding: Finding, where: Location, index: dict[str, int], waived: str | None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.rule, "ruleIndex": index[finding.rule], "level": _SARIF_LEVEL[finding.severity],
        "message": {"text": f"{finding.subject}: {finding.message} (fix: {finding.fix})"},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": where.file},
                                            "region": {"startLine": max(where.line, 1),
                                                       "startColumn": max(where.col, 1)}}}],
        # Stable across runs so code scanning tracks a finding instead of reopening it.
        "partialFingerprints": {"fabricgen/v1": f"{finding.rule}:{finding.subject}"},
    }
    if waived is not None:
        result["suppressions"] = [{"kind": "inSource", "justification": waived}]
    return result


def to_sarif(report: LintReport, locate: Locate) -> str:
    rules = all_rules()
    index = {r.id: i for i, r in enumerate(rules)}
    results = [_sarif_result(f, locate(f), index, None) for f in report.findings]
    results += [_sarif_result(w.finding, locate(w.finding), index, w.reason) for w in report.waived]
    run: dict[str, Any] = {"tool": {"driver": {"name": "fabricgen", "version": __version__,
                                               "informationUri": "https://fabricgen.dev",
                                               "rules": [_sarif_rule(r) for r in rules]}},
                           "results": results}
    if report.skipped:  # lint --configs --partial: say what was left out on purpose, as the text summary does
        run["properties"] = {"skippedDevices": report.skipped}
    sarif = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(sarif, indent=2, sort_keys=True) + "\n"


def explain(rule: Rule) -> str:
    return f"{rule.id} {rule.name} ({rule.severity})\n{rule.summary}\n\n{rule.explanation}\n"


def rules_markdown() -> str:
    """docs/rules.md, generated from the registry (a test keeps the committed copy in sync)."""
    out = ["# fabricgen lint rules", "",
           "Generated from the rule registry by `fabricgen rules --format markdown`; do not edit by hand.", "",
           "| ID | name | severity | checks |", "|---|---|---|---|"]
    rules = all_rules()
    out += [f"| [{r.id}](#{r.id.lower()}) | `{r.name}` | {r.severity} | {r.summary} |" for r in rules]
    out += ["", "## What `lint --configs` reads, per platform", "",
            "Each platform's config reader reads back, for every port (a host: every RDMA NIC), the settings below "
            "as the device would run them — defaults where a line is absent, per-port overrides included. "
            "FG-CFG-001 compares each with the intent; the other rules judge them port by port. Device-wide "
            "settings (the QoS maps and queues a switch applies to all its ports, the management interface, "
            "nccl.env) are read and compared per device. tests/test_lint_completeness.py damages every setting "
            "listed here on one port of a rendered config and expects findings about that port and nothing else.",
            "", readers_markdown()]
    for r in rules:
        out += ["", f"## {r.id}", "", f"`{r.name}` — {r.severity}. {r.summary}.", "", r.explanation]
    return "\n".join(out) + "\n"
