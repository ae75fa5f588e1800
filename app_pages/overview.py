import pandas as pd
import streamlit as st

from fcps_core.errors import FCPSError
from fcps_app.common import get_store, md, page_link, stored_panels
from fcps_app.glossary import glossary_expander, table
from fcps_app.runs import latest_runs, open_run, runs_table

DEMO = "synthetic-parity"
#: the Overview's panels table: the facts a new user looks at, the licence note last
PANEL_COLUMNS = ["name", "schema", "n_rows", "n_labelled", "n_judges", "runs", "created_at", "licence"]
#: the store's keys in words, as the table shows them
PANEL_HEADERS = {"n_rows": "rows", "n_labelled": "labelled", "n_judges": "judges", "created_at": "stored"}
PANEL_HELPS = {"rows": "Rows (items) of the panel, labelled or not.",
               "labelled": "Rows with a human label.",
               "judges": "Judge columns of the panel.",
               "stored": "When the panel was stored (UTC)."}


def licence_short(text) -> str:
    """A long licence note's first clause ("MIT" of "MIT (repository LICENSE file, ...)"):
    the table stays narrow; the full notes follow it."""
    text = "" if text is None or text != text else str(text)
    return text.split(" (", 1)[0] if len(text) > 30 else text

st.title("Finite-Calibration Panel Selection")
st.markdown("""
You have several LLM judges and a few hundred human labels. FCPS tells you **which judges to deploy and how
to combine their verdicts**, and how sure it is.

1. **Upload your panel**: one row per item, one column per judge, and a label column where a human has judged
   the item (empty cells are fine: those rows are unlabelled). The page shows how every label and judge
   output is read before anything is stored.
2. **Select**: every way of deploying the panel (which judges, in which order, how many, combined by which
   aggregator) is fitted on some labelled rows and scored on others. You get the winner, its expected error
   on new items with an interval, how it compares with simple recipes (best single judge, majority vote),
   and the candidates the data cannot tell apart.
3. **Judges**: how good each judge is alone, which judges are near-duplicates, what each contributes.
4. **Regime map**: would more labels change the answer? A joint table over the judges' verdicts wins only when
   the judges interact *and* there are enough labels to fill its cells.
5. **Deploy & monitor**: run the chosen predictor on new, unlabelled traffic and check that the traffic still
   looks like the labelled data.
""")
b1, b2 = st.columns(2)
if b1.button("Upload your panel", type="primary", icon=":material/upload_file:", width="stretch"):
    st.switch_page("app_pages/upload.py")
demo = b2.button("Open the demo (selection and sweep)", type="primary", icon=":material/play_arrow:",
                 width="stretch", help=f"The stored '{DEMO}' panel (the label follows the parity of six judges' "
                                       "verdicts) with its stored selection and calibration-growth sweep.")
b1.caption("CSV, TSV, Parquet or JSON Lines; your file stays on this machine.")
b2.caption("A synthetic panel whose label follows the parity of six judges' verdicts, so only a joint table "
           "works; opens its stored selection (Select page) and its sweep (Regime map).")
if demo:
    try:
        runs = latest_runs(DEMO)
        for kind in ("sweep", "select"):       # the selection last: it sets the current panel too
            if kind in runs:
                open_run(runs[kind])
    except FCPSError as exc:
        st.error(f"The demo could not be opened: {md(exc)}")
        st.stop()
    if "select" in runs:
        st.switch_page("app_pages/select.py", query_params={"run": str(runs["select"])})
    st.session_state["current_panel"] = f"stored: {DEMO}"
    st.warning(f"The store holds no finished selection of '{DEMO}'"
               + ("" if "sweep" in runs else " nor a sweep") + ": run one on the Select page.")

glossary_expander()
store = get_store()
st.subheader("Stored panels")
panels = pd.DataFrame(stored_panels())
if panels.empty:
    st.info("The store holds no panels yet: upload one on the Upload page.")
else:
    shown = panels[[c for c in PANEL_COLUMNS if c in panels]].assign(licence=panels["licence"].map(licence_short))
    table(shown.rename(columns=PANEL_HEADERS), helps=PANEL_HELPS,
          column_config={"licence": st.column_config.TextColumn("licence", width="medium")})
    notes = [f"**{md(r['name'])}**: {md(r['licence'])}" for _, r in panels.iterrows()
             if isinstance(r.get("licence"), str) and licence_short(r["licence"]) != r["licence"]]
    if notes:
        st.caption("Licence notes: " + "; ".join(notes))
st.subheader("Latest runs")
runs = pd.DataFrame(store.runs()[:10])
if runs.empty:
    st.info("No runs stored yet.")
else:
    runs_table(runs, columns=["run_id", "panel", "kind", "status", "family", "K", "val_mse", "deployed_risk", "test_mse",
                              "finished_at"])
    page_link("app_pages/results.py", "Browse every stored run", icon=":material/table_view:")
