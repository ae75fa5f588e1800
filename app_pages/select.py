import json

import pandas as pd
import streamlit as st

from fcps_core import FAMILIES, PATH_RULES, FCPSError, make_blocks
from fcps_core.explain import verdict
from fcps_core.plots import validation_risk_over_k
from fcps_core.defaults import (DEFAULT_ALPHA, DEFAULT_CHOICE, DEFAULT_FOLDS, DEFAULT_PATHS, DEFAULT_PROTOCOL,
                                DEFAULT_REPEATS, DEFAULT_SPLIT)
from fcps_core.selection import CHOICES, PROTOCOLS
from fcps_app.common import (figure_download, panel_picker, remember_selection, run_selection,
                          split_sizes_table, table_download)
from fcps_app.costs import judge_costs_editor, show_costs

st.title("Select a panel and aggregator")
label, panel = panel_picker()
st.caption(f"{panel.n_rows} rows, {panel.n_labelled} labelled, {len(panel.judges)} judges, schema {panel.schema}")

mode = st.radio("Blocks", ["ratio", "counts"] + (["block column"] if panel.blocks is not None else []),
                horizontal=True)
split, counts = None, None
if mode == "ratio":
    split = st.text_input("S:M:V ratio, optionally :T", DEFAULT_SPLIT,
                          help=f"{DEFAULT_SPLIT} is the paper's default; a fourth part (e.g. 1:2:1:1) reserves a "
                               "research test block T that only audits the choice")
elif mode == "counts":
    c = st.columns(4)
    counts = {"n_S": c[0].number_input("n_S", 1, value=max(1, panel.n_labelled // 5)),
              "n_M": c[1].number_input("n_M", 1, value=max(1, 2 * panel.n_labelled // 5)),
              "n_V": c[2].number_input("n_V", 1, value=max(1, panel.n_labelled // 5)),
              "n_T": c[3].number_input("n_T", 0, value=max(0, panel.n_labelled // 5))}
seed = st.number_input("seed", 0, 1_000_000, 0)
try:
    blocks = make_blocks(panel, split=split, counts=counts, seed=int(seed))
    st.dataframe(split_sizes_table(panel, blocks), hide_index=True)
except FCPSError as exc:
    st.error(str(exc))
    st.stop()

st.caption("Under the cross-fitted protocol (default) S, M and V are pooled: every labelled row outside T "
           "is used for fitting and, in other folds, for validation; T only audits.")
costs = judge_costs_editor(label, panel)
with st.form("menu_form"):
    p1, p2, p3, p4 = st.columns(4)
    protocol = p1.selectbox("protocol", PROTOCOLS, index=PROTOCOLS.index(DEFAULT_PROTOCOL),
                            help="crossfit: repeated grouped K-fold over all deployable labels; "
                                 "split: the paper's S/M/V blocks")
    choice = p2.selectbox("choice rule", CHOICES, index=CHOICES.index(DEFAULT_CHOICE),
                          help="argmin: lowest held-out risk; simplest_within_se: the simplest candidate within one "
                               "paired SE of the best; tie_average: average the statistically tied candidates")
    folds = p3.number_input("folds", 2, 20, DEFAULT_FOLDS)
    repeats = p4.number_input("repeats", 1, 10, DEFAULT_REPEATS)
    c1, c2, c3 = st.columns(3)
    families = c1.multiselect("families", FAMILIES, default=list(FAMILIES))
    paths = c1.multiselect("path rules", PATH_RULES, default=list(DEFAULT_PATHS))
    k_max = c2.number_input("K max (0 = whole pool)", 0, len(panel.judges), 0,
                            help="largest prefix for scalar families (the library's default: the whole pool, so "
                                 "stackers over every judge are candidates); table-like families stop at 8")
    alpha = c2.number_input("table alpha", 0.0, 10.0, DEFAULT_ALPHA, step=0.1)
    fallback = c2.selectbox("table fallback", ["global", "lower_prefix"])
    objective = c3.selectbox("objective", ["mse", "nll"])
    guard = c3.selectbox("guard", ["none", "one_se"], help="one_se keeps the task-type prior family unless the "
                         "winner is clearly better (needs the argmin choice rule)")
    refit = c3.selectbox("deployment", ["frozen", "refit"], help="refit re-fits the chosen candidate on S+M+V")
    run = st.form_submit_button("Run selection", type="primary")

if run:
    # with judge costs the default path menu also orders judges by information per cost
    run_paths = list(paths) + (["cost_aware"] if costs and list(paths) == list(DEFAULT_PATHS) else [])
    bar = st.progress(0.0, text="starting")
    try:
        result = run_selection(panel, split, counts, int(seed), lambda f, m: bar.progress(min(f, 1.0), text=m),
                               families=families, k_max=int(k_max) or None, alpha=alpha,
                               fallback=fallback, objective=objective,
                               guard=None if guard == "none" else guard, refit=refit,
                               protocol=protocol, choice=choice, folds=int(folds), repeats=int(repeats),
                               judge_costs=costs, paths=run_paths)
    except FCPSError as exc:
        st.error(str(exc))
        st.stop()
    remember_selection(label, result)

sel_state = st.session_state.get("selection")
if sel_state and sel_state["label"] == label:
    d = sel_state["dict"]
    sel = d["selected"]
    sp = d["split"]
    st.subheader("Verdict")
    st.success(verdict(d))
    held = "cross-fitted" if d["protocol"] == "crossfit" else "validation"
    dr = d.get("deployed_risk") or {}
    m = st.columns(5)
    m[0].metric("deployed risk (estimate)", "-" if not dr else f"{dr['estimate']:.4f}",
                help="Bias-corrected estimate of the deployed predictor's risk on new items "
                     "(bootstrap over groups of the held-out predictions, choice rule replayed in-bag)"
                     + (f"; 95% interval {dr['ci'][0]:.4f} to {dr['ci'][1]:.4f}" if dr else ""))
    m[1].metric(f"{held} MSE of the winner", f"{sel['val_mse']:.4f}",
                help="The winner's own held-out risk: optimistic, because it was the minimum over the menu")
    m[2].metric("test MSE (T, audit only)", "-" if sel["test_mse"] is None else f"{sel['test_mse']:.4f}")
    m[3].metric("menu size |C|", d["menu_size"])
    m[4].metric("validation scale", f"{d['validation_scale']:.3f}", help="sqrt(log|C| / n_V)")
    if dr:
        st.caption(f"Deployed risk 95% interval: {dr['ci'][0]:.4f} to {dr['ci'][1]:.4f} "
                   f"({dr['method'].upper()}, {dr['n_boot'] if 'n_boot' in dr else dr.get('outer_folds')} resamples/folds).")
    tie = d.get("tie") or {}
    if tie.get("n_tied"):
        alts = pd.DataFrame([{"family": a["family"], "K": a["K"], "path": a["path"], f"{held} risk": a["risk"],
                              "difference": a["diff"], "paired SE": a["se"]} for a in tie["alternatives"]])
        st.warning(f"Statistical tie: {tie['n_tied']} other candidate(s) lie within one paired standard error of "
                   "the selected one. These would serve about as well:")
        st.dataframe(alts, hide_index=True)
    if d.get("baselines"):
        st.markdown("**Baselines on the same held-out rows** (difference = baseline risk - selection risk; "
                    "above 0 means the selection is better)")
        st.dataframe(pd.DataFrame([{"baseline": b["label"], "risk": b["risk"], "difference": b["diff_vs_selected"],
                                    "95% low": (b["ci"] or [None, None])[0], "95% high": (b["ci"] or [None, None])[1]}
                                   for b in d["baselines"]]), hide_index=True)
    if sel["family"] == "tie_average":
        st.markdown(f"**Deployed: the average of {len(sel['members'])} tied candidates**")
        st.dataframe(pd.DataFrame([{"family": mm["family"], "K": mm["K"], "path": mm["path"],
                                    "parameters": ", ".join(f"{k}={v}" for k, v in mm["params"].items()) or "-",
                                    f"{held} risk": mm["val_risk"]} for mm in sel["members"]]), hide_index=True)
    st.write("Judges: " + ", ".join(sel["judges"]))
    if sel_state.get("run_id") is not None:
        st.page_link("app_pages/results.py", label=f"Stored as run {sel_state['run_id']}: open in the results browser",
                     query_params={"run": str(sel_state["run_id"])})
    else:
        st.caption("This panel is not in the store, so the run was not stored (save it on the Upload page).")
    if d["guard"]:
        st.caption(f"guard one_se toward {d['guard']['prior_family']}: "
                   + ("adapted" if d["guard"].get("adapted") else "kept the prior"))
    rg = d["regime"]
    if rg.get("quadrant") == "undetermined":
        st.warning(f"**Regime: undetermined.** {rg['advice']}")
    elif rg.get("quadrant"):
        st.info(f"**Regime: {rg['quadrant'].replace('_', ' ')}** ({rg['description']}). {rg['advice']}")
    if d.get("costs"):
        show_costs(d, held)
    fig = validation_risk_over_k(d["candidates"], selected=sel)
    st.plotly_chart(fig)
    figure_download(fig, "validation-risk-over-K")
    table = pd.DataFrame(d["candidates"]).drop(columns=["params", "judges", "index"])
    st.dataframe(table.sort_values("val_risk"), hide_index=True)
    table_download(table, "candidates")
    st.download_button("Download predictor (JSON)", sel_state["predictor"], "fcps-predictor.json",
                       mime="application/json")
    st.page_link("app_pages/deploy.py", label="Deploy it: score and audit traffic (Deploy & monitor)",
                 query_params={"run": str(sel_state["run_id"])} if sel_state.get("run_id") is not None else None)
    st.download_button("Download results (JSON)", json.dumps(d, default=str), "fcps-result.json",
                       mime="application/json")
