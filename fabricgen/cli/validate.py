"""fabricgen validate: rendered SONiC config_db.json files against SONiC's own YANG models."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from fabricgen.cli.common import DEFAULT_OUT, EXIT_INVALID, EXIT_OUTPUT, fail
from fabricgen.resolve.headroom import DEFAULT_SONIC_RELEASE


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path, exists=True))
@click.option("--sonic-release", metavar="RELEASE", default=None,
              help="check every file against this SONiC release's models from the cache (default: each file's "
                   f"own release, else {DEFAULT_SONIC_RELEASE})")
@click.option("--models", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="a directory of SONiC *.yang models, for every file (default: $FABRICGEN_SONIC_YANG, else "
                   "the per-release cache)")
@click.option("--fetch-models", "fetch_release", metavar="[RELEASE]", is_flag=False, flag_value="", default=None,
              help="fill the cache with a release's models from sonic-buildimage (default: --sonic-release, else "
                   f"{DEFAULT_SONIC_RELEASE}), print the commit and where they went, and exit")
@click.option("--fetch-gcu", "fetch_gcu_release", metavar="[RELEASE]", is_flag=False, flag_value="",
              default=None,
              help="for the lab's SONiC target (tests/targets/sonic_gcu.py): fill the cache's sonic-gcu/ with "
                   "SONiC's generic_config_updater of a release (default as --fetch-models) and sonic_yang, "
                   "keeping only generic_config_updater/ and utilities_common/ of sonic-utilities and "
                   "src/sonic-yang-mgmt/ of sonic-buildimage master (sparse checkouts), print the commits and exit")
@click.option("--repo", metavar="URL", default=None,
              help="the repository to fetch from: with --fetch-models sonic-buildimage (default: "
                   "$FABRICGEN_SONIC_BUILDIMAGE, else GitHub's), with --fetch-gcu sonic-utilities (default: "
                   "$FABRICGEN_SONIC_UTILITIES, else GitHub's)")
@click.option("--buildimage-repo", metavar="URL", default=None,
              help="with --fetch-gcu: the sonic-buildimage repository whose src/sonic-yang-mgmt is fetched "
                   "(default: $FABRICGEN_SONIC_BUILDIMAGE, else GitHub's)")
def validate(paths: tuple[Path, ...], sonic_release: str | None, models: Path | None, fetch_release: str | None,
             fetch_gcu_release: str | None, repo: str | None, buildimage_repo: str | None) -> None:
    """Validate rendered SONiC config_db.json files against SONiC's YANG models of their release.

    PATHS are files or output directories (default: out/). A file's release: --sonic-release, else the
    VERSIONS|DATABASE version of a config saved on a switch, else the inventory's sonic_release as the
    resolved.json beside it records, else the release the SONiC platform targets. Each release's models come
    from the per-user cache (~/.cache/fabricgen/sonic-yang/RELEASE/), which --fetch-models fills; --models DIR
    or $FABRICGEN_SONIC_YANG name one directory instead (sites without access to GitHub).

    \b
    Examples:
      fabricgen validate --fetch-models          # once: the 202411 models into the cache
      fabricgen validate                         # out/, each file against its release's models
      fabricgen validate --sonic-release 202505 out/leaf1/config_db.json
      fabricgen validate --models ./sonic-yang-models out/
      fabricgen validate --fetch-gcu 202411      # the lab's SONiC target: SONiC's own GCU code

    --fetch-gcu fills ~/.cache/fabricgen/sonic-gcu/ with sonic-utilities' generic_config_updater
    (sonic-net/sonic-utilities, the release branch) and sonic_yang (sonic-net/sonic-buildimage
    src/sonic-yang-mgmt) for the test lab's SONiC switch; fabricgen itself never runs that code.

    Needs the `yang` extra: pip install 'fabricgen[yang]' (and Debian's libyang2-dev); --fetch-models and
    --fetch-gcu need git. Exit status: 0 all valid, 1 some file invalid, 2 usage error or models missing or
    not fetched, 3 the cache could not be written.
    """
    from fabricgen.validate.models import ModelsError

    try:
        if fetch_gcu_release is not None:
            _fetch_gcu(_fetch_gcu_release(fetch_gcu_release, fetch_release, sonic_release), repo,
                       buildimage_repo, paths)
            return
        if buildimage_repo is not None:
            raise ModelsError("--buildimage-repo only goes with --fetch-gcu (--repo names sonic-buildimage for "
                              "--fetch-models)")
        if fetch_release is not None:
            _fetch_models(_fetch_release(fetch_release, sonic_release), repo, paths)
            return
        if repo is not None:
            raise ModelsError("--repo only goes with --fetch-models or --fetch-gcu")
        groups = _validation_groups(paths, models, sonic_release)
    except ModelsError as exc:
        fail(str(exc))
    bad = sum(_validate_group(*group) for group in groups)
    sys.exit(EXIT_INVALID if bad else 0)


def _fetch_release(fetch_release: str, sonic_release: str | None) -> str:
    """validate --fetch-models [RELEASE]: the release to fetch."""
    from fabricgen.validate.models import ModelsError, check_release

    if fetch_release and sonic_release and fetch_release != sonic_release:
        raise ModelsError(f"--fetch-models {fetch_release} and --sonic-release {sonic_release}: name one release")
    return check_release(fetch_release or sonic_release or DEFAULT_SONIC_RELEASE)


def _fetch_gcu_release(fetch_gcu_release: str, fetch_release: str | None, sonic_release: str | None) -> str:
    """validate --fetch-gcu [RELEASE]: the release to fetch; ModelsError with --fetch-models (two repositories
    would share one --repo)."""
    from fabricgen.validate.models import ModelsError

    if fetch_release is not None:
        raise ModelsError("--fetch-gcu and --fetch-models each take their own --repo: run them one at a time")
    return _fetch_release(fetch_gcu_release, sonic_release)


def _fetch_gcu(release: str, repo: str | None, buildimage_repo: str | None, paths: tuple[Path, ...]) -> None:
    """validate --fetch-gcu: fill the cache's sonic-gcu/ for ``release``; nothing is validated."""
    from fabricgen.validate.gcu import describe, fetch_gcu, gcu_cache_root
    from fabricgen.validate.models import ModelsError

    if paths:
        raise ModelsError("--fetch-gcu only fills the cache; validate in a second run, without it")
    click.echo(f"fetching SONiC's {release} generic_config_updater and sonic_yang ...", err=True)
    try:
        result = fetch_gcu(release, repo, buildimage_repo)
    except OSError as exc:
        fail(f"cannot write the SONiC GCU cache {gcu_cache_root()}: {exc}", EXIT_OUTPUT)
    click.echo("\n".join(describe(result)))


def _fetch_models(release: str, repo: str | None, paths: tuple[Path, ...]) -> None:
    """validate --fetch-models: fill the cache entry of ``release``; nothing is validated."""
    from fabricgen.validate.models import ModelsError, cache_root, fetch_models

    if paths:
        raise ModelsError("--fetch-models only fills the cache; validate in a second run, without it")
    click.echo(f"fetching the SONiC {release} YANG models ...", err=True)
    try:
        result = fetch_models(release, repo)
    except OSError as exc:
        fail(f"cannot write the models cache {cache_root()}: {exc}", EXIT_OUTPUT)
    click.echo(f"fetched {result.modules} SONiC {result.release} YANG models from {result.repository} "
               f"at commit {result.commit}\ninto {result.destination}")


def _validation_groups(paths: tuple[Path, ...], models: Path | None,
                       sonic_release: str | None) -> list[tuple[str, Path, list[Path]]]:
    """(what the models are, their directory, the files checked against them), one per models directory."""
    from fabricgen.validate.models import ENV_MODELS, ModelsError, explicit_models_dir

    searched = paths or (DEFAULT_OUT,)
    targets = sorted({f for p in searched for f in _config_dbs(p)})
    explicit = explicit_models_dir(models)
    if explicit is not None and sonic_release is not None:
        named = "--models" if models is not None else f"${ENV_MODELS}"
        raise ModelsError(f"--sonic-release takes models from the cache, {named} names a directory: use one")
    if not targets:
        raise ModelsError("no config_db.json found in " + ", ".join(str(p) for p in searched))
    if explicit is not None:
        return [(str(explicit), explicit, targets)]
    return _cached_groups(targets, sonic_release)


def _cached_groups(targets: list[Path], sonic_release: str | None) -> list[tuple[str, Path, list[Path]]]:
    """The files by release, each with its release's cached models; ModelsError naming every missing release."""
    from fabricgen.validate.models import ModelsError, cached_models, check_release, missing_models_message, release_of

    by_release: dict[str, list[Path]] = {}
    for target in targets:
        release = check_release(sonic_release) if sonic_release else release_of(target)
        by_release.setdefault(release, []).append(target)
    found = {release: cached_models(release) for release in sorted(by_release)}
    missing = [missing_models_message(release) for release, cached in found.items() if cached is None]
    if missing:
        raise ModelsError("; ".join(missing))
    return [(cached.describe(), cached.directory, by_release[release])
            for release, cached in found.items() if cached is not None]


def _validate_group(label: str, models_dir: Path, targets: list[Path]) -> int:
    """Print every issue of ``targets`` and a summary line; how many files are invalid."""
    from fabricgen.platforms.sonic.render import BASELINE
    from fabricgen.validate.sonic_yang import SonicYangValidator, validate_file

    try:
        validator = SonicYangValidator(models_dir)
    except RuntimeError as exc:  # libyang missing (YangUnavailable), or a model in the directory it cannot load
        fail(str(exc))
    bad = 0
    for target in targets:
        issues = validate_file(target, validator, BASELINE)
        bad += bool(issues)
        for issue in issues:
            click.echo(f"{target}: {issue.path}: {issue.message}")
    click.echo(f"{len(targets) - bad} of {len(targets)} config_db.json valid against {label}")
    return bad


def _config_dbs(path: Path) -> list[Path]:
    return [path] if path.is_file() else sorted(path.rglob("config_db.json"))
