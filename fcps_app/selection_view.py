"""How a selection is shown (Select page, Results browser): the plain-language verdict
first, then the evidence (metrics, baselines, ties, the best candidate per family over K
with the winner marked, the judges, the regime), every candidate on demand, and how to use
the result. Numbers and words come from ``fcps_core.reports.explain``; tables from ``table``."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from fcps_core.service.reports import (PAIRED_BASIS, answer, answer_digits, average_words, baseline_rows, risk_digits, comparison, comparison_basis,
                                       judge_order, deployed_kind, deployed_members, display_family,
                                       drop_meaning, drop_words, gain_text, limit_deploys_words, non_monotone_note, pressure_text, same_drop_choice, shared_with, shown_difference, signed_weights, tie_sentence,
                                       tie_summary,
                                       verdict_parts)
from fcps_core.defaults import limit_words
from fcps_core.figures.style import Z95
from fcps_core.service.reports import (end_digits, frontier_noise_note, frontier_point, frontier_rows, limit_span,
                                       point_digits)
from fcps_core.reports.glossary import help_text
from fcps_core.service.reports import (FAMILY_NAMES, PATH_NAMES, estimate_name, family_name, judges_count,
                                       parameters_text, path_name, signed_change)
from fcps_core.figures.selection import all_candidates_over_k, best_per_family_over_k
from fcps_core.figures.frontier import frontier_figure
from fcps_app.common import figure_download, md, page_link, table_download
from fcps_app.costs import show_costs
from fcps_app.glossary import metric, table

#: the baselines table's interval is of the difference, not of a risk
DIFF_CI = {"95% low": "Lower end of the " + (help_text("ci") or ""),
           "95% high": "Upper end of the " + (help_text("ci") or "")}
TIE_DIFF_HELP = ("This model's held-out risk minus the best candidate's, on the same rows (above 0: the "
                 "best is lower).")
#: the deployed judges table's own columns
JUDGE_HELPS = {
    "weight": "The judge's signed weight, averaged over the deployed models that have weights: above 0 a higher "
              "output pushes the prediction up, below 0 down.",
    "shared": "Deployed judges that are near-duplicates of this one (agreement or error correlation at the judges "
              "report's threshold): the weight is shared between them, so neither weight alone says what the judge "
              "adds.",
    "drop-one change": "Held-out risk of what the same choice rule deploys without this judge (no refit) minus the "
                       "deployed choice's: above 0 dropping it raises the risk, so the judge helps.",
    "95% interval": "The paired 95% interval of the drop-one change over the groups: 'the judge helps' only when "
                    "it lies above 0, 'no clear change' when it holds 0.",
    "meaning": "Which way the drop-one change points, in words.",
}
#: the candidates table's leading columns (the judges list, long, goes last)
CANDIDATE_ORDER = ["index", "family", "K", "path", "val_mse", "val_nll", "val_se", "test_mse", "test_nll", "Q_K",
                   "S_K", "H_K", "unseen_val", "unseen_test", "V_cell", "V_proxy", "grid_size",
                   "judge_set_stability", "repeats", "selected", "parameters"]


def heldout_word(d: dict) -> str:
    """How the run's held-out rows are named: cross-fitted folds or the validation block."""
    return "cross-fitted" if d.get("protocol", (d.get("split") or {}).get("protocol")) == "crossfit" else "validation"


def objective_name(d: dict) -> str:
    return str((d.get("menu") or {}).get("objective") or "mse").upper()


def risk_label(d: dict) -> str:
    """The risk axis and column name of every page showing this run ("cross-fitted MSE")."""
    return f"{heldout_word(d)} {objective_name(d)}"


def answer_limit(d: dict) -> str:
    """The limit the answer and its frontier are drawn over: ``"budget"`` when the run was
    deployed under a budget (its chosen frontier point is a cost level), else
    ``"max_judges"`` (panel sizes)."""
    chosen = next((p for p in d.get("frontier") or [] if p.get("chosen")), None)
    return "budget" if chosen is not None and chosen.get("constraint") == "budget" else "max_judges"


def _row_label(d: dict, row: dict, objective: str = "MSE", kind: str = "max_judges") -> str:
    """One option of the frontier control: the limits it stands for, the judges used, how they
    are combined and the risk it prints, named (the estimate on new items, as the answer
    sentence; the held-out risk where the point has no estimate)."""
    p, sizes = row["point"], row["levels"]
    if kind == "budget":
        # the deployed level itself where it is among the merged ones
        k = f"budget {p['cost']:g}" if p.get("chosen") else f"budget {limit_span(sizes, kind)}"
        judge = "judge" if len(p["judges"]) == 1 else "judges"
    else:
        k = f"at most {limit_span(sizes)}"
        judge = "judge" if sizes[-1] == 1 else "judges"
    how = display_family(p)
    est = (p.get("deployed_risk") or {}).get("estimate")
    dp = point_digits(d, p)     # the decimals the answer prints this point at (4, more for a narrow interval)
    risk = f"estimated {objective} {est:.{dp}f}" if est is not None else f"held-out {objective} {p['risk']:.{dp}f}"
    used = f"{len(p['judges'])} {judge} used" if kind == "budget" else f"{len(p['judges'])} used"
    head = f"{k}: {used}" if kind == "budget" else f"{k} {judge}: {used}"
    return f"{head}, {how}, {risk}" + (" (deployed)" if p.get("chosen") else "")


def show_answer(state: dict) -> dict | None:
    """The answer first, in one sentence (fcps_core.reports.explain.answer), then the frontier chart
    and a control to look at (and deploy) another panel size, or another budget when the run
    was deployed under one (:func:`answer_limit`). Returns the frontier point to deploy when
    its button was pressed, else None."""
    d = state["dict"]
    kind = answer_limit(d)
    budget = kind == "budget"
    rows = frontier_rows(d, kind)
    if not rows:
        return None
    sentence, chart = st.container(), st.container()
    labels = [_row_label(d, r, objective_name(d), kind) for r in rows]
    current = next((i for i, r in enumerate(rows) if r["point"].get("chosen")), None)
    if current is None:
        # deployed under a judge limit and a budget at once: no point of this frontier stands for it
        # (walk 13: the page then described the loosest point as the answer, breaking both limits)
        rows = [{"point": None, "levels": []}] + rows
        labels = [f"the deployed choice ({limit_words(*_both_limits(d))}): no single point of this frontier"] + labels
        current = 0
    pick = st.selectbox("Another budget (the sentence and the star follow it)" if budget else
                        "Another panel size (the sentence and the star follow it)", labels, index=current,
                        key=f"frontier-{kind}-{state.get('run_id')}",
                        help="Each row is what the same choice rule deploys within that budget per item, from the "
                             "same held-out predictions (python -m fcps_core select --budget C --judge-costs FILE)."
                        if budget else
                        "Each row is what the same choice rule deploys with at most that many judges, from "
                        "the same held-out predictions (python -m fcps_core select --max-judges K).")
    point = rows[labels.index(pick)]["point"]
    # the same colour as the verdict: amber when a fixed recipe is clearly better than the deployed choice
    worse = any(comparison(b) == "worse" for b in d.get("baselines") or [])
    deployed = point is None or point.get("chosen")
    box = (st.warning if worse else st.success) if deployed else st.info
    sentence.markdown("**Answer**")
    box_text = md(answer(d, point, one_judge_words=page_one_judge_words(d)))
    limit = "" if point is None else f"a budget of {point['cost']:g} per item" if budget else \
        f"at most {judges_count(point['n_judges'])}"
    with sentence:
        box(box_text if deployed else box_text + f"\n\n(Not deployed: this is what {limit} would give; "
            "the button below deploys it.)")
    note = non_monotone_note(d, budget=budget)
    with chart:
        # titled "what fewer judges cost" only where no looser limit does worse (the note below says where)
        fig = frontier_figure(d["frontier"], by="cost" if budget else "judges", objective=objective_name(d),
                              chosen=point, names=FAMILY_NAMES, monotone=not note)
        st.plotly_chart(fig, key="select-frontier")
        st.caption(("Risk (held-out, 95% interval) of what each budget per item deploys: " if budget else
                    "Risk (held-out, 95% interval) of what a limit of k judges deploys: ")
                   + limit_deploys_words(d, budget=budget)
                   + "; diamonds: its estimate on new items (bias-corrected for choosing under that limit); the "
                     "filled star: the point the sentence describes (an open star marks the deployed point when "
                     "another is described); "
                   + ("the x axis is the budget, so one predictor can stand for several budgets." if budget else
                      "the x axis is the limit k, so one predictor can stand for several limits.")
                   # walk 12: the answer's change "holds 0" beside a hover's clearly positive held-out difference
                   + " A hover's held-out difference compares two predictors on the same rows; the answer's change "
                     "compares the estimates for choosing under each limit, which carry the choice's own noise, so "
                     "the first can be clear where the second is not.")
        for said in (note, frontier_noise_note(d, budget=budget)):
            if said:
                st.caption(md(said))
    if not deployed and st.button(f"Deploy {limit}", type="primary"):
        return point
    return None


def _both_limits(d: dict) -> tuple:
    """(most judges, budget per item) the run was chosen under."""
    c = (d.get("choice_info") or {}).get("constraint") or {}
    return c.get("max_judges"), c.get("budget")


#: how a page's reader deploys the frontier's one-judge point (the answer sentence's words)
PAGE_ONE_JUDGE_WORDS = "the frontier's 1-judge point"
#: ... when the page's frontier is drawn over budgets (it has no 1-judge point: its cheapest
#: level may call several free judges), the form's limit deploys it
FORM_ONE_JUDGE_WORDS = "with 'most judges deployed' set to 1 in the form"


def page_one_judge_words(d: dict) -> str:
    """How the page's reader deploys the one-judge point the answer quotes: the frontier's
    point when the frontier shown is over panel sizes, the form's limit when it is over
    budgets (:func:`answer_limit`)."""
    return FORM_ONE_JUDGE_WORDS if answer_limit(d) == "budget" else PAGE_ONE_JUDGE_WORDS


def page_limit_words(n_judges: int) -> str:
    """How the Select page deploys at most ``n_judges`` judges: its frontier control."""
    judges = "judge" if n_judges == 1 else "judges"
    return f"to deploy it, choose at most {n_judges} {judges} under 'Another panel size' above"


def form_limit_words(n_judges: int) -> str:
    """How the Select page deploys at most ``n_judges`` judges when its frontier control
    offers budgets (a run deployed under a budget): the form's limit."""
    return f"to deploy it, set 'most judges deployed' to {n_judges} in the form above and run the selection"


def show_verdict(d: dict, *, answered: bool = False) -> None:
    """The verdict box; ``answered``: the answer sentence is already shown above (the box
    then holds the rest of the headline)."""
    # with the answer above, the frontier control beside it deploys another limit (no command-line flag here)
    words = page_limit_words if answer_limit(d) == "max_judges" else form_limit_words
    parts = verdict_parts(d, limit_words=words) if answered else verdict_parts(d)
    headline = parts["headline"][1:] if answered and answer(d, one_judge_words=page_one_judge_words(d)) else parts["headline"]
    st.subheader("Verdict")
    # green unless a fixed recipe is clearly better (its paired interval lies below 0): then amber
    box = st.warning if any(comparison(b) == "worse" for b in d.get("baselines") or []) else st.success
    box("\n\n".join(md(s) for s in headline))
    if parts["details"]:
        st.markdown("\n".join(f"- {md(s)}" for s in parts["details"]))


def heldout_metric_label(d: dict) -> str:
    """The held-out metric's label, for what is deployed: an average of tied models
    ("held-out MSE (deployed average)") or one model ("held-out MSE (deployed model)")."""
    return f"held-out {objective_name(d)} (deployed {deployed_kind(d['selected'])})"


def show_metrics(d: dict) -> None:
    sel, obj = d["selected"], objective_name(d)
    dr = d.get("deployed_risk") or {}
    cand = next((c for c in d["candidates"] if c["index"] == sel.get("index")), None)
    m = st.columns([1, 1.5, 1, 1, 1])      # the held-out label names what is deployed: room for it
    k = risk_digits(d)          # the answer's decimals (4, more when the interval is narrower): a small MSE keeps its digits
    if dr.get("estimate") is not None:
        lo, hi = dr["ci"]
        metric(m[0], "deployed_risk", f"{dr['estimate']:.{k}f}", label=estimate_name(obj),
               extra=f"95% interval {lo:.{k}f} to {hi:.{k}f} ({str(dr.get('method')).upper()}).")
        m[0].caption(f"95% interval {lo:.{k}f} to {hi:.{k}f}")
    else:
        metric(m[0], "deployed_risk", "-", label=estimate_name(obj),
               extra=(d.get("choice_info") or {}).get("estimate_note", "Not estimated for this run."))
    own = sel.get(f"val_{obj.lower()}")
    average = deployed_kind(sel) == "average"
    se = cand.get("val_se") if cand and not average else None
    metric(m[1], "val_risk", "-" if own is None else f"{own:.{k}f}", label=heldout_metric_label(d),
           extra=("The deployed average's own held-out risk (its models' predictions averaged on the same rows): "
                  "optimistic, because its models were picked as the best of the menu on these rows; the estimate "
                  "on new items corrects it." if average else
                  "The deployed model's own held-out risk: optimistic, because it was picked as the lowest of the "
                  "candidates it was chosen from; the estimate on new items corrects it."))
    if average:
        # the average's own loss column has a clustered SE: the frontier's deployed point draws its interval
        # (walk 11: "no single SE" here beside that interval on the chart)
        point = frontier_point(d) or {}
        ci, same = point.get("ci"), own is not None and point.get("risk") is not None and \
            abs(point["risk"] - own) <= 1e-9 * max(abs(own), 1e-12)
        se = (ci[1] - ci[0]) / (2 * Z95) if ci and same else None
    m[1].caption(f"± {Z95 * se:.{k}f} (95%)" if se else "no interval for this run")
    metric(m[2], "test_mse", "-" if sel.get("test_mse") is None else f"{sel['test_mse']:.4f}",
           label="test MSE (T audit)", extra="One audit on T, reported without an interval; it never informed the choice.")
    metric(m[3], "menu_size", f"{d['menu_size']:,}", label="menu size |C|")
    metric(m[4], "validation_scale", f"{d['validation_scale']:.3f}", label="validation scale")
    test = sel.get("test_mse")
    if dr.get("estimate") is not None and test is not None and obj.upper() == "MSE":
        st.caption(estimate_vs_test(dr, test, (d.get("split") or {}).get("n_T")))


def estimate_vs_test(dr: dict, test: float, n_T) -> str:
    """One sentence putting the estimate on new items and the research-test value side by
    side: the interval is for the expected risk on new items, the T value is one sample of
    n_T rows with noise of its own, so it can fall outside the interval."""
    lo, hi = dr["ci"]
    where = "inside" if lo <= test <= hi else ("above" if test > hi else "below")
    rows = f"{int(n_T):,} " if isinstance(n_T, (int, float)) and n_T else ""
    return (f"Two risks of the same predictor: the estimate on new items ({dr['estimate']:.4f}, 95% interval "
            f"{lo:.4f} to {hi:.4f}) is for its expected MSE on items like these; the research-test MSE "
            f"({test:.4f}, {where} the interval) is one audit on the {rows}rows of T, with sampling noise of its own "
            "and no interval, so it can fall outside the interval without contradicting it.")


def show_baselines(d: dict) -> None:
    if not d.get("baselines"):
        return
    basis = comparison_basis(d)
    k = risk_digits(d)              # the answer's decimals: a small MSE keeps its digits
    if basis is None:
        st.markdown(f"**Against fixed recipes on the same {heldout_word(d)} rows** (difference = recipe risk - "
                    "selection risk, paired over bootstrap draws; above 0 the selection is better; *better* only "
                    "when the whole 95% interval is above 0)")
    else:
        st.markdown(f"**Against fixed recipes** (difference = recipe - selection, {md(PAIRED_BASIS)}: the recipe's "
                    f"out-of-bag risk minus the selection's {basis:.{k}f}; above 0 the selection is better; *better* "
                    "only when the whole 95% interval is above 0)")
    rows = [{"baseline": r["label"], "held-out risk": r["heldout"], "out-of-bag risk": r["out_of_bag"],
             "difference": r["diff"], "95% low": (r.get("ci") or [None, None])[0],
             "95% high": (r.get("ci") or [None, None])[1],
             "compared": {"unpaired": "no interval", "tied": "no clear difference"}.get(r["compared"], r["compared"])}
            for r in baseline_rows(d)]
    # both interval columns at one precision: the risks' decimals, or more where an end that is not 0 needs them
    ends = f"%+.{end_digits((r[c] for r in rows for c in ('95% low', '95% high')), k)}f"
    table(pd.DataFrame(rows), helps={**DIFF_CI, "out-of-bag risk": "The recipe's mean risk over the bootstrap "
                                     "draws' out-of-bag rows: the difference is this minus the selection's, "
                                     "draw by draw.",
                                     "held-out risk": f"The recipe's {heldout_word(d)} risk on every held-out row."},
          # signed, as the drop-one change and the interaction gain on the same page; an interval end
          # that is not 0 keeps its side of 0 (more decimals), as the verdict and the command line print it
          formats={"difference": f"%+.{k}f", "95% low": ends, "95% high": ends,
                   "held-out risk": f"%.{k}f", "out-of-bag risk": f"%.{k}f"})


def _paths(cands: list[dict]) -> str:
    found = sorted({str(c.get("path")) for c in cands})
    return ", ".join(found) + (" paths" if len(found) > 1 else " path")


def show_ties(d: dict) -> None:
    """The statistical ties: one tie set (the distinct models within one paired SE of the
    best), counted the same way as the verdict, the answer and the command line."""
    t = tie_summary(d)
    listed = t["listed"]
    sentence = tie_sentence(d)          # the same words as the verdict, the CLI and the HTML report
    k = risk_digits(d)                  # the answer's decimals: a small MSE and its SEs keep their digits
    if sentence:
        # the difference is to the best candidate's held-out risk, printed here so each row's can be checked
        best = listed[0]["risk"] - listed[0]["diff"] if listed else None
        st.markdown(f"**Statistical ties**: {md(sentence)}" + (
            f" The {len(listed)} closest of the others (difference: their held-out risk minus the best candidate's, "
            f"{best:.{k}f}):" if listed else ""))
        if listed:
            params = {c.get("index"): c.get("params") for c in d.get("candidates") or []}
            # the numbers beside the model's name, its long text after them (walk 12: a wide parameters
            # column pushed the risks, differences and SEs behind "tied" off the screen)
            table(pd.DataFrame([{"family": family_name(a["family"]), "K": a["K"], "held-out risk": a["risk"],
                                 "difference": shown_difference(a["risk"], best, k), "paired SE": a["se"],
                                 "judges": ", ".join(a["judges"]), "path": path_name(a["path"]),
                                 "parameters": parameters_text(params.get(a["index"]))} for a in listed]),
                  helps={"difference": TIE_DIFF_HELP},
                  formats={"held-out risk": f"%.{k}f", "difference": f"%.{k}f", "paired SE": f"%.{k}f"})
    sel = d["selected"]
    members = deployed_members(sel)
    if members:
        st.markdown(f"**Deployed: {average_words(members)}**")
        table(pd.DataFrame([{"family": family_name(mm["family"]), "K": mm["K"],
                             "weight": mm.get("weight", 1.0 / len(members)),
                             "held-out risk": mm["val_risk"], "path": path_name(mm["path"]),
                             "parameters": parameters_text(mm["params"])} for mm in members]),
              helps={"weight": "This model's weight in the deployed average: the picks are averaged with equal "
                               "weights, and a model reached by two paths is one model picked twice, listed "
                               "once with twice the weight."},
              formats={"held-out risk": f"%.{k}f"})


def show_chart(d: dict, *, key: str, name: str, caption: bool = True) -> None:
    """The best candidate per family over K, the winner marked, on the run's risk label."""
    objective = "val_risk" if all("val_risk" in c for c in d["candidates"]) else "val_mse"
    fig = best_per_family_over_k(d["candidates"], selected=d["selected"], objective=objective, digits=risk_digits(d),
                                 risk_label=risk_label(d), baselines=d.get("baselines"), names=FAMILY_NAMES,
                                 path_names=PATH_NAMES)
    st.plotly_chart(fig, key=key)
    if caption:
        st.caption("One line per family: its best candidate (over paths and parameters) at each prefix size K; "
                   "dashed lines are table-like families. The gold star is the deployed choice when it is one "
                   "candidate (with its 95% interval). An average of tied models has no K of its own: the gold "
                   "dashed line is its held-out risk, open stars are its members and the black star marks the best "
                   "single model among them (not what is deployed). The dotted line is the best single judge. "
                   "Hover a point for its risk ± 95% interval.")
    figure_download(fig, name)


def show_judges(d: dict) -> None:
    n = len((d.get("panel") or {}).get("judges") or []) or "?"
    report = d.get("judges_report") or {}
    per = {j["judge"]: j for j in report.get("judges") or []}
    contrib = {j["judge"]: j for j in (report.get("contribution") or {}).get("judges") or []}
    order, basis = judge_order(d)
    signed, shared = signed_weights(d), shared_with(d)
    has_drop = any(contrib.get(j, {}).get("drop_risk_change") is not None for j in order)
    needed = [j for j in order
              if contrib.get(j, {}).get("drop_risk_change") is None and contrib.get(j, {}).get("drop_note")]
    # the heading names the order the table has (judge_order), never another
    how = "" if len(order) == 1 else ", " + {
        "drop": "largest drop-one risk change first" + (
            " after the judge every candidate calls (no choice without it)" if len(needed) == 1 else
            f" after the {len(needed)} judges every candidate calls (no choice without them)" if needed else ""),
        "share": "largest weight share first", "path": "in path order"}[basis]
    # each column said only where the table has it (walk 11: a run whose models have no weights read
    # "The signed weight says ..." above a table without that column, empty columns being dropped)
    said = (["the signed weight says which way a judge pushes the prediction"]
            if any(signed.get(j) is not None for j in order) else []) + \
        (["a judge marked *shared* has a near-duplicate deployed beside it, so their weights are split between them"]
         if any(shared.get(j) for j in order) else [])
    st.markdown(f"**Judges deployed** ({len(order)} of {n}){how}"
                + (". " + "; ".join(said)[0].upper() + "; ".join(said)[1:] + "." if said else "."))
    rows = [{"judge": j, "weight": signed.get(j),
             "weight share": contrib.get(j, {}).get("weight_share"),
             "shared": ", ".join(shared.get(j, [])) or "-",
             "accuracy": per.get(j, {}).get("accuracy"), "kappa": per.get(j, {}).get("kappa"),
             "auc": per.get(j, {}).get("auc")} for j in order]
    if has_drop:
        same_drop = same_drop_choice(d)
        for row in rows:
            c = contrib.get(row["judge"], {})
            change = c.get("drop_risk_change")
            row["drop-one change"] = change
            # the interval the meaning reads ("helps" only when it lies above 0; walk 13: not shown)
            ci = c.get("drop_ci") or [None, None]
            dk = max(5, risk_digits(d))
            row["95% interval"] = "-" if ci[0] is None else f"{signed_change(ci[0], dk)} to {signed_change(ci[1], dk)}"
            # without a change, why not (e.g. every candidate calls the judge), as the Judges page says it
            row["meaning"] = drop_meaning(c.get("drop_verdict") or drop_words(change) or c.get("drop_note") or "-",
                                          same_drop.get(row["judge"], []))
    # 5 decimals (a drop-one change is a small difference of risks), more where the answer prints more
    table(pd.DataFrame(rows), digits=3, helps=JUDGE_HELPS,
          formats={"drop-one change": f"%+.{max(5, risk_digits(d))}f", "weight": "%+.3f"})
    page_link("app_pages/judges.py", "Every judge, agreement and error correlation: the Judges page")


def show_regime(d: dict) -> None:
    rg = d.get("regime") or {}
    if not rg.get("quadrant"):
        if rg.get("advice"):
            st.caption(f"Regime: {rg['advice']}")
        return
    st.markdown("**Regime**")
    if rg["quadrant"] == "undetermined":
        st.warning(md(rg["advice"]))
    else:
        st.info(f"**{rg['quadrant'].replace('_', ' ')}** ({md(rg['description'])}). {md(rg['advice'])}")
    m = st.columns(3)
    lo, hi = rg.get("interaction_gain_ci") or (None, None)
    k = risk_digits(d)
    metric(m[0], "interaction_gain", gain_text(rg["interaction_gain"], k), label="interaction gain",
           extra=f"Threshold {rg['gain_threshold']:g}.")
    m[0].caption(f"95% interval {gain_text(lo, k)} to {gain_text(hi, k)}" if lo is not None else "no interval")
    metric(m[1], "table_pressure", pressure_text(rg["table_pressure"]), label="table pressure",
           extra=f"Threshold {rg['pressure_threshold']:g}.")
    m[1].caption(f"threshold {rg['pressure_threshold']:g}")
    metric(m[2], "quadrant", rg["quadrant"].replace("_", " "), label="regime quadrant")
    page_link("app_pages/regime.py", "Place the panel on the regime map (Regime map page)")


def regime_line(d: dict) -> str | None:
    """The regime in one line (Results browser)."""
    rg = d.get("regime") or {}
    if not rg.get("quadrant"):
        return None
    return (f"Regime: {rg['quadrant'].replace('_', ' ')}: interaction gain "
            f"{gain_text(rg.get('interaction_gain'), risk_digits(d))}, "
            f"table pressure {pressure_text(rg.get('table_pressure'))}. {md(rg.get('advice') or '')}")


def candidates_frame(d: dict) -> pd.DataFrame:
    """Every candidate, best first: the columns the run has (none all empty), each once (the
    path rule only where it differs from the path label, the objective's risk under its own
    name), parameters as text and the judges last."""
    cands = pd.DataFrame(d["candidates"])
    if cands.empty:
        return cands
    sort = "val_risk" if "val_risk" in cands else "val_mse"
    cands = cands.sort_values(sort)
    cands["parameters"] = [parameters_text(p) for p in
                           cands.get("params", pd.Series([None] * len(cands), index=cands.index))]
    if "judges" in cands:
        cands["judges"] = cands["judges"].map(lambda j: ", ".join(j or []))
    drop = ["params"]
    if "path_rule" in cands and "path" in cands and (cands["path_rule"] == cands["path"]).all():
        drop.append("path_rule")
    if "val_risk" in cands and any(c in cands and cands[c].equals(cands["val_risk"]) for c in ("val_mse", "val_nll")):
        drop.append("val_risk")
    cands = cands.drop(columns=[c for c in drop if c in cands]).dropna(axis=1, how="all")
    lead = [c for c in CANDIDATE_ORDER if c in cands.columns]
    rest = [c for c in cands.columns if c not in lead and c != "judges"]
    return cands[lead + rest + (["judges"] if "judges" in cands.columns else [])]


def show_candidates(d: dict, *, key: str, name: str = "candidates") -> None:
    """The candidates table in the page's words (families and paths by their plain names, a
    column saying which candidates a limit admits; walk 12 read raw keys, and under a limit
    the top rows were candidates it excludes, unmarked); the download keeps the keys the
    command line and the library use."""
    frame = candidates_frame(d)
    shown = frame.copy()
    if "family" in shown:
        shown["family"] = shown["family"].map(family_name)
    if "path" in shown:
        shown["path"] = shown["path"].map(path_name)
    constraint = (d.get("choice_info") or {}).get("constraint") or {}
    limit, budget = constraint.get("max_judges"), constraint.get("budget")
    by_index = {c.get("index"): c for c in d.get("candidates") or []}
    if limit and "index" in shown:
        within = shown["index"].map(lambda i: "yes" if len(by_index.get(i, {}).get("judges") or []) <= int(limit)
                                    else "no")
        shown.insert(1, f"within at most {int(limit)} judges", within)
    costs = ((d.get("costs") or {}).get("judge_costs")) or {}
    if budget is not None and costs and "index" in shown:
        # walk 13: under a budget the top rows were candidates it excludes, with no cost shown
        def cost(i):
            each = [(costs.get(j) or {}).get("cost") for j in by_index.get(i, {}).get("judges") or []]
            return None if any(c is None for c in each) else float(sum(each))
        spent = shown["index"].map(cost)
        shown.insert(1, "cost per item", spent)
        shown.insert(2, f"within a budget of {float(budget):g}",
                     spent.map(lambda c: "-" if c is None or c != c else "yes" if c <= float(budget) + 1e-12 else "no"))
    helps = {c: ("Whether the run's limit admits this candidate: it calls at most that many judges."
                 if c.startswith("within at most") else
                 "Whether the run's budget admits this candidate: its judges' costs per item sum to at most it."
                 if c.startswith("within a budget") else
                 "What this candidate's judges cost per item, summed (the judge costs given with the run).")
             for c in shown.columns if c.startswith("within ") or c == "cost per item"}
    table(shown, key=key, helps=helps or None)
    table_download(frame, name)


def show_detail(d: dict) -> None:
    with st.expander(f"Full detail: all {len(d['candidates']):,} candidates (chart and table)"):
        fig = all_candidates_over_k(d["candidates"], selected=d["selected"], objective="val_risk",
                                    risk_label=risk_label(d), names=FAMILY_NAMES, path_names=PATH_NAMES,
                                    digits=risk_digits(d))
        st.plotly_chart(fig, key="select-all-candidates")
        figure_download(fig, "all-candidates-over-K")
        show_candidates(d, key="select-candidates")


def show_use(state: dict) -> None:
    st.subheader("Use it")
    run_id = state.get("run_id")
    if run_id is not None:
        page_link("app_pages/results.py", f"Stored as run {run_id}: open it in the Results browser", run_id=run_id)
    else:
        st.caption("This panel is not in the store, so the run was not stored (save it on the Upload page).")
    page_link("app_pages/deploy.py", "Deploy it: score and audit traffic (Deploy & monitor)", run_id=run_id)
    row = st.container(horizontal=True)
    if state.get("predictor"):
        row.download_button("Download predictor (JSON)", state["predictor"], "fcps-predictor.json",
                            mime="application/json")
    row.download_button("Download results (JSON)", json.dumps(state["dict"], default=str), "fcps-result.json",
                        mime="application/json")


def show_selection(state: dict, *, answered: bool = False) -> None:
    """The whole explanation of a selection (this session's or a stored one); ``answered``:
    :func:`show_answer` already put the answer and the frontier at the top of the page."""
    d = state["dict"]
    show_verdict(d, answered=answered)
    st.subheader("Evidence")
    show_metrics(d)
    show_baselines(d)
    show_ties(d)
    show_chart(d, key="select-per-family", name="best-per-family-over-K")
    show_judges(d)
    show_regime(d)
    if d.get("guard"):
        st.caption(f"guard (one standard error) toward {md(family_name(d['guard']['prior_family']))}: "
                   + ("adapted" if d["guard"].get("adapted") else "kept the prior"))
    if d.get("costs"):
        show_costs(d, heldout_word(d))
    show_detail(d)
    show_use(state)
