"""Evidence (``lint --configs`` only): every device has its config, every file is whole, every cable lands on a
port the config brings up, no setting is set two ways. Missing evidence is not a pass; ``--partial`` lints a subset
on purpose."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePath

from fabricgen.lint.context import LintContext
from fabricgen.lint.registry import Finding, Rule, rule
from fabricgen.lint.rules._util import device_source, port_source
from fabricgen.models.device import DeviceModel


@rule("FG-EVD-001", "device-config-missing", "error", "every inventory device has its config in --configs DIR")
def device_config_missing(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """A device with no config in DIR was checked against nothing: linting it "as the intent resolves it"
    would report a pass for a switch nobody looked at. The same holds for a device whose directory lacks the
    file its platform's config lives in (a host with nccl.env but no NIC script).

    Fix: put the device's config in DIR/<device>/ (pull it from the device, or render it), or pass --partial
    to lint only the devices whose configs are there, on purpose."""
    evidence = ctx.evidence
    if evidence is None:
        return
    for device, what in sorted(evidence.missing.items()):
        yield r.finding(device, what, f"put {device}'s config in {evidence.directory}/{device}/, or pass "
                        "--partial to lint only the devices that have configs", source=device_source(device))


@rule("FG-EVD-002", "config-file-incomplete", "error", "no config file is empty or cut short")
def config_file_incomplete(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """An empty file, or one cut in the middle (a copy interrupted, a disk that filled up), reads as a device
    with most of its configuration absent, or with nothing wrong: neither is what the device runs. A text
    config that ends without its final newline, and an EOS ``show running-config`` (its header
    ``! Command: show running-config``) that does not end with ``end``, were cut short. A JSON file cut short
    does not parse: that is a read error (exit 2), not a finding.

    Fix: pull the whole config from the device again."""
    evidence = ctx.evidence
    if evidence is None:
        return
    for gap in evidence.gaps:
        yield r.finding(gap.device, f"{PurePath(gap.path).name} {gap.problem}",
                        f"pull {gap.device}'s whole config again", where=(gap.path, gap.line))


@rule("FG-EVD-003", "cabled-port-absent-or-down", "error", "every port the inventory cables is up in the config")
def cabled_port_absent_or_down(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """The inventory says a cable is plugged into the port. A config that does not configure the port, or shuts
    it down, leaves that link dark: every per-link check passes on a link that carries nothing. Switch readers
    read a port their config does not list as down (SONiC, EOS, NX-OS and Cumulus list or bring up only the
    ports configured), so both cases are one finding; on a host, a cabled RDMA port the NIC script does not
    configure is left as the driver has it.

    Fix: configure the port and bring it up on the device (or correct the cabling in the inventory if the
    cable is really elsewhere)."""
    evidence = ctx.evidence
    if evidence is None:
        return
    for name, intended in sorted(evidence.intended.items()):
        found = ctx.fabric.devices.get(name)
        if found is None or ctx.read_as_resolved(name):
            continue  # read back as resolved: every cabled port the intent brings up is configured and up
        if intended.host is not None:
            yield from _unconfigured_nics(r, intended, found)
        else:
            yield from _ports_down(r, intended, found)


def _ports_down(r: Rule, intended: DeviceModel, found: DeviceModel) -> Iterator[Finding]:
    read = {port.name: port for port in found.ports}
    for port in intended.ports:
        if port.peer is None or not port.admin_up:
            continue
        got = read.get(port.name)
        if got is None or not got.admin_up:
            yield r.finding(intended.name, "the inventory cables this port, but the config does not configure it "
                            "or shuts it down", f"configure {port.name} on {intended.name} and bring it up",
                            port=port.name, peer=port.peer, source=port_source(intended.name, port.name))


def _unconfigured_nics(r: Rule, intended: DeviceModel, found: DeviceModel) -> Iterator[Finding]:
    assert intended.host is not None
    configured = {nic.interface for nic in found.host.nics} if found.host is not None else set()
    for nic in intended.host.nics:
        if nic.peer is not None and nic.interface not in configured:
            yield r.finding(intended.name, "the inventory cables this port, but the NIC script does not configure "
                            "its NIC",
                            f"configure {nic.interface} in {intended.name}'s NIC script (render it again)",
                            port=nic.interface, peer=nic.peer, source=port_source(intended.name, nic.interface))


@rule("FG-EVD-004", "config-sets-a-setting-two-ways", "error", "no config sets one setting two ways")
def config_sets_a_setting_two_ways(ctx: LintContext, r: Rule) -> Iterator[Finding]:
    """A host NIC script's ``setting`` line names a setting twice: the value the script checks the NIC for, and the
    command that sets it. A hand edit of one of the two (the PFC flags in the checked text, or the ``--pfc`` list)
    makes the NIC run either: ``--apply`` leaves a NIC that already reads as the checked value as it is (often the
    driver's default, e.g. no PFC at all), and sets the command's value on any other, then fails its own check.
    Lint reads the command; this finding says the check disagrees, so that a NIC left lossy at boot is not a pass.

    Fix: make the two agree (render the script again)."""
    evidence = ctx.evidence
    if evidence is None:
        return
    for conflict in evidence.conflicts:
        yield r.finding(conflict.device, f"{conflict.problem}: a NIC that already "
                        "reads as checked (the driver's default, often) keeps it, any other gets the command's",
                        f"make the check and the command agree on {conflict.device}: render its script again",
                        port=conflict.port, where=(conflict.path, conflict.line))
