"""dpverify: privacy accounting, noise calibration, regret bounds, reference private RL agents and
empirical privacy audits."""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("dpverify")
except _metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0+unknown"
