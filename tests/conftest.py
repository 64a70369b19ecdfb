"""Shared pytest configuration. Area-specific fixtures live in each folder's conftest.py.

Artifacts expanded by tests go to a per-session cache directory (tests/support/session_cache.py),
never to the user's ~/.cache/glrmask; the directory is removed at the end.
"""

import os
import shutil

from hypothesis import settings

from tests.support.session_cache import SESSION_CACHE_DIR

settings.register_profile("default", max_examples=int(os.environ.get("GLRMASK_TEST_EXAMPLES", "100")), deadline=None)
settings.load_profile("default")


def pytest_unconfigure(config: object) -> None:
    shutil.rmtree(SESSION_CACHE_DIR, ignore_errors=True)
