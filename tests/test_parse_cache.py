"""The YAML parse cache: an unchanged file is not parsed twice; a changed or damaged entry is parsed again."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricgen import yamlsource
from fabricgen.diagnostics import Location
from fabricgen.yamlsource import load_yaml


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("FABRICGEN_CACHE_DIR", str(folder))
    monkeypatch.delenv("FABRICGEN_NO_CACHE", raising=False)
    return folder


def test_unchanged_file_comes_from_the_cache(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "hosts.yaml"
    path.write_text("leaf1:\n  hostname: 192.0.2.11\n  data: {ports: {Ethernet0: {speed: 400G}}}\n")
    first, problems = load_yaml(path)
    assert first is not None and problems == []
    assert len(list(cache.glob("*.marshal"))) == 1

    def no_parsing(*_: object) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr(yamlsource, "parse_yaml", no_parsing)
    monkeypatch.setattr(yamlsource, "load_plain", no_parsing)
    second, _ = load_yaml(path)
    assert second is not None and second.data == first.data
    monkeypatch.undo()  # locations are built from the text on demand, by parsing it then
    assert second.at(("leaf1", "data")) == first.at(("leaf1", "data")) == Location(str(path), 3, 3)


def test_changed_file_is_parsed_again(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "intent.yaml"
    path.write_text("a: 1\n")
    load_yaml(path)
    path.write_text("a: 2\na: 3\n")
    doc, problems = load_yaml(path)
    assert doc is not None and doc.data == {"a": 2}
    assert "duplicate key 'a'" in problems[0].message  # a file with problems is never served from the cache


def test_damaged_cache_entry_is_ignored(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("b: [1, 2]\n")
    load_yaml(path)
    for entry in cache.glob("*.marshal"):
        entry.write_bytes(b"not marshal data")
    doc, _ = load_yaml(path)
    assert doc is not None and doc.data == {"b": [1, 2]}


def test_cache_can_be_switched_off(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRICGEN_NO_CACHE", "1")
    path = tmp_path / "y.yaml"
    path.write_text("c: 1\n")
    load_yaml(path)
    assert not cache.exists()
