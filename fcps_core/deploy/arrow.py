"""Arrow arrays from numpy and back, without pyarrow's pandas shim.

``pyarrow.array(...)`` and ``Array.to_numpy()`` check for pandas objects and import pandas
on first use (pyarrow 26): a third of a second of start-up and exit that the ``score``
command (the deploy-and-monitor issue's 1,000,000-row target) does not need. These build
the same arrays from buffers.
"""

from __future__ import annotations

import numpy as np


def numbers(values: np.ndarray):
    """A numpy int64 or float64 vector as an Arrow array (no nulls)."""
    import pyarrow as pa
    values = np.ascontiguousarray(values)
    kind = {np.dtype(np.int64): pa.int64(), np.dtype(np.float64): pa.float64()}[values.dtype]
    return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(values)])


def strings(values) -> object:
    """A sequence of Python strings as an Arrow string array (no nulls)."""
    import pyarrow as pa
    encoded = [str(v).encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    kind = pa.string() if offsets[-1] < 2**31 else pa.large_string()
    offsets = offsets.astype(np.int32) if kind == pa.string() else offsets
    return pa.Array.from_buffers(kind, len(encoded), [None, pa.py_buffer(offsets),
                                                      pa.py_buffer(b"".join(encoded))])


def string_scalar(value: str):
    """An Arrow string scalar (``pyarrow.scalar`` imports pandas too)."""
    return strings([value])[0]


def flags(values: np.ndarray):
    """A boolean vector as the Arrow strings "1" / "0" (one byte each)."""
    import pyarrow as pa
    text = np.asarray(values, dtype=bool).astype(np.uint8) + np.uint8(ord("0"))
    offsets = np.arange(len(text) + 1, dtype=np.int32)
    return pa.StringArray.from_buffers(len(text), pa.py_buffer(offsets), pa.py_buffer(text))


def objects(array) -> np.ndarray:
    """An Arrow string array as a numpy array of Python strings."""
    out = np.empty(len(array), dtype=object)
    out[:] = array.to_pylist()
    return out


def integer_view(array) -> np.ndarray:
    """The values of an Arrow integer array without nulls, as numpy (zero copy)."""
    width = array.type.bit_width // 8
    dtype = np.dtype(f"int{8 * width}")
    return np.frombuffer(array.buffers()[1], dtype=dtype)[array.offset:array.offset + len(array)]
