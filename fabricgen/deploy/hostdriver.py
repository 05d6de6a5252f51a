"""The NAPALM driver for GPU hosts (ConnectX and linux-dcb NIC scripts), found as ``custom_napalm.fabricgen_host``.

The host's owned "configuration" is what its rendered script sets on the NICs plus the files fabricgen
installs (hostbundle.py). The NAPALM contract maps onto it like this:

- ``load_replace_candidate``: keeps the bundle in memory; nothing reaches the host.
- ``compare_config``: the device's own diff, the script's ``--check`` run on the host (uploaded into a private
  temporary directory by SFTP and removed by the same command), plus a unified diff of the installed files
  (read over SFTP). A dry run leaves nothing behind.
- ``commit_config(revert_in=T)``: the pre-push snapshot (the ``--check`` lines: every setting that will
  change, with its current value), a restore script built from it and the previous installed files are
  written to ``/var/lib/fabricgen/commits/<id>/`` first; then a revert timer is armed *on the host*
  (``systemd-run --on-active`` where systemd runs, a detached ``setsid`` sleeper otherwise) and only then the
  script applies. If fabricgen dies, or the management network drops, the host reverts by itself. A commit
  right after ``compare_config`` of the same candidate on the same connection takes that comparison's reading
  as its snapshot instead of reading the host a second time: the host is read once, before anything changes.
- ``confirm_commit`` / ``confirm_own(id)``: under the same lock the timer takes (so a confirm and a firing
  timer cannot both win), and only for this run's commit: enables the boot unit, then cancels the timer.
  ``rollback``: runs the commit's revert script now.

One host, one commit at a time: the host's lock (``flock`` on ``/var/lib/fabricgen/lock``) covers the check and
the mark of the pending commit (one step), the apply (which runs only while its commit is still pending: an
apply that arrives after its own timer fired is refused), the confirm and every revert. Each commit's fate
(``commits/<id>/fate``: confirmed, reverted-by-timer, reverted-at-boot, reverted, restore-failed) is the host's
own record, which resume and rollback read back (``commit_fate``).
"""

from __future__ import annotations

import contextlib
import difflib
import re
import secrets
import shlex
from dataclasses import dataclass
from typing import Any

from napalm.base.exceptions import CommitError, ConnectionException, ReplaceConfigException

from fabricgen.deploy.hostbundle import BundleError, HostBundle, InstalledFile
from fabricgen.deploy.hostrestore import restore_script
from fabricgen.deploy.journal import escape
from fabricgen.deploy.ssh import SshError
from fabricgen.deploy.sshdriver import RecordingDriver
from fabricgen.deploy.sshdriver import commit_id as _commit_id
from fabricgen.platforms.common.hostscript import STATE_DIR

# This boot's id (FABRICGEN_BOOT_ID_FILE stands in for it where a test "reboots" a namespace): a timer's PID is
# recorded with it, and a PID recorded under another boot is never signalled.
BOOT_ID = '"${FABRICGEN_BOOT_ID_FILE:-/proc/sys/kernel/random/boot_id}"'
# What a commit's fate reads as on the host (commit_fate).
FATES = ("pending", "confirmed", "reverted-by-timer", "reverted-at-boot", "reverted", "restore-failed", "staged",
         "applied", "absent")
# The apply's exit status when its commit is no longer pending (its timer fired first): nothing was applied.
_EXPIRED = 7
# A RoCE default the linux-dcb script could not read because the device's RDMA-CM configfs group does not exist.
_UNSET_ROCE = re.compile(r'^DIFF ([A-Za-z0-9_]{1,32}) roce (?:tos|mode): have "<unset>"', re.MULTILINE)
# The script's own exit codes: 0 nothing differs, 1 something differs (--check); anything else is a failure.
_CHECK_MATCH, _CHECK_DIFF = 0, 1


@dataclass(frozen=True)
class _Reading:
    """The host as one compare_config found it, for the candidate it compared: the --check lines and the
    installed files' current text (None: absent)."""

    bundle: HostBundle
    check: str
    files: dict[str, str | None]


class RestoreFailed(CommitError):  # type: ignore[misc]
    """A failed apply whose revert failed too: `settings` did not come back (one "interface setting: have X,
    was Y" each); the host's own record says restore-failed."""

    def __init__(self, device: str, commit_id: str, settings: list[str], detail: str) -> None:
        self.device, self.commit_id, self.settings, self.detail = device, commit_id, settings, detail
        listed = "\n".join(settings) or "(none could be named: read the detail)"
        super().__init__(f"RESTORE FAILED: {len(settings)} setting(s) did not come back:\n{listed}\n{detail}")


def not_restored(snapshot: str, now: str) -> list[str]:
    """The settings a revert left changed: each DIFF line of `now` (the host read against the candidate) that
    the pre-push `snapshot` does not hold as such, as "interface setting: have X, was Y"."""
    before = dict(_split_diff(line) for line in snapshot.splitlines() if line.startswith("DIFF "))
    left = []
    for line in now.splitlines():
        if not line.startswith("DIFF "):
            continue
        key, have = _split_diff(line)
        if before.get(key) != have:
            left.append(f"{key}: have {have}, was {before.get(key, 'as intended')}")
    # A setting that differed before the push and now reads as intended did not come back either.
    found = {_split_diff(line)[0] for line in now.splitlines() if line.startswith("DIFF ")}
    left += [f"{key}: reads as intended, was {have}" for key, have in sorted(before.items()) if key not in found]
    return sorted(left)


def _split_diff(line: str) -> tuple[str, str]:
    """`DIFF ens1f0np0 mtu: have "1500", want "9000"` → ("ens1f0np0 mtu", '"1500"')."""
    key, _, rest = line[len("DIFF "):].partition(": have ")
    return key, rest.split(", want ", 1)[0]


class FabricgenHostDriver(RecordingDriver):
    def __init__(self, hostname: str, username: str, password: str | None = None, timeout: int = 60,
                 optional_args: dict[str, Any] | None = None) -> None:
        super().__init__(hostname, username, password, timeout, optional_args)
        self.state_dir = str(self.options.get("state_dir") or STATE_DIR)
        self.candidate: HostBundle | None = None
        self._reading: _Reading | None = None  # the last compare_config's, until the candidate changes

    # --- candidate and diff -------------------------------------------------------------------------------
    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        text = self.candidate_text(filename, config)
        self._reading = None
        try:
            self.candidate = HostBundle.from_json(text)
        except BundleError as exc:
            raise ReplaceConfigException(str(exc)) from None

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        raise NotImplementedError("fabricgen host scripts are full state: use load_replace_candidate")

    def discard_config(self) -> None:
        self.candidate = None
        self._reading = None

    def compare_config(self) -> str:
        bundle = self._loaded()
        reading = _Reading(bundle, self.nic_check(bundle), self.installed_now(bundle))
        self._reading = reading
        return "".join((reading.check, self.files_diff(bundle, reading.files)))

    def intent_check(self, config: str) -> str:
        """The deploy contract's read-back (every fabricgen driver has it): what of the owned state differs from
        the candidate `config`, "" when the device holds it. Read-only; snapshot and revert proof compare it."""
        try:
            return self.nic_check(HostBundle.from_json(config))
        except BundleError as exc:
            raise ReplaceConfigException(str(exc)) from None

    def nic_check(self, bundle: HostBundle) -> str:
        """The script's --check on the host: one DIFF line per setting that differs, "" when all hold."""
        # What `mktemp -d` does, over the SFTP session instead of a shell of its own: an exclusive mkdir (0700)
        # of a random name. The one shell of a check runs the script and removes the directory.
        directory = f"/tmp/fabricgen-check.{secrets.token_hex(6)}"
        self.ssh.make_private_directory(directory)
        script = f"{directory}/{bundle.script}"
        try:
            self.ssh.put(script, bundle.files[bundle.script], 0o700)
            done = self.ssh.run(f"bash {shlex.quote(script)} --check; rc=$?; rm -rf {shlex.quote(directory)}; "
                                "exit $rc")
        except SshError:
            self.ssh.run(f"rm -rf {shlex.quote(directory)}")
            raise
        if done.status == _CHECK_MATCH:
            return ""
        if done.status == _CHECK_DIFF:
            return "".join(line + "\n" for line in done.stdout.splitlines() if line.startswith("DIFF "))
        raise CommitError(f"{bundle.device}: {bundle.script} --check exited {done.status}: "
                          f"{done.output or 'no output'}")

    def installed_now(self, bundle: HostBundle) -> dict[str, str | None]:
        """The current text of each file the bundle installs (None: absent)."""
        return {item.path: self.read_file(item.path) for item in bundle.installed}

    def files_diff(self, bundle: HostBundle, current_files: dict[str, str | None] | None = None) -> str:
        """A unified diff from the installed files (as read now, or as `current_files` holds them) to the bundle's."""
        found = self.installed_now(bundle) if current_files is None else current_files
        chunks = []
        for item in bundle.installed:
            current = found[item.path]
            if current is None:  # a whole new file is named, not printed: the render shows its text
                chunks.append(f"--- /dev/null\n+++ {item.path} (new file, {len(item.text.splitlines())} lines)\n")
            elif current != item.text:
                chunks.append("".join(difflib.unified_diff(
                    current.splitlines(keepends=True), item.text.splitlines(keepends=True),
                    fromfile=item.path, tofile=item.path)))
        return "".join(chunks)

    def read_file(self, path: str) -> str | None:
        """A file's text, None when it does not exist; any other reason it cannot be read is a CommitError."""
        try:
            return self.ssh.read(path)
        except SshError as exc:
            raise CommitError(str(exc)) from None

    # --- commit, confirm, rollback ------------------------------------------------------------------------
    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        bundle = self._loaded()
        reading, self._reading = self._reading, None  # good for this commit only, whatever happens to it
        waiting = self.pending_commit_id()  # checked again, with the mark, under the host's lock (_seal_command)
        if waiting:
            raise CommitError(f"{bundle.device}: nothing was changed: commit {waiting} is waiting for its confirm; "
                              "confirm or roll back first")
        commit_id = _commit_id(message)
        snapshot, previous = self._as_found(bundle, reading)
        self.last_snapshot = snapshot  # the host as found: what a revert must read back as
        try:
            opened = self._open_rdma_cm_groups(commit_id, snapshot)
            if opened:  # the values behind those groups, now readable, are what the restore script sets back
                snapshot = self.nic_check(bundle)
            plan = restore_script(bundle.platform, bundle.device, snapshot)
            if plan.unrestorable:
                raise CommitError(f"{bundle.device}: nothing was changed: the current value of "
                                  f"{', '.join(plan.unrestorable)} could not be snapshotted, so the push could not "
                                  "be undone")
            directory = self._stage(commit_id, bundle, snapshot, plan.script, (previous, opened))
            sealed = self.ssh.run(self._seal_command(commit_id, directory, int(revert_in or 0)))
        except SshError as exc:
            self._discard_quietly(commit_id)
            raise CommitError(f"{bundle.device}: nothing was changed: the undo could not be staged on the host "
                              f"first ({exc})") from None
        except CommitError:
            self._discard_quietly(commit_id)
            raise
        if sealed.status != 0:
            self._discard_quietly(commit_id)
            raise CommitError(f"{bundle.device}: nothing was changed: {sealed.output or 'sealing the undo failed'}")
        applied = self.ssh.run(self._apply_locked(commit_id, directory, bundle, bool(revert_in)),
                               timeout=float(max(self.timeout, 600)))
        if applied.status == _EXPIRED:
            raise CommitError(f"{bundle.device}: nothing was changed by this commit: its revert timer fired before "
                              "the apply reached the host, so the apply was refused (the host holds what it held)")
        if applied.status != 0:
            self._undo_failed_apply(bundle, commit_id, directory, snapshot, applied)

    def _undo_failed_apply(self, bundle: HostBundle, commit_id: str, directory: str, snapshot: str,
                           applied: Any) -> None:
        """An apply that failed half-way: its revert runs at once; a revert that fails too leaves settings
        changed, named one per line (RestoreFailed), so the operator reads them first."""
        undone = self.ssh.run(f"bash {shlex.quote(directory)}/revert.sh now", timeout=float(max(self.timeout, 600)))
        detail = " | ".join(applied.output.splitlines()[-5:])
        failure = f"applying {bundle.script} failed (exit {applied.status}): {detail}"
        if undone.status == 0:
            raise CommitError(f"{bundle.device}: {failure}; the previous state was restored")
        raise RestoreFailed(bundle.device, commit_id, not_restored(snapshot, self.nic_check(bundle)),
                            f"{failure}; restoring failed too (exit {undone.status}): "
                            f"{' | '.join(undone.output.splitlines()[-5:])}")

    def _discard_quietly(self, commit_id: str) -> None:
        """discard_staged, best effort (a commit that failed before its apply): what is left is the host's record,
        which a rollback of the run discards again."""
        with contextlib.suppress(SshError, ConnectionException, CommitError):
            self.discard_staged(commit_id)

    def discard_staged(self, commit_id: str) -> list[str]:
        """Remove what a commit that never applied left on the host: the RDMA-CM configfs groups it opened to read
        their values (recorded in ``rdma-cm-opened`` before each was made), its timer and pending mark if it got
        that far, and its staged undo. Under the host's lock, and only while its apply never started (no
        ``applying`` mark, not the last commit, no fate): a commit that may have changed the host is left to its
        revert. The groups removed, by name."""
        state = shlex.quote(self.state_dir)
        directory = f"{state}/commits/{_commit_id(commit_id)}"
        done = self.ssh.run(
            f"{_host_lock(self.state_dir, 60)}; d={directory}; [ -d $d ] || exit 0; "
            f"if [ -e $d/applying ] || [ -s $d/fate ] || [ \"$(cat {state}/last 2>/dev/null)\" = {commit_id} ]; then "
            "echo 'its apply started: left to its revert' >&2; exit 3; fi; "
            f"if [ \"$(cat {state}/pending 2>/dev/null)\" = {commit_id} ]; then "
            f"if [ -s $d/timer.pid ]; then read -r pid boot < $d/timer.pid; "
            f"[ \"$boot\" = \"$(cat {BOOT_ID})\" ] && kill -- -$pid 2>/dev/null; fi; "
            f"[ \"$(cat $d/timer 2>/dev/null)\" != systemd ] || systemctl stop fabricgen-revert-{commit_id}.timer; "
            f"rm -f {state}/pending; fi; "
            'cfg="${FABRICGEN_CONFIGFS:-/sys/kernel/config}"; status=0; '
            "if [ -f $d/rdma-cm-opened ]; then while read -r g; do "
            '[[ $g =~ ^[A-Za-z0-9_]{1,32}$ ]] || continue; '
            'if [ -d "$cfg/rdma_cm/$g" ]; then rmdir "$cfg/rdma_cm/$g" && echo "$g" || status=1; fi; '
            f"done < $d/rdma-cm-opened; fi; [ $status = 0 ] && rm -rf $d && sync -f {state}; exit $status")
        if done.status != 0:
            raise CommitError(f"{self.hostname}: commit {commit_id}: its staged residue could not be removed: "
                              f"{escape(done.output.strip()[:300]) or f'exit {done.status}'}")
        return done.stdout.split()

    def _apply_locked(self, commit_id: str, directory: str, bundle: HostBundle, timed: bool) -> str:
        """The apply, under the host's lock, and (with a revert timer) only while this commit is still the pending
        one: an apply that reaches the host after its own timer fired (a slow or cut management link) is refused
        instead of leaving the new settings with no timer. Recording the commit as the last one is part of the
        same shell: it fails like an apply that failed."""
        state = shlex.quote(self.state_dir)
        still_ours = (f"{{ [ \"$(cat {state}/pending 2>/dev/null)\" = {commit_id} ] || "
                      f"{{ echo 'the commit is no longer pending: its revert timer fired' >&2; exit {_EXPIRED}; }}; }}"
                      if timed else "true")
        return (f"{_host_lock(self.state_dir, 120)} && {still_ours} && touch {shlex.quote(directory)}/applying && "
                f"{_apply_command(directory, bundle)} && echo {commit_id} > {state}/last")

    def _as_found(self, bundle: HostBundle, reading: _Reading | None) -> tuple[str, dict[str, str | None]]:
        """The snapshot a commit starts from: the --check lines and the installed files. The `reading` of a
        compare_config of this very candidate on this connection is taken; else the host is read now."""
        if reading is not None and reading.bundle is bundle:
            return reading.check, reading.files
        return self.nic_check(bundle), self.installed_now(bundle)

    def _open_rdma_cm_groups(self, commit_id: str, snapshot: str) -> list[str]:
        """Make RoCE defaults that read as unset readable, so they can be snapshotted: an RDMA device's RDMA-CM
        configfs group appears on mkdir (what cma_roce_tos and the script's --apply do) and then shows the
        values the kernel has. Without the group nobody can tell what to restore. Each group is recorded in the
        commit's ``rdma-cm-opened`` (synced) *before* it is made, so a controller killed in between leaves a
        record that rollback and discard_staged act on, never a group nobody knows of. Every group the file
        names (an earlier attempt of a resumed run's too): the revert closes them all."""
        devices = sorted(set(_UNSET_ROCE.findall(snapshot)))
        if not devices:
            return []
        record = shlex.quote(f"{self.state_dir}/commits/{commit_id}") + "/rdma-cm-opened"
        # configfs takes a plain mkdir of the group (no -p: the kernel makes its ports/ itself).
        done = self.ssh.run(
            f'cfg="${{FABRICGEN_CONFIGFS:-/sys/kernel/config}}"; [ -d "$cfg/rdma_cm" ] || exit 1; '
            f"umask 077 && mkdir -p {shlex.quote(self.state_dir)}/commits/{commit_id} && touch {record} || exit 1; "
            f"for d in {' '.join(devices)}; do [ -d \"$cfg/rdma_cm/$d\" ] && continue; "
            f"grep -qx \"$d\" {record} || {{ echo \"$d\" >> {record} && sync -f {record}; }} || exit 1; "
            f'mkdir "$cfg/rdma_cm/$d" || exit 1; done; cat {record}')
        if done.status != 0:
            raise CommitError(f"{self.hostname}: nothing was changed: the RDMA-CM configfs groups of "
                              f"{', '.join(devices)} could not be opened to read their RoCE defaults: "
                              f"{escape(done.output.strip()[:300]) or f'exit {done.status}'}")
        return sorted({name for name in done.stdout.split() if re.fullmatch(r"[A-Za-z0-9_]{1,32}", name)})

    def _stage(self, commit_id: str, bundle: HostBundle, snapshot: str, restore: str,
               found: tuple[dict[str, str | None], list[str]]) -> str:
        """Everything the host needs to undo this commit (`found`: the installed files as found, the RDMA-CM groups
        opened to read them), written before anything changes; _seal_command makes it durable."""
        previous, opened = found
        directory = f"{self.state_dir}/commits/{commit_id}"
        quoted = shlex.quote(directory)
        # A resumed run reuses its commit id: the markers of the earlier attempt go first. The session's
        # FABRICGEN_* settings (tool time limit, test trees) are kept for a revert that runs from a timer.
        self.ssh.check(f"umask 077 && mkdir -p {quoted}/prev {quoted}/new && "
                       f"rm -f {quoted}/reverted {quoted}/confirmed {quoted}/fate {quoted}/timer {quoted}/timer.pid "
                       f"{quoted}/applying && "
                       f"{{ export -p | grep '^declare -x FABRICGEN_' > {quoted}/env || true; }}")
        for item in bundle.installed:
            self.ssh.put(f"{directory}/new/{item.name}", item.text, item.mode)
            old = previous[item.path]
            if old is not None:
                self.ssh.put(f"{directory}/prev/{item.name}", old, item.mode)
        unit = next((item.name for item in bundle.installed if item.name.endswith(".service")), "")
        if unit:  # the boot unit as found: the revert leaves it enabled or disabled as it was
            self.ssh.put(f"{directory}/unit", unit + "\n", 0o600)
            self.ssh.check(f"{{ command -v systemctl >/dev/null && systemctl is-enabled {shlex.quote(unit)} "
                           f"2>/dev/null || true; }} | head -c 32 > {quoted}/unit-before")
        self.ssh.put(f"{directory}/snapshot.txt", snapshot, 0o600)
        self.ssh.put(f"{directory}/found.txt", self.last_snapshot or snapshot, 0o600)  # what a revert reads back as
        self.ssh.put(f"{directory}/restore-nic.sh", restore, 0o700)
        self.ssh.put(f"{directory}/revert.sh", _revert_script(self.state_dir, commit_id, bundle, previous, opened),
                     0o700)
        return directory

    def _seal_command(self, commit_id: str, directory: str, revert_in: int) -> str:
        """One shell, each step only if the one before it succeeded: the staged undo is synced to disk, then
        (with `revert_in`) under the host's lock the pending mark is checked and set as one step (two runs never
        both mark a host), synced, and the revert timer armed on the host. The timer's PID is recorded with the
        boot it belongs to: after a reboot that PID is someone else's and is never signalled."""
        quoted = shlex.quote(directory)
        sync = f"sync -f {quoted}/revert.sh"
        if not revert_in:
            return sync
        state = shlex.quote(self.state_dir)
        revert = f"/bin/bash {quoted}/revert.sh timer"
        return (f"{sync} && {_host_lock(self.state_dir, 120)} && "
                f"{{ p=$(cat {state}/pending 2>/dev/null); [ -z \"$p\" ] || "
                f"{{ echo \"commit $p is waiting for its confirm; confirm or roll back first\" >&2; exit 6; }}; }} && "
                f"echo {commit_id} > {state}/pending && sync -f {state}/pending && "
                f"{{ if [ -d /run/systemd/system ] && command -v systemd-run >/dev/null; then "
                f"systemd-run --quiet --unit=fabricgen-revert-{commit_id} --on-active={revert_in}s "
                f"--timer-property=AccuracySec=1s {revert} && echo systemd > {quoted}/timer; "
                f"else setsid -f /bin/bash -c 'echo \"$$ $(cat {BOOT_ID})\" > {quoted}/timer.pid; "
                f"sleep {revert_in}; exec {revert}' "
                f"</dev/null >{quoted}/timer.log 2>&1 9>&- && echo setsid > {quoted}/timer; fi; }}")

    def confirm_commit(self) -> None:
        self.confirm_own(None)

    def confirm_own(self, commit_id: str | None) -> None:
        """Confirm `commit_id` (None: whichever is pending) under the lock the timer's revert takes, so a confirm
        and a firing timer cannot both win, and never another run's commit. The boot unit is enabled (and the
        unit manager reloaded) as part of the confirm: a confirmed host keeps its settings across a reboot."""
        state = shlex.quote(self.state_dir)
        mine = f" && [ \"$id\" = {_commit_id(commit_id)} ]" if commit_id else ""
        nothing = "no commit is pending: it was reverted by its timer or never made"
        # The unit is enabled before the timer is stopped: a confirm that cannot enable it fails and the timer,
        # still armed, reverts the commit (the unit too) as for any unconfirmed commit.
        done = self.ssh.run(
            f"{_host_lock(self.state_dir, 60)}; id=$(cat {state}/pending 2>/dev/null); "
            f"[ -n \"$id\" ]{mine} || {{ if [ -n \"$id\" ]; then echo \"commit $id of another run is pending, "
            f"not this one\"; else echo '{nothing}'; fi; exit 4; }}; d={state}/commits/$id; "
            f"{_unit_command('enable', '$d')}; "
            f"if [ \"$(cat $d/timer 2>/dev/null)\" = systemd ]; then systemctl stop fabricgen-revert-$id.timer; "
            f"elif [ -s $d/timer.pid ]; then read -r pid boot < $d/timer.pid; "
            f"[ \"$boot\" = \"$(cat {BOOT_ID})\" ] && kill -- -$pid 2>/dev/null; fi; "
            f"rm -f {state}/pending; echo confirmed > $d/confirmed; echo confirmed > $d/fate; "
            f"sync -f $d/fate {state}")
        if done.status != 0:
            raise CommitError(f"{self.hostname}: confirm failed: {done.output}")

    def commit_snapshot(self, commit_id: str) -> str | None:
        """The --check lines the host read before `commit_id` changed anything (what its revert must read back
        as), from the host's own record; None when the commit left none."""
        return self.read_file(f"{self.state_dir}/commits/{_commit_id(commit_id)}/found.txt")

    def commit_fate(self, commit_id: str) -> str:
        """What became of `commit_id`, as the host itself recorded it: pending (its timer armed), confirmed,
        reverted-by-timer, reverted-at-boot, reverted, restore-failed; staged (its undo was written but it never
        applied); absent (it never reached the host)."""
        done = self.ssh.run(self.fate_probe(commit_id, applying=True))
        fate = done.stdout.strip()
        if done.status != 0 or fate not in FATES:
            raise CommitError(f"{self.hostname}: cannot read what became of commit {commit_id}: "
                              f"{escape(done.output[:200]) or 'no answer'}")
        return fate

    def revert(self, commit_id: str) -> None:
        """Run a commit's revert script: NIC settings and installed files as they were before that commit."""
        _commit_id(commit_id)
        self._reading = None  # the host is about to change under it
        directory = shlex.quote(f"{self.state_dir}/commits/{commit_id}")
        if self.ssh.run(f"test -f {directory}/revert.sh").status != 0:
            raise CommitError(f"{self.hostname}: commit {commit_id} is not recorded on the host (no revert script)")
        done = self.ssh.run(f"bash {directory}/revert.sh now", timeout=float(max(self.timeout, 600)))
        if done.status != 0:
            raise CommitError(f"{self.hostname}: reverting {commit_id} failed (exit {done.status}): {done.output}")

    # --- getters for health checks ------------------------------------------------------------------------
    def get_facts(self) -> dict[str, Any]:
        done = self.ssh.check("hostname; uname -r; cat /proc/uptime")
        name, kernel, uptime = ([*done.stdout.splitlines(), "", "", ""])[:3]
        return {"hostname": name, "fqdn": name, "vendor": "Linux", "model": "", "serial_number": "",
                "os_version": kernel, "uptime": float(uptime.split()[0]) if uptime else -1.0,
                "interface_list": sorted(self.get_interfaces())}

    def get_interfaces(self) -> dict[str, dict[str, Any]]:
        # The real iproute2, not a stand-in earlier in PATH: link state is the kernel's.
        done = self.ssh.check("PATH=/usr/sbin:/usr/bin:/sbin:/bin ip -o link show")
        interfaces: dict[str, dict[str, Any]] = {}
        for line in done.stdout.splitlines():
            match = re.match(r"^\d+: ([^:@ ]+)(?:@[^:]+)?: <([^>]*)>.*?\bmtu (\d+)", line)
            if match:
                flags = match.group(2).split(",")
                interfaces[match.group(1)] = {
                    "is_up": "LOWER_UP" in flags and "UP" in flags, "is_enabled": "UP" in flags,
                    "description": "", "last_flapped": -1.0, "speed": -1.0, "mtu": int(match.group(3)),
                    "mac_address": ""}
        return interfaces

    def _loaded(self) -> HostBundle:
        if self.candidate is None:
            raise ReplaceConfigException(f"{self.hostname}: no candidate loaded")
        return self.candidate


def _host_lock(state_dir: str, wait: int) -> str:
    """Take the host's fabricgen lock on fd 9 for the rest of the shell (the lock the revert script takes too),
    or end the shell with exit 5."""
    state = shlex.quote(state_dir)
    return (f"{{ exec 9>>{state}/lock && flock -w {wait} 9; }} || "
            "{ echo 'another fabricgen step holds the host lock' >&2; exit 5; }")


def _unit_command(action: str, directory: str) -> str:
    """Enable (at confirm: the unit manager reloaded first) or disable again (at revert, where the commit found
    it not enabled) the boot unit the commit installed, named in its `unit` file. Without systemctl there is no
    unit manager to tell. Real systemctl edits the unit links even where systemd is not running."""
    unit = f'u=$(cat {directory}/unit 2>/dev/null); [ -n "$u" ] && command -v systemctl >/dev/null'
    if action == "enable":
        return (f"if {unit}; then {{ [ ! -d /run/systemd/system ] || systemctl daemon-reload; }} && "
                'systemctl enable --quiet "$u" || { echo "cannot enable the boot unit $u" >&2; exit 8; }; fi')
    return (f'if {unit} && [ "$(cat {directory}/unit-before 2>/dev/null)" != enabled ]; then '
            'systemctl disable --quiet "$u" 2>/dev/null || true; fi')


def _apply_command(directory: str, bundle: HostBundle) -> str:
    """Install the files, then run the installed script (the one the boot unit runs) with --apply."""
    quoted = shlex.quote(directory)
    steps = [_install(f"{quoted}/new/{item.name}", item) for item in bundle.installed]
    script = next(item.path for item in bundle.installed if item.name == bundle.script)
    steps.append(f"bash {shlex.quote(script)} --apply")
    return " && ".join(steps)


def _install(source: str, item: InstalledFile) -> str:
    return f"install -D -m {item.mode:o} {source} {shlex.quote(item.path)}"


def _revert_script(state_dir: str, commit_id: str, bundle: HostBundle, previous: dict[str, str | None],
                   opened: list[str]) -> str:
    """The host-side undo of one commit. `timer` mode acts only while this commit is still the pending one.
    RDMA-CM configfs groups the commit opened to read their values are closed again once those values are back
    (the kernel keeps them when the group goes), so the host is left as it was found."""
    state = shlex.quote(state_dir)
    directory = f"{state}/commits/{commit_id}"
    files = []
    for item in bundle.installed:
        target = shlex.quote(item.path)
        if previous[item.path] is None:
            files.append(f"rm -f {target} || status=1")
        else:
            files.append(f"install -D -m {item.mode:o} {directory}/prev/{item.name} {target} || status=1")
    lines = [
        "#!/bin/bash",
        f"# fabricgen: undo commit {commit_id} on {bundle.device}: NIC settings and installed files as before it.",
        "set -u",
        f"if [[ -f {directory}/env ]]; then . {directory}/env; fi",
        f"exec 9>>{state}/lock",
        "# A timer (or the boot unit) waits out an apply in progress, however long its tools take: giving up would",
        "# leave that apply unconfirmed with no timer. A revert asked for now gives up after two minutes.",
        '[[ ${1:-now} == now ]] && wait=120 || wait=3600',
        "flock -w $wait 9 || { echo 'error: another fabricgen step holds the lock' >&2; exit 1; }",
        f"pending=$(cat {state}/pending 2>/dev/null || true)",
        f'if [[ ${{1:-now}} != now && $pending != {commit_id} ]]; then exit 0; fi  # confirmed or reverted meanwhile',
        "status=0",
        "# The boot unit goes back to how it was found (disabled, if this commit's confirm enabled it) while its",
        "# unit file is still there to name it.",
        _unit_command("disable", directory),
        f"bash {directory}/restore-nic.sh || status=1",
        *files,
        *(['cfg="${FABRICGEN_CONFIGFS:-/sys/kernel/config}"',
           f'for d in {" ".join(opened)}; do [[ ! -d $cfg/rdma_cm/$d ]] || rmdir "$cfg/rdma_cm/$d" || status=1; '
           "done"] if opened else []),
        "[[ ! -d /run/systemd/system ]] || systemctl daemon-reload || true  # the unit files as they are again",
        f"if [[ $pending == {commit_id} ]]; then rm -f {state}/pending; fi",
        f'echo "$status ${{1:-now}} $(date -u +%FT%TZ)" > {directory}/reverted',
        'case "$status ${1:-now}" in "0 timer") fate=reverted-by-timer;; "0 boot") fate=reverted-at-boot;;',
        '  0\\ *) fate=reverted;; *) fate=restore-failed;; esac',
        f'echo "$fate" > {directory}/fate',
        f"sync -f {directory}/reverted {directory}/fate",
        'exit "$status"',
    ]
    return "\n".join(lines) + "\n"
