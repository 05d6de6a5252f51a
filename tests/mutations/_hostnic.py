"""Mutations of one NIC's function in a host script, shared by the connectx and linux-dcb tables."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fabricgen.models.device import DeviceModel, NicModel

from mutations import Files, Mutation
from mutations._hostscript import add_line, drop_lines, edit_nic


def nic_of(device: DeviceModel, interface: str) -> NicModel:
    assert device.host is not None
    return next(nic for nic in device.host.nics if nic.interface == interface)


def csv(values: Sequence[int | str]) -> str:
    return ",".join(str(v) for v in values)


class ScriptMutations:
    """Mutation makers for the script file ``script``."""

    def __init__(self, script: str) -> None:
        self.script = script

    def edit(self, change: Callable[[NicModel], tuple[str, str]]) -> Mutation:
        """Text of the NIC's function replaced: ``change(nic)`` gives (old, new)."""
        def mutate(files: Files, device: DeviceModel, port: str) -> Files:
            old, new = change(nic_of(device, port))
            return {**files, self.script: edit_nic(files[self.script], port, old, new)}
        return mutate

    def drop(self, pattern: str) -> Mutation:
        """The NIC function's lines matching ``pattern`` removed."""
        def mutate(files: Files, device: DeviceModel, port: str) -> Files:
            return {**files, self.script: drop_lines(files[self.script], port, pattern)}
        return mutate

    def add(self, line: str) -> Mutation:
        """``line`` run at the end of the NIC's function."""
        def mutate(files: Files, device: DeviceModel, port: str) -> Files:
            return {**files, self.script: add_line(files[self.script], port, line)}
        return mutate
