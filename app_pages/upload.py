import json

import pandas as pd
import streamlit as st

from fcps_core import FCPSError
from fcps_core.ingest import detect_layout
from fcps_app.common import import_upload, load_bytes, upload_preview

st.title("Upload a panel")
st.markdown("Wide files: one row per item, one column per judge. Long files: one row per (item, judge) "
            "with an `output` column. Labels may be numbers in [0,1], A/B, correct/incorrect or integer "
            "rubric scores; rows without a label are unlabelled traffic.")
up = st.file_uploader("Panel file (CSV, TSV, Parquet or JSON Lines; optionally .gz)",
                      type=["csv", "tsv", "parquet", "jsonl", "gz"])
if up is None:
    st.stop()
data = up.getvalue()
try:
    columns = upload_preview(up.name, data)["columns"]
except FCPSError as exc:
    st.error(str(exc))
    st.stop()


def guess(options, *names):
    for n in names:
        if n in options:
            return options.index(n)
    return 0


none = "(none)"
opts = [none] + columns
layout = st.radio("Layout", ["auto", "wide", "long"], horizontal=True,
                  help=f"auto picked: {detect_layout(columns)}")
c1, c2, c3, c4 = st.columns(4)
item_col = c1.selectbox("item id column", opts, index=guess(opts, "item_id", "id", "item"))
group_col = c2.selectbox("group column", opts, index=guess(opts, "group_id", "group", none))
label_col = c3.selectbox("label column", opts, index=guess(opts, "label", "y", "human", none))
block_col = c4.selectbox("block column (S/M/V/T)", opts, index=guess(opts, "block", none))
schema = st.selectbox("Judge schema", ["detect", "pairwise", "binary", "rubric", "continuous", "categorical"])
reserved = {item_col, group_col, label_col, block_col, none}
judges = st.multiselect("Judge columns (empty = every other column)", [c for c in columns if c not in reserved])
options = {"layout": layout, "item_column": item_col if item_col != none else "item_id",
           "group_column": group_col if group_col != none else "group_id",
           "label_column": label_col if label_col != none else "label",
           "block_column": block_col if block_col != none else None,
           "schema": None if schema == "detect" else schema, "judges": judges or None}
try:
    panel = load_bytes(up.name, data, json.dumps(options))
except FCPSError as exc:
    st.error(str(exc))
    st.stop()
st.success(f"{panel.n_rows} rows, {panel.n_labelled} labelled, {len(panel.judges)} judges, schema {panel.schema}"
           + (f"; {panel.label_note}" if panel.label_note else ""))
preview = pd.DataFrame({"item_id": panel.item_ids[:20], "group_id": panel.group_ids[:20],
                        "label": panel.labels[:20],
                        **{j.name: j.raw_outputs()[:20] for j in panel.judges[:12]}})
st.dataframe(preview, hide_index=True)
st.dataframe(pd.DataFrame([{"judge": j.name, "schema": j.schema,
                            "distinct outputs": len(j.vocab) if j.vocab else "binned"} for j in panel.judges]),
             hide_index=True)
name = st.text_input("Name", up.name.rsplit(".", 1)[0])
licence = st.text_input("Licence / provenance note (stored with the panel)", "")
c1, c2 = st.columns(2)
if c1.button("Save to the store", type="primary"):
    try:
        import_upload(up.name, data, options, panel_name=name, licence=licence)
    except FCPSError as exc:
        st.error(str(exc))
    else:
        st.session_state["current_panel"] = f"stored: {name}"
        st.success(f"'{name}' is stored; Select, Regime map and Audit now offer it, and runs on it are kept.")
if c2.button("Use this panel"):
    st.session_state.setdefault("uploads", {})[name] = (up.name, data, json.dumps(options))
    st.session_state["current_panel"] = f"uploaded: {name}"
    st.success(f"'{name}' is now available on the Select, Regime map and Audit pages (this session only).")
