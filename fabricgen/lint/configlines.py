"""Where in a config file a finding points: the line that sets what it is about, in its port's own entry.

`lint --configs` reads a device's config into a model and lints the model; a finding knows its device, port and
the setting it is about (``Finding.setting``), not a line. This module finds the line again in the file's text,
as the platform's capability record says its configs are laid out (``Capability.port_anchor``: where a port's own
entry is; ``Capability.config_words``: where a setting is written, as a path of names). It reads text, not the
platform's syntax tree: a config lint could read is well-formed, and a line near the fault is enough to jump to.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

PORT = "{port}"
_DEDENTS: dict[int, re.Pattern[str]] = {}  # by depth: the next line indented no deeper
_KEY_END = re.compile(r"""["']?[ \t]*[:|]""")  # after a name that is a key: `"Ethernet8": {`, `"Ethernet8|3"`, `swp2:`


def listed_words(words: Mapping[str, str], setting: str) -> list[str]:
    """The platform's words (or paths of names) for a setting named by its model field, in order: for the dotted
    field, then for each parent it lists (``qos.watchdog.action`` → ``qos.watchdog`` → ``qos``: a port whose
    config binds a profile instead of writing the watchdog itself); [] when it lists none of them."""
    found, field_path = [], setting
    while field_path:
        if field_path in words:
            found.append(words[field_path])
        field_path = field_path.rpartition(".")[0]
    return found


def config_words(words: Mapping[str, str], setting: str | None) -> list[str]:
    """Where to look for a setting: the platform's words for it (listed_words), else the setting as it is named
    (a host's word); None: nowhere."""
    if setting is None:
        return []
    return listed_words(words, setting) or [setting]


class ConfigText:
    """One config file's text, with the look-ups the locator makes in it (a port's entries are found once)."""

    def __init__(self, text: str, anchor: str | None) -> None:
        self.text, self.anchor = text, anchor
        self._entries: dict[str, list[int]] = {}
        self._opened: int | None = None  # where an anchor without `{port}` first matches (0: nowhere)
        self._blocks: dict[str, int] = {}  # only_block's answers (a file's switch-wide findings share them)

    def line_of(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def entries(self, port: str) -> list[int]:
        """Where the config's own entries of ``port`` start: each line the anchor matches when it names the port
        (a CLI's `interface X` blocks, in order: a block entered twice is merged by the reader, later lines
        winning); else the port's name as a key from the anchor on, the least indented (its entry, not a bond's
        member list or a table that names it deeper); else the first place naming it; [] when none does. A
        host's files (no anchor): the first place naming the NIC."""
        found = self._entries.get(port)
        if found is None:
            found = self._entries[port] = self._find_entries(port)
        return found

    def _find_entries(self, port: str) -> list[int]:
        if self.anchor is None:  # a host's files: its NIC's first mention (a script's comment naming it)
            named = self.find_name(port, 0, len(self.text))
            return [named] if named >= 0 else []
        start = 0
        if PORT in self.anchor:
            pattern = re.compile(self.anchor.replace(PORT, re.escape(port)), re.MULTILINE)
            blocks = [match.start() for match in pattern.finditer(self.text)]
            if blocks:
                return blocks
        else:
            start = self._anchor_start(self.anchor)
        keys = []
        at = self.find_key(port, start, len(self.text))
        while at >= 0:
            keys.append(at)
            at = self.find_key(port, at + 1, len(self.text))
        if keys:
            return [min(keys, key=self._indent)]  # min keeps the first of the least indented
        named = self.find_name(port, 0, len(self.text))
        return [named] if named >= 0 else []

    def _anchor_start(self, anchor: str) -> int:
        if self._opened is None:
            opened = re.compile(anchor, re.MULTILINE).search(self.text)
            self._opened = opened.start() if opened else 0
        return self._opened

    def entry_line(self, port: str) -> int:
        """The line of the port's own entry; 1 when the file does not name the port."""
        entries = self.entries(port)
        return self.line_of(entries[0]) if entries else 1

    def setting(self, word: str, port: str | None) -> int:
        """The line where the config writes the setting, 0 when it does not. ``word``: a path of names (see
        Capability.config_words), each looked for after the one before, inside its entry (its indented block) —
        the last of the port's blocks that has it; else one word, looked for from the port's entry on (a host's
        NCCL_IB_TC, anywhere when there is no port)."""
        entries = self.entries(port) if port is not None else []
        if " > " not in word:
            at = self._find_outside_comments(word, entries[0] if entries else 0)
            return self.line_of(at) if at >= 0 else 0
        if port is None:
            return 0
        steps = word.split(" > ")
        if steps[0] == PORT:
            found = [self._walk(steps[1:], port, entry, self.block_end(entry)) for entry in entries]
            hits = [at for at in found if at >= 0]
            return self.line_of(hits[-1]) if hits else 0
        at = self._walk(steps, port, 0, len(self.text))
        return self.line_of(at) if at >= 0 else 0

    def device_setting(self, word: str) -> int:
        """The line where a switch writes a switch-wide setting (Capability.device_words: a path of names without a
        port), walked from the one block its first name opens (only_block); 0 when there is none, or several."""
        steps = word.split(" > ")
        block = self.only_block(steps[0])
        at = block if block < 0 or len(steps) == 1 else self._walk(steps[1:], "", block, self.block_end(block))
        return self.line_of(at) if at >= 0 else 0

    def only_block(self, name: str) -> int:
        """Where the one block that ``name`` opens starts: the least indented line that begins with it (a CLI
        command, a JSON or YAML key; not a value naming it, nor SONiC's FLEX_COUNTER_TABLE "QUEUE" deeper in);
        -1 when no line does, or several do at that depth (two EOS `qos profile`s: the reader took the one most
        ports apply, which the text alone does not say, so no line is better than a wrong one)."""
        block = self._blocks.get(name)
        if block is None:
            found: list[tuple[int, int]] = []  # (depth, offset) of each line that begins with the name
            at = self.find_name(name, 0, len(self.text))
            while at >= 0:
                line_start = self.text.rfind("\n", 0, at) + 1
                if self.text[line_start:at].strip(" \t") in ("", '"', "'"):
                    found.append((at - line_start, at))
                at = self.find_name(name, at + 1, len(self.text))
            depth = min(found)[0] if found else 0
            shallowest = [at for line_depth, at in found if line_depth == depth]
            block = self._blocks[name] = shallowest[0] if len(shallowest) == 1 else -1
        return block

    def _find_outside_comments(self, word: str, start: int) -> int:
        """The first place from ``start`` naming ``word`` on a line that is not a comment (`#`, `!`): nccl.env's
        `NCCL_IB_TC=106`, not its header naming the variable; a comment's when only comments name it."""
        first = at = self.find_name(word, start, len(self.text))
        while at >= 0:
            line_start = self.text.rfind("\n", 0, at) + 1
            if not self.text[line_start:at].lstrip(" \t").startswith(("#", "!")):
                return at
            at = self.find_name(word, at + 1, len(self.text))
        return first

    def _walk(self, steps: list[str], port: str, start: int, end: int) -> int:
        at = start
        for name in steps:
            at = self.find_key(port, start, end) if name == PORT else self.find_name(name, start, end)
            if at < 0:
                return -1
            start, end = at, self.block_end(at)  # what follows is inside this table or entry
        return at

    def find_name(self, name: str, start: int, end: int) -> int:
        """The first place from ``start`` to ``end`` naming ``name`` as a whole name (Ethernet1 is not Ethernet10 or
        Ethernet1/1); -1 when none does. str.find, then the characters on either side: a regex with a look-behind
        at its front scans every position (12 ms against 0.4 ms in a 570 KB config_db.json)."""
        text = self.text
        at = text.find(name, start, end)
        while at >= 0:
            after = at + len(name)
            if (at == 0 or not _name_char(text[at - 1])) and (after >= len(text) or not _name_char(text[after])):
                return at
            at = text.find(name, at + 1, end)
        return -1

    def find_key(self, name: str, start: int, end: int) -> int:
        """The first place naming ``name`` as a key (`"Ethernet8": {`, a composite `"Ethernet8|3"` or
        `"Vlan10|Ethernet8":`, YAML's `swp2:`), not as a value (`"port": "Ethernet8"`, a description)."""
        at = self.find_name(name, start, end)
        while at >= 0 and not _KEY_END.match(self.text, at + len(name)):
            at = self.find_name(name, at + 1, end)
        return at

    def block_end(self, at: int) -> int:
        """Where the indented block of the line holding offset ``at`` ends: at the next line indented no deeper
        (blank lines skipped), or the end of the text. A JSON entry's closing brace, YAML's next key, a CLI's next
        top-level command."""
        depth = self._indent(at)
        dedent = _DEDENTS.get(depth)
        if dedent is None:  # a line start, at most ``depth`` blanks, then something: one C-level scan
            dedent = _DEDENTS[depth] = re.compile(rf"\n[ \t]{{0,{depth}}}[^ \t\n]")
        found = dedent.search(self.text, at)
        return found.start() + 1 if found else len(self.text)

    def _indent(self, at: int) -> int:
        line_start = self.text.rfind("\n", 0, at) + 1
        line_end = self.text.find("\n", at)
        line = self.text[line_start:line_end if line_end >= 0 else len(self.text)]
        return len(line) - len(line.lstrip(" \t"))


def _name_char(char: str) -> bool:
    """Whether ``char`` would continue a port or setting name (as the regex class ``[\\w/.]``)."""
    return char.isalnum() or char in "_/."
