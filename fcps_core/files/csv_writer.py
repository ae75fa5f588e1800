"""The one CSV writer, and the panel as wide rows (exports) and as a wide CSV file.

Every CSV the package writes -- ``score --out`` and ``audit --out`` predictions, ``export
--format csv``, synthetic panels, the dashboard's table downloads -- is built from cells
made by :func:`csv_cell`, so no cell runs as a spreadsheet formula.

The rule (:func:`csv_cell`):

* a number (``int``, ``float``, numpy numbers; not ``bool``) is written as a number, never
  changed: a negative score such as ``-0.5`` stays ``-0.5`` (non-finite floats are empty);
* anything else is text, and text goes through :func:`neutralise_cell`: a cell beginning with
  ``=``, ``+``, ``-``, ``@``, tab, carriage return or line feed (or their full-width forms
  ``＝ ＋ － ＠``, which some spreadsheets also read as formulas) gets a leading apostrophe,
  unless the whole text is a plain decimal number such as ``-3`` or ``+1.5e2`` (a spreadsheet
  reads that as the number, not as a formula, so it stays as written).

A neutralised text cell therefore reads back with the apostrophe (an item id ``=1+1`` is
``'=1+1`` in a predictions file): the price of a file that is safe to open.
"""

from __future__ import annotations

import csv
import io
import math

import numpy as np

from ..data.panel import Panel

#: first characters that make a spreadsheet read a cell as a formula (OWASP's list, with the
#: line feed and the full-width forms)
FORMULA_STARTS = frozenset("=+-@\t\r\n\uff1d\uff0b\uff0d\uff20")
_NUMBER_CHARS = set("0123456789.eE+-")


def neutralise_cell(value) -> str:
    """Text for a CSV cell that no spreadsheet runs as a formula (see the module doc)."""
    text = "" if value is None else str(value)
    if text[:1] in FORMULA_STARTS:
        if set(text) <= _NUMBER_CHARS:
            try:
                float(text)
                return text
            except ValueError:
                pass
        return "'" + text
    return text


def needs_neutralising(text: str) -> bool:
    """Whether :func:`neutralise_cell` changes ``text``."""
    return text[:1] in FORMULA_STARTS and neutralise_cell(text) != text


def csv_cell(value) -> str:
    """One CSV cell: numbers as numbers (repr of a float, empty when not finite), every
    other value as neutralised text."""
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return neutralise_cell(str(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return repr(v) if math.isfinite(v) else ""
    return neutralise_cell(value)


def csv_text(header, rows, *, lineterminator: str = "\r\n") -> str:
    """CSV text of ``header`` and ``rows`` with every cell made by :func:`csv_cell`
    (quoted by ``csv.writer`` where needed)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator=lineterminator)
    w.writerow([csv_cell(h) for h in header])
    for r in rows:
        w.writerow([csv_cell(v) for v in r])
    return buf.getvalue()


def write_csv(path: str, header, rows, *, force: bool = False, lineterminator: str = "\r\n") -> None:
    """:func:`csv_text` to ``path`` (atomically; an existing file only with ``force``)."""
    from .safe_write import write_output
    write_output(path, csv_text(header, rows, lineterminator=lineterminator).encode("utf-8"), force=force)


def frame_csv(df) -> str:
    """A pandas DataFrame as CSV text by :func:`csv_text`: numeric columns keep their
    numbers, text (object and string columns, and the column names) is neutralised."""
    header = [str(c) for c in df.columns]
    cells = df.astype(object).where(df.notna(), None)      # NaN, NaT, pd.NA: empty cells
    return csv_text(header, cells.itertuples(index=False, name=None), lineterminator="\n")


def panel_to_wide_rows(panel: Panel) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a wide CSV for ``panel`` (labels in [0,1], outputs as recorded)."""
    header = ["item_id", "group_id", "label"] + (["block"] if panel.blocks is not None else []) \
        + panel.judge_names
    outs = [j.raw_outputs() for j in panel.judges]
    rows = []
    for i in range(panel.n_rows):
        y = panel.labels[i]
        row = [panel.item_ids[i], panel.group_ids[i], "" if np.isnan(y) else repr(float(y))]
        if panel.blocks is not None:
            row.append(panel.blocks[i])
        row += ["" if o[i] == "<missing>" else o[i] for o in outs]
        rows.append(row)
    return header, rows


def write_wide_csv(panel: Panel, path: str, *, force: bool = False) -> None:
    """The panel as a wide CSV (atomically; an existing file only with ``force``), through
    the one CSV writer."""
    header, rows = panel_to_wide_rows(panel)
    write_csv(path, header, rows, force=force)
