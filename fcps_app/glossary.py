"""Glossary help for dashboard tables and metrics (the words live in ``fcps_core.glossary``).

Every page shows tables through ``dataframe`` and single figures through ``metric`` so
each column and metric carries its one-sentence definition as a tooltip; a column the
glossary does not know keeps plain help naming it (tests check every column has help).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from fcps_core.glossary import entries, help_text

# Columns that are self-explanatory identifiers: their help says what they are in words.
_PLAIN = {"judge": "Judge (a column of the panel).", "judges": "The judges the candidate uses, in path order.",
          "pattern": "The joint output pattern z of the judges, one output per judge.",
          "item_id": "Item identifier from the panel.", "label": "Human label.",
          "run_id": "Stored run number.", "panel": "Stored panel name.", "kind": "Run kind.",
          "status": "Run status.", "finished_at": "When the run finished.", "index": "Candidate number.",
          "params": "Fitted parameters.", "parameters": "Fitted parameters.", "mean prediction":
          "Mean deployed prediction over the rows in this cell."}


def column_help(column: str) -> str:
    return help_text(str(column)) or _PLAIN.get(str(column)) or f"{column}."


def column_config(df: pd.DataFrame) -> dict:
    """``st.dataframe`` column_config giving every column its glossary help."""
    return {str(c): st.column_config.Column(help=column_help(c)) for c in df.columns}


def dataframe(df, **kwargs):
    """``st.dataframe`` with glossary help on every column (accepts a Styler too)."""
    frame = df.data if hasattr(df, "data") and not isinstance(df, pd.DataFrame) else df
    config = column_config(frame) | (kwargs.pop("column_config", None) or {})
    kwargs.setdefault("hide_index", True)
    return st.dataframe(df, column_config=config, **kwargs)


def metric(container, key: str, value, *, label: str | None = None, extra: str = "", **kwargs):
    """``container.metric`` with the glossary sentence (plus ``extra``) as its tooltip."""
    text = (help_text(key) or _PLAIN.get(key) or "") + (f" {extra}" if extra else "")
    return container.metric(label or key, value, help=text or None, **kwargs)


def glossary_expander(title: str = "Glossary: what the symbols mean") -> None:
    with st.expander(title):
        st.markdown("\n".join(f"- **{t.name}**: {t.help}" for t in entries()))
