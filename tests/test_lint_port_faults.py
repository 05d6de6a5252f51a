"""One fault on one port, on every switch platform and both host kinds, on both roads: lint names the cause.

The cases are tests/port_faults.yaml (its header says how a case is written). Each is linted with every rule;
the finding the case expects must be there, on that `device:port`, at that FILE:LINE — and it must be a rule
that says what breaks: FG-CFG-001 (the config differs from the intent) may be there too, as the safety net,
but is never the answer a case accepts.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_lint_cases import _relative, build_located, evidence_of, merge

from fabricgen.lint import lint
from fabricgen.models.device import Fabric

CASES = yaml.safe_load((Path(__file__).parent / "port_faults.yaml").read_text())["cases"]


def with_port_qos(fabric: Fabric, edits: dict[str, dict[str, Any]]) -> Fabric:
    """``fabric`` with the named ports given their own QoS: the switch's, edited (what a reader makes of a port
    whose config binds other maps, queues or watchdog)."""
    dumped = fabric.model_dump()
    for device, ports in edits.items():
        qos = dumped["devices"][device]["qos"]
        dumped["devices"][device] = merge(dumped["devices"][device], {
            "ports": {port: {"qos": merge(copy.deepcopy(qos), edit)} for port, edit in ports.items()}})
    return Fabric.model_validate(dumped)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_a_port_fault_is_named_by_its_rule_on_its_port(case: dict[str, Any], tmp_path: Path) -> None:
    fabric, configs, locate = build_located({"example": "mixed", **case}, tmp_path)
    if "port_qos" in case:
        fabric = with_port_qos(fabric, case["port_qos"])
    findings = lint(fabric, evidence=evidence_of(configs)).findings
    found = {f"{f.rule} {f.subject}": f for f in findings}
    assert all(not want.startswith("FG-CFG-001") for want in case["expect"]), "the safety net is not a diagnosis"
    missing = [want for want in case["expect"] if want not in found]
    assert not missing, f"{missing} not among {sorted(found)}"
    assert [_relative(locate(found[want]), tmp_path) for want in case["expect"]] == case["at"]
    for want in case["expect"]:  # the finding says what to do, on the device or in the intent
        assert found[want].fix and "None" not in found[want].message + found[want].fix
