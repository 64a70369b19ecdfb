"""Token bitmask helpers in the layout vLLM, SGLang and xgrammar use.

A bitmask is int32 of shape (batch, ceil(V/32)); token v is allowed iff bit v % 32 of word v // 32
is set (bit 0 = least significant). Padding bits past V are ignored on read and 0 when built from a
bool array (`allocate_bitmask` sets them to 1, like the peers). All helpers are vectorized numpy;
misuse (wrong dtype, shape or size) raises TypeError/ValueError saying what was expected.
"""

from __future__ import annotations

import numpy as np

WORD_BITS = 32
NATIVE_INT32 = np.dtype(np.int32)   # a byte-swapped int32 array is refused like any other dtype


def bitmask_shape(batch_size: int, vocab_size: int) -> tuple[int, int]:
    """(batch_size, ceil(vocab_size / 32)).

    >>> bitmask_shape(2, 50257)
    (2, 1571)
    """
    _check_count("batch_size", batch_size)
    _check_count("vocab_size", vocab_size)
    return int(batch_size), -(-int(vocab_size) // WORD_BITS)


def allocate_bitmask(batch_size: int, vocab_size: int) -> np.ndarray:
    """A new int32 bitmask of `bitmask_shape(batch_size, vocab_size)` with every bit set (all allowed)."""
    return np.full(bitmask_shape(batch_size, vocab_size), -1, dtype=np.int32)


def bool_to_bitmask(allowed: np.ndarray) -> np.ndarray:
    """Pack a bool array of shape (V,) or (batch, V) into int32 words of shape (..., ceil(V/32)).

    Padding bits past V are 0. Raises TypeError for a non-bool array, ValueError for other shapes.
    """
    if not isinstance(allowed, np.ndarray) or allowed.dtype != np.bool_:
        raise TypeError(f"allowed: expected a numpy bool array, got {_describe(allowed)}")
    if allowed.ndim not in (1, 2) or allowed.shape[-1] == 0:
        raise ValueError(f"allowed: expected shape (V,) or (batch, V) with V >= 1, got {allowed.shape}")
    packed = np.packbits(allowed, axis=-1, bitorder="little")
    words = -(-allowed.shape[-1] // WORD_BITS)
    padding = words * 4 - packed.shape[-1]
    if padding:
        packed = np.concatenate([packed, np.zeros(packed.shape[:-1] + (padding,), np.uint8)], axis=-1)
    return packed.view("<i4").astype(np.int32, copy=False)


def bitmask_to_bool(bitmask_row: np.ndarray, vocab_size: int) -> np.ndarray:
    """Unpack an int32 row (W,) (or a batch (batch, W)) into bool of shape (..., vocab_size).

    Needs W >= ceil(vocab_size / 32); words past that are ignored. Returns a new array.
    """
    _check_count("vocab_size", vocab_size)
    _check_bitmask("bitmask_row", bitmask_row, vocab_size)
    as_bytes = np.ascontiguousarray(bitmask_row, dtype="<i4").view(np.uint8)
    return np.unpackbits(as_bytes, axis=-1, count=vocab_size, bitorder="little").view(np.bool_)


def apply_bitmask_inplace(logits: np.ndarray, bitmask: np.ndarray) -> None:
    """Set logits[..., v] = -inf wherever bit v of the matching bitmask row is 0.

    logits: float array (V,) or (batch, V), written in place. bitmask: int32 of the same number of
    dimensions (and batch), with at least ceil(V/32) words per row; bits past V are ignored.
    """
    if not isinstance(logits, np.ndarray) or not np.issubdtype(logits.dtype, np.floating):
        raise TypeError(f"logits: expected a numpy floating-point array, got {_describe(logits)}")
    if logits.ndim not in (1, 2) or logits.shape[-1] == 0:
        raise ValueError(f"logits: expected shape (V,) or (batch, V) with V >= 1, got {logits.shape}")
    if not logits.flags.writeable:
        raise ValueError("logits: expected a writeable array, got a read-only one")
    _check_bitmask("bitmask", bitmask, logits.shape[-1])
    if bitmask.ndim != logits.ndim or bitmask.shape[:-1] != logits.shape[:-1]:
        raise ValueError(f"bitmask: expected batch shape {logits.shape[:-1]} like logits {logits.shape}, "
                         f"got {bitmask.shape}")
    allowed = bitmask_to_bool(bitmask, logits.shape[-1])
    np.copyto(logits, -np.inf, where=~allowed)


def bitmask_array(bitmask: object, words: int) -> np.ndarray:
    """The writable int32 (batch, W >= words) array a bitmask is: a numpy array, or a CPU tensor
    (torch) seen through its array interface without a copy. TypeError says what was expected."""
    expected = f"an int32 array or CPU tensor of shape (batch, W) with W >= {words}"
    if isinstance(bitmask, np.ndarray):
        array = bitmask
    elif hasattr(bitmask, "__array__") or hasattr(bitmask, "__array_interface__"):
        device = getattr(bitmask, "device", None)
        if device is not None and getattr(device, "type", "cpu") != "cpu":
            raise TypeError(f"bitmask: expected {expected}, got a tensor on {device}; fill a CPU bitmask "
                            "and copy it to the device (e.g. with non_blocking=True)")
        try:
            array = np.asarray(bitmask)
        except (TypeError, RuntimeError) as e:
            raise TypeError(f"bitmask: expected {expected}, got {type(bitmask).__name__} ({e})") from e
        pointer = getattr(bitmask, "data_ptr", None)
        if callable(pointer) and array.ctypes.data != pointer():
            raise TypeError(f"bitmask: {type(bitmask).__name__} could not be written in place (its array "
                            "interface made a copy); pass a contiguous CPU int32 tensor")
    else:
        raise TypeError(f"bitmask: expected {expected}, got {type(bitmask).__name__}")
    if array.dtype != NATIVE_INT32 or array.ndim != 2 or array.shape[1] < words:
        raise TypeError(f"bitmask: expected {expected}, got {array.dtype} {array.shape}")
    return array


def _check_bitmask(name: str, bitmask: object, vocab_size: int) -> None:
    if not isinstance(bitmask, np.ndarray) or bitmask.dtype != np.int32:
        raise TypeError(f"{name}: expected a numpy int32 array, got {_describe(bitmask)}")
    words = -(-vocab_size // WORD_BITS)
    if bitmask.ndim not in (1, 2) or bitmask.shape[-1] < words:
        raise ValueError(f"{name}: expected shape (W,) or (batch, W) with W >= {words} for {vocab_size} "
                         f"tokens, got {bitmask.shape}")


def _check_count(name: str, value: object) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name}: expected >= 1, got {value}")


def _describe(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"array of dtype {value.dtype} and shape {value.shape}"
    return type(value).__name__
