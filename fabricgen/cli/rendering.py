"""What `fabricgen render` runs once fabricgen/cli/render.py has read its options, taken the lock of OUT and
started checking the earlier tree: load → resolve → lint gate → render → write the tree (whole, incremental or by
neighbourhood)."""

from __future__ import annotations

import contextlib
from functools import partial
from pathlib import Path
from typing import Any

import click

from fabricgen.api import generate_devices, generate_parallel, shard
from fabricgen.build.incremental import plan_render, renderer_fingerprint
from fabricgen.build.neighbourhood import Kind, UpdatePlan, apply_update, kinds_of, plan_update, record_render
from fabricgen.build.output import (
    MANIFEST,
    PreviousTree,
    build_manifest,
    file_hash,
    staged_render,
    update_output,
)
from fabricgen.cli.common import (
    EXIT_INVALID,
    EXIT_OUTPUT,
    _intent_locator,
    fail,
)
from fabricgen.cli.progress import Quiet, Steps, for_fabric
from fabricgen.cli.render import TreeCheck, _output_errors
from fabricgen.lint import lint
from fabricgen.lint.report import (
    to_json,
    to_text,
)
from fabricgen.lint.reportcache import kept_or_made
from fabricgen.load.fabric import FabricInput, load
from fabricgen.load.selection import selected_or_fail
from fabricgen.models.device import Fabric
from fabricgen.platforms.common import jsontext
from fabricgen.resolve import Resolution, resolve
from fabricgen.runtime.forked import contiguous
from fabricgen.runtime.teardown import keep_until_exit

# Devices per resolve-and-render chunk at least: a fork from a large parent (tens of ms, paid by the parent
# while it resolves) stays small beside the chunk's render.
CHUNK_DEVICES = 500


def render_into(intent: Path, inventory: Path, out: Path, fmt: str, force: bool, jobs: int, shard: str | None,
                filter_expr: str | None, check: TreeCheck) -> None:
    """render, with the lock of OUT held and ``check`` telling whether the earlier tree there (if any) is intact."""
    whole = shard is None and filter_expr is None
    plan = _neighbourhood(intent, inventory, out, check, whole)
    if plan is not None:
        # Freeing what the update read (its state, the models around the edit) object by object at exit costs
        # more than writing the update: left to the kernel.
        keep_until_exit(plan)
        _neighbourhood_update(plan, out, fmt)
        return
    loaded = load(intent, inventory, jobs=jobs)
    keep_until_exit(loaded)
    devices, extra = _shard_devices(sorted(loaded.inventory.devices), shard)
    devices = _filtered(loaded, devices, filter_expr, extra)
    extra["renderer"] = renderer_fingerprint()
    scanned = check.tree()  # a check in a forked process went on during the load
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


def _neighbourhood(intent: Path, inventory: Path, out: Path, check: TreeCheck, whole: bool) -> UpdatePlan | None:
    """The neighbourhood update of the earlier tree at ``out`` if it is one and its files are what its manifest
    says. Worked out while a forked process checks the files (0.15 s each at 32,768 GPUs; a thread would wait
    on the interpreter lock), and dropped if they fail the check; without one, only for a tree found intact.
    ``whole``: this render is of every device (no --shard, no --filter). A tree that a filtered render updated is
    no base for one either: its manifest's input hashes are newer than its unselected devices' files, which a
    neighbourhood update (it re-renders only around edited hosts.yaml entries) would keep."""
    unchecked = check.unchecked
    if unchecked is None or not whole or "filter" in unchecked.manifest:
        return None
    if not check.in_background and check.tree() is None:
        return None
    plan = plan_update(intent, inventory, out, unchecked, _renderer())
    return plan if check.tree() is not None else None


def _renderer() -> dict[str, Any]:
    return {"renderer": renderer_fingerprint()}


def _render_whole_tree(loaded: FabricInput, out: Path, devices: list[str] | None, jobs: int,
                       gate: _LintGate) -> tuple[Fabric, dict[str, str]]:
    """A new tree, resolved and rendered in one pass: while the parent resolves the next chunk of devices, a
    forked worker renders and writes the chunk just resolved into the staging tree (on 2 cores, 0.6 s of the
    3 s that resolving 32,768 GPUs takes). Lint runs beside the last workers and decides whether the tree is
    published; a problem found by resolve stops new workers and publishes nothing."""
    resolution = Resolution(loaded.intent, loaded.inventory, loaded.locate)
    keep_until_exit(resolution)
    wanted = set(resolution.names if devices is None else devices)
    gate.steps.phase("resolve", len(resolution.names))
    with staged_render(out, jobs) as render:
        produce = partial(generate_devices, resolution.devices)
        # Resolved in name order, so that problems are reported as resolve() reports them. The parent forks
        # once per chunk: a few large chunks, also on a machine with many cores. Each fork costs the parent a
        # copy of every page it writes afterwards (copy-on-write) and each worker the unmapping of the parent's
        # memory when it ends: at 32,768 GPUs on 2 cores, 8 chunks took 377,000 page faults and 1.4-2.9 s of
        # system time, 4 chunks 337,000 and 1.2-1.8 s, for the same overlap of resolving and rendering.
        count = max(1, min(2 * jobs, len(resolution.names) // CHUNK_DEVICES)) if render.forking else 1
        keep = loaded.keep  # the validated inventory, kept for the next load of the same files
        if keep is not None and render.forking:
            # by a worker of its own, on the core that idles while the first chunk is resolved
            render.start(produce, [], then=keep)
            keep = None
        chunks = contiguous(resolution.names, count)
        for number, chunk in enumerate(chunks, 1):
            if resolution.resolve(chunk) and (part := [name for name in chunk if name in wanted]):
                # The last chunk's workers are the ones the command waits for at the end: its devices are
                # shared by `jobs` of them, so that no core idles while one worker finishes alone.
                for piece in contiguous(part, jobs if number == len(chunks) and render.forking else 1):
                    render.start(produce, piece, then=keep)
                    keep = None
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
    keep_until_exit(fabric)
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
        # The report of a fabric these very input files resolved to before, by this very code: kept.
        report = kept_or_made(self.loaded.input_hashes, lambda: lint(self.fabric))
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
        # json.dumps(indent=2, sort_keys=True)'s bytes, by orjson (5,750 devices at 32,768 GPUs: 0.1 s in json).
        click.echo(jsontext.dumps({"fabric": fabric, "out": str(out), "files": len(paths) + 1,
                                   "rewritten": rewritten, "update": update, "written": sorted(written),
                                   "removed": sorted(removed), "lint_warnings": warnings, "filter": selection,
                                   "devices": {n: {"platform": kinds[n][1], "role": kinds[n][0], "files": f}
                                               for n, f in per_device.items()}}))
        return
    # One row per kind of device, not per device: a 32,768-GPU fabric has 5,750 of them.
    # rich only for the text summary: 23 ms of imports a `--format json` render (CI, the bench) does not need.
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

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
