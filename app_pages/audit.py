import pandas as pd
import streamlit as st

from fcps_core.families import REGISTRY
from fcps_core.plots import risk_vs_pressure
from fcps_app.common import figure_download, table_download

st.title("Cell-pressure audit")
sel_state = st.session_state.get("selection")
if not sel_state:
    st.info("Run a selection on the Select page first; its candidates are audited here.")
    st.stop()
result = sel_state["result"]
d = sel_state["dict"]
cands = [c for c in d["candidates"] if c["H_K"] is not None]
default = d["selected"]["index"] if d["selected"]["index"] in {c["index"] for c in cands} else cands[0]["index"]
labels = {c["index"]: f"{c['family']} K={c['K']} {c['path']} (val {c['val_mse']:.4f})" for c in cands}
choice = st.selectbox("Candidate", list(labels), index=list(labels).index(default), format_func=labels.get)
cand = next(c for c in d["candidates"] if c["index"] == choice)
n_M = d["split"]["n_fit"]
m = st.columns(6)
for col, key in zip(m, ("H_K", "S_K", "Q_K", "unseen_val", "V_cell", "V_proxy")):
    col.metric(key, f"{cand[key]:.4g}" if isinstance(cand[key], float) else cand[key])
thin = st.slider("thin cell: N_z below", 1, 50, 5)
cells = pd.DataFrame(result.cell_table(choice))
cells["status"] = ["unseen" if u else ("thin" if n < thin else "") for u, n in zip(cells["unseen"], cells["N_z"])]


def shade(row):
    color = {"unseen": "background-color: rgba(214,39,40,0.18)",
             "thin": "background-color: rgba(255,165,0,0.18)"}.get(row["status"], "")
    return [color] * len(row)


st.dataframe(cells.drop(columns=["unseen"]).style.apply(shade, axis=1), hide_index=True)
st.caption(f"{(cells['status'] == 'unseen').sum()} unseen and {(cells['status'] == 'thin').sum()} thin cells; "
           f"N_z counts the rows the candidates were fitted on ({n_M:.0f}).")
table_download(cells, "cells")
table_like = [c for c in d["candidates"] if REGISTRY[c["family"]].table_like and c["H_K"] is not None]
c1, c2 = st.columns(2)
with c1:
    fig = risk_vs_pressure(table_like, n_M, x="unseen_val")
    st.plotly_chart(fig)
    figure_download(fig, "risk-vs-unseen")
with c2:
    fig = risk_vs_pressure(table_like, n_M, x="H_K/n_M")
    st.plotly_chart(fig)
    figure_download(fig, "risk-vs-support")
