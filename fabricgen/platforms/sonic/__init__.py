"""SONiC (platform `sonic`): capability.py says what it can express, render.py writes its files, read.py reads a
device's config back, driver.py deploys."""

from __future__ import annotations

from fabricgen.platforms import Platform
from fabricgen.platforms.sonic.capability import CAPABILITY
from fabricgen.platforms.sonic.read import owned as owned_settings
from fabricgen.platforms.sonic.read import read as read_config
from fabricgen.platforms.sonic.render import render as render_files

# Local names unlike the submodules' own (read, render): those stay the package's submodules.
PLATFORM = Platform(capability=CAPABILITY, render=render_files, read=read_config, owned=owned_settings)
