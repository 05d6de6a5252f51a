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
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from jinja2 import FileSystemLoader, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from fabricgen.resolve.headroom import DEFAULT_SONIC_RELEASE

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
TEMPLATES_PATH: Final = "src/sonic-yang-models/yang-templates"
SOURCE_FILE: Final = "source.json"
MODELS_FOLDER: Final = "models"

# Release branches are YYYYMM; master is the development branch. Anything else is a typo, caught before git.
_RELEASE: Final = re.compile(r"\d{6}|master")
# Only plain module file names are copied out of the checkout (no paths, no dot files).
_MODULE_FILE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]*\.yang")
_DB_VERSION: Final = re.compile(r"version_(\d{6})_\d+")
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
    """The folder holding one subfolder per release (not made here)."""
    base = os.environ.get("FABRICGEN_CACHE_DIR")
    folder = Path(base) if base else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fabricgen"
    return folder / "sonic-yang"


def release_dir(release: str) -> Path:
    return cache_root() / check_release(release)


def cached_models(release: str) -> CachedModels | None:
    """The cached models of ``release``; None when absent (a fetch that never completed leaves nothing)."""
    entry = release_dir(release)
    directory = models_in(entry / MODELS_FOLDER)
    try:
        source = json.loads((entry / SOURCE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if directory is None or not isinstance(source, dict):
        return None
    return CachedModels(release, directory, source)


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
# Fetching


def fetch_models(release: str, repository: str | None = None, timeout: float = GIT_TIMEOUT_S) -> FetchResult:
    """Fill the cache entry of ``release`` from sonic-buildimage (``repository``, else ``$FABRICGEN_SONIC_BUILDIMAGE``,
    else GitHub), replacing what was there. ModelsError when git fails; OSError when the cache cannot be written."""
    check_release(release)
    repository = repository or os.environ.get(ENV_REPOSITORY) or DEFAULT_REPOSITORY
    root = cache_root()
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    # The work folder is inside the cache root so that the final rename stays on one file system.
    with tempfile.TemporaryDirectory(prefix=f".fetch-{release}-", dir=root) as work:
        checkout = Path(work) / "checkout"
        commit, commit_date = _sparse_checkout(repository, release, checkout, timeout)
        staged = Path(work) / release
        modules = _stage_models(checkout, staged / MODELS_FOLDER, f"{repository} {release}")
        source = {"repository": repository, "ref": release, "commit": commit, "commit_date": commit_date,
                  "path": MODELS_PATH, "templates": TEMPLATES_PATH, "modules": modules}
        (staged / SOURCE_FILE).write_text(json.dumps(source, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        _install(staged, root / release, Path(work) / "previous")
    return FetchResult(release, repository, commit, root / release, modules)


def _sparse_checkout(repository: str, ref: str, checkout: Path, timeout: float) -> tuple[str, str]:
    """Check out only the models' two folders of ``ref``; (commit, commit date) checked out."""
    _git(["clone", "--quiet", "--depth", "1", "--filter=blob:none", "--no-checkout", "--single-branch",
          "--branch", ref, "--", repository, str(checkout)], timeout)
    _git(["-C", str(checkout), "sparse-checkout", "set", "--cone", MODELS_PATH, TEMPLATES_PATH], timeout)
    _git(["-C", str(checkout), "checkout", "--quiet"], timeout)
    commit = _git(["-C", str(checkout), "rev-parse", "HEAD"], timeout)
    commit_date = _git(["-C", str(checkout), "log", "-1", "--format=%cI"], timeout)
    return commit, commit_date


def _git(args: Sequence[str], timeout: float) -> str:
    """Run git, never waiting on a prompt or past ``timeout``; its stdout, stripped. ModelsError on failure."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "SSH_ASKPASS": "true",
           "LC_ALL": "C"}  # C: git's messages are quoted to the user as they are documented
    try:
        # Its own session: on a timeout the whole group (git and the transport helpers it started) is killed.
        process = subprocess.Popen(["git", *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    except FileNotFoundError as exc:
        raise ModelsError("fetching SONiC YANG models needs git (e.g. apt-get install git)") from exc
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise ModelsError(f"git {_verb(args)} did not finish within {timeout:g} s; nothing was changed") from None
    if process.returncode != 0:
        reason = next((line for line in reversed(err.splitlines()) if line.strip()), f"exit {process.returncode}")
        raise ModelsError(f"git {_verb(args)} failed: {reason.strip()}")
    return out.strip()


def _verb(args: Sequence[str]) -> str:
    return args[2] if args[:1] == ["-C"] and len(args) > 2 else args[0]


def _stage_models(checkout: Path, models: Path, where: str) -> int:
    """The release's modules, plain and rendered from templates, written into ``models``; how many."""
    plain = _module_files(checkout / MODELS_PATH, ".yang")
    templates = _module_files(checkout / TEMPLATES_PATH, ".yang.j2")
    if not plain:
        raise ModelsError(f"{where}: no *.yang files in {MODELS_PATH}; is this sonic-buildimage?")
    models.mkdir(parents=True)
    for source in plain:
        shutil.copyfile(source, models / source.name)
    for name, text in _rendered_templates(checkout / TEMPLATES_PATH, templates):
        (models / name).write_text(text, encoding="utf-8")
    return len({path.name for path in plain} | {path.name.removesuffix(".j2") for path in templates})


def _module_files(folder: Path, suffix: str) -> list[Path]:
    # Regular files only: a symbolic link in a fetched tree could point anywhere on this machine.
    if not folder.is_dir():
        return []
    return sorted(path for path in folder.iterdir()
                  if path.name.endswith(suffix) and _MODULE_FILE.fullmatch(path.name.removesuffix(".j2"))
                  and path.is_file() and not path.is_symlink())


def _rendered_templates(folder: Path, templates: Sequence[Path]) -> Iterator[tuple[str, str]]:
    """(module file name, text) of each template, as sonic-yang-models' setup.py renders it for yang-models/."""
    # Sandboxed: the templates come from whatever repository the user named; they need nothing but an if.
    environment = SandboxedEnvironment(loader=FileSystemLoader(str(folder)), trim_blocks=True)
    for template in templates:
        try:
            text = environment.get_template(template.name).render(yang_model_type="py")
        except TemplateError as exc:
            raise ModelsError(f"{TEMPLATES_PATH}/{template.name}: cannot render it: {exc}") from exc
        yield template.name.removesuffix(".j2"), text


def _install(staged: Path, destination: Path, aside: Path) -> None:
    """Put ``staged`` at ``destination``; an earlier entry is moved ``aside`` (removed with the work folder)."""
    if destination.exists():
        destination.rename(aside)
    try:
        staged.rename(destination)
    except OSError:
        if aside.exists() and not destination.exists():
            aside.rename(destination)  # the earlier entry stays usable when the new one cannot go in
        raise
