"""Select: choose the panel's judges and aggregator, then explain the choice.

The result reads top-down: the plain-language verdict first, then the evidence (metrics,
baselines, ties, the best candidate per family over K with the winner marked, the judges,
the regime), and every candidate on demand. ``?run=N`` opens a stored selection run.
"""

import json

import pandas as pd
import streamlit as st

from fcps_core import FAMILIES, PATH_RULES, FCPSError, make_blocks
from fcps_core.defaults import (DEFAULT_ALPHA, DEFAULT_CHOICE, DEFAULT_FOLDS, DEFAULT_PATHS, DEFAULT_PROTOCOL,
                                DEFAULT_REPEATS, DEFAULT_SPLIT)
from fcps_core.explain import comparison, deployed_judges, verdict_parts
from fcps_core.glossary import help_text
from fcps_core.plots import all_candidates_over_k, best_per_family_over_k
from fcps_core.selection import CHOICES, PROTOCOLS
from fcps_app import glossary
from fcps_app.common import (figure_download, panel_picker, remember_selection, run_selection,
                             split_sizes_table, table_download)
from fcps_app.costs import judge_costs_editor, show_costs
from fcps_app.runs import selection_state

Z95 = 1.959963984540054
#: help for columns the glossary has no entry for (their meaning on this page)
COLUMN_HELP = {
    "labelled rows": "Labelled rows in the block (human labels available).",
    "95% low": "Lower end of the 95% bootstrap interval of the difference (paired over the same rows).",
    "95% high": "Upper end of the 95% bootstrap interval of the difference (paired over the same rows).",
    "compared": "better: the interval lies above 0; worse: below 0; tied: it contains 0 (no claim either way).",
    "val_se": "Standard error of the candidate's held-out risk, clustered by item group; "
              "risk ± 1.96 SE is its 95% interval.",
    "val_nll": "Log loss (negative log-likelihood) of the candidate's predictions on held-out rows. Lower is better.",
    "test_nll": "Log loss on the research test block T: an audit of the choice, never used to make it.",
    "grid_size": "Parameter settings of the family tried at this prefix (each counts toward the menu size |C|).",
    "judge_set_stability": "Mean overlap (Jaccard) between the judges the candidate used in each fold and the "
                           "deployed judge set; 1 = the same judges every fold.",
    "weight share": "The judge's share of the deployed predictor's total absolute weight (averaged over the "
                    "members of a tie average).",
}
TIE_DIFF_HELP = ("This candidate's held-out risk minus the deployed one's, on the same rows (above 0: the "
                 "deployed one is lower).")


def md(text: str) -> str:
    """Escape Markdown (judge names may hold * _ [ ] $ ...) so text renders as written."""
    for ch in "\\`*_[]<>$~|#":
        text = text.replace(ch, "\\" + ch)
    return text


#: number formats of columns whose scale differs from a risk's
FORMATS = {"Q_K": "compact", "S_K": "%.1f", "H_K": "%.2f", "grid_size": "%d", "K": "%d"}


def table(df: pd.DataFrame, *, extra: dict | None = None, digits: int = 4, **kwargs):
    """A dataframe with glossary help on every column and numbers at ``digits`` decimals."""
    helps = COLUMN_HELP | (extra or {})
    config = {}
    for c in df.columns:
        text = helps.get(c) or glossary.column_help(c)
        if pd.api.types.is_float_dtype(df[c]):
            config[c] = st.column_config.NumberColumn(help=text, format=FORMATS.get(c, f"%.{digits}f"))
        else:
            config[c] = st.column_config.Column(help=text)
    return glossary.dataframe(df, column_config=config, **kwargs)


def open_stored_run() -> None:
    """``?run=N``: make the stored selection run N this session's selection (once per N, so a
    new run on this page is not overwritten on the next rerun)."""
    wanted = st.query_params.get("run")
    if not wanted or st.session_state.get("select_opened_run") == wanted:
        return
    st.session_state["select_opened_run"] = wanted
    try:
        state = selection_state(int(wanted))
    except (FCPSError, ValueError) as exc:
        st.error(f"Cannot open run {wanted}: {exc}")
        return
    st.session_state["selection"] = state
    st.session_state["current_panel"] = state["label"]


st.title("Select a panel and aggregator")
open_stored_run()
label, panel = panel_picker()
st.caption(f"{panel.n_rows} rows, {panel.n_labelled} labelled, {len(panel.judges)} judges, schema {panel.schema}")

mode = st.radio("Blocks", ["ratio", "counts"] + (["block column"] if panel.blocks is not None else []),
                horizontal=True, help=help_text("block"))
split, counts = None, None
if mode == "ratio":
    split = st.text_input(
        "Block ratio S:M:V, or S:M:V:T", DEFAULT_SPLIT,
        help=f"The default is {DEFAULT_SPLIT} (S:M:V, no research test block). A fourth part, e.g. "
             f"{DEFAULT_SPLIT}:1, reserves a research test block T that only audits the choice. "
             + (help_text("block") or ""))
elif mode == "counts":
    c = st.columns(4)
    counts = {"n_S": c[0].number_input("n_S", 1, value=max(1, panel.n_labelled // 5), help=help_text("n_S")),
              "n_M": c[1].number_input("n_M", 1, value=max(1, 2 * panel.n_labelled // 5), help=help_text("n_M")),
              "n_V": c[2].number_input("n_V", 1, value=max(1, panel.n_labelled // 5), help=help_text("n_V")),
              "n_T": c[3].number_input("n_T", 0, value=max(0, panel.n_labelled // 5), help=help_text("n_T"))}
seed = st.number_input("seed", 0, 1_000_000, 0, help="Seeds the blocks, the folds and the random path.")
try:
    blocks = make_blocks(panel, split=split, counts=counts, seed=int(seed))
    table(split_sizes_table(panel, blocks))
except FCPSError as exc:
    st.error(str(exc))
    st.stop()

st.caption("Under the cross-fitted protocol (default) S, M and V are pooled: every labelled row outside T "
           "is used for fitting and, in other folds, for validation; T only audits.")
costs = judge_costs_editor(label, panel)
with st.form("menu_form"):
    p1, p2, p3, p4 = st.columns(4)
    protocol = p1.selectbox("protocol", PROTOCOLS, index=PROTOCOLS.index(DEFAULT_PROTOCOL),
                            help=help_text("protocol"))
    choice = p2.selectbox("choice rule", CHOICES, index=CHOICES.index(DEFAULT_CHOICE),
                          help="argmin: lowest held-out risk; simplest_within_se: the simplest candidate within one "
                               "paired SE of the best; tie_average: average the statistically tied candidates")
    folds = p3.number_input("folds", 2, 20, DEFAULT_FOLDS, help="Grouped folds of the cross-fitted protocol.")
    repeats = p4.number_input("repeats", 1, 10, DEFAULT_REPEATS, help="Repeats of the grouped K-fold split.")
    families = st.multiselect("families", FAMILIES, default=list(FAMILIES), wrap=True,
                              help=(help_text("family") or "") + " Table-like: table, backoff, residual; the rest are "
                                                         "scalar.")
    c1, c2, c3 = st.columns(3)
    paths = c1.multiselect("path rules", PATH_RULES, default=list(DEFAULT_PATHS), wrap=True, help=help_text("path"))
    k_max = c2.number_input("K max (0 = whole pool)", 0, len(panel.judges), 0,
                            help="largest prefix for scalar families (the library's default: the whole pool, so "
                                 "stackers over every judge are candidates); table-like families stop at 8")
    alpha = c2.number_input("table alpha", 0.0, 10.0, DEFAULT_ALPHA, step=0.1, help=help_text("alpha"))
    fallback = c2.selectbox("table fallback", ["global", "lower_prefix"], help=help_text("fallback"))
    objective = c3.selectbox("objective", ["mse", "nll"], help="The held-out loss candidates are compared on: "
                             "squared error (MSE) or log loss (NLL).")
    guard = c3.selectbox("guard", ["none", "one_se"], help="one_se keeps the task-type prior family unless the "
                         "winner is clearly better (needs the argmin choice rule)")
    refit = c3.selectbox("deployment", ["frozen", "refit"], help="refit re-fits the chosen candidate on S+M+V")
    run = st.form_submit_button("Run selection", type="primary")

if run:
    # with judge costs the default path menu also orders judges by information per cost
    run_paths = list(paths) + (["cost_aware"] if costs and list(paths) == list(DEFAULT_PATHS) else [])
    bar = st.progress(0.0, text="starting")
    try:
        result = run_selection(panel, split, counts, int(seed), lambda f, m: bar.progress(min(f, 1.0), text=m),
                               families=families, k_max=int(k_max) or None, alpha=alpha,
                               fallback=fallback, objective=objective,
                               guard=None if guard == "none" else guard, refit=refit,
                               protocol=protocol, choice=choice, folds=int(folds), repeats=int(repeats),
                               judge_costs=costs, paths=run_paths)
    except FCPSError as exc:
        st.error(str(exc))
        st.stop()
    bar.empty()
    remember_selection(label, result)
    new_id = st.session_state["selection"].get("run_id")
    if new_id is not None:      # the address now opens this run
        st.query_params["run"] = str(new_id)
        st.session_state["select_opened_run"] = str(new_id)


def show_verdict(d: dict) -> None:
    parts = verdict_parts(d)
    st.subheader("Verdict")
    # green unless a fixed recipe is clearly better (its paired interval lies below 0): then amber
    box = st.warning if any(comparison(b) == "worse" for b in d.get("baselines") or []) else st.success
    box("\n\n".join(md(s) for s in parts["headline"]))
    notes = parts["details"]
    if notes:
        st.markdown("\n".join(f"- {md(s)}" for s in notes))


def show_metrics(d: dict, held: str, obj: str) -> None:
    sel = d["selected"]
    dr = d.get("deployed_risk") or {}
    cand = next((c for c in d["candidates"] if c["index"] == sel.get("index")), None)
    m = st.columns(5)
    if dr.get("estimate") is not None:
        lo, hi = dr["ci"]
        glossary.metric(m[0], "deployed_risk", f"{dr['estimate']:.4f}", label=f"{obj} on new items",
                        extra=f"95% interval {lo:.4f} to {hi:.4f} ({str(dr.get('method')).upper()}).")
        m[0].caption(f"95% interval {lo:.4f} to {hi:.4f}")
    else:
        glossary.metric(m[0], "deployed_risk", "-", label=f"{obj} on new items",
                        extra=(d.get("choice_info") or {}).get("estimate_note", "Not estimated for this run."))
    own = sel.get(f"val_{obj.lower()}")
    se = cand.get("val_se") if cand and sel["family"] != "tie_average" else None
    glossary.metric(m[1], "val_risk", "-" if own is None else f"{own:.4f}", label=f"held-out {obj} (winner)",
                    extra="Optimistic: it is the minimum over the whole menu.")
    m[1].caption(f"± {Z95 * se:.4f} (95%)" if se else "average of tied candidates: no single SE")
    glossary.metric(m[2], "test_mse", "-" if sel.get("test_mse") is None else f"{sel['test_mse']:.4f}",
                    label="test MSE (T audit)",
                    extra="One audit on T, reported without an interval; it never informed the choice.")
    glossary.metric(m[3], "menu_size", f"{d['menu_size']:,}", label="menu size |C|")
    glossary.metric(m[4], "validation_scale", f"{d['validation_scale']:.3f}", label="validation scale")


def show_baselines(d: dict, held: str) -> None:
    if not d.get("baselines"):
        return
    st.markdown(f"**Against fixed recipes on the same {held} rows** (difference = recipe risk - selection "
                "risk; above 0 the selection is better; *better* only when the whole 95% interval is above 0)")
    rows = [{"baseline": b["label"], "held-out risk": b["risk"], "difference": b["diff_vs_selected"],
             "95% low": (b.get("ci") or [None, None])[0], "95% high": (b.get("ci") or [None, None])[1],
             "compared": {"unpaired": "no interval"}.get(comparison(b), comparison(b))} for b in d["baselines"]]
    table(pd.DataFrame(rows))


def show_ties(d: dict, held: str) -> None:
    sel, tie = d["selected"], d.get("tie") or {}
    if tie.get("n_tied"):
        st.markdown(f"**Statistical ties**: {tie['n_tied']} other candidate(s) lie within one paired standard error "
                    "of the deployed one; these would serve about as well (the closest few):")
        alts = pd.DataFrame([{"family": a["family"], "K": a["K"], "path": a["path"], "held-out risk": a["risk"],
                              "difference": a["diff"], "paired SE": a["se"], "judges": ", ".join(a["judges"])}
                             for a in tie["alternatives"]])
        table(alts, extra={"difference": TIE_DIFF_HELP})
    if sel["family"] == "tie_average":
        st.markdown(f"**Deployed: the average of {len(sel['members'])} tied candidates**")
        table(pd.DataFrame([{"family": mm["family"], "K": mm["K"], "path": mm["path"],
                             "parameters": ", ".join(f"{k}={v}" for k, v in mm["params"].items()) or "-",
                             "held-out risk": mm["val_risk"]} for mm in sel["members"]]))


def show_chart(d: dict, held: str, obj: str) -> None:
    fig = best_per_family_over_k(d["candidates"], selected=d["selected"], objective="val_risk",
                                 risk_label=f"{held} {obj}", baselines=d.get("baselines"))
    st.plotly_chart(fig, key="select-per-family")
    st.caption("One line per family: its best candidate (over paths and parameters) at each prefix size K; "
               "dashed lines are table-like families. The gold star is the deployed choice (with its 95% interval "
               "when it is one candidate); open stars are the members of a tie average; the dotted line is the "
               "best single judge. Hover a point for its risk ± 95% interval.")
    figure_download(fig, "best-per-family-over-K")


def show_judges(d: dict) -> None:
    sel = d["selected"]
    n = len((d.get("panel") or {}).get("judges") or []) or "?"
    report = d.get("judges_report") or {}
    per = {j["judge"]: j for j in report.get("judges") or []}
    contrib = {j["judge"]: j for j in (report.get("contribution") or {}).get("judges") or []}
    order = deployed_judges(d)
    ranked = order != list(sel["judges"])
    st.markdown(f"**Judges deployed** ({len(order)} of {n}), "
                + ("largest weight share first" if ranked else "in path order"))
    rows = [{"judge": j, "weight": contrib.get(j, {}).get("weight"),
             "weight share": contrib.get(j, {}).get("weight_share"),
             "accuracy": per.get(j, {}).get("accuracy"), "kappa": per.get(j, {}).get("kappa"),
             "auc": per.get(j, {}).get("auc")} for j in order]
    frame = pd.DataFrame(rows).dropna(axis=1, how="all")
    table(frame, digits=3)
    st.page_link("app_pages/judges.py", label="Every judge, agreement and error correlation: the Judges page")


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
    glossary.metric(m[0], "interaction_gain", f"{rg['interaction_gain']:+.4f}", label="interaction gain",
                    extra=f"Threshold {rg['gain_threshold']:g}.")
    m[0].caption(f"95% interval {lo:+.4f} to {hi:+.4f}" if lo is not None else "no interval")
    glossary.metric(m[1], "table_pressure", f"{rg['table_pressure']:.3f}", label="table pressure",
                    extra=f"Threshold {rg['pressure_threshold']:g}.")
    m[1].caption(f"threshold {rg['pressure_threshold']:g}")
    glossary.metric(m[2], "quadrant", rg["quadrant"].replace("_", " "), label="regime quadrant")
    st.page_link("app_pages/regime.py", label="Place the panel on the regime map (Regime map page)")


def show_detail(d: dict, held: str, obj: str) -> None:
    with st.expander(f"Full detail: all {len(d['candidates'])} candidates (chart and table)"):
        fig = all_candidates_over_k(d["candidates"], selected=d["selected"], objective="val_risk",
                                    risk_label=f"{held} {obj}")
        st.plotly_chart(fig, key="select-all-candidates")
        figure_download(fig, "all-candidates-over-K")
        rows = []
        for c in d["candidates"]:
            row = {k: c.get(k) for k in ("family", "K", "path", "val_risk", "val_se", "val_mse", "val_nll",
                                         "test_mse", "test_nll", "Q_K", "S_K", "H_K", "unseen_val", "unseen_test",
                                         "V_cell", "V_proxy", "grid_size", "judge_set_stability")}
            row["parameters"] = ", ".join(f"{k}={v}" for k, v in (c.get("params") or {}).items()) or "-"
            row["judges"] = ", ".join(c.get("judges") or [])
            rows.append(row)
        frame = pd.DataFrame(rows).dropna(axis=1, how="all").sort_values("val_risk")
        table(frame)
        table_download(frame, "candidates")


def show_selection(state: dict) -> None:
    d = state["dict"]
    held = "cross-fitted" if d.get("protocol") == "crossfit" else "validation"
    obj = str((d.get("menu") or {}).get("objective") or "mse").upper()
    show_verdict(d)
    st.subheader("Evidence")
    show_metrics(d, held, obj)
    show_baselines(d, held)
    show_ties(d, held)
    show_chart(d, held, obj)
    show_judges(d)
    show_regime(d)
    if d.get("guard"):
        st.caption(f"guard one_se toward {d['guard']['prior_family']}: "
                   + ("adapted" if d["guard"].get("adapted") else "kept the prior"))
    if d.get("costs"):
        show_costs(d, held)
    show_detail(d, held, obj)
    st.subheader("Use it")
    if state.get("run_id") is not None:
        st.page_link("app_pages/results.py", label=f"Stored as run {state['run_id']}: open in the results browser",
                     query_params={"run": str(state["run_id"])})
    else:
        st.caption("This panel is not in the store, so the run was not stored (save it on the Upload page).")
    if state.get("predictor"):
        st.download_button("Download predictor (JSON)", state["predictor"], "fcps-predictor.json",
                           mime="application/json")
    st.page_link("app_pages/deploy.py", label="Deploy it: score and audit traffic (Deploy & monitor)",
                 query_params={"run": str(state["run_id"])} if state.get("run_id") is not None else None)
    st.download_button("Download results (JSON)", json.dumps(d, default=str), "fcps-result.json",
                       mime="application/json")


sel_state = st.session_state.get("selection")
if sel_state and sel_state["label"] == label:
    show_selection(sel_state)
glossary.glossary_expander()
