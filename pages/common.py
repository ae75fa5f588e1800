"""Cached loaders shared by the pages (no statistics here)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import streamlit as st

from fcps_core import read_panel

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
EMBEDDED = {"LLMBar (pairwise, 65 judges)": "llmbar.csv",
            "HANNA (continuous scores, 92 judges)": "hanna.csv"}


@st.cache_data(show_spinner="Reading panel...")
def load_embedded(filename: str):
    return read_panel(str(DATA_DIR / filename))


def load_upload(name: str, data: bytes):
    suffix = "".join(Path(name).suffixes) or ".csv"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "upload" + suffix)
        with open(path, "wb") as fh:
            fh.write(data)
        return read_panel(path, name=Path(name).stem)
