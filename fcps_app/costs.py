"""Judge costs on the Select page: an editable table (stored with a stored panel) and the
risk-cost Pareto chart of a finished selection."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from fcps_core.errors import FCPSError
from fcps_core.reports.glossary import help_text
from fcps_core.figures.selection import risk_cost_pareto
from fcps_core.service.reports import count_of, family_name, judges_count, tie_words
from fcps_app import glossary
from fcps_app.common import figure_download, get_store, md, stored_name


def judge_costs_editor(label: str, panel) -> dict | None:
    """The costs the selection will use: the table as edited (None while any judge lacks
    a cost). A stored panel's costs prefill it and can be saved back."""
    name = stored_name(label)
    stored = get_store().judge_costs(name) if name else None
    with st.expander("Judge costs (optional): cost and latency per item" + (" · stored" if stored else "")):
        st.caption("Cost per item in any unit (dollars per 1,000 items, tokens, ...); latency in seconds. A "
                   "candidate costs the sum over its judges and takes the longest latency (judges run in "
                   "parallel). With costs every candidate gets its cost, the result a risk-cost Pareto chart, and "
                   "the choice rule cheapest_tied deploys the cheapest candidate statistically tied with the best on "
                   "the best candidate's own line (same path, family and parameters; a shorter prefix).")
        base = pd.DataFrame({"judge": panel.judge_names,
                             "cost": [(stored or {}).get(j, {}).get("cost", math.nan) for j in panel.judge_names],
                             "latency": [(stored or {}).get(j, {}).get("latency", 0.0) for j in panel.judge_names]})
        edited = st.data_editor(base, hide_index=True, disabled=["judge"], key=f"costs-{label}",
                                column_config={"judge": st.column_config.Column(help=glossary.column_help("judge")),
                                               "cost": st.column_config.NumberColumn(
                                                   min_value=0.0, format="%.4g",
                                                   help="This judge's cost per item (any unit, the same for all)."),
                                               "latency": st.column_config.NumberColumn(
                                                   min_value=0.0, format="%.4g",
                                                   help="This judge's latency per item, in seconds.")})
        if edited["cost"].isna().all():
            return None
        if edited["cost"].isna().any():
            missing = edited.loc[edited["cost"].isna(), "judge"].tolist()
            st.warning(f"{judges_count(len(missing))} {'has' if len(missing) == 1 else 'have'} no cost yet (e.g. {md(missing[0])}): costs are not used until "
                       "every judge has one (0 for a free judge).")
            return None
        costs = {r.judge: {"cost": float(r.cost), "latency": float(0.0 if pd.isna(r.latency) else r.latency)}
                 for r in edited.itertuples()}
        if name and costs != stored and st.button("Save these costs with the panel"):
            try:
                get_store().set_judge_costs(name, costs)
            except FCPSError as exc:
                st.error(md(exc))
            else:
                st.success(f"Costs stored with {md(name)}.")
        return costs


def show_costs(d: dict, held: str) -> None:
    c = d["costs"]
    ct = c.get("cheapest_tied")
    sel = c["selected"]
    st.markdown(f"**Cost** of the deployed choice: {sel['cost']:.4g} per item, latency {sel['latency']:.3g}")
    m = st.columns(3)
    glossary.metric(m[0], "cost", f"{sel['cost']:.4g}", label="cost per item (deployed)")
    glossary.metric(m[1], "latency", f"{sel['latency']:.3g}", label="latency per item (deployed)")
    if ct:
        glossary.metric(m[2], "cost", f"{ct['cost']:.4g}", label="cost of the cheapest tied candidate",
                        extra=help_text("tie") or "")
    if ct:
        same = ct["cost"] >= sel["cost"] - 1e-12
        # the tie set is counted once, in distinct models, as on every page (tie_words)
        n_line = ct.get('n_tied_on_line', ct['n_tied'])
        st.caption(f"Cheapest of the {count_of(n_line, 'tied candidate')} on the best's line "
                   f"({md(tie_words(d))}): {family_name(ct['family'])} "
                   f"K={ct['K']} at {ct['cost']:.4g} per item, {held} risk {ct['risk']:.4f} "
                   f"({ct['diff']:+.4f} against the best, paired SE {ct['se']:.4f})"
                   + ("; it is the deployed one." if same else
                      "; choose rule cheapest_tied to deploy it."))
    fig = risk_cost_pareto(d["candidates"], c, risk_label=f"{held} risk")
    st.plotly_chart(fig)
    figure_download(fig, "risk-cost-pareto")
