"""Glossary help and number formats for dashboard tables and metrics (the words live in
``fcps_core.reports.glossary``).

Every page shows tables through ``table`` and single figures through ``metric`` so each
column and metric carries its one-sentence definition as a tooltip; a column the glossary
does not know keeps plain help naming it (tests check every column has help). ``table`` also
gives each numeric column one format (counts whole, risks at 4 decimals, ...), shows a
missing value as "–" (never "None"), leaves out columns with no value at all and never
prints "-0.000".
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import streamlit as st

from fcps_core.reports.glossary import PAPER_TITLE, help_text, search

#: how a missing number is shown
BLANK = "–"
#: the one column the glossary leaves out on purpose ("label" is a run's tag in the run
#: tables and the report): its plain words here
_PLAIN = {"label": "Human label."}
#: number formats of columns whose scale differs from a risk's (others: ``digits`` decimals)
FORMATS = {"K": "%d", "run_id": "%d", "run": "%d", "seed": "%d", "index": "%d", "grid_size": "%d", "n_M": "%d",
           "splits": "%d", "N_z": "%d", "traffic_rows": "%d", "Q_K": "compact", "S_K": "%.1f", "H_K": "%.2f",
           "seconds": "%.1f", "mean table K": "%.1f", "models": "%d", "runs": "%d", "n_rows": "%d",
           "n_labelled": "%d", "n_judges": "%d", "labelled rows": "%d", "groups": "%d"}


def column_help(column: str) -> str:
    return help_text(str(column)) or _PLAIN.get(str(column)) or f"{column}."


def number(v, spec: str) -> str:
    """One number in a column format: printf style ("%.4f", "%+.4f", "%d") or "compact"."""
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return BLANK
    if spec == "compact":
        v = float(v)
        return f"{v:,.0f}" if abs(v) < 1e6 and v == int(v) else f"{v:.3g}"
    text = spec % (round(v) if "d" in spec else v)
    # a value that prints as zero has no sign: "-0.000" and a signed format's "+0.00000" give a direction
    # rounding made up (walk 7: a drop-one change of 3e-07 read "+0.00000" beside "no clear change")
    return text[1:] if text[:1] in "+-" and not re.search(r"[1-9]", text) else text


def _decimals(spec: str) -> int | None:
    m = re.fullmatch(r"%\+?\.(\d+)f", spec)
    return int(m.group(1)) if m else None


def _numeric(col: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)


def _blank_text(v):
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NaT:
        return ""
    return v


def display_frame(df: pd.DataFrame, *, formats: dict | None = None, digits: int = 4,
                  drop_empty: bool = True) -> tuple[pd.DataFrame, dict]:
    """(frame to show, column -> number format): columns without any value dropped, a number
    column with gaps turned into right-aligned text ("–" for the gaps), text gaps blank, and
    a float that prints as zero set to 0 (so -0.0001 at 3 decimals shows 0.000, not -0.000)."""
    frame = df.copy()
    if drop_empty and len(frame):
        frame = frame[[c for c in frame.columns if not frame[c].isna().all()]]
    specs = {}
    for c in frame.columns:
        col = frame[c]
        if _numeric(col):
            spec = (formats or {}).get(c) or FORMATS.get(str(c)) or \
                ("%d" if pd.api.types.is_integer_dtype(col) else f"%.{digits}f")
            specs[c] = spec
            signed_zero = spec.startswith("%+") and _decimals(spec) is not None and \
                bool((np.round(col.astype(float), _decimals(spec)) == 0).any())
            if col.isna().any() or signed_zero:
                # text (right-aligned): a signed format cannot print a zero without its sign
                frame[c] = [number(v, spec) for v in col]
            elif _decimals(spec) is not None:     # values that print as zero are zero (never "-0.000")
                values = col.astype(float)
                frame[c] = values.where(np.round(values, _decimals(spec)) != 0, 0.0)
        elif pd.api.types.is_datetime64_any_dtype(col) and col.isna().any():
            frame[c] = ["" if pd.isna(v) else f"{v:%Y-%m-%d %H:%M:%S}" for v in col]
        elif not pd.api.types.is_bool_dtype(col) and col.isna().any():
            frame[c] = pd.Series([_blank_text(v) for v in col], index=col.index, dtype=object)
    return frame, specs


def _width(col: pd.Series) -> int | None:
    """A text column wide enough (in pixels) for its longest value, up to 700: the grid
    otherwise sizes it by its first rows and cuts identifiers such as "logistic_pairwise" to
    "logistic_pairwi"."""
    longest = max((len(str(v)) for v in col.head(500)), default=0)
    # from 7 characters on (walk 12: "strongA_v2" read "strongA_"), up to a drop-one verdict's length
    return min(700, 8 * longest + 28) if longest > 6 else None


def _text(col: pd.Series) -> bool:
    """A column of text: object dtype, or pandas 3's string dtype (with pandas 3 the widths of
    :func:`_width` went unset, and a judges list read "J1, J2, J2…", walk 11)."""
    return col.dtype == object or isinstance(col.dtype, pd.StringDtype)


def _config(frame: pd.DataFrame, specs: dict, helps: dict | None, given: dict | None) -> dict:
    config = {}
    for c in frame.columns:
        text = (helps or {}).get(c) or column_help(c)
        mine = (st.column_config.NumberColumn(help=text, format=specs[c])
                if c in specs and _numeric(frame[c]) else
                st.column_config.TextColumn(help=text, alignment="right") if c in specs else
                st.column_config.Column(help=text, width=_width(frame[c])) if _text(frame[c]) else
                st.column_config.Column(help=text))
        theirs = (given or {}).get(c)
        if theirs:
            # a given entry sets what it names (a label, a width...); the rest, such as the number
            # format, stays this table's
            out = dict(mine) | {k: v for k, v in dict(theirs).items() if v is not None}
            out["help"] = out.get("help") or text
            if c in specs and not _numeric(frame[c]) and (out.get("type_config") or {}).get("type") in (
                    "number", "progress"):     # gaps made it text: keep its label, help and width
                out["type_config"] = {"type": "text"}
                out["alignment"] = out.get("alignment") or "right"
            mine = out
        config[str(c)] = mine
    return config


def table(df: pd.DataFrame, *, helps: dict | None = None, formats: dict | None = None, digits: int = 4,
          drop_empty: bool = True, row_style=None, **kwargs):
    """``st.dataframe`` with glossary help on every column (``helps`` overrides it where a
    column means something page-specific), one number format per column (``formats``, else
    ``FORMATS``, else ``digits`` decimals), "–" for a missing number and no all-empty column.
    ``row_style``: a Styler row function (row -> list of CSS); ``column_config`` entries
    (labels, widths, progress bars) are kept, with the glossary help where they give none."""
    given = {c: ((conf or {}).get("type_config") or {}).get("format")      # a given number format wins
             for c, conf in (kwargs.get("column_config") or {}).items()}
    formats = (formats or {}) | {c: f for c, f in given.items() if f}
    frame, specs = display_frame(df, formats=formats, digits=digits, drop_empty=drop_empty)
    config = _config(frame, specs, helps, kwargs.pop("column_config", None))
    kwargs.setdefault("hide_index", True)
    if "column_order" in kwargs:
        kwargs["column_order"] = [c for c in kwargs["column_order"] if c in frame.columns]
    shown = frame.style.apply(row_style, axis=1) if row_style is not None else frame
    return st.dataframe(shown, column_config=config, **kwargs)


def dataframe(df, **kwargs):
    """``table`` under its older name (every page's tables go through it)."""
    return table(df, **kwargs)


def metric(container, key: str, value, *, label: str | None = None, extra: str = "", **kwargs):
    """``container.metric`` with the glossary sentence (plus ``extra``) as its tooltip."""
    text = (help_text(key) or _PLAIN.get(key) or "") + (f" {extra}" if extra else "")
    return container.metric(label or key, value, help=text or None, **kwargs)


def glossary_expander(title: str = "Glossary: what the symbols mean") -> None:
    """Every glossary term, filtered by a search box (each word must appear in the term's
    name, sentence or formula), so a reader finds "V_proxy" or "unseen" without scrolling."""
    with st.expander(title):
        query = st.text_input("Search the glossary", key="glossary_search", placeholder="e.g. unseen, n_M, pressure",
                              help="Shows the terms whose name, sentence or formula contains every word typed.")
        found = search(query)
        if not found:
            st.caption("No term matches; try one word.")
        else:
            st.markdown("\n".join(f"- **{t.name}**: {t.help}" for t in found))
        st.caption(f"Formulas and references follow the paper \"{PAPER_TITLE}\".")
