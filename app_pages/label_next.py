"""Label next: choose which items of a stored panel to send to annotators, download them, upload
the labelled batch back, and see the decision's interval and frontier move
(fcps_core.service.label_next)."""

import pandas as pd
import streamlit as st

from fcps_app.common import STORED, fmt, get_store, md, stored_name, stored_panels
from fcps_app.selection_form import open_stored_run
from fcps_app.glossary import glossary_expander, metric, table
from fcps_core import FCPSError
from fcps_core.service.label_next import decision_summary, merge_batch, plan_batch, record_plan
from fcps_core.service.reports import count_of, estimate_name

st.title("Label next")
st.caption("Each batch holds a uniform random audit sample, just large enough that the evaluation rows (the "
           "random start plus every audit; risks read on them stay those of a random sample) remain at least half "
           "of the labels, and otherwise the items that most lower the deployed predictor's prediction variance "
           "over the traffic.")
names = [p["name"] for p in stored_panels()]
if not names:
    st.info("The store holds no panel yet: import one on the Upload panel page.")
    st.stop()
open_stored_run("label_next")      # ?run=N: its panel is the one in use
# the panel in use on the other pages (picked there, or the address's run) opens here; an
# uploaded panel that is not stored cannot take labels, so it is said and left in use
in_use = st.session_state.get("current_panel")
stored_in_use = stored_name(in_use) if in_use else None
current = stored_in_use if stored_in_use in names else st.session_state.get("label_next_panel")
name = st.selectbox("Stored panel", names, index=names.index(current) if current in names else 0)
st.session_state["label_next_panel"] = name
if in_use and stored_in_use is None:
    st.caption(f"The panel in use on the other pages, {md(in_use)}, is not stored: labels merge into stored panels "
               "only (store it on the Upload panel page).")
else:                               # the last panel picked on any page stays picked on the others
    st.session_state["current_panel"] = f"{STORED}{name}"
store = get_store()
try:
    panel = store.load_panel(name)
except FCPSError as exc:
    st.error(md(exc))
    st.stop()
n_free = int((~panel.labelled).sum())
st.caption(f"{panel.n_rows:,} rows, {panel.n_labelled:,} labelled, {n_free:,} unlabelled, {len(panel.judges)} judges")
c1, c2, c3 = st.columns(3)
batch = c1.number_input("Batch size", min_value=1, max_value=max(n_free, 1), value=max(1, min(50, n_free)))
seed = c2.number_input("Seed", min_value=0, value=0, step=1)
fixed = c3.checkbox("Fixed audit share", value=False,
                    help="Off: audit only as much as keeps the evaluation rows at least half of the labels. "
                         "On: draw the share below uniformly at random.")
share = c3.slider("Audit share", 0.0, 1.0, 0.5, 0.05, help="Share of the batch drawn uniformly at random.",
                  disabled=not fixed)


#: the chosen items' headers in words (the downloaded CSV keeps the keys: it is uploaded back)
ITEM_HEADERS = {"item_id": "item", "group_id": "group", "chosen_by": "chosen by",
                "inclusion_probability": "inclusion probability",
                "expected_variance_reduction": "expected variance reduction"}


def show_decision(container, title: str, d: dict) -> None:
    ci = d.get("deployed_risk_ci") or [None, None]
    # named as the Select page's metric and the runs tables name the same estimate
    metric(container, "deployed_risk", fmt(d.get("deployed_risk")),
           label=f"{title}: {estimate_name(d.get('objective'))}",
           extra=f"95% interval {fmt(ci[0])} to {fmt(ci[1])}; read on {d['n_evaluation_rows']:,} evaluation rows "
                 f"of {d['n_labelled']:,} labelled.")
    container.caption(f"95% interval {fmt(ci[0])} to {fmt(ci[1])} ({d['n_labelled']:,} labels)")


if st.button("Choose the next items", type="primary", disabled=n_free == 0):
    try:
        with st.spinner("Fitting the current decision and ranking the unlabelled items..."):
            plan = plan_batch(panel, int(batch), seed=int(seed), audit_share=float(share) if fixed else None,
                              active_items=store.active_items(name))
        record_plan(store, name, plan)
        st.session_state["label_next"] = {"panel": name, "seed": int(seed), "csv": plan.csv_text(),
                                          "before": plan.decision, "items": plan.to_dict()["items"]}
        st.session_state.pop("label_next_merged", None)
    except FCPSError as exc:
        st.error(md(exc))
if n_free == 0:
    st.info("Every item of this panel is labelled: there is nothing left to choose.")

state = st.session_state.get("label_next")
if state and state["panel"] == name:
    show_decision(st, "Now", state["before"])
    items = pd.DataFrame(state["items"])
    if "expected_variance_reduction" in items:
        # printed as the reason beside it prints it (3 significant digits: these are often below 0.0001)
        items["expected_variance_reduction"] = [None if v is None or v != v else f"{v:.3g}"
                                                for v in items["expected_variance_reduction"]]
    table(items, helps={"reason": "Why the item was chosen."},
          column_config={c: {"label": w} for c, w in ITEM_HEADERS.items() if c in items})
    st.download_button("Download the items to label (CSV)", state["csv"], file_name=f"{name}-label-next.csv",
                       mime="text/csv")

st.subheader("Upload the labelled batch")
upload = st.file_uploader("Labelled batch (CSV)", type=["csv"],
                          help="The downloaded file with its label column filled (numbers from 0 to 1, or A/B, "
                               "yes/no ...). Rows left blank are skipped.")
overwrite = st.checkbox("Replace labels that differ from the stored ones",
                        help="Without it, an item whose stored label differs from the file's is refused.")
if upload is not None and st.button("Merge the labels into the panel"):
    seed_now = state["seed"] if state and state["panel"] == name else int(seed)
    try:
        with st.spinner("Merging and refitting the decision..."):
            before = state["before"] if state and state["panel"] == name else \
                decision_summary(panel, seed=seed_now, active_items=store.active_items(name))
            merged = merge_batch(store, name, upload.getvalue(), overwrite=overwrite, source=f"file {upload.name}")
            after = decision_summary(store.load_panel(name), seed=seed_now, active_items=store.active_items(name))
        st.session_state["label_next_merged"] = {"panel": name, "merged": merged, "before": before, "after": after}
    except FCPSError as exc:
        st.error(md(exc))

done = st.session_state.get("label_next_merged")
if done and done["panel"] == name:
    m = done["merged"]
    st.success(f"Merged: {count_of(m['new'], 'new label')}, {m['replaced']:,} replaced, {m['unchanged']:,} unchanged.")
    left, right = st.columns(2)
    show_decision(left, "Before", done["before"])
    show_decision(right, "After", done["after"])
    kind = done["after"].get("frontier_kind")
    if kind == "frontier":
        st.json(done["after"]["frontier"], expanded=False)
    else:
        b = pd.DataFrame(done["before"]["frontier"]).rename(columns={"risk": "risk before"})
        a = pd.DataFrame(done["after"]["frontier"]).rename(columns={"risk": "risk after"})
        frame = b.merge(a, on="K", how="outer").sort_values("K")
        st.caption("Best cross-fitted risk at each K, before and after the new labels.")
        st.line_chart(frame.set_index("K"))
        table(frame, helps={"risk before": "Best cross-fitted risk at this K before the merge.",
                            "risk after": "Best cross-fitted risk at this K after the merge."})
glossary_expander()
