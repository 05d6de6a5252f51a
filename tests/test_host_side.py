"""Host settings that break RoCE are refused where they are written: a ToS whose ECN bits say CE."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from fabricgen.cli import main

from conftest import ROOT


def test_a_ce_marked_tos_is_refused_at_load_with_the_reason(tmp_path: Path) -> None:
    intent = yaml.safe_load((ROOT / "intent" / "fabric.yaml").read_text())
    intent["rdma"]["tos_ecn_bits"] = 3
    path = tmp_path / "intent.yaml"
    path.write_text(yaml.safe_dump(intent))
    line = next(number for number, text in enumerate(path.read_text().splitlines(), 1) if "tos_ecn_bits" in text)
    result = CliRunner().invoke(main, ["lint", str(path), "-i", str(ROOT / "inventory")])
    assert result.exit_code == 2, result.output
    assert f"{path}:{line}:" in result.output and "rdma.tos_ecn_bits" in result.output, result.output
    assert "CE (Congestion Experienced" in result.output and "FG-CLS-005" in result.output
    assert "Traceback" not in result.output and "pydantic" not in result.output


def test_ect0_in_the_tos_loads(tmp_path: Path) -> None:
    intent = yaml.safe_load((ROOT / "intent" / "fabric.yaml").read_text())
    intent["rdma"]["tos_ecn_bits"] = 2
    path = tmp_path / "intent.yaml"
    path.write_text(yaml.safe_dump(intent))
    result = CliRunner().invoke(main, ["lint", str(path), "-i", str(ROOT / "inventory")])
    assert result.exit_code == 0, result.output
