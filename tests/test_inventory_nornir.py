"""The inventory is Nornir's own: Nornir loads the same files and sees what fabricgen sees."""

from __future__ import annotations

from nornir import InitNornir

from fabricgen.load.fabric import FabricInput

from conftest import ROOT


def test_nornir_reads_the_bundled_inventory_like_fabricgen(example_input: FabricInput) -> None:
    directory = ROOT / "inventory"
    nornir = InitNornir(
        runner={"plugin": "serial"},
        logging={"enabled": False},
        inventory={"plugin": "SimpleInventory", "options": {
            "host_file": str(directory / "hosts.yaml"), "group_file": str(directory / "groups.yaml"),
            "defaults_file": str(directory / "defaults.yaml")}},
    )
    ours = example_input.inventory.devices
    assert sorted(nornir.inventory.hosts) == sorted(ours)
    for name, host in nornir.inventory.hosts.items():
        device = ours[name]
        assert host.hostname == device.hostname
        assert host.platform == device.platform  # inherited from groups.yaml in both
        assert host["role"] == device.role  # Nornir's data inheritance: host → groups → defaults
        assert sorted(host["ports"]) == sorted(device.data.ports)
