"""`fabricgen health` as a user runs it: on a history `observe` wrote (built here from snapshots), the messages
and exit codes when there is too little history or a baseline that does not exist."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fabricgen.observe.model import DeviceSnapshot, Snapshot, reading
from fabricgen.observe.store import History

ROOT = Path(__file__).resolve().parent.parent


def health(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fabricgen", "health", str(ROOT / "intent" / "fabric.yaml"), "-i",
                           str(ROOT / "inventory"), "--journal", str(tmp_path / "runs"), *args],
                          capture_output=True, text=True, check=False, timeout=120, cwd=tmp_path)


def store(tmp_path: Path, drops: list[float], step: float = 60.0, baseline: str | None = None) -> None:
    history = History(tmp_path / "observe.sqlite")
    for t, value in enumerate(drops):
        sid = history.add(Snapshot(1_800_000_000.0 + step * t, {"leaf2": DeviceSnapshot("leaf2", "sonic", [
            reading("leaf2", "Ethernet8", "queue_dropped", value, 3)])}))
        if baseline and t == 0:
            history.mark_baseline(baseline, sid)
    history.close()


def test_health_needs_two_snapshots(tmp_path: Path) -> None:
    store(tmp_path, [0])
    done = health(tmp_path)
    assert done.returncode == 2
    assert "observe.sqlite: 1 snapshot(s); health needs two (run `fabricgen observe` twice" in done.stderr


def test_health_exit_1_and_json_on_lossless_drops(tmp_path: Path) -> None:
    store(tmp_path, [0, 0, 12])
    done = health(tmp_path, "--format", "json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["window"] == {"from": 2, "to": 3, "seconds": 60.0}
    assert [(f["rule"], f["device"], f["port"], f["counters"], f["rates"]) for f in report["findings"]] == [
        ("FG-OBS-202", "leaf2", "Ethernet8", {"queue_dropped[3]": 12.0}, {"queue_dropped[3]": 0.2})]


def test_health_window_picks_an_older_snapshot(tmp_path: Path) -> None:
    store(tmp_path, [0, 12, 12])  # the drops happened in the first interval only
    assert health(tmp_path).returncode == 0
    assert health(tmp_path, "--window", "120").returncode == 1
    done = health(tmp_path, "--window", "600")
    assert done.returncode == 2 and "no snapshot 600 s older than the latest" in done.stderr


def test_an_unknown_baseline_is_named_with_the_known_ones(tmp_path: Path) -> None:
    store(tmp_path, [0, 0], baseline="week48")
    done = health(tmp_path, "--baseline", "week49")
    assert done.returncode == 2
    assert "no baseline 'week49' (baselines: week48); mark one with `fabricgen observe --baseline NAME`" in done.stderr
    assert health(tmp_path, "--baseline", "week48").returncode == 0
