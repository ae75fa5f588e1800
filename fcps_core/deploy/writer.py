"""The predictions file as bytes, built by Arrow: byte for byte
``predictions_csv(...).encode("utf-8")`` (:func:`fcps_core.deploy.support.predictions_csv`)
without a Python string per row.

Each column becomes an Arrow string array (the prediction's ``%.6f`` text from its
correctly rounded millionths, see :func:`fixed6`), the columns are joined row by row and
the rows' bytes are one buffer. Anything this path does not cover exactly (a field that
needs CSV quoting or may start a spreadsheet formula -- the text path neutralises it, see
:mod:`fcps_core.files.csv_writer` --, an item id that is not a string, a prediction outside [0, 1000)
or negative zero, no rows) is written by :func:`predictions_csv` itself.
"""

from __future__ import annotations

import numpy as np

from .arrow import flags, numbers, string_scalar, strings
from ..files.csv_writer import needs_neutralising
from .support import RowSupport, predictions_csv

#: bytes of item ids above which the text path writes the file (Arrow's 32-bit offsets)
_MAX_ARROW_BYTES = 1 << 30
_SCALE = 1_000_000


class _Ids:
    """What :func:`predictions_csv` reads of a panel: its item ids."""

    def __init__(self, item_ids):
        self.item_ids = item_ids


def predictions_csv_bytes(item_ids, predictions: np.ndarray, support: RowSupport | None) -> bytes:
    """``predictions_csv`` of a panel with ``item_ids`` (a sequence of strings or an Arrow
    string array), encoded as UTF-8."""
    import pyarrow as pa
    import pyarrow.compute as pc
    preds = np.asarray(predictions, dtype=float)
    ids = _arrow_ids(item_ids)
    text = None
    if ids is not None and len(ids) and len(ids) == len(preds):
        try:
            text = _arrow_rows(ids, preds, support, pa, pc)
        except (pa.ArrowException, OverflowError):
            text = None
    if text is None:
        if not isinstance(item_ids, (list, np.ndarray)):
            item_ids = np.asarray(item_ids.to_pylist() if hasattr(item_ids, "to_pylist") else item_ids,
                                  dtype=object)
        return predictions_csv(_Ids(item_ids), predictions, support).encode("utf-8")
    return text


def _arrow_ids(item_ids):
    """The ids as an Arrow string array without nulls, or None (not all strings)."""
    import pyarrow as pa
    try:
        ids = item_ids if isinstance(item_ids, (pa.Array, pa.ChunkedArray)) else \
            pa.array(np.asarray(item_ids, dtype=object), type=pa.string())
    except (pa.ArrowException, TypeError, ValueError):
        return None
    try:
        if isinstance(ids, pa.ChunkedArray):
            ids = ids.combine_chunks()
        if pa.types.is_large_string(ids.type):
            ids = ids.cast(pa.string())
    except pa.ArrowException:
        return None
    if not pa.types.is_string(ids.type) or ids.null_count:
        return None
    return ids


def _arrow_rows(ids, preds: np.ndarray, support: RowSupport | None, pa, pc) -> bytes | None:
    n = len(ids)
    if pc.sum(pc.binary_length(ids)).as_py() > _MAX_ARROW_BYTES or _needs_quotes(ids, pc) \
            or _may_be_formulas(ids):
        return None
    pred_text = fixed6(preds, pa, pc)
    if pred_text is None:
        return None
    header = ["item_id", "prediction"]
    columns = [ids, pred_text]
    if support is not None:
        texts, inverse = support.missing_groups()
        if any(c in t for t in texts for c in (",", '"', "\r", "\n")) or any(map(needs_neutralising, texts)):
            return None
        header += ["N_z", "in_support", "missing_judges"]
        n_z = np.asarray(support.N_z, dtype=np.int64)
        columns += [pc.cast(numbers(n_z), pa.string()),
                    flags(support.in_support),
                    strings([t + "\r\n" for t in texts]).take(numbers(np.asarray(inverse, dtype=np.int64)))]
        rows = pc.binary_join_element_wise(*columns, string_scalar(","))   # the last field ends the line
    else:
        rows = pc.binary_join_element_wise(pc.binary_join_element_wise(*columns, string_scalar(",")),
                                           string_scalar("\r\n"), string_scalar(""))
    offsets = np.frombuffer(rows.buffers()[1], dtype=np.int32)[rows.offset:rows.offset + n + 1]
    start, end = int(offsets[0]), int(offsets[-1])
    body = rows.buffers()[2].slice(start, end - start).to_pybytes()
    return (",".join(header) + "\r\n").encode("utf-8") + body


def _needs_quotes(ids, pc) -> bool:
    """Whether an id holds a character csv.writer quotes (delimiter, quote, CR, LF)."""
    offsets = np.frombuffer(ids.buffers()[1], dtype=np.int32)[ids.offset:ids.offset + len(ids) + 1]
    start, end = int(offsets[0]), int(offsets[-1])
    data = ids.buffers()[2]
    text = b"" if data is None or end == start else data.slice(start, end - start).to_pybytes()
    return any(c in text for c in (b",", b'"', b"\r", b"\n"))


#: first bytes of an id that may start a spreadsheet formula (writers.FORMULA_STARTS: the
#: ASCII ones, and 0xEF, the lead byte of the full-width forms)
_FORMULA_BYTES = np.zeros(256, dtype=bool)
_FORMULA_BYTES[[ord(c) for c in "=+-@\t\r\n"] + [0xEF]] = True


def _may_be_formulas(ids) -> bool:
    """Whether an id's first byte may start a spreadsheet formula: such files are written
    by the text path, which neutralises exactly (:func:`fcps_core.files.csv_writer.csv_cell`)."""
    n = len(ids)
    offsets = np.frombuffer(ids.buffers()[1], dtype=np.int32)[ids.offset:ids.offset + n + 1]
    data = ids.buffers()[2]
    if data is None or n == 0:
        return False
    starts = offsets[:-1][offsets[1:] > offsets[:-1]]
    first = np.frombuffer(data, dtype=np.uint8)[starts]
    return bool(_FORMULA_BYTES[first].any())


def fixed6(values: np.ndarray, pa, pc):
    """``f"{v:.6f}"`` of every value as an Arrow string array, or None when a value is
    not finite, negative (or negative zero) or 1000 or more.

    The text is the integer number of millionths ``r`` nearest to ``v`` (Python rounds
    the exact binary value, ties to even). Below 1000, ``v * 1e6`` is within 1e-7 of
    the exact product (and its fraction is exact), so its nearest integer is ``r``
    unless the product lies within 1e-6 of a half; those few values are formatted by
    Python and read back. Values below 10 (every probability) are 8 bytes of text each,
    written digit by digit by numpy."""
    n = len(values)
    if n == 0:
        return strings([])
    if not np.isfinite(values).all() or np.signbit(values).any() or values.max() >= 1e3:
        return None
    scaled = values * _SCALE
    whole = np.floor(scaled)
    frac = scaled - whole
    r = whole.astype(np.int64) + (frac > 0.5)
    near = np.flatnonzero(np.abs(frac - 0.5) < 1e-6)
    for i in near.tolist():
        r[i] = int(format(float(values[i]), ".6f").replace(".", ""))
    if r.max() < 10 * _SCALE:
        digits = r.astype(np.uint32)
        text = np.empty((n, 8), dtype=np.uint8)
        text[:, 1] = ord(".")
        for k in range(7, 1, -1):
            text[:, k] = digits % 10 + ord("0")
            digits //= 10
        text[:, 0] = digits + ord("0")
        offsets = np.arange(0, 8 * n + 1, 8, dtype=np.int32)
        return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(text))
    units = pc.cast(numbers(r // _SCALE), pa.string())
    millionths = pc.utf8_lpad(pc.cast(numbers(r % _SCALE), pa.string()), width=6, padding="0")
    return pc.binary_join_element_wise(units, millionths, string_scalar("."))
