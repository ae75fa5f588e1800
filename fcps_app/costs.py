"""Judge costs on the Select page: an editable table (stored with a stored panel) and the
risk-cost Pareto chart of a finished selection."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from fcps_core.errors import FCPSError
from fcps_core.reports.glossary import help_text
from fcps_core.figures.selection import risk_cost_pareto
from fcps_core.service.reports import count_of, family_name, judges_count, signed_change, tie_words
from fcps_app import glossary
from fcps_app.common import figure_download, get_store, md, stored_name


#: what the costs table shows in a cell left empty (a judge's cost not yet given; an empty
#: latency counts as 0)
NOT_GIVEN = "not given"


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
                   "the best candidate's own line (same path, family and parameters; a shorter prefix). A cell "
                   f"left empty shows \"{NOT_GIVEN}\": a cost not given yet (every judge needs one; 0 for a free "
                   "judge), a latency not given counts as 0.")
        base = pd.DataFrame({"judge": panel.judge_names,
                             "cost": [(stored or {}).get(j, {}).get("cost", math.nan) for j in panel.judge_names],
                             "latency": [(stored or {}).get(j, {}).get("latency", 0.0) for j in panel.judge_names]})
        # an empty cell is a cost not yet given (Streamlit would print it "None")
        edited = st.data_editor(base, hide_index=True, disabled=["judge"], key=f"costs-{label}",
                                placeholder=NOT_GIVEN,
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


def _limit_words(d: dict) -> str | None:
    """The limit this run was chosen under, in words ("the budget of 3.886 per item", "the
    limit of 3 judges"), or None for a run chosen over the whole menu."""
    limit = (d.get("choice_info") or {}).get("constraint") or {}
    if limit.get("budget") is not None:
        return f"the budget of {limit['budget']:g} per item"
    if limit.get("max_judges") is not None:
        n = int(limit["max_judges"])
        return f"the limit of {n} judge{'s' if n != 1 else ''}"
    return None


def show_costs(d: dict, held: str) -> None:
    """The deployed choice's cost and latency, the cheapest candidate statistically tied with
    the best on the best's line, and the risk-cost chart. The cheapest tied candidate is
    found over the whole menu (``costs.cheapest_tied``): for a run chosen under a budget or a
    judge limit it is said to be so, and called the deployed one only when it is."""
    c = d["costs"]
    ct = c.get("cheapest_tied")
    sel = c["selected"]
    limited = _limit_words(d)
    # an empty latency is read as 0: with no judge latency above 0, none was given, and none is claimed
    timed = any(float((v or {}).get("latency") or 0.0) > 0 for v in (c.get("judge_costs") or {}).values())
    st.markdown(f"**Cost** of the deployed choice: {sel['cost']:g} per item"
                + (f", latency {sel['latency']:.3g}" if timed else " (no judge latencies given)"))
    m = st.columns(3)
    glossary.metric(m[0], "cost", f"{sel['cost']:g}", label="cost per item (deployed)")
    glossary.metric(m[1], "latency", f"{sel['latency']:.3g}" if timed else "-", label="latency per item (deployed)")
    if ct:
        glossary.metric(m[2], "cost", f"{ct['cost']:g}",
                        label="cost of the cheapest tied candidate" + (" (whole menu)" if limited else ""),
                        extra=help_text("tie") or "")
    if ct:
        chosen = d.get("selected") or {}
        deployed = {chosen.get("index")} | {mm.get("index") for mm in chosen.get("members") or []}
        same = ct["index"] in deployed if ct.get("index") is not None else ct["cost"] >= sel["cost"] - 1e-12
        averaged = [mm.get("index") for mm in chosen.get("members") or []]
        member = None
        if same and len(averaged) > 1 and ct.get("index") in averaged:
            # one of the models an average deploys, not the deployment (which calls every member's judges)
            member = "; it is one of the models the deployment averages, " + (
                f"which calls more judges ({sel['cost']:g} per item)" if sel["cost"] > ct["cost"] + 1e-12
                else "at the same cost")
        n_line = ct.get('n_tied_on_line', ct['n_tied'])
        if limited:
            # tied with the best of the whole menu, not with what was chosen within the limit (whose own tie
            # set the verdict counts): said so, without that tie set's count beside it
            # one candidate on the line is the best itself: "the cheapest of the 1 candidate" said a choice there was none
            which = "the one candidate" if n_line == 1 else f"the cheapest of the {count_of(n_line, 'candidate')}"
            head = f"Without {limited}, {which} tied with the best candidate of the whole menu on its line"
            limit = (d.get("choice_info") or {}).get("constraint") or {}
            outside = (limit.get("budget") is not None and ct["cost"] > limit["budget"] + 1e-12) or \
                (limit.get("max_judges") is not None and len(ct.get("judges") or []) > limit["max_judges"])
            tail = f"{member}." if member else "; it is the deployed one." if same else \
                f"; it is outside {limited}, so it is not deployed." if outside else \
                f"; the choice rule within {limited} deployed another."
        else:
            # the tie set is counted once, in distinct models, as on every page (tie_words)
            # the line (the best's family and path at other K) told apart from the whole tie set
            which = "The one tied candidate" if n_line == 1 else f"Cheapest of the {count_of(n_line, 'tied candidate')}"
            head = (f"{which} on the best's line (the best candidate's "
                    f"family and path at other prefix sizes K; in all, {md(tie_words(d))})")
            tail = f"{member}; choose rule cheapest_tied to deploy it alone." if member else \
                "; it is the deployed one." if same else "; choose rule cheapest_tied to deploy it."
        # the best candidate itself (the cheapest on its own line): no difference to state ("+0.0000
        # against the best, paired SE 0.0000" compared it with itself)
        itself = ct.get("index") is not None and ct.get("index") == ct.get("best_index")
        against = "the best candidate itself" if itself else \
            f"{signed_change(ct['diff'])} against the best, paired SE {ct['se']:.4f}"
        st.caption(f"{head}: {family_name(ct['family'])} K={ct['K']} at {ct['cost']:g} per item, {held} risk "
                   f"{ct['risk']:.4f} ({against}){tail}")
    fig = risk_cost_pareto(d["candidates"], c, risk_label=f"{held} risk")
    st.plotly_chart(fig)
    figure_download(fig, "risk-cost-pareto")
