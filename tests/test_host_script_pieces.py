"""A GPU host's script is its template's text for the NICs' QoS with the host's name and each NIC's identity in
their places (fabricgen.platforms.common.hostscript.HostFiles._script): rendered once per QoS shape, then shared
by every host of that shape. These tests hold that text to what the template renders for each host on its own,
and the templates to what makes that true: they print the name and the identity values as they are, and never
test or filter them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import jinja2
import pytest
from jinja2 import nodes

from fabricgen import __version__
from fabricgen.api import render_device
from fabricgen.load.fabric import load
from fabricgen.models.device import DeviceModel
from fabricgen.platforms.common import hostscript
from fabricgen.platforms.common.templating import Templates, templates_dir
from fabricgen.platforms.connectx.render import FILES as CONNECTX
from fabricgen.platforms.connectx.render import nic_context as connectx_context
from fabricgen.platforms.linux_dcb.render import FILES as LINUX_DCB
from fabricgen.platforms.linux_dcb.render import nic_context as linux_dcb_context
from fabricgen.resolve import resolve

ROOT = Path(__file__).resolve().parent.parent
HOST_SCRIPTS = [f"{files.folder}/{files.script}.j2" for files in (CONNECTX, LINUX_DCB)]
# What differs from host to host: hostscript.nic_identity's fields, and the device's name.
IDENTITY = {"nic": {"interface", "function", "rdma_device", "mtu", "peer"}, "device": {"name"}}


def gpu_hosts() -> list[DeviceModel]:
    source = load(ROOT / "intent" / "mixed.yaml", ROOT / "inventory" / "mixed")
    fabric = resolve(source.intent, source.inventory)
    return [device for device in fabric.devices.values() if device.host is not None]


def own_rendering(device: DeviceModel, templates: Templates) -> str:
    """The script as its template renders it for this one host, with nothing shared."""
    files, context = (CONNECTX, connectx_context) if device.platform == "connectx" else (LINUX_DCB, linux_dcb_context)
    assert device.host is not None
    return templates.render(f"{files.folder}/{files.script}.j2", version=__version__, device=device,
                            nics=[context(nic) for nic in device.host.nics], tool_timeout=hostscript.TOOL_TIMEOUT_S,
                            kill_after=hostscript.KILL_AFTER_S)


def test_every_host_gets_the_script_its_template_renders_for_it() -> None:
    hosts = gpu_hosts()
    assert {device.platform for device in hosts} == {"connectx", "linux-dcb"}
    templates = Templates()  # one store of pieces for all: later hosts reuse the first one's
    for device in hosts:
        script = render_device(device, templates)[CONNECTX.script if device.platform == "connectx" else
                                                  LINUX_DCB.script]
        assert script == own_rendering(device, Templates())
        assert device.name in script and "\0" not in script


def test_hosts_of_one_shape_differ_only_in_their_names_and_nics() -> None:
    first = next(device for device in gpu_hosts() if device.platform == "connectx")
    assert first.host is not None
    renamed = first.model_copy(update={"name": "gpu-b7", "host": first.host.model_copy(update={"nics": [
        nic.model_copy(update={"interface": f"enp{index}s0", "rdma_device": f"mlx5_{index + 4}", "mtu": 4200,
                               "peer": f"leaf9:Ethernet{index}"})
        for index, nic in enumerate(first.host.nics)]})})
    templates = Templates()
    render_device(first, templates)  # splits the template for this QoS shape
    script = render_device(renamed, templates)[CONNECTX.script]
    assert script == own_rendering(renamed, Templates())
    assert "gpu-b7" in script and "enp0s0" in script and "mlx5_4" in script and "leaf9:Ethernet0" in script


@pytest.mark.parametrize("template", HOST_SCRIPTS)
def test_a_host_script_template_prints_each_identity_value_as_it_is(template: str) -> None:
    """An identity value tested (`{% if nic.peer %}`) or filtered (`{{ device.name | upper }}`) would make the
    text of one host wrong for another of its shape: each may only be printed, bare."""
    environment = jinja2.Environment()
    tree = environment.parse((templates_dir() / template).read_text())
    printed = {id(node) for output in tree.find_all(nodes.Output) for node in output.nodes}
    identity = [node for node in tree.find_all(nodes.Getattr)
                if isinstance(node.node, nodes.Name) and node.attr in IDENTITY.get(node.node.name, set())]
    assert identity, "the template prints no identity value: this test reads the wrong names"
    assert all(id(node) in printed for node in identity), \
        f"{template}: an identity value is used otherwise than printed as it is (line " \
        f"{next(node.lineno for node in identity if id(node) not in printed)})"


def test_a_template_that_changes_an_identity_value_is_refused(tmp_path: Path) -> None:
    shutil.copytree(templates_dir(), tmp_path / "templates")
    script = tmp_path / "templates" / HOST_SCRIPTS[0]
    script.write_text(script.read_text().replace("of {{ device.name }}", "of {{ device.name | upper }}", 1))
    device = next(device for device in gpu_hosts() if device.platform == "connectx")
    with pytest.raises(RuntimeError, match="must print the host's name and each NIC's identity as they are"):
        render_device(device, Templates(tmp_path / "templates"))
