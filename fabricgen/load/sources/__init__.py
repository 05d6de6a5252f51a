"""Where the inventory comes from: one small interface in front of load's Nornir inheritance.

``-i`` names one of three sources, each of which hands load the same thing — Nornir hosts, groups and defaults
as plain data, plus documents that say where each value was written — so that inheritance, validation, cabling
checks and every later stage are the same whatever the source, and a fabric renders byte-identical from any
of them:

- a Nornir SimpleInventory directory (hosts.yaml, groups.yaml, defaults.yaml): load reads it itself;
- a compact directory (devices.yaml with per-role port templates, cabling.csv, and the same groups.yaml and
  defaults.yaml): :mod:`fabricgen.load.sources.compact`;
- a Nautobot (``nautobot://HOST`` or ``nautobots://HOST``, or a Nornir config file whose inventory plugin is
  nornir-nautobot's ``NautobotInventory``): :mod:`fabricgen.load.sources.nautobot`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from fabricgen.load.yamlsource import YamlDocument
from fabricgen.models.diagnostics import Diagnostic

HOSTS, GROUPS, DEFAULTS = "hosts.yaml", "groups.yaml", "defaults.yaml"
"""the labels load gives the three Nornir layers, whatever file (or service) each came from"""
HOST_KEYS = ("hostname", "platform", "groups", "data", "port", "username", "password", "connection_options")
"""the keys of a Nornir host that Nornir's SimpleInventory reads"""


@dataclass
class NornirData:
    """An inventory as Nornir's SimpleInventory would hold it after reading its files: hosts and groups by name
    (each a mapping), defaults, and per layer (HOSTS, GROUPS, DEFAULTS) a document whose source map locates each
    key path — in whatever file, table row or API object it came from."""

    hosts: dict[str, Any]
    groups: dict[str, Any]
    defaults: dict[str, Any]
    docs: dict[str, YamlDocument] = field(default_factory=dict)


class InventorySource(Protocol):
    """An inventory other than the SimpleInventory files."""

    def read(self, problems: list[Diagnostic], hashes: dict[str, str], jobs: int) -> NornirData | None:
        """The inventory as Nornir data; None when a problem (added to ``problems``) leaves nothing to validate.
        ``hashes`` gets label → sha256 of each input read, as the manifest records them."""
        ...


def open_source(inventory: Path) -> InventorySource | None:
    """The source ``-i`` names, or None for a Nornir SimpleInventory directory (load reads that itself)."""
    import fabricgen.load.sources.compact as compact
    import fabricgen.load.sources.nautobot as nautobot

    named = nautobot.url_of(inventory)
    if named is not None:
        url, filters = named
        return nautobot.NautobotSource(url, filter_parameters=filters, origin=f"{url}/dcim/devices/")
    if nautobot.is_nornir_config(inventory):
        return nautobot.NautobotSource.from_nornir_config(inventory)
    if compact.is_compact(inventory):
        return compact.CompactSource(inventory)
    return None
