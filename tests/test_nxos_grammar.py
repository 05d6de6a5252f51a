"""The NX-OS target checks grammar, not only values: every line fabricgen sends parses under the command table of
tests/targets/nxos_grammar.py (each form citing the Cisco document its syntax was checked against, or marked
unverified), and a misspelt keyword or a command in the wrong mode is refused by the lab's NX-OS target with
NX-OS's marker, the switch left as it was and the push saying that nothing was changed.

Which forms Cisco's text confirms is the table's business (``status``/``source``/``note`` of each form); here the
table is held to its own rules: every form cites something, every Cisco-confirmed form names a Cisco document, and
every mode it has forms for is opened by some form.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import napalm
import pytest
import test_deploy_nxos
from hypothesis import assume, given, settings
from napalm.base.exceptions import CommitError
from napalm.nxapi_plumbing import NXAPICommandError
from pydantic import ValidationError
from test_nxos import cfg, leaf4, mixed_inventory, nxos_intents, port

from fabricgen.api import render_device
from fabricgen.models.device import MgmtModel
from fabricgen.models.diagnostics import InputError
from fabricgen.models.intent import Intent, check_intent
from fabricgen.platforms.nxos.splice import splice
from fabricgen.resolve import resolve

from lab import ROOT, Lab
from targets import nxos as target
from targets import nxos_grammar as grammar
from test_lab import require_lab

STARTING: str = target.STARTING_CONFIG.read_text()
GOLDEN_NXOS = sorted((ROOT / "golden").rglob("nxos.cfg"))


def refusal(text: str) -> Any:
    with pytest.raises(grammar.GrammarError) as refused:
        grammar.check(text)
    return refused.value


# --- the table ------------------------------------------------------------------------------------------------


def test_every_form_cites_its_source_and_cisco_confirmed_ones_name_a_cisco_document() -> None:
    statuses = {grammar.VERIFIED, grammar.PARTLY, grammar.UNVERIFIED}
    for command in grammar.COMMANDS:
        assert command.status in statuses, command
        assert command.source.strip(), command
        if command.status != grammar.UNVERIFIED:
            assert "Cisco" in command.source and command.note, command  # which Cisco text, and what it showed
        if command.source == grammar.NO_CISCO_TEXT:
            assert command.status == grammar.UNVERIFIED and command.note, command  # where the form comes from
    assert len({(c.mode, c.syntax) for c in grammar.COMMANDS}) == len(grammar.COMMANDS)


def test_every_value_kind_exists_and_every_mode_is_reachable() -> None:
    for command in grammar.COMMANDS:
        kinds = [word[1:-1] for word in command.words if word.startswith("<")]
        assert all(kind in grammar.KINDS or kind == "text" for kind in kinds), command
        assert "<text>" not in command.words[:-1], command  # the rest of the line: last only
    entered = {c.enters for c in grammar.COMMANDS if c.enters} | {grammar.CONFIG}
    assert {c.mode for c in grammar.COMMANDS} <= entered  # a form in a mode nothing opens could never match


def test_the_table_reports_which_forms_cisco_text_confirms() -> None:
    rows = grammar.table()
    verified = {syntax for _, syntax, status, _, _ in rows if status == grammar.VERIFIED}
    assert "priority-flow-control mode auto|on|off" in verified
    assert "service-policy type qos input <name>" in verified
    unverified = {syntax for _, syntax, status, _, _ in rows if status == grammar.UNVERIFIED}
    assert "priority-flow-control watch-dog restore-multiplier <int>" in unverified


# --- what fabricgen renders parses ---------------------------------------------------------------------------


def test_every_golden_nxos_file_parses() -> None:
    assert GOLDEN_NXOS, "no golden nxos.cfg found"
    for path in GOLDEN_NXOS:
        grammar.check(path.read_text())


def test_the_candidate_fabricgen_pushes_parses_whole() -> None:
    """What configure replace receives: the lab's running config with nxos.cfg's owned sections spliced in."""
    grammar.check(STARTING)
    for path in GOLDEN_NXOS:
        grammar.check(splice(STARTING, path.read_text()))


def test_the_oob_role_with_ipv6_management_parses() -> None:
    device = leaf4()
    assert device.mgmt is not None
    access = port(device, "Ethernet1/1").model_copy(update={"role": "oob-access", "access_vlan": 100,
                                                            "pfc_priorities": [], "lossless": False,
                                                            "mode": "switched"})
    mgmt = MgmtModel(**{**device.mgmt.model_dump(), "address": "2001:db8::14/64", "gateway": "2001:db8::1"})
    text = cfg(device.model_copy(update={"role": "oob", "qos": None, "ports": [access], "mgmt": mgmt}))
    assert "switchport access vlan 100" in text and "ipv6 route ::/0" in text
    grammar.check(text)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(raw=nxos_intents())
def test_generated_intents_render_only_lines_the_table_takes(raw: dict[str, Any]) -> None:
    try:
        intent = Intent.model_validate(raw)
    except ValidationError:
        assume(False)
        raise
    assume(not check_intent(intent))
    try:
        fabric = resolve(intent, mixed_inventory())
    except InputError:
        assume(False)  # another platform of the mixed fabric refuses it
        raise
    grammar.check(render_device(fabric.devices["leaf4"])["nxos.cfg"])


# --- what the parser refuses, and how it says so -------------------------------------------------------------

GOLDEN = (ROOT / "golden" / "mixed" / "leaf4" / "nxos.cfg").read_text()
WRED = "random-detect minimum-threshold 5000 bytes maximum-threshold 40000 bytes drop-probability 10 weight 0 ecn"
# (what the broken file says, the line it replaces in the golden leaf4 file, the word the caret points at, message)
BROKEN = {
    "misspelt keyword": ("  priority-flow-contol mode on\n", "  priority-flow-control mode on\n",
                         "priority-flow-contol", grammar.INVALID),
    "misspelt ECN keyword": (f"    {WRED[:-3]}enc\n", f"    {WRED}\n", "enc", grammar.INVALID),
    "ECN in another vendor's spelling": ("    congestion-control random-detect ecn\n", f"    {WRED}\n",
                                         "congestion-control", grammar.INVALID),
    "pause in a queuing class": ("    pause pfc-cos 3\n", "    bandwidth remaining percent 50\n", "pause",
                                 grammar.INVALID),
    "port PFC under system qos": ("  priority-flow-control mode on\n",
                                  "  service-policy type queuing output FABRICGEN_QUEUING\n", "priority-flow-control",
                                  grammar.INVALID),
    "a line cut short": ("  service-policy type queuing\n", "  service-policy type queuing output FABRICGEN_QUEUING\n",
                         "", grammar.INCOMPLETE),
}


def broken(case: str) -> str:
    line, replaces, _, _ = BROKEN[case]
    assert replaces in GOLDEN
    return GOLDEN.replace(replaces, line, 1)


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_misspelt_or_misplaced_command_is_refused_at_its_word(case: str) -> None:
    line, _, word, message = BROKEN[case]
    text = broken(case)
    error = refusal(text)
    assert error.message == message
    assert error.number == text.splitlines().index(line.rstrip("\n")) + 1
    caret = line.strip().index(word) if word else len(line.strip())
    assert error.column == caret
    assert str(error).splitlines()[-2:] == [" " * caret + "^", message]
    # what the grammar adds: the target's value checks alone let every one of these lines through
    assert target.refusals([line.strip()], target.parse(text)) == []


def test_a_line_deeper_than_a_mode_is_read_in_that_mode() -> None:
    """Indentation is structure: `mtu` indented under a queuing class's `bandwidth` line is still in the class."""
    bandwidth = "    bandwidth remaining percent 50\n"
    text = GOLDEN.replace(bandwidth, bandwidth + "      mtu 9216\n", 1)
    assert refusal(text).line == "mtu 9216"


# --- the target refuses, the switch is left as it was ----------------------------------------------------------


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    require_lab()
    with Lab.up(1, prefix=f"ng{os.getpid()}", kinds=["nxos"]) as built:
        yield built


switch = test_deploy_nxos.switch  # the same fixture: the target as found, its NX-API answering


def on_switch(lab: Lab, host: str) -> dict[str, Any]:
    """What the switch holds, read from the target's own state files (never through the driver under test)."""
    state = lab.state_dir(host)
    return {"running": (state / "running-config").read_text(), "startup": (state / "startup-config").read_text(),
            "bootflash": sorted(p.name for p in (state / "bootflash").iterdir()),
            "checkpoints": sorted(p.name for p in (state / "checkpoints").iterdir()),
            "pending": (state / "pending.json").exists()}


@pytest.mark.parametrize("case", ["misspelt keyword", "misspelt ECN keyword", "pause in a queuing class"])
def test_nxos_target_refuses_a_grammar_error_and_nothing_changes(lab: Lab, switch: str, case: str) -> None:
    before = on_switch(lab, switch)
    line, _, _, message = BROKEN[case]
    options = target.napalm_optional_args(lab.state_dir(switch), lab.key_file, lab.known_hosts)
    driver = napalm.get_network_driver("fabricgen_nxos")(lab.address(switch), target.LAB_USERNAME,
                                                         target.LAB_PASSWORD, optional_args=options)
    driver.open()
    try:
        driver.load_replace_candidate(config=broken(case))
        with pytest.raises(CommitError, match="nothing was changed") as refused:
            driver.commit_config(message="run-typo", revert_in=30)
        assert not driver.has_pending_commit()
    finally:
        driver.close()
    said = str(refused.value)
    assert line.strip() in said and message in said and "Pre-check for User config FAILED" in said
    assert on_switch(lab, switch) == before
    status = (lab.state_dir(switch) / "config-replace-status.json").read_text()
    assert '"Failed"' in status


def test_nxos_target_rollback_refuses_a_file_with_a_grammar_error(lab: Lab, switch: str) -> None:
    before = on_switch(lab, switch)
    bad = STARTING.replace("  no switchport\n  mtu 9216\n", "  no switchport\n  mtu 9216\n  no swichport\n", 1)
    name = "bad-rollback.cfg"
    (lab.state_dir(switch) / "bootflash" / name).write_text(bad)
    options = target.napalm_optional_args(lab.state_dir(switch), lab.key_file, lab.known_hosts)
    driver = napalm.get_network_driver("fabricgen_nxos")(lab.address(switch), target.LAB_USERNAME,
                                                         target.LAB_PASSWORD, optional_args=options)
    driver.open()
    try:
        with pytest.raises(NXAPICommandError, match=r"Invalid command at '\^' marker") as refused:
            driver.cli([f"rollback running-config file bootflash:{name}"])
    finally:
        driver.close()
    assert "no swichport" in str(refused.value)
    (lab.state_dir(switch) / "bootflash" / name).unlink()
    assert on_switch(lab, switch) == before

