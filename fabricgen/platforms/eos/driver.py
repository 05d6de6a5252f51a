"""The NAPALM driver for Arista EOS, found as ``custom_napalm.fabricgen_eos``: NAPALM's core ``eos`` driver (eAPI
over HTTPS through pyeapi, configuration sessions) fed a candidate that replaces only what fabricgen owns.

fabricgen owns sections, not the switch (``CAPABILITY.owned_sections``). The driver reads the running-config and
splices the rendered eos.cfg into it: the owned sections of the running-config are replaced by the rendered
ones, and on the interfaces eos.cfg configures only the owned lines are replaced (description, shutdown, and on
data ports mtu / l2 mtu, speed, error-correction and service-profile; the switchport mode and access VLAN where
eos.cfg sets them); every other line stays exactly as the switch has it. ``load_replace_candidate`` of that
candidate (a config session started with ``rollback clean-config``) therefore changes nothing but the owned scope.

The NAPALM contract on EOS (Arista EOS User Manual, "Configuration Sessions"):

- ``compare_config``: the switch's own ``show session-config named <s> diffs``, in a session aborted right after:
  nothing stays on the switch. ``intent_check(config)`` is the same diff for a given candidate.
- ``commit_config(message=<run id>, revert_in=T)``: ``configure checkpoint save fabricgen-<run id>`` first, then
  the session ``fabricgen-<run id>`` is committed with ``commit timer hh:mm:ss``: the switch rolls it back by
  itself unless it is committed again in time, whatever happens to fabricgen.
- ``confirm_commit`` / ``confirm_own(run)``: only the run's own pending session (its name carries the run id) is
  committed again (the timer stops), then ``write memory``.
- ``rollback``: a pending commit is aborted (EOS restores the config from before it); else the last confirmed
  one is undone with ``configure replace checkpoint:fabricgen-<run id>``, as ``revert(run id)`` does. A commit
  already reverted (by its timer or a rollback) is left as it is: its checkpoint again would undo what came since.

Each commit's fate is kept on the switch, in EOS's own stores: ``show configuration sessions`` (the session
``fabricgen-<run id>`` is ``pendingCommitTimer`` while its timer runs, ``completed`` once committed again) and a
record checkpoint ``fabricgen-<run id>.<fate>`` saved *in the same eAPI request* as the step it records (eAPI runs
a request's commands in order and stops at the first that fails, so the record exists only if the step
succeeded, and a controller killed after sending the request cannot split them): ``.committed`` with the timed
commit, ``.confirmed`` with the confirming commit (or an untimed commit), ``.reverted`` with an abort or a
configure replace. ``commit_fate(run)`` reads them back for ``runs --verify``, ``push --resume`` and ``rollback``:
pending; reverted; confirmed; committed but neither confirmed nor reverted by fabricgen and no longer pending:
reverted by its timer (EOS's commit timer is the only other way a pending session ends: "the system will
automatically rollback to the previous state at the end of the timer", Arista EOS Central, "Config Session Commit
Timer"; a reboot also ends it, with the running-config from the startup-config the commit never saved, and "an
uncommitted configuration session will be discarded if the switch reboots", EOS User Manual, "Configure
Session"); nothing: absent. A resumed run (the same run id) deletes its earlier records (``delete
checkpoint:<name>``) before it commits again. Not verified against a real switch (no EOS image runs here; the lab
target models it): that EOS refuses ``configure session <name> commit`` once that session's timer has fired
(fabricgen reads the session pending just before, so only a timer firing in between reaches that command).

TLS: pyeapi skips certificate checks unless given an SSL context. This driver always passes one: verifying
against ``optional_args["ca_file"]`` (or the system CAs), and unverified only when the inventory says
``verify: false`` explicitly. Credentials go to pyeapi's basic auth and nowhere else.
"""

from __future__ import annotations

import re
import secrets
import ssl
import time
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from napalm.base.exceptions import (
    CommitError,
    ConnectionException,
    ReplaceConfigException,
    SessionLockedException,
)
from napalm.eos.eos import EOSDriver
from pyeapi.eapilib import CommandError, EapiError  # type: ignore[import-untyped]

from fabricgen.platforms.eos.render import PROFILE

PREFIX = "fabricgen-"
# EOS session and checkpoint names: fabricgen-<run id>.<fate> stays within 64 characters (run ids are at most 40)
_COMMIT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,43}$")
MAX_TIMER_S = 24 * 3600 - 1  # `commit timer hh:mm:ss`
# The record checkpoints of a commit's fate (fabricgen-<run id>.<fate>), each saved with the step it records.
RECORDS = ("committed", "confirmed", "reverted")

# --- splicing eos.cfg into a running-config ---------------------------------------------------------------


@dataclass
class Section:
    """A top-level line of a config and everything under it, as raw lines (kept byte for byte)."""

    lines: list[str] = field(default_factory=list)

    @property
    def head(self) -> str:
        return self.lines[0].strip()


def sections(text: str) -> list[Section]:
    """The config's top-level sections. ``!`` lines at the top level (separators, the show header) and ``end``
    are dropped: EOS prints them itself. Banner text runs to its ``EOF`` line whatever it says."""
    found: list[Section] = []
    in_banner = False
    for raw in text.splitlines():
        if in_banner:
            found[-1].lines.append(raw)
            in_banner = raw.strip() != "EOF"
            continue
        if not raw.strip() or raw.strip() == "end" or (raw[0] != " " and raw.startswith("!")):
            continue
        if raw[0] != " " or not found:
            found.append(Section([raw]))
            in_banner = raw.startswith("banner ")
        else:
            found[-1].lines.append(raw)
    return found


def _children(section: Section) -> list[list[str]]:
    """An interface's lines, each with the lines indented under it (a tx-queue block stays whole)."""
    groups: list[list[str]] = []
    for raw in section.lines[1:]:
        depth = len(raw) - len(raw.lstrip(" "))
        if (depth <= 3 and raw.strip() != "!") or not groups:
            groups.append([raw])
        else:
            groups[-1].append(raw)
    return groups


# The interface lines fabricgen owns, by kind (CAPABILITY.owned_sections).
LINE_KINDS = {
    "description": r"description .*",
    "shutdown": r"(?:no )?shutdown",
    "mtu": r"mtu \S+",
    "l2 mtu": r"l2 mtu \S+",
    "speed": r"speed .+",
    "error-correction": r"(?:no )?error-correction encoding.*",
    "switchport": r"(?:no )?switchport",
    "switchport mode": r"switchport mode \S+",
    "access vlan": r"switchport access vlan \S+",
    "service-profile": r"service-profile \S+",
}
EVERY_PORT = ("description", "shutdown")
DATA_PORT = ("mtu", "l2 mtu", "speed", "error-correction", "service-profile")


def line_kind(line: str) -> str | None:
    return next((kind for kind, pattern in LINE_KINDS.items() if re.fullmatch(pattern, line.strip())), None)


def owned_kinds(rendered: Section) -> set[str]:
    """What eos.cfg owns on this interface: description and shutdown everywhere, the data-port lines on data ports
    (those eos.cfg gives an MTU or the lossless profile), and whatever other owned line it sets."""
    kinds = {kind for group in _children(rendered) if (kind := line_kind(group[0]))}
    data_port = bool(kinds & {"mtu", "l2 mtu", "service-profile"})
    return kinds | set(EVERY_PORT) | (set(DATA_PORT) if data_port else set())


def merge_interface(running: Section, rendered: Section) -> Section:
    """The running interface with its owned lines replaced by eos.cfg's; its other lines (addresses, BFD, ...)
    stay as they are. EOS prints an interface's lines in its own order, so their order here does not matter."""
    owned = owned_kinds(rendered)
    kept = [group for group in _children(running) if line_kind(group[0]) not in owned]
    ours = [group for group in _children(rendered) if line_kind(group[0]) is not None]
    return Section([running.lines[0], *(raw for group in [*ours, *kept] for raw in group)])


# The management VRF's own sections: its instance, its routing switch and its default route.
_VRF_SECTIONS = r"vrf instance (\S+)|(?:no )?ip routing vrf (\S+)|ip(?:v6)? route vrf (\S+) (?:0\.0\.0\.0/0|::/0) .+"


@dataclass(frozen=True)
class Scope:
    """The whole sections of a config that eos.cfg owns, from the names eos.cfg uses (its management VRF, OOB
    VLAN and management interface)."""

    vrfs: frozenset[str]
    vlans: frozenset[str]
    management: frozenset[str]

    @classmethod
    def of(cls, rendered: list[Section]) -> Scope:
        heads = [section.head for section in rendered]
        return cls(frozenset(h.split()[2] for h in heads if h.startswith("vrf instance ")),
                   frozenset(h for h in heads if re.fullmatch(r"vlan \d+", h)),
                   frozenset(h for h in heads if h.startswith("interface Management")))

    def group(self, head: str) -> str | None:
        """The owned group a whole top-level section belongs to, None when fabricgen does not own it."""
        vrf = re.fullmatch(_VRF_SECTIONS, head)
        checks = (
            ("qos profile", head == f"qos profile {PROFILE}"),
            ("vlan", head in self.vlans),
            ("vrf", vrf is not None and next(name for name in vrf.groups() if name) in self.vrfs),
            ("management", head in self.management),
            ("qos map", head.startswith("qos map ")),
            ("watchdog", head.startswith("priority-flow-control pause watchdog ")),
        )
        return next((name for name, owned in checks if owned), None)


# Groups that come before the interfaces in a running-config (EOS's order), the rest after them.
EARLY_GROUPS = ("qos profile", "vlan", "vrf")


def splice(running: str, rendered: str) -> str:
    """The full candidate: ``running`` with the owned scope replaced by ``rendered`` (eos.cfg)."""
    ours = sections(rendered)
    scope = Scope.of(ours)
    interfaces = {s.head: s for s in ours if s.head.startswith("interface ") and scope.group(s.head) is None}
    by_group: dict[str, list[Section]] = {}
    for section in ours:
        group = scope.group(section.head)
        if group is not None:
            by_group.setdefault(group, []).append(section)
    result: list[Section] = []
    for section in sections(running):
        group = scope.group(section.head)
        if group is not None:
            result += by_group.pop(group, [])
        elif section.head in interfaces:
            result.append(merge_interface(section, interfaces.pop(section.head)))
        else:
            result.append(section)
    _place_new(result, list(interfaces.values()), by_group)
    return "".join(line + "\n" for section in result for line in [*section.lines, "!"]) + "end\n"


def _place_new(result: list[Section], interfaces: list[Section], groups: dict[str, list[Section]]) -> None:
    """eos.cfg's sections the running-config does not have yet: early groups before the first interface,
    interfaces after the last one, the rest at the end (EOS files each where it belongs when it commits)."""
    heads = [section.head for section in result]
    first = next((i for i, head in enumerate(heads) if head.startswith("interface ")), len(result))
    last = max((i for i, head in enumerate(heads) if head.startswith("interface ")), default=len(result) - 1)
    result[last + 1:last + 1] = interfaces
    early = [s for name in EARLY_GROUPS for s in groups.pop(name, [])]
    result[first:first] = early
    result += [s for sections_ in groups.values() for s in sections_]


# --- the driver ---------------------------------------------------------------------------------------------


def _tls_context(options: dict[str, Any]) -> ssl.SSLContext:
    ca_file = options.pop("ca_file", None)
    verify = options.pop("verify", True)
    if ca_file:
        return ssl.create_default_context(cafile=str(ca_file))
    if verify is False:  # the user's explicit choice, for a lab whose switches have self-signed certificates
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    return ssl.create_default_context()


def _why(error: CommandError) -> str:
    """The switch's own words for a refused command (pyeapi keeps them apart from "CLI command N failed")."""
    return f"{error.error_text}: {error.command_error}" if error.command_error else str(error.error_text)


def _record(session: str, fate: str) -> str:
    """The command saving the record checkpoint of a commit's fate (its running-config at that step)."""
    return f"configure checkpoint save {session}.{fate}"


def commit_id(message: str) -> str:
    run = message.strip() or time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    if not _COMMIT_ID.match(run):
        raise CommitError(f"commit id {run!r}: letters, digits, '.', '_' and '-' only, at most 44")
    return run


class FabricgenEosDriver(EOSDriver):  # type: ignore[misc]
    def __init__(self, hostname: str, username: str, password: str | None = None, timeout: int = 60,
                 optional_args: dict[str, Any] | None = None) -> None:
        options = dict(optional_args or {})
        if options.get("transport", options.get("eos_transport", "https")) == "https" and "context" not in options:
            options["context"] = _tls_context(options)
        super().__init__(hostname, username, password, timeout=timeout, optional_args=options)
        self.config_session: str | None = None  # NAPALM's: the session being loaded, None when none is open
        self.candidate: str | None = None
        self.last_snapshot: str | None = None

    def __repr__(self) -> str:  # never the password
        return f"FabricgenEosDriver({self.hostname!r}, username={self.username!r})"

    def open(self) -> None:
        try:
            super().open()
        except EapiError as exc:
            raise ConnectionException(f"{self.hostname}: eAPI: {exc}") from None

    def _run(self, commands: Iterable[str], text: bool = True) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._run_commands(list(commands), encoding="text" if text else "json")
        return result

    def running_config(self) -> str:
        return str(self._run(["show running-config"])[0]["output"])

    # --- candidate and diff -------------------------------------------------------------------------------
    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        """Keeps eos.cfg in memory; the switch sees it only in a config session (compare or commit)."""
        if filename is not None:
            config = Path(filename).read_text(encoding="utf-8")
        if not config or not config.strip():
            raise ReplaceConfigException("load_replace_candidate needs eos.cfg's text")
        self.candidate = config

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        raise NotImplementedError("fabricgen replaces its owned sections: use load_replace_candidate")

    def discard_config(self) -> None:
        super().discard_config()
        self.candidate = None

    def compare_config(self) -> str:
        return self.intent_check(self._loaded())

    def intent_check(self, config: str) -> str:
        """The switch's own diff from its running-config to ``config`` spliced in, "" when it holds it. The
        session it takes is aborted before returning: nothing stays on the switch."""
        return self._session_diff(splice(self.running_config(), config))

    def _load_session(self, name: str, candidate: str) -> None:
        """``candidate`` into a new config session ``name`` (NAPALM's load: ``rollback clean-config``, then every
        line). A line the switch refuses aborts the session and raises ReplaceConfigException."""
        self.config_session, loaded = name, self.candidate
        try:
            try:
                self._load_config(config=candidate, replace=True)
            except SessionLockedException:  # NAPALM's lock: another session is open; a diff of ours killed half-way?
                if not self._abort_stale_diffs():
                    raise
                self._load_config(config=candidate, replace=True)
        finally:
            self.candidate = loaded  # NAPALM's load discards on failure; our candidate stays loaded

    def _abort_stale_diffs(self) -> bool:
        """Abort the diff sessions a killed fabricgen left open (EOS keeps an open session for 24 hours, and
        NAPALM will not load while one is open); other tools' sessions are left alone. True when there were any."""
        stale = [name for name, info in self._sessions().items()
                 if name.startswith(f"{PREFIX}diff-") and info.get("state") == "pending"]
        for name in stale:
            self._abort_quietly(name)
        return bool(stale)

    def _session_diff(self, candidate: str) -> str:
        try:
            self._load_session(f"{PREFIX}diff-{secrets.token_hex(4)}", candidate)
            diff: str = EOSDriver.compare_config(self)
        finally:
            if self.config_session is not None:
                EOSDriver.discard_config(self)
        return diff + "\n" if diff else ""

    # --- commit, confirm, rollback ------------------------------------------------------------------------
    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        run = commit_id(message)
        config = self._loaded()
        if revert_in is not None and not 0 < int(revert_in) <= MAX_TIMER_S:
            raise CommitError(f"{self.hostname}: nothing was changed: revert_in must be 1-{MAX_TIMER_S} s on EOS")
        if self.has_pending_commit():
            raise CommitError(f"{self.hostname}: nothing was changed: a commit is waiting for its confirm")
        before = self.running_config()
        candidate = splice(before, config)
        try:  # the switch as found: what a revert must read back as (the switch also checks every line here)
            self.last_snapshot = self._session_diff(candidate)
        except ReplaceConfigException as exc:
            raise CommitError(self._refused(before, str(exc), "")) from None
        try:
            self._run([*self._forget(run), f"configure checkpoint save {PREFIX}{run}"])
        except CommandError as exc:
            raise CommitError(f"{self.hostname}: nothing was changed: the checkpoint could not be saved: "
                              f"{_why(exc)}") from None
        self._commit_session(f"{PREFIX}{run}", candidate, before, revert_in)

    def _commit_session(self, name: str, candidate: str, before: str, revert_in: int | None) -> None:
        try:
            self._load_session(name, candidate)
        except ReplaceConfigException as exc:  # the session is aborted already
            self.config_session = None
            raise CommitError(self._refused(before, str(exc), name)) from None
        timer = f" timer {time.strftime('%H:%M:%S', time.gmtime(int(revert_in)))}" if revert_in else ""
        # The record goes in the same request as the commit: it exists only if the commit succeeded.
        after = [_record(name, "committed")] if timer else [_record(name, "confirmed"), "write memory"]
        try:
            self._run([f"configure session {name} commit{timer}", *after])
        except CommandError as exc:
            self._abort_quietly(name)
            raise CommitError(self._refused(before, _why(exc), name)) from None
        finally:
            self.config_session = None

    def _abort_quietly(self, name: str) -> None:
        with suppress(CommandError):  # not open any more: the state is verified next by reading the running-config
            self._run([f"configure session {name} abort"])

    def _refused(self, before: str, why: str, name: str) -> str:
        if self.running_config() == before:
            return f"{self.hostname}: nothing was changed: the switch refused the candidate: {why}"
        restore = f"; `configure replace checkpoint:{name}` restores it" if name else ""
        return (f"{self.hostname}: the switch refused the candidate ({why}) and its running-config is no longer "
                f"as it was{restore}")

    def confirm_commit(self) -> None:
        self.confirm_own(None)

    def confirm_own(self, run: str | None) -> None:
        """Commit run ``run``'s pending session again (None: whichever of fabricgen's is pending), its record and
        ``write memory`` in the same request. The session is named, so the switch commits that one only: another
        run's, or one whose timer fired meanwhile (EOS refuses a session that is no more), is never confirmed."""
        name = self._pending_session()
        if name is None:
            raise CommitError(f"{self.hostname}: no commit is pending: it was reverted by its timer or never made")
        if run is not None and name != f"{PREFIX}{commit_id(run)}":
            raise CommitError(f"{self.hostname}: confirm failed: commit {name[len(PREFIX):]} of another run is "
                              "pending, not this one")
        try:
            self._run([f"configure session {name} commit", _record(name, "confirmed"), "write memory"])
        except CommandError as exc:
            raise CommitError(f"{self.hostname}: confirm failed: {_why(exc)}") from None

    def commit_fate(self, run: str) -> str:
        """What became of run ``run``'s commit, read on the switch (EOS's session list and the record checkpoints
        saved with each step): pending, reverted, confirmed, reverted-by-timer (committed with a timer, then
        neither confirmed nor reverted by fabricgen, and no longer pending: only EOS's commit timer ends a pending
        session so), or absent (it never reached the switch)."""
        name = f"{PREFIX}{commit_id(run)}"
        state = str(self._sessions().get(name, {}).get("state", ""))
        if "pendingCommitTimer" in state:
            return "pending"
        records = self._checkpoints()
        if f"{name}.reverted" in records:
            return "reverted"
        if f"{name}.confirmed" in records or state == "completed":  # completed: EOS's own record of the 2nd commit
            return "confirmed"
        return "reverted-by-timer" if f"{name}.committed" in records else "absent"

    def _checkpoints(self) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = self._run(["show configuration checkpoints"], text=False)[0]["checkpoints"]
        return found

    def _forget(self, run: str) -> list[str]:
        """The commands deleting an earlier attempt's records of the same run (a resume commits again under its
        run id)."""
        records = self._checkpoints()
        return [f"delete checkpoint:{PREFIX}{run}.{fate}" for fate in RECORDS if f"{PREFIX}{run}.{fate}" in records]

    def _sessions(self) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = self._run(["show configuration sessions detail"], text=False)[0]["sessions"]
        return found

    def _pending_session(self) -> str | None:
        return next((name for name, info in sorted(self._sessions().items())
                     if name.startswith(PREFIX) and "pendingCommitTimer" in info.get("state", "")), None)

    def pending_commit_id(self) -> str | None:
        name = self._pending_session()
        return name[len(PREFIX):] if name else None

    def rollback(self) -> None:
        """Undo the pending commit now, or else the last confirmed one not reverted yet."""
        pending = self._pending_session()
        if pending is not None:
            self.revert(pending[len(PREFIX):])
            return
        records = self._checkpoints()
        confirmed = sorted((float(info.get("fileDate", 0.0)), name[len(PREFIX):-len(".confirmed")])
                           for name, info in records.items()
                           if name.startswith(PREFIX) and name.endswith(".confirmed")
                           and f"{name[:-len('.confirmed')]}.reverted" not in records)
        if not confirmed:
            raise CommitError(f"{self.hostname}: no fabricgen commit to roll back (use revert with its run id)")
        self.revert(confirmed[-1][1])

    def revert(self, commit_id: str) -> None:
        """The running-config as it was before the commit of run ``commit_id`` (its checkpoint), saved, and the
        record ``.reverted`` saved with it; a commit already reverted (by its timer or a rollback) is left as it is:
        its checkpoint again would undo whatever came since."""
        if not _COMMIT_ID.match(commit_id):
            raise CommitError(f"commit id {commit_id!r} is not one fabricgen makes")
        if self.commit_fate(commit_id) in ("reverted", "reverted-by-timer"):
            return
        name = f"{PREFIX}{commit_id}"
        pending = self._pending_session()
        if pending is not None and pending != name:  # its timer would restore its own "before" over this revert
            raise CommitError(f"{self.hostname}: commit {pending[len(PREFIX):]} is waiting for its confirm: confirm "
                              "or roll it back before reverting another")
        undo = f"configure session {name} abort" if pending == name else f"configure replace checkpoint:{name}"
        try:
            self._run([undo, _record(name, "reverted"), "write memory"])
        except CommandError as exc:
            raise CommitError(f"{self.hostname}: reverting {commit_id} failed: {_why(exc)}") from None

    def _loaded(self) -> str:
        if self.candidate is None:
            raise ReplaceConfigException(f"{self.hostname}: no candidate loaded")
        return self.candidate
