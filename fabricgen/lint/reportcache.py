"""The intent road's lint report, kept for the next render or `fabricgen lint` of the same input files.

Lint is a pure function of the resolved fabric, and the resolved fabric of the intent and inventory files' bytes
and fabricgen's code. At 32,768 GPUs lint is 1.2 CPU-s of the render's critical path, and a warm render (CI
rendering a commit it rendered before, into a new directory) finds the same report every time. So render keeps
the report it gated on, and a render of the same bytes by the same code reads it back instead of linting; so
does `fabricgen lint` (a pipeline that renders, then lints the same commit, resolves and lints once), which keeps
the report it makes too. `lint --configs` reads configs besides, and is never answered from here.

Kept as the parse cache keeps its files (fabricgen.load.parsecache: the user's private folder, each file sealed):
found by a key made of every input file's sha256 (the manifest's input hashes) and a digest of fabricgen's code
and the libraries that validate (fabricgen.load.inventorycache.code_digest), and sealed to that key and its
payload's digest. Only inputs read from files are keyed so (an intent with a SimpleInventory or a compact
inventory); a Nautobot inventory is linted every time. No secret: a report is findings about the resolved
fabric (names, numbers, messages), which holds no credential (Nornir's password and connection options stay in
the inventory). No pickle: marshal's plain tuples, from which each finding is rebuilt.
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Callable
from typing import Any

from fabricgen.lint import LintReport, Waived
from fabricgen.lint.registry import Finding
from fabricgen.load.inventorycache import code_digest
from fabricgen.load.parsecache import cache_dir, keep_newest, mark_used, read_sealed, seal, write_private

FORMAT = 1
KEPT = 16
"""reports kept (the most recently used); one is a few hundred kB at 32,768 GPUs"""
FILE_LABELS = frozenset({"inventory/hosts.yaml", "inventory/groups.yaml", "inventory/defaults.yaml",
                         "inventory/devices.yaml", "inventory/cabling.csv"})
"""the inventory inputs a report may be keyed by: files (a Nautobot inventory is an answer of a service)"""


def report_key(input_hashes: dict[str, str]) -> str | None:
    """The name of the cache file of the report of the fabric these inputs resolve to; None when there is no
    cache, or the inputs are not all files."""
    labels = [label for label in input_hashes if not label.startswith("intent/")]
    if cache_dir() is None or len(labels) == len(input_hashes) or not FILE_LABELS.issuperset(labels):
        return None
    digest = hashlib.sha256(f"fabricgen-lint-report/{FORMAT}\0".encode() + code_digest())
    for label, value in sorted(input_hashes.items()):
        digest.update(f"{label}\0{value}\0".encode())
    return f"lint-{digest.hexdigest()}.marshal"


def restore_report(key: str) -> LintReport | None:
    """The report kept under ``key``; None when none is (or it is damaged, or of another format)."""
    folder = cache_dir()
    if folder is None:
        return None
    path = folder / key
    payload = read_sealed(path, hashlib.sha256(key.encode()).digest())
    if payload is None:
        return None
    try:
        report = _decode(marshal.loads(payload))
    except (EOFError, ValueError, TypeError, IndexError):
        return None
    mark_used(path)
    return report


def kept_or_made(input_hashes: dict[str, str], make: Callable[[], LintReport]) -> LintReport:
    """The report kept for these input files and this code, else ``make()``'s, kept for the next run (render's gate
    and `fabricgen lint` both ask here)."""
    key = report_key(input_hashes)
    kept = restore_report(key) if key is not None else None
    if kept is not None:
        return kept
    report = make()
    if key is not None:
        keep_report(key, report)
    return report


def keep_report(key: str, report: LintReport) -> None:
    """Keep ``report`` under ``key`` (a cache: failing to write it only costs time)."""
    folder = cache_dir()
    if folder is None:
        return
    payload = marshal.dumps(_encode(report))
    write_private(folder, key, seal(hashlib.sha256(key.encode()).digest(), payload))
    keep_newest(folder, "lint-*.marshal", KEPT)


def _finding(finding: Finding) -> tuple[Any, ...]:
    return (finding.rule, finding.severity, finding.device, finding.message, finding.fix, finding.port,
            finding.peer, finding.source, finding.where)


def _encode(report: LintReport) -> tuple[Any, ...]:
    return (FORMAT, [_finding(f) for f in report.findings], [(_finding(w.finding), w.reason) for w in report.waived],
            report.devices, report.links, report.skipped)


def _decode(payload: Any) -> LintReport:
    version, findings, waived, devices, links, skipped = payload
    if version != FORMAT:
        raise ValueError("another format")
    return LintReport([Finding(*row) for row in findings], [Waived(Finding(*row), reason) for row, reason in waived],
                      devices, links, list(skipped))
