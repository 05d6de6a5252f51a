"""The run journal: runs/<run-id>/journal.jsonl, one JSON event per line, appended and fsync'd as the run goes.

A run killed at any point leaves a journal that says what was planned, which devices were committed and which
confirmed, so `fabricgen runs` can report it, `push --resume` can finish it and `rollback` can undo it. Events
hold diffs, snapshots (the NIC settings as the host's script read them) and results, never credentials: the
only texts written come from rendered files and from what the device printed.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

JOURNAL = "journal.jsonl"
_RUN_ID_CHARS = set("0123456789abcdefghijklmnopqrstuvwxyzTZ-")


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)


def valid_run_id(run_id: str) -> bool:
    return 0 < len(run_id) <= 40 and set(run_id) <= _RUN_ID_CHARS


class Journal:
    def __init__(self, root: Path, run_id: str) -> None:
        if not valid_run_id(run_id):
            raise ValueError(f"not a run id: {run_id!r}")
        self.run_id = run_id
        self.directory = root / run_id
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._lock = threading.Lock()
        self._handle = (self.directory / JOURNAL).open("a", encoding="utf-8")

    def write(self, event: str, device: str | None = None, **data: Any) -> None:
        record = {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "event": event}
        if device is not None:
            record["device"] = device
        record.update(data)
        line = json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"
        with self._lock:
            self._handle.write(line)
            self._handle.flush()
            os.fsync(self._handle.fileno())

    def save(self, name: str, text: str) -> None:
        """A file of the run (a device's pushed candidate): written whole, then renamed, then fsync'd."""
        path = self.directory / name
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = path.with_name(f".{path.name}.tmp")
        with temporary.open("w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        temporary.replace(path)

    def close(self) -> None:
        self._handle.close()


@dataclass
class DeviceRecord:
    device: str
    state: str = "planned"
    diff: str = ""
    commit_id: str | None = None
    message: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class RunRecord:
    run_id: str
    command: str = "?"
    started: str = ""
    finished: str = ""
    exit_code: int | None = None
    plan: dict[str, Any] = field(default_factory=dict)
    devices: dict[str, DeviceRecord] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.exit_code is not None

    @property
    def changed(self) -> list[str]:
        """Devices this run committed a change to (whatever became of it later)."""
        return sorted(name for name, device in self.devices.items() if device.commit_id)


# The device states a step leaves behind (journal event -> state).
_STATES = {"unchanged": "unchanged", "committed": "committed", "confirmed": "confirmed", "reverted": "reverted",
           "restored": "restored", "failed": "failed", "attention": "attention", "skipped": "skipped"}


def candidate_path(device: str) -> str:
    """Where a run keeps the candidate it pushed to ``device`` (relative to the run's directory): what rollback
    compares the device with to find drift."""
    return f"devices/{device}.candidate"


def read_candidate(root: Path, run_id: str, device: str) -> str:
    return (root / run_id / candidate_path(device)).read_text(encoding="utf-8")


def read_run(root: Path, run_id: str) -> RunRecord:
    record = RunRecord(run_id)
    for event in _events(root / run_id / JOURNAL):
        _fold(record, event)
    return record


def _fold(record: RunRecord, event: dict[str, Any]) -> None:
    kind = event.get("event")
    if kind == "run-start":
        record.command, record.started, record.plan = event.get("command", "?"), event["at"], event.get("plan", {})
        for name in record.plan.get("devices", []):
            record.devices.setdefault(name, DeviceRecord(name))
    elif kind == "run-end":
        record.finished, record.exit_code = event["at"], event.get("exit_code")
    elif "device" in event:
        device = record.devices.setdefault(event["device"], DeviceRecord(event["device"]))
        device.steps.append(event)
        if kind in _STATES:
            device.state = _STATES[kind]
        device.diff = event.get("diff", device.diff)
        device.commit_id = event.get("commit_id", device.commit_id)
        device.message = event.get("message", device.message)


def _events(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                return  # a line cut short by a crash ends the journal
            if isinstance(event, dict) and "event" in event:
                yield event


def list_runs(root: Path) -> list[RunRecord]:
    if not root.is_dir():
        return []
    return [read_run(root, path.name) for path in sorted(root.iterdir())
            if valid_run_id(path.name) and (path / JOURNAL).is_file()]
