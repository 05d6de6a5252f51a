"""patchyaml writes nvue.yaml's body exactly as PyYAML's SafeDumper would, or hands the tree to PyYAML."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import fabricgen.platforms.nvue.render as nvue
from fabricgen.models.device import Fabric
from fabricgen.platforms.nvue import patchyaml


def pyyaml(tree: dict[Any, Any]) -> str:
    return yaml.dump([{"set": tree}], Dumper=yaml.SafeDumper, sort_keys=True, default_flow_style=False,
                     allow_unicode=False, width=1000)


# Words PyYAML reads as something else than a string (it single-quotes them), all within patchyaml's pattern.
QUOTED = ["0", "7", "010", "0x1F", "0o17", "0b101", "1_000", "1:20", "190:20:30", "1e3", "1.5", "6.8e+5", "on",
          "Off", "YES", "n", "y", "null", "Null", "true", "False", "2001-12-14", "2001-12-14t21:59:43.10-05:00"]
# Words outside the pattern (indicators, quotes, spaces at the ends, breaks, non-ASCII, too long): PyYAML's.
OTHER = [".inf", "-.inf", ".NaN", "~", "<<", "=", "-", "-1", "+1", "---", "...", "- a", "? a", ": a", "a: b",
         "a #b", "#a", "'a'", '"a"', "a'b", "@a", "`a", "%a", "&a", "*a", "!a", "|a", ">a", "[a]", "{a}", " a",
         "a ", "", "a\nb", "a\tb", "é", "\x7f", "x" * 128, "a " * 70]
# Any word patchyaml writes itself (its pattern, up to just past its length limit).
OWN = st.one_of(st.from_regex(patchyaml._PLAIN_SAFE, fullmatch=True).filter(lambda word: len(word) <= 125),
                st.sampled_from(QUOTED))


def trees(word: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    leaf = st.one_of(word, st.integers(min_value=-10**12, max_value=10**12))
    return st.recursive(st.dictionaries(word, leaf, max_size=3),
                        lambda inner: st.dictionaries(word, st.one_of(leaf, inner), max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(tree=trees(OWN))
def test_dump_is_pyyaml(tree: dict[str, Any]) -> None:
    assert patchyaml.dump(tree) == pyyaml(tree)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(tree=trees(st.one_of(OWN, st.sampled_from(OTHER))))
def test_dump_is_pyyaml_with_words_it_leaves_to_pyyaml(tree: dict[str, Any]) -> None:
    assert patchyaml.dump(tree) == pyyaml(tree)


def test_every_short_word_as_key_and_value() -> None:
    """Exhaustive over 1-2 characters of an alphabet with every indicator and quote PyYAML looks at."""
    alphabet = "aZ0_/.()+=@,-: #'\"~<>!*&|?[]{}%`\t\x7fé"
    for length in (1, 2):
        for letters in itertools.product(alphabet, repeat=length):
            word = "".join(letters)
            trees: tuple[dict[str, Any], ...] = ({word: word}, {"k": {word: {}}}, {word: 5})
            for tree in trees:
                assert patchyaml.dump(tree) == pyyaml(tree), repr(word)


@pytest.mark.parametrize("tree", [
    {},
    {"a": {}},
    {"a": True},  # PyYAML writes true: not this module's
    {1: "a", "b": "c"},  # non-str key
    {"k" * 128: "v"},  # PyYAML's simple-key limit
    {"a": 1.5},
])
def test_edge_cases(tree: dict[Any, Any]) -> None:
    assert patchyaml.dump(tree) == pyyaml(tree)


def test_a_dict_reached_twice_is_left_to_pyyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """PyYAML writes an anchor and an alias, or not when a library turned aliases off (junos-eznc does)."""
    shared: dict[str, Any] = {"x": "1"}
    tree = {"a": shared, "b": shared}
    assert patchyaml.dump(tree) == pyyaml(tree)
    monkeypatch.setattr(yaml.SafeDumper, "ignore_aliases", lambda self, data: True)
    assert patchyaml.dump(tree) == pyyaml(tree)


def test_a_changed_safedumper_is_left_to_pyyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """A library's representer or resolver for SafeDumper changes what PyYAML writes: patchyaml follows it."""
    def double_quoted(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')

    tree = {"interface": {"swp1": {"link": {"mtu": 9100}, "type": "swp"}}}
    representers: dict[Any, Any] = {**yaml.SafeDumper.yaml_representers, str: double_quoted}
    monkeypatch.setattr(yaml.SafeDumper, "yaml_representers", representers)
    assert patchyaml.dump(tree) == pyyaml(tree)
    assert '"swp"' in patchyaml.dump(tree)
    monkeypatch.undo()
    monkeypatch.setattr(yaml.SafeDumper, "yaml_implicit_resolvers", {})  # reads everything back as a string
    assert patchyaml.dump(tree) == pyyaml(tree)


def test_rendered_nvue_yaml_takes_the_fast_path(example_fabric: Fabric, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundled fabric's switches never need PyYAML (which would make nvue.yaml slow again)."""
    def refuse(*args: Any, **kwargs: Any) -> str:
        raise AssertionError("patchyaml handed the tree to PyYAML")

    monkeypatch.setattr(yaml, "dump", refuse)
    for device in example_fabric.devices.values():
        if device.qos is not None and device.mgmt is not None:
            tree = nvue.settings_tree(s for section in nvue.sections(device) for s in section.settings)
            assert patchyaml.dump(tree).startswith("- set:\n")
