"""How a traffic audit is shown (Deploy & monitor page, results browser): status first,
then pressure, unseen and missing rates, drift per judge, the cell table."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from fcps_core.reports.glossary import help_text
from fcps_core.service.reports import family_name, judges_count
from fcps_core.figures.panel import audit_drift_bars, judge_output_shift
from fcps_app.common import figure_download, md, table_download
from fcps_app.glossary import table

GLOSSARY = (
    "**q(z)**: share of traffic rows with joint output pattern z. **N_z**: calibration rows with that "
    "pattern. **Deployment cell pressure** = sum over seen patterns of q(z)/N_z plus the unseen share u "
    "(Eq. 3, cell pressure, of the paper with traffic frequencies in place of p_z): a table's estimation "
    "cost on this traffic; no labels needed. **Outside support**: rows the deployed family cannot place "
    "(every family: an output never seen in calibration or a value outside its judge's calibration range; "
    "tables also an unseen pattern, which gets the fallback). **TV**: total variation distance between "
    "calibration and traffic distributions; its **threshold** is the 99% quantile of TV between two "
    "samples of these sizes from one distribution, so a bar above it is drift, not sampling noise.")


_TV = help_text("tv")
JUDGE_HELP = {
    "judge": "A judge the predictor uses.",
    "TV": "Total variation distance between the judge's calibration and traffic output distributions. " + _TV,
    "threshold": "99% quantile of TV between two samples of these sizes from one distribution: a TV above it is "
                 "drift, not sampling noise.",
    "drifted": "TV above its threshold.",
    "PSI": help_text("psi"),
    "chi-square p": "p-value of a chi-square test that calibration and traffic outputs share one distribution.",
    "missing (cal.)": "Share of calibration rows where the judge gave no output.",
    "missing (traffic)": "Share of traffic rows where the judge gave no output.",
    "parse errors (cal.)": "Share of calibration rows whose output is a parse error.",
    "parse errors (traffic)": "Share of traffic rows whose output is a parse error.",
}
#: what two cell-table columns mean here (the glossary words the others: pattern, N_z, p_z, q_z, ...)
CELL_HELP = {
    "prediction": "Mean deployed prediction over the traffic rows with this pattern.",
    "unseen": help_text("unseen_cell"),
}


def show_audit(d: dict, *, key: str) -> None:
    status = d["status"]
    reasons = d.get("reasons") or []
    text = f"**{status}**" + ("" if reasons else ": traffic sits on the calibration support.")
    if reasons:
        text += "\n" + "\n".join(f"- {md(r)}" for r in reasons)     # reasons quote judge names
    {"OK": st.success, "WARN": st.warning, "REFUSE": st.error}[status](text)
    p = d["predictor"]
    st.caption(f"{d['rows']:,} traffic rows against the {md(family_name(p.get('display_name') or p['family']))} predictor "
               f"over {judges_count(len(p['judges']))}, "
               f"calibrated on {p['calibration_rows']:,} rows" + (f" of {md(p['panel'])}" if p.get("panel") else ""))
    m = st.columns(5)
    if p.get("table_like", True):
        m[0].metric("cell pressure", f"{d['pressure']:.3f}",
                    help=help_text("cell_pressure") + f" Here: sum q(z)/N_z = {d['pressure_sum']:.3f} plus unseen "
                         f"share {d['unseen_rate']:.3f}.")
    else:   # a scalar predictor fits weights, not cells: its status does not use the pressure either
        m[0].metric("cell pressure", "–", help=f"Does not apply: the {md(family_name(p['family']))} predictor is scalar (it fits "
                    f"weights over the judges' outputs, not one value per output pattern). The table figure would "
                    f"be {d['pressure']:.3f}; the status does not use it.")
        st.caption(f"The {md(family_name(p['family']))} predictor is scalar: cell pressure and unseen patterns are a joint "
                   "table's costs and do not enter its status; outside support (an output or value calibration "
                   "never saw) and drift do.")
    m[1].metric("unseen patterns", f"{d['unseen_rate']:.1%}",
                help="Share of traffic rows whose joint pattern calibration never saw (N_z = 0): a table can only "
                     "fall back there.")
    m[2].metric("outside support", f"{d['out_of_support_rate']:.1%}",
                help="Share of traffic rows the deployed family cannot place: an output never seen in calibration "
                     "or a value outside its judge's calibration range (every family), or an unseen pattern "
                     "(tables).")
    rise = d["missing_rate"] - d.get("missing_calibration", 0.0)
    m[3].metric("missing outputs", f"{d['missing_rate']:.1%}",
                delta=f"{rise:+.1%} vs calibration" if abs(rise) >= 0.0005 else None,
                delta_color="inverse", help=f"Rows with a missing output: the share of traffic rows where some judge "
                                            f"gave no output; calibration: {d.get('missing_calibration', 0.0):.1%}.")
    jd = d["joint_drift"]
    m[4].metric("joint pattern drift (TV)", "-" if jd["tv"] is None else f"{jd['tv']:.3f}",
                help="Total variation between the calibration and traffic joint pattern distributions. "
                     + help_text("tv") + f" No-drift 99% threshold {jd['threshold']:.3f}; p = {jd['p_value']:.3f}.")
    st.caption("Missing outputs: " + d["missing_behaviour"])
    with st.expander("What these numbers mean"):
        st.markdown(GLOSSARY)
    judges = d.get("judges") or []
    if judges:
        fig = audit_drift_bars(judges)
        st.plotly_chart(fig, key=f"drift-{key}")
        figure_download(fig, f"audit-drift-{key}")
        names = [j["judge"] for j in judges]
        worst = max(range(len(judges)), key=lambda i: judges[i]["tv"] - judges[i]["threshold"])
        pick = st.selectbox("Judge output distribution", names, index=worst, key=f"judge-{key}")
        st.plotly_chart(judge_output_shift(judges[names.index(pick)]), key=f"shift-{key}")
        drift = pd.DataFrame([{"judge": j["judge"], "TV": j["tv"], "threshold": j["threshold"],
                               "drifted": j["shifted"], "PSI": j["psi"], "chi-square p": j["chi2_p"],
                               "missing (cal.)": j["missing_calibration"],
                               "missing (traffic)": j["missing_traffic"],
                               "parse errors (cal.)": j["parse_error_calibration"],
                               "parse errors (traffic)": j["parse_error_traffic"]} for j in judges])
        table(drift, helps=JUDGE_HELP, key=f"judges-{key}")
    cells = pd.DataFrame(d.get("cells") or [])
    if not cells.empty:
        st.markdown(f"**Traffic patterns** ({len(cells):,} shown of {d.get('n_cells', len(cells)):,}; "
                    "most frequent first)")
        table(cells, helps=CELL_HELP, key=f"cells-{key}")
        table_download(cells, f"audit-cells-{key}")
