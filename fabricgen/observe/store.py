"""Snapshot history in SQLite (Python's stdlib; one file, no server): by default `observe.sqlite` beside the push
journal's `runs/` directory, so the counters of a tuning change sit next to the run that made it.

Schema (docs/observe.md explains it; :data:`SCHEMA_VERSION` is stored in `meta`):

- snapshot(id, taken_at UNIX s, label, run_id, phase) — one collection; run_id/phase ("before"/"after") when push
  took it (one device's soak reading: fabricgen/deploy/soak.py). `health` and the report compare and plot the
  fleet's snapshots (phase NULL); a device's :meth:`History.series` includes its own soak readings.
- device_status(snapshot_id, device, platform, error, seconds) — one row per device asked, the error when it
  said nothing.
- layout(id, device, keys) — the ordered list of a device's counters, [port, metric, index] each (index -1 =
  port-wide), zlib-compressed JSON; written once and reused while the device reports the same counters.
- sample(snapshot_id, device, layout_id, vals) — a device's numbers in its layout's order: IEEE-754 doubles,
  native byte order (array('d')). One row per device per snapshot keeps a 32k-GPU snapshot (4.4 M numbers) to
  5,750 inserts: bench/observe.py.
- baseline(name, snapshot_id, created_at) — `--baseline NAME` marks a snapshot to compare later ones against.

Growth is linear: 8 bytes per reading per snapshot plus SQLite's page overhead (bench/observe.py prints it).
Retention (`prune`) deletes snapshots older than N days or beyond the newest K `observe` snapshots (with push's
soak readings older than those K), never a baseline's.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
import zlib
from array import array
from collections.abc import Iterable
from operator import attrgetter
from pathlib import Path

import orjson

from fabricgen.observe.model import DeviceSnapshot, Reading, Snapshot, cyclic_gc_paused

SCHEMA_VERSION = 2
DEFAULT_NAME = "observe.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS snapshot (id INTEGER PRIMARY KEY, taken_at REAL NOT NULL, label TEXT, run_id TEXT,
                                     phase TEXT);
CREATE TABLE IF NOT EXISTS device_status (snapshot_id INTEGER NOT NULL REFERENCES snapshot(id) ON DELETE CASCADE,
                                          device TEXT NOT NULL, platform TEXT NOT NULL, error TEXT,
                                          seconds REAL NOT NULL, PRIMARY KEY (snapshot_id, device));
CREATE TABLE IF NOT EXISTS layout (id INTEGER PRIMARY KEY, device TEXT NOT NULL, keys BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS sample (snapshot_id INTEGER NOT NULL REFERENCES snapshot(id) ON DELETE CASCADE,
                                   device TEXT NOT NULL, layout_id INTEGER NOT NULL REFERENCES layout(id),
                                   vals BLOB NOT NULL, PRIMARY KEY (snapshot_id, device)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS baseline (name TEXT PRIMARY KEY, snapshot_id INTEGER NOT NULL REFERENCES snapshot(id),
                                     created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS snapshot_taken ON snapshot(taken_at);
"""
Key = tuple[str, str, str, int]
# A reading's (port, metric, index) and value, fetched in C: a 32k-GPU snapshot has 4.4 M readings.
_READING_KEY = attrgetter("port", "metric", "index")
_READING_VALUE = attrgetter("value")



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
        self._layout_ids: dict[tuple[str, int], list[tuple[int, tuple[tuple[str, str, int | None], ...]]]] = {}
        self._layouts: dict[int, tuple[str, tuple[tuple[str, str, int], ...]]] = {}

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
    @cyclic_gc_paused()
    def add(self, snapshot: Snapshot, run_id: str | None = None, phase: str | None = None) -> int:
        with self.db:
            cursor = self.db.execute("INSERT INTO snapshot (taken_at, label, run_id, phase) VALUES (?, ?, ?, ?)",
                                     (snapshot.taken_at, snapshot.label, run_id, phase))
            snapshot_id = int(cursor.lastrowid or 0)
            self.db.executemany("INSERT INTO device_status VALUES (?, ?, ?, ?, ?)",
                                [(snapshot_id, d.device, d.platform, d.error, d.seconds)
                                 for d in snapshot.devices.values()])
            rows = []
            for device in snapshot.devices.values():
                if device.readings:
                    values = array("d", map(_READING_VALUE, device.readings))
                    layout_id = self._layout_id(device.device, tuple(map(_READING_KEY, device.readings)))
                    rows.append((snapshot_id, device.device, layout_id, values.tobytes()))
            self.db.executemany("INSERT INTO sample VALUES (?, ?, ?, ?)", rows)
        snapshot.snapshot_id = snapshot_id
        return snapshot_id

    def _layout_id(self, device: str, raw_keys: tuple[tuple[str, str, int | None], ...]) -> int:
        """The id of this exact counter list of the device, written the first time it is seen. ``raw_keys`` are
        the readings' own (port, metric, index) with None for port-wide: compared as they come, without building
        the -1 form of 4.4 M keys per snapshot when the layout is already known."""
        if not self._layouts:
            self._load_layouts()
        candidates = self._layout_ids.setdefault((device, hash(raw_keys)), [])
        for layout_id, known in candidates:
            if known == raw_keys:
                return layout_id
        keys = tuple([(port, metric, -1 if index is None else index) for port, metric, index in raw_keys])
        # orjson: compact JSON that json.loads reads back to the same keys (_load_layouts), ~10x faster to write;
        # zlib level 1: 6x faster than 6 for 20 % more bytes, written once per device layout (bench/observe.py)
        blob = zlib.compress(orjson.dumps(keys), 1)
        layout_id = int(self.db.execute("INSERT INTO layout (device, keys) VALUES (?, ?)", (device, blob)).lastrowid
                        or 0)
        candidates.append((layout_id, raw_keys))
        self._layouts[layout_id] = (device, keys)
        return layout_id

    def _load_layouts(self) -> None:
        self._layouts[0] = ("", ())  # marks "loaded" even for an empty history
        for layout_id, device, blob in self.db.execute("SELECT id, device, keys FROM layout"):
            keys = tuple((port, metric, int(idx)) for port, metric, idx in json.loads(zlib.decompress(blob)))
            self._layouts[layout_id] = (device, keys)
            raw_keys = tuple((port, metric, None if idx < 0 else idx) for port, metric, idx in keys)
            self._layout_ids.setdefault((device, hash(raw_keys)), []).append((layout_id, raw_keys))

    def mark_baseline(self, name: str, snapshot_id: int) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO baseline VALUES (?, ?, ?)", (name, snapshot_id, time.time()))

    def prune(self, keep_days: float | None = None, keep_last: int | None = None, now: float | None = None) -> int:
        """Delete old snapshots (never a baseline's); the number deleted."""
        protected = {row[0] for row in self.db.execute("SELECT snapshot_id FROM baseline")}
        doomed: set[int] = set()
        if keep_last is not None:
            # The newest N `observe` snapshots, and push's soak readings no older than the oldest of them: a push of
            # a thousand devices stores two thousand one-device readings, which must not push the fleet's out.
            fleet = self.db.execute("SELECT id, taken_at FROM snapshot WHERE phase IS NULL "
                                    "ORDER BY taken_at DESC, id DESC").fetchall()
            doomed |= {snapshot_id for snapshot_id, _ in fleet[keep_last:]}
            oldest_kept = fleet[:keep_last][-1][1] if fleet else float("-inf")  # no fleet snapshot: keep them
            doomed |= {row[0] for row in self.db.execute(
                "SELECT id FROM snapshot WHERE phase IS NOT NULL AND taken_at < ?", (oldest_kept,))}
        if keep_days is not None:
            cutoff = (now if now is not None else time.time()) - keep_days * 86400
            doomed |= {row[0] for row in self.db.execute("SELECT id FROM snapshot WHERE taken_at < ?", (cutoff,))}
        doomed -= protected
        with self.db:
            self.db.executemany("DELETE FROM sample WHERE snapshot_id = ?", [(i,) for i in doomed])
            self.db.execute("DELETE FROM layout WHERE id NOT IN (SELECT DISTINCT layout_id FROM sample)")
            self.db.executemany("DELETE FROM device_status WHERE snapshot_id = ?", [(i,) for i in doomed])
            self.db.executemany("DELETE FROM snapshot WHERE id = ?", [(i,) for i in doomed])
        self._layouts.clear()
        self._layout_ids.clear()
        return len(doomed)

    # --- reading --------------------------------------------------------------------------------------------
    def snapshot_ids(self) -> list[int]:
        """The `observe` snapshots, oldest first: not push's soak readings, which hold one device each."""
        return [row[0] for row in self.db.execute("SELECT id FROM snapshot WHERE phase IS NULL ORDER BY taken_at, id")]

    def run_snapshot_ids(self, run_id: str) -> list[tuple[int, str]]:
        """(snapshot id, phase) of the soak readings push stored for run ``run_id``, oldest first."""
        return [(int(row[0]), str(row[1])) for row in self.db.execute(
            "SELECT id, phase FROM snapshot WHERE run_id = ? ORDER BY taken_at, id", (run_id,))]

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
        for device, port, metric, idx, value in self._samples(snapshot_id):
            holder = snapshot.devices.setdefault(device, DeviceSnapshot(device, "unknown"))
            holder.readings.append(Reading(device, port, metric, None if idx < 0 else idx, value))
        return snapshot

    def _samples(self, snapshot_id: int, device: str | None = None) -> Iterable[tuple[str, str, str, int, float]]:
        """(device, port, metric, index, value) of a snapshot (of one device)."""
        if not self._layouts:
            self._load_layouts()
        query = "SELECT device, layout_id, vals FROM sample WHERE snapshot_id = ?"
        rows = self.db.execute(query + (" AND device = ?" if device else "") + " ORDER BY device",
                               (snapshot_id, device) if device else (snapshot_id,))
        for name, layout_id, blob in rows:
            values = array("d")
            values.frombytes(blob)
            if sys.byteorder != "little":  # pragma: no cover - written and read on the same machine in practice
                values.byteswap()
            _, keys = self._layouts[layout_id]
            for (port, metric, idx), value in zip(keys, values, strict=True):
                yield name, port, metric, idx, value

    def series(self, device: str, port: str, metrics: Iterable[str],
               limit: int = 50) -> dict[str, list[tuple[float, float]]]:
        """{metric: [(taken_at, value summed over indexes)]} of the last `limit` snapshots, oldest first."""
        wanted = set(metrics)
        # The fleet's snapshots and the device's own soak readings, not other devices' soak readings (a push of
        # many devices would crowd this device's points out of the last `limit`).
        recent = self.db.execute("SELECT id, taken_at FROM snapshot WHERE phase IS NULL OR id IN (SELECT snapshot_id "
                                 "FROM device_status WHERE device = ?) ORDER BY taken_at DESC, id DESC LIMIT ?",
                                 (device, limit)).fetchall()
        out: dict[str, list[tuple[float, float]]] = {}
        for snapshot_id, taken_at in reversed(recent):
            sums: dict[str, float] = {}
            for _, where, metric, _, value in self._samples(snapshot_id, device):
                if where == port and metric in wanted:
                    sums[metric] = sums.get(metric, 0.0) + value
            for metric, value in sorted(sums.items()):
                out.setdefault(metric, []).append((taken_at, value))
        return out

    def values(self, snapshot_id: int) -> dict[Key, float]:
        return {(device, port, metric, idx): value for device, port, metric, idx, value in self._samples(snapshot_id)}
