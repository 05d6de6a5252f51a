"""write: put a rendered tree on disk atomically, with a manifest, or not at all.

A full write builds the new tree beside the target, flushes it, then swaps it in with one
``renameat2(RENAME_EXCHANGE)`` (Linux); an interrupted run leaves the previous tree intact. Where the kernel or
libc lack the exchange call we fall back to two renames, recovering a left-over backup on the next run.

An incremental write (a GitOps commit that touched a few devices) replaces only the files whose hash changed,
each atomically (write beside, rename over). The tree is marked incomplete before the first file and unmarked
after the manifest: an interrupted update leaves every file whole (old or new) and the marker, and the next
render, seeing the marker, rewrites the whole tree atomically. Readers of the tree (``lint --configs``) refuse
a marked tree.

What fabricgen replaces or deletes it must be able to prove it wrote (:func:`check_owned`): a tree whose
manifest has fabricgen's shape (generator, version, a sha256 per relative path) and that holds nothing but the
files listed there (plus what an interrupted update records in its marker), and that the same command wrote
(:func:`tree_kind`: `render` and `docs` never replace each other's tree). A symlinked OUT is refused, never
written through. Renders into one OUT take a lock beside it (:func:`output_lock`, removed when done), so they
run one after the other; under the lock, staging trees of killed renders of that OUT (provably theirs) are
removed. Modes do not depend on the umask: directories 0755, files 0644, scripts 0755.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from fabricgen import __version__
from fabricgen.runtime.forked import Workers, can_fork, fork_map, interleaved, worth_forking

MANIFEST = "manifest.json"
MANIFEST_FORMAT = "fabricgen-manifest/1"
"""the ``format`` a manifest fabricgen writes declares; a manifest of another format is not fabricgen's"""
INCOMPLETE = ".fabricgen-incomplete"
STAGING_MARK = ".fabricgen-staging"
"""inside a staging tree (and a previous tree being deleted): which OUT it was made for"""
_STAGING_TMP = ".fabricgen-tmp"  # suffix of a file being replaced in an incremental update
_DIR_MODE = 0o755
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class OutputError(Exception):
    """The output directory cannot be (safely) written."""


def file_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def build_manifest(files: dict[str, str], inputs: dict[str, str], extra: dict[str, Any] | None = None,
                   hashes: dict[str, str] | None = None) -> str:
    """The manifest of ``files`` (texts) plus ``hashes`` (files kept from the previous tree, by hash), signed
    with its format and the digest of its file list (:func:`files_digest`)."""
    from fabricgen.platforms.common import jsontext  # with the renderers: the light start of render does without

    every = dict(sorted({**(hashes or {}), **{name: file_hash(text) for name, text in files.items()}}.items()))
    manifest = {
        "generator": "fabricgen",
        "version": __version__,
        "inputs": dict(sorted(inputs.items())),
        **(extra or {}),
        "format": MANIFEST_FORMAT,
        "files": every,
        "files_digest": files_digest(every),
    }
    return jsontext.dumps(manifest, indent=2) + "\n"  # = json.dumps(indent=2, sort_keys=True), 10× faster


def files_digest(files: dict[str, str]) -> str:
    """sha256 over a manifest's file list, one ``path NUL sha256 LF`` per file in path order: a hand-made or
    edited list (a path added so that a render deletes it) no longer matches the digest written beside it.
    Paths hold no NUL or line break (:func:`_plain_path`), so the encoding is unambiguous."""
    return hashlib.sha256("".join([f"{name}\0{files[name]}\n" for name in sorted(files)]).encode()).hexdigest()


@dataclass(frozen=True)
class PreviousTree:
    """An existing output tree that an incremental render may update in place."""

    manifest: dict[str, Any]
    raw: bytes = b""
    """the manifest file's bytes"""
    written_ns: int = 0
    """when the manifest was written (0 when its stamps cannot tell): files whose mtime or ctime is later are
    hashed by :func:`tree_matches`"""

    @property
    def files(self) -> dict[str, str]:
        files: dict[str, str] = self.manifest["files"]
        return files


def read_previous(out: Path) -> PreviousTree | None:
    """The tree at ``out`` if it is exactly what its manifest says: written by fabricgen, not interrupted
    (no marker), the same regular files and directories with the modes fabricgen gives them, and every file
    newer than the manifest (edited since, or checked out by git in another order) still has the manifest's
    hash. "Newer" is by ctime too: an edit that sets an old mtime back (``touch -d``, ``cp -p``, ``os.utime``)
    cannot set the ctime, which the kernel stamps on every change of content, mode or name. Anything else →
    None: write the whole tree."""
    previous = read_manifest(out)
    return previous if previous is not None and tree_matches(out, previous) else None


def read_manifest(out: Path) -> PreviousTree | None:
    """The manifest of a tree ``fabricgen render`` wrote at ``out`` that was not interrupted (no marker), not
    yet checked against the files (:func:`tree_matches` does that); None when there is no such tree (a `docs`
    tree is none: no render updates it in place, and plan takes no base from it)."""
    try:
        if out.is_symlink() or (out / INCOMPLETE).exists():
            return None
        status = (out / MANIFEST).stat()
        raw = (out / MANIFEST).read_bytes()
        # orjson: 2 MB at 32,768 GPUs in half json's time. It refuses what fabricgen never writes (text that is
        # not UTF-8, lone surrogates), and such a manifest then gets the whole road, as a refused one does.
        manifest = orjson.loads(raw)
    except (OSError, ValueError):
        return None
    if signed_files(manifest) is None or tree_kind(manifest) != RENDER:
        return None
    return PreviousTree(manifest, raw, _written_ns(status))


RENDER = "render"
"""the kind of tree ``fabricgen render`` writes; its manifests carry no ``kind`` (they predate the key)"""


def tree_kind(manifest: Mapping[str, Any]) -> str:
    """Which command wrote a fabricgen tree: its manifest's ``kind`` (``docs``), else ``render``."""
    return str(manifest.get("kind", RENDER))


_STAMP_SLACK_NS = 2 * 10**9
"""how much later than its mtime a manifest's ctime may be and still date the render (fabricgen sets its mode
or renames it right after writing it)"""


def _written_ns(status: os.stat_result) -> int:
    """When the render wrote the manifest: its mtime, if its ctime says nobody stamped it since. A manifest
    touched afterwards (``touch``, ``os.utime``: into the future, or long after its content) dates nothing, and
    then 0 is returned: every file counts as newer and is hashed."""
    settled = 0 <= status.st_ctime_ns - status.st_mtime_ns <= _STAMP_SLACK_NS
    return status.st_mtime_ns if settled else 0


def signed_files(manifest: object) -> set[str] | None:
    """The files a manifest lists if it is one fabricgen wrote: its format marker (``generator``: fabricgen,
    a ``version``, ``format``: :data:`MANIFEST_FORMAT`), a sha256 for each file, named by a plain relative
    path (no ``..``, nothing absolute: a forged manifest must not make fabricgen delete outside OUT), and the
    digest of that list (``files_digest``); None for anything else, a manifest of an older fabricgen
    included (its tree is refused, not replaced: move it away or render into a new directory)."""
    if not isinstance(manifest, dict) or manifest.get("generator") != "fabricgen" or \
            not isinstance(manifest.get("version"), str) or manifest.get("format") != MANIFEST_FORMAT or \
            not isinstance(manifest.get("files"), dict):
        return None
    files: dict[Any, Any] = manifest["files"]
    if not _plain_paths(list(files)) or not _sha256_hexes(list(files.values())):
        return None
    if manifest.get("files_digest") != files_digest(files):
        return None
    return set(files)


def _plain_paths(names: list[Any]) -> bool:
    """:func:`_plain_path` for every name, tested on the names joined: a few passes of C over one string
    instead of a Python loop over 20k names (the manifest at 32,768 GPUs, read at every incremental render:
    29 ms → under 5). Each name is printable (so holds no line break: joined by them, each is one line) and
    a part is empty, ``.`` or ``..`` exactly when the joined text, its slashes turned into line breaks, shows
    an empty, ``.`` or ``..`` line."""
    if not names:
        return True
    try:
        together = "".join(names)  # TypeError at any name that is not a str
    except TypeError:
        return False
    if not together.isprintable() or "\\" in together or MANIFEST in names:  # isprintable: no NUL either
        return False
    lines = "\n" + "\n".join(names).replace("/", "\n") + "\n"
    return all(part not in lines for part in _NOT_PLAIN_LINES)


_NOT_PLAIN_LINES = ("\n\n", "\n.\n", "\n..\n")


def _sha256_hexes(digests: list[Any]) -> bool:
    """Whether every one of ``digests`` is a sha256 in lower-case hex: 64 characters each, and none left once
    the hex digits are deleted from them all, joined (C passes, not a regex per digest)."""
    if not all(isinstance(digest, str) for digest in digests) or set(map(len, digests)) - {64}:
        return False
    try:
        joined = "".join(digests).encode("ascii")
    except UnicodeEncodeError:
        return False
    return not joined.translate(None, _HEX_DIGITS)


_HEX_DIGITS = b"0123456789abcdef"


def _plain_path(name: object) -> bool:
    """A relative path in its one spelling: no empty, ``.`` or ``..`` part (so nothing absolute, no ``//``, no
    trailing ``/``), no NUL, backslash or unprintable character, not the manifest itself. Plain string tests: a
    manifest lists 20k files at 32,768 GPUs, read at every incremental render."""
    if not isinstance(name, str) or not name or "\0" in name or "\\" in name or not name.isprintable() \
            or name == MANIFEST:
        return False
    return all(part not in _NOT_PLAIN_PARTS for part in name.split("/"))


_NOT_PLAIN_PARTS = frozenset({"", ".", ".."})


def check_owned(root: Path) -> None:
    """Raise :class:`OutputError` unless ``root`` is a tree fabricgen provably wrote: a manifest it signed
    (:func:`signed_files`) and nothing but the files listed there, their directories, the marker of an
    interrupted update and the files that update said it would write. Files at listed paths may have been
    edited: the render that replaces them restores them. Any other entry (someone's notes, a repository, a
    symlink in place of a directory) is not fabricgen's to delete."""
    try:
        listed = signed_files(json.loads((root / MANIFEST).read_bytes()))
    except (OSError, ValueError):
        listed = None
    if listed is None:
        raise OutputError(f"{root} is not empty and has no {MANIFEST} signed by this fabricgen (format "
                          f"{MANIFEST_FORMAT}, its file list's digest); refusing to replace it (choose a new or "
                          "empty directory; a tree an older fabricgen wrote: move it away first)")
    listed |= _pending_files(root)
    allowed = listed | {MANIFEST, INCOMPLETE} | {_staging_name(name) for name in listed | {MANIFEST}}
    folders = {str(parent) for name in listed for parent in PurePosixPath(name).parents} - {"."}
    stranger = _first_stranger(root, allowed, folders)
    if stranger is not None:
        raise OutputError(f"{root} holds {stranger!r}, which its {MANIFEST} does not list; refusing to replace "
                          "a tree that holds what fabricgen did not write (move it out, or choose another "
                          "directory)")


def _walk(root: Path, descend: Callable[[str], bool]) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Every entry under ``root`` with its path relative to it, entering the directories ``descend`` names
    (never following links)."""
    pending = [(os.fspath(root), "")]
    while pending:
        folder, prefix = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                name = prefix + entry.name
                yield name, entry
                if entry.is_dir(follow_symlinks=False) and descend(name):
                    pending.append((entry.path, f"{name}/"))


def _first_stranger(root: Path, files: set[str], folders: set[str]) -> str | None:
    """The first entry under ``root`` that is neither one of ``files`` nor one of ``folders`` (a directory
    entered without following links)."""
    for name, entry in _walk(root, folders.__contains__):
        if name not in (folders if entry.is_dir(follow_symlinks=False) else files):
            return name
    return None


def _pending_files(root: Path) -> set[str]:
    """The files an interrupted incremental update said (in its marker) it would write."""
    try:
        pending = json.loads((root / INCOMPLETE).read_bytes()).get("writes", [])
    except (OSError, ValueError, AttributeError):
        return set()
    return {name for name in pending if _plain_path(name)} if isinstance(pending, list) else set()


def _staging_name(name: str) -> str:
    folder, _, base = name.rpartition("/")
    return f"{folder}/.{base}{_STAGING_TMP}" if folder else f".{base}{_STAGING_TMP}"


def tree_matches(out: Path, previous: PreviousTree) -> bool:
    """Whether the files at ``out`` are what ``previous`` (its manifest) says: one stat per file, and the
    hash of each file whose mtime or ctime is later than the manifest's writing. Mostly system calls; the
    neighbourhood update runs it in a forked process beside its own work."""
    try:
        scan = _scan(out, previous.written_ns)
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
    """Relative paths of every file and directory under ``root``, and the files changed after ``limit_ns``
    (mtime or ctime: an mtime set back by hand does not hide an edit).
    One stat per file: 20,000 files take tens of milliseconds, reading them all would take seconds. None at
    the first entry that is neither a directory nor a regular file (a symlink, a FIFO), or a file whose mode
    is not the one fabricgen writes."""
    found = _Scan(set(), set(), [])
    for name, entry in _walk(root, lambda _: True):
        if entry.is_dir(follow_symlinks=False):
            found.folders.add(name)
            continue
        if not entry.is_file(follow_symlinks=False):
            return None
        status = entry.stat(follow_symlinks=False)
        if name != MANIFEST and stat.S_IMODE(status.st_mode) != _mode(name):
            return None
        found.files.add(name)
        if max(status.st_mtime_ns, status.st_ctime_ns) > limit_ns and name != MANIFEST:
            found.newer.append(name)
    return found


def _check_target(out: Path, kind: str) -> None:
    """Refuse to replace a directory fabricgen did not write (someone's home directory, a repo root), or one
    another fabricgen command wrote (a render's tree with docs, or the other way round)."""
    refuse_symlink(out)
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        check_owned(out)
        _check_kind(out, kind)


def _check_kind(out: Path, kind: str) -> None:
    written = tree_kind(json.loads((out / MANIFEST).read_bytes()))  # check_owned has read and checked it
    if written != kind:
        raise OutputError(f"{out} holds the tree `fabricgen {written}` wrote ({MANIFEST}: kind {written}); "
                          f"refusing to replace it with what `fabricgen {kind}` writes. Fix: write to another "
                          f"directory (-o DIR), or delete {out} first if that {written} tree is no longer needed")


def refuse_symlink(out: Path) -> None:
    """fabricgen never writes through a symlinked OUT: replacing the link would leave its target stale, and
    deleting the previous tree would empty the target."""
    if out.is_symlink():
        raise OutputError(f"{out} is a symbolic link (to {out.readlink()}); refusing to write through it "
                          "(pass the directory it points to, or a new one)")


def _write_files(root: Path, files: dict[str, str]) -> dict[str, str]:
    """Write ``files`` into the new tree at ``root``, making their folders; path → sha256 of each file's bytes.

    At 32,768 GPUs that is 20,000 files in 5,750 folders, so each system call counts: os-level calls, not
    pathlib's; each file opened relative to its folder (the kernel looks up one name, not the whole path);
    and a mode set by fchmod or chmod only where the umask took bits off it. The bytes written are the ones
    hashed: each file's text is encoded once."""
    umask = _umask()
    hashes: dict[str, str] = {}
    made: set[str] = set()
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
    current, folder_fd = None, -1
    try:
        for name, text in sorted(files.items()):
            folder, _, base = name.rpartition("/")
            if folder != current:
                if folder_fd >= 0:
                    os.close(folder_fd)
                    folder_fd = -1
                if folder not in made:
                    _make_new_folder(root, folder, umask)
                    made.add(folder)
                folder_fd = os.open(root / folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                current = folder
            mode = _mode(name)
            data = text.encode("utf-8")
            handle = os.open(base, flags, mode, dir_fd=folder_fd)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(handle, view):]
                if mode & umask:
                    os.fchmod(handle, mode)
            finally:
                os.close(handle)
            hashes[name] = hashlib.sha256(data).hexdigest()
    finally:
        if folder_fd >= 0:
            os.close(folder_fd)
    return hashes


def _umask() -> int:
    """The process's umask, read from /proc (os.umask can only set it, and a thread creating a file meanwhile
    would get the wrong mode); 0o777 where it cannot be read, so that every mode is set explicitly."""
    with contextlib.suppress(OSError, ValueError), Path("/proc/self/status").open(encoding="ascii") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o777


def _make_new_folder(root: Path, folder: str, umask: int) -> None:
    """``folder`` (relative to ``root``; "" is root itself) made 0755, in a tree being built: one mkdir for a
    folder whose parent exists, as every device's folder in a staging tree."""
    if not folder:
        return
    path = root / folder
    try:
        path.mkdir(_DIR_MODE)
    except (FileNotFoundError, FileExistsError):
        _make_folders(root, path)  # a nested folder, or one made already: the general road
        return
    if _DIR_MODE & umask:
        path.chmod(_DIR_MODE)


def _make_folders(root: Path, folder: Path) -> None:
    """``folder`` and its missing parents up to ``root``, 0755 whatever the umask."""
    missing = []
    while folder != root and not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir(exist_ok=True)
        path.chmod(_DIR_MODE)


def _finish_tree(root: Path, manifest: str) -> None:
    # The manifest last: an incremental render trusts a tree whose files are not newer than its manifest.
    (root / MANIFEST).write_text(manifest)
    (root / MANIFEST).chmod(0o644)
    # One flush of everything before the swap instead of an fsync per file: 20,000 fsyncs would take minutes,
    # and the tree only becomes visible (renamed into place) after this returns.
    os.sync()


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths; False when the platform cannot."""
    import ctypes.util  # only a whole tree's swap needs it: not at every start of render

    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(result == 0)


def _backup_of(out: Path) -> Path:
    return out.with_name(out.name + ".fabricgen-old")


def _recover_backup(out: Path) -> None:
    """A previous run of the two-rename fallback stopped between its renames (no OUT: put the backup back) or
    before deleting the backup. Only a backup that is provably a fabricgen tree is moved or deleted."""
    backup = _backup_of(out)
    if backup.is_symlink() or not backup.is_dir():
        return
    try:
        check_owned(backup)
    except OutputError:
        return  # someone else's: _swap_by_renames refuses to use the name
    if not out.exists() and not out.is_symlink():
        backup.rename(out)
    else:
        shutil.rmtree(backup)


def update_output(out: Path, changed: dict[str, str], removed: list[str], manifest: str) -> int:
    """Update a tree that :func:`read_previous` accepted: write ``changed`` files, delete ``removed`` ones,
    then the manifest. Each file is replaced atomically; the marker covers the window in between. Returns how
    many files were written, the manifest included (none when the tree is already up to date)."""
    if not changed and not removed and (out / MANIFEST).read_bytes() == manifest.encode():
        return 0
    from fabricgen.platforms.common import jsontext  # see build_manifest

    marker = out / INCOMPLETE
    touched: list[Path] = []
    with _unmarked_if_untouched(marker, touched):
        # The files about to be written, so that the tree stays provably fabricgen's (check_owned) if this stops.
        _write_durably(marker, jsontext.dumps({"generator": "fabricgen", "writes": sorted(changed),
                                               "message": "a fabricgen render was interrupted while updating "
                                                          "this tree; run it again"}, indent=2) + "\n")
        _fsync_dir(out)
        for name, text in sorted(changed.items()):
            touched.append(_replace_file(out, name, text))
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


@contextlib.contextmanager
def _unmarked_if_untouched(marker: Path, touched: list[Path]) -> Iterator[None]:
    """An update that fails (a full disk, a read-only file) before it replaced any file leaves the tree as it
    was: the marker goes too. Once a file is replaced, the marker stays and the next render rewrites the tree."""
    try:
        yield
    except OSError:
        if not touched:
            with contextlib.suppress(OSError):
                marker.unlink(missing_ok=True)
        raise


def _replace_file(root: Path, name: str, text: str) -> Path:
    path = root / name
    _make_folders(root, path.parent)
    staging = path.with_name(f".{path.name}.fabricgen-tmp")
    try:
        staging.write_bytes(text.encode("utf-8"))
        staging.chmod(_mode(name))
        staging.replace(path)
    except OSError:
        with contextlib.suppress(OSError):  # half a file (the disk filled up) must not stay beside the tree
            staging.unlink(missing_ok=True)
        raise
    return path


def _write_durably(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o644)
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
    """Replace ``out`` with exactly ``files`` + manifest, atomically; only a tree of the kind ``manifest``
    declares (:func:`tree_kind`)."""
    with _staged(out, kind=tree_kind(json.loads(manifest))) as staging:
        _write_files(staging, files)
        _finish_tree(staging, manifest)


Produce = Callable[[list[str]], dict[str, str]]


# The render workers' nice value above the parent's. A new tree's critical path is the parent: it loads, resolves
# chunk after chunk and lints, and each worker it forks renders a chunk already resolved. At equal priority up to 4 x
# jobs workers (as many as there were then) shared the cores with it, and at 32,768 GPUs on 2 cores the parent got
# about half a core: resolve + lint took 5.5-6.2 s of wall for 2.3 s of its CPU. Niced, the workers take what the
# parent leaves (the other cores, then all of them once the parent only waits): resolve + lint 2.3 s; the workers then
# end the render. The cost: on a machine busy with other work, the workers get less of it than that work does.
RENDER_WORKER_NICENESS = 10


@contextlib.contextmanager
def staged_render(out: Path, jobs: int) -> Iterator[StagedRender]:
    """Render into a staging tree beside ``out`` that replaces it in one atomic step when the block succeeds,
    and is removed (``out`` left as it was) when it fails."""
    with _staged(out, jobs) as staging, Workers[dict[str, str]](RENDER_WORKER_NICENESS) as workers:
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
        self._inline: list[tuple[Callable[[list[str]], dict[str, str]], list[str]]] = []

    def start(self, produce: Produce, names: list[str], then: Callable[[], None] | None = None) -> None:
        """Render and write ``names``; ``then``: more work for the same worker once they are written (work of
        the command's own that need not hold up the process that resolves, e.g. keeping the inventory)."""
        if self.forking:
            self._workers.start(partial(_produce_and_write, produce, self.staging, then=then, flush=True), names)
        else:
            self._inline.append((partial(_produce_and_write, produce, self.staging, then=then), names))

    def finish(self, manifest_for: Callable[[dict[str, str]], str],
               gate: Callable[[], None] | None = None) -> dict[str, str]:
        """Wait for every device, then write the manifest; path → sha256 of every file."""
        hashes: dict[str, str] = {}
        for part in self._workers.results(gate):
            hashes.update(part)
        for produce_and_write, names in self._inline:
            hashes.update(produce_and_write(names))
        _finish_tree(self.staging, manifest_for(hashes))
        return hashes


def _produce_and_write(produce: Produce, root: Path, names: list[str],
                       then: Callable[[], None] | None = None, flush: bool = False) -> dict[str, str]:
    """``flush``: flush what is written to disk before returning (a forked worker's files: os.sync, every file
    system's dirty data, as the parent's flush before the swap; Python has no syncfs). The tree must be on disk
    before it is swapped in; begun by each worker as it ends, the disk's work overlaps the render's, and the
    parent's flush before the swap waits for little (32,768 GPUs on ext4: 0.33 s before, 0.002-0.08 s after)."""
    hashes = _write_files(root, produce(names))
    if then is not None:
        then()
    if flush:
        os.sync()  # waits until written; a worker's flush waits for the disk, not for the cores
    return hashes


@contextlib.contextmanager
def _staged(out: Path, jobs: int = 1, kind: str = RENDER) -> Iterator[Path]:
    """A staging directory beside ``out``; when the block succeeds it replaces ``out`` (a tree of ``kind``,
    or none) in one atomic step, when it fails it is removed and ``out`` is left as it was."""
    import tempfile  # a whole tree's staging only: not at every start of render

    out = out.absolute()
    refuse_symlink(out)
    _recover_backup(out)
    _check_target(out, kind)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        _mark_staging(staging, out)
        yield staging
        (staging / STAGING_MARK).unlink()  # from here on the tree's own manifest proves it fabricgen's
        staging.chmod(_DIR_MODE)
        _publish(staging, out, jobs)
    finally:
        if staging.exists() and not staging.is_symlink():
            shutil.rmtree(staging, ignore_errors=True)


def _publish(staging: Path, out: Path, jobs: int) -> None:
    if not out.exists():
        staging.rename(out)
    elif _exchange(staging, out):
        _mark_staging(staging, out)  # now holds the previous tree: marked, a killed deletion is finished later
        _remove_tree(staging, jobs)
    else:
        _swap_by_renames(staging, out, jobs)


def _swap_by_renames(staging: Path, out: Path, jobs: int) -> None:
    backup = _backup_of(out)
    if backup.exists() or backup.is_symlink():
        raise OutputError(f"{backup} exists and is not a tree fabricgen left behind; refusing to move or delete "
                          "it (move it away, then render again)")
    out.rename(backup)
    staging.rename(out)
    _remove_tree(backup, jobs)


def _mark_staging(staging: Path, out: Path) -> None:
    (staging / STAGING_MARK).write_text(_staging_text(out))


def _staging_text(out: Path) -> str:
    return f"fabricgen staging tree of {out.name}\n"


_STAGING_NAME = re.compile(r"\.(?P<out>.+)\.[a-z0-9_]{8}\.tmp")  # tempfile.mkdtemp's names, as _staged asks


def remove_stale_staging(out: Path) -> list[Path]:
    """Staging trees a killed render of ``out`` left beside it: only those it can prove are its own (their
    mark names ``out``, or they are a whole fabricgen tree, or empty: killed before the mark). Call it only
    with :func:`output_lock` held, when no other render of ``out`` can be running. Returns what it removed."""
    removed = []
    for path in sorted(out.parent.glob(f".{glob_escape(out.name)}.*.tmp")):
        match = _STAGING_NAME.fullmatch(path.name)
        if match is None or match["out"] != out.name or path.is_symlink() or not path.is_dir():
            continue
        if _is_stale_staging(path, out):
            # What cannot be deleted (a read-only folder of the killed render's tree) stays: it must not stop
            # this render, which writes a staging tree of its own.
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _is_stale_staging(path: Path, out: Path) -> bool:
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if (path / STAGING_MARK).read_text() == _staging_text(out):
            return True
    if not any(path.iterdir()):
        return True
    try:
        check_owned(path)
    except OutputError:
        return False
    return True


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


@contextlib.contextmanager
def output_lock(out: Path) -> Iterator[None]:
    """Renders into one ``out`` one at a time: an exclusive ``flock`` on ``.<out>.fabricgen-lock`` beside it.
    Waits for a render in progress (the kernel releases the lock of a killed one). The holder deletes the lock
    file before it lets go, so nothing stays beside OUT; a waiter that then holds the lock of a deleted file
    sees so and locks the new one. Under the lock, the staging trees of killed renders are removed."""
    out = out.absolute()
    refuse_symlink(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    path = out.with_name(f".{out.name}.fabricgen-lock")
    fd = _lock_file(path)
    try:
        remove_stale_staging(out)
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        os.close(fd)


def _lock_file(path: Path) -> int:
    """An open descriptor of ``path``, locked, and still the file at ``path`` (not one a holder deleted)."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        with contextlib.suppress(FileNotFoundError):
            held, named = os.fstat(fd), path.lstat()
            if (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino):
                return fd
        os.close(fd)


def _remove_tree(path: Path, jobs: int) -> None:
    """Delete the previous tree, once the new one is in place. Unlinking 20,000 files is seconds of kernel time
    on ext4; ``jobs`` processes deleting different device directories take a quarter less (measured with 2).
    The render has succeeded by now, so a failure here (no fork, a file in use) only leaves work for rmtree."""
    entries = sorted(entry for entry in path.iterdir() if entry.name != STAGING_MARK)  # the mark goes last
    if worth_forking(jobs, len(entries)):
        with contextlib.suppress(OSError):
            fork_map(_remove_entries, interleaved(entries, jobs))
    with contextlib.suppress(OSError):
        _remove_entries([entry for entry in entries if entry.exists() or entry.is_symlink()])
    shutil.rmtree(path, ignore_errors=True)


def _remove_entries(paths: list[Path]) -> None:
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
