"""The YAML parse cache: an unchanged file is not parsed twice; a changed or damaged entry is parsed again."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fabricgen import fastyaml, yamlsource
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


def big_hosts(count: int, cable: int = 3) -> str:
    """A hosts.yaml past the size where entries are cached one by one."""
    ports = "".join(f"      Ethernet{p}: {{speed: 400G, fec: rs, peer: \"h{p}:eth0\", cable_m: {cable}}}\n"
                    for p in range(12))
    return "# generated\n\n" + "".join(f"leaf{i}:\n  hostname: 10.0.{i // 250}.{i % 250}\n  data:\n    ports:\n"
                                       f"{ports}" for i in range(count))


def test_a_changed_large_file_parses_only_its_changed_entries(cache: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "hosts.yaml"
    text = big_hosts(300)
    assert len(text) > yamlsource.BY_ENTRY_MIN_BYTES
    path.write_text(text)
    load_yaml(path)
    changed = text.replace("leaf7:\n  hostname: 10.0.0.7", "leaf7:\n  hostname: 10.0.0.77")
    path.write_text(changed)
    parsed: list[bytes] = []
    real = fastyaml.load_plain

    def counting(raw: bytes, max_depth: int, max_nodes: int) -> tuple[bool, object]:
        parsed.append(raw)
        return real(raw, max_depth, max_nodes)

    monkeypatch.setattr(yamlsource, "load_plain", counting)
    doc, problems = load_yaml(path)
    assert problems == [] and doc is not None
    assert doc.data == yaml.load(changed, Loader=yaml.CSafeLoader)
    assert [raw.split(b":")[0] for raw in parsed] == [b"leaf7"]


@pytest.mark.parametrize("trouble", [
    "spare: {hostname: 10.9.0.5, data: {ports: {a: 1,\nb: 2}}}\n",  # a flow mapping running on at column 0
    "leaf3:\n  hostname: 1.2.3.4\n",                                 # a duplicate top-level key
    "? spare\n: {hostname: 10.9.0.6}\n",                             # an explicit key over two lines
])
def test_entries_that_do_not_stand_alone_read_the_whole_file(trouble: str, cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "hosts.yaml"
    text = big_hosts(300) + trouble
    path.write_text(text)
    doc, problems = load_yaml(path)
    try:
        expected = yaml.load(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        assert doc is None and problems
        return
    if "leaf3:\n  hostname: 1.2.3.4" in trouble:
        assert problems and "duplicate key 'leaf3'" in problems[0].message
    else:
        assert problems == [] and doc is not None and doc.data == expected


@pytest.mark.parametrize("odd", [
    "# a comment\u0085spare: {hostname: 10.9.0.7}\n",  # NEL ends a line for PyYAML: the comment hides a device
    "\ufeff",                                            # a byte-order mark before an entry is part of its key
])
def test_text_an_entry_read_alone_would_misread_reads_the_whole_file(odd: str, cache: Path, tmp_path: Path) -> None:
    """Found by review: the header's NEL and a mid-file byte-order mark read differently entry by entry."""
    path = tmp_path / "hosts.yaml"
    text = big_hosts(300)
    text = odd + text if odd.startswith("#") else text.replace("\nleaf9:\n", f"\n{odd}leaf9:\n")
    path.write_text(text)
    doc, problems = load_yaml(path)
    try:
        expected = yaml.load(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:  # PyYAML refuses a byte-order mark after the start
        assert doc is None and problems
        return
    assert problems == [] and doc is not None and doc.data == expected


def test_a_document_marker_before_the_entries_is_read_entry_by_entry(cache: Path, tmp_path: Path) -> None:
    """yamllint's document-start rule puts `---` on top of every file: that must not cost the whole file."""
    path = tmp_path / "hosts.yaml"
    text = "# hosts\n---\n" + big_hosts(300)
    path.write_text(text)
    doc, problems = load_yaml(path)
    assert problems == [] and doc is not None and doc.data == yaml.load(text, Loader=yaml.CSafeLoader)
    assert len(list(cache.glob("entries-*.marshal"))) == 1


@pytest.mark.parametrize("trouble", ["", "spare: {a: 1,\nb: 2}\n"])
def test_entries_parsed_in_several_processes_read_the_same(trouble: str, cache: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A large file nobody parsed yet is split over --jobs processes; the data is what one process reads."""
    monkeypatch.setattr(yamlsource, "PARALLEL_MIN_ENTRIES", 10)
    path = tmp_path / "hosts.yaml"
    text = big_hosts(300) + trouble
    path.write_text(text)
    doc, problems = load_yaml(path, jobs=2)
    assert problems == [] and doc is not None
    assert doc.data == yaml.load(text, Loader=yaml.CSafeLoader)
