"""Results browser: every stored run; open one (?run=N) or several side by side
(?compare=A,B) with a parameter diff; download a run's HTML report; annotate or delete a run."""

import pandas as pd
import streamlit as st

from fcps_app.common import get_store
from fcps_app.glossary import glossary_expander
from fcps_app.results_view import chosen_runs, filtered_runs, show_runs

st.title("Results browser")
flash = st.session_state.pop("results_flash", None)
if flash:
    st.success(flash)
runs = pd.DataFrame(get_store().runs())
if runs.empty:
    st.info("No runs stored yet: run a selection or a sweep on a stored panel.")
    st.stop()
runs["finished_at"] = pd.to_datetime(runs["finished_at"])
filtered_runs(runs)

# Deep links: ?run=ID opens a run, ?compare=ID1,ID2 opens a side-by-side comparison.
chosen = chosen_runs(runs["run_id"].tolist())
if chosen:
    show_runs(chosen)
else:
    st.caption("Pick runs above, or open a deep link such as ?run=1 or ?compare=1,2.")
glossary_expander()
