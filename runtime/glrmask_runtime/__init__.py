"""GLRMask runtime: load a compiled artifact and answer mask()/commit() per decoding step.

    import glrmask_runtime
    art = glrmask_runtime.load("json.glrm")
    m = art.matcher()
    allowed = m.mask()          # bool (vocab_size,)
    m.commit(token_id)          # raises TokenRejected if not allowed; state unchanged
"""

from glrmask_runtime.artifact import Artifact as Artifact
from glrmask_runtime.artifact import load as load
from glrmask_runtime.bitmask import allocate_bitmask as allocate_bitmask
from glrmask_runtime.bitmask import apply_bitmask_inplace as apply_bitmask_inplace
from glrmask_runtime.bitmask import bitmask_shape as bitmask_shape
from glrmask_runtime.errors import ArtifactError as ArtifactError
from glrmask_runtime.errors import ArtifactVersionError as ArtifactVersionError
from glrmask_runtime.errors import GLRMaskError as GLRMaskError
from glrmask_runtime.errors import InputRejected as InputRejected
from glrmask_runtime.errors import TokenizerMismatch as TokenizerMismatch
from glrmask_runtime.errors import TokenRejected as TokenRejected
from glrmask_runtime.matcher import Matcher as Matcher
from glrmask_runtime.matcher import fill_bitmasks as fill_bitmasks

__version__ = "0.1.0"
