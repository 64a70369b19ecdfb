"""Shared pytest configuration. Area-specific fixtures live in each folder's conftest.py.

Artifacts expanded by tests go to a per-session cache directory, never to the user's
~/.cache/glrmask: `GLRMASK_CACHE_DIR` is overwritten (not defaulted: a value the user exported may be
their real cache) when this file is imported, which pytest does before it collects or imports any
test module, so nothing can load an artifact earlier. Subprocesses started by tests (the CLI,
multiprocessing workers) inherit it through the environment. The directory is removed at the end.
"""

import os
import shutil
import tempfile

from hypothesis import settings

settings.register_profile("default", max_examples=int(os.environ.get("GLRMASK_TEST_EXAMPLES", "100")), deadline=None)
settings.load_profile("default")

SESSION_CACHE_DIR = tempfile.mkdtemp(prefix="glrmask-test-cache-")
# What the runtime would have used without this file (tests/unit/runtime/test_cache.py checks it is untouched).
USER_CACHE_DIR = os.environ.get("GLRMASK_CACHE_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "glrmask")
os.environ["GLRMASK_CACHE_DIR"] = SESSION_CACHE_DIR


def pytest_unconfigure(config: object) -> None:
    shutil.rmtree(SESSION_CACHE_DIR, ignore_errors=True)
