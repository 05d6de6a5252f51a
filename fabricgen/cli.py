"""The command line: a thin edge around load → resolve → lint → render → write.

Exit status: 0 success · 1 lint errors (render, lint; warnings too with --strict) or rendered configs that
failed validation (``validate``) · 2 bad input or usage
(every problem printed as FILE:LINE:COL: key.path: message (hint)) · 3 the output directory could not be
written (the previous tree is left as it was, or, when an incremental update fails part-way, marked
.fabricgen-incomplete so the next render rewrites it whole) · 70 internal error (a bug: rerun with FABRICGEN_DEBUG=1 and
report it). `plan` alone differs: 2 devices change, 3 bad input or usage (fabricgen/review_command.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from fabricgen import __version__
from fabricgen.api import dump_fabric, generate_devices, generate_parallel, shard
from fabricgen.configs import UnreadableConfigs, read_configs
from fabricgen.deploy.commands import register as register_deploy_commands
from fabricgen.diagnostics import CONFIG_UNREADABLE, Diagnostic, InputError, Location
from fabricgen.forked import can_fork, contiguous, fork_map
from fabricgen.gctune import bulk_allocation
from fabricgen.incremental import plan_render, renderer_fingerprint
from fabricgen.inventory_sources.commands import register as register_inventory_commands
from fabricgen.lint import LintReport, lint
from fabricgen.lint.registry import Finding, catalog, rule_selector
from fabricgen.lint.report import (
    explain,
    input_errors_json,
    input_errors_sarif,
    repository_root,
    rules_markdown,
    to_json,
    to_sarif,
    to_text,
)
from fabricgen.load import FabricInput, load
from fabricgen.model import Fabric
from fabricgen.neighbourhood import Kind, UpdatePlan, apply_update, kinds_of, plan_update, record_render
from fabricgen.observe.commands import register as register_observe_commands
from fabricgen.output import (
    INCOMPLETE,
    MANIFEST,
    OutputError,
    PreviousTree,
    build_manifest,
    file_hash,
    output_lock,
    read_manifest,
    staged_render,
    tree_matches,
    update_output,
)
from fabricgen.platforms import get_platform
from fabricgen.profile_command import register as register_profile_commands
from fabricgen.progress import Quiet, Steps, for_fabric
from fabricgen.report.commands import register as register_docs_command
from fabricgen.resolve import Resolution, resolve
from fabricgen.resolve.headroom import DEFAULT_SONIC_RELEASE
from fabricgen.review_command import register as register_plan_command
from fabricgen.selection import filter_option, selected_or_fail

EXIT_INVALID, EXIT_INPUT, EXIT_OUTPUT = 1, 2, 3
DEFAULT_INTENT = Path("intent/fabric.yaml")
DEFAULT_INVENTORY = Path("inventory")
DEFAULT_OUT = Path("out")

# Devices per resolve-and-render chunk at least: a fork from a large parent (tens of ms, paid by the parent
# while it resolves) stays small beside the chunk's render.
CHUNK_DEVICES = 500

F = TypeVar("F", bound=Callable[..., Any])
err = Console(stderr=True, highlight=False, soft_wrap=True)


def fail(message: str, code: int = EXIT_INPUT) -> NoReturn:
    # The message is text, never markup: `pip install 'fabricgen[yang]'` or a key path `[0]` must print whole.
    err.print(f"[bold red]error:[/] {escape(message)}", markup=True)
    sys.exit(code)


def load_and_resolve(intent: Path, inventory: Path, jobs: int = os.cpu_count() or 1,
                     fmt: str = "text") -> tuple[FabricInput, Fabric]:
    with input_errors(fmt):
        loaded = load(intent, inventory, jobs=jobs)
        return loaded, resolve(loaded.intent, loaded.inventory, loaded.locate)


@contextlib.contextmanager
def input_errors(fmt: str = "text", root: Path | None = None) -> Iterator[None]:
    """Problems in the input (load or resolve) printed as FILE:LINE:COL: key.path: message (hint), exit 2.

    With ``fmt`` json or sarif they are also a report on stdout, each a finding with its rule ID, file, line and
    column: a CI job that reads stdout gets the problems, not an empty document (SARIF's paths relative to
    ``root``)."""
    try:
        yield
    except InputError as exc:
        for diagnostic in exc.diagnostics:
            click.echo(str(diagnostic), err=True)
        _report_input_errors(exc.diagnostics, fmt, root)
        fail(f"{len(exc.diagnostics)} problem(s) in the input; nothing was written")


def _report_input_errors(problems: Sequence[Diagnostic], fmt: str, root: Path | None = None) -> None:
    """Input errors on stdout as ``fmt`` wants a report (text: nothing; stderr already has them)."""
    if fmt == "json":
        click.echo(input_errors_json(problems), nl=False)
    elif fmt == "sarif":
        click.echo(input_errors_sarif(problems, root), nl=False)


def input_options(func: F) -> F:
    # readable=False: click's own check would end an unreadable file in a usage error; load names the file,
    # why it cannot be read and what to do, as it does for every other input problem.
    func = click.option("-i", "--inventory", type=click.Path(path_type=Path, readable=False),
                        default=DEFAULT_INVENTORY, show_default=True, help="Nornir SimpleInventory directory")(func)
    return click.argument("intent", type=click.Path(path_type=Path, readable=False), default=DEFAULT_INTENT)(func)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fabricgen")
def main() -> None:
    """Compile one RoCEv2 fabric intent + Nornir inventory into per-device configs.

    SONiC config_db.json, Arista EOS, Cumulus NVUE and Cisco NX-OS for the switches, and for every GPU host a
    ConnectX or Linux dcb script with its nccl.env: one DSCP, PFC, ECN, MTU and headroom plan, checked end to
    end by `fabricgen lint`. `fabricgen COMMAND --help` describes each command with examples.

    \b
    Exit status: 0 ok, 1 lint errors or invalid configs, 2 bad input/usage, 3 output not written
    (plan: 2 devices change, 3 bad input/usage; see `fabricgen plan --help`).
    Shell completion (bash; zsh and fish alike): eval "$(_FABRICGEN_COMPLETE=bash_source fabricgen)"
    """


@main.command()
@input_options
@click.option("-o", "--out", type=click.Path(path_type=Path), default=DEFAULT_OUT, show_default=True,
              help="output directory (replaced atomically)")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              help="summary format; json also reports input and lint errors as findings")
@click.option("--force", is_flag=True, help="write even when lint finds errors (recorded in the manifest)")
@click.option("--jobs", type=click.IntRange(min=1), default=os.cpu_count() or 1, show_default="CPU count",
              help="render in this many processes (output is byte-identical to --jobs 1)")
@click.option("--shard", metavar="K/N", default=None,
              help="render only the K-th of N deterministic slices of the devices (CI matrix jobs)")
@click.option("--full", is_flag=True,
              help="rewrite the whole tree atomically even when only some devices changed")
@filter_option("render only these devices into OUT, keep the other devices' files as they are")
def render(intent: Path, inventory: Path, out: Path, fmt: str, force: bool, jobs: int, shard: str | None,
           full: bool, filter_expr: str | None) -> None:
    """Render every device's configs into OUT/<device>/ plus OUT/manifest.json.

    When OUT holds an untouched earlier render (its manifest matches the files, same fabricgen and
    templates), only the devices whose resolved model changed are rendered and only changed files are
    rewritten; otherwise, or with --full, the whole tree is replaced atomically.

    \b
    Examples:
      fabricgen render                                  # the bundled example: intent/fabric.yaml + inventory/
      fabricgen render intent/minimal.yaml -o build/minimal
      fabricgen render site.yaml -i site-inventory --format json
      fabricgen render --filter 'role=leaf&platform=sonic'   # only the SONiC leaves' files, the rest kept

    OUT must not be a symbolic link, and a non-empty OUT must hold nothing but a tree fabricgen wrote (its
    manifest and the files listed there), otherwise nothing is written (exit 3). Renders into one OUT wait for
    each other (a lock file .OUT.fabricgen-lock beside it while one runs).

    Nothing is written while the input has errors (exit 2, each printed as FILE:LINE:COL: key.path: message) or
    lint finds errors (exit 1; --force writes anyway); with --format json stdout then holds the findings, as
    `fabricgen lint --format json` prints them.

    --filter renders only the devices it selects (lint still checks the whole fabric, since rules look at
    neighbours): into an empty OUT, a tree of those devices alone; into an earlier render, an update of their
    files that leaves every other device's files as they were. Either way the manifest records the filter, so
    the tree is never taken for a whole render. OUT must then be empty or a tree this fabricgen can update in
    place (otherwise exit 3: render it whole first).

    On a terminal, a fabric of 2,000 devices or more shows a progress bar on stderr (resolve, lint, render and
    write); never in a pipe, in CI ($CI set) or with --format json.
    """
    if filter_expr is not None and full:
        fail("--filter and --full: --full rewrites the whole tree, --filter only the selected devices; use one")
    # Input errors from any step (load, resolve beside the render workers) end here, after the staged tree is
    # cleaned up and the lock released.
    with input_errors(fmt), contextlib.ExitStack() as held:
        with _output_errors(out, updating=False):  # a symlinked OUT, no room for the lock file
            held.enter_context(output_lock(out))
        _render(intent, inventory, out, fmt, force, jobs, shard, full, filter_expr)


def _render(intent: Path, inventory: Path, out: Path, fmt: str, force: bool, jobs: int, shard: str | None,
            full: bool, filter_expr: str | None) -> None:
    """render, with the lock of OUT held."""
    unchecked = None if full else read_manifest(out)
    whole = shard is None and filter_expr is None
    plan, scanned = _neighbourhood(intent, inventory, out, unchecked, whole, jobs)
    if plan is not None:
        _neighbourhood_update(plan, out, fmt)
        return
    loaded = load(intent, inventory, jobs=jobs)
    devices, extra = _shard_devices(sorted(loaded.inventory.devices), shard)
    devices = _filtered(loaded, devices, filter_expr, extra)
    extra["renderer"] = renderer_fingerprint()
    previous = None if scanned is None else _previous_tree(scanned, extra)
    if filter_expr is not None and previous is None:
        _refuse_to_replace(out, filter_expr)
    steps = for_fabric("render", len(loaded.inventory.devices), machine_output=fmt != "text")
    gate = _LintGate(loaded, force, extra, fmt, steps)
    with _output_errors(out, updating=previous is not None), steps:
        if previous is None:
            fabric, hashes = _render_whole_tree(loaded, out, devices, jobs, gate)
            paths, written = list(hashes), [*hashes, MANIFEST]
            removed: list[str] = []  # the whole tree is replaced
        else:
            fabric, paths, written, removed = _update_tree(loaded, out, previous, devices, jobs, gate,
                                                           keep_unselected=filter_expr is not None)
    kinds = kinds_of(fabric.devices.values())
    if loaded.hosts_entries is not None and whole and "forced" not in extra:
        record_render(out, kinds, inventory / "hosts.yaml", loaded.hosts_entries)
    _summary(fabric.name, kinds, paths, out, fmt, written, removed, gate.warnings,
             "full" if previous is None else "incremental", _filter_note(extra, previous is not None),
             extra.get("filter"))


def _neighbourhood_update(plan: UpdatePlan, out: Path, fmt: str) -> None:
    """Write a neighbourhood update and print its summary."""
    with _output_errors(out, updating=True):
        rewritten = apply_update(out, plan)
    written = [name for name, text in plan.files.items() if plan.replaced.get(name) != file_hash(text)]
    # A neighbourhood update lints the edited devices and their neighbours for errors only: the fabric's
    # warning count is not known (None).
    _summary(plan.fabric, plan.state.kinds, plan.paths, out, fmt, [*written, MANIFEST] if rewritten else [],
             plan.removed, None, "neighbourhood",
             f"neighbourhood update: {plan.edited} hosts.yaml entr{'y' if plan.edited == 1 else 'ies'} "
             f"edited, {plan.resolved} device(s) resolved and {plan.linted} linted again; the rest as the "
             "previous render left it")


def _filtered(loaded: FabricInput, devices: list[str] | None, expression: str | None,
              extra: dict[str, Any]) -> list[str] | None:
    """The devices to render after `--filter` (within the shard, if any), recorded in the manifest's ``extra``:
    a tree of some devices, or one updated for some devices only, is never taken for a whole render."""
    selected = selected_or_fail(loaded.inventory, expression, fail)
    if selected is None or expression is None:
        return devices
    if devices is not None:
        in_shard = set(devices)
        selected = [name for name in selected if name in in_shard]
        if not selected:
            fail(f"--filter {expression}: selects no device of shard {extra['shard']['index']}/"
                 f"{extra['shard']['count']}")
    extra["filter"] = {"expression": expression, "devices": len(selected)}
    return selected


def _refuse_to_replace(out: Path, expression: str) -> None:
    """A filtered render writes a new tree only where there is none: replacing an earlier render (one this
    fabricgen cannot update in place) by the selected devices alone would delete every other device's files."""
    with contextlib.suppress(OSError):  # OUT missing or unreadable: the write reports what it must
        if out.is_dir() and not out.is_symlink() and any(out.iterdir()):
            fail(f"--filter {expression}: {out} holds a tree this render cannot update in place (rendered by "
                 "another fabricgen or other templates, for another --shard, edited since, or interrupted); "
                 "replacing it by the selected devices would delete the others' files. Render it whole first "
                 "(without --filter), or write the selection elsewhere with -o; nothing was written", EXIT_OUTPUT)


def _filter_note(extra: dict[str, Any], updated: bool) -> str:
    """The summary's line about `--filter`: which devices the tree holds as this render left them."""
    if "filter" not in extra:
        return ""
    selection = f"--filter {extra['filter']['expression']}: {extra['filter']['devices']} device(s) selected"
    if updated:
        return f"{selection}; the other devices' files are as the previous render left them"
    return f"{selection}; the tree holds only them ({MANIFEST} records the filter)"


def _neighbourhood(intent: Path, inventory: Path, out: Path, unchecked: PreviousTree | None,
                   whole: bool, jobs: int) -> tuple[UpdatePlan | None, PreviousTree | None]:
    """The neighbourhood update of the tree at ``out`` if it is one, and the tree if its files are what its
    manifest says. A forked process checks the files while this one works out the update (0.15 s each at
    32,768 GPUs; a thread would wait on the interpreter lock); a plan for a tree that fails the check is
    dropped. ``whole``: this render is of every device (no --shard, no --filter). A tree that a filtered render
    updated is no base for one either: its manifest's input hashes are newer than its unselected devices'
    files, which a neighbourhood update (it re-renders only around edited hosts.yaml entries) would keep."""
    if unchecked is None:
        return None, None
    whole = whole and "filter" not in unchecked.manifest
    if not whole or jobs < 2 or not can_fork():
        intact = tree_matches(out, unchecked)
        plan = plan_update(intent, inventory, out, unchecked, _renderer()) if intact and whole else None
        return plan, unchecked if intact else None
    planned: list[UpdatePlan | None] = []
    [intact] = fork_map(lambda _: tree_matches(out, unchecked), [[out]], meanwhile=lambda: planned.append(
        plan_update(intent, inventory, out, unchecked, _renderer())))
    return (planned[0], unchecked) if intact else (None, None)


def _renderer() -> dict[str, Any]:
    return {"renderer": renderer_fingerprint()}


@contextlib.contextmanager
def _output_errors(out: Path, updating: bool) -> Iterator[None]:
    """A tree that could not be written: exit 3, saying whether the previous one is intact or marked."""
    try:
        yield
    except (OutputError, OSError) as exc:
        if updating and (out / INCOMPLETE).exists():
            fail(f"cannot update {out}: {exc}; some of its files are updated, some not, and it is marked "
                 f"{INCOMPLETE}: run render again to rewrite it whole", EXIT_OUTPUT)
        fail(f"cannot write {out}: {exc}; the previous output (if any) is unchanged", EXIT_OUTPUT)


def _render_whole_tree(loaded: FabricInput, out: Path, devices: list[str] | None, jobs: int,
                       gate: _LintGate) -> tuple[Fabric, dict[str, str]]:
    """A new tree, resolved and rendered in one pass: while the parent resolves the next chunk of devices, a
    forked worker renders and writes the chunk just resolved into the staging tree (on 2 cores, 0.6 s of the
    3 s that resolving 32,768 GPUs takes). Lint runs beside the last workers and decides whether the tree is
    published; a problem found by resolve stops new workers and publishes nothing."""
    resolution = Resolution(loaded.intent, loaded.inventory, loaded.locate)
    wanted = set(resolution.names if devices is None else devices)
    gate.steps.phase("resolve", len(resolution.names))
    with staged_render(out, jobs) as render:
        produce = partial(generate_devices, resolution.devices)
        # Resolved in name order, so that problems are reported as resolve() reports them. The parent forks
        # once per chunk: a few large chunks, also on a machine with many cores.
        count = max(1, min(4 * jobs, len(resolution.names) // CHUNK_DEVICES)) if render.forking else 1
        for chunk in contiguous(resolution.names, count):
            if resolution.resolve(chunk) and (part := [name for name in chunk if name in wanted]):
                render.start(produce, part)
            gate.steps.advance(len(chunk))
        fabric = resolution.fabric()
        gate.fabric = fabric
        hashes = render.finish(lambda done: build_manifest({}, loaded.input_hashes, gate.extra, hashes=done),
                               gate=gate)
    return fabric, hashes


def _update_tree(loaded: FabricInput, out: Path, previous: PreviousTree, devices: list[str] | None, jobs: int,
                 gate: _LintGate, keep_unselected: bool = False) -> tuple[Fabric, list[str], list[str], list[str]]:
    """An earlier tree updated in place: only devices whose resolved model changed are rendered, only changed
    files rewritten. Lint runs while workers hash every resolved model, and decides whether anything is.
    ``keep_unselected`` (--filter): the files of devices not in ``devices`` stay as they are, listed in the new
    manifest with their hashes (each device's files still match its resolved.json, so a later whole render
    updates exactly the devices whose model changed since). Returns the fabric, every file of the tree, the
    files written (the manifest included) and those removed."""
    gate.steps.phase("resolve")
    gate.after_lint = "compare resolved models"
    fabric = gate.fabric = resolve(loaded.intent, loaded.inventory, loaded.locate)
    plan = plan_render(fabric, devices or sorted(fabric.devices), previous.files, jobs, gate=gate)
    if keep_unselected and devices is not None:
        selected = set(devices)
        plan.kept.update({path: digest for path, digest in previous.files.items()
                          if path.partition("/")[0] not in selected})
    gate.steps.phase("render changed devices")
    files = generate_parallel(fabric, jobs, plan.render)
    gate.steps.phase("write")
    changed = {name: text for name, text in files.items() if previous.files.get(name) != file_hash(text)}
    removed = sorted(set(previous.files) - set(files) - set(plan.kept))
    manifest = build_manifest(files, loaded.input_hashes, gate.extra, hashes=plan.kept)
    rewritten = update_output(out, changed, removed, manifest)
    return fabric, [*files, *plan.kept], [*changed, MANIFEST] if rewritten else [], removed


class _LintGate:
    """render's lint: print the errors, then stop (nothing is written) or, with --force, record them in the
    manifest. Called once, by whichever step of the render runs it beside its workers, once ``fabric`` is set.
    A render that stops with ``--format json`` prints the lint report as `lint --format json` does. ``steps``:
    the progress bar, told when lint begins and when the render's workers are all that is left to wait for."""

    fabric: Fabric

    def __init__(self, loaded: FabricInput, force: bool, extra: dict[str, Any], fmt: str,
                 steps: Steps | None = None) -> None:
        self.loaded, self.force, self.extra, self.fmt = loaded, force, extra, fmt
        self.steps: Steps = steps or Quiet()
        self.after_lint = "render and write"  # what the bar names while the rest of the work finishes
        self.warnings: int | None = None  # what lint found, for the summary

    def __call__(self) -> None:
        self.steps.phase("lint")
        report = lint(self.fabric)
        self.steps.phase(self.after_lint)
        self.warnings = report.warnings
        if not report.errors:
            return
        click.echo(to_text(report, _intent_locator(self.loaded)), err=True, nl=False)
        if not self.force and self.fmt == "json":
            click.echo(to_json(report, _intent_locator(self.loaded)), nl=False)
        if not self.force:
            fail(f"lint found {report.errors} error(s); nothing was written (fix them, waive them in the intent "
                 "with a reason, or pass --force)", EXIT_INVALID)
        self.extra["forced"] = {"lint_errors": report.errors}


def _previous_tree(previous: PreviousTree, extra: dict[str, Any]) -> PreviousTree | None:
    """The earlier render if an incremental update of it gives the same tree as a full render."""
    same_renderer = previous.manifest.get("renderer") == extra["renderer"]
    same_slice = previous.manifest.get("shard") == extra.get("shard")
    return previous if same_renderer and same_slice else None


def _shard_devices(names: list[str], spec: str | None) -> tuple[list[str] | None, dict[str, Any]]:
    """`--shard K/N` → the devices to render and what the manifest records about the slice."""
    if spec is None:
        return None, {}
    try:
        index, count = (int(part) for part in spec.split("/"))
        names = shard(names, index, count)
    except ValueError as exc:
        fail(f"--shard {spec}: {exc}" if "/" in str(exc) else f"--shard {spec}: write K/N, e.g. 2/8")
    return names, {"shard": {"index": index, "count": count, "devices": len(names)}}


def _summary(fabric: str, kinds: dict[str, Kind], paths: list[str], out: Path, fmt: str, written: list[str],
             removed: list[str], warnings: int | None, update: str, note: str = "",
             selection: dict[str, Any] | None = None) -> None:
    """What was rendered: per kind of device (``kinds``: device → role, platform), or per device in JSON, and
    how (``update``: the whole tree written, an incremental update of it, or a neighbourhood update). ``written``:
    the files written (the manifest included; none when the tree was up to date), ``removed``: those an update
    deleted, ``warnings``: how many warnings lint found (None: not known, a neighbourhood update lints only
    around the edited devices, for errors), ``selection``: what the manifest records of --filter (JSON: null
    when every device was rendered)."""
    rewritten = len(written)
    per_device: dict[str, list[str]] = {}
    for path in sorted(paths):
        owner, _, file = path.partition("/")
        per_device.setdefault(owner, []).append(file)
    if fmt == "json":
        click.echo(json.dumps({"fabric": fabric, "out": str(out), "files": len(paths) + 1,
                               "rewritten": rewritten, "update": update, "written": sorted(written),
                               "removed": sorted(removed), "lint_warnings": warnings, "filter": selection,
                               "devices": {n: {"platform": kinds[n][1], "role": kinds[n][0], "files": f}
                                           for n, f in per_device.items()}}, indent=2, sort_keys=True))
        return
    # One row per kind of device, not per device: a 32,768-GPU fabric has 5,750 of them.
    rows: dict[tuple[str, str, str], int] = {}
    for name, names in per_device.items():
        role, platform = kinds[name]
        row = (role, platform, " ".join(names))
        rows[row] = rows.get(row, 0) + 1
    # Rich reads markup in every string it is given: the path and names are escaped so `out[1]/` prints as is.
    table = Table(title=escape(f"fabric {fabric}: {len(per_device)} devices → {out}/"), title_justify="left")
    for column in ("role", "platform", "devices", "files per device"):
        table.add_column(column)
    for (role, platform, file_names), count in sorted(rows.items()):
        table.add_row(escape(role), escape(platform), str(count), escape(file_names))
    Console(highlight=False, width=120).print(table)
    total = len(paths) + 1
    if rewritten == total:
        click.echo(f"wrote {total} files ({MANIFEST} included)")
    elif rewritten == 0:
        click.echo(f"{out} is up to date: none of its {total} files needed rewriting")
    else:
        click.echo(f"updated {out}: {rewritten} of {total} files rewritten ({MANIFEST} included), "
                   "the rest unchanged")
    for line in (note, f"lint: {warnings} warning(s); `fabricgen lint` shows them" if warnings else ""):
        if line:
            click.echo(line)


@main.command("resolve")
@input_options
@click.option("--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True)
@click.option("--device", "devices", multiple=True, help="only these devices (repeatable)")
@filter_option("only these devices (with --device: the devices either names)")
def resolve_cmd(intent: Path, inventory: Path, fmt: str, devices: tuple[str, ...], filter_expr: str | None) -> None:
    """Print the resolved device models: every decision fabricgen made, before any vendor syntax.

    Loads and checks the intent and inventory as render does, then prints what every renderer reads: per
    device its port roles, speeds, MTUs, PFC priorities, headroom, ECN thresholds, DSCP and scheduler maps and
    management address, and per GPU host its NICs' settings and NCCL environment. When a rendered line
    surprises you, the decision behind it is here. Input errors exit 2, as in render.

    \b
    Examples:
      fabricgen resolve --device leaf1                 # one switch's decisions, as YAML
      fabricgen resolve --device node1 --device spine1 intent/minimal.yaml
      fabricgen resolve --format json | jq '.devices.node1.host.nccl_env'
      fabricgen resolve --filter 'role=spine,group=gpu_nodes'  # the spines and group gpu_nodes' members
    """
    loaded, fabric = load_and_resolve(intent, inventory)
    unknown = sorted(set(devices) - set(fabric.devices))
    if unknown:
        fail(f"no such device: {', '.join(unknown)}")
    filtered = selected_or_fail(loaded.inventory, filter_expr, fail)
    if devices or filtered is not None:
        wanted = [*devices, *(name for name in filtered or () if name not in devices)]
        fabric = fabric.model_copy(update={"devices": {n: fabric.devices[n] for n in wanted}})
    click.echo(dump_fabric(fabric, fmt), nl=False)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path, exists=True))
@click.option("--sonic-release", metavar="RELEASE", default=None,
              help="check every file against this SONiC release's models from the cache (default: each file's "
                   f"own release, else {DEFAULT_SONIC_RELEASE})")
@click.option("--models", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="a directory of SONiC *.yang models, for every file (default: $FABRICGEN_SONIC_YANG, else "
                   "the per-release cache)")
@click.option("--fetch-models", "fetch_release", metavar="[RELEASE]", is_flag=False, flag_value="", default=None,
              help="fill the cache with a release's models from sonic-buildimage (default: --sonic-release, else "
                   f"{DEFAULT_SONIC_RELEASE}), print the commit and where they went, and exit")
@click.option("--repo", metavar="URL", default=None,
              help="with --fetch-models: the sonic-buildimage git repository to fetch from (default: "
                   "$FABRICGEN_SONIC_BUILDIMAGE, else GitHub's)")
def validate(paths: tuple[Path, ...], sonic_release: str | None, models: Path | None, fetch_release: str | None,
             repo: str | None) -> None:
    """Validate rendered SONiC config_db.json files against SONiC's YANG models of their release.

    PATHS are files or output directories (default: out/). A file's release: --sonic-release, else the
    VERSIONS|DATABASE version of a config saved on a switch, else the inventory's sonic_release as the
    resolved.json beside it records, else the release the SONiC platform targets. Each release's models come
    from the per-user cache (~/.cache/fabricgen/sonic-yang/RELEASE/), which --fetch-models fills; --models DIR
    or $FABRICGEN_SONIC_YANG name one directory instead (sites without access to GitHub).

    \b
    Examples:
      fabricgen validate --fetch-models          # once: the 202411 models into the cache
      fabricgen validate                         # out/, each file against its release's models
      fabricgen validate --sonic-release 202505 out/leaf1/config_db.json
      fabricgen validate --models ./sonic-yang-models out/

    Needs the `yang` extra: pip install 'fabricgen[yang]' (and Debian's libyang2-dev); --fetch-models needs
    git. Exit status: 0 all valid, 1 some file invalid, 2 usage error or models missing or not fetched, 3 the
    cache could not be written.
    """
    from fabricgen.validate.models import ModelsError

    try:
        if fetch_release is not None:
            _fetch_models(_fetch_release(fetch_release, sonic_release), repo, paths)
            return
        if repo is not None:
            raise ModelsError("--repo only goes with --fetch-models")
        groups = _validation_groups(paths, models, sonic_release)
    except ModelsError as exc:
        fail(str(exc))
    bad = sum(_validate_group(*group) for group in groups)
    sys.exit(EXIT_INVALID if bad else 0)


def _fetch_release(fetch_release: str, sonic_release: str | None) -> str:
    """validate --fetch-models [RELEASE]: the release to fetch."""
    from fabricgen.validate.models import ModelsError, check_release

    if fetch_release and sonic_release and fetch_release != sonic_release:
        raise ModelsError(f"--fetch-models {fetch_release} and --sonic-release {sonic_release}: name one release")
    return check_release(fetch_release or sonic_release or DEFAULT_SONIC_RELEASE)


def _fetch_models(release: str, repo: str | None, paths: tuple[Path, ...]) -> None:
    """validate --fetch-models: fill the cache entry of ``release``; nothing is validated."""
    from fabricgen.validate.models import ModelsError, cache_root, fetch_models

    if paths:
        raise ModelsError("--fetch-models only fills the cache; validate in a second run, without it")
    click.echo(f"fetching the SONiC {release} YANG models ...", err=True)
    try:
        result = fetch_models(release, repo)
    except OSError as exc:
        fail(f"cannot write the models cache {cache_root()}: {exc}", EXIT_OUTPUT)
    click.echo(f"fetched {result.modules} SONiC {result.release} YANG models from {result.repository} "
               f"at commit {result.commit}\ninto {result.destination}")


def _validation_groups(paths: tuple[Path, ...], models: Path | None,
                       sonic_release: str | None) -> list[tuple[str, Path, list[Path]]]:
    """(what the models are, their directory, the files checked against them), one per models directory."""
    from fabricgen.validate.models import ENV_MODELS, ModelsError, explicit_models_dir

    searched = paths or (DEFAULT_OUT,)
    targets = sorted({f for p in searched for f in _config_dbs(p)})
    explicit = explicit_models_dir(models)
    if explicit is not None and sonic_release is not None:
        named = "--models" if models is not None else f"${ENV_MODELS}"
        raise ModelsError(f"--sonic-release takes models from the cache, {named} names a directory: use one")
    if not targets:
        raise ModelsError("no config_db.json found in " + ", ".join(str(p) for p in searched))
    if explicit is not None:
        return [(str(explicit), explicit, targets)]
    return _cached_groups(targets, sonic_release)


def _cached_groups(targets: list[Path], sonic_release: str | None) -> list[tuple[str, Path, list[Path]]]:
    """The files by release, each with its release's cached models; ModelsError naming every missing release."""
    from fabricgen.validate.models import ModelsError, cached_models, check_release, missing_models_message, release_of

    by_release: dict[str, list[Path]] = {}
    for target in targets:
        release = check_release(sonic_release) if sonic_release else release_of(target)
        by_release.setdefault(release, []).append(target)
    found = {release: cached_models(release) for release in sorted(by_release)}
    missing = [missing_models_message(release) for release, cached in found.items() if cached is None]
    if missing:
        raise ModelsError("; ".join(missing))
    return [(cached.describe(), cached.directory, by_release[release])
            for release, cached in found.items() if cached is not None]


def _validate_group(label: str, models_dir: Path, targets: list[Path]) -> int:
    """Print every issue of ``targets`` and a summary line; how many files are invalid."""
    from fabricgen.platforms.sonic import BASELINE
    from fabricgen.validate.sonic_yang import SonicYangValidator, validate_file

    try:
        validator = SonicYangValidator(models_dir)
    except RuntimeError as exc:  # libyang missing (YangUnavailable), or a model in the directory it cannot load
        fail(str(exc))
    bad = 0
    for target in targets:
        issues = validate_file(target, validator, BASELINE)
        bad += bool(issues)
        for issue in issues:
            click.echo(f"{target}: {issue.path}: {issue.message}")
    click.echo(f"{len(targets) - bad} of {len(targets)} config_db.json valid against {label}")
    return bad


def _config_dbs(path: Path) -> list[Path]:
    return [path] if path.is_file() else sorted(path.rglob("config_db.json"))


@main.command()
@click.argument("kind", type=click.Choice(["intent", "inventory"]), default="intent")
def schema(kind: str) -> None:
    """Print the JSON Schema of an intent file or of an inventory host (for editors' YAML language server).

    KIND is `intent` (the intent file, e.g. intent/fabric.yaml) or `inventory` (the Nornir SimpleInventory's
    hosts.yaml or groups.yaml). An editor with a YAML language server then completes keys, shows each key's
    description and underlines a misspelt key or a wrong type as you type, before `fabricgen lint` runs.

    \b
    Examples:
      fabricgen schema > intent/fabricgen-intent.schema.json
      fabricgen schema inventory > inventory/fabricgen-inventory.schema.json
      # then, as the first line of intent/fabric.yaml (hosts.yaml alike):
      # yaml-language-server: $schema=fabricgen-intent.schema.json
    """
    from fabricgen.jsonschema import intent_schema, inventory_schema

    click.echo(json.dumps(intent_schema() if kind == "intent" else inventory_schema(), indent=2,
                          sort_keys=True))


def _intent_locator(loaded: FabricInput) -> Callable[[Finding], Location]:
    return lambda finding: loaded.locate(finding.source or ())


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


@main.command("lint")
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
    with for_fabric("lint", len(loaded.inventory.devices), machine_output=fmt != "text") as steps:
        with input_errors(fmt, root):
            fabric = _resolve_counted(loaded, steps)
        locate = _intent_locator(loaded)
        evidence = None
        if configs is not None:
            steps.phase("read configs")
            with config_errors(fmt, root):
                read = read_configs(fabric, configs, partial)
            fabric, evidence, locate = read.fabric, read.evidence, read.locator(locate)
        steps.phase("lint")
        report = _of_rules(_about(lint(fabric, evidence=evidence), selected), reported)
    text = to_text(report, locate, show_waived) if fmt == "text" else to_json(report, locate) if fmt == "json" \
        else to_sarif(report, locate, root)
    click.echo(text, nl=False)
    sys.exit(EXIT_INVALID if report.failed(strict) else 0)


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


@main.command("rules")
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


@main.command("platforms")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True)
def platforms_cmd(fmt: str) -> None:
    """List the platforms and what they can express.

    One line per platform an inventory host may name (`platform:`): switch or host, its largest MTU, and the
    software version the output is written for. `--format markdown` prints docs/platforms.md: per platform the
    settings it can
    express (lossless classes, PFC watchdog actions and timer steps, headroom, ECN), the files rendered, and
    what `lint --configs` reads back from them.

    \b
    Examples:
      fabricgen platforms                              # name, kind, max MTU, target software
      fabricgen platforms --format markdown > docs/platforms.md
    """
    from fabricgen.deploy.outcome import OUTCOMES
    from fabricgen.platforms import platform_names
    from fabricgen.platforms.matrix import platforms_markdown

    if fmt == "markdown":
        click.echo(platforms_markdown(OUTCOMES), nl=False)
        return
    for name in platform_names():
        cap = get_platform(name).capability
        click.echo(f"{name:<10} {cap.kind:<6} max MTU {cap.max_mtu:<5} {cap.target}")


# diff, push, rollback, runs: the deploy stage (fabricgen/deploy/), after write.
register_deploy_commands(main, load_and_resolve, input_options, fail)
# profile list|show: what a `profile:` fills in (fabricgen/profile_command.py).
register_profile_commands(main)
# docs: device pages, the HTML fabric report and the validation runbook (fabricgen/report/).
register_docs_command(main, load_and_resolve, input_options, fail)
# plan: what a change does to each device, between two revisions (fabricgen/review_command.py).
register_plan_command(main, input_options, fail)
# observe [serve], health: counters, their history and health against the intent (fabricgen/observe/).
register_observe_commands(main, load_and_resolve, input_options, fail)
# inventory export: the inventory's other forms, compact cabling and Nautobot (fabricgen/inventory_sources/).
register_inventory_commands(main, fail)


def escape_unencodable_output() -> None:
    """Write what the terminal's encoding cannot show as escapes (``\\u2192``) instead of raising
    UnicodeEncodeError: with LANG=C or a Latin-1 locale a render that wrote its tree must still exit 0, and a
    diagnostic must still reach the user."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # absent on streams a caller replaced
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # a closed or detached stream: nothing to print to
                reconfigure(errors="backslashreplace")


def run() -> None:  # pragma: no cover - console entry guard
    escape_unencodable_output()
    try:
        with bulk_allocation():
            main()
    except KeyboardInterrupt:
        fail(f"interrupted; the output is unchanged, or marked {INCOMPLETE} if an incremental update had "
             "begun (render again to repair it)", 130)
    except Exception as exc:
        if os.environ.get("FABRICGEN_DEBUG"):
            raise
        fail(f"internal error: {type(exc).__name__}: {exc} (rerun with FABRICGEN_DEBUG=1 and report it)", 70)
