"""What the GPU-host platforms (connectx, linux-dcb) share: the layout of their generated bash script, nccl.env,
and reading both back.

Both write a script with a ``# fabricgen`` header, one ``nic_*()`` function per NIC and an ``all_nics()`` that
calls them, plus a systemd unit and the same nccl.env; only the commands inside a NIC function differ. So the
walk over the script, its shell-word and number errors, the ``local``/``setting`` lines and nccl.env are written
here once, and each platform passes in what its own lines set (``lines``) and how that becomes a NicModel
(``nic_model``). Where the two differ on purpose (nccl.env's header comment, templates) they are parameters.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Generic, NamedTuple, TypeVar, cast

from fabricgen import __version__
from fabricgen.models.common import shell_name
from fabricgen.models.device import DeviceModel, HostModel, NicModel
from fabricgen.platforms import ConfigConflict, ConfigReadError
from fabricgen.platforms.common.memo import by_identity
from fabricgen.platforms.common.modelcopy import updated
from fabricgen.platforms.common.templating import Templates

NCCL_ENV = "nccl.env"
# How `fabricgen push` deploys a GPU host's rendered files (fabricgen/deploy/hostdriver.py); both host platforms.
HOST_DEPLOY = {
    "diff": "the script's --check run over SSH from a private temporary directory (removed), plus a diff of the "
            "installed files",
    "commit": "the undo staged on the host first (files as found, a restore script from the snapshot the script "
              "read), a systemd-run (else setsid) timer armed, then the files installed and the script's --apply",
    "confirm": "the boot unit enabled, then the host's timer stopped (flock shared with the revert and the apply)",
    "rollback": "the commit's own revert script on the host (the boot unit disabled again where it was), read back "
                "against the snapshot",
    "save": "the boot unit, enabled at confirm, runs the script at every boot; a commit still pending at boot is "
            "reverted instead",
    "lab": "real: OpenSSH, bash, the rendered script, iproute2 and veth MTUs; emulated: mlnx_qos / dcb / "
           "cma_roce_tos and the NIC's sysfs/configfs (tests/nic_stubs, tests/dcb_stubs)",
}
# Where `fabricgen push` keeps a host's commit records (the pending mark, each commit's undo and fate): the boot
# unit reads the pending mark there, so an unconfirmed commit is reverted at boot, never re-applied.
STATE_DIR = "/var/lib/fabricgen"
DEFAULT_PATH_MTU = 4096  # only for a skeleton without a host part: path_mtu is not in the script
LOAD_HINT = "# Load with `set -a; . ./nccl.env; set +a`, or copy the lines into /etc/nccl.conf."

# Time limits of the root-run scripts. Each external tool call runs under coreutils ``timeout`` (the scripts'
# ``bounded``): SIGTERM after TOOL_TIMEOUT_S seconds (FABRICGEN_TOOL_TIMEOUT overrides it on the host), SIGKILL
# KILL_AFTER_S seconds later; the script then names the tool and exits 3. A healthy call takes well under a second.
TOOL_TIMEOUT_S = 30
KILL_AFTER_S = 5
# The systemd unit's TimeoutStartSec: a whole run (two passes over every NIC, a few dozen calls per NIC) plus a
# backstop for a tool in uninterruptible sleep, which even SIGKILL does not end.
START_TIMEOUT = "10min"
# The scripts' wrapper: `bounded TOOL ARGS...` runs TOOL ARGS within the time limit.
BOUNDED = "bounded"
# The DCBX mode flags, in the order `dcb dcbx show` prints them (iproute2 dcb/dcb_dcbx.c).
DCBX_FLAGS = ("host", "lld-managed", "cee", "ieee", "static")


# --- rendering ------------------------------------------------------------------------------------------

@lru_cache(maxsize=1024)  # interface names repeat on every host
def nic_function(interface: str) -> str:
    """The bash function that configures ``interface``: the reader finds NIC functions by the ``nic_`` prefix,
    and a bash name takes only letters, digits and ``_``. Load refuses two ports of a host with one
    :func:`~fabricgen.models.common.shell_name` (``check_device``), so each NIC gets its own function."""
    return "nic_" + shell_name(interface)


@lru_cache(maxsize=1024)
def quote(word: str) -> str:
    """``shlex.quote``, remembered: the same interface and RDMA device names come back on every host."""
    return shlex.quote(word)


class NicQos(NamedTuple):
    """The QoS half of a NicModel, hashable. It is the same on every NIC of a fabric (the intent's classes), so
    each platform formats it once per fabric (an ``lru_cache`` over its ``NicQos``) instead of once per NIC."""

    trust: str
    pfc: tuple[int, ...]
    prio_tc: tuple[int, ...]
    tsa: tuple[str, ...]
    tcbw: tuple[int, ...]
    dscp2prio: tuple[tuple[int, int], ...]  # sorted by DSCP
    dcqcn_priorities: tuple[int, ...]
    dcqcn_enabled: bool
    cnp_dscp: int
    cnp_priority: int
    roce_tos: int

    @classmethod
    def of(cls, nic: NicModel) -> NicQos:
        return cls(nic.trust, tuple(nic.pfc), tuple(nic.prio_tc), tuple(nic.tsa), tuple(nic.tcbw),
                   _sorted_entries(nic.dscp2prio), tuple(nic.dcqcn_priorities), nic.dcqcn_enabled,
                   nic.cnp_dscp, nic.cnp_priority, nic.roce_tos)


@by_identity  # every NIC of a resolved fabric shares one 64-entry map: sorted once, not once per NIC
def _sorted_entries(mapping: dict[int, int]) -> tuple[tuple[int, int], ...]:
    return tuple(sorted(mapping.items()))


def nic_identity(nic: NicModel) -> tuple[str, str, str, int, str]:
    """The fields every host script's NicContext starts with: quoted interface, its shell function name,
    quoted RDMA device, MTU and the peer it is cabled to (the rest is the platform's QoS wording)."""
    return (quote(nic.interface), nic_function(nic.interface), quote(nic.rdma_device), nic.mtu,
            nic.peer or "no peer in inventory")


def dcb_map(keyword: str, values: Sequence[Any]) -> str:
    """An 8-entry ``dcb`` array as ``dcb ... show`` prints it and ``dcb ... set`` takes it: ``prio-tc 0:0 1:1 ...``
    (the scripts compare against what ``dcb`` shows)."""
    return " ".join([keyword] + [f"{index}:{value}" for index, value in enumerate(values)])


def ets_maps(prio_tc: Sequence[int], tsa: Sequence[str], tcbw: Sequence[int]) -> list[str]:
    """The three ``dcb ets`` arrays of an ETS setting (``prio-tc``, ``tc-tsa``, ``tc-bw``), as dcb_map writes them."""
    return [dcb_map("prio-tc", prio_tc), dcb_map("tc-tsa", tsa), dcb_map("tc-bw", tcbw)]


def checked(kind: str, values: Mapping[str, Any], ets_separator: str) -> str | None:
    """The text a script's `setting` line of ``kind`` checks for, from what its command set (a fresh NIC's
    ``values``), for the kinds both host scripts write alike: ``mtu``, ``roce tos``, ``pfc`` and ``ets`` (its three
    arrays joined by ``ets_separator``, as each script's reader prints them). "" when the command did not set it;
    None for any other kind (the platform's own)."""
    if kind == "ets":
        if not all(key in values for key in ("prio_tc", "tsa", "tcbw")):
            return ""
        return ets_separator.join(ets_maps(values["prio_tc"], values["tsa"], values["tcbw"]))
    if kind == "pfc":
        return dcb_map("prio-pfc", ["on" if flag else "off" for flag in values["pfc"]]) if "pfc" in values else ""
    key = {"mtu": "mtu", "roce tos": "roce_tos"}.get(kind)
    if key is None:
        return None
    return str(values[key]) if key in values else ""


def render_env(device: DeviceModel, header: Sequence[str]) -> str:
    """nccl.env: the platform's ``header`` comment lines, how to load the file, then ``KEY=VALUE`` lines sorted
    so that the file does not change with the order of the inventory."""
    assert device.host is not None
    lines = [*header, LOAD_HINT]
    lines += [f"{key}={value}" for key, value in sorted(device.host.nccl_env.items())]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class HostFiles:
    """A host platform's three files: the script, the systemd unit that re-runs it at boot (NIC QoS settings
    are lost at reboot or driver reload), nccl.env. Templates are ``<folder>/<file name>.j2``."""

    folder: str
    script: str
    unit: str
    install_path: str

    def render(self, device: DeviceModel, nic_context: Callable[[NicModel], Sequence[Any]],
               env: str, templates: Templates) -> dict[str, str]:
        """The files by name, script first; ``nic_context`` gives each NIC's template values (as attributes: a
        NamedTuple costs Jinja one getattr per value, a dict a failed getattr then a lookup), the NIC's identity
        (:func:`nic_identity`) first."""
        assert device.host is not None
        nics = [nic_context(nic) for nic in device.host.nics]
        return {
            self.script: self._script(device, nics, templates),
            self.unit: templates.render(f"{self.folder}/{self.unit}.j2", version=__version__, device=device,
                                        install_path=self.install_path, tool_timeout=TOOL_TIMEOUT_S,
                                        state_dir=STATE_DIR,
                                        start_timeout=START_TIMEOUT),
            NCCL_ENV: env,
        }

    def _script(self, device: DeviceModel, nics: list[Sequence[Any]], templates: Templates) -> str:
        """The script: the template's text for these NICs' QoS, with the host's name and each NIC's identity in
        their places. Hosts of a fabric differ only in those (thousands of hosts, a handful of QoS shapes), so the
        template is rendered once per shape, with marks in place of those values, and split at the marks. That is
        the host's own text as long as the templates only print those values, bare (never test, filter or compute
        with them): tests/test_host_script_pieces.py holds both host templates to it."""
        template = f"{self.folder}/{self.script}.j2"
        kept = templates.pieces(template)
        shape = tuple(tuple(nic[_IDENTITY:]) for nic in nics)
        values = _identities(device.name, nics)
        pieces = kept.get(shape)
        if pieces is None:
            if len(kept) >= _KEPT_SHAPES:
                kept.clear()
            pieces = kept[shape] = self._pieces(template, device, nics, values, templates)
        parts = [pieces[0]]
        for index in range(1, len(pieces), 2):  # a mark's slot, then the text up to the next one
            parts += (values[pieces[index]], pieces[index + 1])
        return "".join(parts)

    def _pieces(self, template: str, device: DeviceModel, nics: list[Sequence[Any]], values: dict[str, str],
                templates: Templates) -> tuple[str, ...]:
        """The template's text for these NICs' QoS as (text, slot, text, slot, ..., text), a slot naming the value
        that goes there (``values``: this host's, see _identities). Checked against this host's own rendering, so
        that a template that uses the name or an identity value otherwise than printing it as it is fails here,
        not silently."""
        context = {"version": __version__, "tool_timeout": TOOL_TIMEOUT_S, "kill_after": KILL_AFTER_S}
        marked_nics = [type(nic)(*(_mark(1 + _IDENTITY * i + k) for k in range(_IDENTITY)), *nic[_IDENTITY:])
                       for i, nic in enumerate(nics)]
        marked = templates.render(template, device=_Named(_mark(0)), nics=marked_nics, **context)
        pieces = tuple(_MARK.split(marked))
        own = templates.render(template, device=device, nics=nics, **context)
        if "".join(values[piece] if index % 2 else piece for index, piece in enumerate(pieces)) != own:
            raise RuntimeError(f"{template} must print the host's name and each NIC's identity as they are")
        return pieces


# A host script's pieces (HostFiles._script): what a NIC's identity is (nic_identity's fields, the first of each
# NicContext), the marks it is rendered with in their place, and how many QoS shapes are kept (a fabric has one).
_IDENTITY = 5
_MARK = re.compile("\0([0-9]+)\0")
_KEPT_SHAPES = 64


def _mark(slot: int) -> str:
    """What slot ``slot`` is rendered as: a NUL cannot be in a name or an identity value (their types refuse
    control characters), nor in a template."""
    return f"\0{slot}\0"


class _Named(NamedTuple):
    """The device as a host script's template reads it when it is split into pieces: its name only."""

    name: str


def _identities(name: str, nics: list[Sequence[Any]]) -> dict[str, str]:
    """The values a host script's slots name: "0" the device's name, "1 + 5i + k" the k-th identity field of NIC i."""
    values = [name, *[str(value) for nic in nics for value in nic[:_IDENTITY]]]
    return dict(zip(_slot_names(len(values)), values, strict=True))


@lru_cache(maxsize=16)
def _slot_names(count: int) -> tuple[str, ...]:
    return tuple(map(str, range(count)))


# --- reading the script ---------------------------------------------------------------------------------

_DIGITS = re.compile(r"\d+")
_FUNCTION = re.compile(r"(\w+)\(\) \{")  # a function's opening line: `name() {`
_WORD_ONLY = re.compile(r"\w+")  # a call in all_nics()

@dataclass
class Nic:
    """What one ``nic_*()`` function sets, field by field as NicModel names them (a platform may add more)."""

    function: str
    line: int
    interface: str = ""
    rdma_device: str = ""
    values: dict[str, Any] = field(default_factory=dict)
    # The platform's NicModel fields made from the above, kept once made: a Script is shared by the hosts that run
    # it (see ScriptFile.parse), and each host's NicModel is its skeleton NIC updated with these (shared, not
    # mutated: resolved NICs share their maps too).
    model_values: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    # (line, what) of each `setting` line whose checked value is not what its command sets (see ScriptFile.setting).
    conflicts: list[tuple[int, str]] = field(default_factory=list, compare=False, repr=False)


N = TypeVar("N", bound=Nic)
# A handler of one keyword line inside a NIC function: (the NIC so far, the stripped line, its line number).
LineFn = Callable[[N, str, int], None]


@dataclass
class Script(Generic[N]):
    """The script's NIC functions and the order ``all_nics()`` calls them in."""

    nics: dict[str, N] = field(default_factory=dict)  # by function name
    calls: list[str] | None = None  # the functions all_nics() calls


@dataclass(frozen=True)
class ScriptFile:
    """Reading one platform's script: every error names the script (``name``) and the line."""

    name: str

    def error(self, line: int, message: str) -> ConfigReadError:
        """An error at ``line`` of the script."""
        return ConfigReadError(self.name, line, message)

    def words(self, text: str, line: int) -> list[str]:
        """``text`` split as bash would (comments dropped); unbalanced quotes are the script's error."""
        fast = plain_words(text)  # lint helper (issue 26): shlex is most of `lint --configs` on hosts
        if fast is not None:
            return fast
        try:
            return shlex.split(text, comments=True)
        except ValueError as exc:  # unbalanced quotes
            raise self.error(line, f"cannot split into shell words: {exc}") from exc

    def number(self, text: str, line: int, what: str, high: int) -> int:
        """``text`` as a number 0-``high`` (what the tool accepts), else an error naming ``what``."""
        if not _DIGITS.fullmatch(text) or int(text) > high:
            raise self.error(line, f"{what}: expected a number 0-{high}, found {text!r}")
        return int(text)

    def local(self, nic: Nic, text: str, line: int) -> None:
        """``local ifname=IF rdma=DEV``: which NIC the function configures."""
        for word in self.words(text, line)[1:]:
            key, _, value = word.partition("=")
            if key == "ifname":
                nic.interface = value
            elif key == "rdma":
                nic.rdma_device = value

    def command(self, text: str, line: int) -> list[str]:
        """The words of the command ``text`` runs: ``bounded TOOL ARGS...`` (the scripts' time limit) runs TOOL
        ARGS, so it reads as TOOL ARGS written bare."""
        words = self.words(text, line)
        return words[1:] if words[:1] == [BOUNDED] else words

    def setting(self, command: Callable[[N, list[str], int], None],
                wanted: Callable[[str, list[str], N], str | None]) -> LineFn[N]:
        """A handler for ``setting NAME CURRENT WANTED -- COMMAND...`` lines that passes the words of COMMAND
        (what apply mode runs on a NIC that does not read as WANTED) to the platform's ``command``.

        WANTED is checked against COMMAND: ``wanted(kind, words, nic)`` is the text the script's reader would print
        for what COMMAND sets on a fresh ``nic`` (kind: NAME's words after the device, e.g. ``pfc``; None where it
        cannot tell: a kind it does not know). A hand edit of one of the two makes the script run either: apply
        mode skips the command on a NIC that already reads as WANTED (the driver's default, often), and runs it,
        then fails its own check, on any other. Each such line is kept in ``nic.conflicts`` (lint's FG-EVD-004)."""
        def handle(nic: N, text: str, line: int) -> None:
            head, sep, rest = text.partition(" -- ")
            if not sep:
                raise self.error(line, "a `setting` line without ` -- COMMAND`")
            words = self.command(rest, line)
            command(nic, words, line)
            # The lines name their NIC through "$ifname" and "$rdma": a script's NICs, and a fabric's hosts, repeat
            # the same few, each worked out once (a second read of the command cost a third of reading a host).
            key = (text, command, wanted)
            conflict = _CONFLICTS.get(key, _UNKNOWN)
            if conflict is _UNKNOWN:
                conflict = self._conflict(head, words, line, command, type(nic)(nic.function, nic.line), wanted)
                if len(_CONFLICTS) >= _BY_TEXT_SIZE * 64:
                    _CONFLICTS.clear()
                _CONFLICTS[key] = conflict
            if conflict is not None:
                nic.conflicts.append((line, conflict))
        return handle

    def _conflict(self, head: str, words: list[str], line: int, command: Callable[[N, list[str], int], None],
                  fresh: N, wanted: Callable[[str, list[str], N], str | None]) -> str | None:
        """What disagrees between a `setting` line's WANTED and its COMMAND, or None (also for a WANTED the shell
        works out when the script runs, and a kind ``wanted`` does not know)."""
        setting_words = self.words(head, line)
        if len(setting_words) != 4 or "$" in setting_words[3]:
            return None
        name, want = setting_words[1], " ".join(setting_words[3].split())
        kind = name.split(" ", 1)[1] if " " in name else name
        command(fresh, words, line)
        sets = wanted(kind, words, fresh)
        if sets is None or sets == want:
            return None
        if sets == "":
            return (f"`setting {name}` checks for {want!r} but its command ({' '.join(words[:2])} ...) does not set "
                    f"its {kind}")
        return f"`setting {name}` checks for {want!r} but its command sets {sets!r}"

    def bare(self, command: Callable[[N, list[str], int], None]) -> LineFn[N]:
        """A handler for a tool's command written on its own line in a NIC function (not through ``setting``), bare
        or through ``bounded``: it runs on every apply, so what it sets is what the NIC gets, like a ``setting``
        line's command."""
        def handle(nic: N, text: str, line: int) -> None:
            command(nic, self.command(text, line), line)
        return handle

    def parse(self, text: str, new_nic: Callable[[str, int], N], lines: Mapping[str, LineFn[N]]) -> Script[N]:
        """The NIC functions (each line whose keyword is in ``lines`` handled) and ``all_nics()``'s calls;
        other functions are the script's helpers. No header or no ``all_nics()``: not a fabricgen script.

        Two passes: the walk over the lines finds the functions, the lines of each NIC function that a handler
        reads (with their numbers) and all_nics()'s calls — the rest of the script (comments, helpers, the host's
        name in its messages) sets nothing. What the walk found is the key of ``_BY_TEXT``: the hosts of a fabric
        run scripts that differ only in such lines, so the handlers run once per distinct key and the Script is
        shared — read-only — by every host with that key. Errors are not kept: a script that fails fails again,
        at the same line (line numbers are part of the key)."""
        plain = _plain_breaks(text)
        source = text.split("\n", 3) if plain else text.splitlines()  # the same first lines when plain
        if not any(line.startswith("# fabricgen ") for line in source[:3]):
            raise self.error(1, "not a script fabricgen wrote (no `# fabricgen` header in its first lines)")
        functions, all_calls = _walked(text, lines) if plain else _walk(source, lines)
        key = (self.name, id(new_nic), id(lines),
               tuple((name, number, tuple(handled)) for name, number, handled in functions),
               None if all_calls is None else tuple(all_calls))
        hit = _BY_TEXT.get(key)
        if hit is not None and hit[0] is new_nic and hit[1] is lines:
            _LAST_PARSED[:] = [text, new_nic, lines, hit[2]]
            return cast(Script[N], hit[2])
        script: Script[N] = Script(calls=all_calls)
        for name, number, handled in functions:
            nic = script.nics[name] = new_nic(name, number)  # a second nic_X() replaces the first, as bash does
            for line_number, line in handled:
                lines[line.split(" ", 1)[0]](nic, line, line_number)
        if all_calls is None:  # after the handlers: a bad line is reported first, as the one-pass reader did
            raise self.error(len(text.splitlines()), "no all_nics() function: not a script fabricgen wrote")
        if len(_BY_TEXT) >= _BY_TEXT_SIZE:
            _BY_TEXT.clear()
        _BY_TEXT[key] = (new_nic, lines, script)
        _LAST_PARSED[:] = [text, new_nic, lines, script]
        return script


Walked = tuple[list[tuple[str, int, list[tuple[int, str]]]], list[str] | None]


def _plain_breaks(text: str) -> bool:
    """Whether ``text`` breaks lines at \\n alone: ASCII without the other breaks str.splitlines splits at (\\r,
    \\v, \\f, \\x1c-\\x1e), so that its lines are split("\\n")'s and [^\\S\\n] is all the whitespace strip() removes."""
    return text.isascii() and not any(brk in text for brk in _ASCII_BREAKS)


_ASCII_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")


def _walked(text: str, lines: Mapping[str, Any]) -> Walked:
    """_walk's answer for a plain text (_plain_breaks), once per text without its comment and echo lines. Such a
    line (``#``, or ``echo``, whitespace and more, first after whitespace) is nothing to _walk in any state: it
    opens no function and is no call (neither is a word alone), closes none, and no handler's keyword starts with
    ``#`` or ``echo`` (checked). The hosts of a fabric run scripts that differ only in those lines (the host's
    name, its cables): the walk over every line was most of reading a host (issue 26 item 7). The lines are
    emptied, not removed, so line numbers stay; the answer is shared, read-only."""
    if any(keyword.startswith(("#", "echo")) for keyword in lines):
        return _walk(text.splitlines(), lines)
    key = (id(lines), _COMMENT_LINE.sub("\n", "\n" + text))
    hit = _WALKED.get(key)
    if hit is not None and hit[0] is lines:
        return hit[1]
    walked = _walk(text.splitlines(), lines)
    if len(_WALKED) >= _BY_TEXT_SIZE:
        _WALKED.clear()
    _WALKED[key] = (lines, walked)
    return walked


# A comment or echo line, with the line break before it (the text is given one before its first line): the engine
# then looks for line breaks at C speed instead of trying every character as a line start.
_COMMENT_LINE = re.compile(r"\n[^\S\n]*+(?:#|echo[^\S\n]++\S)[^\n]*+")
# _walked's cache: (id(lines), the text without its comments) -> (lines, what _walk found); lines is held so that
# its id is not reused while the entry lives.
_WALKED: dict[tuple[int, str], tuple[Mapping[str, Any], Walked]] = {}


def _walk(source: list[str], lines: Mapping[str, Any]) -> Walked:
    """ScriptFile.parse's first pass: each NIC function (name, line, its lines a handler of ``lines`` reads, with
    their numbers) and all_nics()'s calls (None: no all_nics())."""
    functions: list[tuple[str, int, list[tuple[int, str]]]] = []  # name, line, handled lines
    body: list[tuple[int, str]] | None = None
    calls: list[str] | None = None
    all_calls: list[str] | None = None  # the last all_nics()'s (a second definition replaces the first)
    for number, raw in enumerate(source, 1):
        line = raw.strip()
        # `name() {` ends with `() {`: the regex is asked only of such lines (a script is mostly other lines)
        opened = _FUNCTION.fullmatch(line) if line.endswith("() {") else None
        if opened is not None:
            name = opened.group(1)
            body, calls = None, None
            if name == "all_nics":
                calls = all_calls = []
            elif name.startswith("nic_"):
                body = []
                functions.append((name, number, body))
        elif line == "}":
            body, calls = None, None
        elif body is not None:
            if line.split(" ", 1)[0] in lines:
                body.append((number, line))
        elif calls is not None and _WORD_ONLY.fullmatch(line):
            calls.append(line)
    return functions, all_calls


# ScriptFile.parse's cache: what the walk over a script found (see parse) → (new_nic, lines, Script); the entry holds
# new_nic and lines so that their ids, in the key, are not reused while it lives. A fabric has one key per host
# platform and NIC layout; the bound only caps what a long-lived process keeps.
_BY_TEXT: dict[tuple[Any, ...], tuple[Any, Any, Any]] = {}
_BY_TEXT_SIZE = 64
# ScriptFile.setting's answers by line text and the platform's functions (held in the key: their ids stay theirs).
_CONFLICTS: dict[tuple[str, Any, Any], Any] = {}
_UNKNOWN = object()
# The text parse() read last (held: its identity is the test), with what it was read with and the Script it gave.
_LAST_PARSED: list[Any] = [None, None, None, None]


# --- nccl.env -------------------------------------------------------------------------------------------

def parse_env(text: str) -> dict[str, str]:
    """``KEY=VALUE`` lines as ``set -a; . ./nccl.env`` reads them (``export`` and quoted values too)."""
    env: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = re.fullmatch(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)", line)
        if match is None:
            raise ConfigReadError(NCCL_ENV, number, f"expected KEY=VALUE, found {line!r}")
        value = match.group(2)
        if value[:1] in ("'", '"'):
            try:
                value = "".join(shlex.split(value))
            except ValueError as exc:
                raise ConfigReadError(NCCL_ENV, number, f"unbalanced quotes in {line!r}") from exc
        env[match.group(1)] = value
    return env


# --- owned and read -------------------------------------------------------------------------------------

def conflicts(files: Mapping[str, str], script_file: ScriptFile, new_nic: Callable[[str, int], N],
              lines: Mapping[str, LineFn[N]]) -> list[ConfigConflict]:
    """The `setting` lines of the NIC functions all_nics() calls whose checked value is not what their command sets
    (ScriptFile.setting), each on its NIC's interface. ``lint --configs`` asks right after read() of the same text:
    the Script read() made is taken again (parsing it again would cost a third of reading the host)."""
    if script_file.name not in files:
        return []
    text = files[script_file.name]
    last = _LAST_PARSED
    if last[0] is text and last[1] is new_nic and last[2] is lines:
        script = cast(Script[N], last[3])
    else:
        script = script_file.parse(text, new_nic, lines)
    found = []
    for name in dict.fromkeys(script.calls or []):
        nic = script.nics.get(name)
        if nic is not None:
            found += [ConfigConflict(script_file.name, line, what, nic.interface or None)
                      for line, what in nic.conflicts]
    return found


def owned(device: DeviceModel, owned_nic: Callable[[NicModel], dict[str, Any]]) -> dict[str, Any]:
    """The host's NICs (keyed by interface, each as the platform's ``owned_nic`` projects it) and nccl_env."""
    host = device.host
    if host is None:
        return {"nics": {}, "nccl_env": {}}
    return {"nics": {nic.interface: owned_nic(nic) for nic in host.nics}, "nccl_env": dict(host.nccl_env)}


def read(skeleton: DeviceModel, files: Mapping[str, str], script_file: ScriptFile, new_nic: Callable[[str, int], N],
         lines: Mapping[str, LineFn[N]], nic_model: Callable[[N, NicModel | None], NicModel]) -> DeviceModel:
    """``skeleton`` with its NICs (those ``all_nics()`` calls, in that order, each made by ``nic_model`` over the
    skeleton NIC of its interface) and nccl_env (a missing nccl.env: no settings) replaced by the files'."""
    if script_file.name not in files:
        raise ConfigReadError(script_file.name, 0, "file missing")
    script = script_file.parse(files[script_file.name], new_nic, lines)
    old = {nic.interface: nic for nic in (skeleton.host.nics if skeleton.host else [])}
    nics = [nic_model(script.nics[name], old.get(script.nics[name].interface))
            for name in (script.calls or []) if name in script.nics]
    env = parse_env(files.get(NCCL_ENV, ""))
    if skeleton.host is None:
        host = HostModel(nics=nics, nccl_env=env, path_mtu=DEFAULT_PATH_MTU)
    else:
        host = updated(skeleton.host, {"nics": nics, "nccl_env": env})
    return updated(skeleton, {"host": host})


# --- lint helper (issue 26): a fast path for shlex.split ---------------------------------------------------
# Bare runs, '…' and "…" segments, and the whitespace between words; a line without a backslash or `#` is split by
# these alone exactly as shlex.split(posix, comments=True) splits it (inside "…" only a backslash escapes).
_WORD = re.compile(r"(?:[^\s'\"]++|'[^']*+'|\"[^\"]*+\")++")  # possessive: no backtracking on a bad line
_LINE = re.compile(r"\s*+(?:(?:[^\s'\"]++|'[^']*+'|\"[^\"]*+\")++\s*+)*+")
_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")


def plain_words(text: str) -> list[str] | None:
    """``text`` split into shell words when it has no backslash, no ``#`` and balanced quotes; else None (the caller
    falls back to shlex, which also reports unbalanced quotes)."""
    if "\\" in text or "#" in text or not _LINE.fullmatch(text):
        return None
    return [_unquote(word) if "'" in word or '"' in word else word for word in _WORD.findall(text)]


def _unquote(word: str) -> str:
    return _QUOTED.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), word)
