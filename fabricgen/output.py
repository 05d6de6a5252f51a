"""write: put a rendered tree on disk atomically, with a manifest, or not at all.

A full write builds the new tree beside the target, flushes it, then swaps it in with one
``renameat2(RENAME_EXCHANGE)`` (Linux); an interrupted run leaves the previous tree intact. Where the kernel or
libc lack the exchange call we fall back to two renames, recovering a left-over backup on the next run.

An incremental write (a GitOps commit that touched a few devices) replaces only the files whose hash changed,
each atomically (write beside, rename over). The tree is marked incomplete before the first file and unmarked
after the manifest: an interrupted update leaves every file whole (old or new) and the marker, and the next
render, seeing the marker, rewrites the whole tree atomically. Readers of the tree (``lint --configs``) refuse
a marked tree.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from fabricgen import __version__
from fabricgen.forked import Workers, can_fork, fork_map, interleaved, worth_forking
from fabricgen.platforms import jsontext

MANIFEST = "manifest.json"
INCOMPLETE = ".fabricgen-incomplete"
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class OutputError(Exception):
    """The output directory cannot be (safely) written."""


def file_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def build_manifest(files: dict[str, str], inputs: dict[str, str], extra: dict[str, Any] | None = None,
                   hashes: dict[str, str] | None = None) -> str:
    """The manifest of ``files`` (texts) plus ``hashes`` (files kept from the previous tree, by hash)."""
    every = {**(hashes or {}), **{name: file_hash(text) for name, text in files.items()}}
    manifest = {
        "generator": "fabricgen",
        "version": __version__,
        "inputs": dict(sorted(inputs.items())),
        "files": dict(sorted(every.items())),
        **(extra or {}),
    }
    return jsontext.dumps(manifest, indent=2) + "\n"  # = json.dumps(indent=2, sort_keys=True), 10× faster


@dataclass(frozen=True)
class PreviousTree:
    """An existing output tree that an incremental render may update in place."""

    manifest: dict[str, Any]
    raw: bytes = b""
    """the manifest file's bytes"""
    mtime_ns: int = 0
    """when the manifest was written: files modified later are hashed by :func:`tree_matches`"""

    @property
    def files(self) -> dict[str, str]:
        files: dict[str, str] = self.manifest["files"]
        return files


def read_previous(out: Path) -> PreviousTree | None:
    """The tree at ``out`` if it is exactly what its manifest says: written by fabricgen, not interrupted
    (no marker), the same regular files and directories with the modes fabricgen gives them, and every file
    newer than the manifest (edited since, or checked out by git in another order) still has the manifest's
    hash. Anything else → None: write the whole tree."""
    previous = read_manifest(out)
    return previous if previous is not None and tree_matches(out, previous) else None


def read_manifest(out: Path) -> PreviousTree | None:
    """The manifest of a fabricgen tree at ``out`` that was not interrupted (no marker), not yet checked
    against the files (:func:`tree_matches` does that); None when there is no such tree."""
    try:
        mtime_ns = (out / MANIFEST).stat().st_mtime_ns
        raw = (out / MANIFEST).read_bytes()
        manifest = json.loads(raw)
        if not isinstance(manifest, dict) or manifest.get("generator") != "fabricgen" or \
                not isinstance(manifest.get("files"), dict) or (out / INCOMPLETE).exists():
            return None
    except (OSError, ValueError):
        return None
    return PreviousTree(manifest, raw, mtime_ns)


def tree_matches(out: Path, previous: PreviousTree) -> bool:
    """Whether the files at ``out`` are what ``previous`` (its manifest) says: one stat per file, and the
    hash of each file newer than the manifest. Mostly system calls; the neighbourhood update runs it in a
    forked process beside its own work."""
    try:
        scan = _scan(out, previous.mtime_ns)
        expected = set(previous.files) | {MANIFEST}
        folders = {name.rpartition("/")[0] for name in expected} - {""}
        if scan is None or scan.files != expected or scan.folders != folders:
            return False
        return all(hashlib.sha256((out / name).read_bytes()).hexdigest() == previous.files[name]
                   for name in scan.newer)
    except (OSError, ValueError):
        return False


@dataclass
class _Scan:
    files: set[str]
    folders: set[str]
    newer: list[str]


def _scan(root: Path, limit_ns: int) -> _Scan | None:
    """Relative paths of every file and directory under ``root``, and the files modified after ``limit_ns``.
    One stat per file: 20,000 files take tens of milliseconds, reading them all would take seconds. None at
    the first entry that is neither a directory nor a regular file (a symlink, a FIFO), or a file whose mode
    is not the one fabricgen writes."""
    found = _Scan(set(), set(), [])
    pending = [(os.fspath(root), "")]
    while pending:
        folder, prefix = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                name = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    found.folders.add(name)
                    pending.append((entry.path, f"{name}/"))
                    continue
                if not entry.is_file(follow_symlinks=False):
                    return None
                status = entry.stat(follow_symlinks=False)
                if name != MANIFEST and stat.S_IMODE(status.st_mode) != _mode(name):
                    return None
                found.files.add(name)
                if status.st_mtime_ns > limit_ns and name != MANIFEST:
                    found.newer.append(name)
    return found


def _check_target(out: Path) -> None:
    """Refuse to replace a directory fabricgen did not write (someone's home directory, a repo root)."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise OutputError(f"{out} is not empty and has no {MANIFEST}; refusing to replace it "
                          "(choose a new or empty directory)")


def _write_files(root: Path, files: dict[str, str]) -> None:
    made: set[Path] = set()
    for name, text in sorted(files.items()):
        path = root / name
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        path.write_bytes(text.encode("utf-8"))
        path.chmod(_mode(name))


def _finish_tree(root: Path, manifest: str) -> None:
    # The manifest last: an incremental render trusts a tree whose files are not newer than its manifest.
    (root / MANIFEST).write_text(manifest)
    # One flush of everything before the swap instead of an fsync per file: 20,000 fsyncs would take minutes,
    # and the tree only becomes visible (renamed into place) after this returns.
    os.sync()


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths; False when the platform cannot."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(result == 0)


def _recover_backup(out: Path) -> None:
    backup = out.with_name(out.name + ".fabricgen-old")
    if backup.is_dir() and not out.exists():
        backup.rename(out)  # a previous run stopped between its two renames
    elif backup.is_dir():
        shutil.rmtree(backup)


def update_output(out: Path, changed: dict[str, str], removed: list[str], manifest: str) -> int:
    """Update a tree that :func:`read_previous` accepted: write ``changed`` files, delete ``removed`` ones,
    then the manifest. Each file is replaced atomically; the marker covers the window in between. Returns how
    many files were written, the manifest included (none when the tree is already up to date)."""
    if not changed and not removed and (out / MANIFEST).read_bytes() == manifest.encode():
        return 0
    marker = out / INCOMPLETE
    _write_durably(marker, "a fabricgen render was interrupted while updating this tree; run it again\n")
    _fsync_dir(out)
    touched = [_replace_file(out, name, text) for name, text in sorted(changed.items())]
    for name in removed:
        path = out / name
        path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # not empty: the device still has other files
            path.parent.rmdir()
    touched.append(_replace_file(out, MANIFEST, manifest))
    for path in touched:  # a few files in a GitOps update: flush just those, not the whole system
        _fsync_path(path)
    for folder in {path.parent for path in touched}:
        _fsync_dir(folder)
    marker.unlink()
    _fsync_dir(out)
    return len(touched)


def _replace_file(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.fabricgen-tmp")
    staging.write_bytes(text.encode("utf-8"))
    staging.chmod(_mode(name))
    staging.replace(path)
    return path


def _write_durably(path: Path, text: str) -> None:
    path.write_text(text)
    _fsync_path(path)


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _mode(name: str) -> int:
    return 0o755 if name.endswith(".sh") else 0o644


def write_output(out: Path, files: dict[str, str], manifest: str) -> None:
    """Replace ``out`` with exactly ``files`` + manifest, atomically."""
    with _staged(out) as staging:
        _write_files(staging, files)
        _finish_tree(staging, manifest)


Produce = Callable[[list[str]], dict[str, str]]


@contextlib.contextmanager
def staged_render(out: Path, jobs: int) -> Iterator[StagedRender]:
    """Render into a staging tree beside ``out`` that replaces it in one atomic step when the block succeeds,
    and is removed (``out`` left as it was) when it fails."""
    with _staged(out, jobs) as staging, Workers[dict[str, str]]() as workers:
        yield StagedRender(staging, workers, forking=jobs > 1 and can_fork())


class StagedRender:
    """Devices rendered and written into the staging tree, by forked workers when ``forking``: each worker
    renders and writes its own devices, so rendered text never crosses a process boundary (at 32,768 GPUs that
    is 200 MB that would otherwise be pickled back to one process and written by it alone). A worker sees the
    memory of this process as it is when started: a caller may start one on the devices resolved so far and
    go on resolving.

    ``gate`` (the CLI's lint) decides whether the tree may be published. It runs in this process while the
    workers render; when it raises, they are stopped and the staging tree removed. Without workers it runs
    first, before anything is rendered."""

    def __init__(self, staging: Path, workers: Workers[dict[str, str]], forking: bool) -> None:
        self.staging = staging
        self.forking = forking
        self._workers = workers
        self._inline: list[tuple[Produce, list[str]]] = []

    def start(self, produce: Produce, names: list[str]) -> None:
        if self.forking:
            self._workers.start(partial(_produce_and_write, produce, self.staging), names)
        else:
            self._inline.append((produce, names))

    def finish(self, manifest_for: Callable[[dict[str, str]], str],
               gate: Callable[[], None] | None = None) -> dict[str, str]:
        """Wait for every device, then write the manifest; path → sha256 of every file."""
        hashes: dict[str, str] = {}
        for part in self._workers.results(gate):
            hashes.update(part)
        for produce, names in self._inline:
            hashes.update(_produce_and_write(produce, self.staging, names))
        _finish_tree(self.staging, manifest_for(hashes))
        return hashes


def _produce_and_write(produce: Produce, root: Path, names: list[str]) -> dict[str, str]:
    files = produce(names)
    _write_files(root, files)
    return {name: file_hash(text) for name, text in files.items()}


@contextlib.contextmanager
def _staged(out: Path, jobs: int = 1) -> Iterator[Path]:
    """A staging directory beside ``out``; when the block succeeds it replaces ``out`` in one atomic step,
    when it fails it is removed and ``out`` is left as it was."""
    out = out.absolute()
    _recover_backup(out)
    _check_target(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        yield staging
        staging.chmod(0o755)
        if not out.exists():
            staging.rename(out)
            return
        if _exchange(staging, out):
            _remove_tree(staging, jobs)  # now holds the previous tree
            return
        backup = out.with_name(out.name + ".fabricgen-old")
        out.rename(backup)
        staging.rename(out)
        _remove_tree(backup, jobs)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _remove_tree(path: Path, jobs: int) -> None:
    """Delete the previous tree, once the new one is in place. Unlinking 20,000 files is seconds of kernel time
    on ext4; ``jobs`` processes deleting different device directories take a quarter less (measured with 2).
    The render has succeeded by now, so a failure here (no fork, a file in use) only leaves work for rmtree."""
    entries = sorted(path.iterdir())
    if worth_forking(jobs, len(entries)):
        with contextlib.suppress(OSError):
            fork_map(_remove_entries, interleaved(entries, jobs))
    shutil.rmtree(path, ignore_errors=True)


def _remove_entries(paths: list[Path]) -> None:
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
