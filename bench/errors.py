"""Benchmark errors: a bad option, a missing data file or peer venv, a worker that failed.

All subclass glrmask_runtime.GLRMaskError so `python -m bench` prints one line and exits 1.
"""

from __future__ import annotations

from glrmask_runtime.errors import GLRMaskError


class BenchError(GLRMaskError):
    """The benchmark cannot run as asked; the message is `where: what; hint`."""
