"""The YAML parse cache: an unchanged file is not parsed twice; a changed, damaged or forged entry is parsed again;
the cache is private to the user and never holds data that carries a credential."""

from __future__ import annotations

import marshal
import os
import stat
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import fabricgen.load.fastyaml as fastyaml
import fabricgen.load.inventorycache as inventorycache
import fabricgen.load.parsecache as parsecache
import fabricgen.load.yamlsource as yamlsource
from fabricgen.load.parsecache import blob_may_carry_secret, carries_secret
from fabricgen.load.yamlsource import load_yaml
from fabricgen.models.diagnostics import Location


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


def counted_parses(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Each text load_yaml's fast path parses from now on, in order."""
    parsed: list[bytes] = []
    real = fastyaml.load_plain

    def counting(raw: bytes, max_depth: int, max_nodes: int) -> tuple[bool, object]:
        parsed.append(raw)
        return real(raw, max_depth, max_nodes)

    monkeypatch.setattr(yamlsource, "load_plain", counting)
    return parsed


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
    parsed = counted_parses(monkeypatch)
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


def test_a_file_read_entry_by_entry_is_located_entry_by_entry(cache: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Lint locates every finding: a few hosts' findings parse those hosts' entries again, not the whole file,
    and each key is where the whole file's parse puts it (a header, comments and a blank line before an entry
    included). A path outside every entry is asked of the whole file."""
    path = tmp_path / "hosts.yaml"
    text = "# hosts\n---\n" + big_hosts(300).replace("\nleaf9:\n", "\n# the ninth\n\nleaf9:\n")
    path.write_text(text)
    doc, problems = load_yaml(path)
    assert problems == [] and doc is not None and doc.read_alone
    whole, _ = yamlsource.parse_yaml(text, str(path))
    assert whole is not None
    parsed: list[str] = []
    real = yamlsource.parse_yaml

    def counting(entry: str, name: str) -> object:
        parsed.append(entry.split(":")[0])
        return real(entry, name)

    monkeypatch.setattr(yamlsource, "parse_yaml", counting)
    asked = [("leaf9", "data", "ports", "Ethernet11", "cable_m"), ("leaf299", "hostname"), ("leaf9",),
             ("leaf0", "data", "ports", "Ethernet99")]  # the last is not in the file: its closest ancestor
    assert [doc.at(key) for key in asked] == [whole.at(key) for key in asked]
    assert doc.at(("leaf9",)).line == text.splitlines().index("leaf9:") + 1
    assert parsed == ["leaf9", "leaf299", "leaf0"]
    assert doc.at(("no-such-host", "data")) == whole.at(("no-such-host", "data"))
    assert len(parsed) == 4  # the whole file, for the key it does not have
    for key in whole.source.locations:
        assert doc.source.exact(key) == whole.source.exact(key), key


def test_what_one_parser_version_read_is_not_kept_for_another(cache: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """An upgraded PyYAML or rapidyaml may read the same bytes otherwise: a parse, a kept inventory and a kept lint
    report are keyed by the parsers' versions too (a CI runner keeps its cache across `pip install -U`)."""
    path = tmp_path / "hosts.yaml"
    path.write_text("leaf1:\n  hostname: 192.0.2.11\n")
    load_yaml(path)
    digest = inventorycache.code_digest.__wrapped__()
    parsed = counted_parses(monkeypatch)
    load_yaml(path)
    assert parsed == []  # the same parsers: from the cache
    upgraded = fastyaml.PARSERS + " (upgraded)"
    monkeypatch.setattr(yamlsource, "PARSERS", upgraded)
    monkeypatch.setattr(inventorycache, "PARSERS", upgraded)
    load_yaml(path)
    assert len(parsed) == 1
    assert inventorycache.code_digest.__wrapped__() != digest


# --- the cache is sealed, private, and holds no secret --------------------------------------------------------

def cached_files(cache: Path) -> list[Path]:
    return sorted(path for path in cache.rglob("*") if path.is_file())


def test_an_entry_made_from_other_bytes_is_refused(cache: Path, tmp_path: Path) -> None:
    """A poisoned entry: the cache file of one input put under the name of another's. The render reads what the
    file says, not what the cache says, and the refused entry is replaced."""
    honest, other = tmp_path / "honest.yaml", tmp_path / "other.yaml"
    honest.write_text("mtu: 9100\n")
    other.write_text("mtu: 1500\n")
    load_yaml(other)
    [poison] = cached_files(cache)
    load_yaml(honest)
    [honest_entry] = [path for path in cached_files(cache) if path != poison]
    honest_entry.write_bytes(poison.read_bytes())
    doc, problems = load_yaml(honest)
    assert problems == [] and doc is not None and doc.data == {"mtu": 9100}
    assert honest_entry.read_bytes() != poison.read_bytes()  # deleted on refusal, written again from the file


def test_an_entry_another_parser_made_is_not_read(cache: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """After an upgrade (or a fix) of the YAML reading code, what the older parser made from the same bytes is
    parsed again: the seal carries the parsing code's fingerprint."""
    path = tmp_path / "hosts.yaml"
    path.write_text("mtu: 9100\n")
    load_yaml(path)
    [entry] = cached_files(cache)
    assert entry.read_bytes().startswith(parsecache.SEAL)
    monkeypatch.setattr(parsecache, "SEAL", b"fabricgen-parse-cache/1 0000000000000000\n")

    def parsed(*_: object) -> None:
        raise RuntimeError("parsed again")

    monkeypatch.setattr(yamlsource, "parse_yaml", parsed)
    monkeypatch.setattr(yamlsource, "load_plain", parsed)
    with pytest.raises(RuntimeError, match="parsed again"):
        load_yaml(path)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_damaged_entry_never_changes_what_is_read(data: st.DataObject) -> None:
    """Any byte of a cache file flipped, or the file cut short: the data read is the file's."""
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as monkeypatch:
        cache = Path(folder) / "cache"
        monkeypatch.setenv("FABRICGEN_CACHE_DIR", str(cache))
        monkeypatch.delenv("FABRICGEN_NO_CACHE", raising=False)
        path = Path(folder) / "intent.yaml"
        path.write_text("roce: {dscp: 26, priority: 3}\nmtu: 9100\n")
        load_yaml(path)
        [entry] = cached_files(cache)
        raw = bytearray(entry.read_bytes())
        if data.draw(st.booleans(), label="cut short"):
            raw = raw[:data.draw(st.integers(0, len(raw) - 1), label="length")]
        else:
            at = data.draw(st.integers(0, len(raw) - 1), label="byte")
            raw[at] ^= data.draw(st.integers(1, 255), label="xor")
        entry.write_bytes(bytes(raw))
        doc, problems = load_yaml(path)
        assert problems == [] and doc is not None
        assert doc.data == {"roce": {"dscp": 26, "priority": 3}, "mtu": 9100}


def test_entries_are_private_whatever_the_umask(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "hosts.yaml"
    path.write_text(big_hosts(300))
    previous = os.umask(0)
    try:
        load_yaml(path)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    files = cached_files(cache)
    assert {path.name.split("-")[0] for path in files} >= {"entries"} and len(files) >= 2
    assert {stat.S_IMODE(path.stat().st_mode) for path in files} == {0o600}


def test_a_cache_folder_others_may_read_is_made_private(cache: Path, tmp_path: Path) -> None:
    cache.mkdir(mode=0o755)
    cache.chmod(0o755)
    path = tmp_path / "x.yaml"
    path.write_text("a: 1\n")
    load_yaml(path)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700 and len(cached_files(cache)) == 1


@pytest.mark.parametrize("folder", ["group-writable", "world-writable", "another user's", "a file"])
def test_a_cache_folder_that_is_not_private_is_not_used(folder: str, cache: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries someone else could have planted are never read, and nothing is written there: no cache at all."""
    if folder == "a file":
        cache.write_text("not a folder\n")
    else:
        cache.mkdir()
        cache.chmod({"group-writable": 0o770, "world-writable": 0o777}.get(folder, 0o700))
    if folder == "another user's":
        if os.geteuid() != 0:
            pytest.skip(reason="giving a folder to another user needs root")
        os.chown(cache, 65534, 65534)  # nobody
    before = sorted(cache.rglob("*")) if cache.is_dir() else []
    path = tmp_path / "x.yaml"
    path.write_text("a: 1\n")
    assert yamlsource.cache_dir() is None
    parsed = counted_parses(monkeypatch)
    for _ in range(2):
        doc, _ = load_yaml(path)
        assert doc is not None and doc.data == {"a": 1}
    assert len(parsed) == 2  # parsed each time
    assert (sorted(cache.rglob("*")) if cache.is_dir() else []) == before


SECRET = "Pl4nted-s3cret"
SECRET_KEYS = {
    "password": f"password: {SECRET}",
    "connection_options password": f"connection_options: {{netmiko: {{password: {SECRET}}}}}",
    "netmiko enable secret": f"connection_options: {{netmiko: {{extras: {{secret: {SECRET}}}}}}}",
    "an api token in data": f"data: {{api_token: {SECRET}}}",
    "an environment variable reference": "password: ${SWITCH_PASSWORD}",
}


@pytest.mark.parametrize("where", SECRET_KEYS)
@pytest.mark.parametrize("size", ["small", "large"])
def test_data_carrying_a_secret_is_never_cached(where: str, size: str, cache: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Small files are cached whole, large ones entry by entry: neither keeps an entry that carries a
    credential (nor a reference to one), while the entries without one are still cached."""
    monkeypatch.setenv("SWITCH_PASSWORD", SECRET)
    secret_line = SECRET_KEYS[where].replace("${SWITCH_PASSWORD}", "'${SWITCH_PASSWORD}'")
    text = f"spare9:\n  hostname: 10.9.0.9\n  {secret_line}\n"
    path = tmp_path / "hosts.yaml"
    path.write_text(big_hosts(300) + text if size == "large" else text)
    for _ in range(2):  # the second load finds the cache the first one left
        doc, problems = load_yaml(path)
        assert problems == [] and doc is not None
        assert doc.data == yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
    stored = b"".join(entry.read_bytes() for entry in cached_files(cache))
    assert SECRET.encode() not in stored and b"SWITCH_PASSWORD" not in stored
    if size == "large":  # every other host is cached, on its own
        table_path = yamlsource.entry_table_path(path)
        assert table_path is not None and len(yamlsource.read_entry_table(table_path)) == 300


@pytest.mark.parametrize("key", ["hostname", "port_speed", "Ethernet0", "spine-keep"])
def test_plain_keys_are_not_secrets(key: str) -> None:
    assert not carries_secret({"leaf1": {key: [{"a": 1}]}})


@pytest.mark.parametrize("key", ["password", "Password", "enable_secret", "api_token", "ssh_key_file",
                                 "private_key", "auth_username", "connection_options", "PASSPHRASE"])
def test_credential_keys_are_secrets_at_any_depth(key: str) -> None:
    assert carries_secret({"leaf1": {"data": {"ports": [{"x": {key: "v"}}]}}})
    assert blob_may_carry_secret(marshal.dumps({"leaf1": [{key: "v"}]}))
