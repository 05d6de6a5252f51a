"""The NAPALM driver for Cisco NX-OS, found as ``custom_napalm.fabricgen_nxos``: NAPALM's core ``nxos`` (NX-API)
driver with NX-OS's own commit-confirm, on the owned scope only.

Why NX-API and not an SSH CLI driver: every step is one NX-API command whose reply is a JSON-RPC result or error,
not screen text behind a prompt; the core driver already speaks it (``napalm.nxapi_plumbing``) and brings the
getters (``get_facts``, ``get_interfaces``). NX-API carries commands, not files: the candidate goes to bootflash:
over SFTP (Cisco's ``feature sftp-server``; the core driver uses SCP through netmiko for the same step), through
fabricgen's SSH layer (fabricgen/deploy/ssh.py: host keys checked against known_hosts, file content never in a
command line).

How the contract maps onto NX-OS (Cisco Nexus 9000 NX-OS System Management Configuration Guide, "Performing
Configuration Replace" and "Configuring Rollback"):

- ``load_replace_candidate(config=nxos.cfg)``: kept in memory; nothing reaches the switch.
- The candidate file is the running config with nxos.cfg's owned sections spliced in (splice.py): configure
  replace wants "a valid running configuration … not a partial configuration", and everything fabricgen does not
  own stays byte for byte.
- ``compare_config``: the switch's own diff, ``show diff rollback-patch file <running checkpoint> file
  <candidate>`` (as the core driver does), both files deleted afterwards: nothing is left on bootflash:.
- ``commit_config(message=<run>, revert_in=T)``: ``checkpoint fabricgen-<run>`` (the checkpoint database), the
  candidate to ``bootflash:fabricgen-<run>.cfg``, then ``configure replace bootflash:fabricgen-<run>.cfg
  commit-timeout T``: NX-OS applies the patch (atomically: "If there is a failure in the configuration replace,
  the original configuration is restored") and rolls back by itself when the timer expires ("If the commit timer
  expires, the rollback operation is automatically initiated"), whoever is connected. NX-OS takes T in 30-3600 s:
  less becomes 30 s, more is refused (commit_timeout).
- ``confirm_commit`` / ``confirm_own(run)``: only the run's own pending replace: ``configure replace commit``
  (stops the timer), ``copy running-config startup-config``, the run's fate recorded on bootflash:
  (``fabricgen-<run>.fate``; ``commit_fate`` reads it, or else what the commit left there).
- ``rollback`` / ``revert(run)``: ``rollback running-config checkpoint fabricgen-<run>``, then copy run start.
  NX-OS keeps ten checkpoints: the oldest ``fabricgen-*`` ones make room, so only the latest runs can be reverted.
  A commit still waiting for its confirm is first committed (its timer stopped, so it cannot fire during or after
  the rollback) and at once rolled back to the checkpoint taken before it.
- ``intent_check(config)``: read-only, the owned part of ``show running-config`` against nxos.cfg's.

Options (``optional_args``), beside the core driver's (``port``, ``transport``): ``ssl_verify`` (default True: the
system's CAs; a path pins a CA bundle or the switch's own certificate; False only for a lab, explicitly),
``ssh_username`` (the SFTP login, default the NX-API user), ``key_file``, ``known_hosts``, ``host_key_checking``
(default True), ``ssh_port`` (22), ``bootflash_path`` (where bootflash: is in the SFTP server's file tree;
default: the SFTP session's start directory, taken to be bootflash: as it is for ``copy scp:`` and SCP uploads to
a Nexus).

Not verified against a real switch (no NX-OS image runs here; the lab target models them): that NX-OS's SFTP
server starts in bootflash:, and the layout of ``show config-replace status``, from which pending commits are
read (the commit timer's state and the user file, whose name carries the run id; see _PENDING and
_PENDING_FILE). Cisco's guide shows the command, but its example output was not readable when this was written.
"""

from __future__ import annotations

import posixpath
import re
import secrets
from contextlib import suppress
from pathlib import Path
from typing import Any, NoReturn

from napalm.base.exceptions import CommitError, ConnectionException, ReplaceConfigException
from napalm.nxapi_plumbing import NXAPICommandError
from napalm.nxos.nxos import NXOSDriver

from fabricgen.deploy.journal import escape
from fabricgen.deploy.ssh import Credentials, HostKeys, SshError, SshSession
from fabricgen.platforms.nxos.splice import owned_diff, splice

CHECKPOINT_PREFIX = "fabricgen-"
# Cisco's rollback guide: "You can create up to ten checkpoint copies." (listed oldest first by show checkpoint summary)
MAX_CHECKPOINTS = 10
COMMIT_TIMEOUT_RANGE = (30, 3600)  # the guide: "The timer value range is between 30-3600 seconds."
_COMMIT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_PENDING = re.compile(r"^Commit timeout\s*:\s*\d+ seconds, \d+ seconds remaining", re.MULTILINE)
_PENDING_FILE = re.compile(rf"^User config file\s*:\s*bootflash:/*{CHECKPOINT_PREFIX}(\S+)\.cfg\s*$", re.MULTILINE)
_CHECKPOINT = re.compile(r"^\d+\) (\S+):\s*$", re.MULTILINE)
# What a failed NX-API login's exception chain says, most telling first: TLS's own reason, then the socket's.
_CONNECT_REASONS = (
    (re.compile(r"certificate verify failed: ([^(\]'\"]+?)\s*(?:\(_ssl\.c:\d+\))?[\]'\")]"),
     "TLS: certificate verify failed: {} (optional_args ssl_verify: the CA bundle or the switch's own certificate)"),
    (re.compile(r"hostname '?([^'\s]+)'? doesn't match"), "TLS: the certificate is not for this address: {}"),
    (re.compile(r"\[SSL: ([A-Z_]+)\]"), "TLS failed: {}"),
    (re.compile(r"Connection refused"), "connection refused (is NX-API enabled: feature nxapi?)"),
    (re.compile(r"timed out|Timeout"), "no answer (timed out)"),
    (re.compile(r"Name or service not known|nodename nor servname"), "the name does not resolve"),
    (re.compile(r"No route to host|Network is unreachable"), "no route to the switch"),
)


def connect_reason(exc: BaseException) -> str:
    """One line: why an NX-API login failed, from the exception chain NAPALM hides under "Cannot connect"."""
    texts: list[str] = []
    seen: BaseException | None = exc
    while seen is not None and len(texts) < 10:
        texts.append(str(seen))
        seen = seen.__cause__ or seen.__context__
    whole = " ".join(texts)
    for pattern, reason in _CONNECT_REASONS:
        found = pattern.search(whole)
        if found:
            return escape(reason.format(*found.groups()))
    return escape(texts[-1].strip().splitlines()[-1][:300] if texts[-1].strip() else "cannot connect")


class FabricgenNxosDriver(NXOSDriver):  # type: ignore[misc]
    def __init__(self, hostname: str, username: str, password: str | None = None, timeout: int = 60,
                 optional_args: dict[str, Any] | None = None) -> None:
        options = dict(optional_args or {})
        super().__init__(hostname, username, password or "", timeout=timeout, optional_args=dict(options))
        self.ssl_verify = options.get("ssl_verify", True)  # the core driver's default is False: never here
        self.ssh_credentials = Credentials(options.get("ssh_username") or username, password, options.get("key_file"))
        self.host_keys = HostKeys(options.get("known_hosts"), bool(options.get("host_key_checking", True)))
        self.ssh_port = int(options.get("ssh_port") or 22)
        self.bootflash_path = str(options.get("bootflash_path") or "")
        self.ssh_session: SshSession | None = None
        self.rendered: str | None = None
        self.last_snapshot: str | None = None

    # --- connection ---------------------------------------------------------------------------------------
    def open(self) -> None:
        """NAPALM's NX-API login, whose failure says only "Cannot connect to <host>" (the reason is in the
        exception chain, under a long requests/urllib3 text): here the reason, on one line."""
        try:
            super().open()
        except ConnectionException as exc:
            raise ConnectionException(f"{self.hostname}: NX-API over {self.transport.upper()} port {self.port}: "
                                      f"{connect_reason(exc)}") from None

    def close(self) -> None:
        if self.ssh_session is not None:
            self.ssh_session.close()
            self.ssh_session = None
        super().close()

    def _sftp(self) -> SshSession:
        if self.ssh_session is None:
            try:
                self.ssh_session = SshSession(self.hostname, self.ssh_port, self.ssh_credentials, self.host_keys,
                                              connect_timeout=float(self.timeout))
            except SshError as exc:
                raise ConnectionException(f"{self.hostname}: SFTP to bootflash: failed: {exc}") from None
        return self.ssh_session

    def _put(self, name: str, text: str) -> None:
        """A file onto bootflash: over SFTP (never as command text)."""
        path = posixpath.join(self.bootflash_path, name) if self.bootflash_path else name
        try:
            self._sftp().put(path, text, 0o644)
        except SshError as exc:
            raise CommitError(f"{self.hostname}: nothing was changed: cannot copy {name} to bootflash: ({exc})") \
                from None

    def _show(self, command: str) -> str:
        assert self.device is not None, "call open() first"
        output = self.device.show(command, raw_text=True)
        return output if isinstance(output, str) else ""

    def _show_all(self, commands: list[str]) -> None:
        """Commands in one NX-API request (``terminal dont-ask`` holds for the request it is in)."""
        assert self.device is not None, "call open() first"
        self.device.show_list(commands, raw_text=True)

    def _delete(self, name: str) -> None:
        with suppress(NXAPICommandError):  # already gone
            self._show(f"delete bootflash:{name} no-prompt")

    # --- candidate and diff -------------------------------------------------------------------------------
    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        if filename is not None:
            config = Path(filename).read_text(encoding="utf-8")
        if not config:
            raise ReplaceConfigException("load_replace_candidate needs nxos.cfg's text (filename or config)")
        self.rendered = config
        self.replace = True
        self.loaded = True

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        raise NotImplementedError("fabricgen replaces its owned sections: use load_replace_candidate")

    def discard_config(self) -> None:
        self.rendered = None
        self.loaded = False

    def _candidate(self) -> str:
        if self.rendered is None:
            raise ReplaceConfigException(f"{self.hostname}: no candidate loaded")
        return self.rendered

    def running_config(self) -> str:
        return self._show("show running-config")

    def compare_config(self) -> str:
        """The switch's rollback patch from the running config to the spliced candidate; leaves no file behind."""
        candidate = splice(self.running_config(), self._candidate())
        token = secrets.token_hex(4)
        source, target = f"fabricgen-sot-{token}.cfg", f"fabricgen-diff-{token}.cfg"
        self._put(target, candidate)
        try:
            self._show_all(["terminal dont-ask", f"checkpoint file bootflash:{source}"])
            patch = self._show(f"show diff rollback-patch file bootflash:{source} file bootflash:{target}")
        finally:
            self._delete(source)
            self._delete(target)
        return _patch_lines(patch)

    def intent_check(self, config: str) -> str:
        """What of the switch's owned state differs from ``config`` (an nxos.cfg), "" when it holds it. Read-only."""
        return owned_diff(self.running_config(), config)

    # --- commit, confirm, rollback ------------------------------------------------------------------------
    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        rendered = self._candidate()
        commit_id = _commit_id(message)
        seconds = commit_timeout(revert_in)
        if self.has_pending_commit():
            raise CommitError(f"{self.hostname}: a configure replace is waiting for its commit; confirm or roll back "
                              "first")
        running = self.running_config()
        self.last_snapshot = owned_diff(running, rendered)  # the switch as found, before anything changes
        checkpoint = CHECKPOINT_PREFIX + commit_id
        name = f"{checkpoint}.cfg"
        self._delete(f"{checkpoint}.fate")  # an earlier attempt's of the same run (a resume)
        self._put(name, splice(running, rendered))
        self._fresh_checkpoint(checkpoint)
        timer = f" commit-timeout {seconds}" if seconds else ""
        try:
            output = self._show(f"configure replace bootflash:{name}{timer}")
        except NXAPICommandError as exc:
            self._refused(running, checkpoint, exc.message)
        if "completed successfully" not in output:
            self._refused(running, checkpoint, output)
        if not seconds:  # no timer: the commit is final at once
            self._save()
            self._delete(name)

    def _fresh_checkpoint(self, name: str) -> None:
        """``checkpoint <name>``; one left by an earlier attempt of the same run (a resume) is replaced, and the
        oldest of fabricgen's own make room when the database is full (NX-OS keeps ten; others' are never touched).
        """
        existing = _CHECKPOINT.findall(self._show("show checkpoint summary"))
        if name in existing:
            self._show(f"no checkpoint {name}")
            existing.remove(name)
        ours = [other for other in existing if other.startswith(CHECKPOINT_PREFIX)]
        for oldest in ours[: max(0, len(existing) - MAX_CHECKPOINTS + 1)]:
            self._show(f"no checkpoint {oldest}")
        try:
            self._show(f"checkpoint {name}")
        except NXAPICommandError as exc:
            self._delete(f"{name}.cfg")  # the candidate copied just before
            raise CommitError(f"{self.hostname}: nothing was changed: checkpoint {name} failed: {exc.message}") \
                from None

    def _refused(self, before: str, checkpoint: str, reply: str) -> NoReturn:
        """The switch refused the replace: say whether it is as it was (NX-OS's atomic replace restores it). When it
        is, the candidate file and the checkpoint go too, so the switch is left exactly as found."""
        self._delete(f"{checkpoint}.cfg")
        reason = " | ".join(line.strip() for line in reply.strip().splitlines() if line.strip())
        if _config_lines(self.running_config()) == _config_lines(before):
            with suppress(NXAPICommandError):
                self._show(f"no checkpoint {checkpoint}")
            raise CommitError(f"{self.hostname}: the switch refused the change, nothing was changed: {reason}")
        raise CommitError(f"{self.hostname}: the switch refused the change and its running config is NOT as before "
                          f"({reason}); checkpoint {checkpoint} holds the state from before the commit")

    def _save(self) -> None:
        self._show("copy running-config startup-config")

    def confirm_commit(self) -> None:
        self.confirm_own(None)

    def confirm_own(self, run: str | None) -> None:
        """Confirm the pending configure replace, only when it is run ``run``'s (None: whichever), save, and record
        the run's fate on bootflash: (``fabricgen-<run>.fate``) before its candidate file goes."""
        commit_id = self.pending_commit_id()
        if commit_id is None:
            raise CommitError(f"{self.hostname}: no commit is pending: it was rolled back by its timer or never made")
        if run is not None and commit_id != _commit_id(run):
            raise CommitError(f"{self.hostname}: confirm failed: commit {commit_id} of another run is pending, not "
                              "this one")
        self._show("configure replace commit")
        self._save()
        self._put(f"{CHECKPOINT_PREFIX}{commit_id}.fate", "confirmed\n")
        self._delete(f"{CHECKPOINT_PREFIX}{commit_id}.cfg")

    def commit_fate(self, run: str) -> str:
        """What became of run ``run``'s configure replace, read on the switch: pending (its commit-timeout
        running), the fate fabricgen recorded on bootflash: at its confirm or revert (confirmed, reverted); else
        from what the commit left: its candidate file still on bootflash: (a confirm or a revert removes it) and
        the running config not the candidate: rolled back by its commit-timeout (reverted-by-timer); the running
        config as the candidate: confirmed (killed before the record); only its checkpoint: applied (committed
        with no timer); nothing: absent."""
        commit_id = _commit_id(run)
        if self.pending_commit_id() == commit_id:
            return "pending"
        name = f"{CHECKPOINT_PREFIX}{commit_id}"
        recorded = (self._read(f"{name}.fate") or "").strip()
        if recorded in ("confirmed", "reverted"):
            return recorded
        candidate = self._read(f"{name}.cfg")
        if candidate is not None:
            return "confirmed" if _config_lines(self.running_config()) == _config_lines(candidate) else \
                "reverted-by-timer"
        return "applied" if name in _CHECKPOINT.findall(self._show("show checkpoint summary")) else "absent"

    def _read(self, name: str) -> str | None:
        """A file of bootflash: over SFTP; None when it does not exist."""
        path = posixpath.join(self.bootflash_path, name) if self.bootflash_path else name
        try:
            return self._sftp().read(path)
        except SshError as exc:
            raise CommitError(f"{self.hostname}: cannot read bootflash:{name}: {exc}") from None

    def _replace_status(self) -> str:
        return self._show("show config-replace status")

    def has_pending_commit(self) -> bool:
        return _PENDING.search(self._replace_status()) is not None

    def pending_commit_id(self) -> str | None:
        status = self._replace_status()
        found = _PENDING_FILE.search(status)
        return found.group(1) if found and _PENDING.search(status) else None

    def rollback(self) -> None:
        """Undo the pending commit, else the last one fabricgen made, now."""
        commit_id = self.pending_commit_id()
        if commit_id is None:
            ours = [name for name in _CHECKPOINT.findall(self._show("show checkpoint summary"))
                    if name.startswith(CHECKPOINT_PREFIX)]
            commit_id = ours[-1][len(CHECKPOINT_PREFIX):] if ours else None
        if commit_id is None:
            raise CommitError(f"{self.hostname}: no fabricgen commit to roll back")
        self.revert(commit_id)

    def revert(self, commit_id: str) -> None:
        """The running config as checkpoint ``fabricgen-<commit_id>`` holds it, saved; a commit already reverted
        (by its timer, or a rollback) is left as it is: its checkpoint again would undo whatever came since."""
        _commit_id(commit_id)
        if self.commit_fate(commit_id) in ("reverted", "reverted-by-timer"):
            return
        if self.pending_commit_id() == commit_id:
            # Stop the commit timer first, so that it cannot fire in the middle of (or after) the rollback; the
            # rollback right after restores the checkpoint taken before this commit.
            self._show("configure replace commit")
        checkpoint = CHECKPOINT_PREFIX + commit_id
        try:
            output = self._show(f"rollback running-config checkpoint {checkpoint}")
        except NXAPICommandError as exc:
            raise CommitError(f"{self.hostname}: rolling back to {checkpoint} failed: {exc.message}") from None
        if "completed successfully" not in output:
            raise CommitError(f"{self.hostname}: rolling back to {checkpoint} failed: {output.strip()}")
        self._save()
        self._put(f"{checkpoint}.fate", "reverted\n")
        self._delete(f"{checkpoint}.cfg")


def commit_timeout(revert_in: int | None) -> int | None:
    """The commit-timeout for ``revert_in`` seconds. NX-OS takes 30-3600 s: a shorter wish becomes 30 s (the switch
    still reverts by itself, later than asked, and fabricgen confirms as soon as its checks pass); a longer one is
    refused before anything changes, since the switch would revert before the confirm the user planned for."""
    if revert_in is None or int(revert_in) <= 0:
        return None
    low, high = COMMIT_TIMEOUT_RANGE
    if int(revert_in) > high:
        raise CommitError(f"nothing was changed: NX-OS's configure replace commit-timeout is at most {high} s, "
                          f"not {revert_in}")
    return max(low, int(revert_in))


def _commit_id(message: str) -> str:
    if not _COMMIT_ID.match(message.strip()):
        raise CommitError(f"commit id {message!r}: the run id (letters, digits, '.', '_', '-') is required")
    return message.strip()


def _patch_lines(output: str) -> str:
    """The commands of a ``show diff rollback-patch`` reply (NAPALM's reading: what follows "Generating Rollback
    Patch", without "Rollback Patch is Empty" and without ``!``/``.`` lines)."""
    _, found, patch = output.partition("Generating Rollback Patch")
    if not found:
        raise ReplaceConfigException(f"unexpected reply to show diff rollback-patch: {output.strip()[:200]}")
    lines = [line.rstrip() for line in patch.replace("Rollback Patch is Empty", "").splitlines()]
    return "".join(line + "\n" for line in lines if line.strip() and line.strip()[0] not in "!.")


def _config_lines(text: str) -> list[str]:
    """A config's lines without comments and blank lines (``!Time:`` changes on every read)."""
    return [line.rstrip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("!")]
