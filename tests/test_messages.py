"""The messages a user meets first, each as the exact text printed: one example per mistake people make.

Every test copies the bundled example into a temporary folder, makes one mistake in it, runs the command as a
user would and compares what it prints, line for line. A message that changes wording changes here, on purpose.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fabricgen.cli import main

from conftest import ROOT


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled example, copied: fabric.yaml and inventory/ in the working directory the commands run in."""
    shutil.copy(ROOT / "intent" / "fabric.yaml", tmp_path / "fabric.yaml")
    shutil.copytree(ROOT / "inventory", tmp_path / "inventory", ignore=shutil.ignore_patterns("mixed"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"fixture text not found once: {old!r}"
    path.write_text(text.replace(old, new))


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def stderr_lines(result: Result) -> list[str]:
    return result.stderr.splitlines()


# --- markup-safe texts ---------------------------------------------------------------------------------------

def test_the_validate_hint_names_the_extra_in_brackets(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich reads `[yang]` as a style tag and dropped it: the hint said `pip install 'fabricgen'`."""
    monkeypatch.setitem(sys.modules, "libyang", None)  # the binding is not installed
    (workspace / "models").mkdir()
    (workspace / "models" / "sonic-port.yang").write_text("module sonic-port {}\n")
    (workspace / "out" / "leaf1").mkdir(parents=True)
    (workspace / "out" / "leaf1" / "config_db.json").write_text("{}\n")
    result = run("validate", "--models", "models", "out")
    assert result.exit_code == 2
    assert stderr_lines(result) == [
        "error: SONiC YANG validation needs libyang: pip install 'fabricgen[yang]' (Python binding libyang==2.7.1) "
        "and apt-get install libyang2-dev (the libyang 2.1.x C library the binding builds against and loads) "
        "(import of libyang halted; None in sys.modules)"]


def test_a_failure_naming_a_path_with_brackets_prints_it_whole(workspace: Path) -> None:
    result = run("lint", "fabric.yaml", "--filter", "name=[leaf]")
    assert result.exit_code == 2
    assert stderr_lines(result) == ["error: --filter name=[leaf]: selects no device of the inventory (its hosts.yaml "
                                    "names each device, its role, platform and groups)"]
