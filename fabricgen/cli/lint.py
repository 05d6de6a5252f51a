"""fabricgen lint and rules: the consistency rules over the intent road or read-back configs."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from fabricgen.cli.common import EXIT_INVALID, _intent_locator, _report_input_errors, fail, input_errors, input_options
from fabricgen.cli.progress import Steps, for_fabric
from fabricgen.cli.rendering import CHUNK_DEVICES
from fabricgen.lint import LintReport, lint
from fabricgen.lint.configs import UnreadableConfigs, read_configs
from fabricgen.lint.registry import Finding, catalog, rule_selector
from fabricgen.lint.report import (
    explain,
    repository_root,
    rules_markdown,
    to_json,
    to_sarif,
    to_text,
)
from fabricgen.lint.reportcache import kept_or_made
from fabricgen.load.fabric import FabricInput, load
from fabricgen.load.selection import filter_option, selected_or_fail
from fabricgen.models.device import Fabric
from fabricgen.models.diagnostics import CONFIG_UNREADABLE, Diagnostic, Location
from fabricgen.resolve import Resolution
from fabricgen.runtime.forked import contiguous


@contextlib.contextmanager
def config_errors(fmt: str = "text", root: Path | None = None) -> Iterator[None]:
    """Config files that cannot be read, each printed as FILE:LINE: message, exit 2 (with ``fmt`` json or
    sarif, also a report of FG-INP-006 findings on stdout, as :func:`input_errors` prints)."""
    try:
        yield
    except UnreadableConfigs as exc:
        for problem in exc.problems:
            click.echo(str(problem), err=True)
        _report_input_errors([Diagnostic(Location(problem.path, problem.line, 1), "<file>", problem.message,
                                         rule=CONFIG_UNREADABLE) for problem in exc.problems], fmt, root)
        fail(f"{len(exc.problems)} problem(s) in the configs; nothing was linted")


@click.command("lint")
@input_options
@click.option("--configs", type=click.Path(path_type=Path, file_okay=False, exists=True), default=None,
              help="lint existing configs in DIR/<device>/ (rendered, hand-written or pulled from devices)")
@click.option("--partial", is_flag=True,
              help="with --configs: lint only the devices that have configs in DIR, on purpose")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text", show_default=True)
@click.option("--strict", is_flag=True, help="fail (exit 1) on warnings too")
@click.option("--explain", "explain_id", metavar="RULE", help="print what a rule checks, why, and how to fix it")
@click.option("--select", "select", metavar="RULES", multiple=True,
              help="report only these rules: IDs or prefixes (FG-PFC, FG-PFC-003), comma-separated or repeated")
@click.option("--ignore", "ignore", metavar="RULES", multiple=True,
              help="do not report these rules: IDs or prefixes, comma-separated or repeated (after --select)")
@click.option("--show-waived", is_flag=True,
              help="list waived findings too (text; by default one line counts them; json and sarif always list "
                   "them, marked waived)")
@filter_option("report only findings about these devices (lint still checks the whole fabric)")
def lint_cmd(intent: Path, inventory: Path, configs: Path | None, partial: bool, fmt: str, strict: bool,
             explain_id: str | None, select: tuple[str, ...], ignore: tuple[str, ...], show_waived: bool,
             filter_expr: str | None) -> None:
    """Check the fabric end to end: NIC ↔ switch ↔ switch classification, PFC, ECN/DCQCN, MTU, headroom,
    physical layer, scheduling, management isolation.

    \b
    With --configs, every inventory device must have its config in DIR/<device>/ and every cabled port must be
    up in it (missing evidence is an error, never a pass; --partial lints only the devices DIR has, on
    purpose). A config file that cannot be read (not UTF-8, binary, not parseable) is an input error.

    \b
    --filter narrows the report, not the check: lint runs over the whole fabric, since a rule looks at both
    ends of a link and at the neighbours, then reports (and counts, for the exit status) the findings about
    the selected devices: their own, and those of links whose other end they are. On a terminal, a fabric of
    2,000 devices or more shows a progress bar on stderr (never in a pipe, in CI or with --format json/sarif).

    \b
    Exit status: 0 clean (warnings allowed), 1 errors (or warnings with --strict), 2 input/usage errors
    (with --format json or sarif also reported as findings, each at its file, line and column).
    Examples:
      fabricgen lint                                   # the intent as fabricgen would render it
      fabricgen lint --configs out/                    # configs that exist (ours, hand-written, pulled)
      fabricgen lint --configs pulled/ --partial       # only the devices pulled/ has configs for
      fabricgen lint --format sarif > fabricgen.sarif  # GitHub code scanning
      fabricgen lint --filter 'role=leaf&platform=sonic'  # findings about the SONiC leaves only
      fabricgen lint --explain FG-PFC-001
      fabricgen lint --select FG-PFC --ignore FG-PFC-003   # the PFC rules but one

    \b
    --select and --ignore take rule IDs or their prefixes (FG-PFC: every PFC rule); they narrow the report
    and the exit status, never the input checks. Waived findings are counted on one line; --show-waived lists
    them (json and sarif always list them, marked waived).
    """
    if explain_id:
        found = next((r for r in catalog() if r.id == explain_id.upper() or r.name == explain_id), None)
        if found is None:
            fail(f"no rule {explain_id!r}; `fabricgen rules` lists them")
        click.echo(explain(found), nl=False)
        return
    if partial and configs is None:
        fail("--partial needs --configs DIR")
    try:
        reported = rule_selector(_patterns(select), _patterns(ignore))
    except ValueError as exc:
        fail(f"--select/--ignore: {exc}")
    root = repository_root(intent) if fmt == "sarif" else None
    with input_errors(fmt, root):
        loaded = load(intent, inventory, jobs=os.cpu_count() or 1)
    selected = selected_or_fail(loaded.inventory, filter_expr, fail)
    locate = _intent_locator(loaded)
    with for_fabric("lint", len(loaded.inventory.devices), machine_output=fmt != "text") as steps:
        if configs is None:
            whole = _intent_report(loaded, steps, fmt, root)
        else:
            with input_errors(fmt, root):
                fabric = _resolve_counted(loaded, steps)
            steps.phase("read configs")
            with config_errors(fmt, root):
                read = read_configs(fabric, configs, partial)
            locate = read.locator(locate)
            steps.phase("lint")
            whole = lint(read.fabric, evidence=read.evidence)
        report = _of_rules(_about(whole, selected), reported)
    text = to_text(report, locate, show_waived) if fmt == "text" else to_json(report, locate) if fmt == "json" \
        else to_sarif(report, locate, root)
    click.echo(text, nl=False)
    sys.exit(EXIT_INVALID if report.failed(strict) else 0)


def _intent_report(loaded: FabricInput, steps: Steps, fmt: str, root: Path | None) -> LintReport:
    """The intent road's report: the one render (or an earlier lint) kept for these very input files and this
    very code (fabricgen.lint.reportcache: lint is a pure function of them), else resolve and lint, and keep it.
    A CI pipeline that renders then lints the same commit resolves and lints once; at 32,768 GPUs that is 2.5 s
    of CPU. A Nautobot inventory, or no cache, is linted every time."""
    def resolved_and_linted() -> LintReport:
        with input_errors(fmt, root):
            fabric = _resolve_counted(loaded, steps)
        steps.phase("lint")
        return lint(fabric)

    return kept_or_made(loaded.input_hashes, resolved_and_linted)


def _resolve_counted(loaded: FabricInput, steps: Steps) -> Fabric:
    """``resolve``, in chunks of devices that move the progress bar (the same models and problems)."""
    resolution = Resolution(loaded.intent, loaded.inventory, loaded.locate)
    steps.phase("resolve", len(resolution.names))
    for chunk in contiguous(resolution.names, max(1, len(resolution.names) // CHUNK_DEVICES)):
        resolution.resolve(chunk)
        steps.advance(len(chunk))
    return resolution.fabric()


def _about(report: LintReport, devices: list[str] | None) -> LintReport:
    """The findings (waived ones too) about ``devices`` (None: every device): those of a selected device, and
    those of a link whose other end is one (a rule reports a link once, from one end: leaf1's speed mismatch
    with spine1 concerns spine1 too). The counts of what was checked stay the fabric's."""
    if devices is None:
        return report
    wanted = set(devices)

    def about(finding: Finding) -> bool:
        return finding.device in wanted or (finding.peer or "").partition(":")[0] in wanted

    return dataclasses.replace(report, findings=[f for f in report.findings if about(f)],
                               waived=[w for w in report.waived if about(w.finding)])


def _patterns(values: tuple[str, ...]) -> tuple[str, ...]:
    """--select/--ignore values, each comma-separated: `--select FG-PFC,FG-ECN` is `--select FG-PFC --select
    FG-ECN`."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _of_rules(report: LintReport, reported: Callable[[str], bool]) -> LintReport:
    """The findings (waived ones too) of the rules --select/--ignore keep; the exit status counts only those."""
    return dataclasses.replace(report, findings=[f for f in report.findings if reported(f.rule)],
                               waived=[w for w in report.waived if reported(w.finding.rule)])


@click.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True)
def rules_cmd(fmt: str) -> None:
    """List the rule catalog: every rule ID lint and the input checks report, with its severity.

    One line per rule: ID, severity, name, what it checks. FG-INP rules are input errors (YAML, schema,
    references, platform limits, missing device facts, unreadable configs): found while loading, never
    waivable. The others are lint rules; a waiver in the intent (lint.waive) names one of them with a reason.
    `--format markdown` prints docs/rules.md: each rule's why and how to fix it.

    \b
    Examples:
      fabricgen rules                                  # the catalog, one line per rule
      fabricgen rules | grep FG-PFC                    # the PFC rules
      fabricgen rules --format markdown > docs/rules.md
    """
    if fmt == "markdown":
        click.echo(rules_markdown(), nl=False)
        return
    for r in catalog():
        click.echo(f"{r.id}  {r.severity:<7}  {r.name:<34}  {r.summary}")
