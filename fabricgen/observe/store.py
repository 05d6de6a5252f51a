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
  native byte order (array('d')). One row per device per snapshot keeps a 32k-GPU snapshot (5.0 M numbers) to
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
LayoutKey = tuple[str, str, int]  # (port, metric, index), index -1 for port-wide: as the layout table stores it
# A layout as columns: the readings' ports, metrics and indexes (None for port-wide), in order. Three lists of
# references per device rather than a tuple per reading: a 32k-GPU snapshot has 5 M readings.
Columns = tuple[list[str], list[str], list[int | None]]
_PORT, _METRIC, _INDEX, _VALUE = (attrgetter(name) for name in ("port", "metric", "index", "value"))  # in C


class _Layout:
    """One stored layout of a device, decoded from its blob only when it is compared or read."""

    __slots__ = ("_blob", "_columns", "_keys", "layout_id")

    def __init__(self, layout_id: int, blob: bytes | None = None, columns: Columns | None = None) -> None:
        self.layout_id = layout_id
        self._blob = blob
        self._columns = columns
        self._keys: tuple[LayoutKey, ...] | None = None

    def columns(self) -> Columns:
        if self._columns is None:
            keys = self.keys()
            # Interned metric names are the readers' own string constants: compared by identity (_matches).
            self._columns = ([port for port, _, _ in keys], [sys.intern(metric) for _, metric, _ in keys],
                             [None if idx < 0 else idx for _, _, idx in keys])
        return self._columns

    def keys(self) -> tuple[LayoutKey, ...]:
        if self._keys is None:
            if self._blob is not None:
                self._keys = tuple((port, metric, int(idx))
                                   for port, metric, idx in json.loads(zlib.decompress(self._blob)))
                self._blob = None
            else:
                ports, metrics, indexes = self.columns()
                self._keys = tuple(zip(ports, metrics, [-1 if idx is None else idx for idx in indexes],
                                       strict=True))
        return self._keys

    def matches(self, columns: Columns) -> bool:
        ports, metrics, indexes = self.columns()
        return indexes == columns[2] and metrics == columns[1] and ports == columns[0]


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
        self._loaded = False  # the layout table is read on first use
        self._device_layouts: dict[str, list[_Layout]] = {}  # per device, its latest layout first
        self._layouts: dict[int, _Layout] = {}
        # Blobs of the layouts written through this History, by their columns: devices of one model report the
        # same counters (4,096 hosts, 512 SONiC switches at 32k GPUs), encoded and compressed once.
        self._blobs: dict[tuple[tuple[str, ...], tuple[str, ...], tuple[int | None, ...]], bytes] = {}

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
                readings = device.readings
                if readings:
                    columns = (list(map(_PORT, readings)), list(map(_METRIC, readings)), list(map(_INDEX, readings)))
                    rows.append((snapshot_id, device.device, self._layout_id(device.device, columns),
                                 array("d", map(_VALUE, readings)).tobytes()))
            self.db.executemany("INSERT INTO sample VALUES (?, ?, ?, ?)", rows)
        snapshot.snapshot_id = snapshot_id
        return snapshot_id

    def _layout_id(self, device: str, columns: Columns) -> int:
        """The id of this exact counter list of the device, written the first time it is seen. Compared column by
        column with the device's known layouts, latest first (a device usually reports what it reported last):
        no per-reading key is built or hashed for a layout already known."""
        if not self._loaded:
            self._load_layouts()
        known = self._device_layouts.setdefault(device, [])
        for at, layout in enumerate(known):
            if layout.matches(columns):
                if at:
                    known.insert(0, known.pop(at))
                return layout.layout_id
        layout_id = int(self.db.execute("INSERT INTO layout (device, keys) VALUES (?, ?)",
                                        (device, self._blob(columns))).lastrowid or 0)
        layout = _Layout(layout_id, columns=columns)
        known.insert(0, layout)
        self._layouts[layout_id] = layout
        return layout_id

    def _blob(self, columns: Columns) -> bytes:
        """zlib(JSON [[port, metric, index], …]), index -1 for port-wide: encoded once per distinct layout."""
        ports, metrics, indexes = columns
        same = (tuple(ports), tuple(metrics), tuple(indexes))
        blob = self._blobs.get(same)
        if blob is None:
            keys = list(zip(ports, metrics, [-1 if index is None else index for index in indexes], strict=True))
            # orjson: compact JSON that json.loads reads back to the same keys, ~10x faster to write; zlib level
            # 1: 6x faster than 6 for 20 % more bytes (bench/observe.py)
            blob = self._blobs[same] = zlib.compress(orjson.dumps(keys), 1)
        return blob

    def _load_layouts(self) -> None:
        self._loaded = True
        for layout_id, device, blob in self.db.execute("SELECT id, device, keys FROM layout ORDER BY id DESC"):
            layout = self._layouts[layout_id] = _Layout(layout_id, blob=blob)
            self._device_layouts.setdefault(device, []).append(layout)

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
        self._loaded = False
        self._layouts.clear()
        self._device_layouts.clear()
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
        if not self._loaded:
            self._load_layouts()
        query = "SELECT device, layout_id, vals FROM sample WHERE snapshot_id = ?"
        rows = self.db.execute(query + (" AND device = ?" if device else "") + " ORDER BY device",
                               (snapshot_id, device) if device else (snapshot_id,))
        for name, layout_id, blob in rows:
            values = array("d")
            values.frombytes(blob)
            if sys.byteorder != "little":  # pragma: no cover - written and read on the same machine in practice
                values.byteswap()
            for (port, metric, idx), value in zip(self._layouts[layout_id].keys(), values, strict=True):
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
