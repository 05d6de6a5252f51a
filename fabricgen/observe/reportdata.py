"""What the HTML fabric report shows of the counter history: the latest health verdict per cable end and, per
link, small inline-SVG trend plots (per-interval increases) of the counters that matter. Pure: history in,
view data out; nothing is fetched when the page is viewed."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from fabricgen.models.device import Fabric
from fabricgen.observe.delta import counter_delta
from fabricgen.observe.health import HealthFinding, judge
from fabricgen.observe.model import Snapshot
from fabricgen.observe.store import DEFAULT_NAME, History

# The counters a link's trend plots sum, per plot: physical errors, PFC pauses, ECN marks, drops.
TRENDS: dict[str, tuple[str, ...]] = {
    "errors": ("fec_uncorrected", "fec_uncorrected_symbols", "fcs_errors", "symbol_errors"),
    "pauses": ("pfc_rx_pause", "pfc_tx_pause"),
    "ECN marks": ("queue_ecn_marked", "prio_ecn_marked", "roce_ecn_marked"),
    "drops": ("queue_dropped", "queue_wred_dropped", "prio_buffer_discards", "prio_congestion_discards"),
}
POINTS = 20  # snapshots per trend plot
SPARK_W, SPARK_H = 90, 18


@dataclass
class LinkRow:
    link: str
    state: str
    rules: str
    sparks: list[str]


@dataclass
class ReportHealth:
    summary: str
    findings: list[HealthFinding]
    by_port: dict[tuple[str, str], str]  # (device, port) → worst severity, "ok" when read and clean
    rows: list[LinkRow] = field(default_factory=list)
    unread: list[tuple[str, str]] = field(default_factory=list)  # (platform, why its devices have no counters)


def load_report_health(fabric: Fabric, history_file: Path | None) -> ReportHealth | None:
    """The report's health from `history_file`, or from observe.sqlite in the working directory when that exists
    (None without a history); StoreError for a file that is not one."""
    path = history_file or Path(DEFAULT_NAME)
    if history_file is None and not path.exists():
        return None
    history = History(path)
    try:
        return report_health(fabric, history)
    finally:
        history.close()


def report_health(fabric: Fabric, history: History) -> ReportHealth | None:
    ids = history.snapshot_ids()
    if len(ids) < 2:
        return None
    before, after = history.load(ids[-2]), history.load(ids[-1])
    findings = judge(fabric, before, after)
    read_ports = {(r.device, r.port) for r in after.readings()}
    by_port: dict[tuple[str, str], str] = dict.fromkeys(read_ports, "ok")
    for finding in findings:
        if finding.port:
            key = (finding.device, finding.port)
            by_port[key] = "error" if "error" in (finding.severity, by_port.get(key)) else finding.severity
    trends = _trends(history, ids[-POINTS:])
    rows = [_row(a, b, by_port, findings, trends) for a, b in _links(fabric) if a in read_ports or b in read_ports]
    errors = sum(f.severity == "error" for f in findings)
    warnings = sum(f.severity == "warning" for f in findings)
    unread = _unread(after)
    summary = (f"{errors} error(s), {warnings} warning(s) over the last {after.taken_at - before.taken_at:.0f} s "
               f"(snapshots {before.snapshot_id} → {after.snapshot_id}, {len(ids)} in the history)")
    return ReportHealth(summary, findings, by_port, rows, unread)


def _unread(snapshot: Snapshot) -> list[tuple[str, str]]:
    """(platform, how many of its devices the last snapshot could not read, and one reason) per platform."""
    errors: dict[str, list[str]] = defaultdict(list)
    for device in sorted(snapshot.devices.values(), key=lambda d: d.device):
        if device.error:
            errors[device.platform].append(f"{device.device}: {device.error}")
    return [(platform, f"{len(found)} device(s) not read in the last snapshot, e.g. {found[0]}")
            for platform, found in sorted(errors.items())]


def _links(fabric: Fabric) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    seen: set[tuple[tuple[str, str], tuple[str, str]]] = set()
    for name, device in sorted(fabric.devices.items()):
        ends = [(port.name, port.peer) for port in device.ports if port.peer]
        ends += [(nic.interface, nic.peer) for nic in (device.host.nics if device.host else []) if nic.peer]
        for port, peer in ends:
            far, _, far_port = peer.partition(":")
            first, second = sorted([(name, port), (far, far_port)])
            seen.add((first, second))
    return sorted(seen)


def _trends(history: History, ids: list[int]) -> dict[tuple[str, str, str], list[float]]:
    """(device, port, plot) → per-interval increases over the snapshots `ids` (oldest first)."""
    wanted = {metric: plot for plot, metrics in TRENDS.items() for metric in metrics}
    plots: dict[tuple[str, str, str], list[float]] = defaultdict(lambda: [0.0] * (len(ids) - 1))
    previous = {key: value for key, value in history.values(ids[0]).items() if key[2] in wanted}
    for step, snapshot_id in enumerate(ids[1:]):
        current = {key: value for key, value in history.values(snapshot_id).items() if key[2] in wanted}
        for key, value in current.items():
            device, port, metric, _ = key
            plot = plots[(device, port, wanted[metric])]
            if key in previous:
                plot[step] += counter_delta(previous[key], value).increase
        previous = current
    return dict(plots)


def _row(a: tuple[str, str], b: tuple[str, str], by_port: dict[tuple[str, str], str], findings: list[HealthFinding],
         trends: dict[tuple[str, str, str], list[float]]) -> LinkRow:
    states = [by_port[end] for end in (a, b) if end in by_port]
    state = "error" if "error" in states else "warning" if "warning" in states else "ok"
    rules = sorted({f.rule for f in findings if (f.device, f.port) in (a, b)})
    sparks = []
    for plot in TRENDS:
        ends = [trends[(*end, plot)] for end in (a, b) if (*end, plot) in trends]
        series = [sum(values) for values in zip(*ends, strict=True)] if ends else []
        sparks.append(sparkline(series, f"{a[0]}:{a[1]} ↔ {b[0]}:{b[1]} {plot} per interval",
                                alarming=plot in ("errors", "drops")))
    return LinkRow(f"{a[0]}:{a[1]} ↔ {b[0]}:{b[1]}", state, ", ".join(rules), sparks)


def sparkline(values: list[float], title: str, alarming: bool = False) -> str:
    """A small inline SVG polyline of `values`, its last value written beside it; nothing external. Red when an
    `alarming` counter (errors, drops) grew in the last interval."""
    if not values:
        return '<span class="spark none">—</span>'
    top = max(values) or 1.0
    step = SPARK_W / max(1, len(values) - 1)
    points = " ".join(f"{i * step:.1f},{SPARK_H - 2 - (v / top) * (SPARK_H - 4):.1f}" for i, v in enumerate(values))
    colour = "#c62828" if alarming and values[-1] > 0 else "#1e6fd9"
    label = f"{values[-1]:g}"
    return (f'<svg class="spark" width="{SPARK_W + 40}" height="{SPARK_H}" viewBox="0 0 {SPARK_W + 40} {SPARK_H}" '
            f'role="img" aria-label="{escape(title)}"><title>{escape(title)}: '
            f'{escape(", ".join(f"{v:g}" for v in values))}</title>'
            f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{points}"/>'
            f'<text x="{SPARK_W + 4}" y="{SPARK_H - 5}" font-size="10">{escape(label)}</text></svg>')
