"""fabricgen render: the command, its options and its start. What it then runs (load → resolve → lint gate →
render → write the tree, whole, incremental or by neighbourhood) is fabricgen/cli/rendering.py, imported once the
check of the earlier tree in OUT is under way in a forked process: that check (a stat of each file, 20k at
32,768 GPUs: 0.15-0.2 s) then runs beside the imports of the stages, which take as long, instead of beside the
work that follows them. So this module imports little: click, the output's safety checks, the option helpers."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import click

from fabricgen.build.output import INCOMPLETE, OutputError, PreviousTree, output_lock, read_manifest, tree_matches
from fabricgen.cli.common import DEFAULT_OUT, EXIT_OUTPUT, fail, input_errors, input_options
from fabricgen.load.selection import filter_option
from fabricgen.runtime.forked import Background, can_fork


@click.command()
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
    """render, with the lock of OUT held: the earlier tree's manifest read and its files checked (in a forked
    process from here on, with ``jobs`` > 1), while the stages are imported and run."""
    unchecked = None if full else read_manifest(out)
    with TreeCheck(out, unchecked, in_background=jobs > 1) as check:
        from fabricgen.cli import rendering  # the stages: see the module's docstring

        rendering.render_into(intent, inventory, out, fmt, force, jobs, shard, filter_expr, check)


class TreeCheck:
    """Whether the earlier tree at ``out`` holds what its manifest (``unchecked``, None when there is none) says
    (:func:`tree_matches`): worked out by a forked process from the start when ``in_background`` (and the platform
    forks), else in this one when first asked. Leaving the ``with`` block ends the process if it still runs."""

    def __init__(self, out: Path, unchecked: PreviousTree | None, in_background: bool) -> None:
        self.out, self.unchecked = out, unchecked
        self._intact: bool | None = None
        self._background: Background[bool] | None = None
        if unchecked is not None and in_background and can_fork():
            self._background = Background(partial(tree_matches, out, unchecked))

    @property
    def in_background(self) -> bool:
        """Whether a forked process is (or was) checking the tree, so that work may go on before its answer."""
        return self._background is not None

    def tree(self) -> PreviousTree | None:
        """The earlier tree if its files are what its manifest says, else None (waits for the check)."""
        if self.unchecked is None:
            return None
        if self._intact is None:
            self._intact = self._background.result() if self._background is not None else \
                tree_matches(self.out, self.unchecked)
        return self.unchecked if self._intact else None

    def __enter__(self) -> TreeCheck:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._background is not None:
            self._background.__exit__(*exc_info)


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
