"""Every rule module, imported once so its @rule decorators register (order does not matter: IDs sort)."""

from fabricgen.lint.rules import (  # noqa: F401
    buffers,
    classification,
    drift,
    ecn,
    evidence,
    fabric_wide,
    inventory,
    management,
    mtu,
    nic_driver,
    pfc,
    physical,
    scheduling,
)
