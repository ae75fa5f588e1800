"""Cell and value encodings shared by the repository and the exporters."""

from __future__ import annotations

import json
import math


from ..errors import StoreError
from ..files.json_values import json_ready
# the neutraliser lives with the one CSV writer (fcps_core.files.csv_writer); re-exported from here
from ..files.csv_writer import csv_text, neutralise_cell  # noqa: F401


# -- names and cells -------------------------------------------------------------------------

def to_json(value) -> str:
    return json.dumps(json_ready(value), sort_keys=True, allow_nan=False)


def to_number(value) -> float | None:
    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def rows_to_dicts(cur) -> list[dict]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]



def emit(data: bytes, out, force: bool = False) -> bytes | None:
    if out is None:
        return data
    from ..files.safe_write import write_output
    write_output(out, data, force=force)      # atomic: a reader never sees half an export
    return None


def emit_table(header: list, rows: list, fmt: str, out, force: bool = False) -> bytes | None:
    if fmt == "csv":
        # the one CSV writer (fcps_core.files.csv_writer): text neutralised, numbers kept
        return emit(csv_text(header, rows, lineterminator="\n").encode("utf-8"), out, force)
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq
        cols = {}
        for k, h in enumerate(header):
            vals = [json_ready(r[k]) for r in rows]
            cols[f"{h}" if h not in cols else f"{h}_{k}"] = pa.array(
                [None if v is None else v for v in vals]) if uniform_type(vals) else \
                pa.array([None if v is None else str(v) for v in vals], pa.string())
        buf = pa.BufferOutputStream()
        pq.write_table(pa.table(cols), buf)
        return emit(buf.getvalue().to_pybytes(), out, force)
    raise StoreError(f"unknown export format {fmt!r}; use csv, parquet or json")


def uniform_type(vals: list) -> bool:
    kinds = {type(v) for v in vals if v is not None}
    return len(kinds) <= 1 or kinds <= {int, float}
