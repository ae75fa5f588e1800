"""The readers: the one way a file becomes a panel.

Panel import: DuckDB-based readers for CSV, TSV, Parquet and JSON Lines (optionally
gzipped), column mapping, preview, size limits and the checks a stored panel must pass.

Large files are parsed by DuckDB (a multi-threaded C++ reader), never row by row in
Python. Values are kept as strings and handed to :mod:`fcps_core.data.panel`, so a file imported
here yields exactly the panel that the row-by-row reference reader (``tests/reference/row_reader.py``) builds from it:

* :func:`build_panel` is the reference ``panel_from_columns`` computed on each column's *distinct*
  values (``pandas.factorize``) and broadcast back, which is what makes a 1,000,000-row
  import fast. Errors are re-located to the first file line holding the offending value.
* :func:`long_to_wide` is a vectorised reference ``long_to_wide``.

A CSV/TSV file whose header only another delimiter splits is read with it; judge outputs and
labels written with a decimal comma or thousands separators are read as numbers
(:mod:`.numbers`, ``decimal``). A loaded panel carries ``import_notes`` (how it was read) and
``import_warnings`` (:func:`import_warnings`: what may be misread or no selection can use).

Every problem is one :class:`PanelError` naming the line and/or column and what to do.
Limits (:class:`ImportLimits`) bound the file size, rows, judges and distinct outputs per
judge, and are checked as early as possible (judge count from the header, before any data
is read).
"""

from .build import build_panel, judge_column, labels_from_strings, labels_with_report, remap_outputs
from .columns import RawTable, read_columns
from .files import DEFAULT_LIMITS, FORMATS, MB, UPLOAD_SUFFIXES, ImportLimits, detect_format, file_sha256
from .layout import detect_layout, long_to_wide
from .load import as_panel, check_importable, import_file, import_warnings, load_panel, preview
from .mapping import FLAG_OPTIONS, judge_mappings, output_mapping, page_wording
from .uploads import save_upload

__all__ = ["ImportLimits", "DEFAULT_LIMITS", "FORMATS", "MB", "UPLOAD_SUFFIXES", "RawTable",
           "detect_format", "read_columns", "load_panel", "as_panel", "build_panel", "judge_column",
           "labels_from_strings", "detect_layout", "long_to_wide", "check_importable",
           "import_file", "import_warnings", "preview", "save_upload", "file_sha256", "labels_with_report", "remap_outputs",
           "FLAG_OPTIONS", "judge_mappings", "output_mapping", "page_wording"]
