import json

import pandas as pd
import streamlit as st

from fcps_core.errors import FCPSError
from fcps_core.service.plan import plan_next_judge
from fcps_core.service.select import FAMILIES
from fcps_core.figures.panel import calibrate_vs_curate, next_judge_risk_changes
from fcps_core.reports.glossary import help_text
from fcps_app.common import (digest, figure_download, load_bytes, md, md_list, panel_picker, remember_selection,
                             run_selection, table_download)
from fcps_app.glossary import glossary_expander, table
from fcps_app.selection_form import keep_in_address, open_stored_run, rebuild_selection
from fcps_core.service.reports import FAMILY_NAMES, display_family, judges_count


CI = "Group-clustered paired 95% interval of the risk change."
PLAN_HELP = {
    "action": "add: the deployed judges plus this one; drop: the deployed judges without this one.",
    "judge": "The judge added to or dropped from the deployed prefix.",
    "K": "Judges in the refitted prefix.",
    "risk": "Held-out risk of the refitted prefix (same family, same folds).",
    "risk change": "Held-out risk of the refitted prefix minus the deployed prefix's, paired on the same rows; "
                   "below 0 the change helps.",
    "95% low": CI, "95% high": CI,
    "verdict": "Where the interval lies: the change helps, hurts, or makes no clear difference.",
    "pressure change": "Change of the table pressure V_proxy = H_K / n_M + unseen rate of the joint pattern.",
    "V_proxy": help_text("V_proxy"),
    "beyond menu K": "The prefix is longer than any the selection's menu offered.",
}
UNLABELLED_HELP = {
    "judge": "A judge present in the traffic file only.",
    "pressure change": PLAN_HELP["pressure change"] + " Measured on the traffic rows, no labels needed.",
    "unseen": "Expected share of traffic rows whose joint pattern (deployed judges plus this one) calibration "
              "would not have seen.",
    "H": "Effective support of the traffic's joint patterns with this judge added. " + help_text("H_K"),
    "agrees with deployed": "Share of traffic rows where the judge and the deployed predictor both give a decision "
                            "(score above or below 1/2) and agree.",
    "correlation with deployed": "Correlation of the judge's score with the deployed predictor's on the traffic.",
    "in pool": "Whether the judge is also a column of the labelled panel.",
}

st.title("Next judge")
st.markdown("What would **one more judge** (or one fewer) change? For the deployed candidate, the same family "
            "and hyperparameters are refitted under the selection's own protocol (the same grouped folds; "
            "the research test block is never read) with each pool judge added, and with each deployed judge "
            "dropped. **Risk change** is the paired held-out difference against the deployed prefix on the same "
            "rows, with a group-clustered 95% interval; **pressure change** is the change of the table pressure "
            "V_proxy = H_K / n_M + unseen rate of the joint pattern.")
glossary_expander()
open_stored_run("plan")     # ?run=N: a stored selection
label, panel = panel_picker()

sel_state = st.session_state.get("selection")
if not (sel_state and sel_state["label"] == label):
    st.info("No selection of this panel in this session yet: run one here with the default protocol "
            "(or on the Select page, with every option).")
    with st.form("next_judge_select"):
        c1, c2 = st.columns(2)
        families = c1.multiselect("families", FAMILIES, default=list(FAMILIES))
        k_max = c2.number_input("K max (0 = whole pool)", 0, len(panel.judges), 0)
        seed = c2.number_input("seed", 0, 1_000_000, 0)
        go = st.form_submit_button("Run selection", type="primary")
    if not go:
        st.stop()
    bar = st.progress(0.0, text="starting")
    try:
        result = run_selection(panel, None, None, int(seed), lambda f, m: bar.progress(min(f, 1.0), text=md(m)),
                               families=families, k_max=int(k_max) or None)
    except FCPSError as exc:
        st.error(md(exc))
        st.stop()
    remember_selection(label, result)
    st.rerun()
keep_in_address(sel_state, "plan")
result, sel = sel_state["result"], sel_state["dict"]["selected"]
st.caption(f"Deployed: {md(display_family(sel))} over {judges_count(sel['K'])}"
           + (f" (stored run {sel_state['run_id']})" if sel_state.get("run_id") else " (this session's selection)"))

traffic_file = st.file_uploader("Unlabelled traffic with extra judge columns (optional: the deployed judges plus the "
                                "judges to consider; no labels needed)",
                                type=["csv", "tsv", "parquet", "jsonl", "gz"], key="next_judge_traffic")
key = digest([label, sel, sel_state.get("run_id"), traffic_file.name if traffic_file else None,
              traffic_file.size if traffic_file else None])
state = st.session_state.get("next_judge")
if result is None:
    st.caption("A stored run keeps its tables, not its fitted models: the button first refits this selection "
               "from its stored settings (the same blocks, seed and menu), then plans.")
if st.button("Plan the next judge", type="primary"):
    bar = st.progress(0.0, text="starting")
    try:
        if result is None:
            result, same = rebuild_selection(sel_state["run_id"], panel, lambda f, m: bar.progress(
                min(f, 1.0) * 0.5, text="refitting the stored selection: " + md(m)))
            sel_state["result"] = result
            if not same:
                refitted = result.selected_dict()
                st.warning(f"Refitting stored run {sel_state['run_id']} deploys {md(display_family(refitted))}"
                           f" over K = {refitted['K']}, not what the run stored (the engine changed "
                           "since): the plan below is for the refitted choice.")
        traffic = None
        if traffic_file is not None:
            schemas = {j.name: j.schema for j in result.panel.judges}
            traffic = load_bytes(traffic_file.name, traffic_file.getvalue(),
                                 json.dumps({"require_labels": False, "schema": schemas}))
        plan = plan_next_judge(result, traffic=traffic, progress=lambda f, m: bar.progress(min(f, 1.0), text=md(m)))
    except FCPSError as exc:
        st.error(md(exc))
        st.stop()
    st.session_state["next_judge"] = state = {"key": key, "dict": plan.to_dict()}
if not state or state["key"] != key:
    st.stop()

d = state["dict"]
dep, s = d["deployed"], d["settings"]
if dep["note"]:
    st.info(md(dep["note"]))
m = st.columns(4)
m[0].metric("deployed prefix risk", f"{dep['risk']:.4f}", help=f"Held-out {s['objective']} under the "
            f"{s['protocol']} protocol; SE {dep['risk_se']:.4f}. " + help_text("val_risk"))
m[1].metric("judges deployed", dep["K"], help="Judges in the deployed prefix (" + help_text("K") + ")")
m[2].metric("V_proxy", f"{dep['V_proxy']:.3f}", help=help_text("V_proxy") + " Of the deployed joint pattern.")
m[3].metric("pool judges", s["pool_judges"], help="Judges the plan may add: every judge of the panel (and of the "
            "traffic file, if given).")

st.subheader("Add or drop one judge")
fig = next_judge_risk_changes(d)
st.plotly_chart(fig)
figure_download(fig, "next-judge-risk-change")
rows = [{"action": kind, "judge": e["judge"], "K": e["K"], "risk": e["risk"], "risk change": e["risk_change"],
         "95% low": e["ci"][0], "95% high": e["ci"][1], "verdict": e["verdict"],
         "pressure change": e["pressure_change"], "V_proxy": e["V_proxy"],
         "beyond menu K": e["beyond_menu_limit"]} for kind in ("add", "drop") for e in d[kind]]
changes = pd.DataFrame(rows)
table(changes, helps=PLAN_HELP, formats={"risk change": "%+.4f", "95% low": "%+.4f", "95% high": "%+.4f",
                                         "pressure change": "%+.4f"})
table_download(changes, "next-judge")
st.caption("Below 0 the change helps. The judge set is the deployed one in every fold, so the differences are "
           "paired on the same rows; 'beyond menu K' marks a prefix longer than the selection's menu offered.")

st.subheader("Calibrate, don't curate")
c = d["calibrate_vs_curate"]
m = st.columns(3)
# the families by name, as the chart below names them (the metric said 'one_coin_iso')
m[0].metric(f"whole pool ({c['pool']['n_judges']} judges, {FAMILY_NAMES.get(c['pool']['family'], c['pool']['family'])})",
            f"{c['pool']['risk']:.4f}",
            help="Held-out risk of one calibrated aggregator over every judge of the pool.")
m[1].metric(f"curated top-{c['curated']['k']} ({FAMILY_NAMES.get(c['curated']['family'], c['curated']['family'])})",
            f"{c['curated']['risk']:.4f}",
            help="Held-out risk of the same aggregator over only the individually best judges (picked inside "
                 "each fold).")
m[2].metric("curated - pool", f"{c['difference']:+.4f}", help=f"Curated risk minus pool risk, paired on the same "
            f"rows (above 0: calibrating the whole pool is better); 95% interval {c['ci'][0]:+.4f} to "
            f"{c['ci'][1]:+.4f}.")
verdict = {"calibrate the pool": st.success, "curate": st.warning}.get(c["verdict"], st.info)
verdict(f"**{c['verdict']}**: curated minus pool {c['difference']:+.4f} (95% interval {c['ci'][0]:+.4f} to "
        f"{c['ci'][1]:+.4f}). The curated judges: {md_list(c['curated']['judges'])} "
        f"(the same top-{c['curated']['k']} in {c['curated']['fold_agreement']:.0%} of folds).")
fig = calibrate_vs_curate(d, names=FAMILY_NAMES)
st.plotly_chart(fig)
figure_download(fig, "calibrate-vs-curate")
st.caption(md(c["pool"]["note"]) + ". " + md(c["curated"]["rule"]) + ".")

u = d.get("unlabelled")
if u and u.get("source"):
    st.subheader("Judges without labels")
    st.markdown(f"On {md(u['source'])} ({u['rows']:,} rows): the deployed pattern's pressure is "
                f"{u['pressure_deployed']:.3f} (H {u['H_K_deployed']:.1f} / n_cal {u['n_cal']} + unseen "
                f"{u['unseen_rate_deployed']:.1%}).")
    extra = pd.DataFrame([{"judge": j["judge"], "pressure change": j["pressure_change"], "unseen": j["unseen_rate"],
                           "H": j["H_K"], "agrees with deployed": j["agreement_with_deployed"],
                           "correlation with deployed": j["correlation_with_deployed"], "in pool": j["in_pool"]}
                          for j in u["judges"]])
    table(extra, helps=UNLABELLED_HELP)
    st.warning("Their risk effect needs labels: label some traffic rows (or collect their outputs on the labelled "
               "rows) and plan again.")
    st.caption(u["pressure"] + ". Agreement: " + u["agreement"] + ".")
elif u:
    st.subheader("Judges without labels")
    st.warning(md_list(j["judge"] for j in u["judges"]) + f": {md(u['note'])}; their risk effect needs labels.")
