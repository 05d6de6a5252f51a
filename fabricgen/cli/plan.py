"""`fabricgen plan`: the command-line edge of fabricgen/review/plan.py.

It renders both sides in memory and never writes the output tree. The head is the working tree: INTENT and
INVENTORY as they are on disk. The base is a git revision of the repository INTENT lives in (its intent and
inventory files at that revision, read with ``git cat-file`` into a private temporary folder the loader reads
and that is removed afterwards), or a tree ``fabricgen render`` wrote.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import click
from pydantic import ValidationError

from fabricgen.api import RESOLVED_FILE, generate_parallel
from fabricgen.build.output import read_manifest
from fabricgen.lint import lint
from fabricgen.lint.report import to_text as lint_text
from fabricgen.load.fabric import INVENTORY_FILES, FabricInput, load
from fabricgen.load.selection import filter_option, selected_or_fail, selects
from fabricgen.load.sources import compact, nautobot
from fabricgen.models.device import DeviceModel, Fabric
from fabricgen.models.diagnostics import InputError, folded_lines
from fabricgen.resolve import resolve
from fabricgen.review.plan import Plan, RevisionError, Side, compare, revision_blob, to_json, to_markdown, to_text

EXIT_LINT, EXIT_CHANGES, EXIT_BAD_INPUT = 1, 2, 3
"""plan's own exit statuses: a CI step tells "devices change" (2) from "the input or the command line is wrong"
(3), which the other commands report as 2."""
Fail = Callable[..., NoReturn]


class BaseError(Exception):
    """The base cannot be read (not a git repository, an unknown revision, an unreadable rendered tree)."""


def register(main: click.Group, input_options: Callable[[Any], Any], fail: Fail) -> None:
    """Add `plan` to the main group (cli.py owns the input options and how a failure is printed)."""
    def plan_fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
        fail(message, code)

    main.add_command(_plan_command(input_options, plan_fail))


class _PlanCommand(click.Command):
    """A command whose usage errors (an unknown option, a missing value) exit with EXIT_BAD_INPUT, not click's 2,
    which means "devices change" to plan."""

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            raise _PlanUsageError(exc.format_message(), exc.ctx) from None


class _PlanUsageError(click.UsageError):
    """A usage error of plan, worded as click words it, exiting EXIT_BAD_INPUT."""

    exit_code = EXIT_BAD_INPUT


def _plan_command(input_options: Callable[[Any], Any], fail: Fail) -> click.Command:
    @click.command("plan", cls=_PlanCommand)
    @input_options
    @click.option("--base", metavar="REV|DIR", default=None,
                  help="a git revision of the repository INTENT is in (default: the merge base of HEAD and its "
                       "upstream branch, else HEAD), or a directory `fabricgen render` wrote")
    @click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
                  show_default=True, help="markdown fits a pull-request comment")
    @filter_option("list only these devices (a device the change removes: by its name, role and platform)")
    def plan_cmd(intent: Path, inventory: Path, base: str | None, fmt: str, filter_expr: str | None) -> None:
        """Show what a change does to each device, between a base revision and the working tree.

        Renders the base and the working tree in memory (nothing is written) and lists, per device whose files
        differ, a summary of the settings that change (PFC
        priorities, ECN thresholds, MTU, headroom, DSCP maps, scheduler weights, PFC watchdog, ...; KB = 1000
        bytes) and the unified diff of its files. Devices whose files are the same are not listed; neither
        resolved.json nor the manifest is diffed. With a rendered tree as the base there is a summary only
        when its resolved.json files can be read; the output says so otherwise. A path that is a directory
        is taken as a rendered tree, anything else as a git revision. --filter lists only the devices it
        selects in the working tree's inventory (and removed devices its name, role or platform tests match);
        both sides are still rendered whole and lint still checks the whole head.

        \b
        Exit status: 0 no device changes · 2 devices change · 1 lint finds errors in the head (the plan is
        printed all the same) · 3 bad input or usage (an `error:` line on stderr, nothing on stdout; each
        problem as FILE:LINE:COL, a base file as REV:PATH:LINE:COL, as `git show REV:PATH` opens it).
        Examples:
          fabricgen plan                                    # against the merge base with the upstream branch
          fabricgen plan --base origin/main --format markdown > plan.md   # a pull-request comment
          fabricgen plan --base out/ --format json          # against the tree render last wrote
          fabricgen plan --filter 'role=leaf,role=spine'   # what the change does to the switches
        """
        try:
            head_input, head = _load_side(intent, inventory, "the head (working tree)", fail)
            selected = selected_or_fail(head_input.inventory, filter_expr, fail)
            head_side = Side(_render(head), head.devices, {"kind": "working tree", "intent": str(intent),
                                                           "inventory": str(inventory)})
            base_side = _tree_side(Path(base)) if base and Path(base).is_dir() else \
                _git_side(intent, inventory, base, fail)
        except BaseError as exc:
            fail(str(exc))
        report = lint(head)
        plan = _only(compare(base_side, head_side), filter_expr, selected)
        click.echo(to_text(plan) if fmt == "text" else to_json(plan, report.errors) if fmt == "json" else
                   to_markdown(plan, report.errors), nl=False)
        if report.errors:
            click.echo(lint_text(report, lambda finding: head_input.locate(finding.source or ())), err=True,
                       nl=False)
            sys.exit(EXIT_LINT)
        sys.exit(EXIT_CHANGES if plan.devices else 0)

    return plan_cmd


def _only(plan: Plan, expression: str | None, selected: list[str] | None) -> Plan:
    """The plan of the devices --filter selects: ``selected`` of the head's inventory, and the removed devices
    ``expression`` selects by name, role and platform. ``unchanged`` counts the selected devices that do not
    change."""
    if expression is None or selected is None:
        return plan
    wanted = set(selected)
    devices = [device for device in plan.devices if device.device in wanted
               or (device.change == "removed" and selects(expression, device.device, device.role, device.platform))]
    return dataclasses.replace(plan, devices=devices, unchanged=len(wanted - {d.device for d in devices}))


def _render(fabric: Fabric) -> dict[str, str]:
    return generate_parallel(fabric, os.cpu_count() or 1)


def _load_side(intent: Path, inventory: Path, side: str, fail: Fail,
               rename: Callable[[str], str] = str) -> tuple[FabricInput, Fabric]:
    """Load and resolve one side; its input problems printed as FILE:LINE:COL (``rename``: the file as the user
    can open it), then fail naming the side."""
    try:
        loaded = load(intent, inventory)
        return loaded, resolve(loaded.intent, loaded.inventory, loaded.locate)
    except InputError as exc:
        renamed = [dataclasses.replace(d, location=dataclasses.replace(d.location, file=rename(d.location.file)))
                   for d in exc.diagnostics]
        for line in folded_lines(renamed):
            click.echo(line, err=True)
        fail(f"{len(exc.diagnostics)} problem(s) in the input of {side}; nothing was compared")


# --- a rendered tree as the base ----------------------------------------------------------------------------

def _tree_side(directory: Path) -> Side:
    """The files a fabricgen manifest in ``directory`` lists, and the models its resolved.json files hold."""
    previous = read_manifest(directory)
    if previous is None:
        raise BaseError(f"--base {directory}: not a tree fabricgen rendered (no manifest.json of this fabricgen, "
                        "or the tree is marked incomplete); render it again, or name a git revision")
    files: dict[str, str] = {}
    for name in sorted(previous.files):
        try:
            files[name] = (directory / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise BaseError(f"{directory / name}: cannot be read ({exc}); the base tree is incomplete") from None
    return Side(files, _tree_models(files), {"kind": "tree", "path": str(directory)})


def _tree_models(files: dict[str, str]) -> dict[str, DeviceModel] | None:
    """Every device's model from its resolved.json; None when one is missing or this fabricgen cannot read it
    (written by a version whose model differs): then there is no summary, only file diffs."""
    devices = {path.partition("/")[0] for path in files}
    models: dict[str, DeviceModel] = {}
    for device in sorted(devices):
        text = files.get(f"{device}/{RESOLVED_FILE}")
        if text is None:
            return None
        try:
            models[device] = DeviceModel.model_validate_json(text)
        except ValidationError:
            return None
    return models


# --- a git revision as the base -----------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class _Repository:
    top: Path

    @classmethod
    def around(cls, path: Path) -> _Repository:
        found = _git(path, "rev-parse", "--show-toplevel")
        if found.returncode != 0:
            raise BaseError(f"--base: {path} is not in a git repository ({_message(found)}); name a rendered "
                            "tree with --base DIR instead")
        return cls(Path(found.stdout.decode().strip()))

    def commit(self, rev: str) -> str:
        found = _git(self.top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
        if found.returncode != 0:
            raise BaseError(f"--base {rev}: no such commit in {self.top}")
        return found.stdout.decode().strip()

    def default_base(self) -> tuple[str, str]:
        """The merge base of HEAD and its upstream branch (what a pull request is compared with), else HEAD."""
        upstream = _git(self.top, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
        if upstream.returncode == 0:
            merge_base = _git(self.top, "merge-base", "HEAD", "@{upstream}")
            if merge_base.returncode == 0:
                name = upstream.stdout.decode().strip()
                return merge_base.stdout.decode().strip(), f"merge base of HEAD and {name}"
        if _git(self.top, "rev-parse", "--verify", "--quiet", "HEAD").returncode != 0:
            raise BaseError(f"--base: {self.top} has no commit yet; commit the base first, or name a rendered tree")
        return self.commit("HEAD"), "HEAD: no upstream branch"

    def inside(self, path: Path) -> str:
        """``path`` relative to the top of the repository, as git names it."""
        try:
            return path.resolve().relative_to(self.top.resolve()).as_posix()
        except ValueError:
            raise BaseError(f"--base: {path} is outside the git repository {self.top}; the base revision "
                            "cannot hold it") from None

    def blob(self, commit: str, path: str) -> bytes | None:
        """The file at ``path`` in ``commit``, or None when that commit has no such file."""
        try:  # bounded in size and time (issue 27): see fabricgen.review.plan.revision_blob
            return revision_blob(self.top, commit, path)
        except RevisionError as exc:
            raise BaseError(str(exc)) from None


def _git(where: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(where), *args], capture_output=True, check=False)
    except OSError as exc:  # git itself is missing
        raise BaseError(f"--base needs git: {exc}") from None


def _message(result: subprocess.CompletedProcess[bytes]) -> str:
    return result.stderr.decode(errors="replace").strip().splitlines()[-1] if result.stderr.strip() else "git failed"


def _git_side(intent: Path, inventory: Path, rev: str | None, fail: Fail) -> Side:
    """The base revision's intent and inventory, loaded, resolved and rendered. The inventory files are those of
    either file form (SimpleInventory, or compact: devices.yaml + cabling.csv); a Nautobot is not in git, so
    with one the base is the revision's intent against the same Nautobot as the head (read again: its cache)."""
    repository = _Repository.around(intent.parent if intent.parent != Path() else Path.cwd())
    commit, how = (repository.commit(rev), rev) if rev else repository.default_base()
    description = {"kind": "git", "rev": rev or "", "commit": commit, "how": how}
    intent_path = repository.inside(intent)
    live = nautobot.url_of(inventory) is not None or nautobot.is_nornir_config(inventory)
    inventory_path = "" if live else repository.inside(inventory)
    files = [] if live else [f"{inventory_path}/{name}" for name in (*INVENTORY_FILES, *compact.FILES)]
    if live:
        description["how"] = f"{how}; its intent against the same Nautobot as the head: git holds no Nautobot"
    with _checked_out(repository, commit, [intent_path, *files]) as (folder, present):
        if intent_path not in present:  # the fabric is new in the head: every device is added
            return Side({}, {}, {**description, "how": f"{how}; {intent_path} is not there: every device is new"})
        _, fabric = _load_side(folder / intent_path, inventory if live else folder / inventory_path,
                               f"the base ({commit[:12]})", fail, rename=lambda file: _as_blob(file, folder, commit))
        return Side(_render(fabric), fabric.devices, description)


@contextmanager
def _checked_out(repository: _Repository, commit: str, paths: list[str]) -> Iterator[tuple[Path, set[str]]]:
    """``paths`` as ``commit`` has them, in a private temporary folder (the loader reads files); the folder and
    the set of paths the commit has."""
    with tempfile.TemporaryDirectory(prefix="fabricgen-plan-") as folder:
        present: set[str] = set()
        for path in paths:
            blob = repository.blob(commit, path)
            if blob is not None:
                target = Path(folder) / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(blob)
                present.add(path)
        yield Path(folder), present


def _as_blob(file: str, folder: Path, commit: str) -> str:
    """A file of the temporary checkout named as git names it: ``<commit>:<path>``."""
    prefix = f"{folder}{os.sep}"
    return f"{commit[:12]}:{file[len(prefix):]}" if file.startswith(prefix) else file
