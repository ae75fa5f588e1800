"""How a traffic audit is shown (Deploy & monitor page, results browser): status first,
then pressure, unseen and missing rates, drift per judge, the cell table."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from fcps_core.plots import audit_drift_bars, judge_output_shift
from fcps_app.common import figure_download, table_download

GLOSSARY = (
    "**q(z)**: share of traffic rows with joint output pattern z. **N_z**: calibration rows with that "
    "pattern. **Deployment cell pressure** = sum over seen patterns of q(z)/N_z plus the unseen share u "
    "(the paper's Eq. cell-pressure with traffic frequencies in place of p_z): the table's estimation "
    "cost on this traffic; no labels needed. **Outside support**: rows the deployed family cannot place "
    "(tables: unseen pattern, which gets the fallback; scalar families: an output never seen in "
    "calibration or a value outside its calibration range). **TV**: total variation distance between "
    "calibration and traffic distributions; its **threshold** is the 99% quantile of TV between two "
    "samples of these sizes from one distribution, so a bar above it is drift, not sampling noise.")


def show_audit(d: dict, *, key: str) -> None:
    status = d["status"]
    reasons = d.get("reasons") or []
    text = f"**{status}**" + ("" if reasons else ": traffic sits on the calibration support.")
    if reasons:
        text += "\n" + "\n".join(f"- {r}" for r in reasons)
    {"OK": st.success, "WARN": st.warning, "REFUSE": st.error}[status](text)
    p = d["predictor"]
    st.caption(f"{d['rows']:,} traffic rows against the {p['family']} predictor over {len(p['judges'])} judges, "
               f"calibrated on {p['calibration_rows']:,} rows" + (f" of {p['panel']}" if p.get("panel") else ""))
    m = st.columns(5)
    m[0].metric("cell pressure", f"{d['pressure']:.3f}",
                help=f"sum q(z)/N_z = {d['pressure_sum']:.3f} plus unseen share {d['unseen_rate']:.3f}")
    m[1].metric("unseen patterns", f"{d['unseen_rate']:.1%}")
    m[2].metric("outside support", f"{d['out_of_support_rate']:.1%}")
    rise = d["missing_rate"] - d.get("missing_calibration", 0.0)
    m[3].metric("rows with a missing output", f"{d['missing_rate']:.1%}",
                delta=f"{rise:+.1%} vs calibration" if abs(rise) >= 0.0005 else None,
                delta_color="inverse", help=f"calibration: {d.get('missing_calibration', 0.0):.1%}")
    jd = d["joint_drift"]
    m[4].metric("joint pattern drift (TV)", "-" if jd["tv"] is None else f"{jd['tv']:.3f}",
                help=f"no-drift 99% threshold {jd['threshold']:.3f}; p = {jd['p_value']:.3f}")
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
        st.dataframe(pd.DataFrame([{"judge": j["judge"], "TV": j["tv"], "threshold": j["threshold"],
                                    "drifted": j["shifted"], "PSI": j["psi"], "chi-square p": j["chi2_p"],
                                    "missing (cal.)": j["missing_calibration"],
                                    "missing (traffic)": j["missing_traffic"],
                                    "parse errors (cal.)": j["parse_error_calibration"],
                                    "parse errors (traffic)": j["parse_error_traffic"]} for j in judges]),
                     hide_index=True, key=f"judges-{key}")
    cells = pd.DataFrame(d.get("cells") or [])
    if not cells.empty:
        st.markdown(f"**Traffic patterns** ({len(cells):,} shown of {d.get('n_cells', len(cells)):,}; "
                    "most frequent first)")
        st.dataframe(cells, hide_index=True, key=f"cells-{key}")
        table_download(cells, f"audit-cells-{key}")
