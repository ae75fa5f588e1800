import pandas as pd
import streamlit as st

from fcps_app.common import get_store, stored_panels

st.title("Finite-Calibration Panel Selection")
st.markdown("""
FCPS decides **which judges to deploy and how to combine them** with a small budget of human labels.
1. Every candidate (judge ordering, prefix size K, aggregator family) is fitted and scored by cross-fitting: each labelled row is used for fitting in some folds and for scoring in the others (the paper's S/M/V blocks are one click away). An optional research test block T only audits.
2. Candidates that the data cannot tell apart are averaged; the deployed predictor is refitted on every label.
3. The verdict comes with its uncertainty: a bias-corrected estimate of the deployed risk with an interval, the same held-out comparison against fixed recipes (best judge, majority vote, logistic over all judges, ...), the statistical ties, and *why*: effective support H_K, unseen-pattern rate, cell pressure and the regime quadrant (interaction gain x table pressure), stated only when its interval is clear.
4. A joint table must earn its cells: it wins only when interactions are real **and** calibration labels cover its patterns.
5. Real judge panels usually sit on the scalar side of the map; planted interactions flip it once labels grow.
""")
store = get_store()
if st.button("Open the demo: a six-way parity panel with its stored selection and sweep", type="primary"):
    demo = "synthetic-parity"
    runs = {r["kind"]: r["run_id"] for r in reversed(store.runs(panel=demo)) if r["status"] == "done"}
    st.session_state["current_panel"] = f"stored: {demo}"
    if "sweep" in runs:
        st.session_state["sweep"] = {"label": f"stored: {demo}", "data": store.run(runs["sweep"])["result"],
                                     "run_id": runs["sweep"]}
    st.switch_page("app_pages/regime.py")

st.subheader("Stored panels")
panels = pd.DataFrame(stored_panels())
if panels.empty:
    st.info("The store holds no panels yet: upload one on the Upload page.")
else:
    st.dataframe(panels.drop(columns=["source"], errors="ignore"), hide_index=True)
st.subheader("Latest runs")
runs = pd.DataFrame(store.runs()[:10])
if runs.empty:
    st.info("No runs stored yet.")
else:
    st.dataframe(runs[["run_id", "panel", "kind", "status", "family", "K", "val_mse", "test_mse", "finished_at"]],
                 hide_index=True)
    st.page_link("app_pages/results.py", label="Browse every stored run", icon=":material/table_view:")
