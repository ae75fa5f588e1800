import json

import pandas as pd
import streamlit as st

from fcps_core.errors import FCPSError
from fcps_core.service.deploy import MAX_PREDICTOR_BYTES
from fcps_app.common import get_store, md, panel_sources, upload_preview
from fcps_app.deploy import (SQL_DIALECTS, calibration_panel, checked_predictor_json, predictor_choices, run_audit,
                             sql_text)
from fcps_app.deploy_view import show_audit
from fcps_app.glossary import glossary_expander, table

st.title("Deploy & monitor")
st.markdown("Run the deployed predictor on new, **unlabelled** traffic and check that the traffic stands on "
            "the calibration support: which judge output patterns calibration never saw, how much each "
            "judge's outputs drifted, which judges went missing. No labels are needed.")
glossary_expander()
store = get_store()

# -- 1. the predictor ------------------------------------------------------------------------------
st.subheader("1. Predictor")
choices = predictor_choices(store, st.session_state.get("selection"))
upload_label = "upload a predictor file (JSON)"
linked = st.query_params.get("run")
labels = list(choices) + [upload_label]
start = next((i for i, k in enumerate(labels) if linked and k.startswith(f"run {linked} ")), 0)
pick = st.selectbox("Deploy", labels, index=start,
                    help="A stored selection run deploys the predictor it selected; a file comes from "
                         "select --save-model or the Select page's download")
if pick == upload_label:
    up = st.file_uploader("Predictor file", type=["json"], key="predictor_file")
    if up is None:
        st.stop()
    if up.size > MAX_PREDICTOR_BYTES:      # checked before the upload is read or parsed
        st.error(md(f"predictor {up.name!r}: {up.size / 2**20:,.0f} MiB is above the {MAX_PREDICTOR_BYTES // 2**20} "
                 "MiB a predictor file can hold; give a file written by select --save-model"))
        st.stop()
    try:
        # untrusted: bounded parse (size, depth, number lengths), then the loader's validation
        predictor_json = checked_predictor_json(up.getvalue(), up.name)
    except FCPSError as exc:
        st.error(md(exc))
        st.stop()
else:
    try:
        predictor_json = choices[pick]()
    except FCPSError as exc:
        st.error(md(exc))
        st.stop()
    if pick.startswith("run "):
        st.query_params["run"] = pick.split()[1]

# -- 2. the traffic --------------------------------------------------------------------------------
st.subheader("2. Traffic")
source = st.radio("Traffic", ["upload a file", "a stored or session panel"], horizontal=True,
                  help="Traffic needs one column per judge of the predictor; labels are not needed")
if source == "upload a file":
    tf = st.file_uploader("Traffic file (CSV, TSV, Parquet or JSON Lines; optionally .gz)",
                          type=["csv", "tsv", "parquet", "jsonl", "gz"], key="traffic_file")
    if tf is None:
        st.stop()
    try:
        columns = upload_preview(tf.name, tf.getvalue())["columns"]
    except FCPSError as exc:
        st.error(md(exc))
        st.stop()
    item_col = st.selectbox("item id column", columns,
                            index=columns.index("item_id") if "item_id" in columns else 0)
    traffic = ("upload", tf.name, tf.getvalue(), item_col)
    traffic_name = tf.name
else:
    sources = panel_sources()
    if not sources:
        st.info("No panel yet: upload a traffic file instead.")
        st.stop()
    # start on the predictor's own calibration panel when it is stored (its judges are there)
    own = calibration_panel(predictor_json)
    labels = list(sources)
    start = next((i for i, k in enumerate(labels) if sources[k][0] == "stored" and sources[k][1] == own), 0)
    which = st.selectbox("Panel used as traffic", labels, index=start)
    # a panel uploaded in this session is read as it was previewed (its own column mapping)
    traffic = sources[which] if sources[which][0] == "stored" else ("session",) + sources[which][1:]
    traffic_name = which

# -- 3. the audit ----------------------------------------------------------------------------------
with st.spinner("Scoring the traffic and auditing its support..."):
    try:
        audit, predictions_csv, panel_name = run_audit(predictor_json, traffic)
    except FCPSError as exc:
        st.error(md(exc))
        st.stop()
st.subheader("3. Audit")
show_audit(audit, key="live")

st.subheader("4. Use it")
c1, c2, c3 = st.columns(3)
c1.download_button("Download predictions (CSV)", predictions_csv, "fcps-predictions.csv", mime="text/csv",
                   help="item_id, prediction, N_z (calibration rows with the row's pattern), in_support (1/0), "
                        "missing_judges")
dialect = c2.selectbox("SQL dialect", list(SQL_DIALECTS), format_func=SQL_DIALECTS.get, key="sql_dialect",
                       help="The engine the SQL download is written for (same predictions in each; what differs: "
                            "python -m fcps_core export --help)")
try:
    sql = sql_text(predictor_json, dialect)
except FCPSError as exc:
    c2.caption(f"No SQL for this predictor: {md(exc)}")
else:
    c2.download_button("Download as SQL", sql, f"fcps-predictor-{dialect}.sql", mime="application/sql",
                       help=f"One SELECT computing the prediction from a table `traffic` with one column per "
                            f"judge ({SQL_DIALECTS[dialect]}); see python -m fcps_core export --help")
c2.download_button("Download predictor (JSON)", predictor_json, "fcps-predictor.json", mime="application/json")
stored_panel = panel_name if panel_name and store.has_panel(panel_name) else None
if stored_panel is None:
    c3.caption("The predictor's calibration panel is not in the store, so this audit cannot be stored.")
elif c3.button("Store this audit", type="primary"):
    try:
        run_id = store.save_audit(audit, panel=stored_panel, predictor=json.loads(predictor_json),
                                  params={"predictor": pick, "traffic": traffic_name, "rows": audit["rows"]})
    except FCPSError as exc:
        st.error(md(exc))
    else:       # nothing cached changes: the list of stored audits is read on each rerun
        st.session_state["audit_stored_here"] = run_id
        st.success(f"Stored as audit run {run_id} on {md(stored_panel)}.")

# -- stored audits ----------------------------------------------------------------------------------
st.subheader("Stored audits")
audits = [r for r in store.runs(kind="audit") if r["status"] == "done"]
if not audits:
    st.caption("None yet: store an audit above, or run python -m fcps_core audit PREDICTOR TRAFFIC --save.")
else:
    table(pd.DataFrame([{"run": r["run_id"], "panel": r["panel"], "finished": r["finished_at"]} for r in audits]),
          helps={"run": "Stored audit run number.", "panel": "The stored panel the predictor was calibrated on.",
                 "finished": "When the audit was stored."})
    open_id = st.selectbox("Open a stored audit", [r["run_id"] for r in audits], key="open_audit")
    try:
        if open_id == st.session_state.get("audit_stored_here"):
            # the audit just stored is the one shown above: listed, not drawn a second time
            st.caption(f"Audit run {open_id} is the audit shown above (just stored); pick another run to open it "
                       "here, or open it in the Results browser.")
        else:
            show_audit(store.run(open_id)["result"], key=f"run-{open_id}")
    except FCPSError as exc:
        st.error(md(exc))
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        # a store is a file a user can edit: a damaged stored audit is one line, not a traceback
        st.error(f"Stored audit run {open_id} is damaged (its result is not an audit this fcps wrote); "
                 "run the audit again and store it.")
