"""Scoring traffic read fast: only the columns a predictor scores, as Arrow, never a
Python string per cell.

:func:`read_traffic` reads a plain wide CSV file (no ``.gz``, no label or block column)
for ``score``. It reads the file with the very DuckDB call the panel reader
(:func:`fcps_core.ingest.load_panel`) makes, and runs the reader's checks in its order:
the file checks and content scan, the header (``check_header``, the width limit), the
column roles, the row limit, blank or repeated item ids, and every judge column, the
ones the predictor does not use included (each built by
:func:`fcps_core.ingest.judge_column` from its distinct values: same schema, vocabulary,
scalar map and limits as the panel reader). What it does not need to do is build a
Python string per cell: the columns the predictor scores are dictionary-encoded by
Arrow and the item ids stay Arrow strings for the predictions writer.

It is a fast path, never a second reader: whenever anything is not plainly fine (a
refused value, a quote in the header, a lone carriage return, a file DuckDB refuses, an
item id with surrounding spaces, a repeated id, a judge the predictor needs but the
file lacks) it returns ``None`` and the caller reads the file with ``load_panel``,
which then accepts it or refuses it with its own message naming the file, the line or
column and the fix. So every refusal is the panel reader's, word for word.

The returned panel holds only the judges the predictor scores (in file order), with
the item ids, groups and (absent) labels the panel reader gives them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from ..errors import PanelError
from .validate import short
from .arrow import integer_view, objects, strings
from ..ingest.build import judge_column, strip_values
from ..ingest.files import (DEFAULT_LIMITS, HEAD_BYTES, ImportLimits, check_input_file,
                            detect_format, is_gzip, read_head_bytes, sniff_text)
from ..ingest.layout import detect_layout
from ..data.panel import (JudgeColumn, Panel, check_distinct_roles, check_header,
                     resolve_judge_names)


@dataclass
class Traffic:
    """A traffic panel read by :func:`read_traffic`, with its item ids as an Arrow string
    array (``panel.item_ids`` as Arrow: what the predictions writer takes)."""

    panel: Panel
    item_ids: object


def read_traffic(path: str, judges: Sequence[str], *, schema: str | Mapping[str, str] | None = None,
                 layout: str = "auto", item_column: str = "item_id", group_column: str = "group_id",
                 label_column: str = "label", block_column: str | None = "block",
                 judge_column_name: str = "judge", output_column: str = "output",
                 limits: ImportLimits = DEFAULT_LIMITS) -> Traffic | None:
    """The traffic file ``path`` with the judge columns ``judges``, exactly as
    ``load_panel(path, schema=schema, require_labels=False, ...)`` reads them, or None
    when the panel reader must read it (see the module doc)."""
    import duckdb
    import pyarrow as pa
    try:
        plan = _plan(path, judges, layout=layout, item_column=item_column, group_column=group_column,
                     label_column=label_column, block_column=block_column,
                     judge_column_name=judge_column_name, output_column=output_column, limits=limits)
        if plan is None:
            return None
        header, names, scan = plan
        con = duckdb.connect(":memory:")
        try:
            return _read(con, path, header, names, judges, schema, scan, item_column=item_column,
                         group_column=group_column, limits=limits)
        finally:
            con.close()
    except (PanelError, duckdb.Error, pa.ArrowException):
        return None


def _plan(path: str, judges: Sequence[str], *, layout, item_column, group_column, label_column,
          block_column, judge_column_name, output_column, limits):
    """(header, judge columns, content scan) of a file the fast path reads, or None."""
    if layout not in ("auto", "wide") or is_gzip(path) or detect_format(path) != "csv":
        return None
    scan = check_input_file(path, limits, delimiter=",")
    if scan.lone_cr or scan.loose_quotes:
        return None
    header = _header(path)
    if header is None or len(header) == 1:
        return None
    header = check_header(header)
    if len(header) > limits.max_judges + 4:
        return None
    if layout == "auto" and detect_layout(header, judge_column=judge_column_name,
                                          output_column=output_column) == "long":
        return None
    check_distinct_roles(item_column=item_column, group_column=group_column,
                         label_column=label_column, block_column=block_column)
    if label_column in header or (block_column and block_column in header):
        return None
    names = resolve_judge_names(header, None, {item_column, group_column, label_column, None})
    if len(names) > limits.max_judges or any(j not in names for j in judges):
        return None
    return header, names, scan


def _header(path: str) -> list[str] | None:
    """The header of a file whose first line is plain (no quote, no stray carriage
    return, valid UTF-8, text-looking): what the panel reader's csv module reads there."""
    head = read_head_bytes(path, HEAD_BYTES)
    if not head.strip() or sniff_text(head) is not None:
        return None
    end = head.find(b"\n")
    if end < 0:
        return None
    line = head[:end]
    if line.endswith(b"\r"):
        line = line[:-1]
    if any(c in line for c in (b'"', b"\r", b"\x00")):
        return None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.startswith("\ufeff"):
        text = text[1:]                  # utf-8-sig
    header = text.split(",")
    header[0] = header[0].lstrip("\ufeff")
    return header


def _read(con, path, header, judge_names, judges, schema, scan, *, item_column, group_column, limits):
    import pyarrow as pa
    import pyarrow.compute as pc
    # The panel reader's DuckDB read (ingest.columns), line for line.
    rel = con.read_csv(path, header=False, skiprows=1, auto_detect=False, delimiter=",",
                       quotechar='"', escapechar='"',
                       columns={f"c{i}": "VARCHAR" for i in range(len(header))},
                       strict_mode=True, null_padding=False,
                       max_line_size=min(limits.max_line_bytes, limits.max_cell_bytes))
    if not (scan.newlines is not None and scan.newlines <= limits.max_rows):
        rel = rel.limit(limits.max_rows + 1)
    rel.create("raw")
    n = con.execute("SELECT count(*) FROM raw").fetchall()[0][0]
    if n == 0 or n > limits.max_rows:
        return None
    where = {h: i for i, h in enumerate(header)}
    wanted = [h for h in header if h == item_column or h == group_column or h in judges]
    table = con.sql("SELECT " + ", ".join(f"coalesce(c{where[h]}, '')" for h in wanted)
                    + " FROM raw").to_arrow_table()
    arrays = {h: table.column(k).combine_chunks() for k, h in enumerate(wanted)}
    # distinct item ids, and in one pass the distinct outputs of every judge the predictor
    # does not score (checked below as the panel reader checks them)
    distinct_ids = con.execute(f"SELECT count(DISTINCT c{where[item_column]}) FROM raw").fetchall()[0][0] \
        if item_column in arrays else n
    others = [j for j in judge_names if j not in arrays]
    other_outputs = {}
    if others:
        row = con.execute("SELECT " + ", ".join(f"list(DISTINCT coalesce(c{where[j]}, ''))" for j in others)
                          + " FROM raw").fetchall()[0]
        other_outputs = dict(zip(others, row))

    if item_column in arrays:
        ids = arrays[item_column]
        if distinct_ids < n or not _plain_ids(ids, pa, pc):
            return None                              # the reader's checks say what is wrong
        item_ids = objects(ids)
    else:
        item_ids = np.array([str(i + 1) for i in range(n)], dtype=object)
        ids = strings(item_ids)
    if group_column in arrays:
        groups = strip_values(objects(arrays[group_column]))
        group_ids = np.where(groups == "", item_ids, groups)
    else:
        group_ids = item_ids           # the reader's copy of the ids: equal, and never written to

    cols = []
    for j in judge_names:
        s = schema.get(j) if isinstance(schema, Mapping) else schema
        if j in arrays:
            encoded = arrays[j].dictionary_encode()
            col = _judge(j, objects(encoded.dictionary), s, limits)
            codes = integer_view(encoded.indices)
            cols.append(JudgeColumn(name=col.name, schema=col.schema,
                                    codes=None if col.codes is None else col.codes[codes],
                                    vocab=col.vocab,
                                    values=None if col.values is None else col.values[codes],
                                    scalar_map=col.scalar_map, value_range=col.value_range,
                                    range_declared=col.range_declared))
        else:
            _judge(j, np.array(other_outputs[j], dtype=object), s, limits)
    panel = Panel(item_ids=item_ids, group_ids=group_ids, labels=np.full(n, np.nan), judges=cols,
                  name=Path(path).name.split(".")[0])
    return Traffic(panel=panel, item_ids=ids)


#: the ASCII characters str.strip removes (str.isspace)
_ASCII_SPACE = np.zeros(256, dtype=bool)
_ASCII_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True


def _plain_ids(ids, pa, pc) -> bool:
    """No id is blank and none starts or ends with a character ``str.strip`` removes (the
    panel reader strips ids): checked on the first and last bytes, and on the first and
    last characters when a byte is not ASCII."""
    if ids.type != pa.string() or ids.null_count:
        return False
    n = len(ids)
    offsets = np.frombuffer(ids.buffers()[1], dtype=np.int32)[ids.offset:ids.offset + n + 1]
    if n == 0 or np.any(offsets[1:] == offsets[:-1]):
        return False
    data = np.frombuffer(ids.buffers()[2], dtype=np.uint8)
    ends = np.concatenate([data[offsets[:-1]], data[offsets[1:] - 1]])
    if _ASCII_SPACE[ends].any():
        return False
    if (ends >= 0x80).any():
        chars = pc.unique(pa.concat_arrays([pc.utf8_slice_codeunits(ids, 0, 1),
                                            pc.utf8_slice_codeunits(ids, -1)]))
        return not any(c.isspace() for c in chars.to_pylist())
    return True


def _judge(name: str, distinct: np.ndarray, schema: str | None, limits: ImportLimits) -> JudgeColumn:
    """The panel reader's judge column over a column's distinct values (one row each)."""
    return judge_column(name, distinct, schema=schema, first_line=2, value_range=None,
                        max_distinct=limits.max_distinct_outputs)


# -- a judge that gave no output at all --------------------------------------------------------

#: the panel reader's refusal of a judge column without a single output
EMPTY_JUDGE = "judge column is empty in every row"


def load_with_empty_judges(load, needed: Sequence[str], schemas: Mapping[str, str],
                           judges: Sequence[str] | None = None) -> tuple[Panel, list[str]]:
    """(panel, empty judges): ``load(judges)`` (a panel reader taking the judge columns to
    read, None for all), where a judge the predictor needs (``needed``) that is empty in
    every row is not an error but the monitoring case itself -- the judge is down. The panel
    reader refuses such a column (a panel to *select* on cannot use it); traffic is read
    again without it and the judge is added as a column missing on every row (its schema
    from ``schemas``: the predictor's), so ``score`` scores the rows as the family treats a
    missing output and ``audit`` reports it 100 % missing. An empty column the predictor
    does not read is left out (only the predictor's judges are read again). Any other
    refusal is the reader's own; every needed judge empty is refused in one line (nothing
    to score)."""
    empty: list[str] = []
    wanted = None if judges is None else list(judges)
    while True:
        try:
            panel = load(wanted)
            break
        except PanelError as exc:
            column = getattr(exc, "column", None)
            if getattr(exc, "detail", None) != EMPTY_JUDGE or column in empty:
                raise
            if column not in needed:
                if wanted is not None:
                    raise                 # a column the user named, or a second pass: the reader's refusal
                wanted = list(needed)     # a column the predictor never reads: read only its judges
                continue
            empty.append(column)
            wanted = [j for j in (judges or needed) if j not in empty]
            if not any(j in needed for j in wanted):
                raise PanelError(f"every judge column the predictor reads is empty in every row "
                                 f"({', '.join(short(j) for j in empty[:5])}): there is nothing to score; "
                                 "check that the traffic file holds the judges' outputs") from None
    if not empty:
        return panel, []
    cols = list(panel.judges) + [empty_judge(j, schemas.get(j, "categorical"), panel.n_rows) for j in empty]
    return Panel(item_ids=panel.item_ids, group_ids=panel.group_ids, labels=panel.labels, judges=cols,
                 blocks=panel.blocks, name=panel.name, label_note=panel.label_note), empty


def empty_judge(name: str, schema: str, n: int) -> JudgeColumn:
    """A judge column with no output on any of its ``n`` rows, as the panel reader would
    build one whose every cell is a missing marker if it allowed it."""
    from ..data.panel import MISSING
    if schema == "continuous":
        return JudgeColumn(name=name, schema=schema, codes=None, vocab=[], values=np.full(n, np.nan))
    rubric = schema == "rubric"
    return JudgeColumn(name=name, schema=schema, codes=np.zeros(n, dtype=np.int64), vocab=[MISSING],
                       values=np.full(n, np.nan) if rubric else None, scalar_map={MISSING: 0.5},
                       value_range=(0.0, 1.0) if rubric else None)
