"""NAPALM's name for fabricgen's Arista EOS driver: ``get_network_driver("fabricgen_eos")``.

napalm 5 looks up ``custom_napalm.<name>`` first and returns the first NetworkDriver subclass of the module in
alphabetical order, so this module imports exactly one driver class and not the base class itself.
"""

from fabricgen.platforms.eos.driver import FabricgenEosDriver

__all__ = ["FabricgenEosDriver"]
