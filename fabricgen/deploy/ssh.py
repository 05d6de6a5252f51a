"""One SSH session to a Linux host: commands over exec channels, files over SFTP.

Exec channels, not an interactive shell (netmiko's ``linux`` driver): each command gets its own exit status
from the server, with no prompt matching, no echoed heredocs, no job-control noise and no leading newline to
strip. File content travels over SFTP only, never inside a command line; files are read over the same SFTP
session, which costs the host no process (an exec channel costs it a shell).
"""

from __future__ import annotations

import os
import posixpath
import shlex
import threading
from dataclasses import dataclass
from pathlib import Path

import paramiko

DEFAULT_COMMAND_TIMEOUT = 120.0
# The most a device may answer to one command or file read (stdout and stderr together), in bytes: a host's
# --check prints a few kB, a switch's whole config a few MB. FABRICGEN_MAX_REPLY_BYTES raises it.
MAX_REPLY_ENV = "FABRICGEN_MAX_REPLY_BYTES"
DEFAULT_MAX_REPLY = 64 * 1024 * 1024


def max_reply_bytes() -> int:
    text = os.environ.get(MAX_REPLY_ENV, "")
    return int(text) if text.isdigit() and int(text) > 0 else DEFAULT_MAX_REPLY


def _expire(expired: threading.Event, channel: paramiko.Channel) -> None:
    """A command's deadline passed: closing its channel ends the reads waiting on it."""
    expired.set()
    channel.close()


class SshError(Exception):
    """The host could not be reached, refused the login, or a command could not be run."""


@dataclass(frozen=True)
class Credentials:
    """How to log in. A password is never printed, logged or journaled (``repr`` hides it)."""

    username: str
    password: str | None = None
    key_file: str | None = None

    def __repr__(self) -> str:
        key = f", key_file={self.key_file!r}" if self.key_file else ""
        return f"Credentials(username={self.username!r}{key})"


@dataclass(frozen=True)
class HostKeys:
    """Host-key policy: check against a known_hosts file unless the user explicitly turned checking off."""

    known_hosts: str | None = None
    check: bool = True


@dataclass(frozen=True)
class Completed:
    command: str
    status: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return (self.stdout + self.stderr).strip()


class SshSession:
    def __init__(self, address: str, port: int, credentials: Credentials, host_keys: HostKeys,
                 connect_timeout: float = 15.0) -> None:
        self.address = address
        self.port = port
        self._client = paramiko.SSHClient()
        self._sftp: paramiko.SFTPClient | None = None
        self._connect(credentials, host_keys, connect_timeout)

    def _connect(self, credentials: Credentials, host_keys: HostKeys, timeout: float) -> None:
        if host_keys.check:
            self._client.load_system_host_keys()
            if host_keys.known_hosts:
                self._client.load_host_keys(str(Path(host_keys.known_hosts).expanduser()))
            self._client.set_missing_host_key_policy(paramiko.RejectPolicy())
        else:
            self._client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        key_filename = str(Path(credentials.key_file).expanduser()) if credentials.key_file else None
        try:
            self._client.connect(self.address, port=self.port, username=credentials.username,
                                 password=credentials.password, key_filename=key_filename, timeout=timeout,
                                 banner_timeout=timeout, auth_timeout=timeout, allow_agent=True,
                                 look_for_keys=key_filename is None)
        except paramiko.BadHostKeyException as exc:
            raise SshError(f"{self._where()}: host key does not match the known_hosts entry ({exc})") from None
        except paramiko.SSHException as exc:
            raise SshError(f"{self._where()}: {_ssh_reason(exc)}") from None
        except (TimeoutError, OSError) as exc:
            raise SshError(f"{self._where()}: cannot connect: {exc.strerror or exc}") from None

    def _where(self) -> str:
        return f"{self.address}:{self.port}"

    def run(self, command: str, timeout: float = DEFAULT_COMMAND_TIMEOUT) -> Completed:
        """Run one shell command; its exit status comes from the server (-1: the channel closed without one).
        `timeout` is the command's whole deadline, not a limit per read: a command that trickles output, or
        none, past it is abandoned (its channel closed) with an error naming the deadline. A reply larger than
        max_reply_bytes() is refused the same way: a device's answer is bounded before it is held in memory."""
        limit = max_reply_bytes()
        expired = threading.Event()
        try:
            _, stdout, stderr = self._client.exec_command(command, timeout=timeout)
            channel = stdout.channel
            watchdog = threading.Timer(timeout, _expire, (expired, channel))
            watchdog.daemon = True
            watchdog.start()
            try:
                out = stdout.read(limit + 1)
                errors = stderr.read(limit + 1)
                status = channel.recv_exit_status()
            finally:
                watchdog.cancel()
        except (TimeoutError, paramiko.SSHException, OSError) as exc:
            if expired.is_set():
                raise SshError(f"{self._where()}: no answer within the step's deadline of {timeout:.0f} s: "
                               f"{command[:200]}") from None
            raise SshError(f"{self._where()}: command failed to run ({_ssh_reason(exc)}): {command}") from None
        if expired.is_set():
            raise SshError(f"{self._where()}: no answer within the step's deadline of {timeout:.0f} s: "
                           f"{command[:200]}")
        if len(out) > limit or len(errors) > limit:
            channel.close()
            raise SshError(f"{self._where()}: the reply is larger than {limit} bytes (set {MAX_REPLY_ENV} to allow "
                           f"more): {command[:200]}")
        return Completed(command, status, out.decode("utf-8", "replace"), errors.decode("utf-8", "replace"))

    def check(self, command: str, timeout: float = DEFAULT_COMMAND_TIMEOUT) -> Completed:
        done = self.run(command, timeout)
        if done.status != 0:
            raise SshError(f"{self._where()}: `{command}` exited {done.status}: {done.output or 'no output'}")
        return done

    def put(self, path: str, text: str, mode: int = 0o644) -> None:
        """Write a file atomically: a temporary beside it, fsync'd by the server on close, renamed over it."""
        temporary = posixpath.join(posixpath.dirname(path), f".{posixpath.basename(path)}.fabricgen-tmp")
        try:
            sftp = self._sftp_client()
            with sftp.open(temporary, "w") as handle:
                handle.write(text.encode())
                handle.chmod(mode)
            sftp.posix_rename(temporary, path)
        except (OSError, paramiko.SSHException) as exc:
            self.run(f"rm -f {shlex.quote(temporary)}")
            raise SshError(f"{self._where()}: cannot write {path}: {_ssh_reason(exc)}"
                           f"{self._space_note(path, len(text))}") from None

    def read(self, path: str) -> str | None:
        """A file's text over SFTP (no process on the host), or None when it does not exist. Any other reason it
        cannot be read (permissions, a directory, larger than max_reply_bytes(), ...) is an error."""
        limit = max_reply_bytes()
        try:
            with self._sftp_client().open(path, "r") as handle:
                data: bytes = handle.read(limit + 1)
            if len(data) > limit:
                raise SshError(f"{self._where()}: {path} is larger than {limit} bytes (set {MAX_REPLY_ENV} to "
                               "allow more)")
        except FileNotFoundError:
            return None
        except (OSError, paramiko.SSHException) as exc:
            raise SshError(f"{self._where()}: cannot read {path}: {_ssh_reason(exc)}") from None
        return data.decode("utf-8", "replace")

    def make_private_directory(self, path: str) -> None:
        """mkdir over SFTP, owner-only: fails if `path` exists, so a fresh random name is as safe as mktemp -d."""
        try:
            self._sftp_client().mkdir(path, 0o700)
        except (OSError, paramiko.SSHException) as exc:
            raise SshError(f"{self._where()}: cannot create {path}: {_ssh_reason(exc)}") from None

    def _space_note(self, path: str, size: int) -> str:
        """SFTP (version 3) reports a full disk as a bare "Failure": say so when the filesystem has no room."""
        done = self.run(f"df -Pk -- {shlex.quote(posixpath.dirname(path))} | awk 'NR==2 {{print $4}}'")
        free = done.stdout.strip()
        if done.status == 0 and free.isdigit() and int(free) * 1024 < size + 4096:
            return f" (No space left on device: {free} KiB free there)"
        return ""

    def _sftp_client(self) -> paramiko.SFTPClient:
        if self._sftp is None:
            self._sftp = self._client.open_sftp()
        return self._sftp

    def close(self) -> None:
        if self._sftp is not None:
            self._sftp.close()
        self._client.close()

    @property
    def alive(self) -> bool:
        transport = self._client.get_transport()
        return transport is not None and transport.is_active()


def _ssh_reason(exc: BaseException) -> str:
    if isinstance(exc, paramiko.AuthenticationException):
        return "authentication failed (check the username and the key or ssh-agent)"
    if isinstance(exc, OSError) and exc.errno is not None:
        return os.strerror(exc.errno)
    return str(exc) or type(exc).__name__

