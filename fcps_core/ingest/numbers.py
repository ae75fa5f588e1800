"""Numbers written with a decimal comma (``0,85``) or with thousands separators
(``1,234.5``, ``1.234,5``), read from the judge output and label columns before the panel
is built.

A spreadsheet in most European locales exports ``;``-delimited files whose numbers have
a decimal comma. Read as text, such a judge becomes categorical with hundreds of
"distinct outputs" and such labels are refused. This module decides the decimal mark of
a file, from the user (``decimal``: ``","`` or ``"."``) or from its values, and rewrites
every number to the plain form the panel reader parses (``0.85``, ``1234.5``), keeping
its digits (``0,850`` becomes ``0.850``, not a reformatted float). The decision is per
file, as a locale is:

* ``decimal=","``: ``0,85`` and ``1.234,5`` are numbers, ``1.234`` is 1234; a number
  with a decimal point (``0.85``) is refused, located.
* ``decimal="."``: a comma between groups of three digits separates thousands
  (``1,234.5``); any other comma is text, as without this module.
* ``decimal=None`` (detect): in a file delimited by something other than a comma
  (``;``, tab, ``|``), commas that can only be decimal commas (``0,85``) make the comma
  the decimal mark, and commas that can only separate thousands (``1,234.5``) or plain
  decimal points (``0.5``) make it the point; both kinds in one file, or only commas that
  could be either (``1,234``), are refused with the option that settles it. In a
  comma-delimited file (where such a cell must be quoted) or a Parquet/JSON Lines file,
  numbers with commas stay text and a warning names the option.

Item ids, groups and blocks are never rewritten.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from ..wording import noun_for
from ..errors import PanelError

DECIMAL_MARKS = (",", ".")
_SPACES = "\u00a0\u202f "
#: a number whose comma can only be a decimal comma, with optional '.' or space thousands
_DEC_COMMA = re.compile(r"[+-]?(?:\d{1,3}(?:\.\d{3})+|\d{1,3}(?:[ \u00a0\u202f]\d{3})+|\d+)?,\d+(?:[eE][+-]?\d+)?")
#: a number whose commas separate groups of three digits (optional decimal point)
_COMMA_THOUSANDS = re.compile(r"[+-]?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?(?:[eE][+-]?\d+)?")
#: an integer whose points separate groups of three digits (1.234): thousands under ','
_DOT_THOUSANDS = re.compile(r"[+-]?[1-9]\d{0,2}(?:\.\d{3})+")
#: a number with a decimal point that cannot be a thousands grouping (0.85, 3.5, 1.5e-3)
_DOT_DECIMAL = re.compile(r"[+-]?(?:\d*\.\d+|\d+\.)(?:[eE][+-]?\d+)?")


@dataclass
class NumberReading:
    """What :func:`read_numbers` did: ``notes`` (how numbers were read) and ``warnings``
    (what may be misread), each one line naming the columns and the option."""

    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    comma_columns: list[str] = field(default_factory=list)   # columns holding numbers with commas


def check_decimal(decimal) -> str | None:
    """``None``/``"auto"`` (detect), ``","`` or ``"."``; anything else is refused."""
    if decimal is None or decimal == "auto":
        return None
    if decimal not in DECIMAL_MARKS:
        raise PanelError(f"the decimal mark must be ',' or '.' (got {decimal!r})",
                         hint="pass --decimal ',' or --decimal .")
    return decimal


@dataclass
class _Column:
    name: str
    codes: np.ndarray
    uniques: np.ndarray          # stripped distinct values
    first: np.ndarray            # row of each distinct value's first appearance
    comma: np.ndarray            # indices (into uniques) of values holding a comma
    raw: np.ndarray              # the distinct values as read (unchanged ones are kept so)
    dot: np.ndarray              # indices of values holding a point and no comma
    dec: np.ndarray              # per comma value: it reads as a decimal-comma number
    th: np.ndarray               # per comma value: its commas separate thousands


def _example(col: _Column, k: int) -> tuple[str, int]:
    return str(col.uniques[k]), int(col.first[k])


def _distinct(name: str, values) -> _Column:
    import pandas as pd
    from .build import factorize_values
    codes, uniques, first = factorize_values(np.asarray(values, dtype=object))
    stripped = pd.Series(uniques, dtype=object).astype(str).str.strip()
    has_comma = stripped.str.contains(",", regex=False).to_numpy(dtype=bool)
    has_dot = stripped.str.contains(".", regex=False).to_numpy(dtype=bool)
    values = stripped.to_numpy(dtype=object)
    comma = np.flatnonzero(has_comma)
    # each pattern is matched once, on the values that can match it (a few, or the column)
    return _Column(name, codes, values, first, comma, np.asarray(uniques, dtype=object),
                   np.flatnonzero(has_dot & ~has_comma), _matches(values[comma], _DEC_COMMA),
                   _matches(values[comma], _COMMA_THOUSANDS))


def _any_comma(values) -> bool:
    """Whether any value holds a comma, in one C-level join and search."""
    values = np.asarray(values, dtype=object)
    try:
        return "," in "\x00".join(values.tolist())
    except TypeError:                   # not all strings (never from the readers)
        return any("," in str(v) for v in values)


def _matches(values: np.ndarray, pattern: re.Pattern) -> np.ndarray:
    import pandas as pd
    return pd.Series(values, dtype=object).str.fullmatch(pattern.pattern).to_numpy(dtype=bool)


def _as_point(text: str, decimal: str) -> str:
    """``text`` (a number in the ``decimal`` convention) with a decimal point and no
    thousands separators."""
    if decimal == ",":
        for ch in "." + _SPACES:
            text = text.replace(ch, "")
        return text.replace(",", ".")
    return text.replace(",", "")


def read_numbers(columns: Mapping[str, np.ndarray], value_columns: Sequence[str], *,
                 decimal: str | None, delimiter: str | None, first_line: int,
                 may_have_commas: bool = True) -> tuple[dict[str, np.ndarray], NumberReading]:
    """``columns`` with the numbers of ``value_columns`` (judge outputs, labels) in plain
    form, and what was done (see the module doc). ``delimiter`` is the file's field
    delimiter (None: Parquet/JSON Lines); ``may_have_commas`` False (no comma in the
    file's cells, from the content scan) skips the work. Errors are located at the first
    row holding the value (``first_line`` is the file line of row 0)."""
    decimal = check_decimal(decimal)
    report = NumberReading()
    present = [c for c in dict.fromkeys(value_columns) if c in columns]
    if not present or (not may_have_commas and decimal != ","):
        return dict(columns), report
    # one C-level pass per column finds the few columns with a comma (a fully quoted CSV
    # has may_have_commas set, and its columns are rarely factorized for nothing)
    commas = [c for c in present if _any_comma(columns[c])]
    with_commas = [_distinct(c, columns[c]) for c in commas]
    cols = None                 # every value column's distinct values, when they are needed

    def every_column() -> list[_Column]:
        nonlocal cols
        if cols is None:
            done = {c.name: c for c in with_commas}
            cols = [done.get(c) or _distinct(c, columns[c]) for c in present]
        return cols
    if decimal is None:
        if not with_commas:
            return dict(columns), report
        if delimiter in (None, ","):
            _warn_text(with_commas, report, delimiter)
            return dict(columns), report
        decimal = _detect(every_column, with_commas, first_line)
        if decimal is None:
            return dict(columns), report
        detected = True
    else:
        detected = False
    # under a decimal comma, points matter in every column (1.234 is 1234; 0.85 is refused)
    cols = every_column() if decimal == "," else with_commas
    out = dict(columns)
    changed: list[tuple[str, str, str]] = []
    for col in cols:
        new = _rewrite(col, decimal, first_line)
        if new is not None:
            uniques, example = new
            out[col.name] = uniques[col.codes]
            changed.append((col.name, *example))
    if changed:
        names = ", ".join(repr(n) for n, _, _ in changed[:4]) + (" ..." if len(changed) > 4 else "")
        _, before, after = changed[0]
        how = "decimal commas" if decimal == "," else "thousands separators"
        note = f"{how} read as numbers in {noun_for(len(changed), 'column')} {names} ({before!r} -> {after})"
        if detected:
            note += (" (detected: pass --decimal . if the comma means something else)" if decimal == "," else
                     " (detected: pass --decimal ',' if the comma is the decimal mark)")
        report.notes.append(note)
    report.comma_columns = [c.name for c in with_commas]
    if decimal == ".":
        _warn_text([c for c in with_commas if c.name not in {n for n, _, _ in changed}], report, delimiter,
                   only=True, why="the decimal mark is '.'")
    return out, report


def _warn_text(with_commas: list[_Column], report: NumberReading, delimiter: str | None, *,
               only: bool = False, why: str | None = None) -> None:
    """Numbers with commas that stay text (a comma-delimited or structured file, or, with
    ``only``, decimal-comma numbers under a stated decimal point): one warning per column."""
    for col in with_commas:
        hits = col.comma[col.dec if only else (col.dec | col.th)]
        if hits.size:
            v = str(col.uniques[int(hits[0])])
            where = why or ("in a comma-delimited file" if delimiter == "," else "in a Parquet or JSON Lines file")
            report.warnings.append(
                f"column {col.name!r} holds numbers written with a comma ({v!r}), read as text ({where}): "
                "pass --decimal ',' if the comma is the decimal mark" + ("" if only else
                                                                        ", or --decimal . if it separates thousands"))
            if col.name not in report.comma_columns:
                report.comma_columns.append(col.name)


def _detect(every_column, with_commas: list[_Column], first_line: int) -> str | None:
    """The decimal mark the values of a non-comma-delimited file show, or None (no
    number with a comma); refuses a file showing both marks, or only ambiguous commas."""
    comma_dec = comma_th = ambiguous = None         # (column, value, row) of a first example
    for col in with_commas:
        # uniques are in order of first appearance: the first hit is the earliest row
        for kind, mask in (("ambiguous", col.dec & col.th), ("dec", col.dec & ~col.th), ("th", col.th & ~col.dec)):
            hits = col.comma[mask]
            if not hits.size:
                continue
            example = (col.name, *_example(col, int(hits[0])))
            if kind == "ambiguous":
                ambiguous = ambiguous or example
            elif kind == "dec":
                comma_dec = comma_dec or example
            else:
                comma_th = comma_th or example
    if comma_dec is None and comma_th is None and ambiguous is None:
        return None                                  # commas only in text
    point = comma_th
    if point is None:
        for col in every_column():
            dots = col.uniques[col.dot]       # 1.234 could be thousands: no evidence
            hits = col.dot[_matches(dots, _DOT_DECIMAL) & ~_matches(dots, _DOT_THOUSANDS)]
            if hits.size:
                point = (col.name, *_example(col, int(hits[0])))
                break
    hint = "pass --decimal ',' or --decimal . to say which mark the file uses"
    if comma_dec is not None and point is not None:
        (c1, v1, _), (c2, v2, r2) = comma_dec, point
        where = f"column {c1!r} has both {v1!r}" if c1 == c2 else f"column {c1!r} has {v1!r}"
        raise PanelError(f"the file mixes decimal marks: {where} (a decimal comma) and "
                         + ("" if c1 == c2 else f"column {c2!r} has ") + f"{v2!r} (a decimal point or thousands "
                         "commas)", line=first_line + r2, column=c2, hint=hint)
    if comma_dec is not None:
        return ","
    if point is not None:
        return "."
    c, v, r = ambiguous
    return _ambiguous(c, v, r, first_line, hint)


def _ambiguous(column: str, value: str, row: int, first_line: int, hint: str):
    raise PanelError(f"{value!r} is ambiguous: a decimal comma ({_as_point(value, ',')}) or a thousands "
                     f"separator ({_as_point(value, '.')})?", line=first_line + row, column=column, hint=hint)


def _rewrite(col: _Column, decimal: str, first_line: int):
    """(new distinct values, (first changed value, its rewrite)) for ``col`` in the
    ``decimal`` convention, or None when nothing changes."""
    new = col.uniques.copy()
    convert = np.zeros(len(new), dtype=bool)
    if decimal == ",":
        dot_thousands = _matches(new[col.dot], _DOT_THOUSANDS)          # 1.234 is 1234 here
        point = col.dot[~dot_thousands & _matches(new[col.dot], _DOT_DECIMAL)]
        if point.size:
            k = int(point[0])                       # in order of first appearance
            raise PanelError(f"{new[k]!r} has a decimal point, but the file's decimal mark is ','",
                             line=first_line + int(col.first[k]), column=col.name,
                             hint="fix the value, or pass --decimal . if the file uses decimal points")
        convert[col.dot[dot_thousands]] = True
        convert[col.comma[col.dec]] = True
    else:
        convert[col.comma[col.th]] = True
    rows = np.flatnonzero(convert)
    if not rows.size:
        return None
    import pandas as pd
    plain = pd.Series(new[rows], dtype=object)
    if decimal == ",":
        plain = plain.str.replace(r"[.\u00a0\u202f ]", "", regex=True).str.replace(",", ".", regex=False)
    else:
        plain = plain.str.replace(",", "", regex=False)
    out = col.raw.copy()
    out[rows] = plain.to_numpy(dtype=object)
    k = int(rows[np.argmin(col.first[rows])])
    example = (str(col.uniques[k]), str(out[k]))
    new = out
    return None if example is None else (new, example)
