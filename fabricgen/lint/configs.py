"""``lint --configs DIR``: each device's config files read from disk and overlaid on its resolved model.

Every file is checked as bytes before a platform's reader sees it, so that no byte sequence reaches a reader
it could crash: a regular file of bounded size, strict UTF-8, no NUL byte, JSON and YAML no deeper than any
config nests, CLI indented with spaces. What fails those checks, and what a reader refuses
(:class:`~fabricgen.platforms.ConfigReadError`), is a :class:`Problem` (``FILE:LINE: message``): the CLI prints
them all and exits 2. What is readable but not whole — a device without configs, an empty file, one cut
short — is :class:`~fabricgen.lint.evidence.Evidence` for the FG-EVD rules: missing evidence is a finding,
never a pass.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

try:
    import ryml  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - rapidyaml is a dependency; without it libyaml's events decide alone
    ryml = None

from fabricgen.build.output import INCOMPLETE
from fabricgen.lint.configlines import ConfigText, config_words, listed_words
from fabricgen.lint.evidence import Conflict, Evidence, Gap
from fabricgen.lint.registry import Finding

# What PyYAML and rapidyaml read alike (tests/test_fastyaml.py holds it).
from fabricgen.load.fastyaml import _not_plain
from fabricgen.models.device import DeviceModel, Fabric
from fabricgen.models.diagnostics import Location
from fabricgen.platforms import ConfigReadError, Platform, get_platform
from fabricgen.runtime.jsondepth import depth_bound
from fabricgen.runtime.rapidyaml import emitted_json, parsed_in_arena

# Far above any switch's config (a 512-port SONiC config_db.json is a few MB), far below what hurts to read.
MAX_FILE_BYTES = 32 * 1024 * 1024
# Configs nest a handful of levels (config_db.json: 3-4; NVUE YAML: about 10). Python's JSON and YAML parsers
# recurse per level and fail with RecursionError near 1000; anything deeper than this is not a config.
MAX_DEPTH = 64
# EOS's `show running-config` starts with this line and ends with `end` (fabricgen's eos.cfg, a snippet, has
# neither). NX-OS's has no end marker: a cut there shows only as a missing final newline.
EOS_RUNNING_CONFIG = "! Command: show running-config"
# JSON strings (possessive: no backtracking into a string that never closes) and brackets, in text order.
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*+"|[\[\]{}]')
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Locate = Callable[[Finding], Location]


@dataclass(frozen=True, order=True)
class Problem:
    """A config file that cannot be read: printed as ``FILE:LINE: message``."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class UnreadableConfigs(Exception):
    """Every problem found in ``--configs DIR``, sorted by file and line."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = sorted(set(problems))
        super().__init__("\n".join(str(problem) for problem in self.problems))


@dataclass
class Configs:
    """The fabric with every readable device's model read from its configs, the evidence lint judges, and each
    device's config files in its platform's file order (to point findings at)."""

    fabric: Fabric
    evidence: Evidence
    files: dict[str, list[Path]] = field(default_factory=dict)

    def locator(self, fallback: Locate) -> Locate:
        """Findings on a device read from configs point at the line that sets what they are about
        (``Finding.setting``) in their port's own entry, else at that entry (fabricgen.lint.configlines: a SONiC
        port's PORT entry, an EOS port's `interface` line), else at line 1; on a switch, in the file that has the
        port's entry; on a host, in whichever file names the setting (nccl.env's NCCL_IB_TC, not the NIC script).
        A finding about a cable points at the end whose config changed (see _changed_end); findings that know
        their line keep it; the rest use ``fallback``. Files are read again only for the findings that need a line
        (not kept: at 32,768 GPUs they are GBs)."""
        @functools.cache
        def config(path: Path, anchor: str | None) -> ConfigText:
            return ConfigText(path.read_text(encoding="utf-8", errors="replace"), anchor)

        def locate(finding: Finding) -> Location:
            if finding.where is not None:
                return Location(finding.where[0], finding.where[1], 1)
            device, port = self._changed_end(finding)
            files = self.files.get(device)
            if not files:
                return fallback(finding)
            capability = get_platform(self.fabric.devices[device].platform).capability
            words = config_words(capability.config_words, finding.setting)
            found = [(path, config(path, capability.port_anchor)) for path in files]
            if port is not None and capability.port_anchor is not None:
                # A switch: the file that has the port's entry (NVUE's nvue.yaml before nvue.commands), and in it
                # the setting, else the entry: never a line of another file that may say otherwise.
                path, text = next(((path, text) for path, text in found if text.entries(port)), found[0])
                line = next((at for word in words if (at := text.setting(word, port))), 0)
                return Location(str(path), line or text.entry_line(port), 1)
            # A switch-wide setting where the switch writes it; else the words anywhere (a host's NCCL_IB_TC).
            switch_wide = listed_words(capability.device_words, finding.setting) if port is None and finding.setting \
                else []
            located = (_first_written(found, switch_wide, ConfigText.device_setting)
                       or _first_written(found, words, lambda text, word: text.setting(word, port)))
            return located or Location(str(files[0]), found[0][1].entry_line(port) if port else 1, 1)

        return locate

    def _changed_end(self, finding: Finding) -> tuple[str, str | None]:
        """The device and port a finding points at: a finding about a cable is listed from one end, and where only
        the other end's config says otherwise than the intent, that end is the one to look at (and to fix)."""
        if finding.peer is None or finding.port is None or not self._as_intended(finding.device, finding.port):
            return finding.device, finding.port
        far_device, _, far_port = finding.peer.partition(":")
        if far_device in self.files and not self._as_intended(far_device, far_port):
            return far_device, far_port
        return finding.device, finding.port

    def _as_intended(self, device: str, port: str) -> bool:
        """Whether the port (or a host's NIC) reads back as the intent resolves it. Readers keep the resolved
        object of what reads back unchanged, so this is an identity test."""
        intended, found = self.evidence.intended.get(device), self.fabric.devices.get(device)
        if intended is None or found is None or found is intended:
            return True
        return _end_model(found, port) is _end_model(intended, port)


def read_configs(fabric: Fabric, directory: Path, partial: bool = False) -> Configs:
    """Each device's configs (``directory/<device>/<its platform's files>``) read over its resolved model.
    ``partial``: devices without any config file are left out on purpose instead of reported. Raises
    :class:`UnreadableConfigs` with every problem found."""
    if (directory / INCOMPLETE).exists():
        raise UnreadableConfigs([Problem(str(directory / INCOMPLETE), 1, "an interrupted render: some files may be "
                                         "from the previous one; run `fabricgen render` again first")])
    reading = _Reading(directory)
    for name in sorted(fabric.devices):
        reading.device(fabric.devices[name])
    if reading.problems:
        raise UnreadableConfigs(reading.problems)
    missing = {name: what for name, what in reading.missing.items() if not partial or name not in reading.absent}
    skipped = tuple(sorted(reading.absent)) if partial else ()
    evidence = Evidence(str(directory), reading.intended, missing, tuple(reading.gaps), skipped,
                        tuple(reading.conflicts))
    devices = {**fabric.devices, **reading.devices}
    return Configs(fabric.model_copy(update={"devices": devices}), evidence, reading.files)


class _Reading:
    """The state of one read of DIR: what was read, what is missing or cut short, and every problem."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.problems: list[Problem] = []
        self.devices: dict[str, DeviceModel] = {}
        self.intended: dict[str, DeviceModel] = {}
        self.missing: dict[str, str] = {}
        self.absent: set[str] = set()  # devices without a single config file
        self.gaps: list[Gap] = []
        self.conflicts: list[Conflict] = []
        self.files: dict[str, list[Path]] = {}

    def device(self, device: DeviceModel) -> None:
        platform = get_platform(device.platform)
        folder = self.directory / device.name
        found: list[tuple[str, Path, bytes | _Refused]] = []  # (file name, path, its bytes)
        for name in platform.capability.output_files:
            path = folder / name
            try:
                data = _bytes_if_present(path)
            except _Refused as refused:
                found.append((name, path, refused))
                continue
            if data is not None:
                found.append((name, path, data))
        if not found:
            self.absent.add(device.name)
            self.missing[device.name] = (f"no config in {folder}/ (expected "
                                         f"{', '.join(platform.capability.output_files)})")
            return
        before = len(self.problems)
        texts = {name: (path, text) for name, path, data in found
                 if (text := self._text(device.name, path, data)) is not None}
        if len(self.problems) > before:
            return
        self.files[device.name] = [path for path, _ in texts.values()]
        # Not blank: isspace stops at the first other character, where strip() copied the whole text.
        whole = {name: text for name, (_, text) in texts.items() if text and not text.isspace()}
        if whole:
            self._read(platform, device, folder, whole)

    def _text(self, device: str, path: Path, data: bytes | _Refused) -> str | None:
        """The text of the file's bytes when it passes every check; else None, with the problem recorded (also
        when reading it was refused)."""
        try:
            if isinstance(data, _Refused):
                raise data
            text = _decoded(path, data)
            _check_format(path, text)
        except _Refused as refused:
            self.problems.append(refused.problem)
            return None
        gap = _gap(path, text)
        if gap is not None:
            self.gaps.append(Gap(device, str(path), *gap))
        return text

    def _read(self, platform: Platform, device: DeviceModel, folder: Path, texts: dict[str, str]) -> None:
        if platform.read is None:
            self.missing[device.name] = f"platform {device.platform} has no config reader"
            return
        try:
            model = platform.read(device, texts)
        except ConfigReadError as exc:
            self._refused(device, folder, texts, exc)
            return
        except Exception as exc:  # a reader's bug on odd input: name the file, never exit 70 (internal error)
            first = next(iter(texts))
            self.problems.append(Problem(str(folder / first), 1, f"the {device.platform} reader cannot read this "
                                         f"file: {type(exc).__name__}: {exc}"))
            return
        self.devices[device.name] = model
        self.intended[device.name] = device
        conflicts = platform.conflicts
        if conflicts is not None:  # after a good read: the files parse, and the same parse is asked again
            self.conflicts += [Conflict(device.name, str(folder / c.file), c.line, c.message, c.port)
                               for c in conflicts(texts)]

    def _refused(self, device: DeviceModel, folder: Path, texts: dict[str, str], exc: ConfigReadError) -> None:
        if exc.file in texts:
            self.problems.append(Problem(str(folder / exc.file), max(exc.line, 1), exc.message))
        elif not _present(folder / exc.file):  # the reader needs a file the others came without
            self.missing[device.name] = f"no {exc.file} in {folder}/ (found {', '.join(sorted(texts))})"
        # else: the file it needs is empty, and FG-EVD-002 says so already


def _first_written(found: list[tuple[Path, ConfigText]], words: list[str],
                   line_of: Callable[[ConfigText, str], int]) -> Location | None:
    """The first of ``words`` that a file of ``found`` writes (``line_of`` not 0), in the order of the words, then
    of the files; None when no file writes any."""
    for word in words:
        for path, text in found:
            line = line_of(text, word)
            if line:
                return Location(str(path), line, 1)
    return None


class _Refused(Exception):
    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(str(problem))


def _present(path: Path) -> bool:
    return path.is_symlink() or path.exists()


def _bytes_if_present(path: Path) -> bytes | None:
    """The file's bytes (see _bytes), None when there is no such file: its descriptor's type and size checked
    before the read, as fabricgen.load.yamlsource.read_input does. Asking whether each file exists, then stat-ing
    it, then opening it was most of the system calls of reading a fabric's configs, most of them the hosts' small
    files (issue 26 item 7). O_NONBLOCK: a FIFO's open does not wait for a writer (fstat then refuses it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        # No such file, a dangling symlink, one the open refuses (a socket, no permission): present or not as
        # before, and the stat-first road says what it says of them.
        return _bytes(path) if _present(path) else None
    try:
        info = os.fstat(fd)
        _check_stat(path, info)
        # The size fstat gave, plus one byte to see growth: a read of MAX_FILE_BYTES + 1 allocates that much
        # first, for every file (most of reading a fabric's small files). A file that grew is read on.
        data = os.read(fd, info.st_size + 1)
        if len(data) > info.st_size:
            data += os.read(fd, MAX_FILE_BYTES + 1 - len(data))
    except OSError as exc:
        raise _Refused(Problem(str(path), 1, f"cannot read: {exc.strerror or exc}")) from exc
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:  # it grew while being read
        raise _Refused(Problem(str(path), 1, f"larger than {MAX_FILE_BYTES // 2**20} MiB: not a config"))
    return data


def _bytes(path: Path) -> bytes:
    """The file's bytes: only a regular file (a FIFO would block the read, a device never end), at most
    MAX_FILE_BYTES of it. A stat says so before the file is opened (for what _bytes_if_present cannot open)."""
    try:
        info = path.stat()
        _check_stat(path, info)
        with path.open("rb", buffering=0) as handle:
            data = handle.read(info.st_size + 1)
            if len(data) > info.st_size:
                data += handle.read(MAX_FILE_BYTES + 1 - len(data))
    except OSError as exc:
        raise _Refused(Problem(str(path), 1, f"cannot read: {exc.strerror or exc}")) from exc
    if len(data) > MAX_FILE_BYTES:  # it grew while being read
        raise _Refused(Problem(str(path), 1, f"larger than {MAX_FILE_BYTES // 2**20} MiB: not a config"))
    return data


def _check_stat(path: Path, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise _Refused(Problem(str(path), 1, "not a regular file"))
    if info.st_size > MAX_FILE_BYTES:
        raise _Refused(Problem(str(path), 1, f"larger than {MAX_FILE_BYTES // 2**20} MiB: not a config"))


def _decoded(path: Path, data: bytes) -> str:
    """``data`` as strict UTF-8 without NUL bytes (a binary file); else the line and column of the first bad
    byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _position(data[:exc.start].decode("utf-8"), exc.start)
        raise _Refused(Problem(str(path), line, f"not UTF-8 (byte 0x{data[exc.start]:02x} at column {column})")) \
            from exc
    nul = text.find("\0")
    if nul >= 0:
        line, column = _position(text, nul)
        raise _Refused(Problem(str(path), line, f"binary content (a NUL byte at column {column})"))
    return text


def _position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of ``offset`` in ``text``."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _check_format(path: Path, text: str) -> None:
    """What would make a reader fail on text that decodes: nesting deeper than any config, tab indentation in CLI
    text (a reader that nests by spaces would read the tabbed lines as top-level lines, in silence)."""
    line = None
    suffix = path.suffix  # a property that parses the name each time it is asked
    if suffix == ".json":
        line = _json_too_deep(text)
    elif suffix == ".yaml":
        line = _yaml_too_deep(text)
    if line is not None:
        raise _Refused(Problem(str(path), line, f"nested deeper than {MAX_DEPTH} levels: not a config"))
    if suffix in _SHELL_SUFFIXES:
        _check_shell_text(path, text)
    if suffix == ".cfg" and "\t" in text:  # most files have no tab at all: no walk over their lines
        for number, raw in enumerate(text.splitlines(), 1):
            if "\t" in raw[:len(raw) - len(raw.lstrip())]:
                raise _Refused(Problem(str(path), number, "indented with a tab: the CLI nests lines by spaces"))


# Files bash runs or sources on the host: a host's NIC script (fabricgen-nic.sh, fabricgen-dcb.sh) and nccl.env.
_SHELL_SUFFIXES = (".sh", ".env")


def _check_shell_text(path: Path, text: str) -> None:
    """What bash cannot run although a reader would read it: a carriage return at a line's end (a Windows editor's
    save: bash takes it as part of the last word, `/usr/bin/env: 'bash\\r'`, `set: pipefail\\r: invalid option
    name`, and every value sourced from nccl.env ends in it), or a byte-order mark before the first line (the
    kernel then finds no `#!` and the script runs under /bin/sh, if at all)."""
    if text.startswith("\ufeff"):
        raise _Refused(Problem(str(path), 1, "starts with a byte-order mark: the kernel sees no `#!` and bash no "
                                             "command on the first line; save it as UTF-8 without a BOM"))
    carriage = text.find("\r")
    if carriage >= 0:
        line = text.count("\n", 0, carriage) + 1
        raise _Refused(Problem(str(path), line, "a carriage return (\\r, as a Windows editor ends lines with "
                                                "\\r\\n): bash reads it as part of the word before it, so the "
                                                "file does not run as written; save it with \\n line ends"))


def _json_too_deep(text: str) -> int | None:
    """The line where JSON text first nests deeper than MAX_DEPTH, without parsing it (the parser recurses)."""
    if _json_depth_bound(text) <= MAX_DEPTH:
        return None
    depth = 0
    for token in _JSON_TOKENS.finditer(text):
        bracket = token.group()
        if bracket in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                return text.count("\n", 0, token.start()) + 1
        elif bracket in ("]", "}"):
            depth -= 1
    return None


def _json_depth_bound(text: str) -> int:
    """An upper bound of how deep JSON text nests, at C speed (the exact scan above is a Python loop per string
    and bracket: most of checking a SONiC config_db.json); past MAX_DEPTH, MAX_DEPTH + 1: the exact scan decides.
    The NVUE reader asks it of the same text next (runtime.jsondepth keeps the last text's bound)."""
    return depth_bound(text, MAX_DEPTH)


def _yaml_too_deep(text: str) -> int | None:
    """The line where YAML first nests deeper than MAX_DEPTH, from the parser's events (the event parser is a
    state machine; only composing the document recurses). Text that does not parse is the reader's to
    report, with its own message. The events are Python objects (2-3 ms for a 64-port switch's nvue.yaml):
    they are walked only when rapidyaml's bound does not already clear the text."""
    if _yaml_depth_bound(text) <= MAX_DEPTH:
        return None
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_YAML_LOADER):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    return event.start_mark.line + 1 if event.start_mark is not None else 1
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return None
    return None


def _yaml_depth_bound(text: str) -> int:
    """An upper bound of how deep YAML text nests, at C++ speed: rapidyaml parses it (without recursion) and writes
    its tree as JSON, whose bound _json_depth_bound takes; MAX_DEPTH + 1 (the events decide) when rapidyaml is
    absent or refuses the text. Only text PyYAML and rapidyaml read alike can be cleared this way (the two
    disagree on a few constructs, see fabricgen/load/fastyaml.py): anything else gets the events."""
    raw = text.encode()
    if ryml is None or _not_plain(raw):
        return MAX_DEPTH + 1
    try:  # the NVUE reader reads the same tree and JSON next: both are kept for it (runtime.rapidyaml)
        return _json_depth_bound(emitted_json(parsed_in_arena(raw)))
    except Exception:  # rapidyaml's own error types: the events decide
        return MAX_DEPTH + 1


def _gap(path: Path, text: str) -> tuple[int, str] | None:
    """(line, problem) when a decodable file does not hold a whole config: empty, or cut short. The file is split
    into lines only where a problem may be (a whole file is read without a walk over its lines)."""
    if not text or text.isspace():
        return 1, "is empty"
    suffix = path.suffix
    if suffix != ".json" and not text.endswith("\n"):  # JSON: a cut does not parse (SONiC writes no final \n)
        lines = text.splitlines()
        return len(lines), f"ends in the middle of line {len(lines)} (no final newline): cut short"
    if suffix != ".cfg" or EOS_RUNNING_CONFIG not in text:
        return None
    lines = text.splitlines()
    if lines[0].strip() == EOS_RUNNING_CONFIG:
        last = next((line.strip() for line in reversed(lines) if line.strip()), "")
        if last != "end":
            return len(lines), "is a `show running-config` that does not end with `end`: cut short"
    return None


def _end_model(device: DeviceModel, name: str) -> object | None:
    """The port named ``name`` of a switch, or the NIC of a host (its ports are not what its config sets)."""
    if device.host is not None:
        return next((nic for nic in device.host.nics if nic.interface == name), None)
    return next((port for port in device.ports if port.name == name), None)

