"""What fabricgen installs on a GPU host, as one NAPALM candidate: the rendered NIC script and its companions.

NAPALM's ``load_replace_candidate`` takes one text; a host's owned state is a few files plus the NIC settings the
script applies, so the candidate is a small JSON document naming them. Where each file goes is fixed here, and
nothing else on the host is touched: the script under /usr/local/sbin (where the rendered systemd unit runs
it from), the unit under /etc/systemd/system, and the NCCL settings under /etc/fabricgen.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

FORMAT = "fabricgen-host-bundle/1"
HOST_PLATFORMS = ("connectx", "linux-dcb")

# rendered file name pattern -> (directory on the host, mode)
_DESTINATIONS: tuple[tuple[re.Pattern[str], str, int], ...] = (
    (re.compile(r"^fabricgen-[a-z]+\.sh$"), "/usr/local/sbin", 0o755),
    (re.compile(r"^fabricgen-[a-z]+\.service$"), "/etc/systemd/system", 0o644),
    (re.compile(r"^nccl\.env$"), "/etc/fabricgen", 0o644),
)


class BundleError(ValueError):
    pass


@dataclass(frozen=True)
class InstalledFile:
    name: str
    path: str
    mode: int
    text: str


@dataclass(frozen=True)
class HostBundle:
    device: str
    platform: str
    files: dict[str, str]

    def __post_init__(self) -> None:
        if self.platform not in HOST_PLATFORMS:
            raise BundleError(f"{self.device}: platform {self.platform!r} is not a GPU-host platform")
        scripts = [name for name in self.files if name.endswith(".sh")]
        if len(scripts) != 1:
            raise BundleError(f"{self.device}: a host bundle needs exactly one NIC script, found {scripts or 'none'}")
        for name in self.files:
            _destination(self.device, name)

    @property
    def script(self) -> str:
        return next(name for name in self.files if name.endswith(".sh"))

    @property
    def installed(self) -> list[InstalledFile]:
        return [InstalledFile(name, f"{directory}/{name}", mode, self.files[name])
                for name in sorted(self.files) for directory, mode in [_destination(self.device, name)]]

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "device": self.device, "platform": self.platform,
                           "files": self.files}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> HostBundle:
        try:
            data: Any = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BundleError(f"not a fabricgen host bundle: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise BundleError(f"not a fabricgen host bundle (expected format {FORMAT!r})")
        files = data.get("files")
        if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
            raise BundleError("host bundle: files must map names to texts")
        return cls(str(data.get("device")), str(data.get("platform")), {str(k): v for k, v in files.items()})


def _destination(device: str, name: str) -> tuple[str, int]:
    for pattern, directory, mode in _DESTINATIONS:
        if pattern.match(name):
            return directory, mode
    raise BundleError(f"{device}: fabricgen does not install {name!r} on hosts")


def bundle_from_rendered(device: str, platform: str, rendered: dict[str, str]) -> HostBundle:
    """The bundle of one device from a render's {"device/file": text}: every file but the resolved model."""
    prefix = f"{device}/"
    files = {path[len(prefix):]: text for path, text in rendered.items()
             if path.startswith(prefix) and path != f"{prefix}resolved.json"}
    return HostBundle(device, platform, files)
