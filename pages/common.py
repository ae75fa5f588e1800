"""Shared page helpers: panel sources, cached runs, downloads (no statistics here)."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from fcps_core import FCPSError, make_blocks, read_panel, select
from fcps_core.experiments import calibration_growth

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
STORED = "stored: "


@st.cache_resource(show_spinner="Opening the store (first start seeds the demo panels and runs)...")
def get_store():
    """The process's store handle, created and seeded with the demo content on first start."""
    from fcps_core.seed import ensure_default_store
    return ensure_default_store()


@st.cache_data(show_spinner="Loading panel...", max_entries=16)
def load_stored(name: str, created_at: str):
    # created_at is part of the cache key: a re-imported panel of the same name reloads.
    return get_store().load_panel(name)


def stored_panels() -> list[dict]:
    return get_store().panels()


@st.cache_data(show_spinner="Reading upload...", max_entries=8)
def load_bytes(name: str, data: bytes, options_json: str = "{}"):
    """Parse uploaded bytes with the library's reader (errors surface as FCPSError)."""
    options = json.loads(options_json)
    suffix = "".join(Path(name).suffixes) or ".csv"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "upload" + suffix)
        with open(path, "wb") as fh:
            fh.write(data)
        return read_panel(path, name=Path(name).stem, **options)


def panel_sources() -> dict[str, tuple]:
    """Label -> loader arguments for every panel this session can use."""
    sources = {f"{STORED}{p['name']}": ("stored", p["name"], str(p["created_at"])) for p in stored_panels()}
    for name, (data, options_json) in st.session_state.get("uploads", {}).items():
        sources[f"uploaded: {name}"] = ("upload", name, data, options_json)
    if "lab_panel" in st.session_state:
        sources["synthetic lab panel"] = ("lab",)
    return sources


def get_panel(source: tuple):
    if source[0] == "stored":
        return load_stored(source[1], source[2])
    if source[0] == "upload":
        return load_bytes(source[1], source[2], source[3])
    return st.session_state["lab_panel"]


def panel_picker():
    """Radio over the available panels; returns (label, panel) or stops the page with an error."""
    sources = panel_sources()
    options = list(sources)
    current = st.session_state.get("current_panel")
    # The last panel picked on any page stays picked on the others.
    label = st.selectbox("Panel", options, index=options.index(current) if current in options else 0)
    st.session_state["current_panel"] = label
    try:
        return label, get_panel(sources[label])
    except FCPSError as exc:
        st.error(str(exc))
        st.stop()


def split_sizes_table(panel, blocks) -> pd.DataFrame:
    return pd.DataFrame([{"block": b, "labelled rows": len(getattr(blocks, b)),
                          "groups": len(set(panel.group_ids[getattr(blocks, b)]))} for b in "SMVT"])


def run_selection(panel, split, counts, seed, progress, **menu):
    blocks = make_blocks(panel, split=split, counts=counts, seed=seed)
    return select(panel, blocks, seed=seed, progress=progress, **menu)


def run_sweep(panel, budgets, progress, **kwargs):
    return calibration_growth(panel, budgets, progress=progress, **kwargs)


def stored_name(label: str) -> str | None:
    """The store's panel name behind a picker label, or None for unsaved panels."""
    return label[len(STORED):] if label.startswith(STORED) else None


def save_run(kind: str, label: str, result) -> int | None:
    """Store a selection or sweep run on a stored panel; returns the run id (None if unsaved)."""
    name = stored_name(label)
    if name is None:
        return None
    store = get_store()
    run_id = store.save_selection(result, panel=name) if kind == "select" else store.save_sweep(result, panel=name)
    st.cache_data.clear()   # run lists and panel facts changed
    return run_id


def digest(obj) -> str:
    return hashlib.sha1(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:10]


def figure_download(fig, name: str) -> None:
    # plotly.js is embedded so the file opens offline; built only when clicked (it is ~4 MB).
    st.download_button(f"Download {name} (HTML)", lambda: fig.to_html(include_plotlyjs=True), f"{name}.html",
                       mime="text/html", key=f"dl-{name}")


def table_download(df: pd.DataFrame, name: str) -> None:
    st.download_button(f"Download {name} (CSV)", df.to_csv(index=False), f"{name}.csv", mime="text/csv",
                       key=f"dl-{name}")
