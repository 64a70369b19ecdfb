"""The per-session artifact cache of the test run, set when this module is first imported.

`GLRMASK_CACHE_DIR` is overwritten (not defaulted: a value the user exported may be their real
cache); tests/conftest.py imports this module, which pytest does before it collects or imports any
test module, so nothing can load an artifact earlier. Subprocesses started by tests (the CLI,
multiprocessing workers) inherit it through the environment.
"""

import os
import tempfile

SESSION_CACHE_DIR = tempfile.mkdtemp(prefix="glrmask-test-cache-")
# What the runtime would have used without this (tests/unit/runtime/test_cache.py checks it is untouched).
USER_CACHE_DIR = os.environ.get("GLRMASK_CACHE_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "glrmask")
os.environ["GLRMASK_CACHE_DIR"] = SESSION_CACHE_DIR
