"""What the front ends write files and JSON through: safe file writing (a file is never
half-written, nor replaced unless the user asked: :mod:`fcps_core.files.safe_write`), the one CSV
writer that neutralises spreadsheet formulas (:mod:`fcps_core.files.csv_writer`), and JSON-ready
values (:func:`fcps_core.files.json_values.json_ready`: NaN as null, numpy scalars as numbers)."""

from __future__ import annotations

from ..files.json_values import json_ready  # noqa: F401
from ..files.safe_write import atomic_output, check_output_path, write_output  # noqa: F401


def csv_text(header, rows, **options) -> str:
    """Rows as CSV text through the one neutralising writer (:func:`fcps_core.files.csv_writer.csv_text`)."""
    from ..files.csv_writer import csv_text as text
    return text(header, rows, **options)


def frame_csv(frame) -> str:
    """A DataFrame as CSV through the one neutralising writer (:func:`fcps_core.files.csv_writer.frame_csv`)."""
    from ..files.csv_writer import frame_csv as text
    return text(frame)


def panel_to_wide_rows(panel):
    """(header, rows) of a panel as a wide table (:func:`fcps_core.files.csv_writer.panel_to_wide_rows`)."""
    from ..files.csv_writer import panel_to_wide_rows as rows
    return rows(panel)
