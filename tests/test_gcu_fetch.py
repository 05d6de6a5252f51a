"""`fabricgen validate --fetch-gcu`: SONiC's generic_config_updater and sonic_yang into the per-user cache, where
the lab's SONiC target finds them when there is no ``<vendor data>/sonic-gcu`` (a fresh clone).

Every test runs the installed ``fabricgen`` as a user would, with real git, against repositories made here that
stand in for sonic-utilities (branch 202411: GCU's two folders and folders GCU does not need) and
sonic-buildimage (master: ``src/sonic-yang-mgmt`` and a folder GCU does not need). No network.
"""

from __future__ import annotations

import importlib
import ipaddress
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_validate_models import git

import conftest
import lab

# The target module, as the lab loads it.
sonic_gcu = importlib.import_module("targets.sonic_gcu")

RELEASE = "202411"
FABRICGEN = Path(sys.executable).parent / "fabricgen"


def commit_files(repo: Path, branch: str, files: dict[str, str]) -> str:
    """A new repository at ``repo`` with one commit of ``files`` on ``branch``; the commit."""
    repo.mkdir(parents=True)
    git(repo, "init", "--quiet", f"--initial-branch={branch}")
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "fixture")
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def utilities(tmp_path: Path) -> Path:
    """sonic-utilities as far as GCU goes, plus what it must not bring along (the CLI, scripts, tests)."""
    commit_files(tmp_path / "sonic-utilities", RELEASE, {
        "generic_config_updater/__init__.py": "",
        "generic_config_updater/generic_updater.py": "class GenericUpdater: pass\n",
        "generic_config_updater/gcu_field_operation_validators.conf.json": "{}\n",
        "utilities_common/__init__.py": "",
        "utilities_common/constants.py": "DEFAULT_NAMESPACE = ''\n",
        "config/main.py": "# the config CLI: not GCU\n",
        "scripts/db_migrator.py": "# not GCU\n",
        "tests/test_x.py": "# not GCU\n",
    })
    return tmp_path / "sonic-utilities"


@pytest.fixture
def buildimage(tmp_path: Path) -> Path:
    commit_files(tmp_path / "sonic-buildimage", "master", {
        "src/sonic-yang-mgmt/sonic_yang.py": "class SonicYang: pass\n",
        "src/sonic-yang-mgmt/sonic_yang_ext.py": "# the extension\n",
        "src/sonic-yang-models/yang-models/sonic-port.yang": "module sonic-port {}\n",
        "platform/README": "# not GCU\n",
    })
    return tmp_path / "sonic-buildimage"


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def fetch(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``fabricgen validate --fetch-gcu RELEASE *args`` with its cache folder at ``cache``."""
    return subprocess.run([str(FABRICGEN), "validate", "--fetch-gcu", RELEASE, *args], capture_output=True,
                          text=True, check=False, timeout=300, env={**os.environ, "FABRICGEN_CACHE_DIR": str(cache)})


def test_fetch_lays_out_the_cache_as_shared_sonic_gcu_and_records_the_commits(
        utilities: Path, buildimage: Path, cache: Path) -> None:
    done = fetch(cache, "--repo", str(utilities), "--buildimage-repo", str(buildimage))
    assert done.returncode == 0, done.stderr
    root = cache / "sonic-gcu"
    assert sorted(path.name for path in root.iterdir() if not path.name.startswith(".")) == [
        "sonic-utilities-202411", "sonic-yang-mgmt-master"]
    entry = root / "sonic-utilities-202411"
    assert sorted(path.name for path in entry.iterdir()) == [
        "SOURCE", "generic_config_updater", "source.json", "utilities_common"]
    assert (entry / "generic_config_updater" / "generic_updater.py").read_text() == "class GenericUpdater: pass\n"
    utilities_commit = git(utilities, "rev-parse", "HEAD")
    assert (entry / "SOURCE").read_text() == (f"{utilities} branch 202411 commit {utilities_commit} "
                                              "(generic_config_updater/, utilities_common/)\n")
    yang_mgmt = root / "sonic-yang-mgmt-master"
    assert sorted(path.name for path in yang_mgmt.iterdir()) == [
        "SOURCE", "sonic_yang.py", "sonic_yang_ext.py", "source.json"]
    assert json.loads((yang_mgmt / "source.json").read_text())["commit"] == git(buildimage, "rev-parse", "HEAD")
    assert f"at commit {utilities_commit}\ninto {entry}" in done.stdout


def test_a_second_fetch_replaces_the_entry_whole(utilities: Path, buildimage: Path, cache: Path) -> None:
    assert fetch(cache, "--repo", str(utilities), "--buildimage-repo", str(buildimage)).returncode == 0
    entry = cache / "sonic-gcu" / "sonic-utilities-202411"
    (utilities / "generic_config_updater" / "generic_updater.py").unlink()
    (utilities / "generic_config_updater" / "patch_sorter.py").write_text("# new\n")
    git(utilities, "add", "-A")
    git(utilities, "commit", "--quiet", "-m", "second")
    done = fetch(cache, "--repo", str(utilities), "--buildimage-repo", str(buildimage))
    assert done.returncode == 0, done.stderr
    assert sorted(path.name for path in (entry / "generic_config_updater").iterdir()) == [
        "__init__.py", "gcu_field_operation_validators.conf.json", "patch_sorter.py"]
    assert git(utilities, "rev-parse", "HEAD") in (entry / "SOURCE").read_text()
    assert [path.name for path in (cache / "sonic-gcu").glob(".fetch-*")] == []  # no work folder left


def test_a_symbolic_link_out_of_the_checkout_is_refused_by_name(
        utilities: Path, buildimage: Path, cache: Path) -> None:
    (utilities / "utilities_common" / "secrets.py").symlink_to("/etc/passwd")
    git(utilities, "add", "-A")
    git(utilities, "commit", "--quiet", "-m", "a link out")
    done = fetch(cache, "--repo", str(utilities), "--buildimage-repo", str(buildimage))
    assert done.returncode == 2
    assert "utilities_common/secrets.py is a symbolic link to /etc/passwd, outside the repository" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (cache / "sonic-gcu" / "sonic-utilities-202411").exists()


@pytest.mark.parametrize("option", ["--repo", "--buildimage-repo"])
def test_an_ext_url_is_refused_before_git_runs(option: str, utilities: Path, buildimage: Path, cache: Path,
                                               tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    repositories = {"--repo": str(utilities), "--buildimage-repo": str(buildimage),
                    option: f"ext::sh -c touch% {ran}"}
    done = fetch(cache, *(item for pair in repositories.items() for item in pair))
    assert done.returncode == 2
    assert "ext:: URLs make git run a remote helper" in done.stderr
    assert not ran.exists()
    assert not (cache / "sonic-gcu" / "sonic-utilities-202411").exists()  # neither entry was fetched


def test_a_password_in_the_url_is_never_shown_or_stored(buildimage: Path, cache: Path) -> None:
    # An https repository nobody answers for (a port nothing listens on): git fails, and its message quotes the URL.
    done = fetch(cache, "--repo", "https://fetcher:s3cret-token@127.0.0.1:9/sonic-utilities.git",
                 "--buildimage-repo", str(buildimage))
    assert done.returncode == 2
    assert "127.0.0.1:9" in done.stderr
    assert "s3cret-token" not in done.stdout + done.stderr
    assert "fetcher" not in done.stdout + done.stderr
    stored = [path.read_text() for path in (cache / "sonic-gcu").rglob("*") if path.is_file()]
    assert not any("s3cret-token" in text for text in stored)


def test_the_source_stores_the_url_without_its_credentials(utilities: Path, buildimage: Path, cache: Path) -> None:
    done = fetch(cache, "--repo", f"file://user:s3cret@{utilities}", "--buildimage-repo", str(buildimage))
    assert done.returncode == 0, done.stderr
    entry = cache / "sonic-gcu" / "sonic-utilities-202411"
    assert (entry / "SOURCE").read_text().startswith(f"file://{utilities} branch 202411 commit ")
    assert "s3cret" not in (entry / "SOURCE").read_text() + (entry / "source.json").read_text() + done.stdout


def test_the_lab_uses_the_fetched_code_when_there_is_no_shared_folder(
        utilities: Path, buildimage: Path, cache: Path, tmp_path: Path) -> None:
    assert fetch(cache, "--repo", str(utilities), "--buildimage-repo", str(buildimage)).returncode == 0
    located = sonic_gcu.locate(shared=tmp_path / "no-shared", cache=cache)
    assert located.gcu_root == cache / "sonic-gcu"
    assert located.model_releases == cache / "sonic-yang"
    assert located.code(RELEASE) == sonic_gcu.GcuPaths(cache / "sonic-gcu" / "sonic-utilities-202411",
                                                       cache / "sonic-gcu" / "sonic-yang-mgmt-master")


def test_the_lab_prefers_the_shared_folder(cache: Path, tmp_path: Path) -> None:
    (tmp_path / "shared" / "sonic-gcu").mkdir(parents=True)
    located = sonic_gcu.locate(shared=tmp_path / "shared", cache=cache)
    assert located.gcu_root == tmp_path / "shared" / "sonic-gcu"
    assert located.model_releases == tmp_path / "shared" / "sonic-yang" / "releases"


def test_without_either_the_lab_names_both_fetch_commands(cache: Path, tmp_path: Path) -> None:
    located = sonic_gcu.locate(shared=tmp_path / "no-shared", cache=cache)
    reason = located.missing(RELEASE)
    assert reason is not None
    assert "`fabricgen validate --fetch-gcu 202411`" in reason
    assert "`fabricgen validate --fetch-models 202411`" in reason


def test_an_edited_cached_file_is_not_used(utilities: Path, buildimage: Path, cache: Path, tmp_path: Path) -> None:
    assert fetch(cache, "--repo", str(utilities), "--buildimage-repo", str(buildimage)).returncode == 0
    planted = cache / "sonic-gcu" / "sonic-utilities-202411" / "generic_config_updater" / "generic_updater.py"
    planted.write_text("import os; os.system('id')\n")
    reason = sonic_gcu.locate(shared=tmp_path / "no-shared", cache=cache).missing(RELEASE)
    assert reason is not None
    assert "differ from what was fetched" in reason


# --- tests/conftest.py: requires_shared("sonic-gcu") accepts the fetched code -----------------------------------

@pytest.fixture
def no_shared(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cache: Path) -> None:
    """A fresh clone (no vendor data) whose user's cache is ``cache``."""
    monkeypatch.setattr(conftest, "SHARED", tmp_path / "no-shared")
    monkeypatch.setenv(conftest.LAB_CACHE_VAR, str(cache))
    monkeypatch.delenv(conftest.REQUIRE_SHARED, raising=False)


@pytest.mark.usefixtures("no_shared")
def test_without_shared_or_cache_the_skip_reason_names_both_fetch_commands(cache: Path) -> None:
    with pytest.raises(pytest.skip.Exception) as skipped:
        conftest.require_shared("sonic-gcu")
    reason = str(skipped.value.msg)
    assert reason.startswith("needs SONiC's generic_config_updater, one copy per release: no ")
    assert reason.endswith(
        f"none fetched into {cache}/sonic-gcu and {cache}/sonic-yang/202411/models: "
        "`fabricgen validate --fetch-gcu 202411` and `fabricgen validate --fetch-models 202411` fetch them")


@pytest.mark.usefixtures("no_shared")
def test_with_gcu_and_models_fetched_the_shared_data_is_there(utilities: Path, buildimage: Path,
                                                              cache: Path) -> None:
    assert fetch(cache, "--repo", str(utilities), "--buildimage-repo", str(buildimage)).returncode == 0
    assert conftest.shared_absent("sonic-gcu") is not None  # the code alone: no models yet
    models = cache / "sonic-yang" / RELEASE / "models"
    models.mkdir(parents=True)
    (models / "sonic-port.yang").write_text("module sonic-port {}\n")
    assert conftest.shared_absent("sonic-gcu") is None


def test_a_repository_holding_its_own_source_file_is_refused_in_one_line(
        utilities: Path, buildimage: Path, cache: Path) -> None:
    (buildimage / "src" / "sonic-yang-mgmt" / "SOURCE").write_text("forged\n")
    git(buildimage, "add", "-A")
    git(buildimage, "commit", "--quiet", "-m", "a SOURCE of its own")
    done = fetch(cache, "--repo", str(utilities), "--buildimage-repo", str(buildimage))
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        f"error: {buildimage} master: SOURCE is in the fetched folders, where the fetch writes its own record; "
        "check the repository (--repo, --buildimage-repo)")
    assert not (cache / "sonic-gcu" / "sonic-yang-mgmt-master").exists()
    assert not (cache / "sonic-gcu" / "sonic-utilities-202411").exists()  # staged, never installed alone


def test_the_lab_passes_the_users_cache_folder_to_the_switch_targets() -> None:
    """One variable name for conftest (sets it), the lab (hands it to a target's SSH sessions) and the target."""
    assert conftest.LAB_CACHE_VAR == lab.LAB_CACHE_VAR == sonic_gcu.LAB_CACHE_VAR
    switch = lab.plan_hosts("t", ipaddress.IPv4Network("10.0.0.0/24"), 1, ["sonic"])["t-h1"]
    assert switch.session_env()[lab.LAB_CACHE_VAR] == os.environ[conftest.LAB_CACHE_VAR]


# --- usage: one line naming what and the fix ------------------------------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (["--buildimage-repo", "x"], "error: --buildimage-repo only goes with --fetch-gcu (--repo names "
                                 "sonic-buildimage for --fetch-models)"),
    (["--fetch-gcu", "--fetch-models"], "error: --fetch-gcu and --fetch-models each take their own --repo: run "
                                        "them one at a time"),
    (["--fetch-gcu", "202411", "out"], "error: --fetch-gcu only fills the cache; validate in a second run, "
                                       "without it"),
    (["--fetch-gcu", "2024-11"], "error: '2024-11' is not a SONiC release: name its branch, e.g. 202411 "
                                 "(or master)"),
])
def test_a_misused_option_is_one_line_naming_the_fix(args: list[str], message: str, tmp_path: Path,
                                                      cache: Path) -> None:
    (tmp_path / "out").mkdir()
    done = subprocess.run([str(FABRICGEN), "validate", *args], capture_output=True, text=True, check=False,
                          timeout=120, cwd=tmp_path, env={**os.environ, "FABRICGEN_CACHE_DIR": str(cache)})
    assert (done.returncode, done.stderr.strip()) == (2, message)
    assert not (cache / "sonic-gcu").exists()


def test_a_cached_file_others_can_write_is_not_used(utilities: Path, buildimage: Path, cache: Path,
                                                    tmp_path: Path) -> None:
    assert fetch(cache, "--repo", str(utilities), "--buildimage-repo", str(buildimage)).returncode == 0
    writable = cache / "sonic-gcu" / "sonic-yang-mgmt-master" / "sonic_yang.py"
    writable.chmod(0o666)
    reason = sonic_gcu.locate(shared=tmp_path / "no-shared", cache=cache).missing(RELEASE)
    assert reason is not None
    assert reason.startswith(f"warning: ignoring SONiC's GCU in {writable.parent}: {writable} is writable by ")
    assert reason.endswith("then `fabricgen validate --fetch-gcu 202411`")
