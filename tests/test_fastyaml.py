"""The rapidyaml fast path reads plain YAML exactly as PyYAML does, and hands everything else back to PyYAML."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

import fabricgen.load.fastyaml as fastyaml
from fabricgen.load.fastyaml import load_plain
from fabricgen.load.yamlsource import parse_yaml

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = sorted([*ROOT.glob("intent/*.yaml"), *ROOT.glob("inventory/**/*.yaml")])


def reference(raw: bytes) -> Any:
    """What the project's PyYAML path reads (odd keys become strings, as the fast path must do too)."""
    doc, problems = parse_yaml(raw.decode(), "<test>")
    assert doc is not None and not problems
    return doc.data


def typed(value: Any) -> Any:
    """``value`` with every scalar's type made part of it: 1, 1.0 and True must not compare equal here."""
    if isinstance(value, dict):
        return {typed(key): typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    return (type(value).__name__, repr(value))


def same_as_pyyaml(raw: bytes) -> None:
    taken, data = load_plain(raw)
    if taken:
        assert typed(data) == typed(reference(raw))


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: str(p.relative_to(ROOT)))
def test_bundled_inputs_read_the_same(path: Path) -> None:
    raw = path.read_bytes()
    taken, data = load_plain(raw)
    if path.parent.name in ("inventory", "mixed"):
        assert taken, "inventories are plain YAML: the fast path must take them"
    if taken:
        assert typed(data) == typed(reference(raw))


SCALARS = ["yes", "No", "on", "OFF", "~", "null", "", "0x1F", "0o17", "017", "1_000", "1:30", ".inf", "-.Inf",
           ".nan", "1e3", "3.25", "+12", "-0", "true", "y", "400G", "Ethernet1/1", "r0-spine0:Ethernet0",
           "10.0.0.1", "a b", "'quoted'", '"dq"', "it's", "x # not a comment", "a#b", "key: value"]


@pytest.mark.parametrize("text", SCALARS)
def test_scalars_are_typed_as_pyyaml_types_them(text: str) -> None:
    for raw in (f"v: {text}\n", f"l: [{text}]\n", f"- {text}\n"):
        doc, problems = parse_yaml(raw, "<test>")
        taken, got = load_plain(raw.encode())
        if doc is None or problems:
            assert not taken, f"the fast path accepted what PyYAML refuses: {raw!r}"
        elif taken:
            assert typed(got) == typed(doc.data)  # 1 vs 1.0 vs True, nan included


@pytest.mark.parametrize("raw", [
    b"a: 1\na: 2\n",                       # duplicate key: PyYAML's path reports both lines
    b"a: [1, 2\nb: 3\n",                   # syntax error: PyYAML's message
    b"a: &x 1\nb: *x\n",                   # anchors
    b"a: !!str 1\n",                       # tags
    b"a: |\n  text\n",                     # block scalars
    b"base: {x: 1}\nb:\n  <<: {y: 2}\n",   # merge keys
    b"a: 1\n---\nb: 2\n",                  # several documents
    b"d: 2026-12-02\n",                    # a timestamp
    b"a: 1\n...\n",                        # document end marker
    b"x:\n\t- 1\n",                        # a tab as indentation
    b"s: \"tab\\tescape\"\n",              # escapes
])
def test_anything_beyond_plain_yaml_goes_to_pyyaml(raw: bytes, capfd: pytest.CaptureFixture[str]) -> None:
    assert load_plain(raw) == (False, None)
    assert capfd.readouterr().err == ""  # rapidyaml's own error print is kept off the user's terminal


WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./: #,'\"&*!|>%<?[]{}"
                         "\u00e9\u2192",
                min_size=0, max_size=12)
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), WORDS,
                   st.floats(allow_nan=False, allow_infinity=True, width=32))
DATA = st.recursive(LEAVES, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                    st.dictionaries(WORDS, inner, max_size=4)), max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(data=st.dictionaries(WORDS, DATA, min_size=1, max_size=5), flow=st.sampled_from([False, None, True]),
       indent=st.sampled_from([2, 4]), width=st.sampled_from([20, 80, 1000]))
def test_generated_documents_read_the_same(data: dict[str, Any], flow: bool | None, indent: int,
                                           width: int) -> None:
    same_as_pyyaml(yaml.safe_dump(data, default_flow_style=flow, indent=indent, width=width,
                                  sort_keys=False).encode())


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=" \t\r\n#:{}[],-?'\"abc1\x01\u2028", max_size=40))
@example(text="1\r:")  # a lone carriage return: a line break to PyYAML only (found by this test)
@example(text="[1:]")  # a colon touching a flow indicator: libyaml refuses it (found by this test)
@example(text="[:1]")
@example(text="?\n-1")  # an explicit key: libyaml and rapidyaml end it in different places (found by this test)
@example(text="{?1}")
@example(text="{ :1}")  # a flow entry starting with a colon: libyaml refuses it (found by this test)
def test_arbitrary_text_is_read_as_pyyaml_reads_it_or_declined(text: str) -> None:
    raw = text.encode()
    taken, data = load_plain(raw)
    if not taken:
        return
    doc, problems = parse_yaml(text, "<test>")
    assert doc is not None and not problems, f"the fast path accepted what PyYAML refuses: {raw!r}"
    assert typed(data) == typed(doc.data)


def test_empty_values_and_dashes_inside_words_stay_on_the_fast_path() -> None:
    raw = b"a:\nb: -1\nc: x-y\nd: ''\ne: [-x, y:z]\n"
    assert load_plain(raw) == (True, reference(raw))


@settings(max_examples=100, deadline=None)
@given(data=st.dictionaries(st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True),
                            st.dictionaries(st.from_regex(r"[A-Za-z][A-Za-z0-9/]{0,10}", fullmatch=True),
                                            st.one_of(st.integers(0, 10**6), st.sampled_from(["400G", "rs", "dac"])),
                                            max_size=5), min_size=1, max_size=5),
       flow=st.sampled_from([False, None]))
def test_inventory_shaped_documents_take_the_fast_path(data: dict[str, Any], flow: bool | None) -> None:
    raw = yaml.safe_dump(data, default_flow_style=flow).encode()
    taken, got = load_plain(raw)
    assert taken and typed(got) == typed(reference(raw))


@settings(max_examples=500, deadline=None)
@given(raw=st.binary(max_size=30) | st.lists(st.sampled_from(
    [b"a", b" ", b"\n", b"\r", b"\t", b"\\", b"\x01", b"\x7f", b"%", b"-", b".", b":", b"?", b"[", b"]", b"{", b"}",
     b",", b"\xc2\x85", b"\xc2", b"\xe2\x80\xa8", b"\xe2\x80", b"\xef\xbf\xbe", b"\xef\xbb\xbf", b"#"]),
    max_size=20).map(b"".join))
@example(raw=b"---")
@example(raw=b"a\n...")
@example(raw=b"a\r")
def test_the_fast_check_for_odd_text_answers_as_its_regex(raw: bytes) -> None:
    """load_plain looks for what the parsers read differently piece by piece (fast on 12 MB); it must find
    exactly what the one regex that defines it finds."""
    assert fastyaml._not_plain(raw) == (fastyaml._NOT_PLAIN_TEXT.search(raw) is not None)


def test_the_last_text_is_parsed_and_written_as_json_once() -> None:
    """lint --configs' depth check and the NVUE reader ask rapidyaml for the same nvue.yaml one after the other
    (fabricgen/runtime/rapidyaml.py): an equal text gets the same tree and JSON back, another text its own."""
    ryml = pytest.importorskip("ryml")
    from fabricgen.runtime.rapidyaml import emitted_json, parsed_in_arena

    text = "- set:\n    interface:\n      swp1:\n        link:\n          mtu: 9216\n"
    tree = parsed_in_arena(text.encode())
    assert parsed_in_arena(text.encode()) is tree  # an equal text in another bytes object
    written = emitted_json(tree)
    assert emitted_json(tree) is written and written == ryml.emit_json(ryml.parse_in_arena(text.encode()))
    other = parsed_in_arena(text.replace("9216", "1500").encode())
    assert other is not tree and "1500" in emitted_json(other) and "9216" not in emitted_json(other)
    assert emitted_json(tree) == written  # an older tree is written again, not given the newer one's JSON
