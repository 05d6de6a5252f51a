"""Tests that read the vendor-data folder (FABRICGEN_VENDOR_DATA, absent from a fresh clone) say so through one
mechanism, tests/conftest.py's ``requires_shared`` marker: they skip with the reason on a fresh clone and fail
under FABRICGEN_REQUIRE_SHARED=1 (.ci/run). The README names every one of them; this file keeps that list true.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import conftest
from conftest import REQUIRE_SHARED, ROOT, SHARED_DATA, SHARED_FIXTURES, require_shared

# README.md's list: one `- `tests/test_x.py::test_name`` line per test, under this heading.
README_HEADING = "### Tests that read the vendor-data folder"
LISTED = re.compile(r"^- `(tests/test_\w+\.py::\w+)`", re.MULTILINE)


def readme_list() -> list[str]:
    text = (ROOT / "README.md").read_text()
    assert README_HEADING in text, f"README.md has no {README_HEADING!r} section"
    section = text.split(README_HEADING, 1)[1].split("\n#", 1)[0]
    return LISTED.findall(section)


def marked_tests() -> list[str]:
    """Every test pytest marks requires_shared, by file::function (parametrized cases once): collected, not
    guessed. Only the files that use the marker or a shared fixture can hold one, so only those are collected."""
    words = ("requires_shared", *SHARED_FIXTURES)
    files = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "tests").glob("test_*.py")
                   if any(word in path.read_text() for word in words))
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-m", "requires_shared", *files], cwd=ROOT, capture_output=True, text=True,
                          check=False, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    ids = [line.split("[", 1)[0] for line in done.stdout.splitlines() if line.startswith("tests/")]
    return sorted(set(ids))


def test_the_readme_names_every_test_that_reads_shared_data() -> None:
    marked, listed = marked_tests(), readme_list()
    assert listed == sorted(listed), "keep README.md's list sorted"
    assert {"missing from README.md": sorted(set(marked) - set(listed)),
            "listed but not marked": sorted(set(listed) - set(marked))} == {
        "missing from README.md": [], "listed but not marked": []}
    # the two fabric deploy tests, whose SONiC target refuses every patch without the models
    assert "tests/test_deploy_fabric.py::test_a_switch_refusing_its_change_halts_the_push_in_its_wave" in marked


@pytest.fixture
def nothing_beside(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The checkout as a fresh clone has it: no vendor data, and nothing fetched into the cache (conftest's
    LAB_CACHE_VAR names the user's, where `fabricgen validate --fetch-gcu` may have put SONiC's GCU)."""
    monkeypatch.setattr(conftest, "SHARED", tmp_path / "shared")
    monkeypatch.setenv(conftest.LAB_CACHE_VAR, str(tmp_path / "cache"))
    monkeypatch.delenv(REQUIRE_SHARED, raising=False)


@pytest.mark.usefixtures("nothing_beside")
def test_without_shared_data_a_marked_test_skips_and_says_what_is_missing(
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    request.node.add_marker(pytest.mark.requires_shared("sonic-yang"))
    with pytest.raises(pytest.skip.Exception) as skipped:
        conftest.pytest_runtest_setup(request.node)
    assert skipped.value.msg == ("needs SONiC's YANG models (sonic-buildimage src/sonic-yang-models/yang-models): "
                                 f"no *.yang in {tmp_path}/shared/sonic-yang/models ({conftest.NO_VENDOR_DATA})")


@pytest.mark.usefixtures("nothing_beside")
def test_ci_turns_the_skip_into_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE_SHARED, "1")
    with pytest.raises(pytest.fail.Exception, match="FABRICGEN_REQUIRE_SHARED=1 but this test needs SONiC's "
                                                    "generic_config_updater, one copy per release: no "):
        require_shared("sonic-gcu")


def test_a_marker_naming_unknown_shared_data_is_a_test_bug(request: pytest.FixtureRequest) -> None:
    request.node.add_marker(pytest.mark.requires_shared("sonic-yangs"))
    with pytest.raises(AssertionError, match=r"unknown shared data \['sonic-yangs'\]"):
        conftest.pytest_runtest_setup(request.node)


@pytest.mark.requires_shared(*SHARED_DATA)
def test_each_registry_entry_points_at_the_data_it_names() -> None:
    """A file each kind must hold, so that a registry path gone wrong is caught where the vendor data exists."""
    assert (conftest.shared_path("sonic-yang") / "sonic-port.yang").is_file()
    assert (conftest.shared_path("sonic-gcu") / "sonic-utilities-master" / "generic_config_updater"
            / "generic_updater.py").is_file()
    assert (conftest.shared_path("reference") / "sonic.md").is_file()
