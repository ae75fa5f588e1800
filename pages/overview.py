import streamlit as st

from pages.common import EMBEDDED, load_embedded

st.title("Finite-Calibration Panel Selection")
st.markdown("""
FCPS decides **which judges to deploy and how to combine them** with a small budget of human labels.
1. Labels are split into selection (S: order judges into paths), calibration (M: fit each aggregator) and validation (V: pick one) blocks, plus an optional research test block T that only audits.
2. Every (path, prefix size K, aggregator family) candidate is fitted on M and scored on V.
3. The lowest validation risk wins, and the report says *why*: effective support H_K, unseen-pattern rate, cell pressure and the regime quadrant (interaction gain x table pressure).
4. A joint table must earn its cells: it wins only when interactions are real **and** the calibration labels cover its patterns.
""")
st.subheader("Embedded panels")
for label, filename in EMBEDDED.items():
    panel = load_embedded(filename)
    st.write(f"**{label}**: {panel.n_rows} rows, {panel.n_labelled} labelled, "
             f"{len(panel.judges)} judges, schema {panel.schema}")
st.page_link("pages/select.py", label="Run a selection", icon=":material/play_arrow:")
