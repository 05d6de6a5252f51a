"""What fabricgen's own SSH-based NAPALM drivers share (GPU hosts, SONiC, NVUE): the login with the inventory's
credentials, host keys checked against known_hosts, the session, and reading a candidate given as text or file.

Each driver subclasses :class:`SshDriver` and adds its platform's diff, commit, confirm and rollback. The NAPALM
name shims in custom_napalm import only the concrete driver, so NAPALM's lookup never finds this base class.
"""

from __future__ import annotations

import re
import shlex
import time
from pathlib import Path
from typing import Any

import napalm.base as _nb
from napalm.base.exceptions import CommitError, ConnectionException, ReplaceConfigException

from fabricgen.deploy.ssh import Credentials, HostKeys, SshError, SshSession

# A commit's id names files, checkpoints and timer units on the device: a shell word with nothing to quote.
_COMMIT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def commit_id(message: str) -> str:
    """The id of a commit: the run id NAPALM's ``message`` carries, else the UTC time."""
    chosen = message.strip() or time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    if not _COMMIT_ID.match(chosen):
        raise CommitError(f"commit id {chosen!r}: letters, digits, '.', '_' and '-' only")
    return chosen


class SshDriver(_nb.NetworkDriver):  # type: ignore[misc]
    default_username = "root"

    def __init__(self, hostname: str, username: str, password: str | None = None, timeout: int = 60,
                 optional_args: dict[str, Any] | None = None) -> None:
        self.options = dict(optional_args or {})
        self.hostname = hostname
        self.port = int(self.options.get("port") or 22)
        self.timeout = timeout
        self.username = username or self.default_username
        self.credentials = Credentials(self.username, password, self.options.get("key_file"))
        self.host_keys = HostKeys(self.options.get("known_hosts"),
                                  bool(self.options.get("host_key_checking", True)))
        self.session: SshSession | None = None
        self.last_snapshot: str | None = None  # intent_check before the last commit changed anything

    # --- connection ---------------------------------------------------------------------------------------
    def open(self) -> None:
        try:
            self.session = SshSession(self.hostname, self.port, self.credentials, self.host_keys,
                                      connect_timeout=float(self.timeout))
            self.opened()
        except SshError as exc:
            raise ConnectionException(str(exc)) from None

    def opened(self) -> None:
        """What a driver learns from the device once logged in (nothing by default)."""

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None

    def is_alive(self) -> dict[str, bool]:
        return {"is_alive": self.session is not None and self.session.alive}

    @property
    def ssh(self) -> SshSession:
        if self.session is None:
            raise ConnectionException(f"{self.hostname}: not connected (call open() first)")
        return self.session

    @staticmethod
    def candidate_text(filename: str | None, config: str | None) -> str:
        """NAPALM's load_*_candidate arguments: the candidate as text, from the file when one is named."""
        if filename is not None:
            return Path(filename).read_text(encoding="utf-8")
        if config is None:
            raise ReplaceConfigException("load_replace_candidate needs a filename or a config")
        return config


class RecordingDriver(SshDriver):
    """A driver that keeps its commit records on the device, in ``state_dir``: ``pending`` names the commit
    waiting for its confirm (its revert timer armed), ``last`` the last one made; ``revert`` undoes one."""

    state_dir: str

    def has_pending_commit(self) -> bool:
        return self.ssh.run(f"test -s {shlex.quote(self.state_dir)}/pending").status == 0

    def pending_commit_id(self) -> str | None:
        done = self.ssh.run(f"cat {shlex.quote(self.state_dir)}/pending")
        return done.stdout.strip() or None if done.status == 0 else None

    def rollback(self) -> None:
        """Undo the pending commit, or else the last one, now."""
        pending = self.pending_commit_id()
        if pending is None:
            done = self.ssh.run(f"cat {shlex.quote(self.state_dir)}/last")
            pending = done.stdout.strip() if done.status == 0 else None
        if not pending:
            raise CommitError(f"{self.hostname}: no fabricgen commit to roll back")
        self.revert(pending)

    def revert(self, commit: str) -> None:
        raise NotImplementedError

    def fate_probe(self, commit: str, applying: bool = False) -> str:
        """The one shell step that reads what became of commit ``commit`` from the device's own records in
        ``state_dir`` (GPU hosts and SONiC keep the same ones), printing: absent (no record of it), pending (the
        pending mark names it), the fate its confirm, revert or timer wrote, confirmed (its confirm's mark, written
        before the fate), applied (the last commit made: committed with no timer; with ``applying``, also once its
        apply started), else staged (its undo was written, it never applied)."""
        state = shlex.quote(self.state_dir)
        directory = f"{state}/commits/{commit_id(commit)}"
        started = f"[ -e {directory}/applying ] && {{ echo applied; exit 0; }}; " if applying else ""
        return (f"[ -d {directory} ] || {{ echo absent; exit 0; }}; "
                f"[ \"$(cat {state}/pending 2>/dev/null)\" = {commit} ] && {{ echo pending; exit 0; }}; "
                f"[ -s {directory}/fate ] && {{ head -c 64 {directory}/fate; exit 0; }}; "
                f"[ -e {directory}/confirmed ] && {{ echo confirmed; exit 0; }}; "
                f"[ \"$(cat {state}/last 2>/dev/null)\" = {commit} ] && {{ echo applied; exit 0; }}; "
                f"{started}echo staged")
