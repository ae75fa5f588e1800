"""How the Results browser shows stored runs: the filtered runs table, the runs to open
(synced with ``?run=N`` / ``?compare=A,B``), one run's view (a selection through
``selection_view``'s chart and candidates, a sweep, an audit), its downloads, note and
delete, and a side-by-side diff of several runs."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from fcps_core.errors import FCPSError
from fcps_core.reports.glossary import help_text
from fcps_core.figures.sweep import calibration_growth_risk, gap_forest
from fcps_core.service.reports import count_text, estimate_name, run_facts, run_report_html, split_sizes
from fcps_core.service.stores import MAX_NOTE_CHARS
from fcps_app.common import figure_download, fmt, get_store, md, page_link, table_download
from fcps_app.deploy_view import show_audit
from fcps_app.glossary import metric, table
from fcps_app.runs import deployed_headline, runs_table
from fcps_app.selection_view import (answer_limit, page_one_judge_words, estimate_vs_test, objective_name, regime_line, show_candidates,
                                     show_chart)
from fcps_core.service.reports import (FAMILY_NAMES, answer, risk_digits, comparison, deployed_judges, display_family,
                                       frontier_noise_note, judges_count, non_monotone_note, verdict_parts)
from fcps_core.figures.frontier import frontier_figure

OPEN = "Open runs (two or more: side by side)"


def parse_ids(text) -> list[int]:
    if isinstance(text, list):
        text = ",".join(text)
    return [int(p) for p in (text or "").split(",") if p.strip().isdigit()]


def filtered_runs(runs: pd.DataFrame) -> None:
    """Filters (panel, kind, deployed family, dates) over every stored run, the table and its CSV."""
    runs = deployed_headline(runs)          # the family filtered on is the one the table shows
    c1, c2, c3, c4 = st.columns(4)
    panel_f = c1.multiselect("panel", sorted(runs["panel"].dropna().unique()))
    kind_f = c2.multiselect("kind", sorted(runs["kind"].unique()))
    family_f = c3.multiselect("deployed family", sorted(runs["family"].dropna().unique()))
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
    table_download(runs_table(view, key="runs-table"), "runs")


def chosen_runs(all_ids: list[int]) -> list[int]:
    """The runs to open: from the picker, preset by the address; the address follows it."""
    linked = parse_ids(st.query_params.get("run"))
    compare = parse_ids(st.query_params.get("compare"))
    chosen = st.multiselect(OPEN, all_ids, default=[i for i in (compare or linked) if i in all_ids])
    if chosen:
        st.query_params["compare" if len(chosen) > 1 else "run"] = ",".join(map(str, chosen))
        for stale in (("run",) if len(chosen) > 1 else ("compare",)):
            if stale in st.query_params:
                del st.query_params[stale]
    return chosen


def load(run_id: int) -> dict | None:
    try:
        return get_store().run(run_id)
    except FCPSError as exc:
        st.error(md(exc))
        return None


def show_sizes(res: dict) -> None:
    sizes = split_sizes(res.get("split"))
    if not sizes:
        return
    cols = st.columns(len(sizes))
    for col, s in zip(cols, sizes):
        metric(col, s["key"], count_text(s["rows"]), extra=f"Here: {s['note']}"
               + (f"; {s['groups']:,} groups." if s.get("groups") else "."))
    sp = res["split"]
    if sp.get("protocol") == "crossfit":
        st.caption(f"Cross-fitted: {sp.get('folds')} grouped folds x {sp.get('repeats')} repeats over "
                   f"{sp.get('n_deployable'):,} deployable rows (the S, M and V blocks pooled): each fold fits "
                   "on its training rows and every deployable row is held out in turn; T only audits.")


def stored_limit_words(n_judges: int) -> str:
    """How a reader of a stored run deploys a panel-size limit: a new selection on the Select
    page (this page has no frontier control, and a command-line flag is not a page's words)."""
    return f"to deploy it, set 'most judges deployed' to {n_judges} on the Select page and run the selection"


def show_selection(res: dict, run_id: int) -> None:
    sel = res["selected"]
    dr = res.get("deployed_risk") or {}
    first = answer(res, one_judge_words=page_one_judge_words(res))     # '' without a frontier
    if first:       # the answer first, then the frontier: as on the Select page
        # and in its colour: amber when a fixed recipe is clearly better than the deployed choice
        worse = any(comparison(b) == "worse" for b in res.get("baselines") or [])
        (st.warning if worse else st.success)(md(first))
        # the chart's axis is the deployed point's (a budget run: cost), and the note beside it is that
        # axis's, as on the Select page (walk 7: this page drew the chart without it)
        note = non_monotone_note(res, budget=answer_limit(res) == "budget")
        st.plotly_chart(frontier_figure(res["frontier"], objective=objective_name(res), names=FAMILY_NAMES,
                                        monotone=not note), key=f"frontier-{run_id}")
        for said in (note, frontier_noise_note(res, budget=answer_limit(res) == "budget")):
            if said:
                st.caption(md(said))
    judges = deployed_judges(res) if res.get("judges_report") else (sel.get("judges") or [])
    st.markdown(f"**Deployed:** {md(display_family(sel))} over {judges_count(sel['K'])}, by contribution: "
                + md(", ".join(judges[:8]) + (f" and {len(judges) - 8} more" if len(judges) > 8 else "")))
    m = st.columns(4)
    k = risk_digits(res)        # the answer's decimals (4, more for a narrow interval): a small MSE keeps its digits
    metric(m[0], "val_mse", fmt(sel.get("val_mse"), k), label="held-out MSE")
    metric(m[1], "test_mse", fmt(sel.get("test_mse"), k), label="test MSE (T)")
    if dr:
        ci = dr.get("ci") or [None, None]
        metric(m[2], "deployed_risk", fmt(dr.get("estimate"), k), label=estimate_name(objective_name(res)),
               extra=f"95% interval {fmt(ci[0], k)} to {fmt(ci[1], k)} ({dr.get('method')}).")
    else:
        metric(m[2], "validation_scale", fmt(res.get("validation_scale")), label="validation scale")
    metric(m[3], "menu_size", fmt(res.get("menu_size")), label="menu size |C|")
    if dr.get("estimate") is not None and dr.get("ci") and sel.get("test_mse") is not None \
            and objective_name(res) == "MSE":     # both are MSEs: said together
        st.caption(estimate_vs_test(dr, sel["test_mse"], (res.get("split") or {}).get("n_T")))
    show_sizes(res)
    try:
        parts = verdict_parts(res, limit_words=stored_limit_words)
        # the answer is said once, at the top
        st.markdown(md(" ".join((parts["headline"][1:] if first else parts["headline"]) + parts["details"])))
    except (KeyError, TypeError, ValueError) as exc:
        st.caption(f"(no verdict for this stored run: {type(exc).__name__})")
    line = regime_line(res)
    if line:
        st.info(line)
    show_chart(res, key=f"k-{run_id}", name=f"run-{run_id}-risk-over-K", caption=False)
    show_candidates(res, key=f"c-{run_id}", name=f"run-{run_id}-candidates")
    page_link("app_pages/deploy.py", "Deploy this predictor on traffic (Deploy & monitor)", run_id=run_id)


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
    run_id, store = run["run_id"], get_store()
    row = st.container(horizontal=True)
    row.download_button("Download report (HTML)", lambda: run_report_html(store, run_id),
                        f"fcps-run-{run_id}.html", mime="text/html", key=f"report-{run_id}", on_click="ignore",
                        type="primary", icon=":material/description:",
                        help="One self-contained HTML file (opens offline): verdict, judges, candidates, regime, "
                             "cell pressure, baselines, parameters and data provenance, each table with its terms.")
    row.download_button("Export run (JSON)", lambda: store.export_run(run_id, "json"), f"run-{run_id}.json",
                        key=f"exp-{run_id}", on_click="ignore")


def _annotate(run: dict) -> None:
    run_id = run["run_id"]
    with st.expander("Annotate", icon=":material/edit_note:"):
        text = st.text_area("Note on this run", value=run.get("note") or "", max_chars=MAX_NOTE_CHARS,
                            key=f"note-{run_id}", help=help_text("note"))
        if st.button("Save note", key=f"save-note-{run_id}"):
            try:
                saved = get_store().set_run_note(run_id, text)
            except FCPSError as exc:
                st.error(md(exc))
            else:
                st.session_state["results_flash"] = (f"Note saved on run {run_id}." if saved
                                                     else f"Note removed from run {run_id}.")
                st.rerun()


def _delete(run: dict, chosen: list[int]) -> None:
    run_id = run["run_id"]
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
            get_store().delete_run(run_id)
        except FCPSError as exc:
            st.error(md(exc))
            return
        from fcps_app.runs import forget_run
        forget_run(run_id)
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


def show_run(run: dict, chosen: list[int]) -> None:
    run_id = run["run_id"]
    st.markdown(f"**Run {run_id}** · {run['kind']} on **{md(run['panel_name'])}** · {run['status']} · "
                f"seed {run['seed']} · fcps {run['version']}")
    if run.get("note"):
        st.info("**Note:** " + md(run["note"]))
    show_downloads(run)
    res = run.get("result")
    if run["status"] != "done" or not res:
        st.error(md(run.get("error") or "the run did not finish"))
    elif run["kind"] == "select":
        show_selection(res, run_id)
    elif run["kind"] == "audit":
        show_audit(res, key=f"audit-{run_id}")
        page_link("app_pages/deploy.py", "Audit new traffic on the Deploy & monitor page")
    else:
        show_sweep(res, run_id)
    _annotate(run)
    _delete(run, chosen)
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
        show = count_text if k in ("n_S", "n_M", "n_V", "n_T", "n_fit", "n_deployable") else fmt
        rows.append({"fact": k, **{f"run {r['run_id']}": show(v) if not isinstance(v, (dict, list)) else
                                   json.dumps(v, default=str) for r, v in zip(loaded, vals)},
                     "differs": len(set(text)) > 1})
    diff = pd.DataFrame(rows)
    n_diff = int(diff["differs"].sum())
    st.subheader("Compare runs")
    only = st.toggle(f"Only what differs ({n_diff} of {len(diff)})", value=True, key="diff-only")
    shown = diff[diff["differs"]] if only else diff
    config = {f"run {r['run_id']}": st.column_config.TextColumn(
        help=f"Run {r['run_id']}: {r['kind']} on {md(r['panel_name'])}.") for r in loaded}
    table(shown, column_config=config, key="diff-table", drop_empty=False,
          row_style=lambda row: ["background-color: #fff3bf" if row["differs"] else ""] * len(row))


def show_runs(chosen: list[int]) -> None:
    """The chosen runs: a diff when several, then each run (side by side)."""
    loaded = [r for r in (load(i) for i in chosen) if r is not None]
    if len(loaded) > 1:
        show_diff(loaded)
    cols = st.columns(len(loaded)) if len(loaded) > 1 else [st.container()]
    for col, run in zip(cols, loaded):
        with col:
            show_run(run, chosen)
