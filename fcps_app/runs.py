"""Stored runs as page state: open a selection or sweep run from the store.

Pages keep this session's work in ``st.session_state["selection"]`` and
``st.session_state["sweep"]``; a stored run opened from a picker or a ``?run=`` link
takes the same shape, with ``result`` None for a selection (the stored dict holds its
candidates and cell tables, so no page needs the live result object).
"""

from __future__ import annotations

import json

import streamlit as st

from fcps_core import FCPSError
from fcps_app.common import STORED, get_store


@st.cache_data(show_spinner="Loading stored run...", max_entries=32)
def stored_run(run_id: int) -> dict:
    """The store's full record of a run (cached: stored runs never change)."""
    return get_store().run(int(run_id))


def selection_state(run_id: int) -> dict:
    """A stored selection run in the shape of this session's ``selection`` state."""
    run = stored_run(run_id)
    if run["kind"] != "select" or not run.get("result"):
        raise FCPSError(f"run {run_id} is a {run['kind']} run ({run['status']}), not a finished selection")
    try:
        predictor = json.dumps(get_store().run_predictor(int(run_id)))
    except FCPSError:       # older runs stored no predictor
        predictor = None
    return {"label": f"{STORED}{run['panel']}", "result": None, "dict": run["result"],
            "predictor": predictor, "run_id": int(run_id)}


def sweep_state(run_id: int) -> dict:
    """A stored sweep run in the shape of this session's ``sweep`` state."""
    run = stored_run(run_id)
    if run["kind"] != "sweep" or not run.get("result"):
        raise FCPSError(f"run {run_id} is a {run['kind']} run ({run['status']}), not a finished sweep")
    return {"label": f"{STORED}{run['panel']}", "data": run["result"], "run_id": int(run_id)}


def open_run(run_id: int) -> str:
    """Make a stored selection or sweep run this session's current one (and its panel the
    current panel); returns the run's kind."""
    run = stored_run(run_id)
    if run["kind"] == "select":
        st.session_state["selection"] = selection_state(run_id)
    elif run["kind"] == "sweep":
        st.session_state["sweep"] = sweep_state(run_id)
    else:
        raise FCPSError(f"run {run_id} is a {run['kind']} run; open it in the results browser")
    st.session_state["current_panel"] = f"{STORED}{run['panel']}"
    return run["kind"]


def latest_runs(panel: str) -> dict[str, int]:
    """Kind -> id of the newest finished run of that kind on a stored panel."""
    out: dict[str, int] = {}
    for r in get_store().runs(panel=panel):
        if r["status"] == "done" and r["kind"] not in out:
            out[r["kind"]] = r["run_id"]
    return out
