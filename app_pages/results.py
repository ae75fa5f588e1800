"""Results browser: every stored run; open one (?run=N) or several side by side
(?compare=A,B) with a parameter diff; download a run's HTML report; annotate or delete a run."""

import json

import pandas as pd
import streamlit as st

from fcps_core import FCPSError
from fcps_core.explain import verdict
from fcps_core.glossary import help_text
from fcps_core.plots import calibration_growth_risk, gap_forest, validation_risk_over_k
from fcps_core.run_report import run_facts, run_report_html, split_sizes, words
from fcps_core.run_report.summary import count_text
from fcps_core.store.runs import MAX_NOTE_CHARS
from fcps_app.common import figure_download, get_store, table_download
from fcps_app.deploy_view import show_audit
from fcps_app.glossary import column_help, dataframe, glossary_expander, metric

# Words for the columns of this page's tables that the glossary does not define.
PAGE_WORDS = {
    "run_id": "Stored run number (python -m fcps_core runs lists them).",
    "panel": "The stored panel the run was computed on.",
    "kind": "select: a selection; sweep: a calibration-growth sweep; audit: a traffic audit.",
    "status": "done, or failed (the run stopped with an error and stored no result).",
    "label": "A tag the run was saved with (the demo runs are tagged seed:...).",
    "note": "Your annotation of the run (open the run to write or change it).",
    "finished_at": "When the run finished (UTC).",
    "seconds": "How long the run took.",
    "has_predictor": "Whether the run stores a deployable predictor (Deploy & monitor can use it).",
    "deployed_family": "The family of the predictor the run deploys (tie_average for an average of tied candidates).",
    "family": "The family of the selected candidate (for a tie average: its best member; deployed_family says "
              "what is deployed). " + (help_text("family") or ""),
    "fact": "A fact or a parameter of the runs, as stored (param: ... are the run's settings).",
    "differs": "Whether the runs compared have different values here.",
    "block": help_text("block") or "",
    "labelled rows": "Labelled rows in the block (under cross-fitting S and M are each fold's fitting rows).",
    "role": "What the block does.",
}


def col_help(column: str) -> str:
    """Glossary help for a column, else the report's or this page's words."""
    text = PAGE_WORDS.get(str(column)) or help_text(str(column))
    if text:
        return text
    w = words(str(column))
    return w[1] if w else column_help(column)


#: columns that hold counts (shown without decimals even when a missing value made them float)
COUNTS = {"K", "run_id", "seed", "index", "grid_size", "n_M", "splits", "Q_K", "S_K", "N_z"}


def table(df: pd.DataFrame, **kwargs):
    """A dataframe with help on every column, 4-decimal floats and whole counts."""
    frame = df.data if hasattr(df, "data") and not isinstance(df, pd.DataFrame) else df
    config = {}
    for c in frame.columns:
        if c in COUNTS and pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c]):
            config[str(c)] = st.column_config.NumberColumn(help=col_help(c), format="%d")
        elif c == "seconds":
            config[str(c)] = st.column_config.NumberColumn(help=col_help(c), format="%.1f")
        elif pd.api.types.is_float_dtype(frame[c]):
            config[str(c)] = st.column_config.NumberColumn(help=col_help(c), format="%.4f")
        else:
            config[str(c)] = st.column_config.Column(help=col_help(c))
    return dataframe(df, column_config=config | (kwargs.pop("column_config", None) or {}), **kwargs)


def md(text) -> str:
    """Escape Markdown (judge names and notes may hold * _ [ ] ...) so text renders as written."""
    text = "" if text is None else str(text)
    for ch in "\\`*_[]<>$~|#":
        text = text.replace(ch, "\\" + ch)
    return text


def fmt(v, digits: int = 4) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def parse_ids(text) -> list[int]:
    if isinstance(text, list):
        text = ",".join(text)
    return [int(p) for p in (text or "").split(",") if p.strip().isdigit()]


st.title("Results browser")
store = get_store()
flash = st.session_state.pop("results_flash", None)
if flash:
    st.success(flash)
runs = pd.DataFrame(store.runs())
if runs.empty:
    st.info("No runs stored yet: run a selection or a sweep on a stored panel.")
    st.stop()
runs["finished_at"] = pd.to_datetime(runs["finished_at"])

c1, c2, c3, c4 = st.columns(4)
panel_f = c1.multiselect("panel", sorted(runs["panel"].dropna().unique()))
kind_f = c2.multiselect("kind", sorted(runs["kind"].unique()))
family_f = c3.multiselect("selected family", sorted(runs["family"].dropna().unique()))
dates = runs["finished_at"].dropna()
day_f = c4.date_input("finished between", (dates.min().date(), dates.max().date())) if len(dates) else None
view = runs
if panel_f:
    view = view[view["panel"].isin(panel_f)]
if kind_f:
    view = view[view["kind"].isin(kind_f)]
if family_f:
    view = view[view["family"].isin(family_f)]
if day_f and isinstance(day_f, tuple) and len(day_f) == 2:
    view = view[(view["finished_at"].dt.date >= day_f[0]) & (view["finished_at"].dt.date <= day_f[1])]
order = ["run_id", "panel", "kind", "status", "family", "K", "val_mse", "test_mse", "note", "label", "finished_at",
         "seconds", "seed", "version", "panel_version", "deployed_family", "has_predictor"]
shown = view[[c for c in order if c in view.columns]]
table(shown, key="runs-table",
      column_config={"note": st.column_config.TextColumn("note", help=PAGE_WORDS["note"], width="medium")})
table_download(shown, "runs")


# Deep links: ?run=ID opens a run, ?compare=ID1,ID2 opens a side-by-side comparison.
linked = parse_ids(st.query_params.get("run"))
compare = parse_ids(st.query_params.get("compare"))
all_ids = runs["run_id"].tolist()
chosen = st.multiselect("Open runs (two or more: side by side)", all_ids,
                        default=[i for i in (compare or linked) if i in all_ids])
if not chosen:
    st.caption("Pick runs above, or open a deep link such as ?run=1 or ?compare=1,2.")
    glossary_expander()
    st.stop()
st.query_params["compare" if len(chosen) > 1 else "run"] = ",".join(map(str, chosen))
for stale in (("run",) if len(chosen) > 1 else ("compare",)):
    if stale in st.query_params:
        del st.query_params[stale]


def load(run_id: int) -> dict | None:
    try:
        return store.run(run_id)
    except FCPSError as exc:
        st.error(str(exc))
        return None


def show_sizes(res: dict) -> None:
    sizes = split_sizes(res.get("split"))
    if not sizes:
        return
    crossfit = (res.get("split") or {}).get("protocol") == "crossfit"
    cols = st.columns(len(sizes))
    for col, s in zip(cols, sizes):
        metric(col, s["key"], count_text(s["rows"]), extra=f"Here: {s['note']}"
               + (f"; {s['groups']:,} groups." if s.get("groups") else "."))
    if crossfit:
        sp = res["split"]
        st.caption(f"Cross-fitted: {sp.get('folds')} grouped folds x {sp.get('repeats')} repeats over "
                   f"{sp.get('n_deployable'):,} deployable rows; S and M are each fold's fitting rows, every "
                   "deployable row is held out (V) in turn; T only audits.")


#: the candidates table's leading columns (the judges list, long, goes last)
CANDIDATE_ORDER = ["index", "family", "K", "path", "val_mse", "val_se", "test_mse", "H_K", "unseen_val", "V_cell",
                   "V_proxy", "selected"]


def show_selection(res: dict, run_id: int) -> None:
    sel = res["selected"]
    dr = res.get("deployed_risk") or {}
    judges = sel.get("judges") or []
    st.markdown(f"**Deployed:** {md(sel['family'])} over K = {sel['K']} judge(s): "
                + md(", ".join(judges[:8]) + (f" and {len(judges) - 8} more" if len(judges) > 8 else "")))
    m = st.columns(4)
    metric(m[0], "val_mse", fmt(sel.get("val_mse")), label="held-out MSE")
    metric(m[1], "test_mse", fmt(sel.get("test_mse")), label="test MSE (T)")
    if dr:
        ci = dr.get("ci") or [None, None]
        metric(m[2], "deployed_risk", fmt(dr.get("estimate")), label="deployed risk",
               extra=f"95% interval {fmt(ci[0])} to {fmt(ci[1])} ({dr.get('method')}).")
    else:
        metric(m[2], "validation_scale", fmt(res.get("validation_scale")), label="validation scale")
    metric(m[3], "menu_size", fmt(res.get("menu_size")), label="menu size |C|")
    show_sizes(res)
    try:
        st.markdown(md(verdict(res)))
    except (KeyError, TypeError, ValueError) as exc:
        st.caption(f"(no verdict for this stored run: {type(exc).__name__})")
    rg = res.get("regime") or {}
    if rg.get("quadrant"):
        st.info(f"Regime: {rg['quadrant'].replace('_', ' ')}: interaction gain {fmt(rg.get('interaction_gain'))}, "
                f"table pressure {fmt(rg.get('table_pressure'))}. {md(rg.get('advice') or '')}")
    fig = validation_risk_over_k(res["candidates"], selected=sel)
    st.plotly_chart(fig, key=f"k-{run_id}")
    figure_download(fig, f"run-{run_id}-risk-over-K")
    cands = pd.DataFrame(res["candidates"]).drop(columns=["params"], errors="ignore")
    if "judges" in cands:
        cands["judges"] = cands["judges"].map(lambda j: " > ".join(j or []))
    if "val_mse" in cands:
        cands = cands.sort_values("val_mse")
    lead = [c for c in CANDIDATE_ORDER if c in cands.columns]
    cands = cands[lead + [c for c in cands.columns if c not in lead and c != "judges"]
                  + (["judges"] if "judges" in cands.columns else [])]
    table(cands, key=f"c-{run_id}")
    st.page_link("app_pages/deploy.py", label="Deploy this predictor on traffic (Deploy & monitor)",
                 query_params={"run": str(run_id)})


def show_sweep(res: dict, run_id: int) -> None:
    cells = res["cells"]
    flat = pd.DataFrame([{k: v for k, v in c.items() if not isinstance(v, (dict, list))} for c in cells])
    if not flat.empty:
        table(flat, key=f"sw-{run_id}")
    for build, name in ((calibration_growth_risk, "risk"), (gap_forest, "gaps")):
        try:
            fig = build(cells)
        except (KeyError, TypeError, ValueError):      # e.g. a one-split sweep stores no standard errors
            st.caption(f"No {name} figure for this sweep (it lacks the per-budget standard errors).")
            continue
        st.plotly_chart(fig, key=f"{name}-{run_id}")
        figure_download(fig, f"run-{run_id}-{name}")


def show_downloads(run: dict) -> None:
    run_id = run["run_id"]
    row = st.container(horizontal=True)
    row.download_button("Download report (HTML)", lambda: run_report_html(store, run_id),
                        f"fcps-run-{run_id}.html", mime="text/html", key=f"report-{run_id}", on_click="ignore",
                        type="primary", icon=":material/description:",
                        help="One self-contained HTML file (opens offline): verdict, judges, candidates, regime, "
                             "cell pressure, baselines, parameters and data provenance, each table with its terms.")
    row.download_button("Export run (JSON)", lambda: store.export_run(run_id, "json"), f"run-{run_id}.json",
                        key=f"exp-{run_id}", on_click="ignore")


def show_actions(run: dict) -> None:
    run_id = run["run_id"]
    with st.expander("Annotate", icon=":material/edit_note:"):
        text = st.text_area("Note on this run", value=run.get("note") or "", max_chars=MAX_NOTE_CHARS,
                            key=f"note-{run_id}", help=PAGE_WORDS["note"])
        if st.button("Save note", key=f"save-note-{run_id}"):
            try:
                saved = store.set_run_note(run_id, text)
            except FCPSError as exc:
                st.error(str(exc))
            else:
                st.session_state["results_flash"] = (f"Note saved on run {run_id}." if saved
                                                     else f"Note removed from run {run_id}.")
                st.rerun()
    confirm = f"confirm-delete-{run_id}"
    if not st.session_state.get(confirm):
        if st.button(f"Delete run {run_id}", key=f"delete-{run_id}"):
            st.session_state[confirm] = True
            st.rerun()
        return
    st.warning(f"Delete run {run_id} ({run['kind']} on {md(run['panel_name'])}) and everything stored with it? "
               "This cannot be undone.")
    row = st.container(horizontal=True)
    if row.button(f"Yes, delete run {run_id}", key=f"delete-yes-{run_id}", type="primary"):
        st.session_state.pop(confirm, None)
        try:
            store.delete_run(run_id)
        except FCPSError as exc:
            st.error(str(exc))
            return
        from fcps_app.runs import stored_run
        stored_run.clear()
        left = [i for i in chosen if i != run_id]
        for k in ("run", "compare"):
            if k in st.query_params:
                del st.query_params[k]
        if left:
            st.query_params["compare" if len(left) > 1 else "run"] = ",".join(map(str, left))
        st.session_state["results_flash"] = f"Deleted run {run_id}."
        st.rerun()
    if row.button("Cancel", key=f"delete-no-{run_id}"):
        st.session_state.pop(confirm, None)
        st.rerun()


def show_run(run: dict) -> None:
    run_id = run["run_id"]
    st.markdown(f"**Run {run_id}** · {run['kind']} on `{run['panel_name'].replace('`', '')}` · {run['status']} · "
                f"seed {run['seed']} · fcps {run['version']}")
    if run.get("note"):
        st.info("**Note:** " + md(run["note"]))
    show_downloads(run)
    res = run.get("result")
    if run["status"] != "done" or not res:
        st.error(run.get("error") or "the run did not finish")
    elif run["kind"] == "select":
        show_selection(res, run_id)
    elif run["kind"] == "audit":
        show_audit(res, key=f"audit-{run_id}")
        st.page_link("app_pages/deploy.py", label="Audit new traffic on the Deploy & monitor page")
    else:
        show_sweep(res, run_id)
    show_actions(run)
    with st.expander("parameters"):
        st.code(json.dumps(run["params"], indent=1, default=str), language="json")


def show_diff(loaded: list[dict]) -> None:
    """Every fact and parameter of the runs side by side; rows that differ highlighted."""
    facts = [run_facts(r) for r in loaded]
    keys = list(dict.fromkeys(k for f in facts for k in f))
    rows = []
    for k in keys:
        vals = [f.get(k) for f in facts]
        text = [json.dumps(v, sort_keys=True, default=str) for v in vals]
        show = count_text if k in ("n_S", "n_M", "n_V", "n_T") else fmt
        rows.append({"fact": k, **{f"run {r['run_id']}": show(v) if not isinstance(v, (dict, list)) else
                                   json.dumps(v, default=str) for r, v in zip(loaded, vals)},
                     "differs": len(set(text)) > 1})
    diff = pd.DataFrame(rows)
    n_diff = int(diff["differs"].sum())
    st.subheader("Compare runs")
    only = st.toggle(f"Only what differs ({n_diff} of {len(diff)})", value=True, key="diff-only")
    shown = diff[diff["differs"]] if only else diff
    config = {f"run {r['run_id']}": st.column_config.TextColumn(
        help=f"Run {r['run_id']}: {r['kind']} on {r['panel_name']}.") for r in loaded}
    styled = shown.style.apply(lambda row: ["background-color: #fff3bf" if row["differs"] else ""] * len(row), axis=1)
    table(styled, column_config=config, key="diff-table")


loaded = [r for r in (load(i) for i in chosen) if r is not None]
if len(loaded) > 1:
    show_diff(loaded)
cols = st.columns(len(loaded)) if len(loaded) > 1 else [st.container()]
for col, run in zip(cols, loaded):
    with col:
        show_run(run)
glossary_expander()
