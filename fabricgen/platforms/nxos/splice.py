"""The owned scope of an NX-OS running-config: a candidate spliced from the running config and nxos.cfg, and the
owned part of a config for comparisons. Pure text work, no device.

fabricgen owns sections, not the device (the capability's ``owned_sections``). A running-config is split into its
top-level blocks (a line and what is indented under it, with the blank and ``!`` lines after it), using the NX-OS
reader's parse (``reader._tree``: indentation is structure, ``!`` lines are comments, banner text is skipped):

* whole blocks fabricgen owns (its ``FG_*`` class-maps and its three policy-maps) come from nxos.cfg; one that
  nxos.cfg no longer has is removed;
* single top-level lines it owns (the global ``priority-flow-control watch-dog…`` settings) are replaced as a
  group, where the first of them stood;
* blocks it owns fields of (``interface Ethernet…``, ``interface mgmt0``, ``vrf context management``, ``system
  qos``) keep every line that is not one of those fields byte for byte, in place; the owned fields are nxos.cfg's,
  written where the first owned field stood. A block nxos.cfg does not render (a port outside the inventory) is
  left alone, and so is a ``vlan`` block nxos.cfg does not render (which VLAN was fabricgen's is not recorded);
* blocks nxos.cfg adds go after the last block of their kind (class-maps with class-maps, …), where NX-OS's
  ``show running-config`` lists them;
* everything else, and the lines before the first block (``!Command`` …, ``version``), is kept byte for byte.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from fabricgen.platforms.common.clitext import Node
from fabricgen.platforms.nxos.capability import MGMT_VRF, NETWORK_POLICY, QOS_POLICY, QUEUING_POLICY
from fabricgen.platforms.nxos.read import _tree

WHOLE = re.compile(rf"class-map type qos (?:match-all |match-any )?FG_\S+|policy-map type qos {QOS_POLICY}"
                   rf"|policy-map type queuing {QUEUING_POLICY}|policy-map type network-qos {NETWORK_POLICY}")
RENDERED_ONLY = re.compile(r"vlan \d+")  # owned when nxos.cfg renders it (the OOB management VLAN)
GLOBAL_LINE = re.compile(r"priority-flow-control watch-dog(?:-interval| ).*")
ETHERNET_FIELDS = (r"description .*", r"(?:no )?shutdown", r"(?:no )?switchport(?: .*)?", r"(?:no )?mtu(?: .*)?",
                   r"(?:no )?speed(?: .*)?", r"(?:no )?fec(?: .*)?",
                   r"(?:no )?priority-flow-control (?:mode|watch-dog-interval)(?: .*)?",
                   r"(?:no )?service-policy type qos input .*")
PARTIAL: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    (re.compile(r"interface Ethernet\S+"), re.compile("|".join(ETHERNET_FIELDS))),
    (re.compile(r"interface mgmt0"),
     re.compile(r"description .*|vrf member .*|ip address .*|ipv6 address .*|(?:no )?mtu(?: .*)?")),
    (re.compile(rf"vrf context {MGMT_VRF}"), re.compile(r"ip route 0\.0\.0\.0/0 .*|ipv6 route ::/0 .*")),
    (re.compile(r"system qos"), re.compile(r"service-policy type (?:network-qos|queuing output) .*")),
)
# Where show running-config lists each kind of block fabricgen may add (a new block goes after its kind).
KINDS = (r"class-map ", r"policy-map type qos ", r"policy-map type queuing ", r"policy-map type network-qos ",
         r"system qos", r"priority-flow-control ", r"vlan ", r"vrf context ", r"interface ")


@dataclass
class Block:
    """A top-level line and its lines, as raw text (indentation and trailing blank/``!`` lines included)."""

    header: str
    node: Node
    lines: list[str] = field(default_factory=list)


def blocks(text: str) -> tuple[list[str], list[Block]]:
    """(the lines before the first block, the blocks) of a config."""
    raw = text.splitlines()
    top = _tree(text).children
    found = []
    for number, node in enumerate(top):
        end = top[number + 1].line - 1 if number + 1 < len(top) else len(raw)
        found.append(Block(node.text, node, raw[node.line - 1:end]))
    return raw[: top[0].line - 1] if top else raw, found


def _fields(header: str) -> re.Pattern[str] | None:
    return next((fields for pattern, fields in PARTIAL if pattern.fullmatch(header)), None)


def _kind(header: str) -> int:
    return next((rank for rank, prefix in enumerate(KINDS) if header.startswith(prefix)), -1)


def splice(running: str, rendered: str) -> str:
    """The running config with nxos.cfg's owned sections in place of its own (see the module docstring)."""
    preamble, found = blocks(running)
    wanted = {block.header: block for block in blocks(rendered)[1]}
    new_lines = [block for block in wanted.values() if GLOBAL_LINE.fullmatch(block.header)]
    out: list[Block] = []
    placed: set[str] = set()
    lines_placed = False
    for block in found:
        header = block.header
        if GLOBAL_LINE.fullmatch(header):
            if not lines_placed:
                out += [_with_trailer(line, block) for line in new_lines]
                placed |= {line.header for line in new_lines}
                lines_placed = True
            continue
        if WHOLE.fullmatch(header) or (RENDERED_ONLY.fullmatch(header) and header in wanted):
            if header in wanted:
                out.append(_with_trailer(wanted[header], block))
                placed.add(header)
            continue
        fields = _fields(header)
        if fields is not None and header in wanted:
            out.append(_merged(block, wanted[header], fields))
            placed.add(header)
            continue
        out.append(block)
    for block in wanted.values():
        if block.header not in placed:
            _insert(out, block)
    return "".join(line + "\n" for line in [*preamble, *(line for block in out for line in block.lines)])


def _content(block: Block) -> list[str]:
    """A block's lines without its trailing blank and ``!`` lines."""
    lines = list(block.lines)
    while len(lines) > 1 and (not lines[-1].strip() or lines[-1].lstrip().startswith("!")):
        lines.pop()
    return lines


def _trailer(block: Block) -> list[str]:
    return block.lines[len(_content(block)):]


def _with_trailer(new: Block, old: Block) -> Block:
    """``new``'s content where ``old`` stood, keeping the separator lines that followed ``old``."""
    return Block(new.header, new.node, _content(new) + _trailer(old))


def _merged(block: Block, wanted: Block, fields: re.Pattern[str]) -> Block:
    """``block`` with its owned fields replaced by ``wanted``'s, every other line kept where it is."""
    content = _content(block)
    desired = _content(wanted)[1:]
    desired_text = {line.strip() for line in desired}
    owned_lines = _owned_line_numbers(block, fields, desired_text)
    kept: list[str] = [content[0]]
    inserted = False
    for offset, line in enumerate(content[1:], start=block.node.line + 1):
        if offset in owned_lines:
            if not inserted:
                kept += desired
                inserted = True
            continue
        kept.append(line)
    if not inserted:
        kept += desired
    return Block(block.header, block.node, kept + _trailer(block))


def _owned_line_numbers(block: Block, fields: re.Pattern[str], desired: set[str]) -> set[int]:
    """The line numbers of a block's owned fields (with whatever is indented under them)."""
    numbers: set[int] = set()
    for child in block.node.children:
        if fields.fullmatch(child.text) or child.text in desired:
            numbers |= {child.line, *_descendant_lines(child)}
    return numbers


def _descendant_lines(node: Node) -> list[int]:
    return [line for child in node.children for line in (child.line, *_descendant_lines(child))]


def _insert(out: list[Block], block: Block) -> None:
    """A new block after the last block of its kind, else before the first block of a later kind, else last."""
    kind = _kind(block.header)
    same = [index for index, other in enumerate(out) if _kind(other.header) == kind]
    later = [index for index, other in enumerate(out) if _kind(other.header) > kind]
    position = same[-1] + 1 if same else later[0] if later else len(out)
    separator = [""] if block.node.children or not GLOBAL_LINE.fullmatch(block.header) else []
    out.insert(position, Block(block.header, block.node, _content(block) + separator))


def owned_view(config: str, scope: str) -> list[str]:
    """The owned part of ``config``: the lines of the blocks and fields fabricgen owns, for the partial blocks and
    rendered-only blocks that ``scope`` (an nxos.cfg) renders. Comparable between configs, order-insensitive within
    a block's owned fields."""
    rendered = {block.header for block in blocks(scope)[1]}
    view: list[str] = []
    for block in blocks(config)[1]:
        header = block.header
        if WHOLE.fullmatch(header) or GLOBAL_LINE.fullmatch(header) or (
                RENDERED_ONLY.fullmatch(header) and header in rendered):
            view += [line.rstrip() for line in _content(block)]
            continue
        fields = _fields(header)
        if fields is not None and header in rendered:
            owned = sorted(child.text for child in block.node.children if fields.fullmatch(child.text))
            view += [header, *("  " + line for line in owned)]
    return view


def owned_diff(running: str, rendered: str) -> str:
    """What of the running config's owned part differs from nxos.cfg's, as a unified diff ("" when it holds it)."""
    have = owned_view(running, rendered)
    want = owned_view(splice(running, rendered), rendered)
    return "".join(line if line.endswith("\n") else line + "\n" for line in difflib.unified_diff(
        have, want, fromfile="running-config (owned scope)", tofile="intent (nxos.cfg)", lineterm=""))
