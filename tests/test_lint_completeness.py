"""Completeness by construction: `lint --configs` sees every owned setting on every port of every platform.

For each platform, the mixed example (one intent over leaves of all four switch NOSes and both host kinds) is
rendered; then, for every setting the platform's Capability lists in ``port_settings``, one port's config is
damaged as a person or another tool would damage it (tests/mutations/<platform>.py: the value changed, the line
removed, a stray one added) and the configs are linted as `fabricgen lint --configs` lints them. Each damage
must give findings, all of them about that device and port (as the finding's subject or its peer). The cases come
from the capability records: a setting a reader reads but the capability does not list, or one listed without a
mutation, fails here.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from fabricgen.api import render_device
from fabricgen.lint import Finding, lint
from fabricgen.lint.configs import read_configs
from fabricgen.models.device import DeviceModel, Fabric
from fabricgen.platforms import get_platform, platform_names
from fabricgen.resolve import resolve

from conftest import load_example
from mutations import KINDS, Files, mutations

EXAMPLE = "mixed"
PER_PORT_SECTIONS = ("ports", "nics")
DATA_ROLES = ("host", "fabric")


@functools.cache
def fabric() -> Fabric:
    loaded = load_example(EXAMPLE)
    return resolve(loaded.intent, loaded.inventory, loaded.locate)


@functools.cache
def rendered() -> dict[str, Files]:
    return {name: render_device(device) for name, device in fabric().devices.items()}


def target(platform: str) -> tuple[DeviceModel, str]:
    """The example's first device of ``platform`` and its first cabled data port (a host: its first NIC)."""
    device = next(d for _, d in sorted(fabric().devices.items()) if d.platform == platform)
    if device.host is not None:
        return device, next(nic.interface for nic in device.host.nics if nic.peer)
    return device, next(p.name for p in device.ports if p.peer and p.role in DATA_ROLES)


def findings(tmp_path: Path, damaged: dict[str, Files]) -> list[Finding]:
    """What `fabricgen lint --configs` finds in the example's rendered configs with ``damaged`` devices' files."""
    for name, files in {**rendered(), **damaged}.items():
        folder = tmp_path / name
        folder.mkdir(parents=True)
        for file, text in files.items():
            (folder / file).write_text(text)
    configs = read_configs(fabric(), tmp_path)
    return lint(configs.fabric, evidence=configs.evidence).findings


def about(finding: Finding, device: str, port: str) -> bool:
    return (finding.device, finding.port) == (device, port) or finding.peer == f"{device}:{port}"


def cases() -> list[tuple[str, str, str]]:
    """(platform, setting, kind) for every setting every capability lists, and every kind its table mutates;
    a setting without a mutation is a case with kind "" (it fails, naming what to add)."""
    found = []
    for platform in platform_names():
        table = mutations(platform)
        for setting in get_platform(platform).capability.port_settings:
            kinds = [kind for kind in KINDS if kind in table.get(setting, {})]
            found += [(platform, setting, kind) for kind in kinds or [""]]
    return found


def test_the_rendered_example_lints_clean_from_its_configs(tmp_path: Path) -> None:
    assert [f"{f.rule} {f.subject}: {f.message}" for f in findings(tmp_path, {})] == []


@pytest.mark.parametrize("platform", platform_names())
def test_every_per_port_setting_a_reader_reads_is_listed_and_mutated(platform: str) -> None:
    device, port = target(platform)
    owned = get_platform(platform).owned
    assert owned is not None
    view = owned(device)
    section = next(s for s in PER_PORT_SECTIONS if s in view)
    read = set(view[section][port])
    capability = get_platform(platform).capability
    assert read <= set(capability.port_settings), \
        f"{platform} reads {sorted(read - set(capability.port_settings))} per port: list them in port_settings"
    table = mutations(platform)
    assert set(table) <= set(capability.port_settings), f"mutations of settings {platform} does not list"


@pytest.mark.parametrize(("platform", "setting", "kind"), cases())
def test_damage_to_one_port_is_found_there_and_nowhere_else(tmp_path: Path, platform: str, setting: str,
                                                             kind: str) -> None:
    assert kind, f"no mutation of {platform} {setting!r}: add one to tests/mutations/{platform.replace('-', '_')}.py"
    device, port = target(platform)
    mutate = mutations(platform)[setting][kind]
    damaged = mutate(dict(rendered()[device.name]), device, port)
    assert damaged != rendered()[device.name], "the mutation changed nothing"
    found = findings(tmp_path, {device.name: damaged})
    assert found, f"{kind} {setting} on {device.name}:{port} lints clean"
    elsewhere = [f"{f.rule} {f.subject}: {f.message}" for f in found if not about(f, device.name, port)]
    assert elsewhere == [], f"{kind} {setting} on {device.name}:{port} is reported elsewhere"
