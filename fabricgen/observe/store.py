"""Snapshot history in SQLite (Python's stdlib; one file, no server): by default `observe.sqlite` beside the push
journal's `runs/` directory, so the counters of a tuning change sit next to the run that made it.

Schema (docs/observe.md explains it; :data:`SCHEMA_VERSION` is stored in `meta`):

- snapshot(id, taken_at UNIX s, label, run_id, phase) — one collection; run_id/phase ("before"/"after") when push
  took it.
- device_status(snapshot_id, device, platform, error, seconds) — one row per device asked, the error when it
  said nothing.
- series(id, device, port, metric, idx) — each counter is named once (idx -1 = port-wide).
- sample(snapshot_id, series_id, value) — the numbers; WITHOUT ROWID so a sample costs its key and value only.
- baseline(name, snapshot_id, created_at) — `--baseline NAME` marks a snapshot to compare later ones against.

Growth is linear: one sample row per reading per snapshot (bench/observe.py measures bytes per snapshot).
Retention (`prune`) deletes snapshots older than N days or beyond the newest K, never a baseline's.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path

from fabricgen.observe.model import DeviceSnapshot, Reading, Snapshot

SCHEMA_VERSION = 1
DEFAULT_NAME = "observe.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS snapshot (id INTEGER PRIMARY KEY, taken_at REAL NOT NULL, label TEXT, run_id TEXT,
                                     phase TEXT);
CREATE TABLE IF NOT EXISTS device_status (snapshot_id INTEGER NOT NULL REFERENCES snapshot(id) ON DELETE CASCADE,
                                          device TEXT NOT NULL, platform TEXT NOT NULL, error TEXT,
                                          seconds REAL NOT NULL, PRIMARY KEY (snapshot_id, device));
CREATE TABLE IF NOT EXISTS series (id INTEGER PRIMARY KEY, device TEXT NOT NULL, port TEXT NOT NULL,
                                   metric TEXT NOT NULL, idx INTEGER NOT NULL, UNIQUE (device, port, metric, idx));
CREATE TABLE IF NOT EXISTS sample (snapshot_id INTEGER NOT NULL REFERENCES snapshot(id) ON DELETE CASCADE,
                                   series_id INTEGER NOT NULL, value REAL NOT NULL,
                                   PRIMARY KEY (snapshot_id, series_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS baseline (name TEXT PRIMARY KEY, snapshot_id INTEGER NOT NULL REFERENCES snapshot(id),
                                     created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS snapshot_taken ON snapshot(taken_at);
"""


class StoreError(RuntimeError):
    """The history file cannot be used: names the file and what to do."""


def history_path(journal_root: Path) -> Path:
    """The history next to the journal: `runs/` → `observe.sqlite` in the same directory."""
    return journal_root.parent / DEFAULT_NAME


class History:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path)
            self.db.execute("PRAGMA foreign_keys = ON")
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.executescript(_SCHEMA)
            self._check_version()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: not a fabricgen observe history ({exc}); move it aside or pass --history "
                             "another file") from None
        self._series: dict[tuple[str, str, str, int], int] = {
            (device, port, metric, idx): series_id
            for series_id, device, port, metric, idx in self.db.execute("SELECT id, device, port, metric, idx "
                                                                        "FROM series")}

    def _check_version(self) -> None:
        row = self.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            self.db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            self.db.commit()
        elif row[0] != str(SCHEMA_VERSION):
            raise StoreError(f"{self.path}: history schema {row[0]}, this fabricgen reads {SCHEMA_VERSION}")

    def close(self) -> None:
        self.db.close()

    # --- writing --------------------------------------------------------------------------------------------
    def add(self, snapshot: Snapshot, run_id: str | None = None, phase: str | None = None) -> int:
        with self.db:
            cursor = self.db.execute("INSERT INTO snapshot (taken_at, label, run_id, phase) VALUES (?, ?, ?, ?)",
                                     (snapshot.taken_at, snapshot.label, run_id, phase))
            snapshot_id = int(cursor.lastrowid or 0)
            self.db.executemany("INSERT INTO device_status VALUES (?, ?, ?, ?, ?)",
                                [(snapshot_id, d.device, d.platform, d.error, d.seconds)
                                 for d in snapshot.devices.values()])
            self.db.executemany("INSERT OR REPLACE INTO sample VALUES (?, ?, ?)",
                                ((snapshot_id, self._series_id(r), r.value) for r in snapshot.readings()))
        snapshot.snapshot_id = snapshot_id
        return snapshot_id

    def _series_id(self, item: Reading) -> int:
        key = item.key
        found = self._series.get(key)
        if found is None:
            cursor = self.db.execute("INSERT INTO series (device, port, metric, idx) VALUES (?, ?, ?, ?)", key)
            found = self._series[key] = int(cursor.lastrowid or 0)
        return found

    def mark_baseline(self, name: str, snapshot_id: int) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO baseline VALUES (?, ?, ?)", (name, snapshot_id, time.time()))

    def prune(self, keep_days: float | None = None, keep_last: int | None = None, now: float | None = None) -> int:
        """Delete old snapshots (never a baseline's); the number deleted."""
        protected = {row[0] for row in self.db.execute("SELECT snapshot_id FROM baseline")}
        ids = [row[0] for row in self.db.execute("SELECT id, taken_at FROM snapshot ORDER BY taken_at DESC, id DESC")]
        doomed: set[int] = set()
        if keep_last is not None:
            doomed |= set(ids[keep_last:])
        if keep_days is not None:
            cutoff = (now if now is not None else time.time()) - keep_days * 86400
            doomed |= {row[0] for row in self.db.execute("SELECT id FROM snapshot WHERE taken_at < ?", (cutoff,))}
        doomed -= protected
        with self.db:
            self.db.executemany("DELETE FROM sample WHERE snapshot_id = ?", [(i,) for i in doomed])
            self.db.executemany("DELETE FROM device_status WHERE snapshot_id = ?", [(i,) for i in doomed])
            self.db.executemany("DELETE FROM snapshot WHERE id = ?", [(i,) for i in doomed])
        return len(doomed)

    # --- reading --------------------------------------------------------------------------------------------
    def snapshot_ids(self) -> list[int]:
        return [row[0] for row in self.db.execute("SELECT id FROM snapshot ORDER BY taken_at, id")]

    def baseline(self, name: str) -> int | None:
        row = self.db.execute("SELECT snapshot_id FROM baseline WHERE name = ?", (name,)).fetchone()
        return int(row[0]) if row else None

    def baselines(self) -> dict[str, int]:
        return {name: int(sid) for name, sid in self.db.execute("SELECT name, snapshot_id FROM baseline")}

    def load(self, snapshot_id: int) -> Snapshot:
        row = self.db.execute("SELECT taken_at, label FROM snapshot WHERE id = ?", (snapshot_id,)).fetchone()
        if row is None:
            raise StoreError(f"{self.path}: no snapshot {snapshot_id}")
        snapshot = Snapshot(taken_at=row[0], label=row[1], snapshot_id=snapshot_id)
        for device, platform, error, seconds in self.db.execute(
                "SELECT device, platform, error, seconds FROM device_status WHERE snapshot_id = ?", (snapshot_id,)):
            snapshot.devices[device] = DeviceSnapshot(device, platform, error=error, seconds=seconds)
        for device, port, metric, idx, value in self.db.execute(
                "SELECT s.device, s.port, s.metric, s.idx, v.value FROM sample v JOIN series s ON s.id = v.series_id "
                "WHERE v.snapshot_id = ? ORDER BY s.device, s.port, s.metric, s.idx", (snapshot_id,)):
            holder = snapshot.devices.setdefault(device, DeviceSnapshot(device, "unknown"))
            holder.readings.append(Reading(device, port, metric, None if idx < 0 else idx, value))
        return snapshot

    def series(self, device: str, port: str, metrics: Iterable[str],
               limit: int = 50) -> dict[str, list[tuple[float, float]]]:
        """{metric: [(taken_at, value summed over indexes)]} of the last `limit` snapshots, oldest first."""
        wanted = list(metrics)
        marks = ",".join("?" * len(wanted))
        rows = self.db.execute(
            f"SELECT s.metric, n.taken_at, SUM(v.value) FROM sample v JOIN series s ON s.id = v.series_id "
            f"JOIN snapshot n ON n.id = v.snapshot_id WHERE s.device = ? AND s.port = ? AND s.metric IN ({marks}) "
            f"AND n.id IN (SELECT id FROM snapshot ORDER BY taken_at DESC, id DESC LIMIT ?) "
            f"GROUP BY s.metric, n.id ORDER BY n.taken_at", (device, port, *wanted, limit))
        out: dict[str, list[tuple[float, float]]] = {}
        for metric, taken_at, value in rows:
            out.setdefault(metric, []).append((taken_at, value))
        return out
