"""The bundled examples render byte for byte to golden/<example>/ (configs, resolved models, manifest).

Regenerate after an intended change with `.venv/bin/pytest tests/test_golden.py --update-golden` and review the
diff.

Every rendered file is compared byte for byte, the manifest too except for one value: its "renderer" fingerprint
(a digest of fabricgen's rendering code and templates, which decides when an incremental render must render
everything). A comment edited in a renderer changes the fingerprint and no rendered byte, so a golden test
that compared it would fail on every such edit and teach re-blessing by reflex; the fingerprint is tested on its
own below (it changes with the rendering code and templates, and only with them).

On a mismatch the rendered tree stays in pytest's temporary directory (outside the repository, so nothing in
golden/ is touched and nothing needs git-ignoring); the failure names each differing file's expected and actual
path, ready for `diff`.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricgen.build.incremental import PACKAGE, renderer_fingerprint
from fabricgen.cli import main
from fabricgen.platforms.common.templating import templates_dir

from conftest import EXAMPLE_INVENTORY, EXAMPLES, ROOT

MANIFEST = "manifest.json"
FINGERPRINT = re.compile(r'"renderer": "([0-9a-f]{64})"')


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _render_args(example: str, out: Path) -> list[str]:
    return ["render", f"intent/{example}.yaml", "-i", EXAMPLE_INVENTORY[example], "-o", str(out)]


def _render(example: str, out: Path) -> None:
    result = CliRunner().invoke(main, _render_args(example, out))
    assert result.exit_code == 0, result.output


def _fingerprint_of(manifest: bytes) -> str:
    """The manifest's renderer fingerprint; the manifest must hold exactly one."""
    found = FINGERPRINT.findall(manifest.decode())
    assert len(found) == 1, f"a manifest holds one renderer fingerprint, found {found}"
    return str(found[0])


def _comparable(name: str, data: bytes, golden: bytes) -> bytes:
    """``data`` as the golden test compares it: the manifest with the golden's fingerprint in place of its own
    (every other byte of it still counts), every other file as it is."""
    if name != MANIFEST:
        return data
    return data.replace(_fingerprint_of(data).encode(), _fingerprint_of(golden).encode())


def _difference(name: str, expected: bytes, actual: bytes, limit: int = 12) -> str:
    """The first lines of a unified diff, for a text file."""
    try:
        lines = difflib.unified_diff(expected.decode().splitlines(), actual.decode().splitlines(), "golden",
                                     "rendered", lineterm="", n=1)
    except UnicodeDecodeError:
        return f"    ({name} is not text)"
    shown = list(lines)
    more = f"\n    ... {len(shown) - limit} more diff lines" if len(shown) > limit else ""
    return "\n".join(f"    {line}" for line in shown[:limit]) + more


def _mismatches(golden: Path, out: Path) -> list[str]:
    """What differs between the golden tree and the rendered one, one entry per file, naming both paths."""
    expected, actual = _tree(golden), _tree(out)
    problems = [f"missing from the render: {golden / name}" for name in sorted(set(expected) - set(actual))]
    problems += [f"not in golden/: {out / name}" for name in sorted(set(actual) - set(expected))]
    for name in sorted(set(expected) & set(actual)):
        data = _comparable(name, actual[name], expected[name])
        if data != expected[name]:
            problems.append(f"differs: diff {golden / name} {out / name}\n"
                            f"{_difference(name, expected[name], data)}")
    return problems


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
    problems = _mismatches(golden, out)
    if problems:
        pytest.fail(f"{example} renders differently from golden/{example} (the rendered tree is kept in "
                    f"{out}; after an intended change run `.venv/bin/pytest tests/test_golden.py "
                    "--update-golden` and review the git diff):\n" + "\n".join(problems), pytrace=False)


def test_a_fingerprint_alone_is_no_mismatch(tmp_path: Path) -> None:
    """The comparison itself: a manifest that differs only in its fingerprint matches, one that differs in any
    other byte (here a file's hash) does not, and a rendered file that differs is named with both paths."""
    golden, out = tmp_path / "golden", tmp_path / "out"
    shutil.copytree(ROOT / "golden" / "minimal", golden)
    shutil.copytree(golden, out)
    manifest = out / MANIFEST
    text = manifest.read_text()
    manifest.write_text(text.replace(_fingerprint_of(text.encode()), "0" * 64))
    assert _mismatches(golden, out) == []

    first_hash = re.search(r'"([0-9a-f]{64})"', text)
    assert first_hash is not None
    manifest.write_text(text.replace(first_hash.group(1), "1" * 64, 1))
    assert [problem.splitlines()[0] for problem in _mismatches(golden, out)] == [
        f"differs: diff {golden / MANIFEST} {out / MANIFEST}"]

    manifest.write_text(text)
    config = next(name for name in _tree(out) if name.endswith("config_db.json"))
    (out / config).write_bytes((out / config).read_bytes() + b"\n")
    assert [problem.splitlines()[0] for problem in _mismatches(golden, out)] == [
        f"differs: diff {golden / config} {out / config}"]


@pytest.mark.parametrize("example", EXAMPLES)
def test_golden_manifests_carry_one_fingerprint(example: str) -> None:
    """The fingerprint the comparison sets aside is there, once, in the shape the incremental render reads."""
    manifest = (ROOT / "golden" / example / MANIFEST).read_bytes()
    assert json.loads(manifest)["renderer"] == _fingerprint_of(manifest)


def _package_copy(root: Path) -> tuple[Path, Path]:
    """A copy of the fabricgen package and its templates under ``root``: (templates, package)."""
    shutil.copytree(PACKAGE, root / "fabricgen", ignore=shutil.ignore_patterns("__pycache__", "templates"))
    shutil.copytree(templates_dir(), root / "templates")
    return root / "templates", root / "fabricgen"


# Edits of a copy of the package, and whether each must change the renderer fingerprint.
FINGERPRINT_EDITS = {
    "a comment in a platform renderer": ("fabricgen/platforms/sonic/render.py", "# comment\n", True),
    "a nested platform module": ("fabricgen/platforms/nvue/patchyaml.py", "# comment\n", True),
    "the templating module": ("fabricgen/platforms/common/templating.py", "# comment\n", True),
    "the api module": ("fabricgen/api.py", "# comment\n", True),
    "a template": ("templates/eos/device.cfg.j2", "{# comment #}\n", True),
    "a new template": ("templates/eos/extra.j2", "", True),
    "a lint rule (renders nothing)": ("fabricgen/lint/rules/mtu.py", "# comment\n", False),
    "the loader (renders nothing)": ("fabricgen/load/fabric.py", "# comment\n", False),
    "a byte-code cache": ("fabricgen/platforms/__pycache__/stale.cpython-311.pyc", "junk", False),
}


@pytest.mark.parametrize("name", list(FINGERPRINT_EDITS))
def test_the_fingerprint_follows_the_rendering_code_and_nothing_else(name: str, tmp_path: Path) -> None:
    path, addition, changes = FINGERPRINT_EDITS[name]
    untouched = _package_copy(tmp_path / "untouched")
    edited = _package_copy(tmp_path / "edited")
    target = edited[0].parent / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text((target.read_text() if target.exists() else "") + addition)
    assert (renderer_fingerprint(*edited) != renderer_fingerprint(*untouched)) is changes


def test_the_fingerprint_is_stable_where_nothing_changed(tmp_path: Path) -> None:
    """Two checkouts of the same code fingerprint alike, wherever they are, with Windows line endings too; the
    package in use fingerprints as its copies do."""
    first = _package_copy(tmp_path / "first")
    second = _package_copy(tmp_path / "elsewhere" / "second")
    crlf = second[1] / "platforms" / "eos" / "render.py"
    crlf.write_bytes(crlf.read_bytes().replace(b"\n", b"\r\n"))
    assert renderer_fingerprint(*first) == renderer_fingerprint(*second) == renderer_fingerprint()


def _render_in_a_process(out: Path, **environment: str) -> dict[str, bytes]:
    """Render the bundled example in a fresh interpreter: PYTHONHASHSEED and TZ only take effect at its start,
    and set there they cannot leak into later tests. The parse cache is off, so both renders parse."""
    env = {**os.environ, "FABRICGEN_NO_CACHE": "1", **environment}
    result = subprocess.run([sys.executable, "-m", "fabricgen", *_render_args("fabric", out)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return _tree(out)


def test_render_is_byte_identical_whatever_the_hash_seed_and_time_zone(tmp_path: Path) -> None:
    first = _render_in_a_process(tmp_path / "a", PYTHONHASHSEED="0", TZ="UTC")
    second = _render_in_a_process(tmp_path / "b", PYTHONHASHSEED="123", TZ="Asia/Shanghai")
    assert first == second


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
