"""Sections for the appendix real-data tables: table-like menus, metrics and objectives,
the jury, split sensitivity, interaction and proxy diagnostics, the residual hybrid, the
CFPS path and the controlled complexity regressions."""

from __future__ import annotations

from collections import Counter

import numpy as np

from .. import robustness_checks as checks
from .. import analyses as pa
from . import paper_values as PV
from .common import P3, Section, fmt, interval, md_table, pm
from .real_tables import FAMILY_NAMES, REAL_NOTE, cell


def _paired(run, menu_a: str, menu_b: str, n_M: int) -> dict:
    recs = [r for r in run.sweep.records if r["n_M"] == n_M and menu_a in r["menus"] and menu_b in r["menus"]]
    return pa.paired_difference([r["menus"][menu_a]["test_mse"] for r in recs],
                                [r["menus"][menu_b]["test_mse"] for r in recs])


def table_like_comparison(runs) -> Section:
    rows = []
    for r in runs:
        for b in r.sweep.budgets:
            c = cell(r, b)["menus"]
            tl, sc = c["table_like"], c["scalar"]
            d = _paired(r, "table_like", "scalar", b)
            fam, share = next(iter(tl["family_shares"].items()))
            rows.append([r.name, b, pm(tl["test_mse_mean"], tl["test_mse_se"]), pm(sc["test_mse_mean"], sc["test_mse_se"]),
                         f"{fmt(d['delta'], 3, True)} {interval(d['ci_low'], d['ci_high'], 3)}",
                         f"{FAMILY_NAMES.get(fam, fam)} ({share:.2f})"])
    return Section("tab:table-like-family-comparison", "Validation-selected table-like menu versus the scalar menu",
                   "The table-like menu validates over the joint table, the hierarchical backoff table and the "
                   "residual hybrid (three paths, K <= 7; the residual is offered at every budget, not only the "
                   "largest). Gap = table-like minus scalar test MSE with its paired 95% interval (positive favours "
                   "scalar); last column: modal selected table-like family and its share. " + REAL_NOTE,
                   md_table(["Dataset", "n_M", "best table-like", "scalar", "table-like - scalar",
                             "selected table-like family"], rows))


def metric_robustness(runs) -> Section:
    rows = []
    for r in runs:
        top = [x for x in checks.metric_robustness(r.sweep) if x["n_M"] == r.largest][0]
        rows.append([r.name, r.largest] + [pm(top[m]["mean"], top[m]["se"]) for m in
                                           ("mse", "nll", "accuracy", "pearson", "spearman")])
    return Section("tab:metric-robustness", "Metric robustness of the validation-selected scalar selector",
                   "The `check metrics` computation (fcps_core.paper.robustness_checks.metric_robustness) on the main sweep of each "
                   "panel at its largest budget: MSE, Bernoulli NLL, accuracy at 1/2, Pearson and Spearman on T "
                   "(mean ± SE over splits). " + REAL_NOTE,
                   md_table(["Dataset", "n_M", "MSE", "NLL", "Accuracy", "Pearson", "Spearman"], rows))


def nll_selection_ablation(runs) -> Section:
    rows = [[r.name, x["n_M"], fmt(x["mse_selected_mse"], 3), fmt(x["nll_selected_mse"], 3),
             fmt(x["mse_selected_nll"], 3), fmt(x["nll_selected_nll"], 3)]
            for r in runs for x in checks.objective_comparison(r.sweep)]
    return Section("tab:nll-selection-ablation", "Scalar selector: MSE- versus NLL-selected",
                   "The `check objective` computation (fcps_core.paper.robustness_checks.objective_comparison) on the main sweeps: "
                   "the same scalar menu chosen by validation MSE or by validation NLL, scored by test MSE and test "
                   "NLL (means over splits). HANNA's labels are rubric scores in [0, 1], where NLL is the "
                   "fractional-label Bernoulli loss. " + REAL_NOTE,
                   md_table(["Dataset", "n_M", "MSE sel. MSE", "NLL sel. MSE", "MSE sel. NLL", "NLL sel. NLL"], rows))


def jury_baseline(runs) -> Section:
    rows = []
    for r in runs:
        c = cell(r, r.largest)
        ds = [e["ds_jury"] for e in r.extras]
        rows.append([r.name, r.largest, fmt(c["table_test_mse"], 3), fmt(c["scalar_test_mse"], 3),
                     pm(*pa.mean_se([d["test_mse"] for d in ds])), fmt(float(np.mean([d["K"] for d in ds])), 2)])
    return Section("tab:jury-baseline", "Unsupervised DS/BT-style jury at the largest budget",
                   "The Dawid-Skene jury (EM on the calibration block and unlabelled rows, never T; oriented and "
                   "isotonic-calibrated on calibration labels) on the information-first path with K chosen by "
                   "validation MSE, on the same splits as the table and scalar selectors (test MSE). " + REAL_NOTE,
                   md_table(["Dataset", "n_M", "joint table", "scalar selector", "DS/BT-style jury", "selected K"], rows))


def backoff_split_sensitivity(runs) -> Section:
    rows = []
    for r in runs:
        c = cell(r, r.largest)["menus"]
        shifted = {k: v.cells[0]["menus"]["scalar"]["test_mse_mean"] for k, v in r.shifted.items()}
        n_S, n_V, _ = r.spec["sizes"]
        rows.append([r.name, r.largest, fmt(c["scalar"]["test_mse_mean"], 3), fmt(c["backoff"]["test_mse_mean"], 3),
                     fmt(shifted["sel.-heavy"], 3), fmt(c["scalar"]["test_mse_mean"], 3), fmt(shifted["val.-heavy"], 3),
                     f"{n_S + n_S // 2}/{n_V - n_V // 2} · {n_S}/{n_V} · {n_S - n_S // 2}/{n_V + n_V // 2}"])
    return Section("tab:backoff-split-sensitivity", "Hierarchical backoff and S/V split sensitivity",
                   "Test MSE at the largest budget: the scalar selector; the backoff table on the information-first "
                   "path (K and shrinkage by validation); the scalar selector rerun with half of S moved to V "
                   "(val.-heavy) or half of V moved to S (sel.-heavy), M and T fixed. 'default' is the main sweep's "
                   "scalar selector (its menu already uses the information-first path only). " + REAL_NOTE,
                   md_table(["Dataset", "n_M", "scalar", "hier. backoff", "sel.-heavy", "default", "val.-heavy",
                             "S/V: sel.-heavy · default · val.-heavy"], rows))


def interaction_diagnostic(runs, frame, records) -> Section:
    rows = [[x["panel"], x["n_M"], fmt(x["additive_test_mse"]), fmt(x["pairwise_test_mse"]),
             fmt(x["pairwise_minus_additive"], 4, True), fmt(x["pairwise_share"], 2)]
            for x in pa.interaction_diagnostic(frame, records)]
    return Section("tab:interaction-diagnostic", "Interaction diagnostic for scalar aggregation",
                   "At the largest budget: the validation-best all-K additive stacker (ridge or logistic) and the "
                   "validation-best all-K pairwise-feature stacker, test MSE (means over splits), their gap "
                   "(pairwise minus additive: positive means the products do not pay) and the share of scalar-menu "
                   "choices that use pairwise features. " + REAL_NOTE,
                   md_table(["Dataset", "n_M", "additive risk", "pairwise risk", "pairwise - additive",
                             "pairwise selected"], rows))


def theory_proxy_winner(runs, frame, records, plan) -> tuple[Section, dict]:
    units = pa.proxy_units(frame, records)
    n = 200 if plan.quick else 2000
    out = pa.theory_proxy_winner(units, n_boot=n, n_perm=n, seed=plan.seed)
    paper = {**PV.THEORY_PROXY, "hard rule agreement over panel-budget cells":
             PV.THEORY_PROXY["hard rule agreement over dataset-budget cells"]}
    rows = [[x["diagnostic"], x["estimate"] if isinstance(x.get("estimate"), str) else fmt(x.get("estimate"), 3),
             x.get("uncertainty", "")] + list(paper.get(x["diagnostic"], ("-", "-"))) for x in out]
    cells = units.groupby(["panel", "n_M"]).ngroups if len(units) else 0
    by = {x["diagnostic"]: x for x in out}
    hard, auc = by.get("hard rule agreement over panel-budget cells"), by.get("split-level proxy AUC for scalar winner")
    rule = hard.get("rule") if hard else None
    if hard is None or auc is None or auc.get("estimate") is None:
        verdict, why = "differs", "the diagnostic could not be computed on these runs."
    else:
        hard_sig = hard["p_value"] < 0.05
        auc_above = auc["ci"][0] > 0.5
        verdict = ("reproduced" if hard_sig and auc_above and abs(auc["estimate"] - 0.573) <= 0.1 else
                   "same direction, different size" if hard_sig and auc_above else "differs")
        why = (f"hard rule {hard['estimate']} ({hard['uncertainty']}; paper 16/20, p = 0.006); proxy AUC "
               f"{auc['estimate']:.3f} with its interval {'above' if auc_above else 'not above'} 1/2 (paper 0.573, "
               "[0.522, 0.624]). The paper's 16/20 equals its count of cells where scalar has the lower mean test MSE "
               "(Table tab:regime-comparison), which is what a rule that predicts scalar in every real cell scores; "
               f"ours predicts scalar in {rule['predicted_scalar']} of {rule['cells']} cells and scalar won "
               f"{rule['scalar_won']}." if rule else "")
    text = ("Units: (panel, budget, split). The paper names the hard rule without spelling it out; we read it as "
            "the decision of its regime map (fig:operational-regime-map, whose caption defines both axes): "
            "a panel-budget cell is predicted to favour the joint table only when its mean validation gain "
            "(scalar minus table validation risk) exceeds 0.001 and its mean table pressure H_K/n_M + unseen rate "
            "is at most 0.1, otherwise scalar; it is scored against the menu with the lower mean test MSE in the "
            "cell, with a one-sided binomial test against 1/2. The split-level tests use the proxy z(H_K/n_M) + "
            "z(unseen) + z(pairwise gain) of the selected table to predict whether the scalar menu's choice beats "
            f"the table menu's on test MSE: AUC with a cluster bootstrap over the {cells} panel-budget cells ({n} "
            "resamples) and a within-cluster permutation test. The pooled z-score rule (a cell's mean proxy > 0 "
            "predicts scalar, against the cell's majority winner) is the rule earlier versions of this report used; "
            "it splits the cells about in half by construction. Paper columns typed in from Table "
            "tab:theory-proxy-winner (its 20 cells are four unshipped panels x budgets). " + REAL_NOTE)
    sec = Section("tab:theory-proxy-winner", "Theory-proxy winner diagnostic", text,
                  md_table(["Diagnostic", "Estimate", "Uncertainty / test", "paper estimate", "paper uncertainty"], rows),
                  verdict=verdict, why=why)
    return sec, {"units": units, "rows": out}


def residual_hybrid(runs) -> Section:
    rows = []
    for r in runs:
        c = cell(r, r.largest)
        res = [e["residual"] for e in r.extras]
        base, count = Counter(x["params"].get("base") for x in res).most_common(1)[0]
        rows.append([r.name, r.largest, fmt(c["table_test_mse"]), fmt(c["scalar_test_mse"]),
                     pm(*pa.mean_se([x["test_mse"] for x in res]), digits=4), f"{base} ({count}/{len(res)})",
                     fmt(float(np.mean([x["K"] for x in res])), 2)])
    return Section("tab:residual-shrinkage-hybrid", "Residual-shrinkage hybrid at the largest budget",
                   "A scalar base plus a count-shrunk residual table on joint patterns; base family, shrinkage and K "
                   "chosen on validation (information-first path, K <= 7) in each split; the modal selected base with "
                   "its split count and the mean K. Table and scalar: the main menus on the same splits. " + REAL_NOTE,
                   md_table(["Dataset", "n_M", "table", "scalar", "residual-shrinkage", "selected base", "K"], rows))


def cfps_path(runs) -> tuple[Section, list]:
    rows, shares = [], []
    for r in runs:
        c = r.cfps.cells[0]["menus"]
        frame = r.cfps.candidate_frame().assign(panel=r.name)
        share = pa.selection_share(frame, "table_cfps", path="cfps")[0]
        shares.append(share)
        d = pa.paired_difference([x["menus"]["table_cfps"]["test_mse"] for x in r.cfps.records],
                                 [x["menus"]["table"]["test_mse"] for x in r.cfps.records])
        rows.append([r.name, r.largest, fmt(c["table"]["test_mse_mean"]), fmt(c["cfps"]["test_mse_mean"]),
                     fmt(c["table_cfps"]["test_mse_mean"]), fmt(d["delta"], 4, True), fmt(share["share"], 2)])
    return Section("tab:cfps-path", "Calibration-frontier path search (CFPS) at the largest budget",
                   "Joint table, K <= 7, on the same splits: baseline = validation envelope over the information-first, "
                   "complexity-penalized and random paths; CFPS = the calibration-frontier paths alone (at most 32); "
                   "+CFPS = both. Delta+ = +CFPS minus baseline (negative: the augmented menu has lower test MSE); "
                   "CFPS sel. = share of splits whose +CFPS choice is a CFPS path (from the per-candidate records). "
                   + REAL_NOTE, md_table(["Dataset", "n_M", "baseline", "CFPS", "+CFPS", "Delta+", "CFPS sel."], rows)), \
        shares


def table_frame(frame):
    return frame[(frame["family"] == "table") & frame["path"].isin(P3) & (frame["K"] <= 7)]


def controlled_complexity(frame) -> tuple[Section, list]:
    out = pa.controlled_complexity(table_frame(frame))
    rows = [[x["diagnostic"], fmt(x["estimate"], 3), fmt(x["se"], 3),
             f"{x['units']} residualized prefixes in {x['groups']} groups"] for x in out]
    return Section("tab:controlled-complexity", "Controlled complexity diagnostics",
                   "Every joint-table candidate (three paths, K <= 7, every split and budget): H_K/n_M or the test "
                   "unseen rate and test MSE demeaned within dataset-budget-path groups, then the standardized "
                   "one-variable OLS slope and its SE. Positive: more pressure goes with higher test risk inside the "
                   "same group (diagnostic, not causal). " + REAL_NOTE,
                   md_table(["Diagnostic", "Estimate", "SE", "controlled units"], rows)), out


def within_group_correlation(frame) -> Section:
    rows = [[x["panel"], x["groups"], fmt(x["mean_within_group_corr"], 3), fmt(x["positive_fraction"], 2)]
            for x in pa.within_group_correlation(table_frame(frame))]
    return Section("tab:within-group-correlation", "Within-group correlation of H_K/n_M and test risk",
                   "Inside each budget-path group (varying over splits and K), the correlation of H_K/n_M with test "
                   "MSE of the joint-table candidates; its mean over groups and the share of positive groups. "
                   + REAL_NOTE, md_table(["Dataset", "groups", "mean within-group corr.", "positive fraction"], rows))
