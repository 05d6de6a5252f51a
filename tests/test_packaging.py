"""A plain (non-editable) install carries the templates: the wheel renders from any directory."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import fabricgen

from conftest import ROOT


def test_wheel_renders_from_another_directory(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(wheels), str(ROOT)], check=True)
    [wheel] = wheels.glob("fabricgen-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "fabricgen/templates/eos/device.cfg.j2" in names
    assert "fabricgen/templates/connectx/fabricgen-nic.sh.j2" in names
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                   check=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    probe = subprocess.run([sys.executable, "-c", "import fabricgen, sys; print(fabricgen.__file__)"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, check=True)
    assert probe.stdout.startswith(str(site))  # the installed copy, not the source tree
    result = subprocess.run([sys.executable, "-m", "fabricgen", "render", str(ROOT / "intent" / "fabric.yaml"),
                             "-i", str(ROOT / "inventory"), "-o", "out"], cwd=elsewhere, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    golden = ROOT / "golden" / "fabric"
    for name in ("spine1/eos.cfg", "leaf1/config_db.json", "node1/fabricgen-nic.sh"):
        assert (elsewhere / "out" / name).read_bytes() == (golden / name).read_bytes(), name


def test_the_changelog_names_this_version_first() -> None:
    """A release is the tag v<version> with its note on top of CHANGELOG.md (docs/ci.md installs by that tag)."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["version"]["path"]
    assert version == "fabricgen/__init__.py"  # the one place the version is written
    [newest, *_] = re.findall(r"^## (\S+) — \d{4}-\d{2}-\d{2}$", (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert newest == fabricgen.__version__
