"""The NAPALM driver for Cumulus Linux switches (NVUE), found as ``custom_napalm.fabricgen_nvue``.

fabricgen owns sections of the switch's configuration, not the switch (:data:`OWNED`, the capability record's
``owned_sections`` as NVUE paths). Over SSH (fabricgen/deploy/ssh.py), with NVUE's own revisions:

- ``load_replace_candidate``: the rendered nvue.yaml (its ``- set:`` block), kept in memory.
- ``compare_config``: the owned scope of the applied configuration (``nv config show -o json``) against the
  candidate's becomes a patch: an ``- unset:`` file (what fabricgen owns there and the candidate drops) and a
  ``- set:`` file (what it adds or changes), uploaded by SFTP and loaded with ``nv config patch`` into a fresh
  pending revision (``nv config attach applied``; any stale pending one is detached first, never deleted: it may
  be an operator's). Two patches, because "NVUE does not support both unset and set commands for the same
  object in a single patch". The diff is NVUE's own ``nv config diff``; the revision is then detached and deleted,
  and the files removed: nothing is left pending.
- ``intent_check``: the same owned-scope comparison, read-only, as the ``- unset:``/``- set:`` YAML NVUE
  prints ("" when the switch holds the intent).
- ``commit_config(message=<run>, revert_in=T)``: the same patch, then ``nv config apply --confirm <T>s -y -m
  fabricgen-<run>``: NVUE's own timer rolls the switch back unless confirmed. The checkpoint is NVUE's: the
  history records the apply under ``fabricgen-<run>``, and the revision applied before it is the one to go back
  to. A refused apply (``Invalid config [rev_id: N]``) leaves the switch as it was: checked, then said.
- ``confirm_commit`` / ``confirm_own(run)``: one shell on the switch, under fabricgen's lock there
  (``~/.fabricgen/lock``, which the apply and the abort take too): the check that the apply waiting for its
  confirm is this run's, ``nv config apply --confirm-yes`` (NVIDIA's reference documents ``--confirm`` and
  ``--confirm-status`` only; the confirm option is the one a community NAPALM Cumulus driver sends), the run's fate
  recorded, then ``nv config save`` (needed when auto-save is off; harmless when on). So no apply of another run
  can come between the check and the confirm (its timer firing, then another controller's apply). NVUE refuses an
  apply while another waits for its confirm: that is the switch's own one-commit-at-a-time check.
- ``rollback``/``revert``: a pending confirm is aborted (``--confirm-no``); a confirmed commit is undone by
  ``nv config apply <revision before it>`` and saved. That restores the whole revision, as NVUE's rollback does.
  A commit already reverted (by NVUE's confirm timer, or a rollback) is left as it is.
- ``commit_fate(run)``: what became of a run's apply, from the switch: its confirm still pending (NVUE's revision
  list), the fate fabricgen recorded in the login's home (``~/.fabricgen/commits/<run>/fate``: confirmed,
  reverted), else NVUE's history -- the run's apply followed by NVUE's own rollback to the revision before it,
  which fabricgen did not ask for, is its confirm timer's (reverted-by-timer); an apply never rolled back was
  confirmed; no apply of the run at all: absent.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import yaml
from napalm.base.exceptions import CommitError, ReplaceConfigException

from fabricgen.deploy.journal import escape
from fabricgen.deploy.ssh import Completed
from fabricgen.deploy.sshdriver import SshDriver
from fabricgen.deploy.sshdriver import commit_id as _commit_id
from fabricgen.platforms.nvue.capability import CAPABILITY
from fabricgen.platforms.nvue.render import BRIDGE, LINK_SPEEDS

Tree = dict[str, Any]
NvPath = tuple[str, ...]

# What fabricgen owns, as NVUE paths (a word with "*" is a glob over the keys there): each names a subtree that
# the candidate's replaces whole.
OWNED: tuple[NvPath, ...] = (
    ("qos", "mapping", "default-global", "trust"), ("qos", "mapping", "default-global", "dscp"),
    ("qos", "egress-queue-mapping", "default-global"),
    ("qos", "traffic-pool", "default-lossless", "memory-percent"),
    ("qos", "traffic-pool", "default-lossy", "memory-percent"),
    ("qos", "pfc", "pfc-sp[0-7]*-*m"),  # fabricgen's PFC profiles by their names (pfc_profile_name), no others
    ("qos", "pfc-watchdog"), ("qos", "congestion-control", "default-global"),
    ("qos", "egress-scheduler", "default-global"),
)
# Per port the candidate names (only those: a port fabricgen does not render is not touched).
PORT_FIELDS: tuple[NvPath, ...] = (
    ("type",), ("description",), ("link", "state"), ("link", "speed"), ("link", "fec"), ("link", "mtu"),
    ("bridge", "domain", BRIDGE, "access"), ("qos", "pfc", "profile"), ("qos", "pfc-watchdog"),
)
MGMT_FIELDS: tuple[NvPath, ...] = (
    ("type",), ("vrf",), ("ipv4", "address"), ("ipv4", "dhcp-client"), ("ipv6", "address"), ("ipv6", "dhcp-client"),
    ("link", "mtu"),
)
DEFAULT_ROUTES = ("0.0.0.0/0", "::/0")
MESSAGE_PREFIX = "fabricgen-"
FATES = ("pending", "confirmed", "reverted-by-timer", "reverted", "absent")
FATE_DIR = ".fabricgen/commits"  # in the login's home: the switch's record of each run's fate
REVERT_PREFIX = "fabricgen-revert-"
LOCK = '"$HOME"/.fabricgen/lock'  # fabricgen's lock on the switch: apply, confirm and abort take it
LOCK_WAIT_S = 60
# The exit codes of a step that acts only while the run's apply waits for its confirm (_while_pending).
_BUSY, _UNREAD, _NONE_PENDING, _OTHERS = 91, 92, 93, 94
# Prints the message of the revision waiting for its confirm ("" when none) from `nv config revision -o json`.
_PENDING_MESSAGE = ("import json, sys; print(next((str(r.get('message', '')) for r in json.load(sys.stdin).values() "
                    "if r.get('state') == 'confirm'), ''))")
_REV_ID = re.compile(r"\[rev_id: (\d+)\]")
SPEEDS_MBPS = {word: float(mbps) for mbps, word in LINK_SPEEDS.items()}


class _Dumper(yaml.SafeDumper):
    """NVUE's YAML: a key to unset is written ``key:``, without a value."""


_Dumper.add_representer(type(None), lambda dumper, _: dumper.represent_scalar("tag:yaml.org,2002:null", ""))


def dump_blocks(blocks: list[Tree]) -> str:
    return yaml.dump(blocks, Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=1000)


# --- the owned scope ---------------------------------------------------------------------------------------

def owned_paths(candidate: Tree) -> list[NvPath]:
    """:data:`OWNED` plus the fields of each interface the candidate names, its management VRF's default routes
    and the access VLANs it declares."""
    paths = list(OWNED)
    mgmt = CAPABILITY.mgmt_interface or "eth0"
    for name in sorted(candidate.get("interface", {})):
        fields = MGMT_FIELDS if name == mgmt else PORT_FIELDS
        paths += [("interface", name, *field) for field in fields]
    vrf = str(candidate.get("interface", {}).get(mgmt, {}).get("vrf") or CAPABILITY.mgmt_vrf_fixed_name or "mgmt")
    paths += [("vrf", vrf, "router", "static", route) for route in DEFAULT_ROUTES]
    vlans = candidate.get("bridge", {}).get("domain", {}).get(BRIDGE, {}).get("vlan", {})
    paths += [("bridge", "domain", BRIDGE, "vlan", str(vid)) for vid in sorted(vlans)]
    return paths


def project(tree: Tree, paths: list[NvPath]) -> Tree:
    """The parts of ``tree`` under ``paths`` (glob keys matched against the tree's keys)."""
    owned: Tree = {}
    for pattern in paths:
        for path, value in _found(tree, pattern, ()):
            node = owned
            for key in path[:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = value
    return owned


def _found(node: Any, pattern: NvPath, at: NvPath) -> Iterator[tuple[NvPath, Any]]:
    if not pattern:
        yield at, node
        return
    if not isinstance(node, dict):
        return
    head, rest = pattern[0], pattern[1:]
    keys = [key for key in node if fnmatch.fnmatchcase(str(key), head)] if "*" in head else (
        [head] if head in node else [])
    for key in sorted(keys):
        yield from _found(node[key], rest, (*at, str(key)))


def changes(live: Tree, wanted: Tree) -> tuple[Tree, Tree]:
    """(unset, set) that turn ``live`` into ``wanted``: keys ``wanted`` drops (``None``), and what it adds or
    changes (its values, whole subtrees where new)."""
    unsets: Tree = {key: None for key in live.keys() - wanted.keys()}
    sets: Tree = {}
    for key, value in wanted.items():
        old = live.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            removed, added = changes(old, value)
            if removed:
                unsets[key] = removed
            if added:
                sets[key] = added
        elif isinstance(old, dict) or key not in live or old != value:
            if isinstance(old, dict):
                unsets[key] = None  # a container becoming a value: the container goes first
            sets[key] = value
    return unsets, sets


def owned_changes(applied: Tree, candidate: Tree) -> tuple[Tree, Tree]:
    """What the switch's owned scope needs to become the candidate's, and nothing outside it."""
    paths = owned_paths(candidate)
    return changes(project(applied, paths), project(candidate, paths))


def describe(unsets: Tree, sets: Tree) -> str:
    blocks = ([{"unset": unsets}] if unsets else []) + ([{"set": sets}] if sets else [])
    return dump_blocks(blocks) if blocks else ""


def set_body(text: str) -> Tree:
    """The ``- set:`` block of a rendered nvue.yaml (ReplaceConfigException if it is not one)."""
    try:
        blocks = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ReplaceConfigException(f"the candidate is not YAML: {exc}") from None
    if not isinstance(blocks, list) or not all(isinstance(block, dict) for block in blocks):
        raise ReplaceConfigException("the candidate is not an NVUE YAML file (a list of - set: blocks)")
    bodies = [block["set"] for block in blocks if isinstance(block.get("set"), dict)]
    if len(bodies) != 1 or any("unset" in block for block in blocks):
        raise ReplaceConfigException("the candidate must hold one - set: block and no - unset: block")
    return _text_keys(bodies[0])


def _text_keys(tree: Tree) -> Tree:
    """Every key as text, as NVUE's JSON has them (YAML reads an unquoted id such as a VLAN as a number)."""
    return {str(key): _text_keys(value) if isinstance(value, dict) else value for key, value in tree.items()}


# --- the driver --------------------------------------------------------------------------------------------

class FabricgenNvueDriver(SshDriver):
    default_username = "cumulus"

    def __init__(self, hostname: str, username: str, password: str | None = None, timeout: int = 60,
                 optional_args: dict[str, Any] | None = None) -> None:
        super().__init__(hostname, username, password, timeout, optional_args)
        self.candidate: Tree | None = None

    def _nv(self, command: str) -> Completed:
        """``nv <command>``; CommitError with NVUE's words when it fails."""
        done = self.ssh.run(f"nv {command}")
        if done.status != 0:
            raise CommitError(f"{self.hostname}: nv {command}: {done.output or f'exit {done.status}'}")
        return done

    def _json(self, command: str) -> Any:
        return json.loads(self._nv(f"{command} -o json").stdout)

    # --- candidate and diff -------------------------------------------------------------------------------
    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        self.candidate = set_body(self.candidate_text(filename, config))

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        raise NotImplementedError("fabricgen replaces what it owns: use load_replace_candidate")

    def discard_config(self) -> None:
        self.candidate = None  # compare_config leaves nothing on the switch

    def applied(self) -> Tree:
        """The applied configuration's ``set`` block."""
        blocks = self._json("config show")
        body: Tree = next((block["set"] for block in blocks if isinstance(block.get("set"), dict)), {})
        return body

    def compare_config(self) -> str:
        unsets, sets = owned_changes(self.applied(), self._loaded())
        if not unsets and not sets:
            return ""
        with self._pending(unsets, sets) as revision:
            diff = self._nv("config diff").stdout
        self._discard(revision)
        return diff

    def intent_check(self, config: str) -> str:
        """The deploy contract's read-back: what of the switch's owned configuration differs from ``config``
        (as NVUE's diff YAML), "" when it holds it. Read-only."""
        return describe(*owned_changes(self.applied(), set_body(config)))

    @contextmanager
    def _pending(self, unsets: Tree, sets: Tree) -> Iterator[str]:
        """A fresh pending revision holding the owned change (the id); on an error inside, it is discarded."""
        directory = self.ssh.check("mktemp -d /tmp/fabricgen-nvue.XXXXXXXX").stdout.strip()
        revision = ""
        try:
            self._nv("config detach")  # a stale pending revision is parked under its number, not lost
            match = _REV_ID.search(self._nv("config attach applied -y").stdout)
            if match is None:
                raise CommitError(f"{self.hostname}: nv config attach applied printed no revision id")
            revision = match.group(1)
            for name, body in (("unset", unsets), ("set", sets)):  # unsets first: two requests, never one
                if body:
                    self.ssh.put(f"{directory}/{name}.yaml", dump_blocks([{name: body}]), 0o600)
                    self._nv(f"config patch {shlex.quote(directory)}/{name}.yaml")
            yield revision
        except BaseException:
            if revision:
                self._discard(revision)
            raise
        finally:
            self.ssh.run(f"rm -rf {shlex.quote(directory)}")

    def _discard(self, revision: str) -> None:
        self.ssh.run("nv config detach")
        self.ssh.run(f"nv config delete {shlex.quote(revision)}")

    # --- commit, confirm, rollback ------------------------------------------------------------------------
    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        candidate = self._loaded()
        if self.has_pending_commit():
            raise CommitError(f"{self.hostname}: an apply is waiting for its confirm; confirm or roll back first")
        run = _commit_id(message)
        before = self.applied_revision()  # the checkpoint: NVUE keeps it, the history says which it was
        applied = self.applied()
        unsets, sets = owned_changes(applied, candidate)
        self.last_snapshot = describe(unsets, sets)
        if not unsets and not sets:
            return
        confirm = f" --confirm {int(revert_in)}s" if revert_in else ""
        with self._pending(unsets, sets):
            done = self.ssh.run(f"{_locked()} && nv config apply{confirm} -y -m {MESSAGE_PREFIX}{run}",
                                timeout=float(max(self.timeout, 300)))
            if done.status != 0:  # the revision is discarded on the way out
                raise CommitError(self._refused(done, before, candidate))
        if not revert_in:
            self._nv("config save")

    def _refused(self, done: Completed, before: str, candidate: Tree) -> str:
        """What a refused apply left: checked by reading the switch back."""
        said = " | ".join(done.output.splitlines()[:8]) or f"exit {done.status}"
        now = self.applied_revision()
        if now == before and describe(*owned_changes(self.applied(), candidate)) == self.last_snapshot:
            return f"{self.hostname}: the switch refused the change, nothing was changed: {said}"
        return (f"{self.hostname}: the switch refused the change ({said}), but revision {now} is applied now "
                f"(was {before}): roll back with nv config apply {before}")

    def revisions(self) -> dict[str, Tree]:
        found: dict[str, Tree] = self._json("config revision")
        return found

    def history(self) -> list[Tree]:
        """Every apply, oldest first."""
        return list(self._json("config history").values())

    def applied_revision(self) -> str:
        entries = self.history()
        return str(entries[-1]["rev-id"]) if entries else ""

    def _confirming(self) -> Tree | None:
        return next((item for item in self.revisions().values() if item.get("state") == "confirm"), None)

    def has_pending_commit(self) -> bool:
        return self._confirming() is not None

    def pending_commit_id(self) -> str | None:
        pending = self._confirming()
        message = str(pending.get("message", "")) if pending else ""
        return message[len(MESSAGE_PREFIX):] if message.startswith(MESSAGE_PREFIX) else None

    def confirm_commit(self) -> None:
        self.confirm_own(None)

    def confirm_own(self, commit_id: str | None) -> None:
        """Confirm the apply waiting for its confirm, only when it is run ``commit_id``'s (None: whichever), record
        the run's fate as confirmed, then save: one step on the switch, under fabricgen's lock there."""
        run = _commit_id(commit_id) if commit_id is not None else self.pending_commit_id()
        record = f"{_fate_command(run, 'confirmed')} && " if run is not None else ""
        self._while_pending(run, "confirm", f"nv config apply --confirm-yes -y && {record}nv config save")

    def _while_pending(self, run: str | None, step: str, action: str) -> None:
        """``action`` (shell) only while the apply waiting for its confirm is run ``run``'s (None: any), the check
        and the action one shell under fabricgen's lock on the switch; CommitError saying why otherwise."""
        wanted = f"[ \"$m\" = {MESSAGE_PREFIX}{run} ] || {{ echo \"$m\"; exit {_OTHERS}; }}; " if run else ""
        done = self.ssh.run(
            f"{_locked(_BUSY)}; "
            f"m=$(nv config revision -o json | python3 -c {shlex.quote(_PENDING_MESSAGE)}) || exit {_UNREAD}; "
            f"[ -n \"$m\" ] || exit {_NONE_PENDING}; {wanted}{action}", timeout=float(max(self.timeout, 300)))
        if done.status == 0:
            return
        why = {_BUSY: "another fabricgen step holds the switch's lock",
               _UNREAD: f"cannot read NVUE's revisions: {done.output[:200] or 'no answer'}",
               _NONE_PENDING: "no apply is waiting for its confirm: it was reverted by its timer or never made",
               _OTHERS: f"the apply waiting for its confirm is {done.stdout.strip()[:100]!r}, not this run's",
               }.get(done.status, done.output[:300] or f"exit {done.status}")
        raise CommitError(f"{self.hostname}: {step} failed: {escape(why)}")

    def _record_fate(self, run: str, fate: str) -> None:
        self.ssh.check(_fate_command(run, fate))

    def commit_fate(self, commit_id: str) -> str:
        """What became of run ``commit_id``'s apply, read on the switch (see the module's docstring)."""
        run = _commit_id(commit_id)
        if self.pending_commit_id() == run:
            return "pending"
        recorded = self.ssh.run(f'head -c 64 "$HOME"/{FATE_DIR}/{run}/fate').stdout.strip()
        if recorded in FATES:
            return recorded
        entries = self.history()
        marks = [i for i, e in enumerate(entries) if e.get("message") == f"{MESSAGE_PREFIX}{run}"]
        if not marks:
            return "absent"
        mark = marks[-1]
        later = entries[mark + 1:]
        if any(e.get("message") == f"{REVERT_PREFIX}{run}" for e in later):
            return "reverted"
        before = str(entries[mark - 1]["rev-id"]) if mark else None
        if later and before is not None and str(later[0]["rev-id"]) == before \
                and not str(later[0].get("message", "")).startswith(MESSAGE_PREFIX):
            # NVUE rolled back to the revision before the run's apply; fabricgen's own abort records its fate,
            # so this was the confirm timer (or someone's --confirm-no by hand: NVUE's reason says which).
            reason = str(later[0].get("reason") or "")
            return "reverted" if reason and "timeout" not in reason.lower() else "reverted-by-timer"
        return "confirmed"

    def rollback(self) -> None:
        """Undo the pending commit, or else the last one fabricgen confirmed."""
        pending = self._confirming()
        run = self.pending_commit_id()
        if pending is not None and run is None:  # someone else's apply: not ours to abort, nor to undo under
            raise CommitError(f"{self.hostname}: revision applied as {pending.get('message')!r} (not fabricgen's) "
                              "is waiting for its confirm; fabricgen leaves it to whoever applied it")
        if run is None:
            runs = [str(e["message"])[len(MESSAGE_PREFIX):] for e in self.history()
                    if str(e["message"]).startswith(MESSAGE_PREFIX) and not str(e["message"]).startswith(REVERT_PREFIX)]
            run = runs[-1] if runs else None
        if run is None:
            raise CommitError(f"{self.hostname}: no fabricgen commit to roll back")
        self.revert(run)

    def revert(self, commit_id: str) -> None:
        """The switch as before the commit of run ``commit_id``: its pending confirm aborted, or the revision
        applied before it applied again (and saved)."""
        _commit_id(commit_id)
        if self.pending_commit_id() == commit_id:  # aborted only while still this run's (checked again, locked)
            self._while_pending(commit_id, "revert", f"nv config apply --confirm-no -y && "
                                                     f"{_fate_command(commit_id, 'reverted')}")
            return
        if self.commit_fate(commit_id) in ("reverted", "reverted-by-timer"):  # again would undo what came since
            return
        entries = self.history()
        marks = [i for i, e in enumerate(entries) if e.get("message") == f"{MESSAGE_PREFIX}{commit_id}"]
        if not marks or marks[-1] == 0:
            raise CommitError(f"{self.hostname}: NVUE's history has no apply of fabricgen run {commit_id}")
        checkpoint = str(entries[marks[-1] - 1]["rev-id"])
        self._nv(f"config apply {shlex.quote(checkpoint)} -y -m {REVERT_PREFIX}{commit_id}")
        self._record_fate(commit_id, "reverted")
        self._nv("config save")

    # --- getters for health checks ------------------------------------------------------------------------
    def get_interfaces(self) -> dict[str, dict[str, Any]]:
        shown: Tree = self._json("show interface")
        interfaces: dict[str, dict[str, Any]] = {}
        for name, item in shown.items():
            link = item.get("link", {})
            interfaces[name] = {
                "is_up": link.get("oper-status") == "up", "is_enabled": link.get("admin-status") == "up",
                "description": str(item.get("description", "")), "last_flapped": -1.0,
                "speed": SPEEDS_MBPS.get(str(link.get("speed")), -1.0), "mtu": int(link.get("mtu") or 0),
                "mac_address": ""}
        return interfaces

    def get_facts(self) -> dict[str, Any]:
        system: Tree = self._json("show system")
        return {"hostname": system.get("hostname", ""), "fqdn": system.get("hostname", ""), "vendor": "NVIDIA",
                "model": system.get("platform", ""), "serial_number": "", "os_version": system.get("build", ""),
                "uptime": float(system.get("uptime") or -1.0), "interface_list": sorted(self.get_interfaces())}

    def _loaded(self) -> Tree:
        if self.candidate is None:
            raise ReplaceConfigException(f"{self.hostname}: no candidate loaded")
        return self.candidate




def _locked(busy: int = 5) -> str:
    """Take fabricgen's lock on the switch on fd 9 for the rest of the shell (apply, confirm and abort take it);
    exit ``busy`` when another step holds it past the wait."""
    return (f"{{ umask 077 && mkdir -p \"$HOME\"/.fabricgen && exec 9>>{LOCK} && flock -w {LOCK_WAIT_S} 9; }} || "
            f"{{ echo 'another fabricgen step holds the switch lock' >&2; exit {busy}; }}")


def _fate_command(run: str, fate: str) -> str:
    """The shell step recording run ``run``'s fate in the login's home on the switch."""
    directory = f'"$HOME"/{FATE_DIR}/{_commit_id(run)}'
    return f"( umask 077 && mkdir -p {directory} && echo {fate} > {directory}/fate && sync -f {directory}/fate )"
