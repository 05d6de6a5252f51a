"""What a Nautobot answered last time, kept until its change log says something changed.

Every change Nautobot makes through its UI, REST or GraphQL API, or a Job is written to its change log
(``/api/extras/object-changes/``, newest first). Before reading devices, interfaces and cables, fabricgen asks
for the newest entry (one request, ``limit=1``); when it and the log's length are those recorded with the cached
answer, the answer is used as it is: an unchanged Nautobot costs two requests (the access check and this one)
instead of a page per 1,000 objects. The length is part of the mark because a long transaction (a bulk import)
can commit entries older than the newest one already visible: then the length changes though the newest
entry does not. The mark is read *before* the objects, so a change that lands during a read makes the next
mark differ, never an old answer look new.

Not seen by the change log, so not by the cache: changes written to Nautobot's database without its change
logging (SQL, ``nbshell`` without a change context). ``FABRICGEN_NO_CACHE=1`` reads everything again.

Where and how (fabricgen.load.parsecache, as the parse cache): the user's private cache folder, one file per
URL, filter and token (the token's sha256 is part of the file name, never the token: another token may see
other objects), sealed with the mark it was read at; an answer whose keys look like credentials is not kept.
No change log for the token (no permission to read it): no cache, every command reads Nautobot again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from fabricgen.load.parsecache import cache_dir, carries_secret, read_sealed, seal, write_private

CHANGES = "api/extras/object-changes/"
_FORMAT = hashlib.sha256(b"".join((Path(__file__).parent / name).read_bytes()
                                  for name in ("nautobot.py", "nautobot_cache.py"))).hexdigest()[:16]
"""the reading code's fingerprint: an answer shaped by another fabricgen is not taken"""


def change_mark(session: Any, url: str, ssl_verify: bool, timeout: float) -> str | None:
    """The change log's length and newest entry (id and time), as one string; None when the log cannot be read
    with this token (then nothing is cached)."""
    reply = session.get(f"{url}/{CHANGES}?limit=1&depth=0&sort=-time", timeout=timeout, verify=ssl_verify)
    if reply.status_code != 200:
        return None
    body = reply.json()
    newest = (body.get("results") or [{}])[0]
    return json.dumps([body.get("count"), newest.get("id"), newest.get("time")])


def _file(url: str, token: str, ssl_verify: bool, filters: dict[str, Any]) -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    key = json.dumps([_FORMAT, url, ssl_verify, sorted((str(k), str(v)) for k, v in filters.items()),
                      hashlib.sha256(token.encode()).hexdigest()])
    return folder / f"nautobot-{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def cached(url: str, token: str, ssl_verify: bool, filters: dict[str, Any], mark: str) -> dict[str, Any] | None:
    """The answer read at ``mark`` from this URL with this filter and token, or None."""
    path = _file(url, token, ssl_verify, filters)
    payload = read_sealed(path, hashlib.sha256(mark.encode()).digest()) if path is not None else None
    if payload is None:
        return None
    answer: dict[str, Any] = json.loads(payload)
    return answer


def keep(url: str, token: str, ssl_verify: bool, filters: dict[str, Any], mark: str, answer: dict[str, Any]) -> None:
    """Keep ``answer`` (plain JSON data) as read at ``mark``; not when it holds credential-like keys."""
    path = _file(url, token, ssl_verify, filters)
    if path is None or carries_secret(answer):
        return
    payload = json.dumps(answer, separators=(",", ":")).encode()
    write_private(path.parent, path.name, seal(hashlib.sha256(mark.encode()).digest(), payload))
