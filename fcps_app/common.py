"""Shared page helpers: panel sources, cached runs, downloads (no statistics here)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import streamlit as st

from fcps_core.errors import FCPSError
from fcps_core.service import select as selection
from fcps_core.service import upload as uploads

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
STORED = "stored: "


@st.cache_resource(show_spinner="Opening the store (a new store gets the demo panels and runs)...")
def get_store():
    """The process's store handle, created on first start with the demo content copied in
    from the shipped snapshot (``fcps_core.seed.load_snapshot``: no model is fitted while
    the first page waits)."""
    from fcps_core.service.stores import default_store
    return default_store()


@st.cache_data(show_spinner="Loading panel...", max_entries=16)
def load_stored(store_path: str, name: str, created_at: str):
    """(panel, version) read in one snapshot. The store's path and created_at are part of the
    cache key: another store's panel of the same name, or a re-imported one, reloads."""
    return get_store().load_versioned_panel(name)


def stored_panels() -> list[dict]:
    return get_store().panels()


def upload_path(name: str, data: bytes) -> str:
    """Uploaded bytes saved under the store's ``uploads/`` folder (content-addressed; the
    user's file name contributes only its suffix, so it cannot escape the folder): see
    :func:`fcps_core.service.upload.upload_path`."""
    return uploads.upload_path(get_store(), name, data)


@st.cache_data(show_spinner="Reading upload...", max_entries=8)
def upload_preview(name: str, data: bytes) -> dict:
    return uploads.preview_upload(get_store(), name, data)


@st.cache_data(show_spinner="Reading upload...", max_entries=8)
def load_bytes(name: str, data: bytes, options_json: str = "{}"):
    """Parse uploaded bytes with the importer (CSV/TSV/Parquet/JSONL; errors are FCPSError):
    the one full read of an upload (cached per file and options, so the page's reruns and the
    commit to the store reuse it)."""
    return uploads.parse_upload(get_store(), name, data, json.loads(options_json))


def import_upload(name: str, data: bytes, options: dict, *, panel_name: str, licence: str,
                  replace: bool = False):
    """Store an upload through the same checks and limits as ``python -m fcps_core import``,
    committing the panel :func:`load_bytes` read (the file is not read again)."""
    store = get_store()
    before = store.panel_info(panel_name) if replace and store.has_panel(panel_name) else None
    panel = load_bytes(name, data, json.dumps(options, sort_keys=True))
    info = uploads.commit_upload(store, panel, name, data, options, panel_name=panel_name, licence=licence,
                                 replace=replace)
    if before is not None:      # the replaced panel's cached copy goes; nothing else changed
        load_stored.clear(str(store.path), panel_name, str(before["created_at"]))
    return info


def panel_sources() -> dict[str, tuple]:
    """Label -> loader arguments for every panel this session can use."""
    sources = {f"{STORED}{p['name']}": ("stored", p["name"], str(p["created_at"])) for p in stored_panels()}
    for name, (filename, data, options_json) in st.session_state.get("uploads", {}).items():
        sources[f"uploaded: {name}"] = ("upload", filename, data, options_json)
    return sources


def get_panel(source: tuple):
    if source[0] == "stored":
        panel, version = load_stored(str(get_store().path), source[1], source[2])
        # the version this session computes on: a save after the panel was replaced is refused
        st.session_state.setdefault("panel_versions", {})[source[1]] = version
        return panel
    return load_bytes(source[1], source[2], source[3])


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
        st.error(md(exc))
        st.stop()


def split_sizes_table(panel, blocks) -> pd.DataFrame:
    return pd.DataFrame(selection.block_sizes(panel, blocks))


def run_selection(panel, split, counts, seed, progress, *, judge_costs=None, **menu):
    """A selection on ``panel`` (not stored): fcps_core.service.select.run_select's result."""
    request = selection.SelectRequest(panel, split=split, counts=counts, seed=seed, options=menu,
                                      judge_costs=judge_costs, progress=progress, want_predictor=False)
    return selection.run_select(request).result


def run_sweep(panel, budgets, progress, **kwargs):
    from fcps_core.service.sweep import run_sweep as sweep
    return sweep(panel, budgets, progress=progress, **kwargs)


def stored_name(label: str) -> str | None:
    """The store's panel name behind a picker label, or None for unsaved panels."""
    return label[len(STORED):] if label.startswith(STORED) else None


def save_run(kind: str, label: str, result, *, predictor: dict | None = None) -> int | None:
    """Store a selection (with its ``predictor`` dict) or sweep run on a stored panel;
    returns the run id (None if unsaved)."""
    name = stored_name(label)
    if name is None:
        return None
    store = get_store()
    version = st.session_state.get("panel_versions", {}).get(name)
    try:
        if kind == "select":
            run_id = selection.store_selection(store, result, panel_name=name, predictor=predictor,
                                               panel_version=version)
        else:
            from fcps_core.service.sweep import store_sweep
            run_id = store_sweep(store, result, panel_name=name, panel_version=version)
    except FCPSError as exc:        # e.g. the panel was replaced while this run computed
        st.error(md(exc))
        return None
    # nothing cached changes: run lists are read from the store on each rerun, and a new run
    # has a new id (stored_run caches runs by id)
    return run_id


def remember_selection(label: str, result, predictor=None) -> None:
    """A finished selection: stored as a run (stored panels) with its predictor (``predictor``,
    else the result's), and kept as this session's selection for every page."""
    predictor = (predictor or result.predictor()).to_dict()
    run_id = save_run("select", label, result, predictor=predictor)
    st.session_state["selection"] = {"label": label, "result": result, "dict": result.to_dict(),
                                     "predictor": json.dumps(predictor), "run_id": run_id}


def digest(obj) -> str:
    return hashlib.sha1(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:10]


def figure_download(fig, name: str) -> None:
    # plotly.js is embedded so the file opens offline; built only when clicked (it is ~4 MB).
    st.download_button(f"Download {name} (HTML)", lambda: fig.to_html(include_plotlyjs=True), f"{name}.html",
                       mime="text/html", key=f"dl-{name}")


def table_download(df: pd.DataFrame, name: str) -> None:
    """CSV download through the one CSV writer (fcps_core.files.csv_writer.frame_csv): text cells that
    could run as spreadsheet formulas (= + - @ ...) neutralised, numbers kept, as in exports."""
    from fcps_core.service.files import frame_csv
    st.download_button(f"Download {name} (CSV)", frame_csv(df), f"{name}.csv", mime="text/csv",
                       key=f"dl-{name}")


#: characters with a Markdown meaning anywhere in a line: links and images ([ ]), HTML and
#: autolinks (< >), emphasis, code, strikethrough, tables (* _ ` ~ |), LaTeX ($), headings (#),
#: entities (&), and the backslash itself (CommonMark lets each be backslash-escaped)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>$~|#&])")
#: what means something only at the start of a line: a list item (- + * or 1. 1)), a quote,
#: a heading, a rule or setext underline (= -)
_MD_LINE_START = re.compile(r"^(\s*)([-+=]|\d+(?=[.)]))")
#: a word joiner (U+2060, invisible) put between a colon and what follows it when that could
#: make a Streamlit :material/icon: or :emoji: shortcode or a URL (https://), after an @ of an
#: e-mail address and inside "www.": those are matched on the text after escapes are removed,
#: so a backslash cannot stop them; a character between does
_JOIN = "\u2060"
_MD_SHORTCODE = re.compile(r"([:@])(?=[\w+/-])|(?i:(www))(?=\.)")


def md(text) -> str:
    """A user string (judge, panel, file name, a note or error quoting one) shown through
    Markdown as written: no live link, image, HTML, emphasis, code, heading, list, quote,
    shortcode, icon, autolink or LaTeX, and on one line (newlines and other control
    characters become "?", as in the CLI: fcps_core.cli.render.one_line). Plain words, file
    names and sentences come out unchanged. Every st.markdown / warning / info / error /
    caption / help / label text that interpolates user data passes it through here."""
    from fcps_core.service.text import one_line
    text = _MD_SPECIAL.sub(r"\\\1", one_line("" if text is None else text))
    text = _MD_LINE_START.sub(lambda m: m.group(1) + (m.group(2) + "\\" if m.group(2)[0].isdigit()
                                                      else "\\" + m.group(2)), text, count=1)
    return _MD_SHORTCODE.sub(lambda m: (m.group(1) or m.group(2)) + _JOIN, text)


def md_list(names, sep: str = ", ") -> str:
    """``md`` of each name, joined (for lists of judge names in a sentence)."""
    return sep.join(md(n) for n in names)


def fmt(v, digits: int = 4) -> str:
    """One value in words: '-' when missing, yes/no, floats at ``digits`` decimals, counts with commas."""
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def page_link(page: str, text: str, *, run_id=None, icon: str = ":material/arrow_forward:") -> None:
    """A link to another page that looks like one (link colour and an arrow), optionally
    opening a stored run there (``?run=N``)."""
    st.page_link(page, label=f":blue[{text}]", icon=icon,
                 query_params={"run": str(run_id)} if run_id is not None else None)
