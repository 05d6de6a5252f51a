"""The parse cache's folder and files: private to the user, sealed with digests, never holding a secret.

The cache holds parsed YAML (fabricgen.load.yamlsource) so that an unchanged file is not parsed twice. Whatever the
cache holds becomes input to a render, and inventories hold credentials, so:

- **Private.** The folder is the user's own, 0700, its files 0600, whatever the umask. A folder owned by
  someone else, or that others may write to (another user could plant entries), is not used: fabricgen runs
  without a cache (slower, never wrong). A folder of ours others may only read is made 0700.
- **Sealed.** Every file starts with a format line, the sha256 of the source bytes it was parsed from and the
  sha256 of its payload. A reader passes the digest of the bytes it has just read: an entry whose payload is
  damaged, or that was made from other bytes (renamed, copied, forged under another entry's name), is refused
  and the file parsed again. Entry names are content digests too (yamlsource), so no stale entry is found.
- **No secrets.** Data whose keys look like credentials (:func:`carries_secret`: a password, secret, token,
  key, credential, Nornir's ``connection_options``) is never written: such a file (or, in a large file cached
  entry by entry, such an entry) is parsed on every run. Measured on bench/make_fabric.py --gpus 32768
  (hosts.yaml 12 MB, 5,750 entries; 2 busy cores, best of 5): a password in groups.yaml or defaults.yaml, where
  Nornir users keep shared credentials, costs nothing (small files); a password on every host makes every load
  of hosts.yaml a parse, 5.5 s instead of 0.2 s: keep credentials in groups, defaults or the environment. The
  seal costs a hash of the payload on read: a warm load of that hosts.yaml went from 0.26 to 0.34 s.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from pathlib import Path
from typing import Any


def _parser_digest() -> bytes:
    """The parsing code's own fingerprint: a fabricgen whose YAML reading changed (an upgrade, a fix) must not
    take what an older parser made from the same bytes."""
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in ("yamlsource.py", "fastyaml.py", "parsecache.py"):
        with contextlib.suppress(OSError):
            digest.update((here / name).read_bytes())
    return digest.hexdigest()[:16].encode()


SEAL = b"fabricgen-parse-cache/1 " + _parser_digest() + b"\n"
"""the first bytes of every cache file; a file of another format or parser (an older fabricgen's) is not read"""
_DIGEST = 32  # bytes of a sha256
_HEADER = len(SEAL) + 2 * _DIGEST
_PRIVATE_DIR, _PRIVATE_FILE = 0o700, 0o600

# A key naming a credential as Nornir users (and netmiko, napalm, scrapli, REST plugins) keep them: password,
# enable_secret, api_token, private_key, ssh_key_file, auth_username, credentials... and connection_options
# as a whole, whose extras are any plugin's. Broad on purpose: a false match only means that file is not cached.
# ASCII words, matched in the lower-cased key, so that the byte scan of :func:`blob_may_carry_secret` finds
# whatever :func:`carries_secret` finds.
SECRET_WORDS = ("pass", "secret", "token", "key", "credential", "auth", "cert", "connection_options")


def cache_dir() -> Path | None:
    """Per-user parse cache ($FABRICGEN_CACHE_DIR, else $XDG_CACHE_HOME/fabricgen or ~/.cache/fabricgen);
    None when FABRICGEN_NO_CACHE is set, or the folder is not private to the user (:func:`private_folder`)."""
    if os.environ.get("FABRICGEN_NO_CACHE"):
        return None
    folder = cache_folder()
    return folder if private_folder(folder) else None


def cache_folder() -> Path:
    """fabricgen's per-user cache folder, whether or not it exists or may be used."""
    base = os.environ.get("FABRICGEN_CACHE_DIR")
    return Path(base) if base else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fabricgen"


def private_folder(folder: Path) -> bool:
    """Whether ``folder`` may hold the cache: absent (it is made 0700 on first write), or a directory of this
    user that nobody else can write to. Readable by others, it is made 0700 (a cache an older fabricgen made)."""
    try:
        status = folder.stat()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    if not stat.S_ISDIR(status.st_mode) or untrusted_reason(status) is not None:
        return False
    if stat.S_IMODE(status.st_mode) != _PRIVATE_DIR:
        with contextlib.suppress(OSError):
            folder.chmod(_PRIVATE_DIR)
    return True


def untrusted_reason(status: os.stat_result) -> str | None:
    """Why a cache file or folder with ``status`` must not be trusted (another user's, or one others may write
    to: either could have planted what it holds), or None when it is this user's alone to change. Shared by
    every cache fabricgen keeps (parse cache, SONiC YANG models)."""
    if status.st_uid != os.geteuid():
        return f"owned by uid {status.st_uid}, not by this user (uid {os.geteuid()})"
    if status.st_mode & 0o022:
        writers = " and ".join(who for bit, who in ((0o020, "its group"), (0o002, "everyone")) if status.st_mode & bit)
        return f"writable by {writers} (mode {stat.S_IMODE(status.st_mode):04o})"
    return None


def source_digest(raw: bytes) -> bytes:
    return hashlib.sha256(raw).digest()


def seal(source: bytes, payload: bytes) -> bytes:
    """A cache file's bytes: format line, ``source`` (the digest of the bytes parsed), payload digest, payload."""
    return SEAL + source + hashlib.sha256(payload).digest() + payload


def unseal(sealed: bytes, source: bytes | None) -> bytes | None:
    """The payload of a sealed cache file; None when the format is not ours, the payload does not match its
    digest, or ``source`` (the digest of the bytes read now; None: any) is not the one it was made from."""
    if not sealed.startswith(SEAL) or len(sealed) < _HEADER:
        return None
    made_from, payload_digest = sealed[len(SEAL):len(SEAL) + _DIGEST], sealed[len(SEAL) + _DIGEST:_HEADER]
    payload = sealed[_HEADER:]
    if (source is not None and made_from != source) or hashlib.sha256(payload).digest() != payload_digest:
        return None
    return payload


def read_sealed(path: Path, source: bytes | None) -> bytes | None:
    """The payload of the cache file at ``path`` (see :func:`unseal`); None when absent or refused."""
    try:
        return unseal(path.read_bytes(), source)
    except OSError:
        return None


def mark_used(path: Path) -> None:
    """Record that the cache file at ``path`` was just used (its mtime), so that :func:`keep_newest` keeps it."""
    with contextlib.suppress(OSError):
        os.utime(path)


def keep_newest(folder: Path, pattern: str, kept: int) -> None:
    """Remove all but the ``kept`` most recently written or used files of ``folder`` matching ``pattern`` (a
    cache: a file that vanished or cannot be removed meanwhile only costs space)."""
    with contextlib.suppress(OSError):
        newest_first = sorted(folder.glob(pattern), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for stale in newest_first[kept:]:
            stale.unlink(missing_ok=True)


def write_private(folder: Path, name: str, content: bytes) -> None:
    """Write ``folder/name`` (0600, in a folder made 0700) atomically: beside it, then renamed. A cache that
    cannot be written (full disk, read-only) only costs time, and leaves nothing half-written behind."""
    staging = folder / f".{name}.{os.getpid()}.tmp"
    try:
        folder.mkdir(mode=_PRIVATE_DIR, parents=True, exist_ok=True)
        if not private_folder(folder):
            return
        staging.unlink(missing_ok=True)  # a killed run's, of this pid
        fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, _PRIVATE_FILE)
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), _PRIVATE_FILE)  # the umask may have taken bits off, never added
            handle.write(content)
        staging.replace(folder / name)
    except OSError:
        with contextlib.suppress(OSError):
            staging.unlink(missing_ok=True)


def carries_secret(data: Any) -> bool:
    """Whether any mapping key in ``data`` (dicts and lists, any depth) looks like a credential."""
    pending = [data]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            if any(isinstance(key, str) and _secret_key(key) for key in item):
                return True
            pending.extend(value for value in item.values() if isinstance(value, dict | list))
        elif isinstance(item, list):
            pending.extend(value for value in item if isinstance(value, dict | list))
    return False


def _secret_key(key: str) -> bool:
    # bytes.lower() changes A-Z only, as str.lower() does on ASCII: the key is lowered as the blob is.
    lowered = key.lower() if key.isascii() else key.encode("utf-8", "surrogatepass").lower().decode("latin-1")
    return any(word in lowered for word in SECRET_WORDS)


def blob_may_carry_secret(blob: bytes) -> bool:
    """Whether marshalled data may hold a key :func:`carries_secret` finds (marshal keeps strings as their
    UTF-8 bytes, which is what the key check looks at too): a scan of the bytes that needs no decoding, 60 ms
    for the 9 MB of a 32,768-GPU hosts.yaml (a regular expression took 550); False means it holds none."""
    lowered = blob.lower()
    return any(word.encode() in lowered for word in SECRET_WORDS)
