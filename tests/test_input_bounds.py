"""Hostile or broken input files end in exit 2 with `FILE:LINE:COL: key.path: message (hint)` and nothing written —
never exit 70 (an internal error), never a hang, never gigabytes.

Each case is a real file on disk (a FIFO made with os.mkfifo, the real /dev/zero, an alias bomb, ...) put in place
of one bundled input and rendered through the CLI."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st

import fabricgen.load.yamlsource as yamlsource
from fabricgen.cli import main
from fabricgen.load.fastyaml import load_plain
from fabricgen.load.yamlsource import MAX_ALIAS_NODES, MAX_DEPTH, MAX_FILE_BYTES, MAX_NODES, load_yaml
from fabricgen.models.diagnostics import Diagnostic, Location, format_key_path

from conftest import ROOT

# FILE:LINE:COL: key.path: message, with an optional (hint); the key path is one token or a quoted key.
DIAGNOSTIC = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<path>[^\n]+?): (?P<message>[^\n]+)$")

ALIAS_BOMB = "\n".join([
    'bomb:',
    '  a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
    *(f"  {name}: &{name} [{', '.join([f'*{prev}'] * 9)}]" for prev, name in zip("abcdefgh", "bcdefghi", strict=True)),
]) + "\n"  # 9^9 = 387 million strings from 600 bytes


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "intent" / "fabric.yaml", tmp_path / "fabric.yaml")
    shutil.copytree(ROOT / "inventory", tmp_path / "inventory", ignore=shutil.ignore_patterns("mixed"))
    return tmp_path


def render(workspace: Path) -> Result:
    workspace.joinpath("dirs-before").write_text(" ".join(sorted(p.name for p in workspace.iterdir() if p.is_dir())))
    return CliRunner().invoke(main, ["render", str(workspace / "fabric.yaml"), "-i", str(workspace / "inventory"),
                                     "-o", str(workspace / "out"), "--jobs", "1"])


def assert_refused(workspace: Path, result: Result, file: str, message: str) -> list[re.Match[str]]:
    """Exit 2 (not 70, no exception), every problem a well-formed one-line diagnostic, the expected one among
    them, and nothing written."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output
    *lines, last = result.output.splitlines()
    assert "problem(s) in the input; nothing was written" in last
    found = [DIAGNOSTIC.match(line) for line in lines]
    assert lines and all(found), lines
    matches = [match for match in found if match is not None]
    assert any(match["file"] == str(workspace / file) and message in match["message"] for match in matches), lines
    assert not (workspace / "out").exists()
    dirs = " ".join(sorted(p.name for p in workspace.iterdir() if p.is_dir()))
    assert dirs == workspace.joinpath("dirs-before").read_text()  # no staging tree either
    return matches


def replace_file(workspace: Path, name: str, make: Callable[[Path], None]) -> None:
    target = workspace / name
    target.unlink()
    make(target)


def append(workspace: Path, name: str, text: str) -> None:
    with (workspace / name).open("a", encoding="utf-8") as handle:
        handle.write(text)


# --- files that are not regular files of bounded size ----------------------------------------------------

def test_a_fifo_is_refused_without_waiting_for_a_writer(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening a FIFO for reading blocks until a writer comes, i.e. forever: fabricgen opens its inputs with
    O_NONBLOCK. A blocking open is refused here rather than let through, so a regression fails instead of hanging."""
    replace_file(workspace, "inventory/groups.yaml", os.mkfifo)
    fifo, real_open, opened = workspace / "inventory" / "groups.yaml", os.open, []

    def open_without_blocking_only(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if Path(path) == fifo:
            opened.append(flags)
            assert flags & os.O_NONBLOCK, f"{path} opened without O_NONBLOCK: that open waits for a writer"
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_without_blocking_only)
    assert_refused(workspace, render(workspace), "inventory/groups.yaml", "not a regular file (a FIFO)")
    assert opened, "the FIFO was refused without being opened: then it was read some other, blocking way"


def test_dev_zero_is_refused_before_reading_it(workspace: Path) -> None:
    replace_file(workspace, "inventory/defaults.yaml", lambda path: path.symlink_to("/dev/zero"))
    assert_refused(workspace, render(workspace), "inventory/defaults.yaml", "not a regular file (a character device)")


def test_a_directory_as_the_intent_is_refused(workspace: Path) -> None:
    replace_file(workspace, "fabric.yaml", Path.mkdir)
    assert_refused(workspace, render(workspace), "fabric.yaml", "not a regular file (a directory)")


def test_a_file_over_the_size_limit_names_the_limit_and_how_to_raise_it(workspace: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_FILE_BYTES.variable, "2000")
    result = render(workspace)
    matches = assert_refused(workspace, result, "inventory/hosts.yaml", "file larger than 2,000 bytes")
    assert all(f"raise it with {MAX_FILE_BYTES.variable}=N" in match["message"] for match in matches)


def test_running_out_of_memory_is_bad_input_not_a_crash(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A valid inventory within the size bound that this machine cannot hold (MemoryError) is exit 2."""
    def out_of_memory(*_: object, **__: object) -> None:
        raise MemoryError

    monkeypatch.setattr("fabricgen.load.fabric.load_yaml", out_of_memory)
    assert_refused(workspace, render(workspace), "inventory", "the input does not fit in memory")


# --- YAML that costs more than its size -----------------------------------------------------------------

def test_an_alias_bomb_stops_at_the_alias_limit(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """387 million strings from 600 bytes: building stops at the limit, counted in nodes built (not in seconds,
    which depend on the machine: bench/ measures time). A limit of 20,000 instead of the default 1,000,000 makes
    the same check 50 times cheaper."""
    monkeypatch.setenv(MAX_ALIAS_NODES.variable, "20000")
    built = [0]
    count = yamlsource._Builder._count

    def counting(builder: yamlsource._Builder, node: Any, path: Any) -> None:
        built[0] += builder.file.endswith("fabric.yaml")
        count(builder, node, path)

    monkeypatch.setattr(yamlsource._Builder, "_count", counting)
    append(workspace, "fabric.yaml", ALIAS_BOMB)
    matches = assert_refused(workspace, render(workspace), "fabric.yaml",
                             "YAML aliases expand to more than 20,000 nodes")
    assert any(MAX_ALIAS_NODES.variable in match["message"] for match in matches)
    own_nodes = len(re.findall(r"[\w\"]+", (workspace / "fabric.yaml").read_text()))  # more than the file's nodes
    assert 20_000 < built[0] <= 20_000 + own_nodes, f"{built[0]:,} nodes built"


@pytest.mark.parametrize("recursive", ["loop: &loop [1, *loop]\n", "loop: &loop {self: *loop}\n"])
def test_a_recursive_alias_is_refused(workspace: Path, recursive: str) -> None:
    append(workspace, "fabric.yaml", recursive)
    assert_refused(workspace, render(workspace), "fabric.yaml", "recursive YAML alias")


@pytest.mark.parametrize(("file", "nested"), [
    ("fabric.yaml", "deep: " + "[" * 300 + "]" * 300 + "\n"),  # flow: the fast path declines, PyYAML reports
    ("inventory/hosts.yaml", "deep:\n" + "\n".join(f"{'  ' * level}k:" for level in range(1, 300)) + " 1\n"),
    ("inventory/groups.yaml", "deep: " + "{a: " * 2000 + "1" + "}" * 2000 + "\n"),  # past libyaml's own 1,000
])
def test_deep_nesting_is_refused_with_the_limit(workspace: Path, file: str, nested: str) -> None:
    append(workspace, file, nested)
    matches = assert_refused(workspace, render(workspace), file, "nest")
    assert all(len(match["path"]) < 120 for match in matches)  # the key path is cut short, not 300 levels


def test_nodes_beyond_the_node_limit_are_refused(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_NODES.variable, "100")
    assert_refused(workspace, render(workspace), "inventory/hosts.yaml", "more than 100 YAML nodes")


def test_limits_raised_by_the_environment_let_the_file_through(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("deep: " + "[" * 80 + "]" * 80 + "\n")
    doc, problems = load_yaml(path)
    assert doc is None and "nested more than 64 levels deep" in str(problems[0])
    monkeypatch.setenv(MAX_DEPTH.variable, "100")
    doc, problems = load_yaml(path)
    assert problems == [] and doc is not None and "deep" in doc.data
    monkeypatch.setenv(MAX_DEPTH.variable, "not a number")  # a typo keeps the default, never turns the bound off
    assert MAX_DEPTH.value() == MAX_DEPTH.default


@pytest.mark.parametrize("depth", [1, 5, 63, 64, 65, 200])
def test_the_fast_path_declines_exactly_where_the_depth_limit_starts(depth: int) -> None:
    """Both parsers enforce one bound: the fast path reads what is within it and leaves the rest to PyYAML's
    path, which reports it (never a deep tree past the bound from one path and a refusal from the other)."""
    raw = ("x: " + "[" * (depth - 1) + "1" + "]" * (depth - 1) + "\n").encode()
    taken, _ = load_plain(raw, MAX_DEPTH.default)
    assert taken == (depth <= MAX_DEPTH.default)


# --- entries of the wrong shape ---------------------------------------------------------------------------

@pytest.mark.parametrize(("file", "text", "message"), [
    ("inventory/hosts.yaml", "\nbadhost: 5\n", "a host entry must be a mapping, not int"),
    ("inventory/hosts.yaml", "\nbadhost: [leaf, spine]\n", "a host entry must be a mapping, not list"),
    ("inventory/hosts.yaml", "\nbadhost: just text\n", "a host entry must be a mapping, not str"),
    ("inventory/groups.yaml", "\nbadgroup: 7\n", "a group entry must be a mapping, not int"),
    ("inventory/groups.yaml", "\nchild:\n  groups: leaves\n", "groups must be a list of group names"),
    ("inventory/groups.yaml", "\nchild:\n  groups: [[leaves]]\n", "groups must be a list of group names"),
    ("inventory/hosts.yaml", "\n123:\n  platform: eos\n", "a host name must be a string, not int 123"),
    ("inventory/hosts.yaml", "\nbadhost:\n  hostname: !!int x\n", "the value is not a valid !!int"),
    ("inventory/hosts.yaml", "\nbadhost:\n  hostname: !!float ten\n", "the value is not a valid !!float"),
    ("inventory/hosts.yaml", "\nbadhost:\n  hostname: !!timestamp 2024-13-99\n", "is not a valid !!timestamp"),
    ("inventory/hosts.yaml", "\nbadhost: !!set {a, b}\n", "unsupported YAML tag !!set"),
    ("inventory/hosts.yaml", "\nbadhost: !custom {a: 1}\n", "unsupported YAML tag !custom"),
])
def test_entries_of_the_wrong_shape_are_diagnostics(workspace: Path, file: str, text: str, message: str) -> None:
    append(workspace, file, text)
    assert_refused(workspace, render(workspace), file, message)


def test_a_host_whose_groups_is_not_a_list_is_a_diagnostic(workspace: Path) -> None:
    hosts = workspace / "inventory" / "hosts.yaml"
    hosts.write_text(hosts.read_text().replace("groups: [leaves]", "groups: 5", 1))
    assert_refused(workspace, render(workspace), "inventory/hosts.yaml", "Input should be a valid list")


@pytest.mark.parametrize("text", ["", "# only a comment\n", "---\n"])
def test_an_empty_hosts_yaml_is_a_diagnostic(workspace: Path, text: str) -> None:
    (workspace / "inventory" / "hosts.yaml").write_text(text)
    assert_refused(workspace, render(workspace), "inventory/hosts.yaml", "hosts.yaml defines no hosts")


def test_a_key_with_a_line_break_is_reported_on_one_line(workspace: Path) -> None:
    append(workspace, "inventory/hosts.yaml", '\n"bad\\nhost\\u2028name": 5\n')
    matches = assert_refused(workspace, render(workspace), "inventory/hosts.yaml", "a host entry must be a mapping")
    assert any(match["path"] == repr("bad\nhost\u2028name") for match in matches)


# --- the terminal -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_terminal_that_cannot_show_unicode_still_gets_the_summary(tmp_path: Path, encoding: str) -> None:
    """The tree is written before the summary (with its →) is printed: an encoding error there must not turn a
    good render into exit 70. What the terminal cannot show is escaped."""
    env = {**os.environ, "PYTHONIOENCODING": encoding, "LC_ALL": "C"}
    run = subprocess.run([sys.executable, "-m", "fabricgen", "render", str(ROOT / "intent" / "fabric.yaml"), "-i",
                          str(ROOT / "inventory"), "-o", str(tmp_path / "out"), "--jobs", "1"],
                         capture_output=True, env=env, check=False, timeout=120)
    assert run.returncode == 0, run.stderr.decode(encoding)
    assert "\\u2192" in run.stdout.decode(encoding) and (tmp_path / "out" / "manifest.json").is_file()


# --- diagnostics are one line by construction -------------------------------------------------------------

@given(st.lists(st.text() | st.integers(min_value=0), max_size=4), st.text(), st.text())
def test_a_diagnostic_is_always_one_line(path: list[str | int], message: str, hint: str) -> None:
    text = str(Diagnostic(Location("f.yaml", 1, 1), format_key_path(tuple(path)), message, hint))
    assert text.splitlines() == [text]


@given(st.text(min_size=1))
def test_a_key_path_quotes_any_key_it_cannot_show_plainly(key: str) -> None:
    shown = format_key_path((key,))
    assert shown.splitlines() == [shown]
    assert shown in (key, repr(key))


def test_the_defaults_leave_room_for_a_32k_gpu_inventory() -> None:
    """bench/make_fabric.py --gpus 32768: hosts.yaml is 12,090,896 bytes, 733,381 nodes, 5 levels, no aliases
    (measured for issue 12). The bounds keep at least ten times that."""
    assert MAX_FILE_BYTES.default >= 10 * 12_090_896
    assert MAX_NODES.default >= 10 * 733_381
    assert MAX_DEPTH.default >= 10 * 5


@pytest.mark.parametrize("make", [os.mkfifo, lambda path: path.symlink_to("/dev/zero")], ids=["fifo", "dev-zero"])
def test_an_odd_hosts_yaml_is_refused_on_the_incremental_road(workspace: Path, make: Callable[[Path], None]) -> None:
    """With a previous tree, render first tries the neighbourhood update, which reads hosts.yaml itself."""
    assert render(workspace).exit_code == 0
    replace_file(workspace, "inventory/hosts.yaml", make)
    result = render(workspace)
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    assert f"{workspace / 'inventory/hosts.yaml'}:1:1: <file>: not a regular file" in result.output
    assert (workspace / "out" / "manifest.json").is_file()  # the previous tree stays as it was
