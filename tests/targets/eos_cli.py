"""The EOS CLI model of the lab's EOS target (no Arista image runs here): a config as a tree of mode blocks.

eAPI clients send configuration as flat, unindented lines (NAPALM strips every line before sending), so nesting
comes from the CLI's modes as on EOS: a line opens a mode (``interface Ethernet1/1``) or is a command of the
current mode; a line the current mode does not know is tried in the enclosing modes, and one no mode knows is
refused ("% Invalid input"), as the EOS CLI does. The grammar below covers what the target's starting
running-config and fabricgen's eos.cfg contain, with value ranges where EOS bounds them (MTU 68-9214 on the
7060X5, DSCP 0-63, traffic classes and queues 0-7, bandwidth percent 1-100).

``show running-config`` prints the tree in EOS's canonical order, whatever order the lines came in: top-level
sections and interface lines in the order of Arista's pyavd eos_cli_config_gen templates
(``eos_intended_config`` and ``ethernet-interfaces``), which Arista keeps equal to EOS running-config output;
defaults are not printed (``no shutdown`` and ``switchport`` on an interface). ``!`` separates top-level blocks
and sub-blocks, indentation is three spaces per level: the layout of an EOS running-config.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

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
