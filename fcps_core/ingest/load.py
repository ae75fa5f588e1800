"""Whole files to panels, the checks a stored panel must pass, imports into a store, previews."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping, Sequence

import numpy as np

from ..wording import count_of, noun_for
from ..errors import PanelError
from ..data.panel import (Panel, detect_schema)
from .files import DEFAULT_LIMITS, ImportLimits, file_sha256, in_file, shown_name
from .columns import RawTable, read_columns
from .build import build_panel, factorize_values, label_lookalikes, strip_values
from .layout import detect_layout, long_to_wide
from .numbers import NumberReading, read_numbers


# -- whole-file loading ---------------------------------------------------------------------

def load_panel(path, *, layout: str = "auto", judges: Sequence[str] | None = None,
               item_column: str = "item_id", group_column: str = "group_id",
               label_column: str = "label", block_column: str | None = "block",
               judge_column: str = "judge", output_column: str = "output",
               labels_path: str | None = None, schema: str | Mapping[str, str] | None = None,
               label_range: tuple[float, float] | None = None,
               judge_range: tuple[float, float] | None = None,
               fmt: str | None = None, delimiter: str | None = None,
               require_labels: bool = True, name: str | None = None,
               limits: ImportLimits = DEFAULT_LIMITS, source_name: str | None = None,
               label_map: Mapping[str, float | None] | None = None,
               output_map: Mapping[str, float | None] | None = None,
               decimal: str | None = None) -> Panel:
    """Read a wide or long panel file (CSV, TSV, Parquet, JSON Lines; optionally gzipped).

    Same mapping options and the same resulting panel as the row-by-row reference reader (``tests/reference/row_reader.py``),
    plus ``fmt``/``delimiter`` and ``limits``. Every error names the file: ``source_name``
    (the user's name for it, e.g. an upload's) or else ``path``. ``label_map`` and
    ``output_map`` declare label words and judge output values (:func:`build_panel`); the
    panel's ``label_mapping`` reports how its labels were read. ``decimal`` is the decimal
    mark of the judge outputs and labels (``","`` or ``"."``; None detects it, see
    :mod:`fcps_core.ingest.numbers`). Without ``delimiter`` a CSV/TSV file split better
    by another delimiter is read with it.

    The panel carries ``import_notes`` (how the file was read: a detected delimiter,
    decimal commas) and ``import_warnings`` (:func:`import_warnings`: numbers left as text,
    a constant label or judge), one line each, for the user to see.

    ``path`` may also be a pandas DataFrame, wide or long, with the same column roles (a
    named index, such as ``item_id`` after ``set_index``, counts as a column). It is read by
    the same reader as a Parquet file of that frame (:func:`frame_as_parquet`), so a frame
    and the file it came from give the same panel; errors name ``source_name`` or
    ``<DataFrame>``. A NaN label is an unlabelled row, as an empty label cell is.
    """
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if is_data_frame(path):
        with frame_as_parquet(path, limits) as parquet_path:
            return load_panel(
                parquet_path, layout=layout, judges=judges, item_column=item_column,
                group_column=group_column, label_column=label_column, block_column=block_column,
                judge_column=judge_column, output_column=output_column, labels_path=labels_path,
                schema=schema, label_range=label_range, judge_range=judge_range, fmt="parquet",
                require_labels=require_labels, name=name or "panel", limits=limits,
                source_name=source_name or "<DataFrame>", label_map=label_map, output_map=output_map,
                decimal=decimal)
    if layout not in ("auto", "wide", "long"):
        raise PanelError(f"unknown layout {layout!r}; use wide, long or auto")
    shown = shown_name(path if source_name is None else source_name)
    # A header wider than the judge limit plus the four per-item columns is rejected before
    # any data row is read (a long file has a handful of columns and never hits this).
    table = read_columns(path, fmt=fmt, delimiter=delimiter, limits=limits,
                         check_width=layout != "long" and judges is None, source_name=source_name)
    try:
        return _table_to_panel(
            table, layout=layout, judges=judges, item_column=item_column, group_column=group_column,
            label_column=label_column, block_column=block_column, judge_column=judge_column,
            output_column=output_column, labels_path=labels_path, schema=schema,
            label_range=label_range, judge_range=judge_range, require_labels=require_labels,
            name=name or Path(path if source_name is None else source_name).name.split(".")[0],
            limits=limits, label_map=label_map, output_map=output_map, decimal=decimal)
    except PanelError as exc:
        raise in_file(exc, shown) from None


def as_panel(data) -> Panel:
    """``data`` as a :class:`Panel`: a Panel as it is, else read by :func:`load_panel` (a
    pandas DataFrame or a panel file's path) with its defaults. The library entry points
    that take any of the three (``select``, ``sweep``) call this."""
    return data if isinstance(data, Panel) else load_panel(data)


def is_data_frame(obj) -> bool:
    """A pandas DataFrame, known without importing pandas for a path."""
    return type(obj).__name__ == "DataFrame" and type(obj).__module__.startswith("pandas")


@contextmanager
def frame_as_parquet(frame, limits: ImportLimits) -> Iterator[str]:
    """``frame`` written to a temporary Parquet file for the file reader (typed columns stay
    typed; a column of mixed Python objects is written as text, missing values kept), deleted
    afterwards. Refused before writing when it exceeds the import limits' rows or judges."""
    import pandas as pd
    if frame.index.name is not None or any(n is not None for n in frame.index.names[1:]):
        frame = frame.reset_index()
    if frame.shape[0] > limits.max_rows:
        raise PanelError(f"the DataFrame has {frame.shape[0]:,} rows, above the import limit of "
                         f"{limits.max_rows:,} (ImportLimits.max_rows)")
    if frame.shape[1] > limits.max_judges + 6:
        raise PanelError(f"the DataFrame has {frame.shape[1]:,} columns, above the judge limit of "
                         f"{limits.max_judges:,} (ImportLimits.max_judges)")
    names = [str(c) for c in frame.columns]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise PanelError(f"the DataFrame has two columns named {dup!r}; rename one")
    frame = frame.set_axis(names, axis=1)
    for name in names:
        column = frame[name]
        if column.dtype == object or isinstance(column.dtype, pd.CategoricalDtype):
            frame[name] = column.map(lambda v: None if v is None or (isinstance(v, float) and v != v)
                                     or v is pd.NA else str(v)).astype(object)
    with tempfile.TemporaryDirectory(prefix="fcps-frame-") as folder:
        path = os.path.join(folder, "frame.parquet")
        frame.to_parquet(path, index=False)
        yield path


def value_columns(header: Sequence[str], layout: str, *, judges, item_column, group_column,
                  label_column, block_column, output_column) -> list[str]:
    """The columns holding judge outputs and labels (the ones numbers are read from)."""
    if layout == "long":
        return [output_column, label_column]
    if judges is not None:
        return list(judges) + [label_column]
    return [h for h in header if h not in (item_column, group_column, block_column)]


def _read_numbers(table: RawTable, layout: str, decimal, **roles):
    values = [c for c in value_columns(table.header, layout, **roles)
              if table.text_columns is None or c in table.text_columns]
    columns, reading = read_numbers(table.columns, values,
                                    decimal=decimal, delimiter=table.delimiter,
                                    first_line=table.first_line, may_have_commas=table.may_have_commas)
    return columns, reading


def _comma_hint(exc: PanelError, reading: NumberReading) -> PanelError:
    """A label or rubric refusal of a column holding numbers with commas that were left as
    text: the hint names --decimal (the refusal alone gave no clue)."""
    if exc.column is None or exc.column not in reading.comma_columns or "--decimal" in str(exc):
        return exc
    hint = "its numbers are written with a comma: pass --decimal ',' if the comma is the decimal mark"
    return PanelError(exc.detail, line=exc.line, column=exc.column,
                      hint=f"{exc.hint}; {hint}" if exc.hint else hint)


def _table_to_panel(table: RawTable, *, layout, judges, item_column, group_column, label_column,
                    block_column, judge_column, output_column, labels_path, schema, label_range,
                    judge_range, require_labels, name, limits, label_map=None, output_map=None,
                    decimal=None) -> Panel:
    first_line = table.first_line
    if layout == "auto":
        layout = detect_layout(table.columns, judge_column=judge_column, output_column=output_column)
    _check_dialect(table, layout, label_column if require_labels and not labels_path else None,
                   (item_column, judge_column, output_column))
    columns, reading = _read_numbers(table, layout, decimal, judges=judges, item_column=item_column,
                                     group_column=group_column, label_column=label_column,
                                     block_column=block_column, output_column=output_column)
    try:
        panel = _columns_to_panel(
            columns, first_line, layout=layout, judges=judges, item_column=item_column,
            group_column=group_column, label_column=label_column, block_column=block_column,
            judge_column=judge_column, output_column=output_column, labels_path=labels_path,
            schema=schema, label_range=label_range, judge_range=judge_range,
            require_labels=require_labels, name=name, limits=limits, label_map=label_map,
            output_map=output_map)
    except PanelError as exc:
        raise _comma_hint(exc, reading) from None
    panel.import_notes = table.notes + reading.notes          # not fields, as label_mapping
    panel.import_warnings = reading.warnings + import_warnings(panel)
    return panel


def _columns_to_panel(columns, first_line, *, layout, judges, item_column, group_column, label_column,
                      block_column, judge_column, output_column, labels_path, schema, label_range,
                      judge_range, require_labels, name, limits, label_map, output_map) -> Panel:
    panel_name = name
    if layout == "long":
        wide = long_to_wide(columns, item_column=item_column, judge_column=judge_column,
                            output_column=output_column, group_column=group_column,
                            label_column=label_column, block_column=block_column or "block",
                            first_line=first_line, max_judges=limits.max_judges)
        if labels_path:
            from_file = _labels_file(labels_path, wide[item_column], item_column, label_column, limits)
            own = wide.get(label_column)
            if own is not None:
                # Both files carry labels: they must agree wherever both have one.
                own = np.asarray(own, dtype=object)
                clash = np.flatnonzero((own != "") & (from_file != "") & (own != from_file))
                if clash.size:
                    i = int(clash[0])
                    raise PanelError(f"item {wide[item_column][i]!r} has label {own[i]!r} in the panel file "
                                     f"but {from_file[i]!r} in the labels file {Path(labels_path).name}",
                                     column=label_column,
                                     hint="keep the labels in one file, or make the two agree")
                from_file = np.where(from_file != "", from_file, own)
            wide[label_column] = from_file
        try:
            return build_panel(wide, judges=judges, item_column=item_column,
                               group_column=group_column, label_column=label_column,
                               block_column=block_column, schema=schema, label_range=label_range,
                               judge_range=judge_range, require_labels=require_labels,
                               name=panel_name, first_line=2, limits=limits, label_map=label_map,
                               output_map=output_map)
        except PanelError as exc:
            if exc.line is None:
                raise
            # A pivoted long file has no line per item: name the item instead.
            raise exc.with_item(wide[item_column][exc.line - 2]) from None
    return build_panel(columns, judges=judges, item_column=item_column,
                       group_column=group_column, label_column=label_column,
                       block_column=block_column, schema=schema, label_range=label_range,
                       judge_range=judge_range, require_labels=require_labels, name=panel_name,
                       first_line=first_line, limits=limits, label_map=label_map, output_map=output_map)


def _check_dialect(table: RawTable, layout: str, label_column: str | None,
                   long_columns: tuple[str, ...]) -> None:
    """A missing label (or long-layout) column in a delimited file that another delimiter
    splits better: say so, with the flag, instead of only naming the column."""
    needed = list(long_columns) if layout == "long" else []
    if label_column is not None:
        needed.append(label_column)
    missing = [c for c in needed if c not in table.columns]
    if not missing:
        return
    hint = table.delimiter_hint()
    if hint is not None:
        shown = ", ".join(repr(c) for c in table.header[:3]) + (" ..." if len(table.header) > 3 else "")
        raise PanelError(f"no {missing[0]!r} column; the header was read as "
                         f"{count_of(len(table.header), 'column')} ({shown})", line=1, hint=hint)


def _labels_file(path: str, item_list: np.ndarray, item_column: str, label_column: str,
                 limits: ImportLimits) -> np.ndarray:
    try:
        return _labels_from(read_columns(path, limits=limits), path, item_list, item_column,
                            label_column)
    except PanelError as exc:
        raise in_file(exc, shown_name(path)) from None


def _labels_from(table: RawTable, path: str, item_list: np.ndarray, item_column: str,
                 label_column: str) -> np.ndarray:
    for needed in (item_column, label_column):
        if needed not in table.columns:
            hint = table.delimiter_hint()
            raise PanelError(f"labels file has no {needed!r} column",
                             hint=hint or f"a labels file has {item_column!r} and {label_column!r} columns")
    ids = strip_values(table.columns[item_column])
    ys = strip_values(table.columns[label_column])
    codes, uniq, first = factorize_values(ids)
    bad = np.flatnonzero(ys != ys[first[codes]])
    if bad.size:
        r = int(bad[0])
        raise PanelError(f"item {ids[r]!r} has two different labels in the labels file",
                         line=table.first_line + r, column=label_column)
    known = set(np.asarray(item_list, dtype=object).tolist())
    unknown = [r for r in first.tolist() if ids[r] not in known]
    if unknown:
        r = unknown[0]
        raise PanelError(f"labels file {Path(path).name} names {count_of(len(unknown), 'item')} the panel does not "
                         f"have, first {ids[r]!r}", line=table.first_line + r, column=item_column,
                         hint="spell item ids as in the panel file, or remove the rows of other items")
    lookup = dict(zip(uniq.tolist(), ys[first].tolist()))
    return np.array([lookup.get(i, "") for i in item_list], dtype=object)


# -- what a panel holds that no selection can use -------------------------------------------

def constant_judges(panel: Panel) -> list[tuple[str, str]]:
    """(name, its one output as text) of every judge that gives the same output on every row
    that has one: it carries no information (no direction with the label either)."""
    from ..data.panel import MISSING
    out = []
    for j in panel.judges:              # a judge empty on every row is refused when read
        if j.schema == "continuous":
            seen = j.values[~np.isnan(j.values)]
            if seen.size and seen.min() == seen.max():
                out.append((j.name, f"{seen[0]:g}"))
        else:
            used = [j.vocab[c] for c in np.unique(j.codes).tolist() if j.vocab[c] != MISSING]
            if len(used) == 1:
                out.append((j.name, str(used[0])))
    return out


def numbers_read_as_text(panel: Panel) -> list[tuple[str, int, int, list[str]]]:
    """(name, outputs that are numbers, distinct outputs, the others) of every judge read as
    categorical although most of its distinct outputs are finite numbers, because a few are
    numbers this reader does not take: ``75%``, ``1'000``, ``1 000``, ``0x1p-3``, ``inf``,
    ``1e309`` (an output holding a digit, or reading as an infinite number). One such cell
    turns a judge's scores into unrelated categories (``0.31`` and ``0.32`` two words);
    outputs that are words (``error``, ``refused``) are a judge's own categories and leave
    the judge out."""
    import math
    from ..data.panel import MISSING, parse_float
    out = []
    for j in panel.judges:
        if j.schema != "categorical":
            continue
        used = [str(j.vocab[c]) for c in np.unique(j.codes).tolist() if j.vocab[c] != MISSING]
        values = [parse_float(t.strip()) for t in used]
        finite = sum(v is not None and math.isfinite(v) for v in values)
        odd = [(t, v) for t, v in zip(used, values) if v is None or not math.isfinite(v)]
        if finite >= 3 and 2 * finite > len(used) and odd and all(
                any(c.isdigit() for c in t) or v is not None for t, v in odd):
            out.append((j.name, finite, len(used), [t for t, _ in odd]))
    return out


def import_warnings(panel: Panel) -> list[str]:
    """One line per thing a panel may be stored with but no selection can use: a label
    that is the same on every labelled row (a selection on it measures nothing), judges
    that give one output on every row that has one (they carry no information). Shown
    by the import, ``select`` and the Upload page; :func:`check_importable` then refuses
    the constant label for a store."""
    out = []
    lab = panel.labelled
    values = np.unique(panel.labels[lab])
    if len(values) == 1:
        out.append(f"every one of the {int(lab.sum()):,} labelled rows has the label {values[0]:g}: a selection "
                   "on a constant label measures nothing (every judge looks perfect or useless); check the "
                   "label column, or label items of the other class")
    constant = [f"{name!r} ({value!r})" for name, value in constant_judges(panel)]
    if constant:
        shown = ", ".join(constant[:5]) + (f" and {len(constant) - 5} more" if len(constant) > 5 else "")
        one = len(constant) == 1
        out.append(f"{noun_for(len(constant), 'judge')} {shown} {'gives' if one else 'give'} the same output on "
                   f"every row with an output: {'it carries' if one else 'they carry'} no information (check the "
                   f"{noun_for(len(constant), 'column')}, or leave {'it' if one else 'them'} out with --judges)")
    for name, finite, distinct, odd in numbers_read_as_text(panel):
        shown = ", ".join(repr(t) for t in odd[:3]) + (f" and {len(odd) - 3} more" if len(odd) > 3 else "")
        out.append(f"judge {name!r} is read as categorical ({distinct:,} different outputs, each its own "
                   f"category) although {finite:,} of them are numbers: {shown} {'is not a number' if len(odd) == 1 else 'are not numbers'} "
                   "this reader takes (write plain numbers such as 0.75 or 1000, or leave the cell empty for a "
                   "missing output)")
    return out


# -- checks a stored panel must pass ----------------------------------------------------------

def check_importable(panel: Panel, *, label_column: str = "label",
                     group_column: str = "group_id") -> None:
    """Reject panels no selection can use, with the reason (the engine itself accepts
    them and fails later, far from the file): no labels, one label value, fewer than three
    labelled groups when no block column fixes the blocks."""
    lab = panel.labelled
    if not lab.any():
        raise PanelError("no row has a label: FCPS needs human labels to select and calibrate",
                         column=label_column,
                         hint="check the label column mapping (--label-column); empty cells are unlabelled rows")
    values = np.unique(panel.labels[lab])
    if len(values) == 1:
        raise PanelError(f"every labelled row has the same label ({values[0]:g}): one label class "
                         "gives nothing to calibrate against", column=label_column,
                         hint="check the label column mapping, or label items of the other class")
    if panel.blocks is None:
        import pandas as pd      # function-level: importing the reader stays light (scoring)
        groups = pd.unique(panel.group_ids[lab])
        if len(groups) < 3:
            shown = ", ".join(repr(g) for g in groups[:2])
            raise PanelError(f"the {int(lab.sum()):,} labelled rows fall in {count_of(len(groups), 'group')} "
                             f"({shown}); blocks S, M and V are drawn by group and need at least 3",
                             column=group_column,
                             hint="check the group column mapping (--group-column), or give a block column")


# -- import into a store ---------------------------------------------------------------------

def import_file(store, path: str, *, name: str, provenance=None, licence: str | None = None,
                replace: bool = False, collapse_ties: bool = False,
                limits: ImportLimits = DEFAULT_LIMITS, fmt: str | None = None,
                delimiter: str | None = None, source_name: str | None = None, **mapping) -> dict:
    """Read, check and store a panel file in one go; returns the stored panel's facts.

    ``mapping`` takes :func:`load_panel`'s column options. The file is read and checked
    before the store is touched, and written in one transaction: a rejected file leaves
    the store exactly as it was. Errors name ``source_name`` (e.g. an upload's name) or
    else ``path``; ``source_name`` is also the stored source. The facts include ``notes``
    (how the file was read) and ``warnings`` (:func:`import_warnings`), for the user.
    """
    from ..data.stored_names import validate_name
    validate_name(name)
    panel = load_panel(path, fmt=fmt, delimiter=delimiter, limits=limits, name=name,
                       source_name=source_name, **mapping)
    return import_read_panel(store, panel, path, name=name, provenance=provenance, licence=licence,
                             replace=replace, collapse_ties=collapse_ties, fmt=fmt, delimiter=delimiter,
                             source_name=source_name, **mapping)


def import_read_panel(store, panel: Panel, path: str, *, name: str, provenance=None,
                      licence: str | None = None, replace: bool = False, collapse_ties: bool = False,
                      fmt: str | None = None, delimiter: str | None = None,
                      source_name: str | None = None, **mapping) -> dict:
    """Check and store ``panel``, already read from the file at ``path`` by
    :func:`load_panel` with these options (so a previewed upload is stored without being
    read again); returns the stored panel's facts as :func:`import_file` does."""
    from ..data.stored_names import validate_name
    validate_name(name)
    notes, warnings = list(panel.import_notes), list(panel.import_warnings)
    if collapse_ties:
        panel = panel.collapse_neutral()
    try:
        check_importable(panel, label_column=mapping.get("label_column", "label"),
                         group_column=mapping.get("group_column", "group_id"))
    except PanelError as exc:
        raise in_file(exc, shown_name(path if source_name is None else source_name)) from None
    options = {k: v for k, v in {**mapping, "format": fmt, "delimiter": delimiter,
                                 "collapse_ties": collapse_ties}.items() if v is not None}
    info = store.add_panel(panel, name=name, provenance=provenance, licence=licence,
                           source=os.path.basename(path if source_name is None else source_name),
                           source_sha256=file_sha256(path),
                           layout=mapping.get("layout", "auto"), import_options=options,
                           replace=replace)
    return {**info, "notes": notes, "warnings": warnings}


# -- preview -----------------------------------------------------------------------------------

def preview(path: str, *, rows: int = 10, layout: str = "auto",
            item_column: str = "item_id", group_column: str = "group_id",
            label_column: str = "label", block_column: str | None = "block",
            judge_column: str = "judge", output_column: str = "output",
            fmt: str | None = None, delimiter: str | None = None,
            sample_rows: int = 2_000, limits: ImportLimits = DEFAULT_LIMITS,
            source_name: str | None = None, decimal: str | None = None) -> dict:
    """What an import would see, from the first ``sample_rows`` rows, without importing:
    format, layout, the role of every column, the detected schema of each judge (on the
    sample), the first ``rows`` rows as strings, the delimiter read with and the ``notes``
    and ``warnings`` of reading numbers (``decimal``, as :func:`load_panel`). Errors name
    ``source_name`` or ``path``."""
    table = read_columns(path, fmt=fmt, delimiter=delimiter, limits=limits, max_rows=sample_rows,
                         source_name=source_name)
    try:
        return _preview_table(table, path, rows=rows, layout=layout, item_column=item_column,
                              group_column=group_column, label_column=label_column,
                              block_column=block_column, judge_column=judge_column,
                              output_column=output_column, source_name=source_name, decimal=decimal)
    except PanelError as exc:
        raise in_file(exc, shown_name(path if source_name is None else source_name)) from None


def _preview_table(table: RawTable, path: str, *, rows, layout, item_column, group_column,
                   label_column, block_column, judge_column, output_column, source_name,
                   decimal=None) -> dict:
    import pandas as pd
    if layout == "auto":
        layout = detect_layout(table.columns, judge_column=judge_column, output_column=output_column)
    cols, reading = _read_numbers(table, layout, decimal, judges=None, item_column=item_column,
                                  group_column=group_column, label_column=label_column,
                                  block_column=block_column, output_column=output_column)
    fixed = {item_column: "item", group_column: "group", label_column: "label",
             block_column: "block"}
    if layout == "long":
        fixed.update({judge_column: "judge name", output_column: "output"})
    other = "ignored" if layout == "long" else "judge"
    roles = {h: fixed.get(h, other) for h in table.header}
    schemas: dict[str, str] = {}
    if layout == "wide":
        for h, role in roles.items():
            if role == "judge":
                schemas[h] = detect_schema(pd.unique(cols[h]).astype(str))
    else:
        wide = long_to_wide(cols, item_column=item_column, judge_column=judge_column,
                            output_column=output_column, group_column=group_column,
                            label_column=label_column, block_column=block_column or "block",
                            first_line=table.first_line)
        reserved = {item_column, group_column, label_column, block_column}
        for h in wide:
            if h not in reserved:
                schemas[h] = detect_schema(pd.unique(wide[h]).astype(str))
    head = [[str(table.columns[h][i]) for h in table.header] for i in range(min(rows, table.n_rows))]
    warnings = list(reading.warnings)
    if label_column in table.header:
        warnings += [f"judge {j!r} is named like the label column {label_column!r}: the import refuses it as a "
                     "second copy of the labels unless --judges names the judges"
                     for j in label_lookalikes(list(schemas), label_column)]
    return {"file": os.path.basename(path if source_name is None else source_name), "format": table.fmt, "layout": layout,
            "columns": table.header, "roles": roles, "judge_schemas": schemas,
            "sample_rows": table.n_rows, "rows": head, "delimiter": table.delimiter,
            "notes": table.notes + reading.notes, "warnings": warnings,
            "bytes": os.path.getsize(path)}
