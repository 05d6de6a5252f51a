"""A SimpleInventory written out as another source: the compact form (devices.yaml + cabling.csv).

Faithful by construction: each host entry is kept as it is but for its ports, which move to a template (shared
by every host with the same port table, runs of ports folded into ranges) and, for the cabled ones, to one
line of cabling.csv per cable. groups.yaml and defaults.yaml are copied byte for byte. The compact form then
loads to the same devices and links, so it renders the same tree.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fabricgen.load.sources import DEFAULTS, GROUPS, HOSTS
from fabricgen.load.sources.compact import CABLING_FILE, COLUMNS, DEVICES_FILE, NAMESPACE
from fabricgen.load.yamlsource import load_yaml
from fabricgen.models.diagnostics import InputError

MIN_RUN = 3
"""ports in a row that become one range key (two stay as they are: a range would be no shorter)"""


class ExportError(Exception):
    """The inventory cannot be written in the other form; the message says why and what to change."""


@dataclass
class CompactForm:
    templates: dict[str, list[tuple[str, Any]]] = field(default_factory=dict)
    devices: dict[str, dict[str, Any]] = field(default_factory=dict)
    cables: dict[tuple[tuple[str, str], tuple[str, str]], list[Any]] = field(default_factory=dict)

    def devices_yaml(self) -> str:
        lines = ["# fabricgen compact inventory: port templates and devices (Nornir hosts); cables in cabling.csv",
                 "templates:"]
        for name, ports in self.templates.items():
            lines.append(f"  {_scalar(name)}:")
            lines += [f"    {_scalar(key)}: {_flow(spec)}" for key, spec in ports]
        lines.append("devices:")
        lines += [f"  {_scalar(name)}: {_flow(entry)}" for name, entry in self.devices.items()]
        return "\n".join(lines) + "\n"

    def cabling_csv(self) -> str:
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(COLUMNS)
        for (a, b), (cable_m, media) in self.cables.items():
            writer.writerow([*a, *b, "" if cable_m is None else cable_m, media or ""])
        return text.getvalue()


def export_compact(inventory: Path, out: Path) -> CompactForm:
    """Write the SimpleInventory at ``inventory`` as a compact inventory into ``out`` (created if absent)."""
    hosts = _read(inventory / HOSTS)
    form = CompactForm()
    signatures: dict[str, str] = {}
    for name, entry in hosts.items():
        form.devices[str(name)] = _device(str(name), entry, form, signatures)
    out.mkdir(parents=True, exist_ok=True)
    (out / DEVICES_FILE).write_text(form.devices_yaml())
    (out / CABLING_FILE).write_text(form.cabling_csv())
    for name in (GROUPS, DEFAULTS):
        if (inventory / name).exists():
            shutil.copyfile(inventory / name, out / name)
    return form


def _read(path: Path) -> dict[Any, Any]:
    doc, problems = load_yaml(path)
    if problems or doc is None:
        raise InputError(problems)
    if not isinstance(doc.data, dict):
        raise ExportError(f"{path}: not a mapping of hosts")
    return doc.data


def _device(name: str, written: Any, form: CompactForm, signatures: dict[str, str]) -> dict[str, Any]:
    if not isinstance(written, dict | None):
        raise ExportError(f"host {name}: not a mapping; fix hosts.yaml first (`fabricgen lint` says where)")
    entry: dict[str, Any] = dict(written or {})
    data = entry.get("data")
    if not isinstance(data, dict):
        return entry
    data = entry["data"] = dict(data)
    holder = data
    if isinstance(data.get(NAMESPACE), dict):
        holder = data[NAMESPACE] = dict(data[NAMESPACE])
    ports = holder.get("ports")
    if not isinstance(ports, dict):
        return entry
    table = [(str(port), _uncabled(name, str(port), spec, form)) for port, spec in ports.items()]
    del holder["ports"]
    if not data:
        del entry["data"]  # (an emptied `data: {fabricgen: {}}` stays: it says which layout the host uses)
    entry["template"] = _template(entry, table, form, signatures)
    return entry


def _uncabled(name: str, port: str, spec: Any, form: CompactForm) -> Any:
    """A port's settings without its cable, which goes to the table (once, whichever end declares it)."""
    if not isinstance(spec, dict) or "peer" not in spec:
        return spec
    spec = dict(spec)
    peer, cable_m, media = spec.pop("peer"), spec.pop("cable_m", None), spec.pop("media", None)
    far_device, _, far_port = str(peer).partition(":")
    here, there = (name, port), (far_device, far_port)
    key = (there, here) if (there, here) in form.cables else (here, there)
    known = form.cables.setdefault(key, [cable_m, media])
    for index, value in enumerate((cable_m, media)):
        if value is not None and known[index] not in (None, value):
            raise ExportError(f"{name}:{port} and {peer} disagree on {COLUMNS[4 + index]} ({known[index]} vs "
                              f"{value}); fix hosts.yaml first (`fabricgen lint` says where)")
        known[index] = known[index] if known[index] is not None else value
    return spec


def _template(entry: dict[str, Any], table: list[tuple[str, Any]], form: CompactForm,
              signatures: dict[str, str]) -> str:
    """The name of the template holding ``table``: an existing one with the same ports, else a new one named
    after the host's first group."""
    signature = repr(table)
    if signature in signatures:
        return signatures[signature]
    groups = entry.get("groups")
    base = str(groups[0]) if isinstance(groups, list) and groups else "ports"
    name, number = base, 1
    while name in form.templates:
        number += 1
        name = f"{base}-{number}"
    form.templates[name] = compress(table)
    signatures[signature] = name
    return name


# --- ranges ------------------------------------------------------------------------------------------------

_NUMBER = re.compile(r"\d+")


def compress(ports: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Runs of ports that differ in one number by a constant step, with the same settings (lanes counted from
    that number), as one range key each; the order of the ports kept."""
    result: list[tuple[str, Any]] = []
    index = 0
    while index < len(ports):
        key, spec, length = _longest_run(ports, index)
        result.append((key, spec) if length >= MIN_RUN else ports[index])
        index += length if length >= MIN_RUN else 1
    return result


def _longest_run(ports: list[tuple[str, Any]], start: int) -> tuple[str, Any, int]:
    best: tuple[str, Any, int] = (ports[start][0], ports[start][1], 1)
    for field_index in range(len(_NUMBER.findall(ports[start][0]))):
        run = _run(ports, start, field_index)
        if run[2] > best[2]:
            best = run
    return best


def _run(ports: list[tuple[str, Any]], start: int, field_index: int) -> tuple[str, Any, int]:
    split = _split(ports[start][0], field_index)
    if split is None:
        return ports[start][0], ports[start][1], 1
    head, first, tail = split
    spec = _abstract(ports[start][1], first)
    last, step, end = first, 0, start + 1
    while end < len(ports):
        found = _split(ports[end][0], field_index)
        if found is None or found[0] != head or found[2] != tail or found[1] <= last:
            break
        if (step and found[1] - last != step) or _abstract(ports[end][1], found[1]) != spec:
            break
        step, last, end = found[1] - last, found[1], end + 1
    span = f"{first}..{last}" + (f"..{step}" if step > 1 else "")
    return f"{head}{{{span}}}{tail}", spec, end - start


def _split(name: str, field_index: int) -> tuple[str, int, str] | None:
    """``name`` around its ``field_index``-th number: (text before, the number, text after); None when it has
    no such number or writes it with a leading zero (a range would not give the name back)."""
    found = list(_NUMBER.finditer(name))
    if field_index >= len(found) or "{" in name or "}" in name:
        return None
    match = found[field_index]
    if str(int(match[0])) != match[0]:
        return None
    return name[:match.start()], int(match[0]), name[match.end():]


def _abstract(spec: Any, number: int) -> Any:
    """Port settings as a range writes them for port ``number``: consecutive lanes as ``{n+K}..{n+L}``."""
    if not isinstance(spec, dict) or not isinstance(spec.get("lanes"), str):
        return spec
    lanes = spec["lanes"].split(",")
    if not all(lane.isdecimal() and str(int(lane)) == lane for lane in lanes):
        return spec
    first = int(lanes[0])
    if [int(lane) for lane in lanes] != list(range(first, first + len(lanes))) or len(lanes) < 2:
        return spec
    return {**spec, "lanes": f"{_placeholder(first - number)}..{_placeholder(first + len(lanes) - 1 - number)}"}


def _placeholder(offset: int) -> str:
    return "{n}" if offset == 0 else f"{{n+{offset}}}" if offset > 0 else f"{{n-{-offset}}}"


# --- YAML text -------------------------------------------------------------------------------------------

def _flow(value: Any) -> str:
    return yaml.safe_dump(value, default_flow_style=True, width=1 << 30, sort_keys=False).strip()


def _scalar(value: Any) -> str:
    return _flow([value])[1:-1]
