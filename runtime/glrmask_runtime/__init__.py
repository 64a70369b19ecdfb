"""GLRMask runtime (public names are re-exported here at integration time)."""

__version__ = "0.1.0"
