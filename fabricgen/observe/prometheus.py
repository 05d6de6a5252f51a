"""Snapshots as Prometheus metrics: the text exposition format (`observe --format prometheus`, e.g. for
node_exporter's textfile collector) and a scrape endpoint (`observe serve`), both through prometheus-client so
the two never disagree.

Names follow Prometheus' conventions (https://prometheus.io/docs/practices/naming/): prefix `fabricgen_`, the
unit in the name, `_total` on counters: `fabricgen_pfc_rx_pause_frames_total{device,port,priority}`,
`fabricgen_fec_uncorrected_codewords_total{device,port}`, `fabricgen_pre_fec_ber_ratio{device,port}`,
`fabricgen_pfc_rx_pause_duration_seconds_total`. Per-queue metrics carry `queue`, per-priority ones `priority`.
`fabricgen_observe_up{device,platform}` is 1 when the device answered, 0 otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from fabricgen.observe.model import METRICS, Snapshot
from fabricgen.observe.model import Metric as OurMetric

PREFIX = "fabricgen_"
_UNITLESS = {"events", "symbols"}  # "carrier_transitions_total", "symbol_errors_total" say what they count


def metric_name(metric: OurMetric) -> str:
    """The exposed name, without the `_total` prometheus-client appends to counters."""
    unit = "" if metric.unit in _UNITLESS or metric.name.endswith(metric.unit) else f"_{metric.unit}"
    return f"{PREFIX}{metric.name}{unit}"


def exposed_name(metric: OurMetric) -> str:
    return metric_name(metric) + ("_total" if metric.kind == "counter" else "")


class SnapshotCollector(Collector):
    """Yields the latest snapshot `source()` returns at every scrape."""

    def __init__(self, source: Callable[[], Snapshot | None]) -> None:
        self.source = source

    def collect(self) -> Iterator[Metric]:
        snapshot = self.source()
        if snapshot is None:
            return
        families: dict[str, Any] = {}
        for item in snapshot.readings():
            metric = METRICS[item.metric]
            family = families.get(item.metric)
            if family is None:
                family = families[item.metric] = _family(metric)
            labels = [item.device, item.port] + ([] if metric.scope == "port" else
                                                 [str(item.index) if item.index is not None else "all"])
            family.add_metric(labels, item.value)  # no timestamp: the textfile collector refuses them
        yield from (families[name] for name in sorted(families))
        up = GaugeMetricFamily(f"{PREFIX}observe_up", "1 if the device answered the last collection, else 0",
                               labels=["device", "platform"])
        for device in sorted(snapshot.devices.values(), key=lambda d: d.device):
            up.add_metric([device.device, device.platform], 0.0 if device.error else 1.0)
        yield up


def _family(metric: OurMetric) -> Any:
    labels = ["device", "port"] + ([] if metric.scope == "port" else [metric.scope])
    kind = CounterMetricFamily if metric.kind == "counter" else GaugeMetricFamily
    return kind(metric_name(metric), metric.help, labels=labels)


def exposition(snapshot: Snapshot) -> str:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SnapshotCollector(lambda: snapshot))
    return generate_latest(registry).decode()


def serve(listen: str, source: Callable[[], Snapshot | None]) -> Any:
    """Start the scrape endpoint on `listen` (HOST:PORT) in a background thread; the server (call .shutdown())."""
    from prometheus_client import start_http_server

    host, _, port = listen.rpartition(":")
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SnapshotCollector(source))
    server, _thread = start_http_server(int(port), addr=host.strip("[]") or "127.0.0.1", registry=registry)
    return server
