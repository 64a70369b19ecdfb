"""Shared pytest configuration. Area-specific fixtures live in each folder's conftest.py."""

import os
import tempfile

from hypothesis import settings

settings.register_profile("default", max_examples=int(os.environ.get("GLRMASK_TEST_EXAMPLES", "100")), deadline=None)
settings.load_profile("default")

# Artifacts expanded by tests go to a per-run cache, not the user's ~/.cache/glrmask.
os.environ.setdefault("GLRMASK_CACHE_DIR", tempfile.mkdtemp(prefix="glrmask-test-cache-"))
