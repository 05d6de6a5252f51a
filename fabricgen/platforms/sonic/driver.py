"""The NAPALM driver for SONiC switches, found as ``custom_napalm.fabricgen_sonic``: GCU over SSH.

SONiC's Generic Config Updater (sonic-utilities ``generic_config_updater``; design: sonic-net/SONiC
``doc/config-generic-update-rollback/SONiC_Generic_Config_Update_and_Rollback_Design.md``) is the switch's own
transactional path: ``config apply-patch`` takes an RFC 6902 JSON Patch, validates the result against SONiC's YANG
models and applies it; ``config checkpoint``/``config rollback`` save and restore the whole CONFIG_DB. The NAPALM
contract maps onto it like this:

- ``load_replace_candidate``: the rendered config_db.json, kept in memory; nothing reaches the switch.
- ``compare_config``: the running config (``show runningconfiguration all``) and its release (``VERSIONS|DATABASE``),
  the push that release accepts (fabricgen/platforms/sonic/gcu.py ``plan``: the JSON Patch of the owned scope, down
  to fields; up to 202505 the switch's own lossless WRED profile with fabricgen's green fields; ``pfcwd`` commands
  for a switch without PFC_WD), what GCU's field rules of that release would refuse checked here first (the
  predictor agrees with the real GCU of 202411/202505/202511 on every golden patch: tests/test_sonic_gcu_oracle.py),
  then the switch's own check: ``config apply-patch --dry-run`` of the patch, uploaded by SFTP into a private
  temporary directory that the same command removes. The diff is the patch, one line per operation, then the pfcwd
  commands, what stays the switch's (``! not changed on SONiC <release>``) and the ports GCU's sorter takes
  admin-down and up again around it (``! disruptive``: read from the dry run's sorted changes; ``disruption``).
- ``commit_config(revert_in=T)``: the same checks (the dry run of a compare_config just before, of the same patch
  on the same running config, is taken, not sorted again), then ``config checkpoint fabricgen-<run>``; the revert
  script and the patch are written to ``/var/lib/fabricgen/commits/<run>/``; a revert timer is armed on the switch
  (``systemd-run --on-active`` where systemd runs, a detached ``setsid`` sleeper otherwise) that runs ``config
  rollback fabricgen-<run>`` unless confirmed; only then ``config apply-patch`` (then the pfcwd commands), time-limited
  by the ports the patch names (``gcu_timeout``: GCU's sorter takes minutes for a few ports; optional_args
  ``gcu_margin`` scales it for a switch CPU slower or busier than assumed). If fabricgen dies, or the
  management network drops, the switch reverts by itself.
- ``confirm_commit`` / ``confirm_own(run)``: under the lock the timer takes, and only for this run's pending commit:
  ``config save -y`` first (a reboot keeps it), then the timer is stopped. A save that fails leaves the commit
  pending with its timer armed (the confirm fails saying so), so the switch never runs unsaved with no timer; a
  timer that fires after the save rolls back and saves again.
- ``rollback``/``revert`` of the pending commit: ``config rollback fabricgen-<run>`` (GCU replaces the running
  config with the checkpoint's, computing the patch itself), as its timer would. Of a confirmed commit: only the
  paths its patch touched are put back as the switch had them (``before.json`` of the commit), through
  ``config apply-patch``, then ``config save -y`` -- the whole checkpoint would also undo what others changed on
  the switch since. A commit already reverted (by its timer, or a rollback) is left as it is.

One switch, one commit at a time, as on a GPU host (fabricgen/deploy/hostdriver.py): the switch's lock (``flock`` on
``<state>/lock``) covers the check and the mark of the pending commit (one step), the apply (which runs only while
its commit is still pending: an apply that arrives after its own timer fired is refused), the confirm and every
revert. Each commit's fate (``commits/<run>/fate``: confirmed, reverted-by-timer, reverted, restore-failed) is the
switch's own record, which ``runs --verify``, resume and rollback read back (``commit_fate``).

Credentials are never logged; host keys are checked against ``optional_args["known_hosts"]`` (fabricgen.deploy.ssh).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import shlex
from typing import Any

from napalm.base.exceptions import CommitError, ConnectionException, ReplaceConfigException

from fabricgen.deploy.journal import escape
from fabricgen.deploy.ssh import SshError
from fabricgen.deploy.sshdriver import RecordingDriver
from fabricgen.deploy.sshdriver import commit_id as _commit_id
from fabricgen.platforms.sonic import gcu

STATE_DIR = "/var/lib/fabricgen"
CHECKPOINT_PREFIX = "fabricgen-"
_ERROR_CHARS = 400
# GCU's sorter searches an order for the patch, validating each step against the YANG models; its cost grows with
# the square of the ports the patch names (about ports x operations). Measured (bench/gcu_sorter.py, 202511, a
# dry run, docs/testing.md): 1/2/4/8 ports 18.9/53.3/185.1/788.5 s CPU, under 12 n² + 8 n s for n ports. A dry run
# and an apply each get BASE + MARGIN × (12 n² + 8 n): MARGIN for a switch CPU twice as slow as a core of the
# measuring machine and busy with its own daemons. At most CEILING, the longest --confirm-timeout: an apply that
# outlasts its revert timer can never be confirmed (from 9 ports on, the ceiling is the limit).
GCU_BASE_S = 120.0
GCU_SORT_S = (12.0, 8.0)  # CPU seconds per port² and per port of the measuring machine
GCU_MARGIN = 4.0
GCU_CEILING_S = 3600.0
_APPLY_TIMEOUT_S = 7200.0  # a rollback or revert: the patch is GCU's own, its size not known here
# What a commit's fate reads as on the switch (commit_fate), as on a GPU host.
FATES = ("pending", "confirmed", "reverted-by-timer", "reverted", "restore-failed", "staged", "applied", "absent")
# Exit statuses of the switch-side shells: the lock not taken, another commit pending, the apply's commit no
# longer pending (its timer fired first), `config save` failing in a confirm.
_LOCKED, _OTHER_PENDING, _EXPIRED, _NOT_SAVED = 5, 6, 7, 9


def gcu_timeout(ports: list[str], margin: float = GCU_MARGIN) -> float:
    """How long one config apply-patch (or its dry run) may take for a patch naming ``ports``: ``margin`` times the
    measured sorter CPU (optional_args ``gcu_margin``: a switch CPU slower or busier than assumed)."""
    count = len(ports)
    return min(GCU_CEILING_S, GCU_BASE_S + margin * (GCU_SORT_S[0] * count ** 2 + GCU_SORT_S[1] * count))


class FabricgenSonicDriver(RecordingDriver):
    default_username = "admin"

    def __init__(self, hostname: str, username: str, password: str | None = None, timeout: int = 60,
                 optional_args: dict[str, Any] | None = None) -> None:
        super().__init__(hostname, username, password, timeout, optional_args)
        # sonic-utilities' `config` refuses anyone but root ("Root privileges are required for this operation",
        # config/main.py): a login other than root (SONiC's is `admin`) runs it through sudo, as SONiC's docs do.
        self.sudo = bool(self.options.get("sudo", self.username != "root"))
        # How many times the sorter CPU measured here a dry run or apply may take on this switch (gcu_timeout).
        self.gcu_margin = float(self.options.get("gcu_margin", GCU_MARGIN))
        self.given_state_dir = self.options.get("state_dir")
        self.state_dir = str(self.given_state_dir or STATE_DIR)
        self.candidate: dict[str, dict[str, dict[str, Any]]] | None = None
        self.disruption: list[str] = []  # ports the last compare/commit bounces (GCU's sorter: admin down and up)
        # The last dry run the switch passed: the running config it ran against, the patch, its output.
        self._last_dry_run: tuple[dict[str, Any], str, str] | None = None

    def opened(self) -> None:
        if self.sudo and not self.given_state_dir:  # the login's own files; only `config` needs root
            self.state_dir = self.ssh.check('printf %s "$HOME"').stdout.strip() + "/.fabricgen"

    def _limit(self, ports: list[str]) -> float:
        """The time one dry run or apply of a patch naming ``ports`` may take on this switch."""
        return gcu_timeout(ports, self.gcu_margin)

    @property
    def _root(self) -> str:
        return "sudo -n " if self.sudo else ""

    def config(self, arguments: str) -> str:
        """A sonic-utilities ``config`` command line, through ``sudo -n`` unless the login is root."""
        return _config_command(arguments, self.sudo)

    # --- candidate and diff -------------------------------------------------------------------------------
    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        text = self.candidate_text(filename, config)
        try:
            self.candidate = gcu.parse_candidate(text)
        except gcu.CandidateError as exc:
            raise ReplaceConfigException(f"{self.hostname}: {exc}") from None

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        raise NotImplementedError("fabricgen replaces its owned scope: use load_replace_candidate")

    def discard_config(self) -> None:
        self.candidate = None

    def compare_config(self) -> str:
        """The patch the switch would take (plus its pfcwd commands, what its release keeps and the ports it bounces),
        once GCU's own dry run accepted it; "" when nothing differs."""
        candidate = self._loaded()
        running = self.running_config()
        planned = self._checked_plan(running, candidate)
        if planned.changes:
            planned = self._switch_checked(running, planned)
        return planned.lines()

    def intent_check(self, config: str) -> str:
        """Read-only: what of the switch's owned state differs from ``config`` (the plan that would make it so, one
        line per operation), "" when the switch holds it."""
        try:
            candidate = gcu.parse_candidate(config)
        except gcu.CandidateError as exc:
            raise ReplaceConfigException(f"{self.hostname}: {exc}") from None
        return gcu.plan(self.running_config(), candidate).lines()

    def running_config(self) -> dict[str, Any]:
        done = self.ssh.run("show runningconfiguration all")
        if done.status != 0:
            raise CommitError(f"{self.hostname}: show runningconfiguration all exited {done.status}: {done.output}")
        try:
            return gcu.running_config(done.stdout)
        except ValueError as exc:
            raise CommitError(f"{self.hostname}: {exc}") from None

    def _checked_plan(self, running: dict[str, Any], candidate: dict[str, dict[str, Any]]) -> gcu.Plan:
        """The plan for the switch's release, or CommitError naming everything GCU would refuse (nothing is sent
        then). ``disruption`` is set to the ports the plan bounces (the push asks for --allow-disruptive)."""
        planned = gcu.plan(running, candidate)
        problems = gcu.refusals(running, candidate, planned.changes)
        problems += gcu.unsupported_port_values(planned.changes,
                                                self._state_db(gcu.port_capabilities(planned.changes)))
        if problems:
            raise CommitError(f"{self.hostname}: nothing was changed: the switch's GCU would refuse this patch, so "
                              "it was not sent: " + "; ".join(problems))
        self.disruption = list(planned.bounced)
        return planned

    def _state_db(self, queries: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """STATE_DB ``PORT_TABLE|<port>`` fields, one ``sonic-db-cli ... HGET`` each (sonic-swss-common); {} when
        the switch cannot answer (then GCU's own dry run is the check)."""
        if not queries:
            return {}
        command = "; ".join(f"printf '%s\\n' \"$(sonic-db-cli STATE_DB HGET {shlex.quote('PORT_TABLE|' + port)} "
                            f"{field})\"" for port, field in queries)
        done = self.ssh.run(f"command -v sonic-db-cli >/dev/null || exit 127; {command}")
        answers = done.stdout.splitlines()
        if done.status != 0 or len(answers) != len(queries):
            return {}
        return {query: answer.strip() for query, answer in zip(queries, answers, strict=True)}

    def _switch_checked(self, running: dict[str, Any], planned: gcu.Plan) -> gcu.Plan:
        """``planned`` after the switch's own dry run of its patch (``_dry_run``, ``_sorted``). The dry run of the
        same patch against the same running config on this connection is not run twice: GCU's answer depends on
        those two (and the switch's software), and its sort costs minutes a port (docs/testing.md), so a commit
        right after compare_config of the same candidate (what push does) takes the comparison's answer."""
        patch = _patch_text(planned.changes)
        if self._last_dry_run is None or self._last_dry_run[:2] != (running, patch):
            self._last_dry_run = (running, patch, self._dry_run(planned.changes, planned.touched))
        return self._sorted(planned, self._last_dry_run[2])

    def _sorted(self, planned: gcu.Plan, dry_run: str) -> gcu.Plan:
        """The plan with the ports the switch's own sorter took admin-down in its dry run (its ``** DryRun: Would
        apply`` lines), when it printed them: the sorter, not fabricgen's rule, has the last word."""
        bounced = gcu.bounced_in_dry_run(dry_run)
        if bounced is None or bounced == planned.bounced:
            return planned
        self.disruption = bounced
        return dataclasses.replace(planned, bounced=bounced)

    def _dry_run(self, changes: list[gcu.Change], ports: list[str]) -> str:
        """``config apply-patch --dry-run``: the switch's YANG validation and field rules, nothing applied; its
        output (the sorted changes it would apply)."""
        directory = self.ssh.check("mktemp -d /tmp/fabricgen-patch.XXXXXXXX").stdout.strip()
        patch = f"{directory}/patch.json"
        try:
            self.ssh.put(patch, _patch_text(changes), 0o600)
            done = self.ssh.run(f"{self.config('apply-patch --dry-run ' + shlex.quote(patch))}; rc=$?; "
                                f"rm -rf {shlex.quote(directory)}; exit $rc", timeout=self._limit(ports))
        except SshError:
            self.ssh.run(f"rm -rf {shlex.quote(directory)}")
            raise
        if done.status != 0:
            raise CommitError(f"{self.hostname}: nothing was changed: config apply-patch --dry-run refused the "
                              f"patch: {_gcu_error(done.output)}")
        return str(done.stdout)

    # --- commit, confirm, rollback ------------------------------------------------------------------------
    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        candidate = self._loaded()
        waiting = self.pending_commit_id()  # checked again, with the mark, under the switch's lock (_mark_and_arm)
        if waiting:
            raise CommitError(f"{self.hostname}: nothing was changed: commit {waiting} is waiting for its confirm; "
                              "confirm or roll back first")
        commit_id = _commit_id(message)
        before = self.running_config()
        planned = self._checked_plan(before, candidate)
        self.last_snapshot = planned.lines()  # = intent_check(candidate) of the switch as found
        if not planned.changes and not planned.watchdog:
            return
        if planned.changes:
            planned = self._switch_checked(before, planned)
        try:
            directory = self._stage(commit_id, planned.changes, before)
            marked = self.ssh.run(self._mark_and_arm(commit_id, directory, int(revert_in))) if revert_in else None
        except SshError as exc:
            self._unmark(commit_id)
            raise CommitError(f"{self.hostname}: nothing was changed: the checkpoint and undo could not be staged "
                              f"on the switch first ({exc})") from None
        if marked is not None and marked.status != 0:
            self._unmark(commit_id)
            raise CommitError(f"{self.hostname}: nothing was changed: {marked.output or 'arming the timer failed'}")
        # Under the lock the revert script takes: a timer that fires while GCU is still applying waits, then rolls
        # back what was applied, instead of rolling back first and seeing the patch land after it. With a timer,
        # only while the commit is still the pending one: an apply that reaches the switch after its own timer
        # fired (a slow or cut management link) is refused instead of leaving the patch with no timer. The pfcwd
        # commands come after the patch: pfcwd skips a port that has no pfc_enable yet.
        state = shlex.quote(self.state_dir)
        steps = [self.config(f"apply-patch {shlex.quote(directory)}/patch.json")] if planned.changes else []
        steps += [f"{self._root}{command}" for command in planned.watchdog]
        still_ours = (f"{{ [ \"$(cat {state}/pending 2>/dev/null)\" = {commit_id} ] || {{ echo 'the commit is no "
                      f"longer pending: its revert timer fired' >&2; exit {_EXPIRED}; }}; }}" if revert_in else "true")
        applied = self.ssh.run(f"{_switch_lock(self.state_dir, 120)} && {still_ours} && " + " && ".join(steps)
                               + f" && echo {commit_id} > {state}/last", timeout=self._limit(planned.touched))
        if applied.status == _EXPIRED and "no longer pending" in applied.output:
            raise CommitError(f"{self.hostname}: nothing was changed by this commit: its revert timer fired before "
                              "the apply reached the switch, so the apply was refused (the switch holds what it "
                              "held)")
        if applied.status != 0:
            raise CommitError(self._after_refusal(commit_id, before, _gcu_error(applied.output)))
        if not revert_in:  # committed for good: NAPALM's commit without revert_in is final
            self._save(commit_id)

    def _stage(self, commit_id: str, changes: list[gcu.Change], before: dict[str, Any]) -> str:
        """The checkpoint, the patch, the config as found and the revert script, on the switch before anything
        changes."""
        directory = f"{self.state_dir}/commits/{commit_id}"
        quoted = shlex.quote(directory)
        # A resumed run reuses its commit id: the markers of the earlier attempt go first.
        self.ssh.check(f"umask 077 && mkdir -p {quoted} && rm -f {quoted}/reverted {quoted}/confirmed "
                       f"{quoted}/fate {quoted}/timer {quoted}/timer.pid")
        self.ssh.check(self.config(f"checkpoint {_checkpoint(commit_id)}"))
        self.ssh.put(f"{directory}/patch.json", _patch_text(changes), 0o600)
        self.ssh.put(f"{directory}/before.json", json.dumps(before, sort_keys=True) + "\n", 0o600)
        self.ssh.put(f"{directory}/found.txt", self.last_snapshot or "", 0o600)  # what a revert reads back as
        self.ssh.put(f"{directory}/revert.sh", _revert_script(self.state_dir, commit_id, self.sudo), 0o700)
        self.ssh.check(f"sync -f {quoted}/revert.sh")
        return directory

    def _mark_and_arm(self, commit_id: str, directory: str, seconds: int) -> str:
        """One shell under the switch's lock: the pending mark checked and set as one step (two runs never both
        mark a switch), synced, then the revert timer armed on the switch."""
        state = shlex.quote(self.state_dir)
        quoted = shlex.quote(directory)
        revert = f"/bin/bash {quoted}/revert.sh timer"
        return (f"{_switch_lock(self.state_dir, 120)} && "
                f"{{ p=$(cat {state}/pending 2>/dev/null); [ -z \"$p\" ] || {{ echo \"commit $p of another run is "
                f"waiting for its confirm; confirm or roll back first\" >&2; exit {_OTHER_PENDING}; }}; }} && "
                f"echo {commit_id} > {state}/pending && sync -f {state}/pending && "
                f"{{ if [ -d /run/systemd/system ] && command -v systemd-run >/dev/null; then "
                f"{self._root}systemd-run --quiet --unit=fabricgen-revert-{commit_id} --on-active={seconds}s "
                f"--timer-property=AccuracySec=1s {revert} && echo systemd > {quoted}/timer; "
                f"else setsid -f /bin/bash -c 'echo $$ > {quoted}/timer.pid; sleep {seconds}; exec {revert}' "
                f"</dev/null >{quoted}/timer.log 2>&1 9>&- && echo setsid > {quoted}/timer; fi; }}")

    def _unmark(self, commit_id: str) -> None:
        """Clear the pending mark of a commit that never applied, under the switch's lock and only if it is still
        this commit's (never another run's); best effort: its timer reverts it otherwise."""
        state = shlex.quote(self.state_dir)
        with contextlib.suppress(SshError, ConnectionException):
            self.ssh.run(f"{_switch_lock(self.state_dir, 60)} && "
                         f"[ \"$(cat {state}/pending 2>/dev/null)\" = {commit_id} ] && rm -f {state}/pending && "
                         f"sync -f {state}")

    def _after_refusal(self, commit_id: str, before: dict[str, Any], error: str) -> str:
        """The switch refused the patch: say whether it is as it was (GCU validates before it applies; then the
        timer and the pending mark go), else run the commit's revert now (the checkpoint rolled back under the
        switch's lock, its fate recorded) and say what came of it."""
        try:
            unchanged = self.running_config() == before
        except CommitError as exc:
            return (f"{self.hostname}: config apply-patch failed ({error}) and the switch cannot be read back: {exc}; "
                    "its on-device timer reverts it")
        if unchanged:
            self._disarm(commit_id)
            return f"{self.hostname}: nothing was changed: config apply-patch refused the patch: {error}"
        directory = shlex.quote(f"{self.state_dir}/commits/{commit_id}")
        undone = self.ssh.run(f"bash {directory}/revert.sh now", timeout=_APPLY_TIMEOUT_S)
        restored = undone.status == 0 and self.running_config() == before
        return (f"{self.hostname}: config apply-patch failed part-way ({error}); "
                + ("the checkpoint was rolled back and the switch reads as before" if restored
                   else f"ROLLING BACK FAILED, the switch is part-way: {_gcu_error(undone.output)}"))

    def _disarm(self, commit_id: str) -> None:
        """Cancel this commit's timer and pending mark, under the switch's lock and only while it is still this
        commit's (the commit did not happen)."""
        state = shlex.quote(self.state_dir)
        directory = f"{state}/commits/{commit_id}"
        self.ssh.run(
            f"{_switch_lock(self.state_dir, 60)} && "
            f"[ \"$(cat {state}/pending 2>/dev/null)\" = {commit_id} ] || exit 0; "
            f"if [ \"$(cat {directory}/timer 2>/dev/null)\" = systemd ]; then "
            f"{self._root}systemctl stop fabricgen-revert-{commit_id}.timer; "
            f"elif [ -s {directory}/timer.pid ]; then kill -- -$(cat {directory}/timer.pid) 2>/dev/null; fi; "
            f"rm -f {state}/pending && sync -f {state}")

    def confirm_commit(self) -> None:
        self.confirm_own(None)

    def confirm_own(self, commit_id: str | None) -> None:
        """Confirm ``commit_id`` (None: whichever is pending), never another run's, under the lock the timer's
        revert takes (a confirm and a firing timer cannot both win): ``config save -y`` first, marked saved (a
        revert from here on saves again), and only then the timer stopped and the commit recorded confirmed. A
        save that fails leaves the commit pending with its timer armed, and the confirm fails saying so."""
        state = shlex.quote(self.state_dir)
        mine = f" && [ \"$id\" = {_commit_id(commit_id)} ]" if commit_id else ""
        nothing = "no commit is pending: it was reverted by its timer or never made"
        done = self.ssh.run(
            f"{_switch_lock(self.state_dir, 60)}; id=$(cat {state}/pending 2>/dev/null); "
            f"[ -n \"$id\" ]{mine} || {{ if [ -n \"$id\" ]; then echo \"commit $id of another run is pending, "
            f"not this one\"; else echo '{nothing}'; fi; exit 4; }}; d={state}/commits/$id; "
            f"out=$({self.config('save -y')} 2>&1) || {{ printf 'config save failed (%s); the commit is still "
            f"pending and its timer reverts it unless a confirm succeeds\\n' \"$(printf %s \"$out\" | tail -n 3 | "
            f"tr '\\n' ' ')\"; exit {_NOT_SAVED}; }}; "
            f"echo saved > $d/confirmed && sync -f $d/confirmed; "
            f"if [ \"$(cat $d/timer 2>/dev/null)\" = systemd ]; then "
            f"{self._root}systemctl stop fabricgen-revert-$id.timer; "
            f"elif [ -s $d/timer.pid ]; then kill -- -$(cat $d/timer.pid) 2>/dev/null; fi; "
            f"rm -f {state}/pending; echo confirmed > $d/fate; sync -f $d/fate {state}",
            timeout=float(max(self.timeout, 300)))
        if done.status != 0:
            raise CommitError(f"{self.hostname}: confirm failed: {done.output.strip() or f'exit {done.status}'}")

    def _save(self, commit_id: str) -> None:
        """``config save -y``: the running config becomes the startup config, so a reboot keeps it."""
        saved = self.ssh.run(self.config("save -y"))
        if saved.status != 0:
            raise CommitError(f"{self.hostname}: committed, but config save failed: {saved.output}")
        if commit_id:
            directory = shlex.quote(f"{self.state_dir}/commits/{commit_id}")
            self.ssh.check(f"echo saved > {directory}/confirmed && echo confirmed > {directory}/fate && "
                           f"sync -f {directory}/fate")

    def commit_fate(self, commit_id: str) -> str:
        """What became of ``commit_id``, as the switch itself recorded it: pending (its timer armed), confirmed,
        reverted-by-timer, reverted, restore-failed; applied (committed with no timer, before fates were kept);
        staged (its checkpoint and undo were written but it never applied); absent (it never reached the switch)."""
        done = self.ssh.run(self.fate_probe(commit_id))  # the probe GPU hosts share (RecordingDriver)
        fate = done.stdout.strip()
        if done.status != 0 or fate not in FATES:
            raise CommitError(f"{self.hostname}: cannot read what became of commit {commit_id}: "
                              f"{escape(done.output[:200]) or 'no answer'}")
        return fate

    def commit_snapshot(self, commit_id: str) -> str | None:
        """What intent_check printed before ``commit_id`` changed anything (what its revert must read back as),
        from the switch's own record; None when the commit left none."""
        done = self.ssh.run(f"cat {shlex.quote(self.state_dir)}/commits/{_commit_id(commit_id)}/found.txt")
        return done.stdout if done.status == 0 else None

    def revert(self, commit_id: str) -> None:
        """The switch's owned scope as before the commit of ``commit_id``. A commit still pending: its checkpoint
        rolled back (``config rollback``, as its timer would). A confirmed one: only what its patch touched is put
        back as it was (a patch of those paths, through GCU, then ``config save -y``): the whole checkpoint would
        also undo whatever else changed on the switch since, which is not fabricgen's."""
        _commit_id(commit_id)
        directory = f"{self.state_dir}/commits/{commit_id}"
        quoted = shlex.quote(directory)
        if self.ssh.run(f"test -f {quoted}/revert.sh").status != 0:
            raise CommitError(f"{self.hostname}: commit {commit_id} is not recorded on the switch (no revert script)")
        fate = self.commit_fate(commit_id)
        if fate in ("reverted-by-timer", "reverted"):  # its checkpoint again would undo whatever came since
            return
        if fate == "confirmed":
            self._restore_touched(commit_id, directory)
            return
        done = self.ssh.run(f"bash {quoted}/revert.sh now", timeout=_APPLY_TIMEOUT_S)
        if done.status != 0:
            raise CommitError(f"{self.hostname}: reverting {commit_id} failed (exit {done.status}): "
                              f"{_gcu_error(done.output)}")

    def rollback_disruption(self, commit_id: str) -> list[str]:
        """The ports ``revert(commit_id)`` would take admin-down and up again, read before it runs: the whole
        checkpoint's for a pending commit (``config rollback``), the touched paths' for a confirmed one."""
        _commit_id(commit_id)
        quoted = shlex.quote(f"{self.state_dir}/commits/{commit_id}")
        before, forward = self._commit_record(commit_id, quoted)
        whole = self.pending_commit_id() == commit_id or self.ssh.run(f"test -e {quoted}/confirmed").status != 0
        return gcu.bounced_by_restore(self.running_config(), before, None if whole else forward)

    def _commit_record(self, commit_id: str, quoted: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """What ``commit_id`` staged on the switch (``quoted``: its folder, shell-quoted): the config as it found
        it (``before.json``) and the patch it applied (``patch.json``)."""
        try:
            before = json.loads(self.ssh.check(f"cat {quoted}/before.json").stdout)
            forward = json.loads(self.ssh.check(f"cat {quoted}/patch.json").stdout)
        except (SshError, ValueError) as exc:
            raise CommitError(f"{self.hostname}: commit {commit_id}: its record on the switch is unreadable "
                              f"({exc})") from None
        return before, forward

    def _restore_touched(self, commit_id: str, directory: str) -> None:
        quoted = shlex.quote(directory)
        before, forward = self._commit_record(commit_id, quoted)
        running = self.running_config()
        changes = gcu.restoring_patch(running, before, forward)
        if not before.get("PFC_WD") and running.get("PFC_WD"):
            # The commit started the watchdog with pfcwd (no PFC_WD table before): GCU removes the whole table, as
            # its own rollback to the checkpoint does (the field rules refuse only /PFC_WD/GLOBAL on its own).
            changes.append(gcu.Change("remove", ("PFC_WD",), old=running["PFC_WD"]))
        problems = gcu.within_field_rules(changes, running)
        if problems:
            raise CommitError(f"{self.hostname}: nothing was changed: reverting {commit_id} needs what GCU "
                              "refuses: " + "; ".join(problems))
        if changes:
            touched = gcu.touched_ports(running, changes)
            self._dry_run(changes, touched)
            self.ssh.put(f"{directory}/restore.json", _patch_text(changes), 0o600)
            done = self.ssh.run(f"{_switch_lock(self.state_dir, 120)} && "
                                + self.config(f"apply-patch {quoted}/restore.json"), timeout=self._limit(touched))
            if done.status != 0:
                self.ssh.run(f"echo restore-failed > {quoted}/fate && sync -f {quoted}/fate")
                raise CommitError(f"{self.hostname}: reverting {commit_id} failed: {_gcu_error(done.output)}")
            self._save("")
        self.ssh.check(f'echo "0 now $(date -u +%FT%TZ)" > {quoted}/reverted && echo reverted > {quoted}/fate && '
                       f"sync -f {quoted}/fate")

    # --- getters for health checks ------------------------------------------------------------------------
    def get_facts(self) -> dict[str, Any]:
        metadata = self.running_config().get("DEVICE_METADATA", {}).get("localhost", {})
        interfaces = self.get_interfaces()
        uptime = self.ssh.run("cat /proc/uptime").stdout.split()
        return {"hostname": metadata.get("hostname", ""), "fqdn": metadata.get("hostname", ""), "vendor": "SONiC",
                "model": metadata.get("hwsku", ""), "serial_number": "", "os_version": metadata.get("platform", ""),
                "uptime": float(uptime[0]) if uptime else -1.0, "interface_list": sorted(interfaces, key=gcu.natural)}

    def get_interfaces(self) -> dict[str, dict[str, Any]]:
        """``show interfaces status`` (sonic-utilities ``scripts/intfutil``): one row per port, Oper and Admin
        columns ``up``/``down``."""
        done = self.ssh.check("show interfaces status")
        return _interfaces_status(done.stdout)

    def _loaded(self) -> dict[str, dict[str, dict[str, Any]]]:
        if self.candidate is None:
            raise ReplaceConfigException(f"{self.hostname}: no candidate loaded")
        return self.candidate


def _checkpoint(commit_id: str) -> str:
    return shlex.quote(CHECKPOINT_PREFIX + commit_id)


def _patch_text(changes: list[gcu.Change]) -> str:
    return json.dumps(gcu.as_patch(changes), indent=2, ensure_ascii=False) + "\n"


def _gcu_error(output: str) -> str:
    """GCU's reason: click's ``Error: ...`` line when there is one (the usage lines before it say nothing)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error:")]
    reason = errors[-1] if errors else " | ".join(lines[-3:]) or "no output"
    # "Failed validating patch: <the whole patch>" can run to kilobytes: the start says what failed.
    return reason if len(reason) <= _ERROR_CHARS else reason[:_ERROR_CHARS] + " …"


def _interfaces_status(text: str) -> dict[str, dict[str, Any]]:
    lines = text.splitlines()
    header = next((i for i, line in enumerate(lines) if line.split()[:1] == ["Interface"]), None)
    if header is None:
        return {}
    columns = re.split(r"\s{2,}", lines[header].strip())  # tabulate's columns: two spaces or more apart
    oper, admin = columns.index("Oper"), columns.index("Admin")
    mtu = columns.index("MTU") if "MTU" in columns else None
    interfaces: dict[str, dict[str, Any]] = {}
    for line in lines[header + 1:]:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) != len(columns) or not cells[0].startswith("Ethernet"):
            continue  # the dashes under the header, or a row that does not parse
        interfaces[cells[0]] = {
            "is_up": cells[oper] == "up", "is_enabled": cells[admin] == "up", "description": "",
            "last_flapped": -1.0, "speed": -1.0, "mtu": int(cells[mtu]) if mtu is not None and
            cells[mtu].isdigit() else -1, "mac_address": ""}
    return interfaces


def _config_command(arguments: str, sudo: bool) -> str:
    return f"{'sudo -n ' if sudo else ''}config {arguments}"


def _switch_lock(state_dir: str, wait: int) -> str:
    """Take the switch's fabricgen lock on fd 9 for the rest of the shell (the lock the revert script takes too),
    or end the shell with exit 5."""
    state = shlex.quote(state_dir)
    return (f"{{ exec 9>>{state}/lock && flock -w {wait} 9; }} || "
            f"{{ echo 'another fabricgen step holds the switch lock' >&2; exit {_LOCKED}; }}")


def _revert_script(state_dir: str, commit_id: str, sudo: bool) -> str:
    """The switch-side undo of one commit. `timer` mode acts only while this commit is still the pending one;
    `now` (a rollback) also saves when the commit had been saved, so a reboot does not bring it back."""
    state = shlex.quote(state_dir)
    directory = f"{state}/commits/{commit_id}"
    lines = [
        "#!/bin/bash",
        f"# fabricgen: undo commit {commit_id}: GCU rolls the running config back to checkpoint "
        f"{CHECKPOINT_PREFIX}{commit_id}.",
        "set -u",
        f"exec 9>>{state}/lock",
        # Long enough for a commit's config apply-patch (GCU takes about a second per change) to finish first.
        f"flock -w {int(_APPLY_TIMEOUT_S)} 9 || {{ echo 'error: another fabricgen step holds the lock' >&2; exit 1; }}",
        f"pending=$(cat {state}/pending 2>/dev/null || true)",
        f'if [[ ${{1:-}} == timer && $pending != {commit_id} ]]; then exit 0; fi  # confirmed meanwhile',
        "status=0",
        f"{_config_command('rollback ' + _checkpoint(commit_id), sudo)} || status=1",
        f"if [[ $status == 0 && -e {directory}/confirmed ]]; then {_config_command('save -y', sudo)} || status=1; fi",
        f"if [[ $pending == {commit_id} ]]; then rm -f {state}/pending; fi",
        f'echo "$status ${{1:-now}} $(date -u +%FT%TZ)" > {directory}/reverted',
        'case "$status ${1:-now}" in "0 timer") fate=reverted-by-timer;; 0\\ *) fate=reverted;; '
        "*) fate=restore-failed;; esac",
        f'echo "$fate" > {directory}/fate',
        f"sync -f {directory}/reverted {directory}/fate",
        'exit "$status"',
    ]
    return "\n".join(lines) + "\n"
