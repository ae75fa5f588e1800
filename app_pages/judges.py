import hashlib

import numpy as np
import pandas as pd
import streamlit as st

from fcps_core.errors import FCPSError
from fcps_core.service.reports import (count_of, risk_digits, effective_judges_note, family_name, judge_order, judges_count,
                                       judges_report, metric_help, panel_judges_report)
from fcps_core.figures.panel import judge_matrix_heatmap, reliability_diagram
from fcps_app.common import figure_download, md, md_list, page_link, panel_picker, table_download
from fcps_core.reports.glossary import help_text
from fcps_app.glossary import glossary_expander, table
from fcps_app.selection_form import keep_in_address, open_stored_run
from fcps_core.defaults import deployed_family_name

METRIC_HELP = metric_help()
st.title("Judges")
st.markdown("How good is each judge alone, how much do the judges agree and err together, and what does each "
            "contribute to the deployed predictor? Everything is measured against the human labels of the "
            "**deployable rows**: every labelled row outside the research test block T (T is never read).")
glossary_expander()
open_stored_run("judges")   # ?run=N: a stored selection
label, panel = panel_picker()
if panel.n_labelled == 0:
    st.warning("This panel has no human labels: the judges cannot be measured against them.")
    st.stop()


@st.cache_data(show_spinner="Measuring the judges...", max_entries=8)
def panel_report(key: str, _panel) -> dict:
    """The per-judge table and matrices on the default blocks' deployable rows (``key``
    names the panel and its labels; the panel itself is not hashed)."""
    return panel_judges_report(_panel)


sel_state = st.session_state.get("selection")
sel_state = sel_state if sel_state and sel_state["label"] == label else None
result = sel_state.get("result") if sel_state else None
rep = None
if sel_state:
    keep_in_address(sel_state, "judges")
    st.caption("The deployed predictor below is " + (f"stored run {sel_state['run_id']}'s" if sel_state.get("run_id")
                                                      else "this session's unsaved selection's") + ".")
    rep = sel_state["dict"].get("judges_report") or (judges_report(result) if result is not None else None)
if rep is None:
    st.info("No selection of this panel in this session: run a selection on the Select page for each judge's "
            "contribution and the deployed predictor's calibration. The per-judge table and the matrices below "
            "need none (they use the default blocks' deployable rows).")
    page_link("app_pages/select.py", "Run a selection (Select page)")
    key = f"{label}|{panel.n_rows}|{hashlib.sha1(np.nan_to_num(panel.labels, nan=-1).tobytes()).hexdigest()}"
    try:
        rep = panel_report(key, panel)
    except FCPSError as exc:
        st.error(md(exc))
        st.stop()

eff, red = rep["effective_judges"], rep["redundancy"]
m = st.columns(4)
m[0].metric("deployable labelled rows", rep["rows"], help=rep["rows_note"])
m[1].metric("judges", len(rep["names"]), help="Judge columns of the panel measured here.")
m[2].metric("effective number of judges", "-" if eff["value"] is None else f"{eff['value']:.1f}",
            help=help_text("effective_judges") + " " + METRIC_HELP["effective_judges"] + f" Over {eff['K']} judges"
            + (f"; left out (decision never varies within a label class): {md_list(eff['excluded'])}"
               if eff["excluded"] else "") + ".")
m[3].metric("near-duplicate pairs", red["n_pairs"], help=f"Pairs with {red['rule']}.")
left_out = effective_judges_note(eff, len(rep["names"]))
if left_out:        # said on the page, not only in the help: "1.0" over 1 of 12 judges read as 12 alike
    m[2].caption(md(left_out[0].upper() + left_out[1:]) + ".")
if rep["label_note"]:
    st.caption(md(rep["label_note"].capitalize()) + ".")

st.subheader("Each judge against the human labels")
deployed = {j["judge"] for j in (rep.get("contribution") or {}).get("judges", [])}
jtable = pd.DataFrame(rep["judges"]).assign(deployed=lambda t: t["judge"].isin(deployed))
# a judge with one output on every row does not rise or fall with the label: said in words
jtable["direction"] = jtable["direction"].replace({"constant": "none (constant)"})
jtable = jtable.sort_values("brier_iso", na_position="last")
labels = {"coverage": "coverage", "parse_error_rate": "parse errors", "abstain_rate": "abstains",
          "accuracy": "accuracy", "kappa": "kappa", "auc": "AUC", "brier_iso": "Brier (isotonic)"}
config = {c: st.column_config.NumberColumn(name, help=METRIC_HELP[c], format="%.4f" if c == "brier_iso" else "%.3f")
          for c, name in labels.items()}
table(jtable, column_order=["judge", "brier_iso", "accuracy", "auc", "direction", "kappa", "coverage",
                                                    "parse_error_rate", "abstain_rate", "missing_rate", "schema",
                                                    "decision", "deployed"], column_config={
    **config, "missing_rate": st.column_config.NumberColumn("missing", format="%.3f",
                                                            help="Share of rows with no output at all."),
    "judge": st.column_config.TextColumn("judge", help="The judge column of the panel."),
    "direction": st.column_config.TextColumn("direction", help=METRIC_HELP["direction"]),
    "schema": st.column_config.TextColumn("schema", help="How the judge's outputs were read: pairwise, binary, "
                                                         "rubric, continuous or categorical."),
    "decision": st.column_config.TextColumn("decision", help=METRIC_HELP["decision"]),
    "deployed": st.column_config.CheckboxColumn("deployed", help="Used by the deployed predictor.")})
table_download(jtable, "judges")
st.caption(f"Base rate (mean label) {rep['base_rate']:.3f}: its Brier score is what a constant prediction scores; "
           f"isotonic maps are cross-fitted over {rep['folds']['folds']} grouped folds.")
# the same judge's isotonic risk is printed on the Select page on the selection's own rows: said
# beside this page's Brier score only when that risk is an MSE too (an NLL run's is a log loss)
chosen_by = sel_state["dict"] if sel_state else {}
single = next((b for b in (chosen_by.get("baselines") or []) if b.get("name") == "best_single_judge"
               and b.get("judge") and b.get("risk") is not None), None)
own = next((j.get("brier_iso") for j in rep["judges"] if single and j["judge"] == single["judge"]), None)
if single and own is not None and str((chosen_by.get("menu") or {}).get("objective") or "mse") == "mse":
    where = ("held-out over the selection's own folds and repeats" if chosen_by.get("protocol") == "crossfit"
             else "on the selection's validation rows")
    rk = risk_digits(chosen_by)     # the Select page's decimals for this run's risks
    st.caption(f"The selection's best single judge, {md(single['judge'])}, reads {own:.{rk}f} here (one cross-fit "
               f"over these {rep['folds']['folds']} folds) and {single['risk']:.{rk}f} on the Select page ({where}, the "
               "basis of its fixed-recipe comparisons): the same map on different rows.")

st.subheader("Between judges")
kind = "kappa" if rep["agreement"]["kind"] == "kappa" else "Spearman rank correlation"
which = st.radio("Matrix", [f"agreement ({kind})", "error correlation"], horizontal=True,
                 help=METRIC_HELP["agreement"] + " " + METRIC_HELP["error_correlation"])
matrix = rep["agreement"]["matrix"] if which.startswith("agreement") else rep["error_correlation"]["matrix"]
fig = judge_matrix_heatmap(rep["names"], matrix, value=kind if which.startswith("agreement") else "error corr.")
st.plotly_chart(fig)
figure_download(fig, "judge-matrix")
if red["n_pairs"]:
    shown = "; ".join(f"{md(p['judges'][0])} ~ {md(p['judges'][1])}" for p in red["pairs"][:5])
    st.warning(f"**{count_of(red['n_pairs'], 'near-duplicate pair')}** ({red['rule']}): {shown}"
               + (" and more below" if red["n_pairs"] > 5 else "") + ". One judge of each pair adds little.")
    with st.expander("All near-duplicate pairs" + (f" (the first {len(red['pairs'])})" if red["n_pairs"] > len(red["pairs"]) else "")):
        table(pd.DataFrame([{"judge A": p["judges"][0], "judge B": p["judges"][1], "agreement": p["agreement"],
                                 "error correlation": p["error_correlation"]} for p in red["pairs"]]),
                  column_config={"judge A": st.column_config.TextColumn("judge A", help="One judge of the pair."),
                                 "judge B": st.column_config.TextColumn("judge B", help="The other judge of the pair."),
                                 "agreement": st.column_config.NumberColumn("agreement", format="%.3f",
                                                                            help=METRIC_HELP["agreement"]),
                                 "error correlation": st.column_config.NumberColumn(
                                     "error correlation", format="%.3f", help=METRIC_HELP["error_correlation"])})
else:
    st.success(f"No near-duplicate pair ({red['rule']}).")

if not sel_state or "contribution" not in rep:
    st.stop()

sel = sel_state["dict"]["selected"]
contrib = rep["contribution"]
if "drop_one_note" in contrib and "weight_note" not in contrib and result is not None:
    # a run stored before every judge had its drop-one row: recomputed once, then kept in this
    # session's selection (rep is its judges report) so a rerun does not rebuild the report
    contrib = rep["contribution"] = judges_report(result)["contribution"]
st.subheader("Contribution to the deployed predictor")
models = contrib["models"]
meanings = sorted({f"{family_name(mm['family'])}: {mm['meaning'] or 'a table has none'}" for mm in models})
st.markdown(f"Deployed: **{md(deployed_family_name(family_name(contrib['family']), len(models)))}** over "
            f"{judges_count(len(contrib['judges']))}" + ".  \nWhat a weight is here — "
            + "; ".join(meanings) + ".")
if contrib["note"]:
    st.caption(md(contrib["note"]))
if contrib.get("weight_note"):
    st.caption(md(contrib["weight_note"][0].upper() + contrib["weight_note"][1:]) + "; each model's own weights "
               "are in the JSON's judges_report.contribution.models.")
drop_one = contrib.get("drop_one")
if drop_one:
    st.caption(f"Drop-one change: the held-out {md(drop_one['objective'].upper())} of what the same choice rule "
               "deploys without the judge (the best candidates that do not call it, on the same held-out "
               f"predictions, no refit) minus the deployed choice's {drop_one['risk']:.4f}, with the paired 95% "
               "interval. Above 0: dropping the judge raises the risk, so the judge helps.")
elif "weight_note" in contrib:      # no held-out matrix to replay the choice on
    st.caption(md(contrib.get("drop_one_note") or "No drop-one changes for this run."))
else:
    st.caption("This run was stored before every deployed judge had a drop-one change: run the selection again "
               "(Select page) for them.")


def _without(j: dict) -> str | None:
    c = j.get("drop_choice")
    if not c:
        return j.get("drop_note")
    how = deployed_family_name(c["family"], c["members"])
    return f"{how} over {c['K']} judges: {c['risk']:.4f}"


ctable = pd.DataFrame([{"judge": j["judge"], "models": j["members"], "weight": j["weight"],
                        "weight share": j["weight_share"], "shared": ", ".join(j.get("shared_with") or []) or "-",
                        "drop-one change": j["drop_risk_change"],
                        "95% low": (j["drop_ci"] or [None, None])[0], "95% high": (j["drop_ci"] or [None, None])[1],
                        "meaning": j["drop_verdict"] or j.get("drop_note"), "deployed without it": _without(j)}
                       for j in contrib["judges"]])
# the Select page's order (judge_order: a judge every candidate calls first, then by drop-one change)
listed = judge_order({"selected": {"judges": list(ctable["judge"])}, "judges_report": {"contribution": contrib}})[0]
ctable = ctable.set_index("judge").loc[listed].reset_index()
table(ctable, column_config={
    "judge": st.column_config.TextColumn("judge", help="A judge the deployed predictor uses."),
    "models": st.column_config.NumberColumn("models", help="How many of the deployed models use the judge."),
    "weight": st.column_config.NumberColumn("weight", help=METRIC_HELP["weight"], format="%+.3f"),
    "weight share": st.column_config.ProgressColumn("weight share", help=METRIC_HELP["weight_share"],
                                                    min_value=0.0, max_value=1.0, format="%.3f"),
    "shared": st.column_config.TextColumn("shared", help=METRIC_HELP["shared_with"], width="medium"),
    "drop-one change": st.column_config.NumberColumn("drop-one change", help=METRIC_HELP["drop_risk_change"],
                                                     format="%+.5f"),
    "95% low": st.column_config.NumberColumn("95% low", help="Group-clustered paired 95% interval.", format="%+.5f"),
    "95% high": st.column_config.NumberColumn("95% high", help="Group-clustered paired 95% interval.", format="%+.5f"),
    "meaning": st.column_config.TextColumn("meaning", help="Where the interval lies: dropping the judge raises "
                                                          "risk (it helps), lowers it, or no clear change."),
    "deployed without it": st.column_config.TextColumn(
        "deployed without it", help="What the same choice rule deploys without the judge, and its held-out risk.")})
table_download(ctable, "judge-contributions")

cal = rep["calibration"]
st.subheader("Calibration of the deployed predictor")
c = st.columns(4)
c[0].metric("ECE", f"{cal['ece']:.4f}", help=METRIC_HELP["ece"] + f" {cal['n_bins']} bins.")
c[1].metric("Brier score", "-" if cal["brier"] is None else f"{cal['brier']:.4f}",
            help="Mean squared error of the deployed predictor's held-out predictions against the label.")
c[2].metric("base rate's Brier", "-" if cal["brier_base_rate"] is None else f"{cal['brier_base_rate']:.4f}",
            help="The Brier score of predicting each held-out row by its training rows' mean label.")
c[3].metric("base rate", f"{cal['base_rate']:.3f}", help="Mean label of the held-out rows.")
families = {mm["family"] for mm in models}
fig = reliability_diagram(cal, family=families.pop() if len(families) == 1 else None)
st.plotly_chart(fig)
figure_download(fig, "reliability-diagram")
st.caption(f"{cal['points']} held-out predictions on {cal['rows']} rows: {cal['predictions']}; {cal['binning']}.")
