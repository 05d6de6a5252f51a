"""How fabricgen reads Nautobot's values (no server needed): the -i spellings, cable lengths and cable types."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricgen.load.sources.nautobot import TYPE_FROM_MEDIA, media_of, metres, url_of


@pytest.mark.parametrize(("given", "url", "filters"), [
    ("nautobot://nautobot.example.net", "http://nautobot.example.net", {}),
    ("nautobots://nautobot.example.net:8443/", "https://nautobot.example.net:8443", {}),
    # click hands -i over as a Path, which folds the double slash
    (Path("nautobots://nautobot.example.net"), "https://nautobot.example.net", {}),
    ("nautobot://127.0.0.1:8080?location=dc1&role=leaf", "http://127.0.0.1:8080", {"location": "dc1", "role": "leaf"}),
])
def test_the_inventory_option_names_a_nautobot(given: str | Path, url: str, filters: dict[str, str]) -> None:
    assert url_of(given) == (url, filters)


def test_a_directory_is_not_a_nautobot() -> None:
    assert url_of(Path("inventory")) is None
    assert url_of("site/nautobot") is None


@pytest.mark.parametrize(("length", "unit", "expected"), [
    (30, "m", 30), ("2.5", "m", 3), (250, "cm", 3), (100, "ft", 31), (None, None, None), ("x", "m", "x m")])
def test_cable_length_in_whole_metres_rounded_up(length: object, unit: str | None, expected: object) -> None:
    assert metres(length, unit) == expected


def test_every_media_survives_the_round_trip_through_a_cable_type() -> None:
    assert {media: media_of(cable_type) for media, cable_type in TYPE_FROM_MEDIA.items()} == {
        media: media for media in TYPE_FROM_MEDIA}
    assert media_of("mmf-om4") == media_of("smf-os2") == "optic"
    assert media_of("cat5e") == "copper"
    assert media_of(None) is None
