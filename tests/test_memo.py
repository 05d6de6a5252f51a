"""Render-time caches: results remembered per object (by_identity) and compiled templates."""

from __future__ import annotations

import pytest

from fabricgen.api import generate
from fabricgen.platforms.common.memo import by_identity
from fabricgen.platforms.common.templating import Templates
from fabricgen.resolve import resolve

from conftest import ROOT, load_example


class Box:
    def __init__(self, value: int) -> None:
        self.value = value


def test_by_identity_remembers_per_object_and_arguments() -> None:
    calls: list[tuple[int, str]] = []

    @by_identity
    def label(box: Box, suffix: str) -> str:
        calls.append((box.value, suffix))
        return f"{box.value}{suffix}"

    one, other = Box(1), Box(1)
    assert [label(one, "a"), label(one, "a"), label(one, "b"), label(other, "a")] == ["1a", "1a", "1b", "1a"]
    assert calls == [(1, "a"), (1, "b"), (1, "a")]  # an equal but different object is computed again
    with pytest.raises(TypeError, match="by position"):
        label(one, suffix="a")


def test_by_identity_stays_bounded_and_correct_past_its_size() -> None:
    @by_identity
    def double(box: Box) -> int:
        return box.value * 2

    boxes = [Box(n) for n in range(100)]
    assert [double(box) for box in boxes] == [2 * n for n in range(100)]
    assert len(double._cache) <= 16


def _golden(example: str) -> dict[str, str]:
    folder = ROOT / "golden" / example
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "manifest.json"}


def test_fabrics_rendered_in_one_process_do_not_share_cached_parts() -> None:
    """Each fabric's QoS is formatted from its own QosModel, whatever was rendered before: fabrics of different
    QoS (minimal: the roce profile's defaults; mixed: every platform) rendered in turn match their goldens."""
    fabrics = {}
    for example in ("fabric", "minimal", "mixed"):
        loaded = load_example(example)
        fabrics[example] = resolve(loaded.intent, loaded.inventory, loaded.locate)
    for example in ("fabric", "minimal", "mixed", "fabric", "minimal", "mixed"):
        assert generate(fabrics[example]) == _golden(example), example


def test_templates_compile_once() -> None:
    templates = Templates()
    assert templates.template("eos/device.cfg.j2") is templates.template("eos/device.cfg.j2")
    assert templates.env.auto_reload is False
