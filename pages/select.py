import json

import pandas as pd
import streamlit as st

from fcps_core import FAMILIES, PATH_RULES, FCPSError, make_blocks
from fcps_core.plots import validation_risk_over_k
from pages.common import (figure_download, panel_picker, run_selection, save_run, split_sizes_table,
                          table_download)

st.title("Select a panel and aggregator")
label, panel = panel_picker()
st.caption(f"{panel.n_rows} rows, {panel.n_labelled} labelled, {len(panel.judges)} judges, schema {panel.schema}")

mode = st.radio("Blocks", ["ratio", "counts"] + (["block column"] if panel.blocks is not None else []),
                horizontal=True)
split, counts = None, None
if mode == "ratio":
    split = st.text_input("S:M:V[:T] ratio", "1:2:1:1", help="1:2:1 is the paper's default; a fourth part reserves a research test block")
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

with st.form("menu_form"):
    c1, c2, c3 = st.columns(3)
    families = c1.multiselect("families", FAMILIES, default=list(FAMILIES))
    paths = c1.multiselect("path rules", PATH_RULES, default=["info_first", "complexity_penalized", "random"])
    k_max = c2.number_input("K max (0 = whole pool)", 0, len(panel.judges), min(len(panel.judges), 12))
    alpha = c2.number_input("table alpha", 0.0, 10.0, 0.5, step=0.1)
    fallback = c2.selectbox("table fallback", ["global", "lower_prefix"])
    objective = c3.selectbox("objective", ["mse", "nll"])
    guard = c3.selectbox("guard", ["none", "one_se"], help="one_se keeps the task-type prior family unless the winner is clearly better")
    refit = c3.selectbox("deployment", ["frozen", "refit"], help="refit re-fits the chosen candidate on S+M+V")
    run = st.form_submit_button("Run selection", type="primary")

if run:
    bar = st.progress(0.0, text="starting")
    try:
        result = run_selection(panel, split, counts, int(seed), lambda f, m: bar.progress(min(f, 1.0), text=m),
                               families=families, paths=paths, k_max=int(k_max) or None, alpha=alpha,
                               fallback=fallback, objective=objective,
                               guard=None if guard == "none" else guard, refit=refit)
    except FCPSError as exc:
        st.error(str(exc))
        st.stop()
    run_id = save_run("select", label, result)
    st.session_state["selection"] = {"label": label, "result": result, "dict": result.to_dict(),
                                     "predictor": json.dumps(result.predictor().to_dict()), "run_id": run_id}

sel_state = st.session_state.get("selection")
if sel_state and sel_state["label"] == label:
    d = sel_state["dict"]
    sel = d["selected"]
    sp = d["split"]
    st.subheader(f"Selected: {sel['family']}, K={sel['K']} ({sel['path']})")
    m = st.columns(5)
    m[0].metric("validation MSE", f"{sel['val_mse']:.4f}")
    m[1].metric("test MSE", "-" if sel["test_mse"] is None else f"{sel['test_mse']:.4f}")
    m[2].metric("menu size |C|", d["menu_size"])
    m[3].metric("validation scale", f"{d['validation_scale']:.3f}", help="sqrt(log|C| / n_V)")
    m[4].metric("Theorem 1 bound", f"{d['theorem1_bound']:.3f}")
    st.write("Judges: " + ", ".join(sel["judges"]))
    if sel_state.get("run_id") is not None:
        st.page_link("pages/results.py", label=f"Stored as run {sel_state['run_id']}: open in the results browser",
                     query_params={"run": str(sel_state["run_id"])})
    else:
        st.caption("This panel is not in the store, so the run was not stored (save it on the Upload page).")
    if d["guard"]:
        st.caption(f"guard one_se toward {d['guard']['prior_family']}: "
                   + ("adapted" if d["guard"].get("adapted") else "kept the prior"))
    rg = d["regime"]
    if rg.get("quadrant"):
        st.info(f"**Regime: {rg['quadrant'].replace('_', ' ')}** ({rg['description']}). {rg['advice']}")
    fig = validation_risk_over_k(d["candidates"])
    st.plotly_chart(fig)
    figure_download(fig, "validation-risk-over-K")
    table = pd.DataFrame(d["candidates"]).drop(columns=["params", "judges", "index"])
    st.dataframe(table.sort_values("val_risk"), hide_index=True)
    table_download(table, "candidates")
    st.download_button("Download predictor (JSON)", sel_state["predictor"], "fcps-predictor.json",
                       mime="application/json")
    st.download_button("Download results (JSON)", json.dumps(d, default=str), "fcps-result.json",
                       mime="application/json")
