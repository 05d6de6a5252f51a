"""The snapshot history: what goes in comes back, counter resets and wraps, baselines, retention, linear growth."""

from __future__ import annotations

import gc
import itertools
import sqlite3
from pathlib import Path

import pytest

from fabricgen.observe.delta import counter_delta, rate
from fabricgen.observe.model import DeviceSnapshot, Snapshot, cyclic_gc_paused, reading
from fabricgen.observe.store import History, StoreError, history_path


def snap(taken_at: float, pauses: float, devices: int = 1, ports: int = 1) -> Snapshot:
    snapshot = Snapshot(taken_at)
    for d in range(devices):
        name = f"leaf{d}"
        snapshot.devices[name] = DeviceSnapshot(name, "sonic", [
            reading(name, f"Ethernet{8 * p}", metric, value, index)
            for p in range(ports)
            for metric, value, index in (("pfc_rx_pause", pauses, 3), ("fec_uncorrected", 0, None))])
    return snapshot


def test_history_lives_beside_the_journal(tmp_path: Path) -> None:
    assert history_path(tmp_path / "runs") == tmp_path / "observe.sqlite"


def test_a_snapshot_comes_back_as_it_went_in(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    first = snap(100.0, 7)
    first.devices["gpu1"] = DeviceSnapshot("gpu1", "connectx", error="TimeoutError: no answer in 20 s")
    sid = history.add(first)
    loaded = history.load(sid)
    assert loaded.values() == first.values()
    assert loaded.devices["gpu1"].error == "TimeoutError: no answer in 20 s"
    assert loaded.devices["leaf0"].platform == "sonic"


@pytest.mark.parametrize(("before", "after", "increase", "reset", "wrapped"), [
    (10, 25, 15, False, False),
    (5_000, 40, 40, True, False),  # cleared (sonic-clear counters) or rebooted: 40 counted since
    (2 ** 32 - 10, 5, 15, False, True),  # a 32-bit counter wrapped
    (2 ** 64 - 100, 50, 150, False, True),  # a 64-bit counter wrapped
])
def test_counter_delta_resets_and_wraps(before: float, after: float, increase: float, reset: bool,
                                        wrapped: bool) -> None:
    delta = counter_delta(before, after)
    assert (delta.increase, delta.reset, delta.wrapped) == (increase, reset, wrapped)


def test_rate_over_an_empty_window_is_zero() -> None:
    assert rate(1, 5, 0) == 0.0
    assert rate(1, 5, 2) == 2.0


def test_baseline_and_retention_keep_the_baseline(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    ids = [history.add(snap(day * 86400.0, day)) for day in range(10)]
    history.mark_baseline("week48", ids[1])
    deleted = history.prune(keep_days=3, now=9 * 86400.0)
    assert deleted == 5  # days 0 and 2..5; day 1 is the baseline
    assert history.snapshot_ids() == [ids[1], *ids[6:]]
    assert history.baseline("week48") == ids[1]
    assert history.prune(keep_last=2) == 2  # days 6 and 7 go; the baseline stays
    assert history.snapshot_ids() == [ids[1], ids[8], ids[9]]


def test_series_for_a_trend_plot(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    for t in range(5):
        history.add(snap(float(t), t * 10))
    trend = history.series("leaf0", "Ethernet0", ["pfc_rx_pause", "fec_uncorrected"], limit=3)
    assert trend["pfc_rx_pause"] == [(2.0, 20.0), (3.0, 30.0), (4.0, 40.0)]
    assert trend["fec_uncorrected"] == [(2.0, 0.0), (3.0, 0.0), (4.0, 0.0)]


def test_growth_is_linear_per_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    history = History(path)
    history.add(snap(0.0, 1, devices=200, ports=32))  # writes every device's counter layout once
    history.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    sizes = [path.stat().st_size]
    for t in range(1, 5):
        history.add(snap(float(t), t, devices=200, ports=32))
        history.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        sizes.append(path.stat().st_size)
    steps = [b - a for a, b in itertools.pairwise(sizes)]
    assert all(step > 0 for step in steps)
    assert max(steps) <= 1.25 * min(steps)  # each snapshot of the same fabric costs about the same…
    assert min(steps) >= 200 * 32 * 2 * 8  # …its 12,800 doubles and SQLite's page overhead



def test_a_device_layout_is_written_once_and_found_again_after_reopening(tmp_path: Path) -> None:
    """A layout is stored once per device and counter list: reused by later snapshots, by a History opened
    later on the same file, and when a device goes back to a counter list it reported before."""
    path = tmp_path / "h.sqlite"
    history = History(path)
    history.add(snap(0.0, 1, devices=3, ports=4))
    history.add(snap(1.0, 2, devices=3, ports=4))
    history.close()

    def layouts() -> int:
        with sqlite3.connect(path) as db:
            return int(db.execute("SELECT count(*) FROM layout").fetchone()[0])

    assert layouts() == 3  # one per device, though the three report the same counter list
    reopened = History(path)
    reopened.add(snap(2.0, 3, devices=3, ports=4))
    assert layouts() == 3
    wider = reopened.add(snap(3.0, 4, devices=1, ports=5))
    assert layouts() == 4
    back = reopened.add(snap(4.0, 5, devices=1, ports=4))
    assert layouts() == 4
    assert reopened.values(back) == snap(4.0, 5, devices=1, ports=4).values()
    assert reopened.values(wider) == snap(3.0, 4, devices=1, ports=5).values()
    reopened.close()

def test_a_file_that_is_not_a_history_is_refused_with_its_name(tmp_path: Path) -> None:
    bad = tmp_path / "observe.sqlite"
    bad.write_text("this is not sqlite" * 100)
    with pytest.raises(StoreError, match=r"observe\.sqlite: not a fabricgen observe history"):
        History(bad)


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    History(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    with pytest.raises(StoreError, match="history schema 99, this fabricgen reads 2"):
        History(path)


def test_push_soak_readings_are_kept_apart_from_the_fleet_snapshots(tmp_path: Path) -> None:
    """A soak reading holds one device (snapshot.run_id/phase set): health and the report compare the fleet's
    `observe` snapshots, so a soak reading taken between two of them is not mistaken for the latest."""
    history = History(tmp_path / "h.sqlite")
    first = history.add(snap(100.0, 1, devices=2))
    before = history.add(snap(150.0, 2), run_id="20261205T120000Z-0b5e4e", phase="before")
    after = history.add(snap(160.0, 3), run_id="20261205T120000Z-0b5e4e", phase="after")
    second = history.add(snap(200.0, 4, devices=2))
    assert history.snapshot_ids() == [first, second]
    assert history.run_snapshot_ids("20261205T120000Z-0b5e4e") == [(before, "before"), (after, "after")]
    assert history.run_snapshot_ids("20261205T130000Z-000000") == []
    # A device's series includes its own soak readings; other devices' soak readings do not crowd it out.
    for minute in range(10):
        other = Snapshot(170.0 + minute, {"gpu7": DeviceSnapshot("gpu7", "connectx", [
            reading("gpu7", "ens1f0np0", "pfc_rx_pause", minute, 3)])})
        history.add(other, run_id="20261205T120000Z-0b5e4e", phase="before")
    assert history.series("leaf0", "Ethernet0", ["pfc_rx_pause"], limit=4)["pfc_rx_pause"] == [
        (100.0, 1), (150.0, 2), (160.0, 3), (200.0, 4)]


def test_keeping_the_newest_snapshots_counts_the_fleet_ones(tmp_path: Path) -> None:
    """`--keep K` keeps the K newest `observe` snapshots however many soak readings a push stored between them,
    and drops the soak readings older than the oldest one kept."""
    history = History(tmp_path / "h.sqlite")
    fleet = [history.add(snap(100.0 * day, day, devices=2)) for day in range(1, 4)]
    soaks = [history.add(snap(100.0 * 2 + minute, 1), run_id="20261205T120000Z-0b5e4e",
                         phase="before" if minute % 2 else "after") for minute in range(1, 21)]
    early = history.add(snap(50.0, 0), run_id="20261205T110000Z-0b5e4e", phase="before")
    assert history.prune(keep_last=2) == 2  # the first fleet snapshot and the soak reading older than day 2
    assert history.snapshot_ids() == fleet[1:]
    assert [sid for sid, _ in history.run_snapshot_ids("20261205T120000Z-0b5e4e")] == soaks
    assert history.run_snapshot_ids("20261205T110000Z-0b5e4e") == []
    with pytest.raises(StoreError, match=f"no snapshot {early}"):
        history.load(early)


def test_a_pause_of_the_collector_leaves_what_it_allocated_in_the_oldest_generation() -> None:
    """What a pause allocated is not left young: the next allocation must not trigger a walk of a snapshot's
    millions of readings (model._promote); the collector is running again afterwards."""
    with cyclic_gc_paused():
        kept = [reading("leaf0", f"Ethernet{p}", "fec_uncorrected", 0) for p in range(1000)]
    assert gc.isenabled()
    assert gc.get_count()[0] < 1000
    oldest = {id(thing) for thing in gc.get_objects(generation=2)}
    assert all(id(one) in oldest for one in kept)


def test_a_pause_of_the_collector_keeps_another_freeze() -> None:
    """fabricgen.runtime.forked freezes the heap while its workers run: a pause ending then must not unfreeze it."""
    frozen = [reading("leaf0", "Ethernet0", "fec_uncorrected", 0)]
    gc.freeze()
    try:
        with cyclic_gc_paused():
            young = [reading("leaf0", "Ethernet1", "fec_uncorrected", 0)]
        assert gc.get_freeze_count() >= len(frozen)
        assert gc.isenabled() and young
    finally:
        gc.unfreeze()
