"""bench/run.py's pyavd side-by-side runs with only the `parity` extra installed (no pytest), and says loudly when
pyavd is installed but cannot be imported instead of reporting it as "not installed"."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import ROOT


def bench_run() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_structured_config_the_bench_renders_needs_no_pytest() -> None:
    """The mapping the bench shares with the parity test imports with pytest blocked (None in sys.modules)."""
    probe = "import sys; sys.modules['pytest'] = None; sys.path.insert(0, 'tests'); import avd_structured"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_pyavd_not_installed_is_a_plain_note(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "pyavd", None)  # `import pyavd` → ModuleNotFoundError(name="pyavd")
    assert bench_run().import_pyavd() == (
        None, "not installed: pip install -e '.[parity]' (pyavd==6.4.0) to render side by side")
    assert capsys.readouterr().err == ""


def test_pyavd_that_fails_to_import_is_said_loudly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "pyavd"
    broken.mkdir()
    (broken / "__init__.py").write_text("import a_dependency_pyavd_lacks\n")
    monkeypatch.delitem(sys.modules, "pyavd", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    module, why = bench_run().import_pyavd()
    assert module is None
    assert why == ("pyavd is installed but fails to import: ModuleNotFoundError: "
                   "No module named 'a_dependency_pyavd_lacks'")
    assert capsys.readouterr().err == f"bench/run.py: WARNING: {why}; the pyavd side-by-side is NOT measured\n"
