"""The row-by-row panel reader: the oracle the package's DuckDB reader is tested against.

Plain Python over ``csv``: read the file as text, pivot a long file, then build the panel
column by column (:func:`panel_from_columns`). ``fcps_core.ingest`` computes the same panel
on distinct values with DuckDB; ``tests/test_ingest.py`` checks the two agree, errors included.
"""

from __future__ import annotations

import csv
import gzip
import io as _io
import os
from typing import Mapping, Sequence

import numpy as np

from fcps_core.errors import PanelError
from fcps_core.data.labels import map_labels
from fcps_core.data.panel import (Panel, check_distinct_roles, build_judge_column, check_duplicate_items, check_header, is_missing, parse_blocks, resolve_judge_names)


def _read_text(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise PanelError(f"file {path!r} does not exist") from None
    except IsADirectoryError:
        raise PanelError(f"{path!r} is a directory, not a panel file") from None
    if path.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except OSError as exc:
            raise PanelError(f"{path!r} is not a valid gzip file ({exc})") from None
    if not data.strip():
        raise PanelError(f"file {os.path.basename(path)!r} is empty")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise PanelError(f"file is not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start} "
                         "cannot be decoded", line=line,
                         hint="re-save the file as UTF-8") from None
    return text


def read_table(path: str, *, delimiter: str | None = None) -> tuple[dict[str, list[str]], int]:
    """Read a delimited text file into string columns. Returns (columns, first data line)."""
    text = _read_text(path)
    if delimiter is None:
        base = path[:-3] if path.endswith(".gz") else path
        delimiter = "\t" if base.endswith((".tsv", ".tab")) else ","
    reader = csv.reader(_io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise PanelError("file is empty") from None
    except csv.Error as exc:
        raise PanelError(f"malformed CSV header: {exc}", line=1) from None
    header = check_header(header)
    width = len(header)
    rows: list[list[str]] = []
    try:
        for row in reader:
            if not row or (len(row) == 1 and row[0].strip() == "" and width > 1):
                continue  # blank line
            if len(row) != width:
                raise PanelError(f"expected {width} fields (as in the header) but found {len(row)}",
                                 line=reader.line_num,
                                 hint="check the delimiter and quoting on that line")
            rows.append(row)
    except csv.Error as exc:
        raise PanelError(f"malformed CSV: {exc}", line=reader.line_num,
                         hint="check quoting on that line") from None
    if not rows:
        raise PanelError("the file has a header but no data rows", line=2)
    columns = {h: [r[i] for r in rows] for i, h in enumerate(header)}
    return columns, 2


def detect_layout(columns: Mapping[str, Sequence[str]], *, judge_column: str = "judge",
                  output_column: str = "output") -> str:
    """``long`` when the file has judge and output columns, else ``wide``."""
    return "long" if judge_column in columns and output_column in columns else "wide"


def long_to_wide(columns: Mapping[str, Sequence[str]], *, item_column: str = "item_id",
                 judge_column: str = "judge", output_column: str = "output",
                 group_column: str = "group_id", label_column: str = "label",
                 block_column: str = "block", first_line: int = 2) -> dict[str, list[str]]:
    """Pivot a long file (one row per item x judge) to wide string columns.

    Per-item columns (group, label, block) must agree across an item's rows.
    """
    for needed in (item_column, judge_column, output_column):
        if needed not in columns:
            raise PanelError(f"long-format file has no {needed!r} column",
                             hint=f"name it with --{needed.split('_')[0]}-column")
    items = columns[item_column]
    judges = columns[judge_column]
    outputs = columns[output_column]
    order: dict[str, int] = {}
    judge_order: dict[str, int] = {}
    per_item = {c: {} for c in (group_column, label_column, block_column) if c in columns}
    cells: dict[tuple[str, str], str] = {}
    for r, (item, judge, out) in enumerate(zip(items, judges, outputs)):
        line = first_line + r
        item, judge = item.strip(), judge.strip()
        if item == "":
            raise PanelError("empty item id", line=line, column=item_column)
        if judge == "":
            raise PanelError("empty judge name", line=line, column=judge_column)
        order.setdefault(item, len(order))
        judge_order.setdefault(judge, len(judge_order))
        key = (item, judge)
        if key in cells and cells[key].strip() != out.strip():
            raise PanelError(f"judge {judge!r} has two different outputs for item {item!r}",
                             line=line, column=output_column)
        cells[key] = out
        for c, seen in per_item.items():
            val = columns[c][r].strip()
            if val == "" or is_missing(val):
                continue
            prev = seen.get(item)
            if prev is not None and prev[0] != val:
                raise PanelError(f"item {item!r} has {c} {prev[0]!r} on line {prev[1]} and {val!r} here",
                                 line=line, column=c, hint="an item's per-item columns must agree")
            seen.setdefault(item, (val, line))
    item_list = list(order)
    wide: dict[str, list[str]] = {item_column: item_list}
    for c, seen in per_item.items():
        wide[c] = [seen.get(i, ("", 0))[0] for i in item_list]
    roles = {block_column: "block", group_column: "group", label_column: "label", item_column: "item id"}
    for j in judge_order:
        if j in roles:
            role = roles[j]
            flag = {"item id": "--item-column", "group": "--group-column", "label": "--label-column",
                    "block": "--block-column"}[role]
            raise PanelError(f"judge name {j!r} is also the name of the {role} column: its outputs would be "
                             f"read as the {role}s", column=judge_column,
                             hint=f"rename that judge, or name the {role} column differently with {flag}")
        wide[j] = [cells.get((i, j), "") for i in item_list]
    return wide


def read_panel(path: str, *, layout: str = "auto", judges: Sequence[str] | None = None,
               item_column: str = "item_id", group_column: str = "group_id",
               label_column: str = "label", block_column: str | None = "block",
               judge_column: str = "judge", output_column: str = "output",
               labels_path: str | None = None, schema: str | Mapping[str, str] | None = None,
               label_range: tuple[float, float] | None = None,
               judge_range: tuple[float, float] | None = None,
               delimiter: str | None = None, require_labels: bool = True,
               name: str | None = None) -> Panel:
    """Read a wide or long panel file (CSV or TSV, optionally gzipped).

    ``layout='auto'`` picks long when the file has ``judge`` and ``output`` columns. A long
    file may take its labels from ``labels_path`` (columns item id + label).
    """
    columns, first_line = read_table(path, delimiter=delimiter)
    if layout == "auto":
        layout = detect_layout(columns, judge_column=judge_column, output_column=output_column)
    if layout == "long":
        columns = long_to_wide(columns, item_column=item_column, judge_column=judge_column,
                               output_column=output_column, group_column=group_column,
                               label_column=label_column, block_column=block_column or "block",
                               first_line=first_line)
        if labels_path:
            lab_cols, lab_first = read_table(labels_path)
            for needed in (item_column, label_column):
                if needed not in lab_cols:
                    raise PanelError(f"labels file has no {needed!r} column")
            lab = {}
            for r, (i, y) in enumerate(zip(lab_cols[item_column], lab_cols[label_column])):
                i = i.strip()
                if i in lab and lab[i] != y.strip():
                    raise PanelError(f"item {i!r} has two different labels in the labels file",
                                     line=lab_first + r, column=label_column)
                lab[i] = y.strip()
            columns[label_column] = [lab.get(i, "") for i in columns[item_column]]
        # Lines of a pivoted file are not the user's lines: report item positions instead.
        first_line_reported = None
    elif layout == "wide":
        first_line_reported = first_line
    else:
        raise PanelError(f"unknown layout {layout!r}; use wide, long or auto")
    try:
        return panel_from_columns(columns, judges=judges, item_column=item_column,
                                  group_column=group_column, label_column=label_column,
                                  block_column=block_column, schema=schema, label_range=label_range,
                                  judge_range=judge_range, require_labels=require_labels,
                                  name=name or os.path.splitext(os.path.basename(path))[0],
                                  first_line=first_line_reported or 2)
    except PanelError as exc:
        if first_line_reported is not None or exc.line is None:
            raise
        # A pivoted long file has no line per item: name the item instead.
        item = columns[item_column][exc.line - 2]
        raise exc.with_item(item) from None


def panel_from_columns(columns: Mapping[str, Sequence[str]], *, judges: Sequence[str] | None = None,
                 item_column: str = "item_id", group_column: str = "group_id",
                 label_column: str = "label", block_column: str | None = "block",
                 schema: str | Mapping[str, str] | None = None,
                 label_range: tuple[float, float] | None = None,
                 judge_range: tuple[float, float] | None = None,
                 require_labels: bool = True, name: str = "panel",
                 first_line: int = 2) -> Panel:
    """Build a panel from string columns (``first_line`` = file line of the first row)."""
    check_distinct_roles(item_column=item_column, group_column=group_column, label_column=label_column,
                         block_column=block_column)
    names = list(columns)
    if not names:
        raise PanelError("no columns")
    n = len(columns[names[0]])
    if n == 0:
        raise PanelError("the panel has a header but no data rows")
    if label_column not in columns:
        if require_labels:
            raise PanelError(f"no label column {label_column!r}; columns are "
                             + ", ".join(repr(c) for c in names[:8]) + (" ..." if len(names) > 8 else ""),
                             hint="name it with --label-column")
        labels, note = np.full(n, np.nan), ""
    else:
        labels, note = map_labels(columns[label_column], column=label_column,
                                  first_line=first_line, label_range=label_range)
    if item_column in columns:
        item_ids = np.array([str(x).strip() for x in columns[item_column]], dtype=object)
        blank = np.flatnonzero(item_ids == "")
        if blank.size:
            raise PanelError("empty item id", line=first_line + int(blank[0]), column=item_column)
    else:
        item_ids = np.array([str(i + 1) for i in range(n)], dtype=object)
    if group_column in columns:
        group_ids = np.array([str(x).strip() for x in columns[group_column]], dtype=object)
        group_ids = np.where(group_ids == "", item_ids, group_ids)
    else:
        group_ids = item_ids.copy()
    check_duplicate_items(item_ids, labels, first_line, item_column, group_ids)
    blocks = None
    use_block = block_column if (block_column and block_column in columns) else None
    if use_block:
        blocks = parse_blocks(columns[use_block], labels, first_line, use_block)
    judge_names = resolve_judge_names(names, judges, {item_column, group_column, label_column, use_block})
    judge_cols = []
    for j in judge_names:
        s = schema.get(j) if isinstance(schema, Mapping) else schema
        judge_cols.append(build_judge_column(j, columns[j], schema=s, first_line=first_line,
                                             value_range=judge_range))
    return Panel(item_ids=item_ids, group_ids=group_ids, labels=labels, judges=judge_cols,
               blocks=blocks, name=name, label_note=note)
