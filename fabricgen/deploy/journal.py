"""The run journal: runs/<run-id>/journal.jsonl, one JSON event per line, appended and fsync'd as the run goes.

A run killed at any point leaves a journal that says what was planned, which devices were committed and which
confirmed, so `fabricgen runs` can report it, `push --resume` can finish it and `rollback` can undo it. Events
hold diffs, snapshots (the NIC settings as the host's script read them) and results, never credentials: the
only texts written come from rendered files and from what the device printed.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import signal
import socket
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

JOURNAL = "journal.jsonl"
LOCK = ".lock"  # in the journal's root: one push, resume or rollback of a fabric at a time
_RUN_ID_CHARS = set("0123456789abcdefghijklmnopqrstuvwxyzTZ-")


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)


def valid_run_id(run_id: str) -> bool:
    return 0 < len(run_id) <= 40 and set(run_id) <= _RUN_ID_CHARS


# The fault suite's hook (tests/test_push_faults.py): "EVENT" or "EVENT:DEVICE" -- the process kills itself with
# SIGKILL right after that journal line is on disk, as a crash or an operator's kill -9 would at that point.
STOP_AFTER = "FABRICGEN_STOP_AFTER_EVENT"


def _stop_here_if_asked(event: str, device: str | None) -> None:
    wanted = os.environ.get(STOP_AFTER)
    if wanted and wanted in (event, f"{event}:{device}"):
        os.kill(os.getpid(), signal.SIGKILL)


class JournalLocked(Exception):
    """Another fabricgen run holds the journal's lock; the message names it."""


@contextmanager
def fabric_lock(root: Path, run_id: str, command: str) -> Iterator[None]:
    """Hold the journal root's lock for one run: push, push --resume and rollback of one fabric never overlap
    (two pushes would commit the same devices; a rollback racing a push would revert what the push confirms).
    An advisory fcntl lock on ``root/.lock``: the kernel drops it when the process dies however it dies, so a
    killed run never leaves a stale lock. The file names the holder (host, pid, run, start) for the message
    a second run gets; that text is only read for the message, never trusted for the decision."""
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = root / LOCK
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    try:
        if not _is_regular(descriptor):  # O_NOFOLLOW refused a symlink; O_NONBLOCK kept a FIFO from hanging
            raise JournalLocked(f"{path} is not a regular file: remove it")
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise JournalLocked(f"another fabricgen run holds {root}/: {_holder(descriptor)}; wait for it to "
                                "finish (`fabricgen runs` shows it)") from None
        holder = {"host": socket.gethostname(), "pid": os.getpid(), "run": run_id, "command": command,
                  "start": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, (json.dumps(holder, sort_keys=True) + "\n").encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(descriptor, 0)
    finally:
        os.close(descriptor)  # releases the lock


def _is_regular(descriptor: int) -> bool:
    return stat.S_ISREG(os.fstat(descriptor).st_mode)


def _holder(descriptor: int) -> str:
    """Who holds the lock, from what it wrote (bounded: the file is ours but anyone may have scribbled on it)."""
    try:
        data = json.loads(os.pread(descriptor, 4096, 0).decode("utf-8", "replace"))
        return (f"{escape(str(data['command']))} run {escape(str(data['run']))} (pid {int(data['pid'])} on "
                f"{escape(str(data['host']))}, started {escape(str(data['start']))})")
    except (ValueError, KeyError, TypeError, OSError):
        return "a run that has not said who it is yet"


def escape(text: str) -> str:
    """``text`` with control characters (ESC sequences, CR, BEL ...) shown as escapes: what a device or a
    damaged file says must not drive the operator's terminal. Newlines and tabs are kept."""
    return "".join(char if char in "\n\t" or (char.isprintable() and char != "\x7f") else
                   char.encode("unicode_escape").decode("ascii") for char in text)


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
            _stop_here_if_asked(event, device)

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

    @property
    def seconds(self) -> float:
        return sum(float(step["seconds"]) for step in self.steps
                   if isinstance(step.get("seconds"), int | float) and not isinstance(step.get("seconds"), bool))


@dataclass
class RunRecord:
    run_id: str
    command: str = "?"
    started: str = ""
    finished: str = ""
    exit_code: int | None = None
    seq: int = 0  # the run's place in its journal (0: written before runs were numbered)
    identity: dict[str, Any] = field(default_factory=dict)  # fabric, selection, digest of the candidates
    plan: dict[str, Any] = field(default_factory=dict)
    devices: dict[str, DeviceRecord] = field(default_factory=dict)
    damage: list[str] = field(default_factory=list)  # what of its journal could not be read (ignored)

    @property
    def complete(self) -> bool:
        return self.exit_code is not None

    @property
    def changed(self) -> list[str]:
        """Devices this run may have changed: each it journaled as `committing` (whatever became of it later)."""
        return sorted(name for name, device in self.devices.items() if device.commit_id)


# The device states a step leaves behind (journal event -> state).
_STATES = {"committing": "committing", "confirming": "confirming", "reverting": "reverting",
           "unchanged": "unchanged", "committed": "committed", "confirmed": "confirmed", "reverted": "reverted",
           "restored": "restored", "failed": "failed", "attention": "attention", "skipped": "skipped",
           "untouched": "untouched"}
# A journal line longer than this is damage, not an event (a device's whole diff is far shorter).
MAX_LINE = 64 * 1024 * 1024


def candidate_path(device: str) -> str:
    """Where a run keeps the candidate it pushed to ``device`` (relative to the run's directory): what rollback
    compares the device with to find drift."""
    return f"devices/{device}.candidate"


def read_candidate(root: Path, run_id: str, device: str) -> str:
    return (root / run_id / candidate_path(device)).read_text(encoding="utf-8")


def read_run(root: Path, run_id: str) -> RunRecord:
    """A run as its journal tells it. Whatever of the journal cannot be read is noted in ``damage`` and ignored:
    a journal is read defensively (a crash cuts its last line; a disk or a hand may damage any), never trusted
    to be well-formed, and never opened unless it is a regular file (a FIFO would block the reader)."""
    record = RunRecord(run_id)
    try:
        lines = _lines(root / run_id / JOURNAL)
    except JournalUnreadable as exc:
        record.damage.append(str(exc))
        return record
    last = len(lines) - 1
    for number, raw in enumerate(lines):
        event, problem = _event(raw)
        if event is None:
            cut = number == last and not raw.endswith(b"\n")
            record.damage.append(f"line {number + 1}: " + ("cut short (the run was killed while writing it)"
                                                           if cut else problem))
            continue
        try:
            _fold(record, event)
        except (TypeError, ValueError, AttributeError) as exc:
            record.damage.append(f"line {number + 1}: {exc} is of the wrong type")
    return record


class JournalUnreadable(Exception):
    pass


def _lines(path: Path) -> list[bytes]:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise JournalUnreadable(f"{JOURNAL} cannot be opened: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise JournalUnreadable(f"{JOURNAL} is not a regular file: ignored")
        with os.fdopen(os.dup(descriptor), "rb") as handle:
            return handle.read().splitlines(keepends=True)
    finally:
        os.close(descriptor)


def _event(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    """One journal line as an event, or (None, why not)."""
    if len(raw) > MAX_LINE:
        return None, f"longer than {MAX_LINE} bytes"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8"
    try:
        event = json.loads(text)
    except RecursionError:
        return None, "nested too deeply"
    except ValueError:
        return None, "not a JSON line"
    if not isinstance(event, dict) or not isinstance(event.get("event"), str):
        return None, "not a journal event"
    if "device" in event and not isinstance(event["device"], str):
        return None, "a device that is not a name"
    return event, ""


def _fold(record: RunRecord, event: dict[str, Any]) -> None:
    kind = event["event"]
    if kind == "run-start":
        plan = event.get("plan", {})
        if not isinstance(plan, dict):
            raise ValueError("plan")
        record.command = escape(_text(event.get("command"), "?"))
        record.started = _text(event.get("at"))
        record.plan = plan
        seq = event.get("seq")
        record.seq = seq if isinstance(seq, int) and not isinstance(seq, bool) and seq > 0 else 0
        identity = event.get("identity")
        record.identity = identity if isinstance(identity, dict) else {}
        devices = record.plan.get("devices")
        for name in devices if isinstance(devices, list) else []:
            if isinstance(name, str):
                record.devices.setdefault(name, DeviceRecord(name))
    elif kind == "run-end":
        code = event.get("exit_code")
        if not isinstance(code, int) or isinstance(code, bool):
            raise ValueError("exit_code")
        record.finished = _text(event.get("at"))
        record.exit_code = code
    elif "device" in event:
        device = record.devices.setdefault(event["device"], DeviceRecord(event["device"]))
        device.steps.append(event)
        if kind in _STATES:
            device.state = _STATES[kind]
        device.diff = _text(event.get("diff"), device.diff)
        commit = event.get("commit_id")
        if isinstance(commit, str) and commit:
            device.commit_id = commit
        device.message = _text(event.get("message"), device.message)


def _text(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def list_runs(root: Path) -> list[RunRecord]:
    """The runs of a journal in the order they ran: by their sequence number (given under the journal's lock),
    never by the clock (a controller's clock may be behind, two runs may start in one second)."""
    if not root.is_dir():
        return []
    runs = [read_run(root, path.name) for path in root.iterdir()
            if valid_run_id(path.name) and (path / JOURNAL).exists() and not path.is_symlink()]
    return sorted(runs, key=lambda run: (run.seq, run.run_id))


def next_seq(root: Path) -> int:
    """The sequence number of the next run of this journal (call it holding the journal's lock)."""
    return 1 + max((run.seq for run in list_runs(root)), default=0)
