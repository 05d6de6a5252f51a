"""`fabricgen validate`: SONiC YANG models per release, from a per-user cache that `--fetch-models` fills.

Fetching runs real git against a repository made here that stands in for sonic-buildimage (no network):
branch 202411, a couple of modules at src/sonic-yang-models/yang-models and a template in yang-templates
written the way sonic-buildimage writes its four (``{% if yang_model_type == "cvl" %}``).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricgen.cli import main
from fabricgen.validate.models import (
    ModelsError,
    cache_root,
    cached_models,
    check_release,
    fetch_models,
    models_digest,
    release_of,
)

from conftest import ROOT

MODELS = "src/sonic-yang-models/yang-models"
TEMPLATES = "src/sonic-yang-models/yang-templates"
PORT_MODULE = 'module sonic-port {\n  namespace "http://github.com/sonic-net/sonic-port";\n  prefix port;\n}\n'
TYPES_TEMPLATE = """module sonic-types {
    namespace "http://github.com/sonic-net/sonic-types";
    prefix stypes;
    {% if yang_model_type == "cvl" %}
    typedef cvl-only { type string; }
    {% else %}
    typedef py-only { type string; }
    {% endif %}
}
"""
# What sonic-yang-models' setup.py writes for it (trim_blocks; Jinja drops the file's final newline).
TYPES_RENDERED = """module sonic-types {
    namespace "http://github.com/sonic-net/sonic-types";
    prefix stypes;
        typedef py-only { type string; }
    }"""


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.name=test", "-c", "user.email=test@example.com",
                           *args], check=True, capture_output=True, text=True, timeout=60)
    return done.stdout.strip()


def commit_files(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def buildimage(tmp_path: Path) -> Path:
    """A git repository laid out as sonic-buildimage, on its release branch 202411, plus files that a sparse
    checkout of the models must not need."""
    repo = tmp_path / "sonic-buildimage"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch", "202411")
    commit_files(repo, {f"{MODELS}/sonic-port.yang": PORT_MODULE,
                        f"{TEMPLATES}/sonic-types.yang.j2": TYPES_TEMPLATE,
                        "src/sonic-yang-models/setup.py": "# renders the templates\n",
                        "platform/broadcom/README": "not a model\n"}, "202411 models")
    return repo


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache of this test's own; nothing from the user's environment picks models."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("FABRICGEN_CACHE_DIR", str(folder))
    for name in ("FABRICGEN_SONIC_YANG", "FABRICGEN_SONIC_BUILDIMAGE"):
        monkeypatch.delenv(name, raising=False)
    return folder / "sonic-yang"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["validate", *args])
    return result.exit_code, result.output


# --- cache layout -----------------------------------------------------------------------------------------

def test_cache_folder_follows_fabricgen_then_xdg_then_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FABRICGEN_CACHE_DIR", str(tmp_path / "fg"))
    assert cache_root() == tmp_path / "fg" / "sonic-yang"
    monkeypatch.delenv("FABRICGEN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "fabricgen" / "sonic-yang"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "fabricgen" / "sonic-yang"


def test_fetch_fills_one_folder_per_release_with_models_and_their_source(buildimage: Path, cache: Path) -> None:
    head = git(buildimage, "rev-parse", "HEAD")
    code, output = invoke("--fetch-models", "--repo", str(buildimage))
    assert code == 0, output
    assert head in output and str(cache / "202411") in output  # what it fetched, and where it put it
    assert sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*")) == [
        "202411", "202411/models", "202411/models/sonic-port.yang", "202411/models/sonic-types.yang",
        "202411/source.json"]
    assert (cache / "202411/models/sonic-port.yang").read_text(encoding="utf-8") == PORT_MODULE
    assert (cache / "202411/models/sonic-types.yang").read_text(encoding="utf-8") == TYPES_RENDERED
    source = json.loads((cache / "202411/source.json").read_text(encoding="utf-8"))
    assert source["repository"] == str(buildimage) and source["ref"] == "202411" and source["commit"] == head
    assert source["path"] == MODELS and source["modules"] == 2
    assert source["models_digest"] == models_digest(cache / "202411" / "models")  # verified on every use
    found = cached_models("202411")
    assert found is not None and found.directory == cache / "202411" / "models" and head[:12] in found.describe()


def test_fetched_models_are_trusted_whatever_the_umask(buildimage: Path, cache: Path) -> None:
    # With umask 002 (Debian's user private groups) files would be group-writable, which the cache's owner
    # and permission check refuses: fetch sets its modes itself.
    previous = os.umask(0o002)
    try:
        fetch_models("202411", str(buildimage))
    finally:
        os.umask(previous)
    modes = {p.relative_to(cache).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in cache.rglob("*")}
    assert modes == {"202411": 0o755, "202411/models": 0o755, "202411/models/sonic-port.yang": 0o644,
                     "202411/models/sonic-types.yang": 0o644, "202411/source.json": 0o644}
    assert stat.S_IMODE(cache.stat().st_mode) == stat.S_IMODE(cache.parent.stat().st_mode) == 0o700
    assert cached_models("202411", warn=pytest.fail) is not None


def test_fetch_takes_a_tag_too_and_the_repository_from_the_environment(
        buildimage: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git(buildimage, "tag", "202505")
    monkeypatch.setenv("FABRICGEN_SONIC_BUILDIMAGE", buildimage.as_uri())  # file://: git's own transport
    result = fetch_models("202505")
    assert result.destination == cache / "202505" and result.modules == 2
    assert result.commit == git(buildimage, "rev-parse", "202505^{commit}")


def test_fetching_again_replaces_the_release_whole(buildimage: Path, cache: Path) -> None:
    fetch_models("202411", str(buildimage))
    git(buildimage, "rm", "--quiet", f"{MODELS}/sonic-port.yang")
    newer = commit_files(buildimage, {f"{MODELS}/sonic-queue.yang": PORT_MODULE.replace("port", "queue")}, "next")
    assert fetch_models("202411", str(buildimage)).commit == newer
    assert sorted(p.name for p in (cache / "202411/models").iterdir()) == ["sonic-queue.yang", "sonic-types.yang"]
    assert sorted(p.name for p in cache.iterdir()) == ["202411"]  # no work folder, no earlier entry left behind


def test_a_failed_fetch_changes_nothing(buildimage: Path, cache: Path) -> None:
    fetch_models("202411", str(buildimage))
    before = (cache / "202411/source.json").read_text(encoding="utf-8")
    code, output = invoke("--fetch-models", "202511", "--repo", str(buildimage))
    assert code == 2 and "git clone failed" in output and "202511" in output
    code, output = invoke("--fetch-models", "202411", "--repo", str(buildimage / "nowhere"))
    assert code == 2 and "git clone failed" in output
    assert (cache / "202411/source.json").read_text(encoding="utf-8") == before
    assert sorted(p.name for p in cache.iterdir()) == ["202411"]


def test_a_repository_without_models_is_refused(tmp_path: Path, cache: Path) -> None:
    repo = tmp_path / "other"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch", "202411")
    commit_files(repo, {"README": "not sonic-buildimage\n"}, "init")
    with pytest.raises(ModelsError, match=r"no \*\.yang files in src/sonic-yang-models/yang-models"):
        fetch_models("202411", str(repo))
    assert not (cache / "202411").exists()


def test_git_is_stopped_at_its_time_limit(
        tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A git that hangs as one on a stalled network would, in a helper process of its own (as git-remote-https
    # is), whose pid it leaves: the helper must end with it.
    stub = tmp_path / "bin" / "git"
    stub.parent.mkdir()
    # "finished" appears only if git is let run to its end (30 s): stopped at its limit, it never does.
    stub.write_text(f"#!/bin/sh\nsleep 30 &\necho $! > {tmp_path}/helper.pid\nwait\ntouch {tmp_path}/finished\n",
                    encoding="utf-8")
    stub.chmod(0o755)
    monkeypatch.setenv("PATH", f"{stub.parent}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(ModelsError, match=r"git clone did not finish within 0\.5 s; nothing was changed"):
        fetch_models("202411", "https://example.invalid/sonic-buildimage.git", timeout=0.5)
    assert not (tmp_path / "finished").exists(), "fabricgen waited for git to end by itself"
    assert _ends_within(int((tmp_path / "helper.pid").read_text(encoding="utf-8")), seconds=5)
    assert sorted(cache.iterdir()) == []  # the work folder went with it


def _ends_within(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` is gone within ``seconds`` (an orphan stays a zombie until init reaps it)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


# --- release selection ------------------------------------------------------------------------------------

def test_release_names_are_checked_before_git_runs() -> None:
    assert check_release("202411") == "202411" and check_release("master") == "master"
    for typo in ("2024", "202411 ", "../202411", "v202411"):
        with pytest.raises(ModelsError, match="is not a SONiC release"):
            check_release(typo)
    code, output = invoke("--fetch-models", "24.11")
    assert code == 2 and "'24.11' is not a SONiC release" in output


def test_a_files_release_comes_from_the_switch_then_the_render_then_the_default(tmp_path: Path) -> None:
    saved = tmp_path / "pulled" / "config_db.json"
    saved.parent.mkdir()
    saved.write_text(json.dumps({"VERSIONS": {"DATABASE": {"VERSION": "version_202505_01"}}}), encoding="utf-8")
    assert release_of(saved) == "202505"  # db_migrator's schema version of a config saved on a switch
    rendered = tmp_path / "leaf1" / "config_db.json"
    rendered.parent.mkdir()
    shutil.copy(ROOT / "golden/fabric/leaf1/config_db.json", rendered)
    assert release_of(rendered) == "202411"  # no resolved.json: the release the SONiC platform targets
    resolved = json.loads((ROOT / "golden/fabric/leaf1/resolved.json").read_text(encoding="utf-8"))
    for port in resolved["ports"]:
        if port.get("headroom"):
            port["headroom"]["release"] = "202311"  # as inventory sonic_release: "202311" resolves
    (rendered.parent / "resolved.json").write_text(json.dumps(resolved), encoding="utf-8")
    assert release_of(rendered) == "202311"


def test_missing_models_name_the_command_that_fetches_them(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, output = invoke("golden/fabric")
    assert code == 2
    assert "no SONiC 202411 YANG models" in output and "`fabricgen validate --fetch-models 202411`" in output
    code, output = invoke("--sonic-release", "202505", "golden/fabric")
    assert code == 2 and "`fabricgen validate --fetch-models 202505`" in output


def test_each_file_needs_its_own_releases_models(
        buildimage: Path, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    fetch_models("202411", str(buildimage))
    pulled = tmp_path / "pulled" / "config_db.json"
    pulled.parent.mkdir()
    pulled.write_text(json.dumps({"VERSIONS": {"DATABASE": {"VERSION": "version_202505_01"}}}), encoding="utf-8")
    code, output = invoke("golden/fabric", str(pulled))
    assert code == 2 and "`fabricgen validate --fetch-models 202505`" in output and "202411" not in output


def test_usage_errors_exit_2(buildimage: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert invoke("--models", str(empty), "golden/fabric")[0] == 2  # a directory without *.yang
    monkeypatch.setenv("FABRICGEN_SONIC_YANG", str(empty))
    code, output = invoke("golden/fabric")
    assert code == 2 and "FABRICGEN_SONIC_YANG" in output  # never a silent fall-back to the cache
    (empty / "sonic-port.yang").write_text(PORT_MODULE, encoding="utf-8")
    code, output = invoke("--sonic-release", "202411", "golden/fabric")
    assert code == 2 and "use one" in output
    assert invoke("--repo", str(buildimage), "golden/fabric")[0] == 2  # --repo without --fetch-models
    assert invoke("--fetch-models", "202411", "golden/fabric")[0] == 2  # fetch validates nothing
    code, output = invoke("--fetch-models", "202505", "--sonic-release", "202411")
    assert code == 2 and "name one release" in output


# --- end to end with libyang: the command the message names, then validation ------------------------------

def _libyang_or_skip() -> None:
    required = os.environ.get("FABRICGEN_REQUIRE_YANG") == "1"  # CI: a skip here would be a silent pass
    try:
        import libyang  # noqa: F401
    except (ImportError, OSError) as exc:
        missing = f"needs libyang: pip install 'fabricgen[yang]' and apt-get install libyang2-dev ({exc})"
        if required:
            pytest.fail(f"FABRICGEN_REQUIRE_YANG=1 but it {missing}")
        pytest.skip(reason=missing)


def test_fetched_models_validate_the_golden_configs(  # <vendor data>/sonic-yang: tests/conftest.py requires_shared
        tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, sonic_yang_models: Path) -> None:
    _libyang_or_skip()
    repo = tmp_path / "sonic-buildimage"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch", "202411")
    (repo / MODELS).mkdir(parents=True)
    for module in sonic_yang_models.glob("*.yang"):  # the shared copy (master) stands in for the 202411 branch
        shutil.copy(module, repo / MODELS / module.name)
    commit_files(repo, {}, "models")
    monkeypatch.setenv("FABRICGEN_SONIC_BUILDIMAGE", str(repo))
    monkeypatch.chdir(ROOT)
    code, output = invoke("golden/fabric")
    assert code == 2
    command = output.split("`")[1]  # the one command the message names
    assert command == "fabricgen validate --fetch-models 202411"
    code, output = invoke(*command.split()[2:])
    assert code == 0, output
    code, output = invoke("golden/fabric")
    assert code == 0, output
    assert "2 of 2 config_db.json valid against SONiC 202411 YANG models" in output
