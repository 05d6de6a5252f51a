"""Remembering what renderers derive from the fabric-wide part of a device model.

Every switch of a fabric holds the same QosModel object (resolve builds it once), and a renderer turns it into
the same lines on each of them. ``by_identity`` computes that once per object instead of once per device. The
key is the object's identity because models with dict fields are not hashable, and hashing them by value would
cost what it saves; the cache keeps the object alive, so its id cannot be reused by another one while cached.
Cached results are shared between devices, so they must be immutable (tuples, NamedTuples, str).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Concatenate, Generic, ParamSpec, TypeVar

K = TypeVar("K")
P = ParamSpec("P")
R = TypeVar("R")

_SIZE = 16  # fabrics rendered in one process, times the variants asked of each (EOS: two queue keywords)


class by_identity(Generic[K, P, R]):  # lower case: used as a decorator, like functools.cache
    """``fn(obj, *args)`` remembered per (``obj`` itself, ``args``); ``args`` must be hashable."""

    def __init__(self, fn: Callable[Concatenate[K, P], R]) -> None:
        self._fn = fn
        self._cache: dict[tuple[int, tuple[Hashable, ...]], tuple[K, R]] = {}

    def __call__(self, obj: K, *args: P.args, **kwargs: P.kwargs) -> R:
        if kwargs:
            raise TypeError("by_identity: pass the arguments after the object by position")
        key = (id(obj), args)
        hit = self._cache.get(key)
        if hit is not None and hit[0] is obj:
            return hit[1]
        result = self._fn(obj, *args, **kwargs)
        if len(self._cache) >= _SIZE:
            self._cache.clear()
        self._cache[key] = (obj, result)
        return result
