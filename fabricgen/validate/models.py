"""Where ``fabricgen validate`` finds SONiC's YANG models, one set per SONiC release, and how it fetches them.

SONiC's models change from release to release (129 modules in 202411, more on later branches), and a switch
checks a config against the models of the image it runs, so each config_db.json is checked against its own
release's models. Where they come from, first match wins:

1. ``--models DIR`` or ``$FABRICGEN_SONIC_YANG``: one directory of ``*.yang`` files for every config, for sites
   without access to GitHub (any release; the directory is the user's choice and is never second-guessed);
2. the per-user cache, ``<cache>/sonic-yang/<release>/models/``, filled by ``fabricgen validate --fetch-models
   <release>``. ``<cache>`` is ``$FABRICGEN_CACHE_DIR``, else ``$XDG_CACHE_HOME/fabricgen``, else
   ``~/.cache/fabricgen`` (as for the parse cache); ``<release>/source.json`` records the repository, the ref
   and the commit the models came from.

The release of a config is, unless ``--sonic-release`` names one: the ``VERSIONS|DATABASE`` schema version a
config_db.json saved on a switch carries (sonic-utilities' db_migrator writes ``version_202411_02`` at every
boot), else the release fabricgen sized its headroom for (inventory ``sonic_release``, recorded in the
``resolved.json`` beside a rendered config_db.json), else the release the SONiC platform targets (202411).

Fetching takes ``src/sonic-yang-models/yang-models`` and ``yang-templates`` of sonic-buildimage at the release's
branch (sonic-buildimage names its release branches ``202411``, ``202505``, ...; a tag works too) with a shallow,
blob-less git clone and a cone sparse checkout, so only those two folders' files are downloaded. The four
``yang-templates/*.yang.j2`` (sonic-types, sonic-acl, sonic-extension, sonic-policer: nearly every model imports
sonic-types) are rendered as sonic-yang-models' setup.py renders them for the Python tools (Jinja2,
``trim_blocks``, ``yang_model_type="py"``). The set is built beside the cache entry and renamed into place, so
no reader ever sees a half-filled one.

Trust (issue 27). The repository is hostile until checked: git speaks only the protocols fabricgen allows, a
URL's credentials are never shown, stored or put on a command line (validate/gitfetch.py); a symbolic link
leading out of the checkout refuses the fetch; templates render from the fetched folder only, within a time,
size and memory limit (validate/templates.py). The cache is trusted as the parse cache is (parsecache.py's
``untrusted_reason``, for every folder and file from the cache folder down) and only while its models are what
``source.json``'s ``models_digest`` records; otherwise :func:`cached_models` warns, naming the path and the fix,
and ignores the entry.
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
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Final

from fabricgen.load.parsecache import cache_folder, private_folder, untrusted_reason
from fabricgen.resolve.headroom import DEFAULT_SONIC_RELEASE
from fabricgen.validate.gitfetch import GitError, Remote, public_url, run_git, terminate_raises
from fabricgen.validate.templates import MAX_MODEL_BYTES, TEMPLATES_PATH, TemplateRefused, read_inside, render_templates

__all__ = [
    "DEFAULT_REPOSITORY",
    "ENV_MODELS",
    "ENV_REPOSITORY",
    "CachedModels",
    "FetchResult",
    "ModelsError",
    "cache_root",
    "cached_models",
    "check_release",
    "explicit_models_dir",
    "fetch_command",
    "fetch_models",
    "missing_models_message",
    "models_in",
    "release_dir",
    "release_of",
]

DEFAULT_REPOSITORY: Final = "https://github.com/sonic-net/sonic-buildimage.git"
ENV_MODELS: Final = "FABRICGEN_SONIC_YANG"  # a models directory, for air-gapped sites
ENV_REPOSITORY: Final = "FABRICGEN_SONIC_BUILDIMAGE"  # a mirror of sonic-buildimage to fetch from
MODELS_PATH: Final = "src/sonic-yang-models/yang-models"
SOURCE_FILE: Final = "source.json"
MODELS_FOLDER: Final = "models"

# Release branches are YYYYMM; master is the development branch. Anything else is a typo, caught before git.
_RELEASE: Final = re.compile(r"\d{6}|master")
# Only plain module file names are copied out of the checkout (no paths, no dot files).
_MODULE_FILE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]*\.yang")
_DB_VERSION: Final = re.compile(r"version_(\d{6})_\d+")
_WORK_PREFIX: Final = ".fetch-"
_WORK_LOCK: Final = ".lock"
_UNLOCKED_AFTER_S: Final = 600.0  # a work folder without its lock file is taken for a starting fetch's until then
# Each git call may take this long: the clone downloads sonic-buildimage's trees (a few MB), the checkout the
# two folders' files. A stalled network must end in a message, not a hang.
GIT_TIMEOUT_S: Final = 300.0


class ModelsError(Exception):
    """The models cannot be had: a bad release name, a failed fetch, no models where the user pointed."""


@dataclass(frozen=True)
class CachedModels:
    """One release's models in the cache and where they came from."""

    release: str
    directory: Path  # the *.yang files
    source: Mapping[str, Any]  # source.json: repository, ref, commit, commit_date, modules

    def describe(self) -> str:
        commit = str(self.source.get("commit", "?"))[:12]
        return f"SONiC {self.release} YANG models (sonic-buildimage {commit}, {self.directory})"


@dataclass(frozen=True)
class FetchResult:
    release: str
    repository: str
    commit: str
    destination: Path  # the release's cache entry
    modules: int


# ------------------------------------------------------------------------------------------------
# Releases and where their models are


def check_release(release: str) -> str:
    """``release`` when it names a sonic-buildimage release branch (or master), else ModelsError."""
    if not _RELEASE.fullmatch(release):
        raise ModelsError(f"{release!r} is not a SONiC release: name its branch, e.g. {DEFAULT_SONIC_RELEASE} "
                          "(or master)")
    return release


def fetch_command(release: str) -> str:
    return f"fabricgen validate --fetch-models {release}"


def missing_models_message(release: str) -> str:
    return (f"no SONiC {release} YANG models in {release_dir(release)}; fetch them with `{fetch_command(release)}` "
            f"(or, without access to GitHub, pass --models DIR or set {ENV_MODELS}: see the README)")


def cache_root() -> Path:
    """The folder holding one subfolder per release (not made here), in fabricgen's cache folder."""
    return cache_folder() / "sonic-yang"


def release_dir(release: str) -> Path:
    return cache_root() / check_release(release)


def cached_models(release: str, warn: Callable[[str], None] | None = None) -> CachedModels | None:
    """The cached models of ``release``; None when absent (a fetch that never completed leaves nothing), and
    None with a warning (``warn``, default stderr) naming the path and the fix when they cannot be trusted: a
    folder or file on the way that is another user's or writable by others, or models that are not the ones
    source.json's digest records (planted, edited)."""
    entry = release_dir(release)
    directory = entry / MODELS_FOLDER
    if not (entry / SOURCE_FILE).exists() or models_in(directory) != directory:
        return None
    problem = _entry_problem(release, entry)
    if problem is not None:
        (warn or _warn)(problem)
        return None
    return CachedModels(release, directory, _json_object(entry / SOURCE_FILE) or {})


def models_in(path: Path) -> Path | None:
    """``path`` or its ``models`` subfolder, whichever holds ``*.yang`` files (people point at either)."""
    for candidate in (path, path / MODELS_FOLDER):
        if candidate.is_dir() and any(candidate.glob("*.yang")):
            return candidate
    return None


def explicit_models_dir(option: Path | None) -> Path | None:
    """The directory the user named (``--models``, else ``$FABRICGEN_SONIC_YANG``); None when neither is set.

    A named directory without ``*.yang`` files is a ModelsError, never a silent fall-back to the cache."""
    named, how = (option, "--models") if option is not None else (os.environ.get(ENV_MODELS), ENV_MODELS)
    if not named:
        return None
    found = models_in(Path(named))
    if found is None:
        raise ModelsError(f"{how} {named}: no SONiC YANG models (*.yang) there or in its models/ folder")
    return found


def release_of(config_db: Path) -> str:
    """The SONiC release a config_db.json is for (module docstring: VERSIONS, resolved.json, default)."""
    return _saved_release(config_db) or _rendered_release(config_db) or DEFAULT_SONIC_RELEASE


def _saved_release(config_db: Path) -> str | None:
    data = _json_object(config_db)
    versions = data.get("VERSIONS") if data else None
    database = versions.get("DATABASE") if isinstance(versions, dict) else None
    version = database.get("VERSION") if isinstance(database, dict) else None
    match = _DB_VERSION.fullmatch(version) if isinstance(version, str) else None
    return match.group(1) if match else None


def _rendered_release(config_db: Path) -> str | None:
    """The one release the ports' headroom of resolved.json names (fabricgen's render of this device)."""
    resolved = _json_object(config_db.parent / "resolved.json")
    ports = resolved.get("ports") if resolved else None
    headrooms = [port.get("headroom") for port in ports if isinstance(port, dict)] if isinstance(ports, list) else []
    releases = {h.get("release") for h in headrooms if isinstance(h, dict) and isinstance(h.get("release"), str)}
    return releases.pop() if len(releases) == 1 else None


def _json_object(path: Path) -> dict[str, Any] | None:
    # Unreadable or broken JSON decides nothing here; validate_file reports a broken config_db.json itself.
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# ------------------------------------------------------------------------------------------------
# Trusting the cache: the parse cache's rules (fabricgen/load/parsecache.py), and a digest of the models


def models_digest(directory: Path) -> str:
    """sha256 over the models of ``directory``: one ``name NUL sha256(content) LF`` per ``*.yang``, in name
    order, so that a model added, removed, renamed or edited changes it."""
    digest = hashlib.sha256()
    for path in sorted(directory.glob("*.yang")):
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).hexdigest().encode() + b"\n")
    return digest.hexdigest()


def _untrusted(path: Path, follow: bool = False) -> str | None:
    """Why ``path`` must not be trusted (:func:`untrusted_reason`; a symbolic link below the cache folder, which
    fabricgen never makes, is not trusted either); None when it may be, or does not exist."""
    try:
        status = path.stat() if follow else path.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    if stat.S_ISLNK(status.st_mode):
        return "a symbolic link"
    return untrusted_reason(status)


def _untrusted_path(entry: Path) -> tuple[Path, str] | None:
    """The first path from fabricgen's cache folder down to each file of the release ``entry`` that is not the
    user's alone to change, and why; None when all are."""
    base = entry.parent.parent
    paths = [entry.parent, entry, entry / SOURCE_FILE, entry / MODELS_FOLDER]
    models = entry / MODELS_FOLDER
    if models.is_dir() and not models.is_symlink():
        paths += sorted(models.iterdir())
    reason = _untrusted(base, follow=True)  # the cache folder itself may be a link (~/.cache on another disk)
    if reason is not None:
        return base, reason
    return next(((path, why) for path in paths if (why := _untrusted(path)) is not None), None)


def _untrusted_warning(release: str, found: tuple[Path, str]) -> str:
    path, reason = found
    return (f"warning: ignoring the SONiC {release} YANG models in {release_dir(release)}: {path} is {reason}, "
            "so someone else could have planted or changed them. Fix: make every folder and file from "
            f"{cache_root().parent} down yours and writable by you only (chown, chmod go-w), then "
            f"`{fetch_command(release)}`; or fetch into a cache of your own "
            f"(FABRICGEN_CACHE_DIR=DIR {fetch_command(release)})")


def _digest_warning(release: str, source: Mapping[str, Any], directory: Path) -> str | None:
    """A warning when the models of ``directory`` are not those ``source`` (source.json) recorded."""
    recorded = source.get("models_digest")
    if recorded == models_digest(directory):
        return None
    why = (f"{SOURCE_FILE} records no digest of them (fetched by an older fabricgen)" if recorded is None else
           f"they differ from what was fetched ({SOURCE_FILE}'s models_digest: a model was added, removed or "
           "edited since)")
    return (f"warning: ignoring the SONiC {release} YANG models in {directory}: {why}. Fix: fetch them again "
            f"with `{fetch_command(release)}`")


def _entry_problem(release: str, entry: Path) -> str | None:
    """Why the cache ``entry`` of ``release`` must be ignored (a warning naming the path and the fix), or None."""
    untrusted = _untrusted_path(entry)
    if untrusted is not None:
        return _untrusted_warning(release, untrusted)
    return _digest_warning(release, _json_object(entry / SOURCE_FILE) or {}, entry / MODELS_FOLDER)


def _warn(message: str) -> None:
    print(message, file=sys.stderr)


def _writable_cache_root(root: Path | None = None, what: str = "models") -> Path:
    """The cache folder ``root`` (default: the models'), made private when absent; ModelsError when it, or
    fabricgen's cache folder above it, is not the user's alone (a fetch would put ``what`` where others could
    change it). validate/gcu.py fills its own folder under the same rules."""
    root = root or cache_root()
    for folder, follow in ((root.parent, True), (root, False)):
        reason = _untrusted(folder, follow)
        if reason is not None:
            raise ModelsError(f"the {what} cache {folder} is {reason}; refusing to fetch into it (others could "
                              f"change the {what}). Fix: make it yours and writable by you only (chown, chmod "
                              "go-w), or point FABRICGEN_CACHE_DIR at a folder of your own")
    if not private_folder(root.parent):  # parsecache: made 0700 when only readable by others
        raise ModelsError(f"the {what} cache {root.parent} is not a folder of yours; point FABRICGEN_CACHE_DIR "
                          "at a folder of your own")
    root.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    root.mkdir(mode=0o700, exist_ok=True)
    return root


# ------------------------------------------------------------------------------------------------
# Fetching


def fetch_models(release: str, repository: str | None = None, timeout: float = GIT_TIMEOUT_S) -> FetchResult:
    """Fill the cache entry of ``release`` from sonic-buildimage (``repository``, else ``$FABRICGEN_SONIC_BUILDIMAGE``,
    else GitHub), replacing what was there. ModelsError when git fails or the fetched tree is refused (a link
    out of it, a template that reaches outside it or never ends, a file over the size limit); OSError when
    the cache cannot be written. Nothing is left behind on failure, timeout, Ctrl-C or SIGTERM."""
    check_release(release)
    repository = repository or os.environ.get(ENV_REPOSITORY) or DEFAULT_REPOSITORY
    shown = public_url(repository)  # never the credentials a URL may carry
    try:
        remote = Remote.of(repository)
        root = _writable_cache_root()
        # SIGTERM unwinds like Ctrl-C: git's group is killed, then the work folder removed (exits in that order).
        with terminate_raises(), _work_folder(root, release) as work:
            commit, modules = _fetch_into(work, remote, release, timeout, shown)
            _install(work / release, root / release, work / "previous")
    except (GitError, TemplateRefused) as exc:
        raise ModelsError(str(exc)) from None
    return FetchResult(release, shown, commit, root / release, modules)


@contextlib.contextmanager
def _work_folder(root: Path, release: str) -> Iterator[Path]:
    """A work folder in the cache root (the final rename stays on one file system), locked while this fetch
    runs and removed when it ends. Work folders that fetches killed outright (SIGKILL, a power cut) left behind
    are removed first: nobody holds their lock."""
    _remove_abandoned(root)
    work = Path(tempfile.mkdtemp(prefix=f"{_WORK_PREFIX}{release}-", dir=root))
    lock = os.open(work / _WORK_LOCK, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)
        os.close(lock)


def _remove_abandoned(root: Path) -> None:
    for folder in root.glob(f"{_WORK_PREFIX}*"):
        if folder.is_dir() and not folder.is_symlink() and _abandoned(folder):
            shutil.rmtree(folder, ignore_errors=True)


def _abandoned(folder: Path) -> bool:
    """Whether no running fetch holds the lock of the work ``folder``."""
    try:
        lock = os.open(folder / _WORK_LOCK, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:  # killed before locking it, or a fetch that is starting: only an old one is
        return time.time() - folder.lstat().st_mtime > _UNLOCKED_AFTER_S
    except OSError:
        return False
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(lock)
    return True


def _fetch_into(work: Path, remote: Remote, release: str, timeout: float, shown: str) -> tuple[str, int]:
    """Check out, check and stage the release's models under ``work``; the commit they came from, how many."""
    checkout = work / "checkout"
    commit, commit_date = _sparse_checkout(remote, release, checkout, timeout)
    where = f"{shown} {release}"
    _refuse_links(checkout, (MODELS_PATH, TEMPLATES_PATH), where)
    staged = work / release
    modules = _stage_models(checkout, staged / MODELS_FOLDER, where)
    source = {"repository": shown, "ref": release, "commit": commit, "commit_date": commit_date,
              "path": MODELS_PATH, "templates": TEMPLATES_PATH, "modules": modules,
              "models_digest": models_digest(staged / MODELS_FOLDER)}
    _write_new(staged / SOURCE_FILE, (json.dumps(source, indent=2, sort_keys=True) + "\n").encode())
    return commit, modules


def _sparse_checkout(remote: Remote, ref: str, checkout: Path, timeout: float,
                     paths: Sequence[str] = (MODELS_PATH, TEMPLATES_PATH)) -> tuple[str, str]:
    """Check out only the folders ``paths`` of ``ref`` (default: the models' two); (commit, commit date)."""
    def git(*args: str) -> str:
        return run_git(args, remote, timeout)

    # --no-local: a local repository is read through git's transport too, never by copying its object folder
    # (which could hold links to files outside it).
    git("clone", "--quiet", "--no-local", "--depth", "1", "--filter=blob:none", "--no-checkout", "--single-branch",
        "--branch", ref, "--", remote.url, str(checkout))
    git("-C", str(checkout), "sparse-checkout", "set", "--cone", *paths)
    git("-C", str(checkout), "checkout", "--quiet")
    return git("-C", str(checkout), "rev-parse", "HEAD"), git("-C", str(checkout), "log", "-1", "--format=%cI")


def _refuse_links(checkout: Path, folders: Sequence[str], where: str) -> None:
    """GitError naming the first symbolic link on the way to ``folders`` or inside them that leads out of
    ``checkout`` (a ``yang-models`` that is a link, a template linked to /proc/self/environ)."""
    inside = checkout.resolve()
    for folder in folders:
        path = checkout
        for part in PurePosixPath(folder).parts:
            path = path / part
            _refuse_link(path, checkout, inside, where)
        if path.is_dir() and not path.is_symlink():
            for parent, directories, files in os.walk(path):  # never follows a link
                for name in sorted([*directories, *files]):
                    _refuse_link(Path(parent) / name, checkout, inside, where)


def _refuse_link(path: Path, checkout: Path, inside: Path, where: str) -> None:
    if not path.is_symlink():
        return
    target = path.readlink()
    if not (path.parent / target).resolve().is_relative_to(inside):
        raise GitError(f"{where}: {path.relative_to(checkout).as_posix()} is a symbolic link to {target}, outside "
                       "the repository; refusing to fetch from it (sonic-buildimage has no such link: check the "
                       "mirror)")


def _stage_models(checkout: Path, models: Path, where: str) -> int:
    """The release's modules, plain and rendered from templates, written into ``models``; how many."""
    plain = _module_files(checkout / MODELS_PATH, ".yang")
    templates = _module_files(checkout / TEMPLATES_PATH, ".yang.j2")
    if not plain:
        raise ModelsError(f"{where}: no *.yang files in {MODELS_PATH}; is this sonic-buildimage?")
    # Modes set here, not left to the umask: a group-writable entry (umask 002) would not be trusted on use.
    models.parent.mkdir(mode=0o755)
    models.mkdir(mode=0o755)
    limit = MAX_MODEL_BYTES.value()
    for source in plain:
        _write_new(models / source.name, read_inside(source.parent, source.name, limit, f"{where} {MODELS_PATH}"))
    render_templates(checkout / TEMPLATES_PATH, [path.name for path in templates], models)
    return len({path.name for path in plain} | {path.name.removesuffix(".j2") for path in templates})


def _write_new(path: Path, data: bytes) -> None:
    """A new file, 0644 whatever the umask (which only takes bits away)."""
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644), "wb") as handle:
        handle.write(data)


def _module_files(folder: Path, suffix: str) -> list[Path]:
    # Regular files only: a symbolic link in a fetched tree could point anywhere on this machine.
    if not folder.is_dir() or folder.is_symlink():
        return []
    return sorted(path for path in folder.iterdir()
                  if path.name.endswith(suffix) and _MODULE_FILE.fullmatch(path.name.removesuffix(".j2"))
                  and path.is_file() and not path.is_symlink())


def _install(staged: Path, destination: Path, aside: Path) -> None:
    """Put ``staged`` at ``destination``; an earlier entry is moved ``aside`` (removed with the work folder)."""
    if destination.exists() or destination.is_symlink():
        destination.rename(aside)
    try:
        staged.rename(destination)
    except OSError:
        if (aside.exists() or aside.is_symlink()) and not destination.exists():
            aside.rename(destination)  # the earlier entry stays usable when the new one cannot go in
        raise
