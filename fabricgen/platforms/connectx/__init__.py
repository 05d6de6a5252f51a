"""NVIDIA ConnectX GPU host (platform `connectx`): capability.py says what it can express, render.py writes its
files, read.py reads a device's config back, driver.py deploys."""

from __future__ import annotations

from fabricgen.platforms import Imported, Platform
from fabricgen.platforms.connectx.capability import CAPABILITY

# render.py and read.py are imported when first used: most commands check devices against the capability only.
PLATFORM = Platform(capability=CAPABILITY, render=Imported(f"{__name__}.render", "render"),
                    read=Imported(f"{__name__}.read", "read"), owned=Imported(f"{__name__}.read", "owned"),
                    conflicts=Imported(f"{__name__}.read", "conflicts"))
