import json

import pandas as pd
import streamlit as st

from fcps_core import FAMILIES, PATH_RULES, FCPSError, make_blocks, select
from fcps_core.plots import regime_map, validation_risk_over_k
from pages.common import EMBEDDED, load_embedded, load_upload

st.title("Select a panel and aggregator")
source = st.radio("Panel", list(EMBEDDED) + ["Upload a CSV"], horizontal=True)
panel = None
try:
    if source == "Upload a CSV":
        up = st.file_uploader("Wide or long panel CSV/TSV", type=["csv", "tsv", "gz"])
        if up is not None:
            panel = load_upload(up.name, up.getvalue())
    else:
        panel = load_embedded(EMBEDDED[source])
except FCPSError as exc:
    st.error(str(exc))
if panel is None:
    st.stop()
st.caption(f"{panel.n_rows} rows, {panel.n_labelled} labelled, {len(panel.judges)} judges, schema {panel.schema}")

with st.form("menu"):
    c1, c2, c3 = st.columns(3)
    split = c1.text_input("S:M:V[:T] ratio", "1:2:1:1", help="1:2:1 is the paper's default; a fourth part reserves a test block")
    seed = c1.number_input("seed", 0, 10_000, 0)
    families = c2.multiselect("families", FAMILIES, default=list(FAMILIES))
    paths = c2.multiselect("path rules", PATH_RULES, default=["info_first", "complexity_penalized", "random"])
    k_max = c3.number_input("K max (0 = whole pool)", 0, len(panel.judges), min(len(panel.judges), 12))
    alpha = c3.number_input("table alpha", 0.0, 10.0, 0.5, step=0.1)
    objective = c3.selectbox("objective", ["mse", "nll"])
    run = st.form_submit_button("Run selection", type="primary")

if run:
    bar = st.progress(0.0, text="starting")
    try:
        blocks = make_blocks(panel, split=split, seed=int(seed))
        result = select(panel, blocks, families=families, paths=paths, k_max=int(k_max) or None,
                        alpha=alpha, objective=objective, seed=int(seed),
                        progress=lambda f, m: bar.progress(min(f, 1.0), text=m))
    except FCPSError as exc:
        st.error(str(exc))
        st.stop()
    st.session_state["result"] = result.to_dict()
    st.session_state["predictor"] = json.dumps(result.predictor().to_dict())

if "result" in st.session_state:
    d = st.session_state["result"]
    sel = d["selected"]
    sp = d["split"]
    st.subheader(f"Selected: {sel['family']}, K={sel['K']} ({sel['path']})")
    m = st.columns(5)
    m[0].metric("validation MSE", f"{sel['val_mse']:.4f}")
    m[1].metric("test MSE", "-" if sel["test_mse"] is None else f"{sel['test_mse']:.4f}")
    m[2].metric("menu size |C|", d["menu_size"])
    m[3].metric("validation scale", f"{d['validation_scale']:.3f}")
    m[4].metric("blocks S/M/V/T", f"{sp['n_S']}/{sp['n_M']}/{sp['n_V']}/{sp['n_T']}")
    st.write("Judges: " + ", ".join(sel["judges"]))
    rg = d["regime"]
    if rg.get("quadrant"):
        st.info(f"**Regime: {rg['quadrant'].replace('_', ' ')}** ({rg['description']}). {rg['advice']}")
        st.plotly_chart(regime_map([{**rg, "label": d["panel"]["name"]}],
                                   gain_threshold=rg["gain_threshold"],
                                   pressure_threshold=rg["pressure_threshold"]))
    st.plotly_chart(validation_risk_over_k(d["candidates"]))
    table = pd.DataFrame(d["candidates"]).drop(columns=["params", "judges", "index"])
    st.dataframe(table.sort_values("val_risk"), hide_index=True)
    st.download_button("Download predictor (JSON)", st.session_state["predictor"], "fcps-predictor.json",
                       mime="application/json")
    st.download_button("Download results (JSON)", json.dumps(d, default=str), "fcps-result.json",
                       mime="application/json")
    st.download_button("Download candidates (CSV)", table.to_csv(index=False), "fcps-candidates.csv",
                       mime="text/csv")
