"""Reading a file into string columns with DuckDB (CSV/TSV/Parquet/JSON Lines, .gz), within limits."""

from __future__ import annotations

import csv
import gzip
import io as _io
import os
import re
from dataclasses import dataclass

import numpy as np

from ..errors import PanelError
from ..panel import check_header
from .files import DEFAULT_LIMITS, ImportLimits, check_input_file, detect_format, read_head_bytes


# -- reading into string columns -------------------------------------------------------------

@dataclass
class RawTable:
    """A file read as strings: ``columns`` maps each header name to an object array
    (missing cells are ``""``); ``first_line`` is the file line of the first data row."""

    header: list[str]
    columns: dict[str, np.ndarray]
    first_line: int
    fmt: str

    @property
    def n_rows(self) -> int:
        return len(self.columns[self.header[0]]) if self.header else 0


def _delimited_header(path: str, delimiter: str) -> list[str]:
    head = read_head_bytes(path)
    if not head.strip():
        raise PanelError(f"file {os.path.basename(path)!r} is empty")
    line = head.split(b"\n", 1)[0]
    try:
        text = line.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PanelError(f"file is not UTF-8: byte 0x{line[exc.start]:02x} at offset {exc.start} "
                         "cannot be decoded", line=1, hint="re-save the file as UTF-8") from None
    try:
        header = next(csv.reader(_io.StringIO(text.rstrip("\r"), newline=""),
                                 delimiter=delimiter, strict=True), [])
    except csv.Error as exc:
        raise PanelError(f"malformed header: {exc}", line=1,
                         hint="quote column names that contain the delimiter") from None
    return check_header(header)


_DUCK_LINE = re.compile(r"CSV Error on Line: (\d+)")
_DUCK_COUNT = re.compile(r"Expected Number of Columns: (\d+) Found: (\d+)")


def _csv_error(exc: Exception, path: str) -> PanelError:
    """A DuckDB CSV error as one located PanelError (never DuckDB's multi-line dump)."""
    text = str(exc)
    m = _DUCK_LINE.search(text)
    line = int(m.group(1)) if m else None
    count = _DUCK_COUNT.search(text)
    if count:
        return PanelError(f"expected {count.group(1)} fields (as in the header) but found "
                          f"{count.group(2)}", line=line,
                          hint="check the delimiter and quoting on that line")
    if "invalid unicode" in text.lower():
        return PanelError("file is not UTF-8: this line holds bytes that cannot be decoded",
                          line=line, hint="re-save the file as UTF-8")
    if "unterminated quote" in text.lower():
        return PanelError("a quoted field is never closed", line=line,
                          hint="check the quotes on that line")
    if "gzip" in text.lower() or "compress" in text.lower():
        return PanelError(f"{os.path.basename(path)!r} is not a valid gzip file",
                          hint="re-compress it with gzip or import the uncompressed file")
    first = text.splitlines()[0] if text else type(exc).__name__
    return PanelError(f"cannot parse the file: {first.split(': ', 1)[-1][:200]}", line=line,
                      hint="check the delimiter (--delimiter) and quoting")


def _duck():
    import duckdb  # lazy: the engine's other readers need no DuckDB
    con = duckdb.connect(":memory:")
    return duckdb, con


def _fetch_strings(con, rel, header: list[str], limits: ImportLimits,
                   max_rows: int | None, what: str) -> dict[str, np.ndarray]:
    """Materialise ``rel`` (columns c0..cN, VARCHAR) and fetch it as object arrays.

    Column names in SQL are the generated ``c<i>``; the user's header names never enter
    SQL text.
    """
    if max_rows is not None:
        rel = rel.limit(max_rows)
    rel.create("raw")
    n = con.execute("SELECT count(*) FROM raw").fetchone()[0]
    if n > limits.max_rows:
        raise PanelError(f"the file has {n:,} {what}, above the import limit of {limits.max_rows:,}",
                         hint="split the file or raise the limit with --max-rows")
    select = ", ".join(f"coalesce(c{i}, '')" for i in range(len(header)))
    arrays = con.execute(f"SELECT {select} FROM raw").fetchnumpy()
    return {h: np.asarray(arrays[k], dtype=object) for h, k in zip(header, arrays)}


def read_columns(path: str, *, fmt: str | None = None, delimiter: str | None = None,
                 limits: ImportLimits = DEFAULT_LIMITS, max_rows: int | None = None,
                 check_width: bool = False) -> RawTable:
    """Read a panel file into string columns with DuckDB.

    ``max_rows`` reads only the first rows (preview). ``check_width`` rejects a header with
    more columns than ``limits.max_judges`` judges plus the four per-item columns before any
    data is read.
    """
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1):
        raise PanelError(f"the delimiter must be exactly one character (got {delimiter!r})")
    check_input_file(path, limits)
    fmt = detect_format(path, fmt)
    duckdb, con = _duck()
    try:
        if fmt in ("csv", "tsv"):
            if delimiter is None:
                delimiter = "\t" if fmt == "tsv" else ","
            header = _delimited_header(path, delimiter)
            if check_width:
                _check_width(header, limits)
            try:
                # Explicit dialect and columns: DuckDB's sniffer would otherwise guess and may
                # silently skip malformed leading lines. Line 1 (the header) is skipped.
                rel = con.read_csv(path, header=False, skiprows=1, auto_detect=False,
                                   delimiter=delimiter, quotechar='"', escapechar='"',
                                   columns={f"c{i}": "VARCHAR" for i in range(len(header))},
                                   strict_mode=True, null_padding=False)
                columns = _fetch_strings(con, rel, header, limits, max_rows, "data rows")
            except duckdb.Error as exc:
                raise _csv_error(exc, path) from None
            first_line = 2
        else:
            if not read_head_bytes(path, 64).strip():
                raise PanelError(f"file {os.path.basename(path)!r} is empty")
            try:
                if fmt == "parquet":
                    _check_parquet_names(path)
                    rel = con.read_parquet(path)
                else:
                    # sample_size=-1: every line informs the columns (a key first seen on
                    # line 30,000 would otherwise be dropped without a word)
                    rel = con.read_json(path, format="auto", sample_size=-1)
            except duckdb.Error as exc:
                raise _structured_error(exc, path, fmt) from None
            header = check_header(list(rel.columns))
            if check_width:
                _check_width(header, limits)
            for name, typ in zip(rel.columns, rel.types):
                t = str(typ).upper()
                if t.startswith(("STRUCT", "MAP", "UNION")) or t.endswith("]"):
                    raise PanelError(f"column holds nested values ({str(typ)}); every cell must "
                                     "be a single string or number", column=name,
                                     hint="flatten the column before importing")
            try:
                if fmt == "jsonl":
                    # Re-read with every column as VARCHAR: JSON numbers keep their text and
                    # strings lose their quotes (a cast of DuckDB's JSON type would keep them).
                    rel = con.read_json(path, format="auto", sample_size=-1,
                                        columns={c: "VARCHAR" for c in rel.columns})
                # Expression API: column names are passed as values, never spliced into SQL.
                rel = rel.select(*[duckdb.ColumnExpression(c).cast(duckdb.sqltype("VARCHAR"))
                                   .alias(f"c{i}") for i, c in enumerate(rel.columns)])
                columns = _fetch_strings(con, rel, header, limits, max_rows, "rows")
            except duckdb.Error as exc:
                raise _structured_error(exc, path, fmt) from None
            first_line = 1
    finally:
        con.close()
    table = RawTable(header=header, columns=columns, first_line=first_line, fmt=fmt)
    if table.n_rows == 0:
        raise PanelError("the file has a header but no data rows", line=first_line)
    return table


def _check_parquet_names(path: str) -> None:
    """Two columns of one name: DuckDB would rename the second (``j1_1``), a judge the user
    never named. Refuse them, naming the column."""
    import pyarrow.parquet as pq
    try:
        names = pq.read_schema(path).names
    except Exception:                   # unreadable: DuckDB's reader gives the message
        return
    seen = set()
    for name in names:
        if name in seen:
            raise PanelError(f"{os.path.basename(path)!r} has two columns named {name!r}", column=name,
                             hint="give every column its own name before importing")
        seen.add(name)


def _check_width(header: list[str], limits: ImportLimits) -> None:
    if len(header) > limits.max_judges + 4:
        raise PanelError(f"the file has {len(header):,} columns, more than the limit of "
                         f"{limits.max_judges:,} judges plus the item/group/label/block columns",
                         line=1, hint="keep the judges you need with --judges, "
                                      "or raise the limit with --max-judges")


def _structured_error(exc: Exception, path: str, fmt: str) -> PanelError:
    name = os.path.basename(path)
    if fmt == "parquet":
        return PanelError(f"{name!r} is not a readable Parquet file "
                          f"({str(exc).splitlines()[0][:160]})",
                          hint="re-export it as Parquet, or import it as CSV")
    line = _first_bad_json_line(path)
    return PanelError(f"{name!r} is not valid JSON Lines: each line must be one JSON object",
                      line=line, hint="fix that line (one {\"column\": value, ...} object per line)")


def _first_bad_json_line(path: str) -> int | None:
    """Locate the first line that is not a JSON object (error path only)."""
    import json
    opener = gzip.open if path.lower().endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for k, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    if not isinstance(json.loads(line), dict):
                        return k
                except ValueError:
                    return k
    except (OSError, UnicodeDecodeError, EOFError):
        return None
    return None
