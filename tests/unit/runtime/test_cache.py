"""The expansion cache as a user sees it: tests never touch the real cache directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from glrmask_runtime import cache
from glrmask_runtime.format import encode_container, read_container
from tests import conftest


def test_test_session_never_writes_the_users_real_cache_dir(tmp_path):
    session, user = Path(conftest.SESSION_CACHE_DIR), Path(conftest.USER_CACHE_DIR)
    assert session != user and os.environ[cache.ENV_VAR] == str(session)
    path = tmp_path / "a.glrm"
    path.write_bytes(encode_container({"test": "session cache"}, {"a": np.arange(100, dtype=np.int32)}))
    key = read_container(path).file_sha256
    assert (session / (key + cache.SUFFIX)).is_file()
    assert not (user / (key + cache.SUFFIX)).exists()
    # A subprocess (the CLI, a multiprocessing worker) gets the same directory.
    child = subprocess.run([sys.executable, "-c", "from glrmask_runtime import cache; print(cache.cache_dir())"],
                           capture_output=True, text=True, check=True)
    assert child.stdout.strip() == str(session)
