"""The progress bar of render and lint: on a terminal, for a large fabric, never in a pipe, CI or JSON.

The end-to-end tests run the installed `fabricgen` command in a pseudo-terminal (Python's pty module) on a fabric
bench/make_fabric.py generates: 12,288 GPUs, 2,156 devices, just above fabricgen.cli.progress.LARGE_FABRIC.
"""

from __future__ import annotations

import contextlib
import os
import pty
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabricgen.cli.progress import LARGE_FABRIC, Bar, Quiet, for_fabric

from conftest import ROOT

FABRICGEN = str(Path(sys.executable).parent / "fabricgen")
GPUS = 12_288  # 2,156 devices


def child_env() -> dict[str, str]:
    """The environment of a person at a terminal: no CI variable (a CI runner that runs this test sets one)."""
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    return {**env, "TERM": "xterm-256color", "COLUMNS": "120"}


def in_terminal(*args: str) -> tuple[int, str]:
    """Run fabricgen with stdin, stdout and stderr on a pseudo-terminal; its exit status and everything it
    printed there (escape sequences included)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: exec at once, nothing else (the test process's state is not to be trusted here)
        os.execve(FABRICGEN, [FABRICGEN, *args], child_env())
    printed = bytearray()
    for chunk in _read_until_closed(fd):
        printed += chunk
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), printed.decode(errors="replace")


def _read_until_closed(fd: int) -> Iterator[bytes]:
    while True:
        ready, _, _ = select.select([fd], [], [], 600)
        if not ready:
            raise TimeoutError("fabricgen printed nothing for 10 minutes")
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal (Linux)
            return
        if not chunk:
            return
        yield chunk


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def large_fabric(tmp_path_factory: pytest.TempPathFactory) -> Path:
    fabric = tmp_path_factory.mktemp("large") / f"fabric-{GPUS}"
    subprocess.run([sys.executable, str(ROOT / "bench" / "make_fabric.py"), "--gpus", str(GPUS), "-o", str(fabric)],
                   check=True, capture_output=True)
    hosts = (fabric / "inventory" / "hosts.yaml").read_text()
    assert sum(1 for line in hosts.splitlines() if line and line[0].isalnum() and line.endswith(":")) > LARGE_FABRIC
    return fabric


def test_render_of_a_large_fabric_shows_its_phases_on_a_terminal_and_nothing_in_a_pipe(large_fabric: Path,
                                                                                        tmp_path: Path) -> None:
    inputs = [str(large_fabric / "intent.yaml"), "-i", str(large_fabric / "inventory")]
    code, screen = in_terminal("render", *inputs, "-o", str(tmp_path / "terminal"), "--jobs", "2")
    assert code == 0, screen[-3000:]
    for phase in ("render: resolve", "render: lint", "render: render and write"):
        assert phase in screen, phase
    assert "2,156/2,156 devices" in screen
    assert screen.rstrip().endswith("wrote 7481 files (manifest.json included)")  # the summary after the bar
    # The same render piped, into the tree the terminal's wrote: no bar, and not one file to rewrite (the bar
    # changed nothing written). Into the same tree, it costs a comparison instead of a second full render.
    written = tree(tmp_path / "terminal")
    piped = subprocess.run([FABRICGEN, "render", *inputs, "-o", str(tmp_path / "terminal"), "--jobs", "2"],
                           capture_output=True, text=True, env=child_env(), check=True)
    assert "render:" not in piped.stderr and "devices" not in piped.stderr and "\x1b" not in piped.stdout
    assert "none of its 7481 files needed rewriting" in piped.stdout + piped.stderr
    assert tree(tmp_path / "terminal") == written


def test_lint_of_a_large_fabric_shows_a_bar_but_not_with_json(large_fabric: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # No cache: a render of these files (above) keeps its lint report, which a lint then prints without linting.
    monkeypatch.setenv("FABRICGEN_NO_CACHE", "1")
    inputs = [str(large_fabric / "intent.yaml"), "-i", str(large_fabric / "inventory")]
    code, screen = in_terminal("lint", *inputs)
    assert code == 0, screen[-3000:]
    assert "lint: resolve" in screen and "lint: lint" in screen
    code, screen = in_terminal("lint", *inputs, "--format", "json")
    assert code == 0 and "lint: resolve" not in screen and screen.lstrip().startswith("{")


def test_a_small_fabric_shows_no_bar_on_a_terminal(tmp_path: Path) -> None:
    code, screen = in_terminal("render", str(ROOT / "intent" / "fabric.yaml"), "-i", str(ROOT / "inventory"),
                               "-o", str(tmp_path / "out"))
    assert code == 0 and "render: resolve" not in screen and "wrote 27 files" in screen


@contextlib.contextmanager
def stderr_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """sys.stderr on a pseudo-terminal, as a person's shell gives it, with no CI variable. Set in the test itself:
    pytest puts its own capture back on sys.stderr between a fixture's set-up and the test."""
    controller, terminal = pty.openpty()
    with os.fdopen(terminal, "w") as stream:
        monkeypatch.setattr(sys, "stderr", stream)
        monkeypatch.delenv("CI", raising=False)
        yield
        monkeypatch.undo()
    os.close(controller)


def test_who_gets_a_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    with stderr_on_a_terminal(monkeypatch):
        assert isinstance(for_fabric("render", LARGE_FABRIC, machine_output=False), Bar)
        assert isinstance(for_fabric("render", LARGE_FABRIC - 1, machine_output=False), Quiet)  # about a second
        assert isinstance(for_fabric("lint", 30_000, machine_output=True), Quiet)  # --format json / sarif
        monkeypatch.setenv("CI", "true")
        assert isinstance(for_fabric("render", 30_000, machine_output=False), Quiet)


def test_no_bar_when_stderr_is_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    reader, writer = os.pipe()
    with os.fdopen(writer, "w") as stream:
        monkeypatch.setattr(sys, "stderr", stream)
        monkeypatch.delenv("CI", raising=False)
        assert isinstance(for_fabric("render", 30_000, machine_output=False), Quiet)
        monkeypatch.undo()
    os.close(reader)


def test_a_quiet_command_never_loads_rich_progress(tmp_path: Path) -> None:
    """The fast path stays fast: a render that shows no bar does not import rich's progress machinery."""
    script = ("import sys\nfrom fabricgen.cli import main\nsys.argv[1:] = ['render', '-o', sys.argv[1]]\n"
              "try:\n    main()\nexcept SystemExit as exit:\n    assert not exit.code, exit.code\n"
              "print('rich.progress' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "out")], capture_output=True, text=True,
                          cwd=ROOT, env=child_env(), check=True)
    assert done.stdout.strip().splitlines()[-1] == "False", done.stdout
    assert (tmp_path / "out" / "leaf1" / "config_db.json").is_file()
