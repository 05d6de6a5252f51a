"""The `observe`, `observe serve` and `health` commands (registered in cli.py by :func:`register`)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from fabricgen.cli.deploy import DEFAULT_JOURNAL, Selection, selection_options, workers_option
from fabricgen.models.device import Fabric
from fabricgen.observe.health import LAYER_ORDER, RULES, HealthFinding, judge
from fabricgen.observe.model import Snapshot
from fabricgen.observe.store import History, StoreError, history_path

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT, EXIT_UNREAD = 0, 1, 2, 3


def register(main: click.Group, load_and_resolve: Callable[[Path, Path], tuple[Any, Fabric]],
             input_options: Callable[[Any], Any], fail: Callable[..., NoReturn]) -> None:
    main.add_command(_observe_group(load_and_resolve, input_options, fail))
    main.add_command(_health_command(load_and_resolve, input_options, fail))


def _history_options(func: Any) -> Any:
    func = click.option("--history", "history_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
                        help="the SQLite history [default: observe.sqlite beside the --journal directory]")(func)
    return click.option("--journal", "journal_root", type=click.Path(path_type=Path, file_okay=False),
                        default=DEFAULT_JOURNAL, show_default=True, help="push's run journal directory")(func)


def _open(history_file: Path | None, journal_root: Path, fail: Callable[..., NoReturn]) -> History:
    try:
        return History(history_file or history_path(journal_root))
    except StoreError as exc:
        fail(str(exc))


def _snapshot(load_and_resolve: Callable[[Path, Path], tuple[Any, Fabric]], intent: Path, inventory: Path,
              selection: Selection, workers: int, limit: float,
              fail: Callable[..., NoReturn]) -> tuple[Fabric, Snapshot]:
    from fabricgen.deploy.plan import PlanError, select  # the network libraries load only when collecting
    from fabricgen.load.selection import SelectionError, filter_devices
    from fabricgen.observe.collect import collect

    loaded, fabric = load_and_resolve(intent, inventory)
    try:
        allowed = set(filter_devices(loaded.inventory, selection.filter)) if selection.filter else None
        names = select(fabric, selection.hosts.split(","), selection.role, selection.platform, selection.shard,
                       allowed)
    except (PlanError, SelectionError) as exc:
        fail(str(exc))
    if not names:
        fail("the selection holds no device")
    devices = [loaded.inventory.devices[name] for name in names]
    return fabric, collect(fabric, devices, workers, limit)


class _ObserveGroup(click.Group):
    """`observe [INTENT] [options]` collects; `observe serve …` serves. A group's own INTENT argument would
    swallow the word `serve`, so a first word naming a subcommand goes to it, with observe's options unparsed;
    otherwise options may follow INTENT, as in every other command."""

    allow_interspersed_args = True

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] in self.commands:
            click.Command.parse_args(self, ctx, [])
            ctx._protected_args, ctx.args = args[:1], args[1:]
            return ctx.args
        return super().parse_args(ctx, args)


def _observe_group(load_and_resolve: Callable[[Path, Path], tuple[Any, Fabric]], input_options: Callable[[Any], Any],
                   fail: Callable[..., NoReturn]) -> click.Group:
    @click.group("observe", cls=_ObserveGroup, invoke_without_command=True)
    @input_options
    @selection_options
    @workers_option
    @_history_options
    @click.option("--limit", type=click.FloatRange(min=1), default=30, show_default=True,
                  help="seconds each device's command may take")
    @click.option("--baseline", metavar="NAME", help="mark this snapshot as baseline NAME (health compares to it)")
    @click.option("--keep-days", type=click.FloatRange(min=0), default=None, help="delete snapshots older than this")
    @click.option("--keep", "keep_last", type=click.IntRange(min=1), default=None, help="keep the newest N only")
    @click.option("--format", "fmt", type=click.Choice(["text", "json", "prometheus"]), default="text",
                  show_default=True)
    @click.pass_context
    def observe_cmd(ctx: click.Context, intent: Path, inventory: Path, selection: Selection, workers: int,
                    history_file: Path | None, journal_root: Path, limit: float, baseline: str | None,
                    keep_days: float | None, keep_last: int | None, fmt: str) -> None:
        """Read the RoCE counters of every selected device once, store them in the history, print them.

        Switches per port and priority/queue (PFC pauses, PFC watchdog storms, ECN marks, queue and WRED drops,
        FEC corrected/uncorrected and pre-FEC BER, CRC, flaps); GPU hosts per NIC (ethtool -S per-priority
        pauses and discards, RDMA hw_counters: CNPs, ECN-marked RoCE packets, retransmissions). Read-only, over
        the same connections as diff; devices in parallel (--workers), each command within --limit seconds.

        \b
        Exit status: 0 every device read, 3 some device could not be read (the others are stored), 2 bad input.
        Examples:
          fabricgen observe                          # snapshot into observe.sqlite beside runs/
          fabricgen observe --baseline week49        # ... and mark it as this week's baseline
          fabricgen observe --format prometheus > /var/lib/node_exporter/textfile/fabricgen.prom
          fabricgen observe serve --listen 127.0.0.1:9464 --interval 60
        """
        if ctx.invoked_subcommand is not None:
            return
        _, snapshot = _snapshot(load_and_resolve, intent, inventory, selection, workers, limit, fail)
        history = _open(history_file, journal_root, fail)
        snapshot_id = history.add(snapshot)
        if baseline:
            history.mark_baseline(baseline, snapshot_id)
        if keep_days is not None or keep_last is not None:
            history.prune(keep_days, keep_last)
        history.close()
        click.echo(_observe_output(snapshot, fmt, history.path), nl=False)
        sys.exit(EXIT_UNREAD if any(d.error for d in snapshot.devices.values()) else EXIT_OK)

    @observe_cmd.command("serve")
    @input_options
    @selection_options
    @workers_option
    @_history_options
    @click.option("--listen", required=True, metavar="HOST:PORT", help="address of the /metrics endpoint")
    @click.option("--interval", type=click.FloatRange(min=5), default=60, show_default=True,
                  help="seconds between collections")
    @click.option("--limit", type=click.FloatRange(min=1), default=30, show_default=True)
    def serve_cmd(intent: Path, inventory: Path, selection: Selection, workers: int, history_file: Path | None,
                  journal_root: Path, listen: str, interval: float, limit: float) -> None:
        """Serve the fabric's counters to Prometheus, collecting them every --interval seconds.

        Each collection is an `observe` snapshot (read-only, parallel, each command within --limit seconds),
        stored in the history like any other; the latest one is served on HOST:PORT/metrics with prometheus-client
        (metric names and labels: docs/observe.md). Runs until interrupted.

        \b
        Examples:
          fabricgen observe serve --listen 127.0.0.1:9464
          fabricgen observe serve --listen 0.0.0.0:9464 --interval 30 --role gpu-host
        """
        from fabricgen.observe.prometheus import serve

        latest: list[Snapshot] = []
        server = serve(listen, lambda: latest[-1] if latest else None)
        click.echo(f"serving http://{listen}/metrics", err=True)
        try:
            while True:
                _, snapshot = _snapshot(load_and_resolve, intent, inventory, selection, workers, limit, fail)
                history = _open(history_file, journal_root, fail)
                history.add(snapshot)
                history.close()
                latest[:] = [snapshot]
                time.sleep(interval)
        except KeyboardInterrupt:
            server.shutdown()

    return observe_cmd


def _observe_output(snapshot: Snapshot, fmt: str, where: Path) -> str:
    if fmt == "prometheus":
        from fabricgen.observe.prometheus import exposition

        return exposition(snapshot)
    if fmt == "json":
        devices = {d.device: {"platform": d.platform, "error": d.error, "seconds": round(d.seconds, 3),
                              "readings": [[r.port, r.metric, r.index, r.value] for r in d.readings]}
                   for d in sorted(snapshot.devices.values(), key=lambda d: d.device)}
        return json.dumps({"snapshot": snapshot.snapshot_id, "taken_at": snapshot.taken_at, "history": str(where),
                           "devices": devices}, indent=1) + "\n"
    lines = [f"snapshot {snapshot.snapshot_id} stored in {where}"]
    for device in sorted(snapshot.devices.values(), key=lambda d: d.device):
        state = f"not read: {device.error}" if device.error else f"{len(device.readings)} counters"
        lines.append(f"  {device.device:<24} {device.platform:<10} {device.seconds:6.2f} s  {state}")
    return "\n".join(lines) + "\n"


def _health_command(load_and_resolve: Callable[[Path, Path], tuple[Any, Fabric]],
                    input_options: Callable[[Any], Any], fail: Callable[..., NoReturn]) -> click.Command:
    @click.command("health")
    @input_options
    @_history_options
    @click.option("--window", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
                  help="compare the latest snapshot with the newest one at least this much older "
                       "[default: the one before it]")
    @click.option("--baseline", metavar="NAME", help="also judge trends against baseline NAME")
    @click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
    @click.option("--strict", is_flag=True, help="fail (exit 1) on warnings too")
    def health_cmd(intent: Path, inventory: Path, history_file: Path | None, journal_root: Path,
                   window: float | None, baseline: str | None, fmt: str, strict: bool) -> None:
        """Judge the latest counters against the intent, bottom-up, as lint judges configs.

        Recent rates (the last two snapshots, or --window) and, with --baseline, their trend are checked layer by
        layer: physical (FEC, BER, CRC), link (flaps, lossless drops, pauses on lossy priorities, PFC storms),
        congestion control (pauses without ECN marks, CNPs not handled), host (retransmissions). Each finding
        names device:port, the counters and their rate, the likely cause and the lint rule or intent key behind
        the expectation. It reads the history `fabricgen observe` writes: take two snapshots, some time apart.

        \b
        Exit status: 0 healthy (warnings allowed), 1 errors (or warnings with --strict), 2 bad input or too
        little history.
        Examples:
          fabricgen health                               # the last two snapshots of observe.sqlite
          fabricgen health --window 3600 --strict        # the last hour; warnings fail too
          fabricgen health --baseline week49 --format json
        """
        _, fabric = load_and_resolve(intent, inventory)
        history = _open(history_file, journal_root, fail)
        ids = history.snapshot_ids()
        if len(ids) < 2:
            fail(f"{history.path}: {len(ids)} snapshot(s); health needs two (run `fabricgen observe` twice, some "
                 "time apart)")
        after = history.load(ids[-1])
        before = _window_start(history, ids, after, window)
        if before is None:
            fail(f"{history.path}: no snapshot {window:g} s older than the latest")
        base = None
        if baseline:
            base_id = history.baseline(baseline)
            if base_id is None:
                known = ", ".join(sorted(history.baselines())) or "none"
                fail(f"{history.path}: no baseline {baseline!r} (baselines: {known}); mark one with "
                     "`fabricgen observe --baseline NAME`")
            base = history.load(base_id)
        findings = judge(fabric, before, after, base)
        click.echo(_health_output(findings, before, after, baseline, fmt), nl=False)
        failed = any(f.severity == "error" or (strict and f.severity == "warning") for f in findings)
        sys.exit(EXIT_FINDINGS if failed else EXIT_OK)

    return health_cmd


def _window_start(history: History, ids: list[int], after: Snapshot, window: float | None) -> Snapshot | None:
    if window is None:
        return history.load(ids[-2])
    for snapshot_id in reversed(ids[:-1]):
        candidate = history.load(snapshot_id)
        if after.taken_at - candidate.taken_at >= window:
            return candidate
    return None


def _health_output(findings: list[HealthFinding], before: Snapshot, after: Snapshot, baseline: str | None,
                   fmt: str) -> str:
    seconds = after.taken_at - before.taken_at
    if fmt == "json":
        return json.dumps({"window": {"from": before.snapshot_id, "to": after.snapshot_id, "seconds": seconds},
                           "baseline": baseline, "findings": [f.to_json() for f in findings]}, indent=1) + "\n"
    lines: list[str] = []
    layer = None
    for finding in findings:
        if finding.layer != layer:
            layer = finding.layer
            lines.append(f"{LAYER_ORDER[layer] + 1}. {layer.value}")
        counters = ", ".join(f"{name} +{value:g} ({finding.rates.get(name, 0):.3g}/s)" if name in finding.rates
                             and seconds > 0 else f"{name} {value:g}" for name, value in finding.counters.items())
        lines += [f"  {finding.severity:<7} {finding.rule} {RULES[finding.rule].name}  {finding.subject}  {counters}",
                  f"          cause: {finding.cause}", f"          see:   {finding.points_to}"]
    errors = sum(f.severity == "error" for f in findings)
    warnings = sum(f.severity == "warning" for f in findings)
    against = f", trends against baseline {baseline}" if baseline else ""
    unread = sorted(d.device for d in after.devices.values() if d.error)
    tail = f"; not read: {', '.join(unread)}" if unread else ""
    lines.append(f"{errors} error(s), {warnings} warning(s) over {seconds:.0f} s (snapshots {before.snapshot_id} → "
                 f"{after.snapshot_id}){against}{tail}")
    return "\n".join(lines) + "\n"
