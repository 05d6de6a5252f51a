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


# What a host script template may do, and nothing else: print text and values, loop over the NICs (`for nic in
# nics`) and over a NIC's QoS lists, and test QoS values and `not nics`.
ALLOWED_STATEMENTS = (nodes.Output, nodes.For, nodes.If)


def identity_misuse(source: str) -> list[str]:
    """How ``source`` (a host script template) uses the host's name or a NIC's identity otherwise than printing it
    bare, `{{ device.name }}` and `{{ nic.interface }}`: each such use, by line. Anything but printing would let
    the text one host's values made differ from the text another host's values make (a test, a filter, arithmetic,
    a sort), and the pieces a shape shares would then be wrong for some host. Strict on purpose: `nic` and `device`
    may only be read as `nic.FIELD` / `device.name`, and `nics` only looped over as `nic` or tested as `not nics`."""
    tree = jinja2.Environment().parse(source)
    printed = {id(node) for output in tree.find_all(nodes.Output) for node in output.nodes}
    fields = {id(node.node): node for node in tree.find_all(nodes.Getattr) if isinstance(node.node, nodes.Name)}
    allowed = _allowed_uses(tree)
    problems = [f"line {node.lineno}: {type(node).__name__}" for node in tree.find_all(nodes.Stmt)
                if not isinstance(node, ALLOWED_STATEMENTS)]
    problems += [f"line {node.lineno}: {type(node).__name__}" for node in tree.find_all(nodes.Getitem)]
    problems += [problem for name in tree.find_all(nodes.Name)
                 if (problem := _name_misuse(name, fields.get(id(name)), printed, allowed))]
    return problems


def _allowed_uses(tree: nodes.Template) -> set[int]:
    """The Name nodes of `for nic in nics` (no filter on the loop) and of `{% if not nics %}`."""
    allowed: set[int] = set()
    for loop in tree.find_all(nodes.For):
        if isinstance(loop.iter, nodes.Name) and loop.iter.name == "nics" and isinstance(loop.target, nodes.Name) \
                and loop.target.name == "nic" and loop.test is None:
            allowed.update((id(loop.iter), id(loop.target)))
    for test in tree.find_all(nodes.If):
        if isinstance(test.test, nodes.Not) and isinstance(test.test.node, nodes.Name):
            allowed.add(id(test.test.node))
    return allowed


def _name_misuse(name: nodes.Name, field: nodes.Getattr | None, printed: set[int], allowed: set[int]) -> str:
    """What is wrong with this use of a name ("" when nothing): ``field``, the `.FIELD` read of it, if any."""
    where = f"line {name.lineno}: {name.name}"
    if name.name == "loop":
        return f"{where}: loop"
    if name.name == "nics" and id(name) not in allowed:
        return f"{where}: only `for nic in nics` and `not nics`"
    if name.name == "nic" and name.ctx == "store":
        return "" if id(name) in allowed else f"{where}: bound otherwise than by `for nic in nics`"
    if name.name not in IDENTITY or name.ctx != "load":
        return ""
    if field is None:
        return f"{where}: read otherwise than as {name.name}.FIELD"
    if name.name == "device" and field.attr not in IDENTITY["device"]:
        return f"{where}.{field.attr}: the template may read only the device's name"
    if field.attr in IDENTITY[name.name] and id(field) not in printed:
        return f"{where}.{field.attr}: used otherwise than printed as it is"
    return ""


@pytest.mark.parametrize("template", HOST_SCRIPTS)
def test_a_host_script_template_prints_each_identity_value_as_it_is(template: str) -> None:
    source = (templates_dir() / template).read_text()
    assert "nic.peer" in source and "device.name" in source, "this test reads the wrong names"
    assert identity_misuse(source) == []


@pytest.mark.parametrize("snippet", [
    "{% for nic in nics %}{% if nic.peer %}x{% endif %}{% endfor %}",
    "{{ device.name | upper }}",
    "{% for nic in nics %}{{ nic.mtu + 1 }}{% endfor %}",
    "{% for nic in nics %}{% if nic['peer'] %}x{% endif %}{% endfor %}",
    "{% for nic in nics %}{{ nic[4] }}{% endfor %}",
    "{% for n in nics %}{{ n.peer }}{% endfor %}",
    "{{ nics[0].peer }}",
    "{% for nic in nics %}{{ loop.previtem.peer }}{% endfor %}",
    "{% for nic in nics|sort(attribute='interface') %}{{ nic.interface }}{% endfor %}",
    "{{ nics|map(attribute='peer')|join }}",
    "{% filter upper %}{{ device.name }}{% endfilter %}",
    "{% set d = device %}{{ d.name }}",
    "{% for nic in nics %}{{ nic }}{% endfor %}",
    "{% for nic in nics %}{% set p = nic.peer %}{{ p }}{% endfor %}",
    "{% macro m(v) %}{{ v|upper }}{% endmacro %}{% for nic in nics %}{{ m(nic.peer) }}{% endfor %}",
    "{% for nic in nics if nic.peer %}{{ nic.peer }}{% endfor %}",
    "{{ device.hostname }}",
])
def test_each_other_use_of_an_identity_value_is_caught(snippet: str) -> None:
    assert identity_misuse(snippet), snippet


def test_printing_identity_values_and_testing_qos_values_is_allowed() -> None:
    assert identity_misuse(
        "{{ device.name }}{% for nic in nics %}{{ nic.interface }} {{ nic.peer }}{% if nic.dscp_entries %}x{% endif %}"
        "{% for entry in nic.dcqcn %}{{ entry.prio }}{% endfor %}{% endfor %}{% if not nics %}none{% endif %}") == []


def test_a_template_that_changes_an_identity_value_is_refused(tmp_path: Path) -> None:
    shutil.copytree(templates_dir(), tmp_path / "templates")
    script = tmp_path / "templates" / HOST_SCRIPTS[0]
    script.write_text(script.read_text().replace("of {{ device.name }}", "of {{ device.name | upper }}", 1))
    device = next(device for device in gpu_hosts() if device.platform == "connectx")
    with pytest.raises(RuntimeError, match="must print the host's name and each NIC's identity as they are"):
        render_device(device, Templates(tmp_path / "templates"))
