"""NAPALM's name for fabricgen's GPU-host driver: ``get_network_driver("fabricgen_host")``.

napalm 5 looks up ``custom_napalm.<name>`` first and returns the first NetworkDriver subclass of the module in
alphabetical order, so this module imports exactly one driver class and not the base class itself.
"""

from fabricgen.deploy.hostdriver import FabricgenHostDriver

__all__ = ["FabricgenHostDriver"]
