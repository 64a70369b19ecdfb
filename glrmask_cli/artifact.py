"""Write an artifact file: metadata + sections -> `glrmask_runtime.format` bytes -> `output.write_output`.

Encoding happens fully in memory first, so nothing is written for metadata or sections the
container cannot hold; how the bytes reach the path (atomically, through a device, to stdout) is
`glrmask_cli.output`'s policy.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np

from glrmask_cli.output import write_output
from glrmask_runtime.format import encode_container


def write_artifact(path: str | os.PathLike[str], metadata: dict, sections: Mapping[str, np.ndarray]) -> int:
    """Encode and write an artifact (`-`: standard output); returns its size in bytes.

    Raises:
        TypeError/ValueError: metadata or sections that the container cannot hold (nothing written).
        ArtifactError: the file cannot be written (directory missing, permissions, disk full, not a
            regular file).
    """
    data = encode_container(metadata, sections)
    write_output(path, data)
    return len(data)
