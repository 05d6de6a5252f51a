"""Building blocks shared by the intent and inventory schemas."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints


class StrictModel(BaseModel):
    """Unknown keys are errors: a misspelt ``loseless: true`` must not silently render a lossy fabric."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


# Names end up in device configs (map names, descriptions, comments; SONiC caps names at 32 chars).
# Restricting them to a safe alphabet is what guarantees that no string from the intent or inventory
# can inject an extra config line.
ClassName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,25}$")]
DeviceName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")]
PortName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9/._-]{0,63}$")]
# Free text (e.g. a fabric description): printable, single line, no config-comment breakers.
Text = Annotated[str, StringConstraints(pattern=r"^[^\x00-\x1f\x7f]{0,200}$")]
