"""Formats of the files the CLI writes: from the output's extension or ``--format``.

``score --out x.parquet`` used to write CSV text into a file named ``.parquet``. Now every
command that writes a table picks the format from ``--format`` when given, else from the
output's extension (``.csv``, ``.parquet``/``.pq``, ``.jsonl``/``.ndjson``, and for
``export`` also ``.json``, ``.sql``, ``.html``), else CSV; a ``--format`` that contradicts a
known extension is refused rather than writing one format under another's name.

* CSV cells always come from the one neutralising CSV writer (:func:`fcps_core.files.csv_writer.csv_text`),
  with LF line ends (:func:`lf_csv` turns a CRLF text into LF without touching a line break
  inside a quoted cell);
* Parquet and JSON Lines hold the values themselves (numbers as numbers, text as written:
  neither format is opened as a spreadsheet formula).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os

from ..errors import FCPSError

#: extension -> format
EXTENSIONS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl",
              ".json": "json", ".sql": "sql", ".html": "html", ".htm": "html"}
TABLE_FORMATS = ("csv", "parquet", "jsonl")


def extension_format(path: str | None) -> str | None:
    """The format ``path``'s extension names, or None (no path, or an unknown extension)."""
    if not path:
        return None
    return EXTENSIONS.get(os.path.splitext(str(path))[1].lower())


def output_format(path: str | None, given: str | None, allowed=TABLE_FORMATS, *, default: str | None = "csv",
                  out_flag: str = "--out") -> str | None:
    """The format to write ``path`` in: ``given`` (``--format``), else the extension's,
    else ``default``. Refused, naming both, when ``given`` contradicts a known extension,
    or when the extension names a format this output cannot be."""
    ext = extension_format(path)
    suffix = os.path.splitext(str(path))[1] if path else ""
    if given is not None:
        if ext is not None and ext != given:
            raise FCPSError(f"--format {given} but {out_flag} {path!r} ends in {suffix}: name the file "
                            f"*.{given if given != 'jsonl' else 'jsonl'} or drop --format")
        return given
    if ext is not None and ext not in allowed:
        raise FCPSError(f"{out_flag} {path!r} ends in {suffix}, but this output is written as "
                        f"{', '.join(allowed)}: name the file accordingly or pass --format")
    return ext or default


def export_format(given: str | None, out: str | None) -> str | None:
    """``export``'s format: ``--format``, else the ``--out`` extension's, else None (the
    command's own default: csv for panels and runs, sql for a predictor file)."""
    return output_format(out, given, ("csv", "parquet", "json", "jsonl", "sql", "html"), default=None)


def _plain(value):
    """A JSON-ready value: numpy scalars to Python, non-finite floats to null."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes, list, dict)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _values(column) -> list:
    """A column (list, numpy array, Arrow array) as a list of Python values."""
    if hasattr(column, "to_pylist"):
        return column.to_pylist()
    if hasattr(column, "tolist"):
        return column.tolist()
    return list(column)


def table_bytes(columns: dict, fmt: str) -> bytes:
    """``columns`` (name -> equal-length sequence) as a file's bytes in ``fmt``: CSV by the
    one neutralising writer with LF line ends, Parquet by pyarrow, JSON Lines one object a
    row (numbers stay numbers; NaN is null)."""
    names = list(columns)
    n = len(columns[names[0]]) if names else 0
    if fmt == "csv":
        from ..service.files import csv_text
        rows = zip(*(_values(columns[c]) for c in names)) if names else iter(())
        return csv_text(names, rows, lineterminator="\n").encode("utf-8")
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq
        table = pa.table({c: _arrow(columns[c], pa) for c in names})
        buf = pa.BufferOutputStream()
        pq.write_table(table, buf)
        return buf.getvalue().to_pybytes()
    if fmt == "jsonl":
        lists = [[_plain(v) for v in _values(columns[c])] for c in names]
        return "".join(json.dumps(dict(zip(names, row)), ensure_ascii=False, allow_nan=False) + "\n"
                       for row in zip(*lists)).encode("utf-8") if n else b""
    raise FCPSError(f"unknown output format {fmt!r}; use one of {', '.join(TABLE_FORMATS)}")


def _arrow(values, pa):
    """An Arrow array of ``values`` (already Arrow: kept; NaN floats: null)."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    import numpy as np
    arr = np.asarray(values)
    if arr.dtype.kind == "f":
        return pa.array(arr, mask=~np.isfinite(arr))
    if arr.dtype.kind in "iub":
        return pa.array(arr)
    return pa.array([None if v is None else str(v) for v in values], pa.string())


def jsonl_from_parquet(data: bytes) -> bytes:
    """A Parquet file's rows as JSON Lines (an export's table: the store writes Parquet)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    table = pq.read_table(pa.BufferReader(data))
    return table_bytes({c: table.column(c).to_pylist() for c in table.column_names}, "jsonl") \
        if table.num_rows else b""


def lf_csv(data: bytes) -> bytes:
    """CSV bytes with LF line ends. Without a quote character no cell holds a line break
    (the writer quotes such a cell), so every CRLF ends a row; otherwise the rows are read
    back and written again by the one CSV writer with LF (its cells are already neutralised
    text, which it leaves as they are)."""
    if b"\r" not in data:
        return data
    if b'"' not in data:
        return data.replace(b"\r\n", b"\n")
    from ..service.files import csv_text
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    if not rows:
        return data
    return csv_text(rows[0], rows[1:], lineterminator="\n").encode("utf-8")


def prediction_columns(item_ids, predictions, support) -> dict:
    """The predictions file's columns for Parquet and JSON Lines: ``item_id``,
    ``prediction`` (the full float; the CSV prints six decimals) and, with a support
    section, ``N_z``, ``in_support`` (a boolean) and ``missing_judges`` (';'-joined)."""
    import numpy as np
    ids = item_ids.to_pylist() if hasattr(item_ids, "to_pylist") else [str(i) for i in item_ids]
    columns = {"item_id": ids, "prediction": np.asarray(predictions, dtype=float)}
    if support is not None:
        columns.update({"N_z": np.asarray(support.N_z, dtype=np.int64),
                        "in_support": np.asarray(support.in_support, dtype=bool),
                        "missing_judges": support.missing_names()})
    return columns


def predictions_bytes(item_ids, predictions, support, fmt: str) -> bytes:
    """The predictions file in ``fmt``: CSV from the deploy writer (the one neutralising CSV
    writer's cells) with LF line ends, else :func:`table_bytes` of :func:`prediction_columns`."""
    if fmt == "csv":
        from ..service.deploy import predictions_csv_bytes
        return lf_csv(predictions_csv_bytes(item_ids, predictions, support))
    return table_bytes(prediction_columns(item_ids, predictions, support), fmt)
