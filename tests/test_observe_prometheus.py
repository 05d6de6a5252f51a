"""Prometheus export: the text exposition, and a real Prometheus (Debian's `prometheus`) scraping `observe serve`
on loopback. Skips when the binary is absent, unless FABRICGEN_REQUIRE_PROMETHEUS=1 (CI) makes that a failure."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fabricgen.observe.model import METRICS, DeviceSnapshot, Snapshot, reading
from fabricgen.observe.prometheus import exposed_name, exposition, serve


def sample() -> Snapshot:
    return Snapshot(1_700_000_000.0, {
        "leaf1": DeviceSnapshot("leaf1", "sonic", [reading("leaf1", "Ethernet0", "pfc_rx_pause", 1200, 3),
                                                   reading("leaf1", "Ethernet0", "queue_ecn_marked", 19, 3),
                                                   reading("leaf1", "Ethernet0", "pre_fec_ber", 6.05e-10)]),
        "gpu1": DeviceSnapshot("gpu1", "connectx", error="TimeoutError: no answer in 20 s")})


def test_metric_names_follow_prometheus_conventions() -> None:
    names = {name: exposed_name(metric) for name, metric in METRICS.items()}
    assert names["pfc_rx_pause"] == "fabricgen_pfc_rx_pause_frames_total"
    assert names["pfc_rx_pause_duration"] == "fabricgen_pfc_rx_pause_duration_seconds_total"
    assert names["fec_uncorrected"] == "fabricgen_fec_uncorrected_codewords_total"
    assert names["fec_uncorrected_symbols"] == "fabricgen_fec_uncorrected_symbols_total"
    assert names["carrier_transitions"] == "fabricgen_carrier_transitions_total"
    assert names["pre_fec_ber"] == "fabricgen_pre_fec_ber_ratio"
    assert names["queue_watermark"] == "fabricgen_queue_watermark_bytes"
    assert all(name.endswith("_total") == (METRICS[key].kind == "counter") for key, name in names.items())


def test_text_exposition() -> None:
    text = exposition(sample())
    assert "# TYPE fabricgen_pfc_rx_pause_frames_total counter" in text
    assert 'fabricgen_pfc_rx_pause_frames_total{device="leaf1",port="Ethernet0",priority="3"} 1200.0\n' in text
    assert 'fabricgen_queue_ecn_marked_packets_total{device="leaf1",port="Ethernet0",queue="3"} 19.0\n' in text
    assert 'fabricgen_observe_up{device="gpu1",platform="connectx"} 0.0\n' in text
    assert 'fabricgen_observe_up{device="leaf1",platform="sonic"} 1.0\n' in text


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def prometheus_binary() -> str:
    binary = shutil.which("prometheus") or ("/usr/bin/prometheus" if Path("/usr/bin/prometheus").exists() else None)
    if binary is None:
        if os.environ.get("FABRICGEN_REQUIRE_PROMETHEUS") == "1":
            pytest.fail("FABRICGEN_REQUIRE_PROMETHEUS=1 but no prometheus binary (Debian package `prometheus`)")
        pytest.skip(reason="no prometheus binary (apt-get install prometheus)")
    return binary


@pytest.fixture
def exporter() -> Iterator[int]:
    port = _free_port()
    server = serve(f"127.0.0.1:{port}", sample)
    try:
        yield port
    finally:
        server.shutdown()
        server.server_close()


def test_a_real_prometheus_scrapes_observe_serve(prometheus_binary: str, exporter: int, tmp_path: Path) -> None:
    web = _free_port()
    (tmp_path / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s}\n"
        f"scrape_configs:\n  - job_name: fabricgen\n    static_configs: [{{targets: ['127.0.0.1:{exporter}']}}]\n")
    process = subprocess.Popen([prometheus_binary, f"--config.file={tmp_path / 'prometheus.yml'}",
                                f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{web}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        result = _query_until(web, 'fabricgen_pfc_rx_pause_frames_total{device="leaf1",priority="3"}', process)
        assert result[0]["metric"]["port"] == "Ethernet0"
        assert result[0]["metric"]["job"] == "fabricgen"
        assert float(result[0]["value"][1]) == 1200.0
        down = _query_until(web, 'fabricgen_observe_up{device="gpu1"}', process)
        assert float(down[0]["value"][1]) == 0.0
    finally:
        process.terminate()
        process.wait(timeout=30)


def _query_until(web: int, query: str, process: subprocess.Popen[bytes],
                 seconds: float = 60) -> list[dict[str, Any]]:
    deadline = time.monotonic() + seconds
    url = f"http://127.0.0.1:{web}/api/v1/query?query=" + urllib.parse.quote(query)
    while time.monotonic() < deadline:
        if process.poll() is not None:
            error = process.stderr.read().decode()[-2000:] if process.stderr else ""
            raise AssertionError(f"prometheus exited: {error}")
        try:
            with urllib.request.urlopen(url, timeout=5) as reply:
                result = json.load(reply)["data"]["result"]
            if result:
                return list(result)
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"prometheus never returned {query} within {seconds} s")
