"""Select: choose the panel's judges and aggregator, then explain the choice.

The answer comes first (one sentence: which judges, combined how, the estimated risk, what
more judges or a single judge would change), with the frontier chart and a control to deploy
another panel size; then the controls; then the verdict, the evidence (metrics, baselines,
ties, the best candidate per family over K with the winner marked, the judges, the regime),
and every candidate on demand. ``?run=N`` opens a stored selection run, and
the shown stored selection's id is kept in the address so a reload shows it again.
"""

import streamlit as st

from fcps_app.common import panel_picker
from fcps_app.costs import judge_costs_editor
from fcps_app.glossary import glossary_expander
from fcps_app.selection_form import (block_controls, deploy_point, keep_in_address, menu_form, open_stored_run,
                                    run_menu, shown_limits)
from fcps_app.selection_view import show_answer, show_selection

st.title("Select a panel and aggregator")
open_stored_run()
label, panel = panel_picker()
sel_state = st.session_state.get("selection")
answered = False
if sel_state and sel_state["label"] == label:
    # the answer first: one sentence, the frontier, and another panel size to deploy
    point = show_answer(sel_state)
    answered = bool(sel_state["dict"].get("frontier"))
    if point is not None:
        deploy_point(label, panel, sel_state, point)
shown_state = st.session_state.get("selection")
if shown_state and shown_state["label"] == label and shown_state.get("run_id") is not None:
    # the controls below set up a new run; say which stored run the result below is, with its blocks
    split = (shown_state["dict"].get("split") or {})
    st.info(f"Below: stored selection run {shown_state['run_id']} ({split.get('protocol', 'split')} protocol, "
            f"{split.get('n_T', 0):,} rows in the research test block T). The controls set up a new run; its "
            "result replaces this one.")
st.caption(f"{panel.n_rows:,} rows, {panel.n_labelled:,} labelled, {len(panel.judges)} judges, schema {panel.schema}")
split, counts, seed = block_controls(panel)
costs = judge_costs_editor(label, panel)
# the form starts from the shown selection's limits (after deploying a frontier point: that point's)
menu = menu_form(panel, shown_limits(shown_state if shown_state and shown_state["label"] == label else None))
if menu is not None:
    run_menu(label, panel, split, counts, seed, costs, menu)

sel_state = st.session_state.get("selection")
if sel_state and sel_state["label"] == label:
    keep_in_address(sel_state, "select")     # a reload opens the same stored run
    show_selection(sel_state, answered=answered)
glossary_expander()
