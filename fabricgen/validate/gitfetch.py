"""Running git on a repository the user named, with fabricgen's own limits on what git may reach.

``validate --fetch-models --repo URL`` clones whatever URL it is given (a mirror of sonic-buildimage), so:

- **Protocols.** git may speak https and ssh, and file only when the user named a local repository (a path or
  a ``file://`` URL): ``GIT_ALLOW_PROTOCOL`` and ``-c protocol.allow=never`` plus ``protocol.<name>.allow=always``
  on every call, whatever the user's or system's git configuration allows. Remote-helper URLs
  (``<transport>::<address>``; ``ext::`` runs any command) are refused before git runs.
- **Credentials.** A URL may carry a user name and password or token (``https://user:token@host/...``):
  :func:`public_url` takes them out before the URL is printed, stored (source.json) or quoted in an error, and
  git never sees them on its command line (which ``ps`` shows every user, and GIT_TRACE logs): :class:`Remote`
  gives git the URL without them and hands them over through a credential helper that reads this process's
  environment.
- **Time and interrupts.** Every git call has a time limit; git runs in a session of its own, and on the time
  limit, Ctrl-C (SIGINT) or SIGTERM the whole process group (git and the transport helpers it started) is
  killed before the caller's work folder is removed (:func:`terminate_raises` makes SIGTERM unwind like
  Ctrl-C for the duration of a fetch). Should fabricgen itself be killed (SIGKILL), git gets SIGKILL from the
  kernel (:func:`die_with_parent`), and the next fetch removes the work folder it left.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from types import FrameType
from typing import Any, Final
from urllib.parse import unquote, urlsplit

__all__ = [
    "ALLOWED_PROTOCOLS",
    "GitError",
    "Remote",
    "die_with_parent",
    "git_protocols",
    "public_url",
    "run_git",
    "start_and_wait",
    "stop_group",
    "terminate_raises",
]

ALLOWED_PROTOCOLS: Final = ("https", "ssh")
"""what git may speak to any repository; ``file`` is added for a local repository the user named"""
_SSH_SCHEMES: Final = {"ssh", "git+ssh", "ssh+git"}  # git's spellings of ssh:// (protocol "ssh" for all three)
_SCHEME: Final = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")
_HELPER: Final = re.compile(r"(?P<helper>[A-Za-z][A-Za-z0-9+.-]*)::")  # git's <transport>::<address> form
# The user information of a URL: everything between "scheme://" and the last "@" before the path. Greedy, so
# that a password with an unescaped "@" is taken whole.
_USERINFO: Final = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s]*@")


_PR_SET_PDEATHSIG: Final = 1  # linux/prctl.h
_LIBC: Final = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def die_with_parent() -> None:
    """Run in a child between fork and exec (``preexec_fn``): the kernel sends it SIGKILL when fabricgen dies,
    however it dies (Linux; nothing elsewhere). Its session of its own keeps it from a terminal's Ctrl-C, so
    without this a SIGKILLed fabricgen would leave git running."""
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class GitError(Exception):
    """git cannot run, failed, took too long, or was asked for a transport fabricgen does not use."""


def public_url(text: str) -> str:
    """``text`` (a URL, or a message that quotes one) with the user name and password of every URL taken out:
    ``https://user:token@host/repo.git`` → ``https://host/repo.git``. A user name alone can be a token too
    (``https://ghp_…@github.com``), so it goes as well."""
    return _USERINFO.sub(r"\g<scheme>", text)


def git_protocols(repository: str) -> tuple[str, ...]:
    """The protocols git may use to fetch ``repository``; GitError for a URL fabricgen does not fetch from."""
    helper = _HELPER.match(repository)
    if helper:
        raise GitError(f"{public_url(repository)}: {helper['helper']}:: URLs make git run a remote helper "
                       "(ext:: runs any command); fetch from an https://, ssh:// or local repository")
    scheme = _SCHEME.match(repository)
    if scheme is None:
        return (*ALLOWED_PROTOCOLS, "file") if _is_local_path(repository) else ALLOWED_PROTOCOLS
    name = scheme["scheme"].lower()
    if name == "file":
        return (*ALLOWED_PROTOCOLS, "file")
    if name == "https" or name in _SSH_SCHEMES:
        return ALLOWED_PROTOCOLS
    raise GitError(f"{public_url(repository)}: fabricgen fetches over https or ssh, or from a local repository, "
                   f"not over {name}:// (anyone on the path could change what it fetches); use the https:// or "
                   "ssh:// URL of the repository")


def _is_local_path(repository: str) -> bool:
    """git's own rule (connect.c, url_is_local_not_ssh): a colon before the first slash makes ``host:path`` ssh."""
    colon, slash = repository.find(":"), repository.find("/")
    return colon < 0 or 0 <= slash < colon


@dataclass(frozen=True)
class Remote:
    """A repository as git is given it: the URL without credentials (an ssh user name stays: ssh needs it and
    it is no secret), the protocols git may use, and the https user name and password, if any."""

    url: str
    protocols: tuple[str, ...]
    username: str = ""
    password: str = ""

    @classmethod
    def of(cls, repository: str) -> Remote:
        """GitError for a URL fabricgen does not fetch from (:func:`git_protocols`), or credentials it cannot
        hand to git."""
        protocols = git_protocols(repository)
        if not _USERINFO.match(repository):
            return cls(repository, protocols)
        parts = urlsplit(repository)
        scheme = parts.scheme.lower()
        if scheme in _SSH_SCHEMES:
            if parts.password is not None:
                raise GitError(f"{public_url(repository)}: ssh takes no password from a URL; leave it out and use "
                               "a key (or an ssh agent)")
            return cls(repository, protocols)
        if scheme != "https":  # file://: git has no use for them
            return cls(public_url(repository), protocols)
        username, password = unquote(parts.username or ""), unquote(parts.password or "")
        if any(character in username + password for character in "\n\0"):
            raise GitError(f"{public_url(repository)}: the user name or password holds a line break or NUL, which "
                           "git's credential protocol cannot carry")
        return cls(public_url(repository), protocols, username, password)

    def environment(self) -> dict[str, str]:
        """This process's environment for git: ``protocols`` only, never a prompt (no terminal to answer it),
        the credentials for the helper :meth:`options` names."""
        credentials = {_USER_VARIABLE: self.username, _PASSWORD_VARIABLE: self.password} if self.username else {}
        return {**os.environ, "GIT_ALLOW_PROTOCOL": ":".join(self.protocols), "GIT_TERMINAL_PROMPT": "0",
                "GIT_ASKPASS": "true", "SSH_ASKPASS": "true", **credentials,
                "LC_ALL": "C"}  # C: git's messages are quoted to the user as they are documented

    def options(self) -> list[str]:
        """``-c`` options: the protocol allow-list, and with credentials the one helper that hands them over
        (the user's helpers are cleared: nothing stores them)."""
        helper = ["-c", "credential.helper=", "-c", f"credential.helper={_HELPER_SCRIPT}"] if self.username else []
        return [*protocol_options(self.protocols), *helper]


_USER_VARIABLE: Final = "FABRICGEN_GIT_USERNAME"
_PASSWORD_VARIABLE: Final = "FABRICGEN_GIT_PASSWORD"
# git runs "!…" helpers with sh and the action ("get", "store", "erase") as $1; only "get" answers. The values
# come from the environment, so this line, which git's trace logs, holds none.
_HELPER_SCRIPT: Final = (f"!f() {{ test \"$1\" = get && printf 'username=%s\\npassword=%s\\n' "
                         f"\"${_USER_VARIABLE}\" \"${_PASSWORD_VARIABLE}\"; }}; f")


def protocol_options(protocols: Sequence[str]) -> list[str]:
    """``-c`` options that allow ``protocols`` and nothing else (as GIT_ALLOW_PROTOCOL does: both, so that
    neither an inherited variable nor a configuration file can widen the list)."""
    options = ["-c", "protocol.allow=never"]
    for name in protocols:
        options += ["-c", f"protocol.{name}.allow=always"]
    return options


def run_git(args: Sequence[str], remote: Remote, timeout: float) -> str:
    """Run git with ``args`` on ``remote`` (its protocols only, its credentials through the helper), never
    waiting on a prompt or past ``timeout``; its stdout, stripped. GitError on failure, naming the git command
    and git's last line (any URL in it without credentials)."""
    verb = _verb(args)
    try:
        # On a timeout or an interrupt the whole group (git and its transport helpers) is killed.
        process, out, err = start_and_wait(["git", *remote.options(), *args], timeout, stdin=subprocess.DEVNULL,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                           env=remote.environment())
    except FileNotFoundError as exc:
        raise GitError("fetching from a repository (--fetch-models, --fetch-gcu) needs git "
                       "(e.g. apt-get install git)") from exc
    except subprocess.TimeoutExpired:
        raise GitError(f"git {verb} did not finish within {timeout:g} s; nothing was changed") from None
    if process.returncode != 0:
        reason = next((line for line in reversed(err.splitlines()) if line.strip()), f"exit {process.returncode}")
        raise GitError(f"git {verb} failed: {public_url(reason.strip())}")
    return out.strip()


_INTERRUPTS: Final = frozenset({signal.SIGINT, signal.SIGTERM})


def start_and_wait(argv: Sequence[str], timeout: float, **popen: Any) -> tuple[subprocess.Popen[str], str, str]:
    """Start ``argv`` in a session of its own and wait for it: the process, its stdout and its stderr. At
    ``timeout`` (subprocess.TimeoutExpired) and on any interrupt of this process (KeyboardInterrupt, SIGTERM under
    :func:`terminate_raises`), its whole process group is killed before the exception goes on: nothing may
    outlive a fetch.

    Ctrl-C and SIGTERM are held back (blocked in this thread) from before the start until the wait's handler is
    in place, and then delivered: one arriving between the two would otherwise leave the group running (seen
    under load: the helper git started outlived fabricgen's Ctrl-C). The child starts with them unblocked."""
    held = _hold_interrupts()
    try:
        process: subprocess.Popen[str] = subprocess.Popen(argv, start_new_session=True,
                                                          preexec_fn=partial(_in_child, held), **popen)
        try:
            _release(held)  # an interrupt held back since the start arrives here, where the group is stopped
            out, err = process.communicate(timeout=timeout)
        except BaseException:
            stop_group(process)
            raise
    finally:
        _release(held)
    return process, out, err


def _hold_interrupts() -> set[int | signal.Signals] | None:
    """Block SIGINT and SIGTERM in this thread; the mask before (None: nothing was blocked, off the main thread
    or where the platform has no signal masks)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPTS)


def _release(held: set[int | signal.Signals] | None) -> None:
    """Restore the mask :func:`_hold_interrupts` returned; a signal that arrived meanwhile is delivered now."""
    if held is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _in_child(held: set[int | signal.Signals] | None) -> None:
    """The child, between fork and exec: the parent's own signal mask back, and SIGKILL when the parent dies."""
    _release(held)
    die_with_parent()


def stop_group(process: subprocess.Popen[str]) -> None:
    """Kill ``process`` and every process of its group (it leads one: ``start_new_session``), then reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate()


def _verb(args: Sequence[str]) -> str:
    return args[2] if args[:1] == ["-C"] and len(args) > 2 else args[0]


class Terminated(BaseException):
    """SIGTERM arrived during a fetch (a BaseException, like KeyboardInterrupt: no ``except Exception`` eats it)."""


@contextlib.contextmanager
def terminate_raises() -> Iterator[None]:
    """Within the block SIGTERM raises :class:`Terminated`, so that the block's ``finally`` and ``with`` exits
    stop git and remove the work folder; then the signal is delivered again under the previous handler (by
    default the process ends by SIGTERM, as whoever sent it expects). Only the main thread can set a handler;
    elsewhere, and when SIGTERM is ignored, nothing changes."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) == signal.SIG_IGN:
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is None:  # a handler set outside Python: restored as the default
        previous = signal.SIG_DFL

    def raise_terminated(signum: int, frame: FrameType | None) -> None:
        raise Terminated()

    signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    except Terminated:
        signal.signal(signal.SIGTERM, previous)
        os.kill(os.getpid(), signal.SIGTERM)
        raise GitError("interrupted by SIGTERM; git was stopped and nothing was changed") from None
    finally:
        signal.signal(signal.SIGTERM, previous)
