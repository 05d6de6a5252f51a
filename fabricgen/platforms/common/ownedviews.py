"""The owned views of one device, shared with the next device projected where they are the same.

FG-CFG-001 (``lint --configs``) projects a device read from its config (``owned(found)``) and then the same device
as the intent resolves it (``owned(intended)``), and compares the two, port by port. A reader keeps every port
that reads back as resolved as the resolved model's own object (``modelcopy.updated``), so most ports of the two
devices are the same objects: their views are made once, and the second projection takes the first's. The
device's QoS view is kept too, and an equal one is replaced by it: each port entry is compared with the device's
QoS filled in, and two equal views that are the same object compare in one step instead of 64 DSCPs per port
(issue 26 item 7).

Only the last projection is kept (one device's views), so memory does not grow with the fabric. A hit is a port
that is the very object projected last time, with the same arguments: its view is then what the projection would
make again. Views are shared between the two results, so they are read-only, as owned views are everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from fabricgen.models.device import PortModel

View = dict[str, Any]
A = TypeVar("A", bound=Hashable)


class SharedViews:
    """The port views and the QoS view of the last projection of one platform's ``owned()``."""

    def __init__(self) -> None:
        self._ports: dict[int, tuple[PortModel, Hashable, View]] = {}
        self._qos: View | None = None

    def begin(self) -> Projection:
        """A new projection: it reuses what the last one made and is what the next one reuses."""
        last, self._ports = self._ports, {}
        return Projection(last, self._ports)

    def same_qos(self, view: View) -> View:
        """``view``, or the last device's QoS view when the two are equal (the same object compares fastest)."""
        last = self._qos
        if last is not None and last == view:
            return last
        self._qos = view
        return view


class Projection:
    """One ``owned()`` call: each port's view made, or taken from the last call when it is the same port."""

    def __init__(self, last: dict[int, tuple[PortModel, Hashable, View]],
                 next_: dict[int, tuple[PortModel, Hashable, View]]) -> None:
        self._last = last
        self._next = next_

    def port(self, port: PortModel, arg: A, make: Callable[[PortModel, A], View]) -> View:
        """``make(port, arg)``, or the view the last projection made of this very port with an equal ``arg``."""
        hit = self._last.get(id(port))
        view = hit[2] if hit is not None and hit[0] is port and hit[1] == arg else make(port, arg)
        self._next[id(port)] = (port, arg, view)
        return view
