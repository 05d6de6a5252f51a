"""``model.model_copy(update=...)`` for the config readers, at a third of pydantic's cost.

A reader copies each port of a skeleton with what its config says (tens of thousands of copies at 8,192 GPUs:
a tenth of ``lint --configs``' reading, issue 26 item 7). pydantic's model_copy goes through ``__copy__`` and
its generic bookkeeping; the models here are frozen, forbid extra fields and have no private attributes, so the
copy is their field dict with the changes, and the changed names added to the fields set — what model_copy
does, without validation, as model_copy does not validate either.

A config that says what the skeleton already holds changes nothing, and then the skeleton itself is returned:
most ports, NICs and devices read back as resolved, and sharing their objects makes lint's "read back as
resolved?" an identity test instead of a deep comparison, port by port (issue 26 item 7). Safe because the models
are frozen and nothing reads their fields set (which a copy would extend).
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
_ABSENT = object()


def updated(model: M, changes: dict[str, Any]) -> M:
    """``model.model_copy(update=changes)``: a shallow copy of ``model`` with ``changes`` set; ``model`` itself when
    every change is already its value."""
    if _unchanged(model.__dict__, changes):
        return model
    cls = type(model)
    new = cls.__new__(cls)
    object.__setattr__(new, "__dict__", {**model.__dict__, **changes})
    object.__setattr__(new, "__pydantic_fields_set__", model.__pydantic_fields_set__ | changes.keys())
    extra, private = model.__pydantic_extra__, model.__pydantic_private__
    object.__setattr__(new, "__pydantic_extra__", None if extra is None else copy.copy(extra))
    object.__setattr__(new, "__pydantic_private__", None if private is None else copy.copy(private))
    return new


def _unchanged(current: dict[str, Any], changes: dict[str, Any]) -> bool:
    """Whether each change holds the value the field has: the same object, or an equal one of the same type (1 and
    True, or 9000 and 9000.0, are equal in Python, and would print differently)."""
    for name, value in changes.items():
        old = current.get(name, _ABSENT)
        if old is not value and (old.__class__ is not value.__class__ or old != value):
            return False
    return True
