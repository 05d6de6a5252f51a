"""`render` never loses data outside its output tree: it replaces or deletes only a tree it can prove it wrote
(a manifest of fabricgen's shape and nothing unlisted), refuses a symlinked OUT, leaves a foreign
`<out>.fabricgen-old` alone, serialises renders into one OUT, writes modes that do not depend on the umask,
and a render killed with SIGKILL at any point leaves the previous tree or the new one, whole.

Renders run as real subprocesses (killed, run 20 at once, under another umask or user) on real files."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import fabricgen.build.output as output
from fabricgen.build.output import (
    MANIFEST,
    MANIFEST_FORMAT,
    STAGING_MARK,
    OutputError,
    _plain_path,
    _plain_paths,
    build_manifest,
    check_owned,
    files_digest,
    read_previous,
    signed_files,
)
from fabricgen.cli import main

from conftest import ROOT

INTENT = str(ROOT / "intent" / "fabric.yaml")
NOBODY = 65534


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def snapshot(root: Path, leave_out: frozenset[str] = frozenset()) -> dict[str, tuple[Any, ...]]:
    """Every entry under ``root`` (links not followed): its kind, mode and bytes or link target; top-level
    names in ``leave_out`` are skipped."""
    found: dict[str, tuple[Any, ...]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            relative = path.relative_to(root)
            if relative.parts[0] in leave_out:
                continue
            status = path.lstat()
            if stat.S_ISLNK(status.st_mode):
                found[str(relative)] = ("link", str(path.readlink()))
            elif stat.S_ISDIR(status.st_mode):
                found[str(relative)] = ("dir", stat.S_IMODE(status.st_mode))
            else:
                found[str(relative)] = ("file", stat.S_IMODE(status.st_mode), path.read_bytes())
    return found


def render_command(out: Path, inventory: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "fabricgen", "render", INTENT, "-i", str(inventory), "-o", str(out), *extra]


def fabricgen(out: Path, inventory: Path, *extra: str, **popen: Any) -> subprocess.CompletedProcess[str]:
    """One render in a subprocess, without the parse cache (nothing written outside the test's directory)."""
    return subprocess.run(render_command(out, inventory, *extra), cwd=ROOT, env=_environment(),
                          capture_output=True, text=True, timeout=120, check=False, **popen)


def _environment() -> dict[str, str]:
    return {**os.environ, "FABRICGEN_NO_CACHE": "1", "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two inventories whose trees differ (leaf1's uplink cable 30 m, then 37 m: other headroom)."""
    base = tmp_path_factory.mktemp("inputs")
    old, new = base / "old", base / "new"
    for copy in (old, new):
        shutil.copytree(ROOT / "inventory", copy, ignore=shutil.ignore_patterns("mixed"))
    hosts = new / "hosts.yaml"
    text = hosts.read_text()
    needle = 'peer: "spine1:Ethernet1/1", cable_m: 30'
    assert text.count(needle) == 1
    hosts.write_text(text.replace(needle, 'peer: "spine1:Ethernet1/1", cable_m: 37'))
    return {"old": old, "new": new}


@pytest.fixture(scope="module")
def expected(inputs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, bytes]]:
    """The tree each inventory renders to."""
    trees = {}
    for name, inventory in inputs.items():
        out = tmp_path_factory.mktemp("reference") / "out"
        result = fabricgen(out, inventory, "--jobs", "1")
        assert result.returncode == 0, result.stderr
        trees[name] = tree(out)
    assert trees["old"] != trees["new"]
    return trees


# --- symlinks -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_symlinked_out_is_refused_and_its_target_left_as_it_was(jobs: str, inputs: dict[str, Path],
                                                                   tmp_path: Path) -> None:
    """Replacing the link would leave its target stale; with --jobs 2 the old code emptied the target."""
    target = tmp_path / "real"
    assert fabricgen(target, inputs["old"], "--jobs", "1").returncode == 0
    (target / "notes.txt").write_text("not fabricgen's\n")
    (tmp_path / "out").symlink_to(target)
    before = snapshot(tmp_path)
    for extra in ([], ["--full"]):
        result = fabricgen(tmp_path / "out", inputs["new"], "--jobs", jobs, *extra)
        assert result.returncode == 3, result.stderr
        assert "is a symbolic link" in result.stderr and "Traceback" not in result.stderr
        assert snapshot(tmp_path) == before


# --- foreign manifests and trees ----------------------------------------------------------------------------

FOREIGN_MANIFESTS = {
    "another tool's": {"generator": "othertool", "version": "1", "files": {"data.txt": "0" * 64}},
    "no version": {"generator": "fabricgen", "files": {"data.txt": "0" * 64}},
    "a path out of OUT": {"generator": "fabricgen", "version": "0.1.0", "files": {"../victim.txt": "0" * 64}},
    "an absolute path": {"generator": "fabricgen", "version": "0.1.0", "files": {"/etc/hostname": "0" * 64}},
    "not a hash": {"generator": "fabricgen", "version": "0.1.0", "files": {"data.txt": "rm -rf"}},
    "not a mapping": ["generator", "fabricgen"],
    # fabricgen's shape, unsigned: what a fabricgen before the manifest format wrote, or a hand-made imitation
    "no format marker": {"generator": "fabricgen", "version": "0.1.0", "files": {"data.txt": "0" * 64},
                         "files_digest": files_digest({"data.txt": "0" * 64})},
    "no digest of its file list": {"generator": "fabricgen", "version": "0.1.0", "format": MANIFEST_FORMAT,
                                   "files": {"data.txt": "0" * 64}},
    # signed for one file, then a second listed so that a render would delete it
    "a file list edited after signing": {"generator": "fabricgen", "version": "0.1.0", "format": MANIFEST_FORMAT,
                                         "files": {"data.txt": "0" * 64, "notes.txt": "0" * 64},
                                         "files_digest": files_digest({"notes.txt": "0" * 64})},
}


@pytest.mark.parametrize("manifest", [*FOREIGN_MANIFESTS, "not JSON"])
def test_a_foreign_manifest_is_refused(manifest: str, inputs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "data.txt").write_text("someone's data\n")
    (tmp_path / "victim.txt").write_text("beside OUT\n")
    text = json.dumps(FOREIGN_MANIFESTS[manifest]) if manifest in FOREIGN_MANIFESTS else "{not json"
    (out / MANIFEST).write_text(text)
    before = snapshot(tmp_path)
    result = fabricgen(out, inputs["old"], "--jobs", "2")
    assert result.returncode == 3, result.stderr
    assert f"has no {MANIFEST} signed by this fabricgen (format {MANIFEST_FORMAT}" in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("name", ["../victim.txt", "/etc/hostname", "leaf1//eos.cfg", "leaf1/./eos.cfg", "./eos.cfg",
                                  "leaf1/", "leaf1/..", ".", "..", "", "leaf1\\eos.cfg", "leaf1/eos\0.cfg",
                                  "leaf1/eos\n.cfg", MANIFEST])
def test_a_signed_manifest_naming_a_path_that_is_not_plain_is_refused(name: str) -> None:
    """Every file a manifest lists is named by its one plain relative spelling: a signed list with anything else
    (out of OUT, absolute, a doubled or trailing slash, a dot part, the manifest itself) is not fabricgen's."""
    files = {"leaf1/eos.cfg": "0" * 64, name: "1" * 64}
    manifest = {"generator": "fabricgen", "version": "0.1.0", "format": MANIFEST_FORMAT, "files": files,
                "files_digest": files_digest(files)}
    assert signed_files(manifest) is None
    plain = {"leaf1/eos.cfg": "0" * 64, "leaf1/sub/x.cfg": "1" * 64}
    assert signed_files({**manifest, "files": plain, "files_digest": files_digest(plain)}) == set(plain)


@pytest.mark.parametrize("digest", ["0" * 63, "0" * 65, "A" * 64, "g" * 64, "0" * 63 + "\n", "\u0660" * 64, 7, None])
def test_a_signed_manifest_whose_digest_is_not_a_sha256_is_refused(digest: object) -> None:
    """Each file's digest is 64 lower-case hex digits, whatever its neighbours are (the check runs on them all at
    once: a short one beside a long one must not pass as two of the right length)."""
    for files in ({"leaf1/eos.cfg": "0" * 64, "leaf1/x.cfg": digest},
                  {"leaf1/a.cfg": "0" * 63, "leaf1/b.cfg": "0" * 65}):
        manifest = {"generator": "fabricgen", "version": "0.1.0", "format": MANIFEST_FORMAT, "files": files,
                    "files_digest": files_digest(files)}  # type: ignore[arg-type]
        assert signed_files(manifest) is None


PATH_SPELLINGS = ["leaf1/eos.cfg", "leaf1/sub/x.cfg", "a", "a/b/c", ".hidden/x", "x/..y", "x/y..", "...", "a/.../b",
         "../victim.txt", "/etc/hostname", "leaf1//eos.cfg", "leaf1/./eos.cfg", "./eos.cfg", "leaf1/", "leaf1/..",
         ".", "..", "", "/", "//", "leaf1\\eos.cfg", "leaf1/eos\0.cfg", "leaf1/eos\n.cfg", "a\u2028b", "a\x85b",
         "r\u00e9seau/x", MANIFEST, f"leaf1/{MANIFEST}", 7, None]


def test_the_names_of_a_manifest_are_checked_together_as_each_alone() -> None:
    """_plain_paths, which tests a manifest's names joined, agrees with _plain_path on each name, and on every
    pair: a name can neither hide nor fake a problem of its neighbour's."""
    for name in PATH_SPELLINGS:
        assert _plain_paths([name]) == _plain_path(name), name
        for other in PATH_SPELLINGS:
            assert _plain_paths([name, other]) == (_plain_path(name) and _plain_path(other)), (name, other)
    assert _plain_paths([])


def test_a_manifest_of_the_bundled_goldens_shape_is_fabricgens(tmp_path: Path) -> None:
    """The goldens' manifests prove their trees fabricgen's."""
    for golden in sorted((ROOT / "golden").iterdir()):
        copy = tmp_path / golden.name
        shutil.copytree(golden, copy)
        check_owned(copy)
        (copy / "leaf9").mkdir()
        with pytest.raises(OutputError, match=r"'leaf9', which its manifest\.json does not list"):
            check_owned(copy)


NAMES = st.text(alphabet="abc.-_", min_size=1, max_size=4).filter(lambda name: name not in (".", ".."))


@settings(max_examples=60, deadline=None)
@given(listed=st.sets(st.tuples(NAMES, NAMES), min_size=1, max_size=6),
       strays=st.sets(st.tuples(NAMES, NAMES), max_size=3))
def test_a_tree_is_fabricgens_exactly_when_it_holds_nothing_unlisted(listed: set[tuple[str, str]],
                                                                    strays: set[tuple[str, str]]) -> None:
    """Property: check_owned accepts a tree with a fabricgen manifest iff every file in it is listed."""
    files = {f"{device}/{name}": "x\n" for device, name in listed}
    extra = {f"{device}/{name}" for device, name in strays} - set(files)
    extra = {path for path in extra if path.partition("/")[0] not in {name for name in files}
             and not any(other.startswith(f"{path}/") for other in files)}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for path in [*files, *extra]:
            (root / path).parent.mkdir(exist_ok=True)
            (root / path).write_text("x\n")
        (root / MANIFEST).write_text(build_manifest(files, {}))
        if extra:
            with pytest.raises(OutputError, match="does not list"):
                check_owned(root)
        else:
            check_owned(root)


# --- the .fabricgen-old sibling -----------------------------------------------------------------------------

def foreign_backup(tmp_path: Path) -> Path:
    backup = tmp_path / "out.fabricgen-old"
    backup.mkdir()
    (backup / "thesis.tex").write_text("years of work\n")
    return backup


@pytest.mark.parametrize("previous", [False, True])
def test_a_foreign_backup_sibling_is_never_moved_or_deleted(previous: bool, inputs: dict[str, Path],
                                                            expected: dict[str, dict[str, bytes]],
                                                            tmp_path: Path) -> None:
    out = tmp_path / "out"
    if previous:
        assert fabricgen(out, inputs["old"], "--jobs", "1").returncode == 0
    foreign_backup(tmp_path)
    before = snapshot(tmp_path, frozenset({"out"}))
    result = fabricgen(out, inputs["new"], "--jobs", "2", "--full")
    assert result.returncode == 0, result.stderr
    assert tree(out) == expected["new"]
    assert snapshot(tmp_path, frozenset({"out"})) == before


def test_without_an_atomic_exchange_a_foreign_backup_stops_the_render(inputs: dict[str, Path], tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The two-rename fallback needs the backup's name: when something else holds it, nothing is written."""
    out = tmp_path / "out"
    assert fabricgen(out, inputs["old"], "--jobs", "1").returncode == 0
    foreign_backup(tmp_path)
    before = snapshot(tmp_path)
    monkeypatch.setattr(output, "_exchange", lambda a, b: False)
    result = CliRunner().invoke(main, ["render", INTENT, "-i", str(inputs["new"]), "-o", str(out), "--jobs", "1",
                                       "--full"])
    assert result.exit_code == 3, result.output
    assert "out.fabricgen-old exists and is not a tree fabricgen left behind" in result.output
    assert snapshot(tmp_path) == before


def test_a_backup_fabricgen_left_between_its_two_renames_is_put_back(inputs: dict[str, Path],
                                                                     expected: dict[str, dict[str, bytes]],
                                                                     tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert fabricgen(out, inputs["old"], "--jobs", "1").returncode == 0
    out.rename(tmp_path / "out.fabricgen-old")  # killed after `out → backup`, before `staging → out`
    result = fabricgen(out, inputs["old"], "--jobs", "1")
    assert result.returncode == 0, result.stderr
    assert tree(out) == expected["old"] and not (tmp_path / "out.fabricgen-old").exists()


# --- permissions ---------------------------------------------------------------------------------------------

@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """A folder no one may write in: mode 0555, and for root (which ignores modes) the immutable attribute."""
    immutable = os.geteuid() == 0
    folder.chmod(0o555)
    if immutable and subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False).returncode:
        folder.chmod(0o755)
        pytest.skip(reason="running as root on a file system without chattr +i (no folder is read-only for "
                    "root): run the suite as a normal user, or on ext4/xfs where chattr +i works")
    try:
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)


@pytest.mark.parametrize("mode", ["full", "update"])
def test_a_read_only_output_is_a_clean_refusal(mode: str, inputs: dict[str, Path], tmp_path: Path) -> None:
    """A read-only parent (no staging tree can be made) or device folder (no file can be replaced): exit 3,
    and nothing changes. (An update stopped after it replaced a file is marked: test_incremental.)"""
    out = tmp_path / "out"
    assert fabricgen(out, inputs["old"], "--jobs", "1").returncode == 0
    folder = tmp_path if mode == "full" else out / "leaf1"
    before = snapshot(tmp_path)
    with read_only(folder):
        result = fabricgen(out, inputs["new"], "--jobs", "2", *(["--full"] if mode == "full" else []))
    assert result.returncode == 3, result.stderr
    assert "cannot write" in result.stderr or "cannot update" in result.stderr
    assert ("Permission denied" in result.stderr or "Operation not permitted" in result.stderr) and \
        "Traceback" not in result.stderr
    if mode == "full":
        assert snapshot(tmp_path) == before
    else:  # leaf1's files are the first the update replaces: it stops before any, and unmarks the tree
        assert snapshot(tmp_path) == before and not (out / output.INCOMPLETE).exists()
        assert "the previous output (if any) is unchanged" in result.stderr
        assert fabricgen(out, inputs["new"], "--jobs", "1").returncode == 0
        assert read_previous(out) is not None


def modes(out: Path) -> set[tuple[str, int]]:
    return {(p.suffix if p.is_file() else "/", stat.S_IMODE(p.stat().st_mode)) for p in [out, *out.rglob("*")]}


def test_modes_do_not_depend_on_the_umask(inputs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    for inventory, extra in ((inputs["old"], ["--jobs", "2"]), (inputs["new"], ["--jobs", "1"])):  # full, update
        result = fabricgen(out, inventory, *extra, umask=0o077)
        assert result.returncode == 0, result.stderr
        found = modes(out)
        assert {mode for kind, mode in found if kind == "/"} == {0o755}
        assert {mode for kind, mode in found if kind == ".sh"} == {0o755}
        assert {mode for kind, mode in found if kind not in ("/", ".sh")} == {0o644}
        assert (".json", 0o644) in found


# --- killed renders and their staging trees -----------------------------------------------------------------

def test_staging_trees_of_killed_renders_are_removed_only_when_provably_theirs(inputs: dict[str, Path],
                                                                              tmp_path: Path) -> None:
    out = tmp_path / "out"
    marked, empty = tmp_path / ".out.abcdefgh.tmp", tmp_path / ".out.ijklmnop.tmp"
    marked.mkdir()
    (marked / STAGING_MARK).write_text("fabricgen staging tree of out\n")
    (marked / "leaf1").mkdir()
    (marked / "leaf1" / "config_db.json").write_text("{}\n")
    empty.mkdir()
    unmarked = tmp_path / ".out.qrstuvwx.tmp"  # same name pattern, someone else's
    unmarked.mkdir()
    (unmarked / "data").write_text("keep\n")
    other_out = tmp_path / ".out.x.abcdefgh.tmp"  # the staging tree of OUT "out.x"
    other_out.mkdir()
    (other_out / STAGING_MARK).write_text("fabricgen staging tree of out.x\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / STAGING_MARK).write_text("fabricgen staging tree of out\n")
    (tmp_path / ".out.zzzzzzzz.tmp").symlink_to(tmp_path / "elsewhere")
    kept = snapshot(tmp_path, frozenset({marked.name, empty.name}))
    result = fabricgen(out, inputs["old"], "--jobs", "1")
    assert result.returncode == 0, result.stderr
    assert not marked.exists() and not empty.exists()
    assert snapshot(tmp_path, frozenset({"out"})) == kept


def test_twenty_parallel_renders_end_in_a_tree_that_matches_its_manifest(
        inputs: dict[str, Path], expected: dict[str, dict[str, bytes]], tmp_path: Path) -> None:
    out = tmp_path / "out"
    runs = [subprocess.Popen(render_command(out, inputs["old" if i % 2 else "new"], "--jobs", str(1 + i % 3),
                                            *(["--full"] if i % 4 == 0 else [])),
                             cwd=ROOT, env=_environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for i in range(20)]
    outcomes = [(run.wait(timeout=300), run.communicate()[1]) for run in runs]
    assert [code for code, _ in outcomes] == [0] * 20, [error for code, error in outcomes if code]
    assert tree(out) in (expected["old"], expected["new"])
    assert read_previous(out) is not None  # the files are exactly what the manifest lists, modes included
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out"]  # the lock file too is gone


# Seconds after start: a render of the example takes ~0.35 s here, its writing and swap in the last ~0.15 s
# (measured: of 40 kills from 0.20 to 0.40 s, 11 left a staging tree or a half-deleted previous tree behind).
KILL_AFTER = [0.15 + 0.02 * step for step in range(14)]


def test_a_render_killed_at_any_point_leaves_a_whole_tree(inputs: dict[str, Path],
                                                           expected: dict[str, dict[str, bytes]],
                                                           tmp_path: Path) -> None:
    """SIGKILL (the whole process group, forked workers included) at successive moments of a full render:
    OUT is the previous tree byte for byte or the new one complete, and the next render removes what the killed
    one left beside OUT and touches nothing else."""
    out = tmp_path / "out"
    (tmp_path / "neighbour.txt").write_text("beside OUT\n")
    assert fabricgen(out, inputs["old"], "--jobs", "1").returncode == 0
    outside = snapshot(tmp_path, frozenset({"out"}))
    killed = 0
    for index, delay in enumerate(KILL_AFTER):
        run = subprocess.Popen(render_command(out, inputs["new"], "--full", "--jobs", str(1 + index % 2)),
                               cwd=ROOT, env=_environment(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(delay)
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            killed += 1
        run.wait(timeout=60)
        assert tree(out) in (expected["old"], expected["new"]), f"killed after {delay:.2f} s"
        repair = fabricgen(out, inputs["old"], "--jobs", "1")
        assert repair.returncode == 0, repair.stderr
        assert tree(out) == expected["old"] and read_previous(out) is not None
        assert snapshot(tmp_path, frozenset({"out"})) == outside, f"killed after {delay:.2f} s"
    assert killed >= len(KILL_AFTER) // 4, "the renders ended before most kills: shorten KILL_AFTER"
