"""`fabricgen diff | push | rollback | runs`: the command-line edge of deploy.

Exit status of diff (terraform's -detailed-exitcode): 0 nothing would change · 2 changes pending · 1 errors
(unreachable, authentication, the device refused). Exit status of push and rollback: 0 all done · 1 some
devices failed and were reverted (or were left untouched when the push stopped) · 2 bad input or usage ·
3 a device may need attention (named in the output: e.g. its revert could not be read back).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar, cast

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from fabricgen import __version__
from fabricgen.api import generate_devices
from fabricgen.deploy.hostbundle import bundle_from_rendered
from fabricgen.deploy.journal import (
    Journal,
    JournalLocked,
    RunRecord,
    candidate_path,
    escape,
    fabric_lock,
    list_runs,
    new_run_id,
    next_seq,
    read_run,
    valid_run_id,
)
from fabricgen.deploy.outcome import DEFAULT_STEP_DEADLINE_S, EXIT_ATTENTION, Deployment, Outcome, PushOptions
from fabricgen.deploy.plan import DEPLOYABLE, PlanError, select, waves
from fabricgen.deploy.progress import for_terminal
from fabricgen.deploy.waves import apart, disruption_lines, notes
from fabricgen.lint import lint
from fabricgen.load.selection import SelectionError, filter_devices
from fabricgen.models.device import DeviceModel, Fabric
from fabricgen.models.inventory import Inventory
from fabricgen.platforms import get_platform

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_JOURNAL = Path("runs")
HEADLINE = 300  # characters of a device's message in the table
out = Console(highlight=False, soft_wrap=True)


@dataclass(frozen=True)
class Selection:
    """Which devices a deploy command works on: every option must agree (they narrow each other)."""

    hosts: str = ""
    role: str | None = None
    platform: str | None = None
    shard: str | None = None
    filter: str | None = None


def selection_options(func: F) -> F:
    """The selection flags, handed to the command as one ``selection: Selection``."""

    @functools.wraps(func)
    def command(*args: Any, hosts: str, role: str | None, platform: str | None, shard_spec: str | None,
                filter_expr: str | None, **kwargs: Any) -> Any:
        return func(*args, selection=Selection(hosts, role, platform, shard_spec, filter_expr), **kwargs)

    options = [
        click.option("--filter", "filter_expr", default=None, metavar="EXPR",
                     help="Nornir-style selection: name globs, role=, platform=, group=; ',' or, '&' and, '!' not "
                          "(e.g. 'role=leaf&platform=sonic')"),
        click.option("--hosts", default="", metavar="A,B", help="device names or globs, comma-separated"),
        click.option("--role", default=None, help="only devices of this role (gpu-host, leaf, spine...)"),
        click.option("--platform", default=None, help="only devices of this platform"),
        click.option("--shard", "shard_spec", default=None, metavar="K/N",
                     help="the same slice of the selection as `render --shard K/N`, for a CI matrix"),
    ]
    for option in reversed(options):
        command = option(command)
    return cast(F, command)


def workers_option(func: F) -> F:
    return click.option("--workers", type=click.IntRange(min=1), default=8, show_default=True,
                        help="devices handled at once (SSH handshakes are CPU-bound: 2-4x the cores)")(func)


@dataclass(frozen=True)
class Edge:
    """What the deploy commands borrow from cli.py: loading with input errors, the input options, failing."""

    load_and_resolve: Callable[[Path, Path], tuple[Any, Fabric]]
    input_options: Callable[[Any], Any]
    fail: Callable[..., NoReturn]

    def prepare(self, intent: Path, inventory: Path, selection: Selection,
                gate: bool) -> tuple[Fabric, Inventory, list[str], dict[str, str]]:
        loaded, fabric = self.load_and_resolve(intent, inventory)
        try:
            allowed = set(filter_devices(loaded.inventory, selection.filter)) if selection.filter else None
            names = select(fabric, selection.hosts.split(","), selection.role, selection.platform, selection.shard,
                           allowed)
        except (PlanError, SelectionError) as exc:
            self.fail(f"--filter {selection.filter}: {exc}" if isinstance(exc, SelectionError) else str(exc))
        if not names:
            self.fail("the selection holds no device with a deploy driver (platforms with one: "
                      f"{', '.join(sorted(DEPLOYABLE))})")
        report = lint(fabric)
        if gate and report.failed(False):
            self.fail(f"lint finds {report.errors} error(s): run `fabricgen lint`, fix them or waive them; "
                      "nothing was pushed", 1)
        rendered = generate_devices(fabric.devices, names, with_resolved=False)
        return fabric, loaded.inventory, names, rendered


def register(main: click.Group, load_and_resolve: Callable[[Path, Path], tuple[Any, Fabric]],
             input_options: Callable[[Any], Any], fail: Callable[..., NoReturn]) -> None:
    """Add the deploy commands to the main group (cli.py owns loading and input errors)."""
    edge = Edge(load_and_resolve, input_options, fail)
    for make in (_diff_command, _push_command, _rollback_command, _runs_command):
        main.add_command(make(edge))


def _diff_command(edge: Edge) -> click.Command:
    @click.command("diff")
    @edge.input_options
    @selection_options
    @workers_option
    @click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
    def diff_cmd(intent: Path, inventory: Path, selection: Selection, workers: int, fmt: str) -> None:
        """Show, per device, what a push would change; nothing is left on the devices.

        Renders the intent in memory and asks each selected device with a deploy driver how its running state
        differs: a switch's own diff of the candidate against its running configuration, a GPU host's script
        run with --check on the host plus the installed files compared. The selection flags narrow each other; lint
        findings are not enforced here, only by push.

        \b
        Exit status: 0 nothing would change, 2 changes pending, 1 errors.
        Examples:
          fabricgen diff                                 # every device with a deploy driver
          fabricgen diff --hosts 'node*' --format json   # for CI
          fabricgen diff --filter 'role=leaf&platform=sonic'   # the SONiC leaves only
        """
        fabric, inv, names, rendered = edge.prepare(intent, inventory, selection, gate=False)
        from fabricgen.deploy import engine  # the network libraries load only for deploy commands

        deployment = _deployment(fabric, inv, names, rendered)
        outcomes = engine.diff(deployment, workers)
        _show(outcomes, fmt, "diff")
        sys.exit(engine.diff_exit_code(outcomes))

    return diff_cmd


def _push_command(edge: Edge) -> click.Command:
    @click.command("push")
    @edge.input_options
    @selection_options
    @workers_option
    @click.option("--confirm-timeout", type=click.IntRange(min=10, max=3600), default=300, show_default=True,
                  help="seconds before a device reverts by itself unless confirmed")
    @click.option("--canary", type=click.IntRange(min=0), default=1, show_default=True,
                  help="devices in the first wave")
    @click.option("--batch", default="10%", show_default=True, help="devices per later wave: N or P%")
    @click.option("--max-failures", type=click.IntRange(min=0), default=0, show_default=True,
                  help="failures tolerated before the push stops")
    @click.option("--soak", type=click.IntRange(min=0), default=0, show_default=True,
                  help="seconds to wait after a wave's commits before its health checks")
    @click.option("--yes", is_flag=True, help="do not ask (CI)")
    @click.option("--allow-disruptive", is_flag=True,  # (gcu, issue 24)
                  help="commit changes that bounce ports (SONiC: GCU takes QoS-changed ports admin-down and up)")
    @click.option("--journal", "journal_root", type=click.Path(path_type=Path, file_okay=False),
                  default=DEFAULT_JOURNAL, show_default=True, help="where runs/<run-id>/ journals go")
    @click.option("--resume", "resume_id", default=None, metavar="RUN_ID",
                  help="finish an interrupted run: devices it already confirmed are skipped")
    @click.option("--step-deadline", type=click.IntRange(min=10), default=DEFAULT_STEP_DEADLINE_S, show_default=True,
                  help="seconds one device's whole step (commit, soak, checks, confirm) may take; past it the device "
                       "is `attention` and its wave goes on without it")
    @click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
    def push_cmd(intent: Path, inventory: Path, selection: Selection, workers: int, confirm_timeout: int, canary: int,
                 batch: str,
                 max_failures: int, soak: int, yes: bool, allow_disruptive: bool, journal_root: Path,
                 resume_id: str | None, step_deadline: int, fmt: str) -> None:
        """Push the rendered intent to the devices in waves, each change reverting by itself unless confirmed.

        Per device: diff, commit with a revert timer on the device, health checks (fresh login, settings read
        back, data links still up), confirm. A device that is not confirmed in time reverts by itself, even if
        fabricgen dies or the management network drops. A canary wave goes first, then waves of --batch;
        the push stops after --max-failures failures. Nothing is pushed while lint finds errors. Every run is
        journaled in --journal DIR (`fabricgen runs` shows it, `fabricgen rollback` undoes it).

        \b
        Exit status: 0 all done, 1 failures (reverted), 2 bad input, 3 a device needs attention.
        Examples:
          fabricgen push --hosts 'node*'                   # asks before pushing
          fabricgen push --yes --canary 1 --batch 25%      # CI
          fabricgen push --resume 20261203T140501Z-3fa2c1  # finish an interrupted run
          fabricgen push --filter 'group=rail0' --soak 60  # one rail, a minute of soak before its checks
        """
        fabric, inv, names, rendered = edge.prepare(intent, inventory, selection, gate=True)
        run_id = resume_id or new_run_id()
        with _fabric_locked(journal_root, run_id, "push", edge.fail):
            code, outcomes = _push_locked(edge, fabric, inv, names, rendered, PushRequest(
                journal_root, run_id, resume_id, selection, canary, batch, yes, workers, fmt,
                PushOptions(confirm_timeout, max_failures, workers, soak=soak, resume_run=resume_id,
                            allow_disruptive=allow_disruptive, step_deadline=step_deadline)))
        _show(outcomes, fmt, "push", run_id)
        sys.exit(code)

    return push_cmd


@dataclass(frozen=True)
class PushRequest:
    """What one `push` was asked for, beyond the inputs and the selection."""

    journal_root: Path
    run_id: str
    resume_id: str | None
    selection: Selection
    canary: int
    batch: str
    yes: bool
    workers: int
    fmt: str
    options: PushOptions


@contextmanager
def _fabric_locked(root: Path, run_id: str, command: str, fail: Callable[..., NoReturn]) -> Iterator[None]:
    """The journal root's lock for the whole command, or the command ends at once naming who holds it."""
    stack = ExitStack()
    try:
        stack.enter_context(fabric_lock(root, run_id, command))
    except (JournalLocked, OSError) as exc:
        fail(f"nothing was done: {exc}")
    with stack:
        yield


def _push_locked(edge: Edge, fabric: Fabric, inv: Inventory, names: list[str], rendered: dict[str, str],
                 request: PushRequest) -> tuple[int, dict[str, Outcome]]:
    from fabricgen.deploy import engine

    options = request.options
    identity = _identity(fabric, request.selection, _deployment(fabric, inv, names, rendered).candidates)
    if request.resume_id is not None:
        names = _resumable(request.journal_root, request.resume_id, names, identity, edge.fail)
    try:
        plan = waves(fabric, names, request.canary, request.batch)
    except PlanError as exc:
        edge.fail(str(exc))
    if options.soak >= options.step_deadline:
        edge.fail(f"--soak {options.soak} must be shorter than --step-deadline {options.step_deadline}")
    if options.soak >= options.confirm_timeout:
        edge.fail(f"--soak {options.soak} must be shorter than --confirm-timeout {options.confirm_timeout}: the "
                  "devices would revert before their health checks")
    deployment = _deployment(fabric, inv, names, rendered)
    if request.yes:
        plan = apart(fabric, plan)[0]
    else:
        plan = _approved(deployment, fabric, plan, request.workers) or edge.fail("nothing was pushed", 1)
    journal = Journal(request.journal_root, request.run_id)
    deployment.journal = journal
    journal.write("run-start", command="push" if request.resume_id is None else "push --resume",
                  seq=next_seq(request.journal_root), identity=identity,
                  plan={"devices": names, "waves": plan, "confirm_timeout": options.confirm_timeout,
                        "max_failures": options.max_failures, "fabricgen": __version__})
    for name, text in deployment.candidates.items():
        journal.save(candidate_path(name), text)
    deployment.progress = for_terminal(len(names), machine_output=request.fmt == "json")
    try:
        code = engine.push(deployment, plan, options, request.run_id)
    finally:
        deployment.progress.close()
    journal.write("run-end", exit_code=code)
    journal.close()
    return code, deployment.outcomes


def _rollback_command(edge: Edge) -> click.Command:
    @click.command("rollback")
    @click.argument("run_id", required=False)
    @click.option("--hosts", default="", metavar="A,B", help="only these devices of the run (names or globs)")
    @click.option("--filter", "filter_expr", default=None, metavar="EXPR",
                  help="only the run's devices this Nornir-style selection matches (as for push)")
    @click.option("--force", is_flag=True, help="roll back devices that drifted since the run without asking")
    @click.option("--yes", is_flag=True, help="do not ask before starting")
    @click.option("--allow-disruptive", is_flag=True,
                  help="roll back devices whose revert bounces ports (SONiC: GCU takes them admin-down and up)")
    @click.option("--workers", type=click.IntRange(min=1), default=8, show_default=True)
    @click.option("--step-deadline", type=click.IntRange(min=10), default=DEFAULT_STEP_DEADLINE_S, show_default=True,
                  help="seconds one device's check, and then its restore, may take; past it the device is left "
                       "(`failed` after its check, `attention` in its restore) and the rollback goes on")
    @click.option("-i", "--inventory", type=click.Path(path_type=Path), default=Path("inventory"),
                  show_default=True, help="Nornir SimpleInventory directory (how to reach the devices)")
    @click.option("--intent", type=click.Path(path_type=Path), default=Path("intent/fabric.yaml"), show_default=True)
    @click.option("--journal", "journal_root", type=click.Path(path_type=Path, file_okay=False),
                  default=DEFAULT_JOURNAL, show_default=True)
    @click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
    def rollback_cmd(run_id: str | None, hosts: str, filter_expr: str | None, force: bool, yes: bool,
                     allow_disruptive: bool, workers: int, step_deadline: int, inventory: Path, intent: Path,
                     journal_root: Path, fmt: str) -> None:
        """Restore every device a push changed to the state snapshotted before it (default: the last run).

        RUN_ID names a run of the journal (`fabricgen runs` lists them); without it, the latest push that
        changed a device. Each device runs its own revert of that run's commit (staged before the commit: a GPU
        host's revert script, a switch's checkpoint), and its settings must read back exactly as the snapshot
        the run journaled; the rollback is journaled as a run of its own. A device whose live state drifted
        since that run is shown and skipped unless you confirm (or pass --force); --hosts and --filter narrow
        the run's devices. Before anything is undone, each device whose revert bounces ports (SONiC: GCU takes
        them admin-down and up again) is named with them, and rolled back only if you confirm or pass
        --allow-disruptive (--yes alone skips it).

        \b
        Exit status: 0 all restored, 1 some not restored, 2 bad input, 3 a device needs attention.
        Examples:
          fabricgen rollback                       # the last run
          fabricgen rollback 20261203T140501Z-3fa2c1 --hosts node7
          fabricgen rollback --filter 'role=leaf' --yes   # the last run's leaves, without asking first
        """
        loaded, _ = edge.load_and_resolve(intent, inventory)
        with _fabric_locked(journal_root, "rollback", "rollback", edge.fail):
            code, outcomes, record = _rollback_locked(loaded.inventory, journal_root, run_id, RollbackRequest(
                hosts, filter_expr, force, yes, workers, allow_disruptive, step_deadline), edge.fail)
        _show(outcomes, fmt, "rollback", record.run_id)
        sys.exit(code)

    return rollback_cmd


@dataclass(frozen=True)
class RollbackRequest:
    hosts: str
    filter_expr: str | None
    force: bool
    yes: bool
    workers: int
    allow_disruptive: bool = False
    step_deadline: int = DEFAULT_STEP_DEADLINE_S


def _rollback_locked(inventory: Inventory, journal_root: Path, run_id: str | None, request: RollbackRequest,
                     fail: Callable[..., NoReturn]) -> tuple[int, dict[str, Outcome], RunRecord]:
    from fabricgen.deploy.rollback import rollback_run

    record = _run_record(journal_root, run_id, fail, changed_only=True)
    patterns = [item for item in request.hosts.split(",") if item]
    if request.filter_expr:
        try:
            allowed = filter_devices(inventory, request.filter_expr)
        except SelectionError as exc:
            fail(f"--filter {request.filter_expr}: {exc}")
        record.devices = {name: device for name, device in record.devices.items() if name in allowed}
    code, outcomes = rollback_run(record, journal_root, inventory, patterns, request.force, request.yes,
                                  request.workers, ask=lambda question: click.confirm(question, default=False),
                                  allow_disruptive=request.allow_disruptive,
                                  tell=lambda line: click.echo(escape(line), err=True),
                                  step_deadline=request.step_deadline)
    return code, outcomes, record


def _runs_command(edge: Edge) -> click.Command:
    @click.command("runs")
    @click.argument("run_id", required=False)
    @click.option("--journal", "journal_root", type=click.Path(path_type=Path, file_okay=False),
                  default=DEFAULT_JOURNAL, show_default=True)
    @click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
    @click.option("--verify", is_flag=True, help="with RUN_ID: ask each device the run may have changed what it "
                                                 "recorded of the run's commit (read only)")
    @click.option("-i", "--inventory", type=click.Path(path_type=Path), default=Path("inventory"),
                  show_default=True, help="with --verify: how to reach the devices")
    @click.option("--intent", type=click.Path(path_type=Path), default=Path("intent/fabric.yaml"), show_default=True)
    def runs_cmd(run_id: str | None, journal_root: Path, fmt: str, verify: bool, inventory: Path,
                 intent: Path) -> None:
        """List push and rollback runs, or show one (per device: result, diff, timings).

        Reads the journal that push and rollback write, one folder per run in --journal DIR (default runs/):
        without RUN_ID a table of the runs (id, command, start, devices, exit status; "interrupted" for a run
        that never finished, which `push --resume RUN_ID` can complete), with RUN_ID what happened on each of
        its devices. Nothing is contacted, unless --verify: then each device the run may have changed is asked
        what it recorded of the run's commit (confirmed, reverted by its timer, ...), beside the journal's
        state; exit 3 when a device's record differs from the journal or cannot be read.

        \b
        Examples:
          fabricgen runs                                   # every run, oldest first
          fabricgen runs 20261203T140501Z-3fa2c1           # one run, device by device
          fabricgen runs 20261203T140501Z-3fa2c1 --verify -i inventory   # and what each device recorded
          fabricgen runs --format json --journal /srv/fabricgen/runs
        """
        if verify:
            if run_id is None:
                edge.fail("--verify needs a RUN_ID")
            _verify_run(edge, _run_record(journal_root, run_id, edge.fail), intent, inventory, fmt)
        if run_id is None:
            runs = list_runs(journal_root)
            if not runs and fmt == "text":
                click.echo(f"no runs in {journal_root}/ yet (`fabricgen push` writes one per run)")
                return
            _list_runs(runs, fmt)
        else:
            _show_run(_run_record(journal_root, run_id, edge.fail), fmt)

    return runs_cmd


def _verify_run(edge: Edge, record: RunRecord, intent: Path, inventory: Path, fmt: str) -> NoReturn:
    """`runs RUN --verify`: the journal's account of each device beside the device's own (fabricgen.deploy.verify)."""
    from fabricgen.deploy.verify import verify_run

    loaded, _ = edge.load_and_resolve(intent, inventory)
    verified = verify_run(record, loaded.inventory)
    if fmt == "json":
        click.echo(json.dumps({"run_id": record.run_id, "devices": {
            name: {"journal": item.journal, "on_device": item.on_device, "agrees": item.agrees}
            for name, item in verified.items()}}, indent=2, sort_keys=True))
    else:
        _show_run(record, fmt)
        for item in verified.values():
            out.print(Text(item.line()))
    sys.exit(0 if all(item.agrees for item in verified.values()) else EXIT_ATTENTION)


def _deployment(fabric: Fabric, inventory: Inventory, names: list[str], rendered: dict[str, str]) -> Deployment:
    candidates = {name: candidate(fabric.devices[name], rendered) for name in names}
    links = {name: _data_links(fabric.devices[name]) for name in names}
    return Deployment({name: inventory.devices[name] for name in names}, candidates, links,
                      models={name: fabric.devices[name] for name in names})


def candidate(device: DeviceModel, rendered: dict[str, str]) -> str:
    """What the device's driver loads: a GPU host's rendered files as one bundle, a switch's first output file."""
    capability = get_platform(device.platform).capability
    if capability.kind == "host":
        return bundle_from_rendered(device.name, device.platform, rendered).to_json()
    return rendered[f"{device.name}/{capability.output_files[0]}"]


def _data_links(device: DeviceModel) -> list[str]:
    """The links whose state the health check compares before and after: NICs, and switch ports with a peer."""
    if device.host is not None:
        return [nic.interface for nic in device.host.nics]
    return [port.name for port in device.ports if port.peer]


def _identity(fabric: Fabric, selection: Selection, candidates: dict[str, str]) -> dict[str, Any]:
    """What a run pushed, as a resume compares it: the fabric, the selection and a digest of every selected
    device's rendered candidate."""
    digest = hashlib.sha256()
    for name in sorted(candidates):
        digest.update(f"{len(name)}:{name}{len(candidates[name])}:".encode())
        digest.update(candidates[name].encode())
    return {"fabric": fabric.name, "selection": dataclasses.asdict(selection),
            "digest": "sha256:" + digest.hexdigest()}


def _resumable(root: Path, run_id: str, names: list[str], identity: dict[str, Any],
               fail: Callable[..., Any]) -> list[str]:
    """The devices an interrupted push still has to do; any other run is refused, saying why."""
    record = _run_record(root, run_id, fail)
    why = _not_resumable(root, record, identity)
    if why:
        fail(f"cannot resume run {run_id}: {why}; nothing was pushed")
    done = {name for name, device in record.devices.items() if device.state in ("confirmed", "unchanged")}
    return [name for name in names if name not in done]


def _not_resumable(root: Path, record: RunRecord, identity: dict[str, Any]) -> str:
    if not record.command.startswith("push"):
        return f"it is a {record.command.split(' ')[0]} run, not a push"
    if record.complete:
        return f"it finished (exit {record.exit_code}); push again for a new run"
    undone = [run.run_id for run in list_runs(root) if run.command == f"rollback {record.run_id}"]
    if undone:
        return f"it was rolled back by run {undone[-1]}"
    if not record.identity:
        return "its journal records no fabric, selection or digest of what it pushed (an older run, or damaged)"
    for key, what in (("fabric", "fabric"), ("selection", "selection"), ("digest", "rendered configs")):
        if record.identity.get(key) != identity[key]:
            return (f"it pushed another {what} ({_short(record.identity.get(key))}, now {_short(identity[key])}): "
                    "resume only with the run's own intent, inventory and selection")
    return ""


def _short(value: Any) -> str:
    return escape(json.dumps(value, sort_keys=True)[:80])


def _run_record(root: Path, run_id: str | None, fail: Callable[..., Any], changed_only: bool = False) -> RunRecord:
    """The named run, or the latest one (with changed_only: the latest push that changed a device)."""
    if run_id is None:
        runs = list_runs(root)
        if changed_only:
            runs = [run for run in runs if run.command.startswith("push") and run.changed]
        if not runs:
            fail(f"no {'push that changed a device' if changed_only else 'run'} in {root}/ "
                 "(pass --journal DIR where the runs are)")
        return runs[-1]
    if not valid_run_id(run_id) or not (root / run_id).is_dir():
        fail(f"no run {run_id!r} in {root}/; `fabricgen runs` lists them")
    return read_run(root, run_id)


def _approved(deployment: Deployment, fabric: Fabric, plan: list[list[str]], workers: int) -> list[list[str]] | None:
    """The waves the user agreed to, after the devices' own diffs (None: declined)."""
    from fabricgen.deploy import engine

    changes = engine.diff(deployment, workers)
    _show(changes, "text", "diff")
    bounced = {name: None if outcome.state == "failed" else outcome.bounced for name, outcome in changes.items()}
    split, held = apart(fabric, plan, bounced)
    for line in [*disruption_lines({name: o.bounced for name, o in changes.items()}, "push"),
                 *notes(held, len(plan), len(split))]:
        click.echo(escape(line), err=True)
    pending = sum(1 for outcome in changes.values() if outcome.state == "changes")
    sizes = ", ".join(str(len(wave)) for wave in split)
    if pending == 0:
        click.echo("nothing to push", err=True)
    return split if click.confirm(f"push to {pending} device(s) with changes, waves of {sizes}?", default=False,
                                  err=True) else None


def _show(outcomes: dict[str, Outcome], fmt: str, command: str, run_id: str | None = None) -> None:
    if fmt == "json":
        payload = {"command": command, "run_id": run_id,
                   "devices": {name: {"state": o.state, "diff": o.diff, "message": o.message,
                                      "seconds": round(o.seconds, 3), "bounced": o.bounced}
                               for name, o in sorted(outcomes.items())}}
        click.echo(json.dumps(payload, indent=2, sort_keys=True))
        return
    for name, outcome in sorted(outcomes.items()):
        if outcome.diff:
            out.print(Text(f"--- {escape(name)}", style="bold"))
            for line in outcome.diff.splitlines():
                out.print(_diff_line(escape(line)))
    table = Table(title=f"{command}{' ' + run_id if run_id else ''}", show_edge=False)
    table.add_column("device", no_wrap=True, min_width=max((len(name) for name in outcomes), default=6))
    for column in ("result", "seconds", "detail"):
        table.add_column(column)
    for name, outcome in sorted(outcomes.items()):
        table.add_row(Text(escape(name)), outcome.state, f"{outcome.seconds:.1f}", Text(headline(name, outcome)))
    out.print(table)
    for name, outcome in sorted(outcomes.items()):  # what a device that needs attention left changed, one a line
        for line in outcome.message.splitlines()[1:] if outcome.state == "attention" else []:
            out.print(Text(f"{escape(name)}: {escape(line)}"))


def headline(name: str, outcome: Outcome) -> str:
    """One line for the table: the device's own reason first, without the exception's class or the device's
    name repeated (the journal and --format json keep the whole message)."""
    first = outcome.message.strip().splitlines()[0] if outcome.message.strip() else ""
    first = re.sub(r"^[A-Za-z]+(?:Error|Exception|Failed): ", "", first)
    first = first.removeprefix(f"{name}: ")
    if len(first) > HEADLINE:
        first = first[:HEADLINE] + " ... (whole message: `fabricgen runs RUN --format json`)"
    return escape(first)


def _diff_line(line: str) -> Text:
    if line.startswith(("+", "DIFF ")) and not line.startswith("+++"):
        return Text(line, style="green" if line.startswith("+") else "yellow")
    if line.startswith("-") and not line.startswith("---"):
        return Text(line, style="red")
    return Text(line)


def _list_runs(runs: list[RunRecord], fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps([{"run_id": r.run_id, "seq": r.seq, "command": r.command, "started": r.started,
                                "finished": r.finished, "exit_code": r.exit_code, "damage": r.damage,
                                "devices": len(r.devices)} for r in runs], indent=2))
        return
    table = Table(show_edge=False)
    # Run ids whole, however narrow the terminal or the pipe: they are what the other commands take.
    table.add_column("run", no_wrap=True, min_width=max((len(r.run_id) for r in runs), default=3))
    for column in ("command", "started", "devices", "exit", "note"):
        table.add_column(column)
    for record in runs:
        exit_text = "interrupted" if record.exit_code is None else str(record.exit_code)
        note = f"journal damaged, {len(record.damage)} part(s) ignored: {record.damage[0]}" if record.damage else ""
        table.add_row(record.run_id, Text(escape(record.command)), Text(escape(record.started)),
                      str(len(record.devices)), exit_text, Text(escape(note)))
    out.print(table)


def _show_run(record: RunRecord, fmt: str) -> None:
    outcomes = {name: Outcome(name, device.state, device.diff, device.message, device.seconds)
                for name, device in record.devices.items()}
    for note in record.damage:
        click.echo(f"run {record.run_id}: journal damaged, ignored: {escape(note)}", err=True)
    _show(outcomes, fmt, record.command, record.run_id)

