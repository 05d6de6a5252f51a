"""The package layout is the pipeline: imports only point down the road (cli → stages → contracts).

docs/architecture.md draws the road and says what each package owns; this test holds the code to it. Each
rule names the packages a module may import from fabricgen; an import outside its allow-list fails with the
importing file, its line and the imported module, so a new dependency is a decision, not an accident.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "fabricgen"

# What render code is: capability records, renderers, the shared rendering helpers, the registry and the API.
RENDER_CODE = ("fabricgen.api", "fabricgen.platforms", "fabricgen.platforms.common",
               "fabricgen.platforms.*.capability", "fabricgen.platforms.*.render")
# The deploy modules that change devices; observe reads through deploy's connections, never through these.
COMMIT_PATH = ("fabricgen.deploy.engine", "fabricgen.deploy.rollback", "fabricgen.deploy.journal",
               "fabricgen.deploy.hostrestore", "fabricgen.deploy.hostbundle", "fabricgen.platforms.*.driver")

# package → the fabricgen packages its modules may import (besides their own package and `fabricgen` itself,
# which holds only __version__). Ordered from the bottom of the road to the top.
ALLOWED: dict[str, tuple[str, ...]] = {
    "fabricgen.runtime": (),
    "fabricgen.models": (),
    "fabricgen.load": ("fabricgen.models", "fabricgen.runtime", "fabricgen.platforms"),
    "fabricgen.resolve": ("fabricgen.models", "fabricgen.load", "fabricgen.platforms", "fabricgen.runtime"),
    "fabricgen.lint": ("fabricgen.models", "fabricgen.load", "fabricgen.resolve", "fabricgen.platforms",
                       "fabricgen.runtime"),
    "fabricgen.platforms": ("fabricgen.models", "fabricgen.resolve", "fabricgen.runtime"),
    "fabricgen.api": ("fabricgen.models", "fabricgen.platforms", "fabricgen.runtime"),
    "fabricgen.validate": ("fabricgen.models", "fabricgen.load", "fabricgen.resolve", "fabricgen.runtime"),
    "fabricgen.build": ("fabricgen.models", "fabricgen.load", "fabricgen.resolve", "fabricgen.lint",
                        "fabricgen.platforms", "fabricgen.api", "fabricgen.runtime"),
    "fabricgen.review": ("fabricgen.models", "fabricgen.load", "fabricgen.resolve", "fabricgen.lint",
                         "fabricgen.platforms", "fabricgen.api", "fabricgen.build", "fabricgen.runtime"),
    "fabricgen.report": ("fabricgen.models", "fabricgen.load", "fabricgen.resolve", "fabricgen.lint",
                         "fabricgen.platforms", "fabricgen.api", "fabricgen.build", "fabricgen.runtime",
                         "fabricgen.observe"),
    "fabricgen.deploy": ("fabricgen.models", "fabricgen.load", "fabricgen.resolve", "fabricgen.lint",
                         "fabricgen.platforms", "fabricgen.api", "fabricgen.build", "fabricgen.runtime",
                         "fabricgen.observe"),
    "fabricgen.observe": ("fabricgen.models", "fabricgen.load", "fabricgen.resolve", "fabricgen.lint",
                          "fabricgen.platforms", "fabricgen.api", "fabricgen.runtime", "fabricgen.deploy"),
    "fabricgen.cli": ("*",),
    "fabricgen.__main__": ("fabricgen.cli",),
}

# Imports that cross the road on purpose, each with its reason.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("fabricgen.lint.configs", "fabricgen.build.output"):
        "lint --configs reads a tree build wrote and must refuse one build marked incomplete (INCOMPLETE)",
    ("fabricgen.platforms.*.driver", "fabricgen.deploy"):
        "a platform's NAPALM driver is deploy code that lives in its platform's folder (one folder per NOS)",
    ("fabricgen.platforms.*.gcu", "fabricgen.deploy"):
        "SONiC's patch predictor is part of its driver",
    ("fabricgen.platforms.*.splice", "fabricgen.deploy"):
        "NX-OS's candidate splicing is part of its driver",
    ("fabricgen.platforms.*.observe", "fabricgen.observe"):
        "a platform's counter reader produces observe's snapshot records",
}


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path


def fabricgen_imports(path: Path) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("fabricgen"):
            module = node.module or ""
            for alias in node.names:  # `from fabricgen.platforms import hostscript` names a module too
                yield node.lineno, f"{module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("fabricgen"):
                    yield node.lineno, alias.name


def package_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


def matches(module: str, pattern: str) -> bool:
    """``fabricgen.platforms.*.driver`` matches every platform's driver module and what lies below a package."""
    want = pattern.split(".")
    have = module.split(".")
    return len(have) >= len(want) and all(w in ("*", h) for w, h in zip(want, have, strict=False))


def allowed(importer: str, imported: str) -> bool:
    source, target = package_of(importer), package_of(imported)
    if target in (source, "fabricgen.__init__") or imported.split(".")[:2] == ["fabricgen", "__version__"]:
        return True
    if any(matches(importer, a) and matches(imported, b) for a, b in EXCEPTIONS):
        return True
    permitted = ALLOWED.get(source)
    assert permitted is not None, f"{importer}: package {source} has no rule in ALLOWED (add one, and a paragraph " \
                                  "in docs/architecture.md)"
    return "*" in permitted or target in permitted


def violations() -> list[str]:
    found = []
    for name, path in modules():
        for line, imported in fabricgen_imports(path):
            if not allowed(name, imported):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {name} imports {imported}")
    return found


def test_imports_only_point_down_the_road() -> None:
    assert violations() == []


def test_no_stage_imports_the_command_line() -> None:
    offenders = [f"{name} imports {imported}" for name, path in modules() if not name.startswith("fabricgen.cli")
                 and name != "fabricgen.__main__" for _, imported in fabricgen_imports(path)
                 if matches(imported, "fabricgen.cli")]
    assert offenders == []


@pytest.mark.parametrize("render_code", RENDER_CODE)
def test_render_code_never_imports_deploy(render_code: str) -> None:
    offenders = [f"{name} imports {imported}" for name, path in modules()
                 if matches(name, render_code) and (name == render_code or "*" in render_code
                                                    or render_code.endswith("common"))
                 for _, imported in fabricgen_imports(path)
                 if any(matches(imported, p) for p in ("fabricgen.deploy", "fabricgen.platforms.*.driver",
                                                       "fabricgen.observe", "fabricgen.cli"))]
    assert offenders == []


def test_observe_never_imports_the_commit_path() -> None:
    offenders = [f"{name} imports {imported}" for name, path in modules() if matches(name, "fabricgen.observe")
                 or matches(name, "fabricgen.platforms.*.observe") for _, imported in fabricgen_imports(path)
                 if any(matches(imported, p) for p in COMMIT_PATH)]
    assert offenders == []


def test_the_top_of_the_package_holds_only_the_entry_points() -> None:
    top = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "api.py"]


def test_every_platform_folder_has_the_same_shape() -> None:
    shape = {"__init__.py", "capability.py", "render.py", "read.py"}
    for folder in sorted((PACKAGE / "platforms").iterdir()):
        if folder.is_dir() and folder.name not in ("common", "__pycache__"):
            assert shape <= {path.name for path in folder.glob("*.py")}, folder.name


def test_a_forbidden_import_is_reported_with_its_place(tmp_path: Path) -> None:
    """The rule itself: a stage importing the CLI is named with its file and line."""
    module = tmp_path / "x.py"
    module.write_text("from fabricgen.cli.common import fail\n")
    assert list(fabricgen_imports(module)) == [(1, "fabricgen.cli.common.fail")]
    assert not allowed("fabricgen.lint.rules.pfc", "fabricgen.cli.common.fail")
    assert not allowed("fabricgen.platforms.eos.render", "fabricgen.deploy.sshdriver.SshDriver")
    assert allowed("fabricgen.platforms.eos.driver", "fabricgen.deploy.sshdriver.SshDriver")
