"""`render --jobs N` and `--shard K/N` give exactly what a serial, whole-fabric render gives."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricgen.api import generate, generate_parallel, shard
from fabricgen.cli import main
from fabricgen.cli import rendering as cli
from fabricgen.models.device import Fabric
from fabricgen.runtime.forked import Background, contiguous

from conftest import ROOT


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_parallel_generation_equals_serial(example_fabric: Fabric) -> None:
    assert generate_parallel(example_fabric, jobs=2) == generate(example_fabric)
    assert list(generate_parallel(example_fabric, jobs=3)) == sorted(generate(example_fabric))


def test_shards_partition_the_fabric() -> None:
    names = [f"dev{i}" for i in range(10)]
    parts = [shard(names, k, 3) for k in (1, 2, 3)]
    assert sorted(n for part in parts for n in part) == sorted(names)
    assert parts[0] == ["dev0", "dev3", "dev6", "dev9"]
    with pytest.raises(ValueError):
        shard(names, 4, 3)


def test_cli_jobs_and_shards_match_a_serial_render(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    runner = CliRunner()
    assert runner.invoke(main, ["render", "-o", str(tmp_path / "serial"), "--jobs", "1"]).exit_code == 0
    assert runner.invoke(main, ["render", "-o", str(tmp_path / "parallel"), "--jobs", "2"]).exit_code == 0
    serial, parallel = tree(tmp_path / "serial"), tree(tmp_path / "parallel")
    assert parallel == serial
    merged: dict[str, bytes] = {}
    for k in (1, 2):
        result = runner.invoke(main, ["render", "-o", str(tmp_path / f"s{k}"), "--shard", f"{k}/2"])
        assert result.exit_code == 0, result.output
        part = tree(tmp_path / f"s{k}")
        assert b'"shard"' in part.pop("manifest.json")
        assert not set(part) & set(merged)
        merged |= part
    serial.pop("manifest.json")
    assert merged == serial


@pytest.mark.parametrize("shard_spec", [None, "2/3"])
def test_render_in_many_resolve_chunks_matches_a_serial_render(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               shard_spec: str | None) -> None:
    """A large fabric resolves in up to 4 × jobs chunks, each rendered by a worker started while the next
    resolves; with one device per chunk the bundled example takes that path too."""
    monkeypatch.chdir(ROOT)
    shard_args = ["--shard", shard_spec] if shard_spec else []
    runner = CliRunner()
    assert runner.invoke(main, ["render", "-o", str(tmp_path / "serial"), "--jobs", "1", *shard_args]).exit_code == 0
    monkeypatch.setattr(cli, "CHUNK_DEVICES", 1)
    result = runner.invoke(main, ["render", "-o", str(tmp_path / "chunked"), "--jobs", "2", *shard_args])
    assert result.exit_code == 0, result.output
    assert tree(tmp_path / "chunked") == tree(tmp_path / "serial")


@pytest.mark.parametrize("spec", ["3/2", "x", "0/2"])
def test_bad_shard_is_a_usage_error(spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["render", "-o", str(tmp_path / "o"), "--shard", spec])
    assert result.exit_code == 2 and "--shard" in result.output and "Traceback" not in result.output


def test_parallel_full_render_over_an_existing_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The previous tree is swapped out and deleted by the render's processes; nothing of it is left."""
    monkeypatch.chdir(ROOT)
    runner = CliRunner()
    out = tmp_path / "out"
    assert runner.invoke(main, ["render", "-o", str(out), "--jobs", "2"]).exit_code == 0
    first = tree(out)
    result = runner.invoke(main, ["render", "-o", str(out), "--jobs", "2", "--full"])
    assert result.exit_code == 0, result.output
    assert tree(out) == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_background_process_returns_its_result_or_raises_what_it_raised() -> None:
    """render checks its earlier tree in a Background process while it imports the stages."""
    with Background(os.getpid) as background:
        assert background.result() != os.getpid()
    with Background(lambda: int("not a number")) as failing, pytest.raises(ValueError, match="not a number"):
        failing.result()
    with Background(lambda: os._exit(3)) as dying, pytest.raises(RuntimeError, match="died without a result"):
        dying.result()


def test_leaving_a_background_process_unasked_ends_it(tmp_path: Path) -> None:
    """A render that stops early (an input error) does not leave its check running."""
    started = tmp_path / "started"

    def sleep_long() -> None:
        started.write_text("yes")
        time.sleep(60)

    begun = time.monotonic()
    with Background(sleep_long) as background:
        while not started.exists() and time.monotonic() - begun < 10:
            time.sleep(0.01)
        pid = background._pid
    assert pid is not None
    with pytest.raises(ChildProcessError):  # reaped: no such child any more
        os.waitpid(pid, os.WNOHANG)
    assert time.monotonic() - begun < 30


@pytest.mark.parametrize("count", [0, 1, 5, 8, 9])
def test_contiguous_runs_give_back_the_items_in_order(count: int) -> None:
    items = list(range(count))
    runs = contiguous(items, 4)
    assert [item for run in runs for item in run] == items
    assert len(runs) <= 4 and all(runs)  # no empty run, none for no items
