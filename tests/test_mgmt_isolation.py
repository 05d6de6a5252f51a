"""A BMC or management port cabled to a data leaf is refused as what it is: the management plane on the fabric.

Before, the load error called such a port an RDMA port and asked for ``rdma_device``; following that hint rendered
a RoCE script for the BMC and made the leaf's port lossless at 1G, with lint clean. The cable is what is wrong, so
the error says so and never asks for ``rdma_device``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from test_lint_cases import merge

from fabricgen.cli import main

from conftest import ROOT

# node1's BMC moved from the OOB switch to a spare 400G port of leaf1.
BMC_ON_LEAF: dict[str, Any] = {
    "oob1": {"data": {"ports": {"Ethernet1": {"-": ["peer", "cable_m", "media"]}}}},
    "leaf1": {"data": {"ports": {"Ethernet32": {"speed": "400G", "fec": "rs", "lanes": "32,33,34,35,36,37,38,39",
                                                "peer": "node1:bmc"}}}},
}


def lint_with(tmp_path: Path, edit: dict[str, Any]) -> tuple[int, str]:
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    for name in ("groups.yaml", "defaults.yaml"):
        (inventory / name).write_text((ROOT / "inventory" / name).read_text())
    hosts = yaml.safe_load((ROOT / "inventory" / "hosts.yaml").read_text())
    (inventory / "hosts.yaml").write_text(yaml.safe_dump(merge(hosts, edit)))
    result = CliRunner().invoke(main, ["lint", str(ROOT / "intent" / "fabric.yaml"), "-i", str(inventory)])
    return result.exit_code, result.output


def test_a_bmc_cabled_to_a_data_leaf_is_a_management_isolation_error(tmp_path: Path) -> None:
    code, output = lint_with(tmp_path, BMC_ON_LEAF)
    assert code == 2, output
    assert "FG-MGT-004" in output and "node1:bmc looks like a BMC or management port (its name 'bmc')" in output
    assert "cabled to data switch port leaf1:Ethernet32" in output and "cable it to the OOB switch" in output
    assert "rdma_device" not in output and "Traceback" not in output


def test_following_the_old_hint_does_not_make_a_bmc_an_rdma_nic(tmp_path: Path) -> None:
    """A BMC given an rdma_device (what the old hint asked for) is still refused: it is still on the leaf."""
    edit = merge(BMC_ON_LEAF, {"node1": {"data": {"ports": {"bmc": {"rdma_device": "mlx5_9"}}}}})
    code, output = lint_with(tmp_path, edit)
    assert code == 2 and "FG-MGT-004" in output and "looks like a BMC or management port" in output, output


def test_a_1g_port_on_a_data_leaf_is_a_management_port_whatever_its_name(tmp_path: Path) -> None:
    edit = {"oob1": BMC_ON_LEAF["oob1"],
            "node1": {"data": {"ports": {"bmc": {"-": ["peer"]}, "eno9": {"speed": "1G", "peer": "leaf1:Ethernet32"}}}},
            "leaf1": {"data": {"ports": {"Ethernet32": {"speed": "1G", "lanes": "32", "peer": "node1:eno9"}}}}}
    code, output = lint_with(tmp_path, edit)
    assert code == 2 and "node1:eno9 looks like a BMC or management port (1000 Mb/s)" in output, output


def test_an_rdma_nic_without_rdma_device_names_both_possible_fixes(tmp_path: Path) -> None:
    code, output = lint_with(tmp_path, {"node1": {"data": {"ports": {"ens1f0np0": {"-": ["rdma_device"]}}}}})
    assert code == 2 and "node1:ens1f0np0 is cabled to data switch port leaf1:Ethernet0" in output, output
    assert "set rdma_device" in output and "if it is a BMC or management port: cable it to the OOB switch" in output
