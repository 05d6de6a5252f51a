"""The lab's Arista EOS target: an eAPI server over real HTTPS implementing EOS's documented config-session
semantics on a running-config kept in the lab host. No Arista image runs here (none can be fetched on this kind
of machine); this program is test infrastructure that behaves as the EOS manual describes, so fabricgen's EOS
driver (NAPALM's core ``eos`` driver underneath, through pyeapi) is tested over the real protocol stack.

What it implements, from the Arista EOS User Manual ("Configure Session", "Configure Replace", "Configuration
Checkpoints"), Arista's EOS Central article "Config Session Commit Timer" and the eAPI documentation (JSON-RPC
2.0 ``runCmds`` at ``/command-api``). The manual: "A snapshot of the current running-config is copied into the
session's data structure as the basis of further configuration changes"; "rollback clean-config: ... revert the
session configuration to the factory-default configuration"; "When a session is committed, the configuration that
was modified during the session is copied into running-config, overwriting any other configuration changes made
since the session was created". The article: "After issuing a commit timer operation, the user is required to
[do] a second commit of that session ... If due to any reason (such as network disruption), the user is not able
to issue the second commit, the system will automatically rollback to the previous state at the end of the timer."

* eAPI: ``POST /command-api`` with HTTP basic auth checked against the running-config's ``username ... secret
  sha512`` lines (a wrong login is HTTP 401), ``{"method": "runCmds", "params": {"version": 1, "cmds": [...],
  "format": "json"|"text"}}``. The commands of one request run in order in one CLI session (exec mode first);
  the first failing command stops the request: error 1002 "CLI command N of M '<cmd>' failed: invalid command"
  whose data holds the outputs so far and the failing command's ``errors``, as pyeapi parses it.
* ``configure session NAME``: a session starts as a copy of the running-config; ``rollback clean-config`` empties
  it (the factory default: physical interfaces stay, unconfigured); lines then edit the session only. ``show
  session-config [named NAME] diffs`` is a unified diff from ``system:/running-config`` to the session's config.
  ``commit`` makes it the running-config; ``commit timer hh:mm:ss`` (also ``configure session NAME commit timer
  hh:mm:ss`` from exec mode) commits it *pending*: unless the session is committed again before the timer
  ends, the switch rolls back to the config from before ("pendingCommitTimer" in ``show configuration
  sessions``). The timer is this daemon's own thread: it fires whether or not any client is still connected.
  ``configure session NAME abort`` drops an open session, or rolls a pending one back at once.
* ``configure checkpoint save NAME`` stores the running-config as ``checkpoint:NAME``; ``configure replace
  checkpoint:NAME`` (or ``flash:NAME``, ``startup-config``) replaces the running-config with that file.
* ``write memory`` / ``copy running-config startup-config`` save; ``copy startup-config flash:NAME``; ``delete
  checkpoint:NAME`` / ``delete flash:NAME`` (a file that is not there is refused).
* ``show version``, ``show hostname``, ``show interfaces``, ``show running-config``, ``show startup-config``,
  ``show configuration sessions [detail]`` (EOS 4.31's JSON shape, which NAPALM reads), ``show configuration
  checkpoints``.

Error texts are modelled on EOS's ("% Invalid input", "No such file or directory"): the behaviour (what is
refused, what stays unchanged) is the manual's; the exact wording is not copied from a device.

State (the lab reads it from outside through ``Lab.state_dir``): ``running-config``, ``startup-config``,
``checkpoints/``, ``flash/``, ``sessions.json`` and the lab CA (``ca.pem``) the driver verifies the server with.
"""

from __future__ import annotations

import base64
import datetime
import difflib
import functools
import hmac
import ipaddress
import json
import os
import re
import secrets
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TOOLS = ("eos-eapi",)
DAEMON = "eos-eapi"
STATE_VAR = "EOS_TARGET_STATE"
LOG_VAR = "EOS_TARGET_LOG"
DATA = Path(__file__).resolve().parent / "data" / "eos"
# The lab's eAPI logins (test credentials of a throwaway lab, not secrets): the starting config holds their hashes.
LAB_USER = "admin"
LAB_PASSWORD = "fabricgen-lab-eapi"
OPERATOR_PASSWORD = "fabricgen-lab-operator"
MODEL = "DCS-7060X5-64S"
VERSION = "4.31.2F"
PHYSICAL = [*(f"Ethernet{slot}/1" for slot in range(1, 65)), "Management1"]
PORT = 443
MAX_SAVED_SESSIONS = 1  # EOS keeps one completed session by default ("service configuration session max completed")


# --- the CLI model: a config as a tree of mode blocks ------------------------------------------------------
# The EOS CLI model of the lab's EOS target (no Arista image runs here): a config as a tree of mode blocks.
#
# eAPI clients send configuration as flat, unindented lines (NAPALM strips every line before sending), so nesting
# comes from the CLI's modes as on EOS: a line opens a mode (``interface Ethernet1/1``) or is a command of the
# current mode; a line the current mode does not know is tried in the enclosing modes, and one no mode knows is
# refused ("% Invalid input"), as the EOS CLI does. The grammar below covers what the target's starting
# running-config and fabricgen's eos.cfg contain, with value ranges where EOS bounds them (MTU 68-9214 on the
# 7060X5, DSCP 0-63, traffic classes and queues 0-7, bandwidth percent 1-100).
#
# ``show running-config`` prints the tree in EOS's canonical order, whatever order the lines came in: top-level
# sections and interface lines in the order of Arista's pyavd eos_cli_config_gen templates
# (``eos_intended_config`` and ``ethernet-interfaces``), which Arista keeps equal to EOS running-config output;
# defaults are not printed (``no shutdown`` and ``switchport`` on an interface). ``!`` separates top-level blocks
# and sub-blocks, indentation is three spaces per level: the layout of an EOS running-config.


INDENT = "   "


class CliError(Exception):
    """A line the CLI refuses; the text is what EOS prints (without its leading "% ")."""


@dataclass
class Block:
    """One config line and the lines of the mode it opens."""

    text: str
    mode: str = ""  # the mode this line opens ("" for a plain command)
    children: list[Block] = field(default_factory=list)


def _in_range(low: int, high: int) -> Callable[[re.Match[str]], bool]:
    return lambda match: all(low <= int(value) <= high for value in re.findall(r"\d+", match.group(1)))


@dataclass(frozen=True)
class Command:
    """A command of a mode: the pattern of its whole line, the key under which a later line replaces it
    (``None``: the line is its own key, several may coexist), a value check, and whether the line states the
    default (then it is not stored, and it clears the key)."""

    pattern: str
    key: str | None = None
    valid: Callable[[re.Match[str]], bool] | None = None
    default: bool = False


@dataclass(frozen=True)
class Opener:
    """A line that opens a sub-mode."""

    pattern: str
    mode: str


INTERFACE_COMMANDS = (
    Command(r"description .+", "description"),
    Command(r"shutdown", "shutdown"),
    Command(r"no shutdown", "shutdown", default=True),
    Command(r"load-interval \d+", "load-interval"),
    Command(r"mtu (\d+)", "mtu", _in_range(68, 9214)),
    Command(r"l2 mtu (\d+)", "l2 mtu", _in_range(68, 10178)),
    Command(r"speed (?:auto|forced )?(\d+(?:p\d+)?g(?:-\d)?|\d+full|\d+gfull)", "speed"),
    Command(r"(?:no )?error-correction encoding(?: reed-solomon| fire-code)?", "error-correction"),
    Command(r"switchport access vlan (\d+)", "switchport access vlan", _in_range(1, 4094)),
    Command(r"switchport trunk native vlan .+", "switchport trunk native vlan"),
    Command(r"switchport trunk allowed vlan .+", "switchport trunk allowed vlan"),
    Command(r"switchport mode (?:access|trunk|routed)", "switchport mode"),
    Command(r"switchport", "switchport", default=True),
    Command(r"no switchport", "switchport"),
    Command(r"vrf \S+", "vrf"),
    Command(r"ip address \d+\.\d+\.\d+\.\d+/(\d+)", "ip address", _in_range(0, 32)),
    Command(r"ipv6 address \S+", "ipv6 address"),
    Command(r"bfd interval .+", "bfd interval"),
    Command(r"channel-group \d+ mode (?:active|passive|on)", "channel-group"),
    Command(r"ip access-group \S+ (?:in|out)"),
    Command(r"service-profile \S+", "service-profile"),
    Command(r"(?:no )?qos trust(?: dscp| cos)?", "qos trust"),
    Command(r"priority-flow-control on", "pfc"),
    Command(r"no priority-flow-control", "pfc"),
    Command(r"priority-flow-control priority ([0-7]) (?:no-drop|drop)"),
)
QUEUE_COMMANDS = (
    Command(r"priority strict", "priority"),
    Command(r"no priority", "priority"),
    Command(r"bandwidth percent (\d+)", "bandwidth percent", _in_range(1, 100)),
    Command(r"bandwidth guaranteed .+", "bandwidth guaranteed"),
    Command(r"random-detect ecn minimum-threshold (\d+) (?:bytes|kbytes|mbytes|segments) maximum-threshold (\d+) "
            r"(?:bytes|kbytes|mbytes|segments) max-mark-probability (\d+)(?: weight \d+)?", "random-detect ecn"),
    Command(r"random-detect ecn count", "random-detect ecn count"),
)
PROFILE_COMMANDS = (
    Command(r"(?:no )?qos trust(?: dscp| cos)?", "qos trust"),
    Command(r"priority-flow-control on", "pfc"),
    Command(r"priority-flow-control priority ([0-7]) (?:no-drop|drop)"),
    Command(r"priority-flow-control pause watchdog", "pfc watchdog"),
    Command(r"priority-flow-control pause watchdog port .+"),
)
_SECONDS = r"(\d+(?:\.\d{1,3})?)"
TOP_COMMANDS = (
    Command(r"no aaa root", "aaa root"),
    Command(r"username (\S+) privilege \d+ role \S+ secret sha512 \S+", "username"),
    Command(r"service routing protocols model (?:multi-agent|ribd)", "service routing protocols model"),
    Command(r"hostname \S+", "hostname"),
    Command(r"ip name-server vrf \S+ \S+"),
    Command(r"dns domain \S+", "dns domain"),
    Command(r"spanning-tree mode (?:mstp|rstp|none)", "spanning-tree mode"),
    Command(r"ip routing", "ip routing"),
    Command(r"no ip routing vrf (\S+)", "ip routing vrf"),
    Command(r"ip routing vrf (\S+)", "ip routing vrf"),
    Command(r"ip route (?:vrf \S+ )?\S+ \S+.*"),
    Command(r"ipv6 route (?:vrf \S+ )?\S+ \S+.*"),
    Command(r"ntp server (?:vrf \S+ )?\S+(?: prefer)?"),
    Command(r"qos map dscp ([\d ]+) to traffic-class (\d+)", None, _in_range(0, 63)),
    Command(r"qos map traffic-class ([\d ]+) to (?:uc-)?tx-queue (\d+)", None, _in_range(0, 7)),
    Command(rf"priority-flow-control pause watchdog default timeout {_SECONDS}", "pfcwd timeout"),
    Command(rf"priority-flow-control pause watchdog default recovery-time {_SECONDS}", "pfcwd recovery-time"),
    Command(rf"priority-flow-control pause watchdog default polling-interval {_SECONDS}", "pfcwd polling-interval"),
    # EOS takes drop | errdisable | notify-only here (not no-drop: Arista avd #6399).
    Command(r"priority-flow-control pause watchdog action (?:drop|errdisable|notify-only)", "pfcwd action"),
)
BGP_COMMANDS = (
    Command(r"router-id \S+", "router-id"),
    Command(r"no bgp default ipv4-unicast", "bgp default ipv4-unicast"),
    Command(r"maximum-paths \d+(?: ecmp \d+)?", "maximum-paths"),
    Command(r"neighbor \S+ .+"),
    Command(r"network \S+"),
    Command(r"redistribute \S+(?: .+)?"),
)
ACL_COMMANDS = (Command(r"(?:\d+ )?(?:permit|deny|remark) .+"),)
SHUTDOWN = (Command(r"shutdown", "shutdown"), Command(r"no shutdown", "shutdown"))
MODES: dict[str, tuple[tuple[Command, ...], tuple[Opener, ...]]] = {
    "top": (TOP_COMMANDS, (
        Opener(r"interface (?:Ethernet|Management|Loopback|Vlan|Port-Channel)\d+(?:/\d+)*", "interface"),
        Opener(r"qos profile \S+", "qos-profile"),
        Opener(r"vrf instance \S+", "vrf"),
        Opener(r"vlan \d+", "vlan"),
        Opener(r"router bgp \d+", "bgp"),
        Opener(r"ip access-list \S+", "acl"),
        Opener(r"management api http-commands", "api"),
        Opener(r"management ssh", "ssh"),
    )),
    "interface": (INTERFACE_COMMANDS, (Opener(r"(?:uc-)?tx-queue ([0-7])", "queue"),)),
    "qos-profile": (PROFILE_COMMANDS, (Opener(r"(?:uc-|mc-)?tx-queue ([0-7])", "queue"),)),
    "queue": (QUEUE_COMMANDS, ()),
    "vrf": ((Command(r"description .+", "description"),), ()),
    "vlan": ((Command(r"name \S+", "name"),), ()),
    "bgp": (BGP_COMMANDS, (Opener(r"address-family (?:ipv4|ipv6|evpn)", "af"), Opener(r"vrf \S+", "bgp-vrf"))),
    "af": ((Command(r"(?:no )?neighbor \S+ activate"), Command(r"network \S+")), ()),
    "bgp-vrf": (BGP_COMMANDS, ()),
    "acl": (ACL_COMMANDS, ()),
    "api": ((Command(r"protocol https(?: port \d+)?", "protocol"), *SHUTDOWN), (Opener(r"vrf \S+", "api-vrf"),)),
    "api-vrf": (SHUTDOWN, ()),
    "ssh": ((Command(r"idle-timeout \d+", "idle-timeout"), *SHUTDOWN), (Opener(r"vrf \S+", "api-vrf"),)),
}


class Editor:
    """Applies flat CLI lines to a config tree, tracking the mode stack as the EOS CLI does."""

    def __init__(self, root: Block) -> None:
        self.root = root
        self.stack: list[Block] = [root]

    def apply(self, line: str) -> None:
        line = line.strip()
        if not line or (line.startswith("!") and not line.startswith("!!")):
            return
        if line == "exit":
            if len(self.stack) > 1:
                self.stack.pop()
            return
        for depth in range(len(self.stack) - 1, -1, -1):
            if self._apply_in(self.stack[depth], line, depth):
                return
        raise CliError(f"Invalid input (at token 0: '{line.split()[0]}')")

    def _apply_in(self, block: Block, line: str, depth: int) -> bool:
        commands, openers = MODES[block.mode]
        for opener in openers:
            if re.fullmatch(opener.pattern, line):
                del self.stack[depth + 1:]
                self.stack.append(_child(block, line, opener.mode))
                return True
        for command in commands:
            match = re.fullmatch(command.pattern, line)
            if match is not None:
                if command.valid is not None and not command.valid(match):
                    raise CliError(f"Invalid input (value out of range: '{line}')")
                del self.stack[depth + 1:]
                _set(block, line, command)
                return True
        if line.startswith("no ") and _negate(block, line[3:]):
            del self.stack[depth + 1:]
            return True
        return False


def _negate(block: Block, line: str) -> bool:
    """``no <line>``: remove a sub-mode or the lines of a command's key."""
    commands, openers = MODES[block.mode]
    if any(re.fullmatch(opener.pattern, line) for opener in openers):
        block.children = [child for child in block.children if child.text != line]
        return True
    if any(re.fullmatch(command.pattern, line) for command in commands):
        key = _key_of(block.mode, line)
        block.children = [child for child in block.children if _key_of(block.mode, child.text) != key]
        return True
    return False


def _child(block: Block, line: str, mode: str) -> Block:
    for child in block.children:
        if child.text == line:
            return child
    child = Block(line, mode)
    block.children.append(child)
    return child


def _key_of(mode: str, line: str) -> str:
    for command in MODES[mode][0]:
        match = re.fullmatch(command.pattern, line)
        if match is not None:
            if command.key in ("username", "ip routing vrf"):  # one line per user, per VRF
                return f"{command.key} {match.group(1)}"
            return command.key or line
    return line


def _set(block: Block, line: str, command: Command) -> None:
    key = _key_of(block.mode, line)
    position = next((i for i, child in enumerate(block.children) if _key_of(block.mode, child.text) == key),
                    len(block.children))
    block.children = [child for child in block.children if _key_of(block.mode, child.text) != key]
    if not command.default:
        block.children.insert(position, Block(line))


# --- reading and printing a running-config -----------------------------------------------------------------

def parse(text: str) -> Block:
    """A config as stored or shown (indented, ``!`` separators, an ``end``) back into its tree; the same grammar
    applies, so a stored config holds only what the CLI would accept."""
    root = Block("", "top")
    editor = Editor(root)
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped == "end":
            break
        indent = (len(raw) - len(raw.lstrip(" "))) // len(INDENT)
        if stripped and not stripped.startswith("!"):
            del editor.stack[indent + 1:]
            editor.apply(stripped)
    return root


TOP_ORDER = (  # pyavd eos_intended_config's section order (= EOS running-config order), the sections modelled
    r"no aaa root", r"username ", r"service routing protocols model", r"hostname ", r"ip name-server", r"dns domain",
    r"qos profile ", r"spanning-tree ", r"vlan ", r"vrf instance ", r"management api http-commands",
    r"interface Port-Channel", r"interface Ethernet", r"interface Loopback", r"interface Management",
    r"interface Vlan", r"ip access-list ", r"ip routing$", r"(?:no )?ip routing vrf ", r"ip route ", r"ipv6 route ",
    r"ntp ", r"qos map ", r"priority-flow-control ", r"router bgp ", r"management ssh",
)
INTERFACE_ORDER = (  # pyavd ethernet-interfaces.j2's line order
    r"description ", r"shutdown", r"load-interval ", r"mtu ", r"l2 mtu ", r"speed ", r"(?:no )?error-correction",
    r"switchport access vlan", r"switchport trunk native", r"switchport trunk allowed", r"switchport mode",
    r"(?:no )?switchport$", r"vrf ", r"ip address ", r"ipv6 address", r"bfd ", r"channel-group ",
    r"ip access-group ", r"service-profile ", r"(?:no )?qos trust", r"(?:no )?priority-flow-control",
    r"(?:uc-)?tx-queue ",
)


def _rank(order: tuple[str, ...], text: str) -> int:
    return next((i for i, prefix in enumerate(order) if re.match(prefix, text)), len(order))


def natural_key(text: str) -> list[int | str]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _top_key(index: int, block: Block) -> tuple[int, list[int | str], int]:
    sortable = block.text.startswith(("interface ", "vlan ", "vrf instance ", "qos profile "))
    return _rank(TOP_ORDER, block.text), natural_key(block.text) if sortable else [], index


def canonical(root: Block) -> list[Block]:
    return [block for _, block in sorted(enumerate(root.children), key=lambda pair: _top_key(*pair))]


def _lines(block: Block, depth: int) -> list[str]:
    children = block.children
    if block.mode == "interface":
        children = [c for _, c in sorted(enumerate(children), key=lambda p: (_rank(INTERFACE_ORDER, p[1].text), p[0]))]
    lines = [INDENT * depth + block.text]
    for child in children:
        if child.mode:
            lines.append(INDENT * (depth + 1) + "!")
        lines += _lines(child, depth + 1)
    return lines


def render(root: Block, physical: list[str]) -> str:
    """The running-config body as EOS prints it (physical interfaces are always listed, configured or not)."""
    present = {block.text for block in root.children}
    shown = Block("", "top", [*root.children, *(Block(f"interface {name}", "interface") for name in physical
                                                 if f"interface {name}" not in present)])
    lines: list[str] = []
    previous_rank = -1
    for block in canonical(shown):
        rank = _rank(TOP_ORDER, block.text)
        if block.mode or rank != previous_rank or not lines:
            lines.append("!")
        lines += _lines(block, 0)
        previous_rank = rank
    return "\n".join([*lines, "!", "end"]) + "\n"


class CommandFailed(Exception):
    """The command is refused; the message is the CLI's error text."""


# --- state ---------------------------------------------------------------------------------------------------

@dataclass
class Session:
    config: str  # the session's config, as show session-config would print it
    state: str = "pending"  # pending | pendingCommitTimer | completed
    rollback: str | None = None  # the running-config before a timer commit
    expires: float | None = None  # wall-clock time a pending commit rolls back
    completed: float | None = None


@dataclass
class Device:
    directory: Path
    boot: float = field(default_factory=time.time)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def read(self, name: str) -> str:
        return (self.directory / name).read_text()

    def write(self, name: str, text: str) -> None:
        path = self.directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(text)
        partial.replace(path)

    @property
    def running(self) -> str:
        return self.read("running-config")

    @running.setter
    def running(self, text: str) -> None:
        self.write("running-config", text)

    def sessions(self) -> dict[str, Session]:
        path = self.directory / "sessions.json"
        raw = json.loads(path.read_text()) if path.exists() else {}
        return {name: Session(**fields) for name, fields in raw.items()}

    def save_sessions(self, sessions: dict[str, Session]) -> None:
        completed = sorted((s.completed or 0, name) for name, s in sessions.items() if s.state == "completed")
        for _, name in completed[:-MAX_SAVED_SESSIONS]:
            del sessions[name]
        self.write("sessions.json", json.dumps({n: vars(s) for n, s in sorted(sessions.items())}, indent=1) + "\n")

    def tree(self, text: str | None = None) -> Block:
        return parse(self.running if text is None else text)

    def uptime(self) -> float:
        return time.time() - self.boot


def show(tree: Block) -> str:
    return render(tree, PHYSICAL)


# --- one eAPI request: a CLI session ---------------------------------------------------------------------------

@dataclass
class Cli:
    device: Device
    session: str | None = None  # the config session being edited
    editor: Editor | None = None
    terminal: bool = False  # `configure`: edits go to the running-config directly

    def run(self, command: str, text: bool) -> dict[str, Any]:
        command = command.strip()
        if self.editor is not None:
            return self._in_config(command, text)
        for pattern, handler in EXEC:
            match = re.fullmatch(pattern, command)
            if match is not None:
                return handler(self, match, text)
        raise CommandFailed(f"Invalid input (at token 0: '{command.split()[0] if command else ''}')")

    # config mode (a session or the terminal)
    def _in_config(self, command: str, text: bool) -> dict[str, Any]:
        assert self.editor is not None
        if command == "end" or (command == "exit" and len(self.editor.stack) == 1):
            self.leave()
            return {}
        for pattern, handler in SESSION if self.session else ():
            match = re.fullmatch(pattern, command)
            if match is not None:
                return handler(self, match, text)
        try:
            self.editor.apply(command)
        except CliError as error:
            raise CommandFailed(str(error)) from None
        return {}

    def leave(self) -> None:
        assert self.editor is not None
        sessions = self.device.sessions()
        if self.session and self.session in sessions:
            sessions[self.session].config = show(self.editor.root)
            self.device.save_sessions(sessions)
        elif self.terminal:
            self.device.running = show(self.editor.root)
        self.session, self.editor, self.terminal = None, None, False

    def store(self) -> None:
        """The session as edited so far (a later failing command leaves the earlier lines in it, as on EOS)."""
        if self.session and self.editor is not None:
            sessions = self.device.sessions()
            if self.session in sessions:
                sessions[self.session].config = show(self.editor.root)
                self.device.save_sessions(sessions)
        elif self.terminal and self.editor is not None:
            self.device.running = show(self.editor.root)


def output(text: bool, json_value: dict[str, Any], text_value: str = "") -> dict[str, Any]:
    return {"output": text_value} if text else json_value


def _enable(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    return output(text, {})


def _configure_terminal(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    cli.editor, cli.terminal = Editor(cli.device.tree()), True
    return output(text, {})


def _configure_session(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    name = match.group(1)
    sessions = cli.device.sessions()
    session = sessions.get(name)
    if session is not None and session.state != "pending":
        raise CommandFailed(f"Cannot enter session {name} (session has already been committed)")
    if session is None:
        if sum(s.state == "pending" for s in sessions.values()) >= 5:
            raise CommandFailed("Maximum number of pending sessions has been reached")
        session = sessions[name] = Session(cli.device.running)
        cli.device.save_sessions(sessions)
    cli.session, cli.editor = name, Editor(parse(session.config))
    return output(text, {})


def _session_action(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    name, action, timer = match.group(1), match.group(2), match.group(3)
    if action == "abort":
        abort(cli.device, name)
    else:
        commit(cli.device, name, timer)
    return output(text, {})


def _in_session_rollback_clean(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    cli.editor = Editor(Block("", "top"))
    cli.store()
    return output(text, {})


def _in_session_commit(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    assert cli.session is not None
    cli.store()
    name = cli.session
    cli.session, cli.editor = None, None
    commit(cli.device, name, match.group(1))
    return output(text, {})


def _in_session_abort(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    assert cli.session is not None
    name = cli.session
    cli.session, cli.editor = None, None
    abort(cli.device, name)
    return output(text, {})


def _in_session_diffs(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    assert cli.session is not None and cli.editor is not None
    cli.store()
    return output(text, {"diffs": diff(cli.device.running, show(cli.editor.root), cli.session)},
                  diff(cli.device.running, show(cli.editor.root), cli.session))


def _show_session_diffs(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    name = match.group(1)
    session = cli.device.sessions().get(name)
    if session is None:
        raise CommandFailed(f"Session {name} does not exist")
    body = diff(cli.device.running, session.config, name)
    return output(text, {"diffs": body}, body)


def diff(running: str, session: str, name: str) -> str:
    """EOS's session diff: running-config to session-config, unified, three lines of context."""
    lines = difflib.unified_diff(running.splitlines(), session.splitlines(), "system:/running-config",
                                 f"session:/{name}-session-config", lineterm="")
    return "".join(line + "\n" for line in lines)


def commit(device: Device, name: str, timer: str | None) -> None:
    sessions = device.sessions()
    session = sessions.get(name)
    if session is None:
        raise CommandFailed(f"Session {name} does not exist")
    if session.state == "pendingCommitTimer":  # the confirming commit: the timer stops, the config stays
        if timer:
            raise CommandFailed(f"Session {name} already has a commit timer running")
        session.state, session.rollback, session.expires, session.completed = "completed", None, None, time.time()
        device.save_sessions(sessions)
        return
    if session.state != "pending":
        raise CommandFailed(f"Cannot commit session {name} (session has already been committed)")
    if any(s.state == "pendingCommitTimer" for s in sessions.values()):
        raise CommandFailed("Cannot commit: another session has a commit timer pending")
    seconds = _timer_seconds(timer) if timer else None
    previous = device.running
    device.running = session.config
    if seconds is None:
        session.state, session.completed = "completed", time.time()
    else:
        session.state, session.rollback, session.expires = "pendingCommitTimer", previous, time.time() + seconds
    device.save_sessions(sessions)


def _timer_seconds(timer: str) -> int:
    hours, minutes, seconds = (int(part) for part in timer.split(":"))
    if minutes > 59 or seconds > 59 or not 0 < hours * 3600 + minutes * 60 + seconds < 24 * 3600:
        raise CommandFailed(f"Invalid input (at token 2: '{timer}')")
    return hours * 3600 + minutes * 60 + seconds


def abort(device: Device, name: str) -> None:
    sessions = device.sessions()
    session = sessions.get(name)
    if session is None:
        raise CommandFailed(f"Session {name} does not exist")
    if session.state == "completed":
        raise CommandFailed(f"Cannot abort session {name} (session has already been committed)")
    if session.state == "pendingCommitTimer" and session.rollback is not None:
        device.running = session.rollback  # aborting a pending commit rolls it back now
    del sessions[name]
    device.save_sessions(sessions)


def expire_timers(device: Device) -> None:
    """Roll back every pending commit whose timer has run out (the switch does it by itself)."""
    with device.lock:
        sessions = device.sessions()
        now = time.time()
        due = [name for name, s in sessions.items() if s.state == "pendingCommitTimer" and (s.expires or 0) <= now]
        for name in due:
            device.running = sessions[name].rollback or device.running
            del sessions[name]
        if due:
            device.save_sessions(sessions)
            log(device, {"event": "commit timer expired, rolled back", "sessions": due})


def _checkpoint_save(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    cli.device.write(f"checkpoints/{match.group(1)}", cli.device.running)
    return output(text, {})


def _delete(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    """``delete checkpoint:NAME`` / ``delete flash:NAME``: a file that is not there is refused."""
    url = f"{match.group(1)}:{match.group(2)}"
    _file(cli.device, url)
    (cli.device.directory / {"checkpoint": "checkpoints", "flash": "flash"}[match.group(1)] / match.group(2)).unlink()
    return output(text, {})


def _file(device: Device, url: str) -> str:
    scheme, _, name = url.partition(":")
    path = {"checkpoint": device.directory / "checkpoints" / name, "flash": device.directory / "flash" / name,
            "startup-config": device.directory / "startup-config"}.get(scheme)
    if path is None or (not name and scheme != "startup-config") or not path.is_file():
        raise CommandFailed(f"Error opening {url} (No such file or directory)")
    return path.read_text()


def _configure_replace(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    replacement = _file(cli.device, match.group(1))
    try:
        tree = parse(replacement)
    except CliError as error:  # configure replace applies all or nothing
        raise CommandFailed(f"configure replace failed, the running-config is unchanged: {error}") from None
    cli.device.running = show(tree)
    return output(text, {})


def _write_memory(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    cli.device.write("startup-config", cli.device.running)
    return output(text, {}, "Copy completed successfully.\n")


def _copy_to_flash(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    cli.device.write(f"flash/{match.group(2)}", _file(cli.device, match.group(1)))
    return output(text, {}, "Copy completed successfully.\n")


def _show_running(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    body = cli.device.running if match.group(1) == "running" else _file(cli.device, "startup-config")
    if not text:
        raise CommandFailed("This is an unconverted command")  # EOS gives JSON of the config only as `| json`
    hostname = _hostname(cli.device.tree())
    return {"output": f"! Command: show {match.group(1)}-config\n! device: {hostname} ({MODEL}, EOS-{VERSION})\n"
                      f"!\n{body}"}


def _show_version(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    value = {"modelName": MODEL, "version": VERSION, "internalVersion": f"{VERSION}-33898917.4312F",
             "serialNumber": "LAB0000EOS2", "systemMacAddress": "02:1c:73:00:00:02", "architecture": "x86_64",
             "hardwareRevision": "11.00", "memTotal": 8000000, "memFree": 5000000, "isIntlVersion": False,
             "bootupTimestamp": cli.device.boot, "uptime": cli.device.uptime()}
    return output(text, value, f"Arista {MODEL}\nSoftware image version: {VERSION}\n")


def _hostname(tree: Block) -> str:
    return next((b.text.split()[1] for b in tree.children if b.text.startswith("hostname ")), "localhost")


def _show_hostname(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    name = _hostname(cli.device.tree())
    return output(text, {"hostname": name, "fqdn": name}, f"Hostname: {name}\nFQDN:     {name}\n")


SPEED_BPS = {"400g": 400e9, "200g": 200e9, "100g": 100e9, "50g": 50e9, "25g": 25e9, "10g": 10e9, "1g": 1e9}


def _interface_status(device: Device, block: Block, index: int) -> dict[str, Any]:
    name = block.text.split()[1]
    lines = [child.text for child in block.children]
    down = "shutdown" in lines
    mtu = next((int(line.split()[1]) for line in lines if line.startswith("mtu ")), 1500)
    speed = next((line.split()[1].split("-")[0] for line in lines if line.startswith("speed ")), "")
    return {"name": name, "description": next((line[12:] for line in lines if line.startswith("description ")), ""),
            "interfaceStatus": "disabled" if down else "connected", "lineProtocolStatus": "down" if down else "up",
            "mtu": mtu, "bandwidth": int(SPEED_BPS.get(speed, 1e9 if name.startswith("Management") else 100e9)),
            "hardware": "ethernet", "duplex": "duplexFull", "lastStatusChangeTimestamp": device.boot,
            "forwardingModel": "routed" if "no switchport" in lines or not name.startswith("Ethernet") else "bridged",
            "physicalAddress": f"02:1c:73:00:{index // 256:02x}:{index % 256:02x}"}


def _show_interfaces(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    shown = parse(cli.device.running)
    blocks = [b for b in shown.children if b.text.startswith("interface ")]
    present = {b.text for b in blocks}
    blocks += [Block(f"interface {name}", "interface") for name in PHYSICAL if f"interface {name}" not in present]
    interfaces = {b.text.split()[1]: _interface_status(cli.device, b, i) for i, b in enumerate(blocks, 1)}
    for name, status in interfaces.items():
        if name.startswith("Ethernet"):
            status["interfaceCounters"] = interface_counters(port_counters(cli.device, name))
    return output(text, {"interfaces": interfaces})


# --- counters: `show interfaces` interfaceCounters, `show interfaces phy detail`, `show priority-flow-control
# counters` ----------------------------------------------------------------------------------------------------
# The fields fabricgen's observe reads, in the JSON shapes of the eAPI outputs ANTA records for its tests
# (tests/observe_fixtures/eos_anta.json): one PHY chip per port here. The numbers are the test's: ``counters.json``
# in the state directory, {port: {name: value}} (COUNTER_NAMES), 0 for a name it does not give, so a test injects
# a fault by writing a number there; a name the target does not model is refused.
COUNTERS_FILE = "counters.json"
COUNTER_NAMES = ("fcsErrors", "symbolErrors", "inDiscards", "linkStatusChanges", "correctedCodewords",
                 "uncorrectedCodewords", "preFecBer", "rxFrames", "txFrames")


def port_counters(device: Device, port: str) -> dict[str, Any]:
    path = device.directory / COUNTERS_FILE
    given = json.loads(path.read_text()).get(port, {}) if path.exists() else {}
    unknown = sorted(set(given) - set(COUNTER_NAMES))
    if unknown:
        raise CommandFailed(f"this lab target's {COUNTERS_FILE} names counters it does not model: {unknown}")
    return {name: given.get(name, 0.0 if name == "preFecBer" else 0) for name in COUNTER_NAMES}


def interface_counters(c: dict[str, Any]) -> dict[str, Any]:
    return {"inDiscards": c["inDiscards"], "linkStatusChanges": c["linkStatusChanges"], "totalInErrors":
            c["fcsErrors"] + c["symbolErrors"], "inputErrorsDetail": {"alignmentErrors": 0, "fcsErrors":
            c["fcsErrors"], "giantFrames": 0, "runtFrames": 0, "rxPause": 0, "symbolErrors": c["symbolErrors"]}}


def _ethernet_ports(device: Device) -> list[str]:
    configured = [b.text.split()[1] for b in parse(device.running).children if b.text.startswith("interface Eth")]
    return sorted({*configured, *(name for name in PHYSICAL if name.startswith("Ethernet"))}, key=natural_key)


def _show_phy_detail(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    statuses = {}
    for port in _ethernet_ports(cli.device):
        c = port_counters(cli.device, port)
        statuses[port] = {"interfaceState": {}, "macFaults": {}, "transceiver": {}, "phyStatuses": [
            {"description": {"location": "line", "phyChipName": "BCM88690-TSCBH"},
             "fec": {"correctedCodewords": {"changes": 0, "lastChange": 0.0, "value": c["correctedCodewords"]},
                     "uncorrectedCodewords": {"changes": 0, "lastChange": 0.0, "value": c["uncorrectedCodewords"]}},
             "preFecBer": {"value": c["preFecBer"]}}]}
    return output(text, {"interfacePhyStatuses": statuses})


def _show_pfc_counters(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    counters = {port: {"rxFrames": c["rxFrames"], "txFrames": c["txFrames"]}
                for port in _ethernet_ports(cli.device) for c in [port_counters(cli.device, port)]}
    return output(text, {"interfaceCounters": counters})


def _show_sessions(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    """EOS 4.31's shape (what NAPALM's eos driver reads): a pending commit's ``commitBy`` is in seconds of uptime."""
    sessions = {}
    for name, session in cli.device.sessions().items():
        entry: dict[str, Any] = {"state": session.state, "description": "", "instances": {}, "commitUser": ""}
        if session.completed is not None:
            entry["completedTime"] = session.completed
        if session.state == "pendingCommitTimer" and session.expires is not None:
            entry["commitBy"] = session.expires - cli.device.boot
        sessions[name] = entry
    return output(text, {"sessions": sessions, "maxSavedSessions": MAX_SAVED_SESSIONS, "maxOpenSessions": 5})


def _show_checkpoints(cli: Cli, match: re.Match[str], text: bool) -> dict[str, Any]:
    directory = cli.device.directory / "checkpoints"
    files = sorted(directory.iterdir()) if directory.is_dir() else []
    return output(text, {"checkpoints": {f.name: {"fileDate": f.stat().st_mtime} for f in files}})


Handler = Callable[[Cli, re.Match[str], bool], dict[str, Any]]
_NAME = r"([A-Za-z0-9][A-Za-z0-9._-]{0,63})"
EXEC: list[tuple[str, Handler]] = [
    (r"enable", _enable),
    (r"configure(?: terminal)?", _configure_terminal),
    (rf"configure session {_NAME}", _configure_session),
    (rf"configure session {_NAME} (commit|abort)(?: timer (\d\d:\d\d:\d\d))?", _session_action),
    (rf"configure checkpoint save {_NAME}", _checkpoint_save),
    (r"configure replace (\S+)(?: force)?", _configure_replace),
    (r"write(?: memory)?|copy running-config startup-config", _write_memory),
    (rf"copy (startup-config|checkpoint:\S+) flash:{_NAME}", _copy_to_flash),
    (rf"delete (checkpoint|flash):{_NAME}", _delete),
    (r"show (running|startup)-config", _show_running),
    (r"show version", _show_version),
    (r"show hostname", _show_hostname),
    (r"show interfaces", _show_interfaces),
    (r"show interfaces phy detail", _show_phy_detail),
    (r"show priority-flow-control counters", _show_pfc_counters),
    (r"show configuration sessions(?: detail)?", _show_sessions),
    (r"show configuration checkpoints", _show_checkpoints),
    (rf"show session-config named {_NAME} diffs", _show_session_diffs),
]
SESSION: list[tuple[str, Handler]] = [
    (r"rollback clean-config", _in_session_rollback_clean),
    (r"commit(?: timer (\d\d:\d\d:\d\d))?", _in_session_commit),
    (r"abort", _in_session_abort),
    (r"show session-config diffs", _in_session_diffs),
]


def run_request(device: Device, commands: list[Any], text: bool) -> dict[str, Any]:
    """One runCmds: the JSON-RPC result, or its error object (eAPI stops at the first failing command)."""
    cli = Cli(device)
    results: list[dict[str, Any]] = []
    with device.lock:
        for number, item in enumerate(commands, 1):
            command = item["cmd"] if isinstance(item, dict) else str(item)
            try:
                results.append(cli.run(command, text))
            except CommandFailed as error:
                cli.store()
                return {"error": {"code": 1002, "message": f"CLI command {number} of {len(commands)} "
                                  f"'{command}' failed: invalid command",
                                  "data": [*results, {"errors": [f"% {error}"]}]}}
        if cli.editor is not None:
            cli.leave()
    return {"result": results}


# --- the HTTPS server ------------------------------------------------------------------------------------------

_SECRET = re.compile(r"^username (\S+) .* secret sha512 (\S+)$", re.MULTILINE)


def authorised(device: Device, header: str | None) -> bool:
    if not header or not header.startswith("Basic "):
        return False
    try:
        user, _, password = base64.b64decode(header[6:]).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        return False
    return any(name == user and hmac.compare_digest(sha512_crypt(password, hashed.split("$")[2]), hashed)
               for name, hashed in _SECRET.findall(device.running) if hashed.startswith("$6$"))


def log(device: Device, entry: dict[str, Any]) -> None:
    path = os.environ.get(LOG_VAR)
    if path:
        with Path(path).open("a") as stream:
            stream.write(json.dumps({"time": round(time.time(), 3), **entry}) + "\n")


def _logged(commands: list[Any]) -> list[str]:
    """Commands as the call log keeps them: secrets and hashes never land in it."""
    texts = [item["cmd"] if isinstance(item, dict) else str(item) for item in commands]
    return [re.sub(r"\b(secret|password)( sha512)? \S+", r"\1\2 <removed>", text) for text in texts]


def handler_for(device: Device) -> type[BaseHTTPRequestHandler]:
    class EapiHandler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return  # requests are logged by log(), without headers

        def do_POST(self) -> None:
            if self.path != "/command-api":
                self._reply(404, {"error": "not found"})
                return
            if not authorised(device, self.headers.get("Authorization")):
                self._reply(401, {"error": "Unable to authenticate user: Bad username/password combination"})
                return
            try:
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                params = request["params"]
                commands, text = list(params["cmds"]), params.get("format", "json") == "text"
            except (ValueError, KeyError, TypeError):
                self._reply(400, {"error": "malformed JSON-RPC request"})
                return
            reply = run_request(device, commands, text)
            log(device, {"cmds": _logged(commands), "ok": "result" in reply})
            self._reply(200, {"jsonrpc": "2.0", "id": request.get("id"), **reply})

        def _reply(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return EapiHandler


def eth0_address() -> str:
    done = subprocess.run(["ip", "-4", "-o", "addr", "show", "dev", "eth0"], capture_output=True, text=True,
                          check=True)
    return done.stdout.split(" inet ")[1].split("/")[0]


def serve(directory: Path) -> int:
    device = Device(directory)
    address = eth0_address()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*issue_server_certificate(directory, address))
    server = ThreadingHTTPServer((address, PORT), handler_for(device))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    stop = threading.Event()

    def timers() -> None:
        while not stop.wait(0.2):
            expire_timers(device)

    threading.Thread(target=timers, daemon=True).start()
    try:
        server.serve_forever()
    finally:
        stop.set()
    return 0


# --- the lab CA and the starting config -----------------------------------------------------------------------

def _crypto() -> Any:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    return x509, hashes, serialization, ec, NameOID


def _certificate(subject: str, key: Any, issuer: tuple[str, Any] | None, address: str | None) -> Any:
    x509, hashes, _, _, name_oid = _crypto()
    now = datetime.datetime.now(datetime.UTC)
    issuer_name, issuer_key = issuer or (subject, key)
    builder = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(name_oid.COMMON_NAME, subject)]))
               .issuer_name(x509.Name([x509.NameAttribute(name_oid.COMMON_NAME, issuer_name)]))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=7)))
    if address is None:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
    else:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(address))]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem_key(key: Any) -> bytes:
    _, _, serialization, _, _ = _crypto()
    return bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()))


def make_ca(directory: Path) -> None:
    _, _, serialization, ec, _ = _crypto()
    key = ec.generate_private_key(ec.SECP256R1())
    (directory / "ca.key").write_bytes(_pem_key(key))
    (directory / "ca.key").chmod(0o600)
    (directory / "ca.pem").write_bytes(_certificate("fabricgen lab CA", key, None, None)
                                       .public_bytes(serialization.Encoding.PEM))


def issue_server_certificate(directory: Path, address: str) -> tuple[str, str]:
    """The eAPI server's certificate for its management address, signed by the lab CA."""
    x509, _, serialization, ec, _ = _crypto()
    ca_key = serialization.load_pem_private_key((directory / "ca.key").read_bytes(), None)
    ca_name = x509.load_pem_x509_certificate((directory / "ca.pem").read_bytes()).subject.rfc4514_string()[3:]
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _certificate(address, key, (ca_name, ca_key), address)
    (directory / "server.key").write_bytes(_pem_key(key))
    (directory / "server.key").chmod(0o600)
    (directory / "server.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return str(directory / "server.pem"), str(directory / "server.key")


def sha512_crypt(password: str, salt: str | None = None) -> str:
    """EOS's ``secret sha512`` hash (sha512-crypt, ``$6$salt$...``), made by OpenSSL (Python's crypt module is
    gone from 3.13); the password travels on stdin, never in a command line."""
    return _sha512_crypt(password, salt or secrets.token_hex(8))


@functools.lru_cache(maxsize=16)  # every eAPI request logs in: one OpenSSL run per login, not per request
def _sha512_crypt(password: str, salt: str) -> str:
    done = subprocess.run(["openssl", "passwd", "-6", "-salt", salt, "-stdin"], input=password + "\n",
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def lab_ready(lab: Any, host: str) -> bool:
    """The eAPI server takes connections on the host's address."""
    try:
        socket.create_connection((lab.address(host), PORT), timeout=1).close()
    except OSError:
        return False
    return True


def lab_connection(lab: Any, host: str) -> dict[str, Any]:
    """The inventory fields that let fabricgen reach this target in the lab (tests/fabric_lab.py): eAPI over
    HTTPS as the lab's admin, the server certificate checked against the lab CA."""
    options = {"ca_file": str(lab.state_dir(host) / "ca.pem")}
    return {"username": LAB_USER, "password": LAB_PASSWORD,
            "connection_options": {"napalm": {"platform": "fabricgen_eos", "extras": {"optional_args": options}}}}


def lab_init(state_dir: Path) -> None:
    """The switch as the lab starts it: its running- and startup-config, no sessions, the lab CA."""
    state_dir.mkdir(parents=True, exist_ok=True)
    template = (DATA / "running-config").read_text()
    text = template.replace("{admin_secret}", sha512_crypt(LAB_PASSWORD)).replace(
        "{netops_secret}", sha512_crypt(OPERATOR_PASSWORD))
    running = show(parse(text))
    device = Device(state_dir)
    device.running = running
    device.write("startup-config", running)
    device.save_sessions({})
    make_ca(state_dir)


def main() -> int:
    tool = Path(sys.argv[0]).name
    if tool != "eos-eapi":
        print(f"{tool}: not a tool of the EOS target", file=sys.stderr)
        return 2
    return serve(Path(os.environ[STATE_VAR]))
