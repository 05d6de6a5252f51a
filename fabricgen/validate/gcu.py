"""Fetching SONiC's own generic_config_updater (GCU) into the per-user cache, for the lab's SONiC target.

The lab's SONiC switch (tests/targets/sonic_gcu.py) runs sonic-utilities' ``generic_config_updater`` of the
switch's release, with ``sonic_yang`` from sonic-buildimage ``src/sonic-yang-mgmt``. That is sonic-net's
Apache-2.0 code: it is never copied into the project, so a user fetches it as ``validate --fetch-models``
fetches the YANG models, with ``fabricgen validate --fetch-gcu RELEASE``. It lands in ``<cache>/sonic-gcu/``
(``<cache>`` as for the models: models.py ``cache_folder``), one folder per repository and ref:

- ``sonic-utilities-<release>/``: ``generic_config_updater/`` and ``utilities_common/`` of sonic-utilities at
  the release branch (only those two folders: GCU imports nothing else of the repository);
- ``sonic-yang-mgmt-master/``: the contents of ``src/sonic-yang-mgmt/`` of sonic-buildimage at master (the
  releases' own sonic_yang needs libyang-1 SWIG bindings no registry has; master's runs on libyang 2);
- in each, ``SOURCE`` (one line: repository URL without credentials, branch, commit, folders kept) and
  ``source.json`` (the same, plus a digest of every file, so that a planted or edited file is noticed).

Each entry is built in a work folder beside it (models.py's ``_work_folder``) and, once both are built and
checked, each is renamed into place (``_install``), so no reader sees a half-filled one, a refused or
interrupted fetch installs neither, and a second fetch replaces each whole. git runs under
gitfetch.py's limits (protocol allow-list, credentials through a helper, time limit, process-group kill), and a
symbolic link leading out of the checkout refuses the fetch, as for the models.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from fabricgen.load.parsecache import cache_folder
from fabricgen.validate.gitfetch import GitError, Remote, public_url, terminate_raises
from fabricgen.validate.models import (
    DEFAULT_REPOSITORY,
    ENV_REPOSITORY,
    GIT_TIMEOUT_S,
    ModelsError,
    _install,
    _json_object,
    _refuse_links,
    _sparse_checkout,
    _untrusted,
    _warn,
    _work_folder,
    _writable_cache_root,
    _write_new,
    check_release,
)

__all__ = [
    "DEFAULT_UTILITIES_REPOSITORY",
    "ENV_UTILITIES_REPOSITORY",
    "GcuCode",
    "GcuFetchResult",
    "cached_gcu",
    "fetch_gcu",
    "fetch_gcu_command",
    "gcu_cache_root",
]

DEFAULT_UTILITIES_REPOSITORY: Final = "https://github.com/sonic-net/sonic-utilities.git"
ENV_UTILITIES_REPOSITORY: Final = "FABRICGEN_SONIC_UTILITIES"  # a mirror of sonic-utilities to fetch from
GCU_FOLDERS: Final = ("generic_config_updater", "utilities_common")  # all GCU imports of sonic-utilities
YANG_MGMT_PATH: Final = "src/sonic-yang-mgmt"
YANG_MGMT_REF: Final = "master"  # module docstring: master's sonic_yang is the one that runs on libyang 2
SOURCE_TEXT: Final = "SOURCE"
SOURCE_JSON: Final = "source.json"


@dataclass(frozen=True)
class _Entry:
    """One cache entry: ``name`` under ``<cache>/sonic-gcu``, filled from ``paths`` of ``ref`` of ``remote``;
    ``copies`` maps a folder of the checkout to where it goes in the entry ("" is the entry itself)."""

    name: str
    remote: Remote
    shown: str  # the repository without credentials
    ref: str
    paths: tuple[str, ...]
    copies: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class GcuFetchResult:
    release: str
    entries: tuple[tuple[Path, str, str], ...]  # (entry folder, repository, commit), sonic-utilities first


@dataclass(frozen=True)
class GcuCode:
    """Where the lab imports GCU of one release from: sonic-utilities' entry and sonic-yang-mgmt's."""

    utilities: Path
    yang_mgmt: Path


def gcu_cache_root(cache: Path | None = None) -> Path:
    """``<cache>/sonic-gcu`` (``cache``: fabricgen's cache folder unless named)."""
    return (cache or cache_folder()) / "sonic-gcu"


def fetch_gcu_command(release: str) -> str:
    return f"fabricgen validate --fetch-gcu {release}"


def utilities_name(release: str) -> str:
    return f"sonic-utilities-{check_release(release)}"


def yang_mgmt_name() -> str:
    return f"sonic-yang-mgmt-{YANG_MGMT_REF}"


# ------------------------------------------------------------------------------------------------
# Fetching


def fetch_gcu(release: str, repository: str | None = None, buildimage: str | None = None,
              timeout: float = GIT_TIMEOUT_S) -> GcuFetchResult:
    """Fill ``<cache>/sonic-gcu`` with GCU of ``release`` (sonic-utilities: ``repository``, else
    ``$FABRICGEN_SONIC_UTILITIES``, else GitHub's) and sonic_yang (sonic-buildimage: ``buildimage``, else
    ``$FABRICGEN_SONIC_BUILDIMAGE``, else GitHub's). ModelsError when a URL is refused (both are checked before
    git runs), git fails or the checkout is refused; OSError when the cache cannot be written."""
    entries = _entries(check_release(release),
                       repository or os.environ.get(ENV_UTILITIES_REPOSITORY) or DEFAULT_UTILITIES_REPOSITORY,
                       buildimage or os.environ.get(ENV_REPOSITORY) or DEFAULT_REPOSITORY)
    root = _writable_cache_root(gcu_cache_root(), "SONiC GCU")
    try:
        # Both entries are staged before either is installed: a refused or interrupted fetch changes nothing.
        with terminate_raises(), contextlib.ExitStack() as works:
            staged = [(entry, works.enter_context(_work_folder(root, entry.name))) for entry in entries]
            done = tuple(_stage_entry(work, entry, timeout) for entry, work in staged)
            for entry, work in staged:
                _install(work / entry.name, root / entry.name, work / "previous")
    except GitError as exc:
        raise ModelsError(str(exc)) from None
    return GcuFetchResult(release, tuple((root / entry.name, entry.shown, commit)
                                         for entry, commit in zip(entries, done, strict=True)))


def _entries(release: str, utilities: str, buildimage: str) -> tuple[_Entry, _Entry]:
    """The two entries to fetch; ModelsError for a URL gitfetch refuses (an ``ext::`` URL, http://)."""
    try:
        remotes = Remote.of(utilities), Remote.of(buildimage)
    except GitError as exc:
        raise ModelsError(str(exc)) from None
    return (_Entry(utilities_name(release), remotes[0], public_url(utilities), release, GCU_FOLDERS,
                   tuple((folder, folder) for folder in GCU_FOLDERS)),
            _Entry(yang_mgmt_name(), remotes[1], public_url(buildimage), YANG_MGMT_REF, (YANG_MGMT_PATH,),
                   ((YANG_MGMT_PATH, ""),)))


def _stage_entry(work: Path, entry: _Entry, timeout: float) -> str:
    """Check out and check one entry, and stage it as ``work/<name>``; the commit it came from."""
    checkout = work / "checkout"
    commit, _ = _sparse_checkout(entry.remote, entry.ref, checkout, timeout, entry.paths)
    where = f"{entry.shown} {entry.ref}"
    _refuse_links(checkout, entry.paths, where)
    staged = work / entry.name
    staged.mkdir(mode=0o755)  # modes set here, not left to the umask: a group-writable entry is not trusted
    for source, destination in entry.copies:
        _copy_folder(checkout, source, staged / destination, where)
    _write_sources(staged, entry, commit)
    return commit


def _copy_folder(checkout: Path, folder: str, destination: Path, where: str) -> None:
    """Copy ``folder`` of the checkout to ``destination``: folders and regular files only (links out of the
    checkout were refused before; one inside it is copied as the file it names)."""
    source = checkout / folder
    if not source.is_dir() or source.is_symlink():
        raise ModelsError(f"{where}: no {folder}/ folder; is this the right repository (--repo, --buildimage-repo)?")
    destination.mkdir(mode=0o755, exist_ok=True)
    for parent, directories, files in os.walk(source):  # never follows a link
        here = destination / Path(parent).relative_to(source)
        for name in sorted(directories):
            (here / name).mkdir(mode=0o755)
        for name in sorted(files):
            path = Path(parent) / name
            if path.is_file():  # follows a link inside the checkout; a dangling one is left out
                _write_new(here / name, path.read_bytes())


def _write_sources(staged: Path, entry: _Entry, commit: str) -> None:
    """SOURCE (one line: repository, branch, commit; for people) and source.json with the digest (for trust)."""
    for name in (SOURCE_TEXT, SOURCE_JSON):
        if (staged / name).exists():  # sonic-net's folders have neither; a mirror that does is not theirs
            raise ModelsError(f"{entry.shown} {entry.ref}: {name} is in the fetched folders, where the fetch writes "
                              "its own record; check the repository (--repo, --buildimage-repo)")
    folders = ", ".join(f"{path}/" for path in entry.paths)
    _write_new(staged / SOURCE_TEXT, f"{entry.shown} branch {entry.ref} commit {commit} ({folders})\n".encode())
    source = {"repository": entry.shown, "ref": entry.ref, "commit": commit, "paths": list(entry.paths),
              "digest": entry_digest(staged)}
    _write_new(staged / SOURCE_JSON, (json.dumps(source, indent=2, sort_keys=True) + "\n").encode())


# ------------------------------------------------------------------------------------------------
# Trusting the cache: models.py's rules (every folder and file the user's alone), and the digest


def entry_digest(entry: Path) -> str:
    """sha256 over every file of ``entry`` but source.json: one ``path NUL sha256(content) LF`` per file, in path
    order, so that a file added, removed, renamed or edited changes it."""
    digest = hashlib.sha256()
    for path in sorted(_files(entry)):
        name = path.relative_to(entry).as_posix()
        if name != SOURCE_JSON:
            digest.update(name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).hexdigest().encode() + b"\n")
    return digest.hexdigest()


def _files(entry: Path) -> list[Path]:
    return [Path(parent) / name for parent, _, names in os.walk(entry) for name in names]


def _entry_problem(entry: Path) -> str | None:
    """Why the cache ``entry`` must not be used, or None: absent, a path in it (or above it up to the cache
    folder) not the user's alone, or files other than those source.json's digest records."""
    source = _json_object(entry / SOURCE_JSON)
    if source is None:
        return f"{entry} is absent or was not filled by --fetch-gcu (no {SOURCE_JSON})"
    base = entry.parent.parent
    why = _untrusted(base, follow=True)
    if why is not None:
        return f"{base} is {why}"
    for parent, directories, files in os.walk(entry):
        for path in [Path(parent), *(Path(parent) / name for name in [*directories, *files])]:
            if (why := _untrusted(path)) is not None:  # a link too: a fetch never makes one
                return f"{path} is {why}"
    if source.get("digest") != entry_digest(entry):
        return f"the files of {entry} differ from what was fetched ({SOURCE_JSON}'s digest)"
    return None


def cached_gcu(release: str, cache: Path | None = None,
               warn: Callable[[str], None] | None = None) -> GcuCode | None:
    """GCU of ``release`` in the cache (``cache``: fabricgen's cache folder unless named); None when an entry
    is absent, and None with a warning (``warn``, default stderr) naming the path and the fix when one cannot
    be trusted."""
    root = gcu_cache_root(cache)
    code = GcuCode(root / utilities_name(release), root / yang_mgmt_name())
    for entry in (code.utilities, code.yang_mgmt):
        if not (entry / SOURCE_JSON).exists():
            return None
        problem = _entry_problem(entry)
        if problem is not None:
            (warn or _warn)(f"warning: ignoring SONiC's GCU in {entry}: {problem}. Fix: make every folder and "
                            f"file of {root.parent} yours and writable by you only, then "
                            f"`{fetch_gcu_command(release)}`")
            return None
    return code


def describe(result: GcuFetchResult) -> list[str]:
    """What ``validate --fetch-gcu`` prints: one line per entry."""
    return [f"fetched {path.name} from {repository} at commit {commit}\ninto {path}"
            for path, repository, commit in result.entries]
