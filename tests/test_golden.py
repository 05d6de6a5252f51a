"""The bundled examples render byte for byte to golden/<example>/ (configs, resolved models, manifest).

Regenerate after an intended change with `pytest tests/test_golden.py --update-golden` and review the diff.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricgen.cli import main

from conftest import EXAMPLE_INVENTORY, EXAMPLES, ROOT


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _render(example: str, out: Path) -> None:
    result = CliRunner().invoke(main, ["render", f"intent/{example}.yaml", "-i", EXAMPLE_INVENTORY[example],
                                       "-o", str(out)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("example", EXAMPLES)
def test_render_matches_golden(example: str, tmp_path: Path, request: pytest.FixtureRequest,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / example
    _render(example, out)
    golden = ROOT / "golden" / example
    if request.config.getoption("--update-golden"):
        shutil.rmtree(golden, ignore_errors=True)
        shutil.copytree(out, golden)
    expected, actual = _tree(golden), _tree(out)
    assert sorted(actual) == sorted(expected), "file set differs from golden/ (run with --update-golden?)"
    for name, data in expected.items():
        assert actual[name] == data, f"{example}/{name} differs from golden (run with --update-golden and review)"


def test_render_twice_is_byte_identical(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    _render("fabric", tmp_path / "a")
    monkeypatch.setenv("PYTHONHASHSEED", "123")
    os.environ["TZ"] = "Asia/Shanghai"
    _render("fabric", tmp_path / "b")
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")


def test_no_secret_reaches_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nornir credentials in the inventory never appear in any rendered file or in the manifest."""
    inventory = tmp_path / "inventory"
    shutil.copytree(ROOT / "inventory", inventory)
    (inventory / "defaults.yaml").write_text("username: admin\npassword: s3cr3t-Pa55\ndata: {}\n")
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["render", "-i", str(inventory), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "s3cr3t" not in result.output
    for name, data in _tree(tmp_path / "out").items():
        assert b"s3cr3t-Pa55" not in data, name
