"""SONiC renderer: owned tables only, SONiC's encoding rules, and every golden config_db.json accepted by
SONiC's own YANG models (the check `config reload` and GCU run on a real switch)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner

from fabricgen.cli import main
from fabricgen.models.device import Fabric
from fabricgen.platforms.sonic.capability import OWNED_TABLES
from fabricgen.platforms.sonic.render import BASELINE, _pg_keys, build_config_db

from conftest import EXAMPLES, ROOT

if TYPE_CHECKING:  # libyang may be absent: the sonic_yang fixture (tests/conftest.py) skips then
    from fabricgen.validate.sonic_yang import SonicYangValidator


def _strings_only(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _strings_only(v) for k, v in value.items())
    return isinstance(value, str)


def test_config_db_holds_only_owned_tables_and_only_strings(example_fabric: Fabric) -> None:
    config = build_config_db(example_fabric.devices["leaf1"])
    assert set(config) <= set(OWNED_TABLES)
    assert _strings_only(config)


def test_lossless_chain_agrees_in_all_three_places(example_fabric: Fabric) -> None:
    """PFC on prio 3, TC3 → PG3, and the PG's headroom (sonic.md takeaway 2): the SN4700 leaves run SONiC's
    dynamic buffer model, so buffermgrd sizes PG 3 from the cable and the traffic pattern fabricgen writes
    (the traditional model's BUFFER_PG/BUFFER_PROFILE: tests/test_sonic_headroom.py)."""
    config = build_config_db(example_fabric.devices["leaf1"])
    assert config["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "3"
    assert config["TC_TO_PRIORITY_GROUP_MAP"]["ROCE"]["3"] == "3"
    assert "BUFFER_PG" not in config and "BUFFER_PROFILE" not in config  # the SKU template's and buffermgrd's
    assert config["LOSSLESS_TRAFFIC_PATTERN"]["AZURE"] == {"mtu": "1024", "small_packet_percentage": "50"}
    assert config["CABLE_LENGTH"]["AZURE"]["Ethernet0"] == "2m"
    assert config["QUEUE"]["Ethernet0|3"] == {"scheduler": "scheduler.rdma", "wred_profile": "ecn_rdma"}
    assert config["WRED_PROFILE"]["ecn_rdma"]["ecn"] == "ecn_all"
    assert config["PFC_WD"]["Ethernet0"]["detection_time"] == "200"
    assert "eth0" not in config["PORT"] and config["MGMT_PORT"]["eth0"]["speed"] == "1000"
    assert config["MGMT_INTERFACE"] == {"eth0|192.0.2.11/24": {"gwaddr": "192.0.2.1"}}


def test_pg_keys_are_contiguous_ranges() -> None:
    assert _pg_keys([3]) == ["3"] and _pg_keys([3, 4]) == ["3-4"] and _pg_keys([2, 3, 4, 6]) == ["2-4", "6"]


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_golden_config_db_validates_against_sonic_yang(example: str, sonic_yang: SonicYangValidator) -> None:
    files = sorted((ROOT / "golden" / example).rglob("config_db.json"))
    assert files, "no SONiC device in this example?"
    for path in files:
        issues = sonic_yang.validate(json.loads(path.read_text()), BASELINE)
        assert issues == [], f"{path}: " + "; ".join(map(str, issues))


def test_yang_catches_a_broken_render(sonic_yang: SonicYangValidator, example_fabric: Fabric) -> None:
    config = build_config_db(example_fabric.devices["leaf1"])
    config["PORT"]["Ethernet0"]["mtu"] = "9300"
    config["QUEUE"]["Ethernet0|3"]["scheduler"] = "scheduler.nope"
    paths = {issue.path for issue in sonic_yang.validate(config, BASELINE)}
    assert "PORT/Ethernet0/mtu" in paths
    assert any(p.startswith("QUEUE/Ethernet0") for p in paths)


def test_validate_command(sonic_yang: SonicYangValidator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    good = CliRunner().invoke(main, ["validate", "--models", str(sonic_yang.models_dir), "golden/fabric"])
    assert good.exit_code == 0, good.output
    assert "2 of 2 config_db.json valid" in good.output
    broken = json.loads((ROOT / "golden/fabric/leaf1/config_db.json").read_text())
    broken["PFC_WD"]["Ethernet0"]["detection_time"] = "50"
    (tmp_path / "config_db.json").write_text(json.dumps(broken))
    bad = CliRunner().invoke(main, ["validate", "--models", str(sonic_yang.models_dir),
                                    str(tmp_path / "config_db.json")])
    assert bad.exit_code == 1 and "PFC_WD/Ethernet0/detection_time" in bad.output
