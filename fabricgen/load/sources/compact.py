"""The compact inventory: a cabling table plus per-role port templates, for fabrics too large to list as hosts.

A directory holding ``devices.yaml`` and ``cabling.csv`` (and Nornir's own ``groups.yaml`` and ``defaults.yaml``,
read as in a SimpleInventory)::

    # devices.yaml
    templates:                       # port tables, each shared by every device that names it
      sn4700:
        eth0: {speed: 1G}
        Ethernet{0..248..8}: {speed: 400G, fec: rs, lanes: "{n}..{n+7}"}
    devices:                         # Nornir hosts, as in hosts.yaml, plus `template`
      leaf1: {hostname: 192.0.2.11, groups: [leaves], template: sn4700}

    # cabling.csv: one cable a line
    a_device,a_port,b_device,b_port,cable_m,media
    leaf1,Ethernet224,spine1,Ethernet1/1,30,optic

A port key ``<text>{A..B}<text>`` (or ``{A..B..STEP}``) is one port per number from A to B (bounds without leading
zeros: see _padded_bound); in its values ``{n}`` is that number and ``{n+K}`` / ``{n-K}`` the number plus or minus
K, and a ``lanes`` value ``X..Y`` is the lanes X to Y. A device's own ``data.ports`` adds ports or replaces a
template's port whole. Each device becomes the Nornir host it would be in hosts.yaml, its ports those of its
template with each cable's ``peer``, ``cable_m`` and ``media`` set on the a-end port (a cable belongs to the table,
never to a template). Every problem is reported at its FILE:LINE, the table's at its row and column.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import marshal
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from fabricgen.load.sources import DEFAULTS, GROUPS, HOST_KEYS, HOSTS, NornirData
from fabricgen.load.yamlsource import (
    Entries,
    InputFileError,
    SourceMap,
    YamlDocument,
    load_yaml,
    read_input,
    record_hash,
)
from fabricgen.models.diagnostics import INPUT_FILE, INPUT_SCHEMA, Diagnostic, KeyPath, Location, format_key_path

DEVICES_FILE, CABLING_FILE = "devices.yaml", "cabling.csv"
FILES = (DEVICES_FILE, CABLING_FILE)
"""a compact inventory's own files (beside groups.yaml and defaults.yaml, as SimpleInventory has them)"""
COLUMNS = ("a_device", "a_port", "b_device", "b_port", "cable_m", "media")
CABLE_KEYS = ("peer", "cable_m", "media")
NAMESPACE = "fabricgen"
PORT_USED_TWICE = "FG-INV-002"  # the lint rule whose condition a port cabled twice is (as load's link checks)
MAX_RANGE_PORTS = 4096
"""ports one range key may make: a switch has at most a few hundred; a typo ({0..50000}) must not make a million"""

# ASCII digits only: `{٠..٣}` is not a range a switch's port names are made of (and int() would take it).
_RANGE = re.compile(r"^(?P<head>[^{}]*)\{(?P<first>\d+)\.\.(?P<last>\d+)(?:\.\.(?P<step>\d+))?\}(?P<tail>[^{}]*)$",
                    re.ASCII)
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_OFFSET = re.compile(r"^n(?:([+-])(\d+))?$", re.ASCII)
_LANE_SPAN = re.compile(r"^(\d+)\.\.(\d+)$", re.ASCII)


def is_compact(directory: Path) -> bool:
    """A compact inventory: ``devices.yaml`` and no ``hosts.yaml`` (with both, the SimpleInventory is read, and
    its hosts.yaml is what load reports on)."""
    return (directory / DEVICES_FILE).exists() and not (directory / HOSTS).exists()


class CompactSource:
    """devices.yaml + cabling.csv (+ groups.yaml, defaults.yaml) → Nornir data."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def read(self, problems: list[Diagnostic], hashes: dict[str, str], jobs: int) -> NornirData | None:
        docs: dict[str, YamlDocument] = {}
        layers: dict[str, dict[str, Any]] = {}
        for name in (GROUPS, DEFAULTS):
            doc = self._yaml(name, problems, hashes, jobs, required=False)
            layers[name] = _mapping_entries(doc, name, problems) if doc is not None else {}
            if doc is not None:
                docs[name] = doc
        devices_doc = self._yaml(DEVICES_FILE, problems, hashes, jobs, required=True)
        if devices_doc is None:
            return None
        table = _read_table(self.directory / CABLING_FILE, problems, hashes)
        built = _Builder(devices_doc, problems).build(table)
        if built is None:
            return None
        hosts, compact_hosts = built
        docs[HOSTS] = compact_hosts
        if table is not None:
            # Each host as built, for the render state of the neighbourhood update (before load reads them).
            compact_hosts.entries = Entries({name: marshal.dumps({name: host}) for name, host in hosts.items()},
                                          {}, read_alone=True, cabling=table.raw)
        defaults = docs[DEFAULTS].data if DEFAULTS in docs else {}
        return NornirData(hosts, layers[GROUPS], defaults if isinstance(defaults, dict) else {}, docs)

    def _yaml(self, name: str, problems: list[Diagnostic], hashes: dict[str, str], jobs: int,
              required: bool) -> YamlDocument | None:
        path = self.directory / name
        if not path.exists():
            if required:
                problems.append(Diagnostic(Location(str(path), 1, 1), "<file>", f"compact inventory has no {name}",
                                           "see README: Compact cabling", INPUT_FILE))
            return None
        doc, found = load_yaml(path, jobs=jobs)
        problems += found
        if doc is not None:
            record_hash(doc, f"inventory/{name}", hashes)
        if doc is not None and doc.data is None:
            doc.data = {}
        if doc is not None and not isinstance(doc.data, dict):
            problems.append(Diagnostic(doc.at(()), "<root>", f"{name} must be a mapping",
                                       "see README: Compact cabling", INPUT_SCHEMA))
            return None
        return doc


def _mapping_entries(doc: YamlDocument, name: str, problems: list[Diagnostic]) -> dict[str, Any]:
    """groups.yaml's entries that are mappings (or empty); each other entry reported."""
    entries: dict[str, Any] = {}
    if name == DEFAULTS:
        return dict(doc.data)
    for key, entry in doc.data.items():
        if isinstance(key, str) and isinstance(entry, dict | None):
            entries[key] = entry or {}
        else:
            problems.append(Diagnostic(doc.at((key,)), format_key_path((str(key),)), "a group entry must be a "
                                       "name and a mapping", "write its keys under it (platform, groups, data)",
                                       INPUT_SCHEMA))
    return entries


# --- cabling.csv ----------------------------------------------------------------------------------------

class Cable(NamedTuple):
    """One row of cabling.csv: its line number, its text and its fields (a named tuple: 71k rows at 32,768 GPUs,
    made 4 times faster than a frozen dataclass)."""

    line: int
    text: str
    fields: tuple[str, ...]

    def at(self, file: str, column: str) -> Location:
        """Where a field starts (as written unquoted; a quoted field shifts the ones after it by its quotes,
        close enough to point at the field). Worked out only for a problem: 71k rows at 32,768 GPUs."""
        index = COLUMNS.index(column)
        if '"' in self.text:
            return Location(file, self.line, 1 + sum(len(cell) + 1 for cell in _split(self.text)[:index]))
        cells = self.text.split(",")  # as written: the spaces around a field count, and the field's own are skipped
        start = 1 + sum(len(cell) + 1 for cell in cells[:index])
        field = cells[index] if index < len(cells) else ""
        return Location(file, self.line, start + len(field) - len(field.lstrip()))


@dataclass
class _Table:
    file: str
    text: str
    raw: bytes
    cables: list[Cable] = field(default_factory=list)


def _read_table(path: Path, problems: list[Diagnostic], hashes: dict[str, str]) -> _Table | None:
    name = str(path)
    try:
        raw = read_input(path)
        text = raw.decode("utf-8")
    except InputFileError as exc:
        problems.append(Diagnostic(Location(name, 1, 1), "<file>", exc.message, exc.hint, INPUT_FILE))
        return None
    except UnicodeDecodeError as exc:
        problems.append(Diagnostic(Location(name, 1, 1), "<file>", f"not UTF-8 text: {exc.reason}",
                                   "save the table as UTF-8 CSV", INPUT_FILE))
        return None
    hashes[f"inventory/{CABLING_FILE}"] = hashlib.sha256(raw).hexdigest()
    # Excel's "CSV UTF-8" starts the file with a byte-order mark: not part of the header's first name. Blanked, not
    # dropped, so that every column stays where an editor shows it.
    text = " " + text[1:] if text.startswith(BOM) else text
    table = _Table(name, text, raw)
    header_seen = False
    for number, line in enumerate(text.splitlines(), 1):
        if not line or line[0] == "#" or not line.strip() or line.lstrip().startswith("#"):
            continue  # a blank line or a comment
        row = _split(line)
        if not header_seen:
            header_seen = True
            problem = _header_problem(name, number, line)
            if problem is not None:
                problems.append(problem)
                return None
            continue
        if len(row) != len(COLUMNS):
            problems.append(Diagnostic(Location(name, number, 1), f"line {number}", f"{len(row)} fields, expected "
                                       f"{len(COLUMNS)}", f"write {','.join(COLUMNS)} (cable_m and media may be "
                                       "empty)", INPUT_SCHEMA))
            continue
        table.cables.append(Cable(number, line, tuple(row)))
    if not header_seen:
        problems.append(Diagnostic(Location(name, 1, 1), "<header>", "the cabling table is empty",
                                   f"start it with the header {','.join(COLUMNS)}", INPUT_SCHEMA))
        return None
    return table


def _header_problem(file: str, number: int, line: str) -> Diagnostic | None:
    """The header's first column that is not the one expected, at its column; None for the right header."""
    cells = [cell.strip() for cell in (next(csv.reader([line])) if '"' in line else line.split(","))]
    if tuple(cells) == COLUMNS:
        return None
    shared = min(len(cells), len(COLUMNS))
    index = next((i for i in range(shared) if cells[i] != COLUMNS[i]), shared)
    column = _header_column(line, index)
    if index < len(COLUMNS) and index < len(cells):
        found = f"column {index + 1} is {cells[index]!r}, expected {COLUMNS[index]!r}"
    elif index < len(COLUMNS):
        found = f"{len(cells)} columns: {', '.join(COLUMNS[index:])} missing"
    else:
        found = f"{len(cells)} columns: {', '.join(repr(c) for c in cells[index:])} not one of them"
    if ";" in line and "," not in line:
        found += " (the columns are separated by `;`: save the table with commas)"
    return Diagnostic(Location(file, number, column), "<header>", f"the header must be {','.join(COLUMNS)}: "
                      f"{found}", "put that line first, then one cable a line", INPUT_SCHEMA)


def _header_column(line: str, index: int) -> int:
    """The column where header cell ``index`` starts, past the spaces before it, as a row's fields are found
    (Cable.at); 1 for a header with quotes (the csv module's cells do not say where they were)."""
    if '"' in line:
        return 1
    raw = line.split(",")
    before = 1 + sum(len(cell) + 1 for cell in raw[:index])
    return before + (len(raw[index]) - len(raw[index].lstrip()) if index < len(raw) else 0)


BOM = "\ufeff"


def _split(line: str) -> list[str]:
    """A line's fields, spaces around them dropped. A line with quotes goes through the csv module; the others
    (all of a generated table) are split at commas, 20 times faster. A quoted field may not span lines: a cable
    is one line, so that every problem names its line."""
    fields = next(csv.reader([line])) if '"' in line else line.split(",")
    return [cell.strip() for cell in fields] if " " in line or "\t" in line else fields


# --- devices.yaml → hosts ----------------------------------------------------------------------------------

class CompactHosts(YamlDocument):
    """Where the hosts built from devices.yaml and cabling.csv were written, as load reads a hosts.yaml document:
    a device entry, a template's port, a table row. Worked out only when a problem asks, from what this keeps
    (it lives as long as the loaded fabric): its ``data`` names the hosts, whose entries load reads from
    NornirData.hosts and then drops, and of the table only its bytes (which the render state records too:
    ``entries``) and which lines were set as cables (at 32,768 GPUs, 71k rows kept as objects were 60 MB beside
    the resolved fabric)."""

    def __init__(self, names: list[str], devices: YamlDocument, table: _Table,
                 templates: dict[str, dict[str, KeyPath]], cable_lines: bytearray,
                 ports_paths: dict[str, KeyPath]) -> None:
        super().__init__(dict.fromkeys(names), devices.file, "")
        self.devices, self.table_file, self.table_raw, self.templates = devices, table.file, table.raw, templates
        self.cable_lines, self.ports_paths = cable_lines, ports_paths
        self.entries: Entries | None = None
        """the hosts as built, for the render state (set by CompactSource.read)"""

    @property
    def source(self) -> SourceMap:
        if self._source is None:
            self._source = self._locations()
        return self._source

    def _locations(self) -> SourceMap:
        found = SourceMap()
        for name in self.data:
            found.graft((name,), self.devices, ("devices", name))
            ports = self.ports_paths.get(name, ("data", "ports"))
            entry = self.devices.data["devices"][name]
            own = _own_ports(entry)
            for port, at in self.templates.get(entry.get("template"), {}).items():
                if port not in own:
                    found.graft((name, *ports, port), self.devices, at)
        for cable in self._cables():
            # Both ends: a finding about the cable names either, and the row is where its settings are.
            for end, other in (("a", "b"), ("b", "a")):
                device, port = cable.fields[COLUMNS.index(f"{end}_device")], cable.fields[COLUMNS.index(f"{end}_port")]
                base = (device, *self.ports_paths.get(device, ("data", "ports")), port)
                found.add((*base, "peer"), cable.at(self.table_file, f"{other}_device"))
                found.add((*base, "cable_m"), cable.at(self.table_file, "cable_m"))
                found.add((*base, "media"), cable.at(self.table_file, "media"))
        return found

    def _cables(self) -> list[Cable]:
        """The rows that were set as cables, in the table's order (as _read_table numbers its lines)."""
        lines, text = self.cable_lines, self.table_raw.decode("utf-8")
        return [Cable(number, line, tuple(_split(line))) for number, line in enumerate(text.splitlines(), 1)
                if number < len(lines) and lines[number]]


def _own_ports(entry: Any) -> dict[str, Any]:
    data = entry.get("data") if isinstance(entry, dict) else None
    if not isinstance(data, dict):
        return {}
    inner = data.get(NAMESPACE)
    ports = inner.get("ports") if isinstance(inner, dict) else data.get("ports")
    return ports if isinstance(ports, dict) else {}


class _Builder:
    def __init__(self, doc: YamlDocument, problems: list[Diagnostic]) -> None:
        self.doc, self.problems = doc, problems
        self.template_paths: dict[str, dict[str, KeyPath]] = {}
        self.ports_paths: dict[str, KeyPath] = {}
        # Templates with a problem, and devices whose ports are not known (a bad template, an unknown one, own
        # ports that are not a mapping): their cables are not checked port by port. One mistake in devices.yaml
        # is one problem, not one more per cable (which the table's problems, sorted first, would bury).
        self.broken_templates: set[str] = set()
        self.broken: set[str] = set()

    def problem(self, path: KeyPath, message: str, hint: str, rule: str = INPUT_SCHEMA) -> None:
        self.problems.append(Diagnostic(self.doc.at(path), format_key_path(path), message, hint, rule))
        if path[:1] == ("templates",) and len(path) > 1:
            self.broken_templates.add(str(path[1]))

    def build(self, table: _Table | None) -> tuple[dict[str, Any], CompactHosts] | None:
        data = self.doc.data
        for key in data:
            if key not in ("templates", "devices"):
                self.problem((key,), f"unknown key {key!r}", "devices.yaml holds `templates:` and `devices:`")
        templates = self._templates(data.get("templates"))
        devices = data.get("devices")
        if not isinstance(devices, dict) or not devices:
            self.problem(("devices",), "devices.yaml defines no devices", "add `devices:`, one Nornir host each, "
                         "with `template:` naming its port table")
            return None
        hosts = {name: self._host(name, entry or {}, templates) for name, entry in devices.items()
                 if self._well_shaped(name, entry)}
        if table is None:
            return None
        cable_lines = self._cable(hosts, table)
        return hosts, CompactHosts(list(hosts), self.doc, table, self.template_paths, cable_lines, self.ports_paths)

    def _well_shaped(self, name: Any, entry: Any) -> bool:
        if isinstance(name, str) and isinstance(entry, dict | None):
            return True
        self.problem(("devices", name), "a device entry must be a name and a mapping",
                     "write its keys under it (hostname, groups, template, data)")
        return False

    # -- templates

    def _templates(self, templates: Any) -> dict[str, dict[str, Any]]:
        if templates is None:
            return {}
        if not isinstance(templates, dict):
            self.problem(("templates",), "templates must be a mapping: name → ports", "see README: Compact cabling")
            return {}
        expanded: dict[str, dict[str, Any]] = {}
        for name, ports in templates.items():
            path: KeyPath = ("templates", name)
            if not isinstance(ports, dict):
                self.problem(path, "a template must be a mapping: port (or range) → port settings",
                             "e.g. Ethernet{0..248..8}: {speed: 400G}")
                continue
            expanded[str(name)] = self._template(path, ports)
        return expanded

    def _template(self, path: KeyPath, ports: dict[Any, Any]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        paths = self.template_paths.setdefault(str(path[1]), {})
        for key, spec in ports.items():
            at = (*path, key)
            if isinstance(spec, dict) and (cable := [k for k in CABLE_KEYS if k in spec]):
                self.problem((*at, cable[0]), f"{cable[0]} in a port template", "a cable belongs in cabling.csv, "
                             "one line per cable")
                continue
            for port, value in self._expand(at, str(key), spec):
                if port in result:
                    self.problem(at, f"port {port!r} is defined twice in the template",
                                 "make the ranges and names disjoint")
                    continue
                result[port], paths[port] = value, at
        return result

    def _expand(self, at: KeyPath, key: str, spec: Any) -> list[tuple[str, Any]]:
        """A template's key and value as ports: one for a plain name, one per number for a range."""
        if "{" not in key and "}" not in key:
            return [(key, _lane_span(spec))]
        match = _RANGE.match(key)
        if match is None:
            self.problem(at, f"{key!r} is not a port range", "write one range as {FIRST..LAST} or "
                         "{FIRST..LAST..STEP}, e.g. Ethernet{0..248..8}")
            return []
        padded = _padded_bound(match)
        if padded is not None:
            self.problem(at, f"{key!r}: the bound {padded!r} has a leading zero, which bash's brace expansion reads "
                         f"as zero-padding ({match['head']}{padded}{match['tail']}, ...); no switch fabricgen renders "
                         "for pads its port numbers", f"write the bounds without leading zeros, e.g. "
                         f"{match['head']}{{{int(match['first'])}..{int(match['last'])}}}{match['tail']}")
            return []
        first, last, step = int(match["first"]), int(match["last"]), int(match["step"] or 1)
        count = (last - first) // step + 1 if step and last >= first else 0
        if count <= 0 or count > MAX_RANGE_PORTS:
            self.problem(at, f"range {{{first}..{last}..{step}}} makes {max(count, 0)} ports",
                         f"FIRST ≤ LAST, STEP ≥ 1, at most {MAX_RANGE_PORTS} ports")
            return []
        ports = []
        for number in range(first, last + 1, step):
            value = self._substitute(at, spec, number)
            if value is _BAD:
                return []
            ports.append((f"{match['head']}{number}{match['tail']}", _lane_span(value)))
        return ports

    def _substitute(self, at: KeyPath, spec: Any, number: int) -> Any:
        if isinstance(spec, str):
            try:
                return _PLACEHOLDER.sub(lambda m: str(_offset(m[1], number)), spec)
            except ValueError as exc:
                self.problem(at, f"{{{exc}}} is not a port number placeholder", "use {n}, {n+K} or {n-K}")
                return _BAD
        if isinstance(spec, dict):
            out = {}
            for key, value in spec.items():
                out[key] = self._substitute((*at, key), value, number)
                if out[key] is _BAD:
                    return _BAD
            return out
        return spec

    # -- devices

    def _host(self, name: str, entry: dict[str, Any], templates: dict[str, dict[str, Any]]) -> Any:
        path: KeyPath = ("devices", name)
        host = {key: value for key, value in entry.items() if key != "template"}
        if not self._own_ports_checked(path, host):
            self.broken.add(name)
        if "template" not in entry and self._misspelt_template(path, host):
            self.broken.add(name)  # its cables name ports its template would have given it: said once, here
            return host
        data = host.get("data")
        if isinstance(data, dict) and isinstance(data.get(NAMESPACE), dict):
            self.ports_paths[str(name)] = ("data", NAMESPACE, "ports")
        template = entry.get("template")
        if template is None:
            return host
        if not isinstance(template, str) or template not in templates:
            close = difflib.get_close_matches(str(template), list(templates), n=1)
            self.problem((*path, "template"), f"unknown template {template!r}",
                         f"did you mean {close[0]!r}?" if close else "name one under `templates:`")
            self.broken.add(name)  # its cables name ports no template gave it: said once, here, not per cable
            return host
        if template in self.broken_templates:
            self.broken.add(name)
        data = dict(data) if isinstance(data, dict) else {}
        host["data"] = data
        inner = data.get(NAMESPACE)
        holder = data
        if isinstance(inner, dict):
            holder = data[NAMESPACE] = dict(inner)
        own = holder.get("ports")
        ports = {port: dict(spec) if isinstance(spec, dict) else spec for port, spec in templates[template].items()}
        if isinstance(own, dict):
            for port, spec in own.items():
                ports[port] = _lane_span(spec)
        holder["ports"] = ports
        return host

    def _misspelt_template(self, path: KeyPath, host: dict[str, Any]) -> bool:
        """A key that is none of Nornir's but reads as `template` misspelt: reported as that, and taken out of
        ``host`` (load would call it an unknown Nornir key and say to move it under `data`)."""
        misspelt = [key for key in host if key not in HOST_KEYS and
                    difflib.get_close_matches(str(key).casefold(), ("template", *HOST_KEYS), n=1, cutoff=0.8)
                    == ["template"]]
        for key in misspelt:
            self.problem((*path, key), f"unknown key {key!r} (a device of {DEVICES_FILE} takes `template` and "
                         "Nornir's host keys)", "did you mean 'template'?")
            del host[key]
        return bool(misspelt)

    def _own_ports_checked(self, path: KeyPath, host: dict[str, Any]) -> bool:
        """A device's ``data`` must be a mapping (or absent) and its own ports a mapping of port → settings without
        a cable's keys: what a template's ports are merged with, where anything else would be dropped in silence.
        Each problem is reported and what it names taken out of ``host`` (so nothing reports it again); False when
        the device's ports are then not known."""
        data = host.get("data")
        if data is None:
            return True
        if not isinstance(data, dict):
            self.problem((*path, "data"), "data must be a mapping of fabricgen's keys",
                         "write its keys under it (role, ports, ...)")
            del host["data"]
            return False
        inner = data.get(NAMESPACE)
        holder = inner if isinstance(inner, dict) else data
        at: KeyPath = (*path, "data", NAMESPACE, "ports") if holder is inner else (*path, "data", "ports")
        ports = holder.get("ports")
        if ports is None:
            return True
        if not isinstance(ports, dict):
            self.problem(at, "ports must be a mapping: port name → its settings",
                         "e.g. ports: {Ethernet0: {speed: 100G}}; a port's settings replace its template's")
            holder = self._copied_holder(host, holder is inner)
            del holder["ports"]
            return False
        cabled = {port: [key for key in CABLE_KEYS if key in spec] for port, spec in ports.items()
                  if isinstance(spec, dict)}
        cabled = {port: keys for port, keys in cabled.items() if keys}
        if cabled:
            for port, keys in cabled.items():
                self.problem((*at, port, keys[0]), f"{keys[0]} on a device's own port", "a cable belongs in "
                             "cabling.csv, one line per cable, with its cable_m and media")
            holder = self._copied_holder(host, holder is inner)
            holder["ports"] = {port: {k: v for k, v in spec.items() if k not in CABLE_KEYS} if port in cabled else spec
                               for port, spec in ports.items()}
        return True

    @staticmethod
    def _copied_holder(host: dict[str, Any], namespaced: bool) -> dict[str, Any]:
        """The mapping that holds ``ports`` in ``host``, copied into it (devices.yaml's parsed data is not changed)."""
        data: dict[str, Any] = dict(host["data"])
        host["data"] = data
        if not namespaced:
            return data
        inner: dict[str, Any] = dict(data[NAMESPACE])
        data[NAMESPACE] = inner
        return inner

    # -- cables

    def _cable(self, hosts: dict[str, Any], table: _Table) -> bytearray:
        """Each row's cable set on its a-end port; returns which lines were (by line number). 71k rows at 32,768
        GPUs: a good row is decided inline, and :meth:`_end` runs only to word a problem."""
        used: dict[tuple[str, str], int] = {}  # each cabled end → the line cabling it
        cable_lines = bytearray(max((cable.line for cable in table.cables), default=0) + 1)
        ports_of = {name: _own_ports(host) for name, host in hosts.items()}
        for cable in table.cables:
            line = cable.line
            a_device, a_port, b_device, b_port, cable_m, media = cable.fields
            a_ports, b_ports = ports_of.get(a_device), ports_of.get(b_device)
            a = a_ports.get(a_port) if a_ports is not None else None
            b = b_ports.get(b_port) if b_ports is not None else None
            a_end, b_end = (a_device, a_port), (b_device, b_port)
            if not (isinstance(a, dict) and isinstance(b, dict)) or a_end in used or b_end in used or a_end == b_end:
                a = self._end(hosts, cable, table.file, "a", used)
                b = self._end(hosts, cable, table.file, "b", used)
                if a is None or b is None:
                    continue
                if a_end == b_end:
                    self._row(cable, table.file, "b_device", "a port cannot be its own peer",
                              "name the device and port at the other end of the cable")
                    continue
            used[a_end] = used[b_end] = line
            cable_lines[line] = 1
            a["peer"] = f"{b_device}:{b_port}"
            if cable_m:
                # ASCII digits only: str.isdecimal() and int() take any script's (２３ would be 23 m).
                a["cable_m"] = int(cable_m) if cable_m.isascii() and cable_m.isdecimal() else cable_m
            if media:
                a["media"] = media
        return cable_lines

    def _end(self, hosts: dict[str, Any], cable: Cable, file: str, end: str,
             used: dict[tuple[str, str], int]) -> dict[str, Any] | None:
        """The port spec (a mapping, to set the cable on) at one end of a row, or None with the problem said."""
        device, port = cable.fields[COLUMNS.index(f"{end}_device")], cable.fields[COLUMNS.index(f"{end}_port")]
        host = hosts.get(device)
        if device in self.broken:
            return None  # its ports are not known: its problem in devices.yaml says why
        if not isinstance(host, dict):
            close = difflib.get_close_matches(device, list(hosts), n=1)
            self._row(cable, file, f"{end}_device", f"unknown device {device!r}",
                      f"did you mean {close[0]!r}?" if close else "add it under `devices:` in devices.yaml")
            return None
        ports = _own_ports(host)
        if not ports:  # no template and no ports of its own: one problem, at the device, not one per cable
            self.broken.add(device)
            self.problem(("devices", device), f"{device} has no ports, and cabling.csv cables it (first at line "
                         f"{cable.line})", "name its port table with `template:`, or list its ports in data.ports")
            return None
        if port not in ports:
            close = difflib.get_close_matches(port, list(ports), n=1)
            self._row(cable, file, f"{end}_port", f"{device} has no port {port!r}",
                      f"did you mean {close[0]!r}?" if close else f"add {port} to {device}'s template")
            return None
        if (device, port) in used:
            self._row(cable, file, f"{end}_port", f"port {device}:{port} is cabled twice (first at line "
                      f"{used[(device, port)]})", "a port takes one cable; fix one of the lines", PORT_USED_TWICE)
            return None
        spec = ports[port]
        if spec is None:
            spec = ports[port] = {}
        return spec if isinstance(spec, dict) else None

    def _row(self, cable: Cable, file: str, column: str, message: str, hint: str, rule: str = INPUT_SCHEMA) -> None:
        shown = f"line {cable.line}.{column}"
        self.problems.append(Diagnostic(cable.at(file, column), shown, message, hint, rule))


_BAD: Any = object()


def _padded_bound(match: re.Match[str]) -> str | None:
    """A range's first bound written with a leading zero (`01` in `swp{01..64}`), or None. bash pads every number of
    such a range (swp01 ... swp64); fabricgen read it as swp1 ... swp64, which surprised who wrote it. Neither is
    right for all: no switch fabricgen renders for (SONiC, EOS, Cumulus, NX-OS) zero-pads its port numbers, and a
    name with zeros renders a port the switch does not have, in silence where nothing is cabled to it. So the range
    is refused and the hint says what to write. A lone `0` is a bound, not padding (bash: `{0..10}` is 0 ... 10)."""
    for bound in (match["first"], match["last"]):
        if len(bound) > 1 and bound.startswith("0"):
            return bound
    return None


def _offset(expression: str, number: int) -> int:
    match = _OFFSET.match(expression.replace(" ", ""))
    if match is None:
        raise ValueError(expression)
    sign, amount = match.groups()
    return number + (int(amount) if sign == "+" else -int(amount) if sign == "-" else 0)


def _lane_span(spec: Any) -> Any:
    """A port's settings with a ``lanes`` value ``X..Y`` written out as the lanes X to Y."""
    if isinstance(spec, dict) and isinstance(spec.get("lanes"), str):
        match = _LANE_SPAN.match(spec["lanes"])
        if match is not None and int(match[1]) <= int(match[2]) < int(match[1]) + 64:
            return {**spec, "lanes": ",".join(str(lane) for lane in range(int(match[1]), int(match[2]) + 1))}
    return spec
