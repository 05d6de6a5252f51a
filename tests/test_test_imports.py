"""The test tree never imports itself by the name ``tests``.

tests/ is not a package: pytest puts it first on sys.path and its modules import one another by their own names
(``lab``, ``conftest``, the ``targets`` package). A module path that starts with ``tests.`` would resolve through a
namespace package, and a namespace package loses to any regular ``tests`` package on sys.path, wherever it sits:
textfsm 2.1.1 (netmiko's dependency) installs one, and every test then failed to import (CI of 7 December 2026).
"""

import ast
import re
from pathlib import Path

from conftest import ROOT

# `python -m tests.lab`, or a launcher's `from tests.targets.sonic import main`, written as text.
IN_TEXT = re.compile(r"(?:-m\s+|\bfrom\s+|\bimport\s+|import_module\(f?[\"'])tests\.")
# A module named as a string: subprocess's ["-m", "tests.lab"], import_module, runpy.run_module, __import__.
MODULE = re.compile(r"tests(?:\.[A-Za-z_]\w*)+")


def _python_files() -> list[Path]:
    return sorted([*(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py")])


def _imported_roots(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The top-level package names an import statement reads."""
    if isinstance(node, ast.ImportFrom):
        return [node.module.split(".")[0]] if node.level == 0 and node.module else []
    return [alias.name.split(".")[0] for alias in node.names]


def _imports_of_tests(path: Path) -> list[str]:
    """Where ``path`` names a module under ``tests.``: its import statements and any code it writes as text."""
    source = path.read_text()
    where = path.relative_to(ROOT)
    found = [f"{where}:{node.lineno}" for node in ast.walk(ast.parse(source))
             if (isinstance(node, ast.Import | ast.ImportFrom) and "tests" in _imported_roots(node))
             or (isinstance(node, ast.Constant) and isinstance(node.value, str) and MODULE.fullmatch(node.value))]
    if path.name != Path(__file__).name:  # this file's own pattern and docstring name what they look for
        found += [f"{where}:{number}" for number, line in enumerate(source.splitlines(), 1) if IN_TEXT.search(line)]
    return found


def test_no_module_imports_the_test_tree_as_tests() -> None:
    offenders = [where for path in _python_files() for where in _imports_of_tests(path)]
    assert offenders == [], "import these by their own names (tests/ is on sys.path), never as tests.*"


def test_the_targets_package_is_the_checkouts() -> None:
    import targets

    assert Path(targets.__file__).parent == ROOT / "tests" / "targets"
