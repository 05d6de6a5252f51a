"""Lint output people's tools already read: compiler-style text, JSON, and SARIF 2.1.0 for code scanning.

Input errors (the FG-INP rules, and lint rules' conditions found while loading) have a JSON and a SARIF form too,
the same shape as a lint report's: a CI job that uploads `lint --format sarif` shows a typo in the intent at its
line, instead of an empty report beside a failed step.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fabricgen import __version__
from fabricgen.lint import LintReport
from fabricgen.lint.coverage import coverage_markdown  # lint helper (issue 26)
from fabricgen.lint.registry import CatalogEntry, Finding, catalog, catalog_entry
from fabricgen.models.diagnostics import Diagnostic, Location
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


def to_text(report: LintReport, locate: Locate, show_waived: bool = False) -> str:
    """One line per finding, then the summary. Waived findings were decided on: by default one line counts them
    (a large fabric's waivers would bury the findings that need a decision); ``show_waived`` lists them."""
    lines = [_line(f, locate(f)) for f in report.findings]
    if show_waived:
        lines += [_line(w.finding, locate(w.finding), w.reason) for w in report.waived]
    elif report.waived:
        lines.append(f"{len(report.waived)} waived finding(s) not shown (`fabricgen lint --show-waived` lists them)")
    return "\n".join([*lines, summary(report)]) + "\n"


def _finding_json(finding: Finding, where: Location, waived: str | None) -> dict[str, Any]:
    return {"rule": finding.rule, "name": catalog_entry(finding.rule).name, "severity": finding.severity,
            "device": finding.device, "port": finding.port, "peer": finding.peer, "message": finding.message,
            "fix": finding.fix, "file": where.file, "line": where.line, "waived": waived is not None,
            "waiver_reason": waived}


def to_json(report: LintReport, locate: Locate) -> str:
    data = {
        "findings": [_finding_json(f, locate(f), None) for f in report.findings]
        + [_finding_json(w.finding, locate(w.finding), w.reason) for w in report.waived],
        "summary": {"errors": report.errors, "warnings": report.warnings, "info": report.count("info"),
                    "waived": len(report.waived), "devices": report.devices, "links": report.links,
                    "skipped": report.skipped, "input_errors": 0},
    }
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def _input_json(problem: Diagnostic) -> dict[str, Any]:
    """One input error as a lint finding's JSON, plus its column and key path (it has no device yet)."""
    where = problem.location
    return {"rule": problem.rule, "name": catalog_entry(problem.rule).name, "severity": "error", "device": None,
            "port": None, "peer": None, "message": problem.message, "fix": problem.hint, "file": where.file,
            "line": where.line, "column": where.col, "key_path": problem.key_path, "waived": False,
            "waiver_reason": None}


def input_errors_json(problems: Sequence[Diagnostic]) -> str:
    """Input errors as `lint --format json` prints a report: nothing was linted (no devices, no links)."""
    data = {"findings": [_input_json(problem) for problem in problems],
            "summary": {"errors": len(problems), "warnings": 0, "info": 0, "waived": 0, "devices": 0, "links": 0,
                        "skipped": [], "input_errors": len(problems)}}
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def _sarif_rule(rule: CatalogEntry) -> dict[str, Any]:
    return {"id": rule.id, "name": rule.name, "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.explanation}, "help": {"text": rule.explanation},
            "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
            "helpUri": f"https://fabricgen.dev/rules#{rule.id.lower()}"}


SRCROOT = "%SRCROOT%"


def repository_root(intent: Path) -> Path:
    """What SARIF paths are relative to: the top of the git repository the intent is in (code scanning shows a
    result at the file of that path in the repository), else the current directory."""
    folder = intent.parent if intent.parent != Path() else Path.cwd()
    try:
        found = subprocess.run(["git", "-C", str(folder), "rev-parse", "--show-toplevel"], capture_output=True,
                               check=False, timeout=30)
    except (OSError, subprocess.TimeoutExpired):  # no git, or a hung one: the current directory
        return Path.cwd().resolve()
    top = found.stdout.decode(errors="replace").strip()
    return Path(top).resolve() if found.returncode == 0 and top else Path.cwd().resolve()


def _artifact(file: str, root: Path | None) -> dict[str, Any]:
    """A file as SARIF names it: relative to ``root`` (a URI reference, percent-encoded, against %SRCROOT%), or an
    absolute file URI for a file outside it (an inventory elsewhere); as given without a root."""
    if root is None or file.startswith("<"):  # <input>, <inventory>: no file to point at
        return {"uri": quote(file) if root is not None else file}
    absolute = (Path.cwd() / file).resolve()
    try:
        return {"uri": quote(absolute.relative_to(root).as_posix()), "uriBaseId": SRCROOT}
    except ValueError:
        return {"uri": absolute.as_uri()}


def _sarif_location(where: Location, root: Path | None = None) -> dict[str, Any]:
    return {"physicalLocation": {"artifactLocation": _artifact(where.file, root),
                                 "region": {"startLine": max(where.line, 1), "startColumn": max(where.col, 1)}}}


def _sarif_result(finding: Finding, where: Location, index: dict[str, int], waived: str | None,
                  root: Path | None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.rule, "ruleIndex": index[finding.rule], "level": _SARIF_LEVEL[finding.severity],
        "message": {"text": f"{finding.subject}: {finding.message} (fix: {finding.fix})"},
        "locations": [_sarif_location(where, root)],
        # Stable across runs so code scanning tracks a finding instead of reopening it.
        "partialFingerprints": {"fabricgen/v1": f"{finding.rule}:{finding.subject}"},
    }
    if waived is not None:
        result["suppressions"] = [{"kind": "inSource", "justification": waived}]
    return result


def _sarif_input_result(problem: Diagnostic, index: dict[str, int], root: Path | None) -> dict[str, Any]:
    """An input error: its file, line and column, and its key path as the logical location (what an editor's
    outline shows)."""
    fix = f" (fix: {problem.hint})" if problem.hint else ""
    location = _sarif_location(problem.location, root)
    if not problem.key_path.startswith("<"):  # not <file>, <yaml> or <root>: those are no key
        location["logicalLocations"] = [{"fullyQualifiedName": problem.key_path, "kind": "member"}]
    return {"ruleId": problem.rule, "ruleIndex": index[problem.rule], "level": "error",
            "message": {"text": f"{problem.key_path}: {problem.message}{fix}"}, "locations": [location],
            "partialFingerprints": {"fabricgen/v1": f"{problem.rule}:{problem.location.file}:{problem.key_path}"}}


def _sarif_log(results: list[dict[str, Any]], properties: dict[str, Any], root: Path | None) -> str:
    """A SARIF 2.1.0 log of one run whose rules are the whole catalog (``ruleIndex`` points into it)."""
    run: dict[str, Any] = {"tool": {"driver": {"name": "fabricgen", "version": __version__,
                                               "informationUri": "https://fabricgen.dev",
                                               "rules": [_sarif_rule(r) for r in catalog()]}},
                           "results": results}
    if root is not None:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": f"{root.as_uri()}/"}}
    if properties:
        run["properties"] = properties
    sarif = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(sarif, indent=2, sort_keys=True) + "\n"


def _catalog_index() -> dict[str, int]:
    return {r.id: i for i, r in enumerate(catalog())}


def to_sarif(report: LintReport, locate: Locate, root: Path | None = None) -> str:
    """The report as SARIF 2.1.0; with ``root`` (:func:`repository_root`), every path relative to it."""
    index = _catalog_index()
    results = [_sarif_result(f, locate(f), index, None, root) for f in report.findings]
    results += [_sarif_result(w.finding, locate(w.finding), index, w.reason, root) for w in report.waived]
    # lint --configs --partial: say what was left out on purpose, as the text summary does
    return _sarif_log(results, {"skippedDevices": report.skipped} if report.skipped else {}, root)


def input_errors_sarif(problems: Sequence[Diagnostic], root: Path | None = None) -> str:
    """Input errors as `lint --format sarif` prints a report, each at its file, line and column."""
    index = _catalog_index()
    return _sarif_log([_sarif_input_result(problem, index, root) for problem in problems], {}, root)


def explain(rule: CatalogEntry) -> str:
    return f"{rule.id} {rule.name} ({rule.severity})\n{rule.summary}\n\n{rule.explanation}\n"


def rules_markdown() -> str:
    """docs/rules.md, generated from the registry (a test keeps the committed copy in sync)."""
    out = ["# fabricgen lint rules", "",
           "Generated from the rule registry by `fabricgen rules --format markdown`; do not edit by hand.", "",
           "The FG-INP rules are input errors: `fabricgen` finds them while loading the intent, the inventory or "
           "(`lint --configs`) the configs, stops with exit status 2 before anything is linted or rendered, and "
           "reports them with `--format json|sarif` like any finding. They cannot be waived. A lint rule's "
           "condition found already while loading (e.g. FG-SCH-001, DWRR weights) stops the load the same way and "
           "ends its message with the rule's ID.", "",
           "| ID | name | severity | checks |", "|---|---|---|---|"]
    rules = catalog()
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
        if covers := coverage_markdown(r.id):  # lint helper (issue 26): roads and platforms per rule
            out += ["", covers]
    return "\n".join(out) + "\n"
