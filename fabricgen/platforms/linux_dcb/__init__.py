"""Linux dcb GPU host (platform `linux-dcb`): capability.py says what it can express, render.py writes its files,
read.py reads a device's config back, driver.py deploys."""

from __future__ import annotations

from fabricgen.platforms import Platform
from fabricgen.platforms.linux_dcb.capability import CAPABILITY
from fabricgen.platforms.linux_dcb.read import owned as owned_settings
from fabricgen.platforms.linux_dcb.read import read as read_config
from fabricgen.platforms.linux_dcb.render import render as render_files

# Local names unlike the submodules' own (read, render): those stay the package's submodules.
PLATFORM = Platform(capability=CAPABILITY, render=render_files, read=read_config, owned=owned_settings)
