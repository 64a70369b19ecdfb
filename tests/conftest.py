"""Shared pytest configuration. Area-specific fixtures live in each folder's conftest.py."""

import os

from hypothesis import settings

settings.register_profile("default", max_examples=int(os.environ.get("GLRMASK_TEST_EXAMPLES", "100")), deadline=None)
settings.load_profile("default")
