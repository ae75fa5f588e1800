"""Reading a file into string columns (CSV/TSV/Parquet/JSON Lines, .gz), within limits.

CSV/TSV files are read by DuckDB (the fast path). A file DuckDB could misread (a lone
carriage return, a quote next to a space: :class:`ContentScan`), whose header spans
lines, or that DuckDB refuses (mixed line ends, a cell over the limit, any parse error) is
read again by Python's ``csv`` module, line by line under the same limits: it reads every
file that module reads, and names the line and column of anything it refuses. Every error
names the file (:class:`FileError`).
"""

from __future__ import annotations

import csv
import io as _io
from dataclasses import dataclass, field

import numpy as np

from ..errors import PanelError
from ..data.panel import check_header
from .files import (DEFAULT_LIMITS, HEAD_BYTES, ImportLimits, bad_utf8,
                    check_input_file, delimiter_advice, delimiter_name, detect_format, in_file, is_gzip,
                    open_binary, other_delimiter, read_head_bytes, shown_name, size_text, sniff_text)

_BATCH = 65_536


@dataclass
class RawTable:
    """A file read as strings: ``columns`` maps each header name to an object array
    (missing cells are ``""``); ``first_line`` is the file line of the first data row;
    ``delimiter`` and ``head`` (the first bytes) serve :meth:`delimiter_hint`."""

    header: list[str]
    columns: dict[str, np.ndarray]
    first_line: int
    fmt: str
    delimiter: str | None = None
    head: bytes = b""
    #: how the file was read, in words (a detected delimiter...), for the user
    notes: list[str] = field(default_factory=list)
    #: False when no cell can hold a comma (content scan): decimal commas need no look
    may_have_commas: bool = True
    #: the columns read as text (Parquet/JSON Lines; None: every column of a text file)
    text_columns: frozenset | None = None

    @property
    def n_rows(self) -> int:
        return len(self.columns[self.header[0]]) if self.header else 0

    def delimiter_hint(self) -> str | None:
        """"the file looks ';'-delimited: pass --delimiter ';'" when another delimiter
        splits the first lines into more, equally many columns."""
        if self.delimiter is None:
            return None
        other = other_delimiter(self.head, self.delimiter)
        return None if other is None else delimiter_advice(other)


def read_columns(path: str, *, fmt: str | None = None, delimiter: str | None = None,
                 limits: ImportLimits = DEFAULT_LIMITS, max_rows: int | None = None,
                 check_width: bool = False, source_name: str | None = None) -> RawTable:
    """Read a panel file into string columns.

    ``max_rows`` reads only the first rows (preview). ``check_width`` rejects a header with
    more columns than ``limits.max_judges`` judges plus the four per-item columns before any
    data is read. Errors name ``source_name`` (the user's name for the file, e.g. an
    upload's) or else ``path``.
    """
    name = shown_name(path if source_name is None else source_name)
    try:
        if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1
                                      or delimiter in "\"\r\n"):
            raise PanelError(f"the delimiter must be one character other than a quote or a line "
                             f"break (got {delimiter!r})")
        fmt = detect_format(path, fmt)
        if fmt in ("csv", "tsv"):
            table = _read_delimited(path, fmt, delimiter or ("\t" if fmt == "tsv" else ","),
                                    limits, max_rows, check_width, detect=delimiter is None)
        else:
            table = _read_structured(path, fmt, limits, max_rows, check_width)
        if table.n_rows == 0:
            raise PanelError("the file has a header but no data rows", line=table.first_line)
        return table
    except PanelError as exc:
        raise in_file(exc, name) from None


# -- CSV / TSV ---------------------------------------------------------------------------------

def _read_delimited(path: str, fmt: str, delimiter: str, limits: ImportLimits,
                    max_rows: int | None, check_width: bool, detect: bool = False) -> RawTable:
    """``detect``: the delimiter was not given (``delimiter`` is the format's default):
    when the header is one column under it and another delimiter splits the first lines
    into equally many columns, that delimiter is used, and a note says so."""
    scan = check_input_file(path, limits, delimiter=delimiter)
    head = _text_head(path)
    header, header_lines = _read_header(path, delimiter, limits)
    notes = []
    if len(header) == 1:
        other = other_delimiter(head, delimiter)
        if other is not None and detect:
            table = _read_delimited(path, fmt, other, limits, max_rows, check_width)
            table.notes.insert(0, f"read as {delimiter_name(other)}-delimited: its first lines split into "
                                  f"{len(table.header)} columns by {delimiter_name(other)} and into one by "
                                  f"{delimiter_name(delimiter)} (pass --delimiter to choose another)")
            return table
        if other is not None:
            raise PanelError(f"the header is a single column {header[0][:60]!r}", line=1,
                             hint=delimiter_advice(other))
    if header:
        header[0] = header[0].lstrip("\ufeff")  # a second byte-order mark
    header = check_header(header)
    if check_width:
        _check_width(header, limits)
    columns = None
    if header_lines == 1 and not (scan.lone_cr or scan.loose_quotes):
        # records <= line feeds + 1 (the header is one of them): when that bound is within
        # the row limit the read needs no LIMIT, which would cost DuckDB its parallel scan
        bounded = scan.newlines is not None and scan.newlines <= limits.max_rows
        columns = _duck_delimited(path, header, delimiter, limits, max_rows, bounded)
    if columns is None:
        try:
            columns = _python_delimited(path, header, delimiter, limits, max_rows)
        except PanelError as exc:
            other = other_delimiter(head, delimiter) if exc.detail.startswith("expected ") else None
            if other is None:
                raise
            # rows wider or narrower than the header: name the delimiter that fits them all
            raise PanelError(exc.detail, line=exc.line, column=exc.column, hint=delimiter_advice(other)) from None
    return RawTable(header=header, columns=columns, first_line=2, fmt=fmt, delimiter=delimiter,
                    head=head, notes=notes, may_have_commas=scan.commas)


def _text_head(path: str) -> bytes:
    head = read_head_bytes(path, HEAD_BYTES)
    if not head.strip():
        raise PanelError("the file is empty")
    looks = sniff_text(head)
    if looks is not None:
        if head.startswith(b"\x1f\x8b") and is_gzip(path):
            # read through one gzip layer and still gzip: compressed twice
            raise PanelError("the file is gzip-compressed twice", hint="decompress it once (gunzip FILE)")
        raise PanelError(f"the file looks {looks[0]}, not UTF-8 text", hint=looks[1])
    return head


class _Reader:
    """Python's csv module over the file's lines, bounded: a line over
    ``limits.max_line_bytes`` is refused when read, and fields are capped in memory."""

    def __init__(self, path: str, delimiter: str, limits: ImportLimits):
        self.path, self.limits, self.delimiter, self.lines = path, limits, delimiter, 0
        cap = max(limits.max_line_bytes, limits.max_cell_bytes) + 2
        if csv.field_size_limit() < cap:      # process-wide; only ever raised
            csv.field_size_limit(cap)
        self.raw = open_binary(path)
        self.text = _io.TextIOWrapper(self.raw, encoding="utf-8-sig", newline="")
        self.reader = csv.reader(self._lines(), delimiter=delimiter, quotechar='"',
                                 doublequote=True, strict=True)

    def _lines(self):
        limit = self.limits.max_line_bytes
        read, cap = self.text.readline, limit + 2
        while True:
            line = read(cap)
            if not line:
                return
            self.lines += 1
            if len(line) * 4 > limit:
                body = line.rstrip("\r\n")
                if len(line) == cap and body == line or len(body.encode("utf-8", "surrogatepass")) > limit:
                    raise PanelError(f"the line is over the {size_text(limit)} limit for one line",
                                     line=self.lines,
                                     hint="check for a missing line break or a quote that is never closed")
            yield line

    def close(self) -> None:
        self.text.close()

    def fail(self, exc: Exception, start: int, header: list[str] | None) -> PanelError:
        """A csv or decoding error as one located PanelError."""
        if isinstance(exc, UnicodeDecodeError):
            return bad_utf8(self.path, header, self.delimiter)
        text = str(exc)
        if "unexpected end of data" in text:
            return PanelError("a quoted field is never closed", line=start,
                              hint="check the quotes on that line")
        if "field larger than field limit" in text:
            return PanelError(f"a cell is over the {size_text(self.limits.max_cell_bytes)} limit",
                              line=start, hint="check for a quote that is never closed, or shorten the cell")
        return PanelError(f"malformed quoting ({text})", line=max(self.lines, 1),
                          hint="a quoted field must end at a delimiter; write a quote inside it as \"\"")


def _read_header(path: str, delimiter: str, limits: ImportLimits) -> tuple[list[str], int]:
    """The header record and the number of lines it spans."""
    reader = _Reader(path, delimiter, limits)
    try:
        header = next(reader.reader, [])
    except (csv.Error, UnicodeDecodeError) as exc:
        raise reader.fail(exc, 1, None) from None
    finally:
        reader.close()
    _check_cells(header, limits, 1, None)
    return header, reader.lines


def _check_cells(row: list[str], limits: ImportLimits, line: int, header: list[str] | None) -> None:
    limit = limits.max_cell_bytes
    for k, value in enumerate(row):
        if len(value) * 4 > limit:
            size = len(value.encode("utf-8", "surrogatepass"))
            if size > limit:
                raise PanelError(f"a cell of {size:,} bytes is over the {size_text(limit)} limit",
                                 line=line, column=header[k] if header else None,
                                 hint="check for a quote that is never closed on that line, or shorten the cell")


def _python_delimited(path: str, header: list[str], delimiter: str, limits: ImportLimits,
                      max_rows: int | None) -> dict[str, np.ndarray]:
    """The file read row by row (blank lines skipped as the reference reader does)."""
    width = len(header)
    cap = max_rows if max_rows is not None else limits.max_rows
    cell_chars = limits.max_cell_bytes // 4
    parts: list[list[np.ndarray]] = [[] for _ in range(width)]
    batch: list[list[str]] = []
    n = 0
    r = _Reader(path, delimiter, limits)
    start = 1
    try:
        rows = r.reader
        next(rows)
        start = r.lines + 1
        for row in rows:
            line, start = start, r.lines + 1
            if not row or (len(row) == 1 and width > 1 and row[0].strip() == ""):
                continue
            if len(row) > width and not any(row[width:]):
                row = row[:width]             # trailing delimiters, as DuckDB reads them
            if len(row) != width:
                raise PanelError(f"expected {width} fields (as in the header) but found {len(row)}",
                                 line=line, hint="check the delimiter and quoting on that line")
            if max(map(len, row)) > cell_chars:
                _check_cells(row, limits, line, header)
            n += 1
            if n > cap:
                if max_rows is not None:
                    break
                continue                      # counted, not kept
            batch.append(row)
            if len(batch) == _BATCH:
                _flush(batch, parts)
    except (csv.Error, UnicodeDecodeError) as exc:
        raise r.fail(exc, start, header) from None
    finally:
        r.close()
    if max_rows is None and n > limits.max_rows:
        raise _too_many(n, limits, "data rows")
    _flush(batch, parts)
    return {h: (np.concatenate(p) if p else np.empty(0, dtype=object)) for h, p in zip(header, parts)}


def _flush(batch: list[list[str]], parts: list[list[np.ndarray]]) -> None:
    if batch:
        for part, values in zip(parts, zip(*batch)):
            arr = np.empty(len(values), dtype=object)
            arr[:] = values
            part.append(arr)
        batch.clear()


def _too_many(n: int, limits: ImportLimits, what: str) -> PanelError:
    return PanelError(f"the file has {n:,} {what}, above the import limit of {limits.max_rows:,}",
                      hint="split the file or raise the limit with --max-rows")


def _duck():
    import duckdb  # lazy: the engine's other readers need no DuckDB
    return duckdb, duckdb.connect(":memory:")


class _BigCell(Exception):
    """A cell over the limit found after a DuckDB read of a structured file:
    (row index, bytes, column index)."""


def _duck_delimited(path: str, header: list[str], delimiter: str, limits: ImportLimits,
                    max_rows: int | None, bounded: bool) -> dict[str, np.ndarray] | None:
    """DuckDB's read, or None when DuckDB refuses the file (mixed line ends, a record over
    the cell limit, any parse error): the Python reader then reads it, or names the line
    and column."""
    duckdb, con = _duck()
    try:
        # Explicit dialect and columns: DuckDB's sniffer would otherwise guess and may
        # silently skip malformed leading lines. Line 1 (the header) is skipped.
        rel = con.read_csv(path, header=False, skiprows=1, auto_detect=False,
                           delimiter=delimiter, quotechar='"', escapechar='"',
                           columns={f"c{i}": "VARCHAR" for i in range(len(header))},
                           strict_mode=True, null_padding=False,
                           # a record (all its lines) within the cell limit has no cell over
                           # it; a longer one is left to the Python reader, which checks cells
                           max_line_size=min(limits.max_line_bytes, limits.max_cell_bytes))
        return _fetch_strings(con, rel, header, limits, max_rows, "data rows", check_cells=False,
                              bounded=bounded)
    except duckdb.Error:
        return None
    finally:
        con.close()


def _fetch_strings(con, rel, header: list[str], limits: ImportLimits, max_rows: int | None,
                   what: str, check_cells: bool, bounded: bool = False) -> dict[str, np.ndarray]:
    """Materialise ``rel`` (columns c0..cN, VARCHAR), at most the row limit plus one (no
    LIMIT when ``bounded``: the file cannot hold more rows), and fetch it as object arrays.
    Column names in SQL are the generated ``c<i>``; the user's header names never enter
    SQL text."""
    full = rel
    if max_rows is not None:
        rel = rel.limit(max_rows)
    elif not bounded:
        rel = rel.limit(limits.max_rows + 1)
    rel.create("raw")
    n = con.execute("SELECT count(*) FROM raw").fetchall()[0][0]     # fetched whole: no open result
    if n > limits.max_rows:
        raise _too_many(full.aggregate("count(*)").fetchall()[0][0], limits, what)
    if check_cells and header:
        longest = con.execute("SELECT greatest(" + ", ".join(f"max(strlen(c{i}))" for i in range(len(header)))
                              + ") FROM raw").fetchone()[0]
        if longest is not None and longest > limits.max_cell_bytes:
            found = []
            for i in range(len(header)):
                hit = con.execute(f"SELECT rowid, strlen(c{i}) FROM raw WHERE strlen(c{i}) > ? "
                                  "ORDER BY rowid LIMIT 1", [limits.max_cell_bytes]).fetchone()
                if hit is not None:
                    found.append((int(hit[0]), int(hit[1]), i))
            raise _BigCell(min(found))
    select = ", ".join(f"coalesce(c{i}, '')" for i in range(len(header)))
    arrays = con.execute(f"SELECT {select} FROM raw").fetchnumpy()
    return {h: np.asarray(arrays[k], dtype=object) for h, k in zip(header, arrays)}


# -- Parquet / JSON Lines ----------------------------------------------------------------------

def _read_structured(path: str, fmt: str, limits: ImportLimits, max_rows: int | None,
                     check_width: bool) -> RawTable:
    scan = check_input_file(path, limits)
    if fmt == "jsonl":
        _text_head(path)
        if max_rows is None:
            _check_jsonl_rows(path, limits)
    elif not read_head_bytes(path, 64).strip():
        raise PanelError("the file is empty")
    elif is_gzip(path):
        raise PanelError("the file is a gzip-compressed Parquet file, which cannot be read in place",
                         hint="decompress it first (gunzip FILE): Parquet compresses its columns itself")
    elif max_rows is None:
        _check_parquet_rows(path, limits)
    duckdb, con = _duck()
    try:
        try:
            if fmt == "parquet":
                _check_parquet_names(path)
                rel = con.read_parquet(path)
            else:
                # sample_size=-1: every line informs the columns (a key first seen on
                # line 30,000 would otherwise be dropped without a word); records: a line
                # that is not an object is an error, not a column named "json"
                rel = con.read_json(path, format="auto", sample_size=-1, records="true")
        except duckdb.Error as exc:
            raise _structured_error(exc, path, fmt, limits) from None
        header = check_header(list(rel.columns))
        if check_width:
            _check_width(header, limits)
        # only a text column can hold a number written with a comma (a JSON or Parquet
        # number is a number, whatever the decimal mark of the text columns)
        texts = frozenset(h for h, t in zip(header, rel.types) if str(t).upper() in ("VARCHAR", "JSON"))
        for name, typ in zip(rel.columns, rel.types):
            t = str(typ).upper()
            if t.startswith(("STRUCT", "MAP", "UNION")) or t.endswith("]"):
                raise PanelError(f"column holds nested values ({str(typ)}); every cell must "
                                 "be a single string or number", column=name,
                                 hint="flatten the column before importing")
        try:
            if fmt == "jsonl":
                _check_json_scalars(duckdb, rel, path, limits)
                # Re-read with every column as VARCHAR: JSON numbers keep their text and
                # strings lose their quotes (a cast of DuckDB's JSON type would keep them).
                rel = con.read_json(path, format="auto", sample_size=-1, records="true",
                                    columns={c: "VARCHAR" for c in rel.columns})
            # Expression API: column names are passed as values, never spliced into SQL.
            rel = rel.select(*[duckdb.ColumnExpression(c).cast(duckdb.sqltype("VARCHAR"))
                               .alias(f"c{i}") for i, c in enumerate(rel.columns)])
            columns = _fetch_strings(con, rel, header, limits, max_rows, "rows",
                                     check_cells=scan.size > limits.max_cell_bytes)
        except duckdb.Error as exc:
            raise _structured_error(exc, path, fmt, limits) from None
        except _BigCell as big:
            row, size, col = big.args[0]
            raise PanelError(f"a cell of {size:,} bytes is over the {size_text(limits.max_cell_bytes)} "
                             "limit", line=row + 1 if fmt == "jsonl" else None, column=header[col],
                             hint="shorten the cell, or leave the column out") from None
    finally:
        con.close()
    return RawTable(header=header, columns=columns, first_line=1, fmt=fmt, may_have_commas=bool(texts),
                    text_columns=texts)


def _check_json_scalars(duckdb, rel, path: str, limits: ImportLimits) -> None:
    """A column whose values mix kinds has DuckDB's JSON type, which may hide an object or
    array value among the strings: refuse it, located (error path reads the file again)."""
    mixed = [c for c, t in zip(rel.columns, rel.types) if str(t).upper() == "JSON"]
    if not mixed:
        return
    kinds = (duckdb.ConstantExpression("OBJECT"), duckdb.ConstantExpression("ARRAY"))
    nested = None
    for c in mixed:
        e = duckdb.FunctionExpression("json_type", duckdb.ColumnExpression(c)).isin(*kinds)
        nested = e if nested is None else nested | e
    if rel.filter(nested).limit(1).fetchall():
        raise _json_problem(path, limits) or PanelError(
            "a column holds nested values (JSON objects or arrays)", hint="flatten the column before importing")


def _check_parquet_rows(path: str, limits: ImportLimits) -> None:
    """A Parquet file over the row limit, refused from its footer (the row count of its
    metadata) before any row is read."""
    import pyarrow.parquet as pq
    try:
        n = pq.ParquetFile(path).metadata.num_rows
    except Exception:                   # unreadable: DuckDB's reader gives the message
        return
    if n > limits.max_rows:
        raise _too_many(n, limits, "rows")


def _check_jsonl_rows(path: str, limits: ImportLimits) -> None:
    """A JSON Lines file over the row limit, refused before DuckDB parses it: line feeds
    are counted first (a bound on the records); only when they exceed the limit are the
    non-blank lines counted, and counting stops one past the limit."""
    limit = limits.max_rows
    newlines = 0
    with open_binary(path) as fh:
        for chunk in iter(lambda: fh.read(4 * 1024 * 1024), b""):
            newlines += chunk.count(b"\n")
    if newlines + 1 <= limit:
        return
    records = 0
    with open_binary(path) as fh:
        for line in fh:
            if line.strip():
                records += 1
                if records > limit:
                    raise PanelError(f"the file has over {limit:,} rows (JSON Lines records), above the "
                                     f"import limit of {limit:,}",
                                     hint="split the file or raise the limit with --max-rows")


def _check_parquet_names(path: str) -> None:
    """Two columns of one name, or of names that differ only by case: DuckDB would rename
    the second (``j1_1``, ``LABEL_1``), a judge the user never named; so would it a column
    with an empty name (``C6``). Refuse them, naming the column (as the JSON Lines reader
    refuses such keys)."""
    import pyarrow.parquet as pq
    try:
        names = pq.read_schema(path).names
    except Exception:                   # unreadable: DuckDB's reader gives the message
        return
    seen: dict[str, str] = {}
    for k, name in enumerate(names, start=1):
        if not name.strip():        # DuckDB would call it C6, a judge the user never named
            raise PanelError(f"column {k} has an empty name", hint="name every column before importing")
        first = seen.get(name.lower())
        if first == name:
            raise PanelError(f"the file has two columns named {name!r}", column=name,
                             hint="give every column its own name before importing")
        if first is not None:
            raise PanelError(f"the columns {first!r} and {name!r} differ only by case (column names "
                             "ignore case)", column=name, hint="give every column its own name before importing")
        seen[name.lower()] = name


def _check_width(header: list[str], limits: ImportLimits) -> None:
    if len(header) > limits.max_judges + 4:
        raise PanelError(f"the file has {len(header):,} columns, more than the limit of "
                         f"{limits.max_judges:,} judges plus the item/group/label/block columns",
                         line=1, hint="keep the judges you need with --judges, "
                                      "or raise the limit with --max-judges")


def _structured_error(exc: Exception, path: str, fmt: str, limits: ImportLimits) -> PanelError:
    if fmt == "parquet":
        why = str(exc).splitlines()[0].replace(f'"{path}"', "").replace(path, "the file")
        return PanelError(f"the file is not a readable Parquet file ({why[:160]})",
                          hint="re-export it as Parquet, or import it as CSV")
    return _json_problem(path, limits) or PanelError(
        "the file is not valid JSON Lines: each line must be one JSON object",
        hint="fix the file (one {\"column\": value, ...} object per line)")


def _json_problem(path: str, limits: ImportLimits) -> PanelError | None:
    """The first line that is not one flat JSON object, located (error path only): not
    JSON, not an object, a key twice, two keys differing only by case (column names are
    case-insensitive), a nested value, a line over the limit."""
    import json
    hint = "fix that line (one {\"column\": value, ...} object per line)"
    cap = limits.max_line_bytes
    try:
        with open_binary(path) as raw:
            for k, data in enumerate(iter(lambda: raw.readline(cap + 2), b""), start=1):
                if len(data.rstrip(b"\r\n")) > cap:
                    return PanelError(f"the line is over the {size_text(cap)} limit for one line",
                                      line=k, hint="split the record, or drop long fields")
                try:
                    line = data.decode("utf-8-sig" if k == 1 else "utf-8")
                except UnicodeDecodeError as exc:
                    return PanelError(f"the file is not UTF-8: byte 0x{data[exc.start]:02x} cannot be decoded",
                                      line=k, hint="re-save the file as UTF-8")
                if not line.strip():
                    continue
                try:
                    pairs = json.loads(line, object_pairs_hook=lambda p: p)
                except ValueError as exc:
                    return PanelError(f"the file is not valid JSON Lines: this line is not JSON ({exc})",
                                      line=k, hint=hint)
                if not isinstance(pairs, list) or line.lstrip()[:1] != "{":
                    return PanelError("the file is not valid JSON Lines: this line is not a JSON object",
                                      line=k, hint=hint)
                seen: dict[str, str] = {}
                for key, value in pairs:
                    if not key.strip():
                        return PanelError("a key is empty; every column needs a name", line=k,
                                          hint="name the key, or drop it")
                    if key.lower() in seen:
                        first = seen[key.lower()]
                        what = f"the key {key!r} appears twice" if first == key else \
                            f"the keys {first!r} and {key!r} differ only by case (column names ignore case)"
                        return PanelError(f"{what} in one object", line=k, column=key,
                                          hint="give every column its own name")
                    seen[key.lower()] = key
                    if isinstance(value, (list, dict)):
                        return PanelError("the value is a nested JSON object or array; every cell "
                                          "must be a single string or number", line=k, column=key,
                                          hint="flatten the column before importing")
    except (OSError, UnicodeDecodeError, EOFError):
        return None
    return None
