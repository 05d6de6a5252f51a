"""fabricgen: one RoCEv2 lossless-fabric intent compiled into per-device configs that agree end to end.

The pipeline, one straight road: load → resolve → lint → render → write (→ deploy, in a later release).
The pure core (:func:`fabricgen.api.generate`) touches neither disk nor network.
"""

__version__ = "0.2.0"  # also the release tag, v0.2.0 (CHANGELOG.md)
