"""Stored runs as page state: open a selection or sweep run from the store.

Pages keep this session's work in ``st.session_state["selection"]`` and
``st.session_state["sweep"]``; a stored run opened from a picker or a ``?run=`` link
takes the same shape, with ``result`` None for a selection (the stored dict holds its
candidates and cell tables, so no page needs the live result object).
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from fcps_core.errors import FCPSError
from fcps_core.defaults import deployed_family_name, limit_words
from fcps_core.reports.glossary import help_text
from fcps_core.service.reports import deployed_members, display_family, family_name, judges_count
from fcps_app.common import STORED, get_store
from fcps_app.glossary import FORMATS, number, table


@st.cache_data(show_spinner="Loading stored run...", max_entries=32)
def _stored_run(store_path: str, run_id: int) -> dict:
    return get_store().run(int(run_id))


def stored_run(run_id: int) -> dict:
    """The store's full record of a run (cached per store and run id: a stored run never
    changes, and a new one has a new id; a deleted one is forgotten by :func:`forget_run`)."""
    return _stored_run(str(get_store().path), int(run_id))


def forget_run(run_id: int) -> None:
    """Drop a deleted run's cached record (the only cached data its deletion changes)."""
    _stored_run.clear(str(get_store().path), int(run_id))


stored_run.clear = _stored_run.clear        # every cached run (tests switching stores)


def selection_state(run_id: int) -> dict:
    """A stored selection run in the shape of this session's ``selection`` state."""
    run = stored_run(run_id)
    if run["kind"] != "select" or not run.get("result"):
        raise FCPSError(f"run {run_id} is a {run['kind']} run ({run['status']}), not a finished selection")
    try:
        predictor = json.dumps(get_store().run_predictor(int(run_id)))
    except FCPSError:       # older runs stored no predictor
        predictor = None
    return {"label": f"{STORED}{run['panel_name']}", "result": None, "dict": run["result"],
            "predictor": predictor, "run_id": int(run_id)}


def sweep_state(run_id: int) -> dict:
    """A stored sweep run in the shape of this session's ``sweep`` state."""
    run = stored_run(run_id)
    if run["kind"] != "sweep" or not run.get("result"):
        raise FCPSError(f"run {run_id} is a {run['kind']} run ({run['status']}), not a finished sweep")
    return {"label": f"{STORED}{run['panel_name']}", "data": run["result"], "run_id": int(run_id)}


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
    st.session_state["current_panel"] = f"{STORED}{run['panel_name']}"
    return run["kind"]


def latest_runs(panel: str) -> dict[str, int]:
    """Kind -> id of the newest finished run of that kind on a stored panel."""
    out: dict[str, int] = {}
    for r in get_store().runs(panel=panel):
        if r["status"] == "done" and r["kind"] not in out:
            out[r["kind"]] = r["run_id"]
    return out


KIND_WORDS = {"select": "selection", "sweep": "sweep", "audit": "traffic audit"}


def finished_runs(panel: str, kinds: tuple[str, ...]) -> list[dict]:
    """A stored panel's finished runs of these kinds, newest first (``Store.runs`` rows)."""
    return [r for r in get_store().runs(panel=panel) if r["status"] == "done" and r["kind"] in kinds]


def run_caption(run_id: int) -> str:
    """One line naming a stored run: "run 8 · sweep · 2026-11-22 10:31 · 4 budgets x 10 splits"."""
    run = stored_run(run_id)
    when = run.get("finished_at")
    when = when.strftime("%Y-%m-%d %H:%M") if hasattr(when, "strftime") else str(when or "")[:16]
    res = run.get("result") or {}
    if run["kind"] == "sweep":
        budgets = res.get("budgets") or [c.get("n_M") for c in res.get("cells", [])]
        detail = f"{len(budgets)} budgets x {(res.get('settings') or {}).get('splits', '?')} splits"
    elif run["kind"] == "select":
        sel = res.get("selected") or {}
        menu = f"{res['menu_size']:,} candidates" if isinstance(res.get("menu_size"), int) else "a menu"
        risk = sel.get("val_mse")
        heldout = "" if not isinstance(risk, (int, float)) else f", held-out MSE {risk:.4f}"
        if not sel:         # stored by an older fcps without it
            detail = f"what it deployed: {NOT_RECORDED}"
        elif deployed_members(sel):
            detail = f"{display_family(sel)} over {judges_count(sel.get('K'))}{heldout}, statistically tied models picked from {menu}"
        else:
            detail = f"{family_name(sel.get('family'))} K={sel.get('K')}{heldout}, chosen from {menu}"
        params = run.get("params") or {}
        limit = limit_words(params.get("max_judges"), params.get("budget"))
        if sel and limit:
            detail += f" ({limit})"
    else:
        detail = run["status"]
    parts = [f"run {run_id}", KIND_WORDS.get(run["kind"], run["kind"]), when, detail]
    if str(run.get("label") or "").startswith("seed:"):
        parts.append("demo")
    return " · ".join(p for p in parts if p)


def store_generated_panel(panel, base: str, provenance: dict) -> tuple[str, str]:
    """Store a generated (Synthetic lab) panel as a panel of its own; returns (name, version).

    The same generator settings give the same panel: a stored panel of that name and version
    is reused. A different panel under that name (imported by hand) is never replaced: the
    next free ``base-2``, ``base-3``... is used instead
    (:func:`fcps_core.service.stores.store_generated`). Nothing cached changes: panel lists
    are read from the store on each rerun, and a new panel has a new cache key."""
    from fcps_core.service.stores import store_generated
    name, version, _added = store_generated(get_store(), panel, base, provenance)
    return name, version


#: the run tables' columns, in order (a table shows those the runs have); "family" is the
#: deployed one, so the predictor's raw family label (``deployed_family``) is not shown beside it
RUN_COLUMNS = ["run_id", "panel", "kind", "status", "family", "K", "limit", "val_mse", "deployed_risk", "test_mse", "note",
               "label", "finished_at", "seconds", "seed", "version", "panel_version", "has_predictor"]
#: the columns that describe what a finished selection deployed (``Store.runs``' ``not_recorded`` names them)
DEPLOYED_COLUMNS = ("K", "val_mse", "deployed_risk", "test_mse")
#: what a run table shows where a selection stored by an older fcps kept no value
NOT_RECORDED = "not recorded"
#: the run tables' headers in words (the frame keeps the store's keys: its CSV and callers read them)
RUN_HEADERS = {"run_id": "run", "K": "judges", "val_mse": "held-out MSE", "deployed_risk": "estimate on new items",
               "test_mse": "test MSE (T)", "finished_at": "finished", "panel_version": "panel version",
               "has_predictor": "predictor stored"}
#: what the run tables' columns mean (elsewhere "family" is any candidate's, "K" a prefix, "label" a human label)
RUN_WORDS = {"family": "What the selection deployed: its family for one model, \"average of N models\" for an "
                       "average of statistically tied models. " + (help_text("family") or ""),
             "K": "How many judges the deployed predictor calls (an average: the union of its models' judges).",
             "limit": "The limit the selection was asked to respect (--max-judges, --budget); empty: none, "
                      "the best over the whole panel.",
             "val_mse": "Held-out MSE of what was deployed (an average: of the average itself, not of its best "
                        "model); the same number as the run's own page.",
             "deployed_risk": "Estimate of the deployed predictor's risk on new items (bias-corrected for the "
                              "choice), as the run's answer gives it, on the run's objective (MSE unless the run "
                              "chose by NLL). " + (help_text("deployed_risk") or ""),
             "test_mse": "Research-test MSE of what was deployed (an audit on T; it never informed the choice).",
             "label": "A tag the run was saved with (the demo runs are tagged seed:...)."}


def deployed_headline(runs: pd.DataFrame) -> pd.DataFrame:
    """``Store.runs`` rows as the run tables show them: a selection's family as people read
    it ("average of N models" for an average, :func:`fcps_core.defaults.deployed_family_name`);
    its K and risks are what it deployed (the store's, read back as stored). Numbers stay
    numbers (whole K, risks as floats); which of them a run did not record is in
    ``not_recorded``."""
    if runs.empty or "family" not in runs.columns:
        return runs
    runs = runs.copy()
    n = pd.to_numeric(runs["deployed_members"], errors="coerce") if "deployed_members" in runs.columns \
        else pd.Series(float("nan"), index=runs.index)
    runs["family"] = [None if f is None or (isinstance(f, float) and f != f) else
                      deployed_family_name(family_name(f), None if k != k else int(k))
                      for f, k in zip(runs["family"], n)]
    if "K" in runs.columns:
        runs["K"] = pd.to_numeric(runs["K"], errors="coerce").astype("Int64")
    if "max_judges" in runs.columns and "budget" in runs.columns:         # Store.runs gives both
        runs["limit"] = [limit_words(_given(k), _given(b)) for k, b in zip(runs["max_judges"], runs["budget"])]
    for col in ("val_mse", "deployed_risk", "test_mse"):
        if col in runs.columns:
            runs[col] = pd.to_numeric(runs[col], errors="coerce").astype(float)
    return runs


def _given(value):
    """A stored run's limit value, None where it had none (the frame's NaN or NA)."""
    return None if value is None or pd.isna(value) else value


def _not_recorded(runs: pd.DataFrame, column: str) -> pd.Series:
    """Rows whose ``column`` the store does not hold (a selection stored by an older fcps)."""
    if "not_recorded" not in runs.columns:
        return pd.Series(False, index=runs.index)
    return runs["not_recorded"].map(lambda fields: isinstance(fields, (list, tuple)) and column in fields)


def runs_table(runs: pd.DataFrame, *, columns: list[str] | None = None, **kwargs) -> pd.DataFrame:
    """Stored runs (``Store.runs`` rows) as one table on every page: a selection's row is
    what it deployed (family, judges called, held-out MSE, estimate on new items, test MSE:
    for an average, the average's own, the numbers of the run's answer at 4 decimals); a
    value a run stored by an older fcps did not record says "not recorded"; a sweep's or an
    audit's selection cells blank. Returns the frame shown, with numbers as numbers (its
    CSV leaves a value not recorded empty)."""
    runs = deployed_headline(runs)
    shown = runs[[c for c in (columns or RUN_COLUMNS) if c in runs.columns]]
    view = shown.copy()
    config = {"note": st.column_config.TextColumn("note", width="medium")} if "note" in shown else {}
    for col in DEPLOYED_COLUMNS:
        missing = _not_recorded(runs, col)
        if col in view.columns and missing.any():
            # a column with a value not recorded is text, each number in the column's format
            spec = FORMATS.get(col, "%.4f")
            view[col] = [NOT_RECORDED if m else number(v, spec) for v, m in zip(view[col], missing)]
            config[col] = st.column_config.TextColumn(col, alignment="right")
    for col, header in RUN_HEADERS.items():
        if col in view.columns:
            config[col] = {**(config.get(col) or {}), "label": header}
    table(view, helps=RUN_WORDS, column_config=config | (kwargs.pop("column_config", None) or {}), **kwargs)
    return shown
