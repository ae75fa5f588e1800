"""The paper's own numbers, typed in from fcps-paper.tex (never read at run time), each with
the table and row it comes from, and the rule that turns a side-by-side comparison into a
section verdict (issue 30 item 6).

Only values printed in the paper appear here; the report prints them beside the values it
measures. Where the paper measured an unshipped panel (RewardBench, SummEval, Arena100K),
the comparable row is the paper's LLMBar row: the report's ``llmbar`` panel is the same
benchmark (its judge pool and label coding differ, so absolute risks differ).
"""

from __future__ import annotations

import math

from .common import md_table

#: Table tab:calibration-growth-new-dataset: best scalar minus joint table (positive favours
#: the table), columns n_M = 16, 64, 256, 1024, 2048 (the paper has no 512 column).
GROWTH_BUDGETS = (16, 64, 256, 1024, 2048)
GROWTH = {"additive": (-0.007, -0.003, -0.004, -0.002, -0.001),
          "mixed": (+0.014, +0.014, +0.043, +0.018, +0.010),
          "parity": (+0.046, +0.101, +0.123, +0.053, +0.010)}
#: the parity headline, appendix "New Calibration-Growth Dataset" text: (n_M, K, unseen, table MSE)
PARITY_HEADLINE = {16: (6, 0.768, 0.224), 512: (6, 0.0, 0.061)}
#: Table tab:semireal-calibration-growth, same columns
SEMIREAL = {"additive": (+0.003, +0.000, -0.001, -0.002, -0.001),
            "mixed": (+0.010, +0.005, +0.011, +0.006, +0.004),
            "parity": (+0.065, +0.055, +0.030, +0.015, +0.009)}
#: Table tab:controlled-aggregator-regimes: (regime, budget) -> (joint table, ridge + isotonic, logistic)
AGGREGATOR = {("additive", 50): (0.187, 0.178, 0.171), ("additive", 3000): (0.159, 0.158, 0.157),
              ("xor", 50): (0.140, 0.219, 0.251), ("xor", 3000): (0.117, 0.203, 0.236),
              ("and", 50): (0.139, 0.137, 0.156), ("and", 3000): (0.107, 0.115, 0.129)}
#: Table tab:interaction-strength-sweep: gamma -> gaps at n_M = 50, 200, 1000, 3000
STRENGTH_BUDGETS = (50, 200, 1000, 3000)
STRENGTH = {0.0: (-0.024, -0.013, -0.003, +0.000), 0.3: (-0.020, +0.008, +0.014, +0.012),
            0.5: (+0.046, +0.053, +0.056, +0.056), 0.7: (+0.110, +0.117, +0.117, +0.135),
            1.0: (+0.171, +0.186, +0.182, +0.188)}
#: Table tab:regime-comparison, LLMBar rows: n_M -> (table, scalar, Delta = table - scalar)
REGIME_LLMBAR = {20: (0.2254, 0.2212, 0.0042), 50: (0.2213, 0.2111, 0.0102), 100: (0.2147, 0.1972, 0.0176),
                 200: (0.2104, 0.1914, 0.0189), 300: (0.2039, 0.1826, 0.0214)}
#: the paper's count over its 20 dataset-budget cells (Results, "Second, ..."; Table tab:regime-comparison)
REGIME_COUNT = "scalar lower in 16 of 20 cells, paired interval excluding zero in 11"
#: Table tab:exact-cell-pressure, LLMBar rows: n_M -> (K, sum p/N, u, V_cell, proxy V~, table, scalar)
CELL_PRESSURE_LLMBAR = {20: (2.37, 0.21937, 0.1020, 0.32137, 0.3266, 0.2257, 0.2285),
                        300: (4.13, 0.09100, 0.0292, 0.12017, 0.0749, 0.2031, 0.1857)}
#: Table tab:candidate-menu-validation, LLMBar row: n_V, table |C|, table scale, scalar |C|, scalar scale
MENU_LLMBAR = (100, 21, 0.174, 42, 0.193)
#: Table tab:theory-proxy-winner rows: diagnostic -> (estimate, uncertainty)
THEORY_PROXY = {"hard rule agreement over dataset-budget cells": ("16/20", "one-sided binomial p=0.006"),
                "split-level proxy AUC for scalar winner": ("0.573", "cluster bootstrap 95% CI [0.522, 0.624]"),
                "within-cluster permutation test for AUC": ("-", "p=0.002"),
                "scalar-minus-table proxy-score gap": ("0.476", "cluster bootstrap 95% CI [0.221, 0.754]")}

ZERO = 0.001        # the paper bolds gaps larger than this: smaller ones count as no direction


def _sign(v: float) -> int:
    return 0 if abs(v) <= ZERO else (1 if v > 0 else -1)


def signed_verdict(pairs: list[tuple[float, float]], *, abs_tol: float, rel_tol: float = 0.5) -> tuple[str, str]:
    """(verdict, why) for (ours, paper) pairs of a signed quantity whose sign is the finding.

    A pair agrees in direction when the signs match, or one side is within +-0.001 (the
    paper's own no-direction band) and the other within ``abs_tol``. **differs** when more
    than a quarter of the pairs disagree in direction; **reproduced** when every pair agrees
    and |ours - paper| <= max(abs_tol, rel_tol * |paper|); otherwise **same direction,
    different size**."""
    pairs = [(o, p) for o, p in pairs if o is not None and p is not None and math.isfinite(o)]
    if not pairs:
        return "not applicable offline", "no comparable values"
    agree = close = 0
    for o, p in pairs:
        so, sp = _sign(o), _sign(p)
        same = so == sp or (so == 0 and abs(p) <= abs_tol) or (sp == 0 and abs(o) <= abs_tol)
        agree += same
        close += same and abs(o - p) <= max(abs_tol, rel_tol * abs(p))
    n = len(pairs)
    why = (f"{agree} of {n} compared values agree with the paper in direction, {close} also in size "
           f"(within max({abs_tol:g}, {rel_tol:.0%} of the paper's value)).")
    if n - agree > n / 4:
        return "differs", why
    if close == n:
        return "reproduced", why
    return "same direction, different size", why


def gaps_row(values) -> list[str]:
    return [f"{v:+.3f}" for v in values]


def paper_table(source: str, header: list[str], rows: list[list]) -> str:
    """The paper's values as a markdown table headed by where they were typed in from."""
    return f"Paper values (typed in from {source}):\n\n" + md_table(header, rows)


# -- hand verdicts for the sections whose comparison is one of reading, not of a computed rule ----
# Each entry: (verdict, why, the paper's values as markdown). The paper's numbers are typed in
# from the named table and row; the comparison is with the section's own table above them.
_LLM = "the paper's LLMBar row of Table "
SAME = "same direction, different size"
RISK_NOTE = (" Absolute risks are lower here throughout (the shipped LLMBar panel's judge pool and label coding "
             "are not the paper's), so sizes are not compared.")
FIG_NOTE = "The paper's figure is drawn from unshipped panels and prints no numbers; the comparison is with its caption."

HAND = {
    "tab:protocol": (
        "reproduced", "the LLMBar protocol (budgets, S/V/T sizes, schema) is the paper's exactly; HANNA and the "
        "external stand-ins replace unshipped panels.",
        paper_table(_LLM + "tab:protocol", ["Dataset", "budgets n_M", "select/validation/test", "schema"],
                    [["LLMBar", "20, 50, 100, 200, 300", "100 / 100 / 200", "pairwise"]])),
    "tab:main-finite-label-checks": (
        SAME, "every column has the paper's sign on LLMBar (pairwise gain below zero, 0.30 pairwise share, oracle and "
        "finite Delta favouring scalar, residual Delta near zero); the Deltas are smaller here." + RISK_NOTE,
        paper_table(_LLM + "tab:main-finite-label-checks",
                    ["Dataset", "V~", "pairwise gain", "pairwise sel.", "oracle Delta", "finite Delta", "residual Delta"],
                    [["LLMBar", "0.0749", "-0.0024", "0.30", "+0.0145", "+0.0205", "+0.0007"]])),
    "tab:protocol-guardrails": (
        "reproduced", "the paper's table states which block is used for what (no numbers); the audit finds no row or "
        "group in two blocks and T used only after selection, as the paper's protocol requires.",
        paper_table("Table tab:protocol-guardrails (all four rows)", ["Block", "Used for"],
                    [["Selection", "construct judge paths and path-specific oracle diagnostics"],
                     ["Calibration", "fit table, stacking, one-coin and calibration maps"],
                     ["Validation", "select K, path and/or aggregator family within a split"],
                     ["Test", "report final risk and diagnostics after selection is fixed"]])),
    "tab:pool-artifact-guardrail": (
        SAME, "as in the paper, the selected prefix stays below the pool size with six and seven judges; the paper "
        "drops one strong API judge, we drop each judge in turn." + RISK_NOTE,
        paper_table(_LLM + "tab:pool-artifact-guardrail",
                    ["Dataset", "n_M", "six-pool K/m", "six-pool MSE", "seven-pool K/m", "seven-pool MSE"],
                    [["LLMBar", "300", "4.17/6", "0.226", "4.47/7", "0.204"]])),
    "tab:baseline-envelope": (
        SAME, "the paper's ordering holds on LLMBar: validated prefixes beat the all-seven table and the best single "
        "judge, the random path is worst of the three paths, and the test oracle stays lower." + RISK_NOTE,
        paper_table("the LLMBar column of Table tab:baseline-envelope", ["Method", "LLMBar"],
                    [["Best single judge (val.)", "0.219 ± 0.004"], ["All seven judges", "0.211 ± 0.002"],
                     ["Information-first + val. K", "0.204 ± 0.002"], ["Complexity-penalized + val. K", "0.204 ± 0.002"],
                     ["Random path + val. K", "0.207 ± 0.003"], ["Path-family envelope", "0.203 ± 0.002"],
                     ["Test oracle envelope", "0.194 ± 0.002"]])),
    "tab:envelope-budget-k": (
        SAME, "the envelope's mean K at n_M = 300 is close to the paper's 4.13; its risk is lower." + RISK_NOTE,
        paper_table(_LLM + "tab:envelope-budget-k", ["Dataset", "reporting budget n_M", "envelope risk",
                                                      "envelope mean K"],
                    [["LLMBar", "300", "0.203 ± 0.002", "4.13"]])),
    "tab:aggregation-baselines": (
        SAME, "on LLMBar the ordering matches the paper's: logistic stacking best, the all-judge mean worst, ridge and "
        "pairwise stackers between." + RISK_NOTE,
        paper_table("the LLMBar column of Table tab:aggregation-baselines", ["Method", "LLMBar"],
                    [["All-judge mean + isotonic", "0.245 ± 0.002"], ["One-coin reliability + isotonic", "0.195 ± 0.003"],
                     ["Ridge stacking + isotonic", "0.184 ± 0.002"], ["Logistic stacking", "0.181 ± 0.002"],
                     ["Ridge pairwise stacking + isotonic", "0.192 ± 0.002"],
                     ["Logistic pairwise stacking", "0.183 ± 0.002"]])),
    "tab:aggregation-selected": (
        SAME, "a stacking family is the modal choice on LLMBar in both (the paper's logistic, 0.43 of splits; here a "
        "ridge stacker), with a shorter mean K here than the paper's 7.00." + RISK_NOTE,
        paper_table(_LLM + "tab:aggregation-selected", ["Dataset", "n_M", "selected family", "selected K", "test MSE"],
                    [["LLMBar", "300", "Logistic (0.43)", "7.00", "0.183 ± 0.002"]])),
    "tab:k-family-ablation": (
        SAME, "the paper's pattern holds on LLMBar: selecting K helps the table (sel. K below K = 7) but not the "
        "scalar and full menus (K = 7 at or below sel. K)." + RISK_NOTE,
        paper_table(_LLM + "tab:k-family-ablation", ["Dataset", "n_M", "table K=7", "table sel. K", "scalar K=7",
                                                      "scalar sel. K", "full K=7", "full sel. K"],
                    [["LLMBar", "300", "0.2110", "0.2031", "0.1857", "0.1857", "0.1863", "0.1886"]])),
    "tab:selected-k-instability": (
        SAME, "as in the paper, the selected K grows with n_M on LLMBar (paper 2.37 -> 4.13) with a wide split spread, "
        "the regret against K <= 3 stays within a few thousandths of zero, and the oracle gap stays positive."
        + RISK_NOTE,
        paper_table("the LLMBar rows of Table tab:selected-k-instability",
                    ["Dataset", "n_M", "selected K", "modal K", "test MSE", "regret vs K<=3", "oracle gap"],
                    [["LLMBar", "20", "2.37 ± 1.47", "1 (0.40)", "0.226 ± 0.003", "-0.001 ± 0.001", "0.007 ± 0.002"],
                     ["LLMBar", "50", "3.03 ± 1.40", "2 (0.27)", "0.222 ± 0.003", "-0.001 ± 0.002", "0.014 ± 0.003"],
                     ["LLMBar", "100", "3.30 ± 1.26", "4 (0.30)", "0.214 ± 0.003", "+0.000 ± 0.002", "0.011 ± 0.002"],
                     ["LLMBar", "200", "4.00 ± 1.68", "3 (0.23)", "0.214 ± 0.004", "+0.006 ± 0.003", "0.016 ± 0.003"],
                     ["LLMBar", "300", "4.13 ± 1.33", "3 (0.27)", "0.203 ± 0.002", "-0.003 ± 0.002",
                      "0.009 ± 0.001"]])),
    "tab:oracle-interaction-gap-full": (
        SAME, "every LLMBar cell reads 'no table oracle gain' in both: even the test-chosen table does not beat the "
        "test-chosen scalar aggregator." + RISK_NOTE,
        paper_table("the LLMBar rows of Table tab:oracle-interaction-gap-full",
                    ["Dataset", "n_M", "scalar oracle", "table oracle", "scalar finite", "table finite", "reading"],
                    [["LLMBar", "20", "0.215", "0.219", "0.221", "0.226", "no table oracle gain"],
                     ["LLMBar", "50", "0.200", "0.208", "0.211", "0.222", "no table oracle gain"],
                     ["LLMBar", "100", "0.193", "0.203", "0.197", "0.214", "no table oracle gain"],
                     ["LLMBar", "200", "0.181", "0.197", "0.191", "0.214", "no table oracle gain"],
                     ["LLMBar", "300", "0.179", "0.194", "0.183", "0.203", "no table oracle gain"]])),
    "tab:table-like-family-comparison": (
        "differs", "the paper's table-like menu loses clearly to scalar on LLMBar at n_M = 100 and 200 (+0.017, "
        "+0.019) with the joint table chosen; here the gaps stay within a few thousandths of zero because the "
        "residual hybrid, which the paper offers only at its largest budgets, is chosen at every budget.",
        paper_table("the LLMBar rows of Table tab:table-like-family-comparison",
                    ["Dataset", "n_M", "best table-like", "scalar", "table-like - scalar", "selected family"],
                    [["LLMBar", "20", "0.222", "0.221", "+0.001", "hier. backoff (0.70)"],
                     ["LLMBar", "50", "0.219", "0.211", "+0.008", "hier. backoff (0.60)"],
                     ["LLMBar", "100", "0.214", "0.197", "+0.017", "joint table (0.60)"],
                     ["LLMBar", "200", "0.210", "0.191", "+0.019", "joint table (0.53)"],
                     ["LLMBar", "300", "0.186", "0.183", "+0.003", "residual (0.90)"]])),
    "tab:metric-robustness": (
        SAME, "the scalar selector is good on every metric in both; every LLMBar metric is better here (lower MSE and "
        "NLL, higher accuracy and correlations)." + RISK_NOTE,
        paper_table(_LLM + "tab:metric-robustness", ["Dataset", "MSE", "NLL", "Accuracy", "Pearson", "Spearman"],
                    [["LLMBar", "0.183", "0.557", "0.719", "0.522", "0.522"]])),
    "tab:jury-baseline": (
        SAME, "the ordering scalar < table < DS/BT jury on LLMBar is the paper's." + RISK_NOTE,
        paper_table(_LLM + "tab:jury-baseline", ["Dataset", "joint table", "scalar selector", "DS/BT-style jury",
                                                  "selected K"],
                    [["LLMBar", "0.203", "0.183", "0.238 ± 0.002", "2.33"]])),
    "tab:nll-selection-ablation": (
        SAME, "as in the paper, choosing by NLL barely moves test MSE and usually lowers test NLL (here at every "
        "LLMBar budget, in the paper at three of five)." + RISK_NOTE,
        paper_table("the LLMBar rows of Table tab:nll-selection-ablation",
                    ["Dataset", "n_M", "MSE sel. MSE", "NLL sel. MSE", "MSE sel. NLL", "NLL sel. NLL"],
                    [["LLMBar", "20", "0.221", "0.221", "0.704", "0.632"], ["LLMBar", "50", "0.211", "0.210", "0.647", "0.621"],
                     ["LLMBar", "100", "0.197", "0.198", "0.635", "0.647"],
                     ["LLMBar", "200", "0.191", "0.191", "0.607", "0.578"],
                     ["LLMBar", "300", "0.183", "0.184", "0.557", "0.559"]])),
    "tab:tie-parse-fairness": (
        SAME, "collapsing tie and parse_error leaves the table unchanged in both, and scalar stays ahead at every "
        "budget; the gap is about +0.006 here against +0.005..+0.022 in the paper.",
        paper_table("the LLMBar rows of Table tab:tie-parse-fairness",
                    ["n_M", "scalar selector", "joint table", "collapsed table", "collapsed - scalar"],
                    [["20", "0.221", "0.226", "0.226", "+0.005"], ["50", "0.211", "0.222", "0.222", "+0.011"],
                     ["100", "0.197", "0.214", "0.214", "+0.017"], ["200", "0.191", "0.214", "0.214", "+0.022"],
                     ["300", "0.183", "0.203", "0.203", "+0.021"]])),
    "tab:fixed-budget-allocation": (
        SAME, "a scalar family is the modal choice under every allocation in both, and 1:2:1 is at or near the "
        "lowest risk." + RISK_NOTE,
        paper_table(_LLM + "tab:fixed-budget-allocation", ["Dataset", "n_H", "1:1:1", "1:2:1", "1:3:1", "1:1:2"],
                    [["LLMBar", "500", "0.187 (S)", "0.186 (S)", "0.186 (S)", "0.188 (S)"]])),
    "tab:backoff-split-sensitivity": (
        SAME, "as in the paper, the backoff table does not beat the scalar selector on LLMBar and moving labels to V "
        "helps slightly or not at all; the paper's sel.-heavy split hurts more (0.196 against its default 0.187) than "
        "here." + RISK_NOTE,
        paper_table(_LLM + "tab:backoff-split-sensitivity", ["Dataset", "scalar", "hier. backoff", "sel.-heavy",
                                                              "default", "val.-heavy"],
                    [["LLMBar", "0.183", "0.202", "0.196", "0.187", "0.184"]])),
    "tab:interaction-diagnostic": (
        SAME, "pairwise products do not pay on LLMBar in either (pairwise minus additive +0.0024 in the paper, a "
        "similar small positive gap here) and the pairwise share of scalar choices is 0.30 in both." + RISK_NOTE,
        paper_table(_LLM + "tab:interaction-diagnostic", ["Dataset", "additive risk", "pairwise risk",
                                                           "pairwise - additive", "pairwise selected"],
                    [["LLMBar", "0.1809", "0.1832", "0.0024", "0.30"]])),
    "tab:table-sensitivity": (
        SAME, "the table is insensitive to alpha and fallback in both (spread about 0.002 on LLMBar); the paper's "
        "best setting is alpha = 2 with the lower-prefix fallback, ours the global fallback." + RISK_NOTE,
        paper_table(_LLM + "tab:table-sensitivity", ["Dataset", "global fallback", "lower-prefix fallback",
                                                      "best alpha / fallback"],
                    [["LLMBar", "0.204 ± 0.002", "0.205 ± 0.002", "alpha = 2.0, lower-prefix: 0.203"]])),
    "tab:residual-shrinkage-hybrid": (
        SAME, "on LLMBar the residual hybrid lands next to the scalar selector and below the table, with logistic the "
        "selected base, as in the paper." + RISK_NOTE,
        paper_table(_LLM + "tab:residual-shrinkage-hybrid", ["Dataset", "table", "scalar", "residual-shrinkage",
                                                              "selected base"],
                    [["LLMBar", "0.2031", "0.1826", "0.1833", "logistic"]])),
    "tab:cfps-path": (
        SAME, "adding CFPS paths changes the table's test MSE by less than 0.002 in both (paper +0.0019, worse; "
        "here within +-0.001), and CFPS paths are chosen less often here (paper 0.73)." + RISK_NOTE,
        paper_table(_LLM + "tab:cfps-path", ["Dataset", "n_M", "baseline", "CFPS", "+CFPS", "Delta+", "CFPS sel."],
                    [["LLMBar", "300", "0.2031", "0.2043", "0.2049", "+0.0019", "0.73"]])),
    "tab:cold-start-few-label": (
        SAME, "the guard keeps FCPS at or near the prior in both, and unguarded FCPS is worse than the prior at "
        "n_h = 64; at n_h = 16 the paper's unguarded run beats the prior, ours does not." + RISK_NOTE,
        paper_table("the LLMBar rows of Table tab:cold-start-few-label",
                    ["Dataset", "n_h", "prior", "unguarded FCPS", "guarded FCPS", "Delta_g", "guarded family"],
                    [["LLMBar", "16", "0.2600", "0.2541", "0.2560", "-0.0040", "one-coin + isotonic (0.58)"],
                     ["LLMBar", "64", "0.2053", "0.2135", "0.2051", "-0.0001", "one-coin + isotonic (0.08)"]])),
    "tab:external-binary-validation-protocol": (
        "not applicable offline", "the paper's JailbreakBench, GSM8K and MBPP judge panels are not shipped; the rows "
        "describe stand-ins, not the paper's tasks.",
        paper_table("Table tab:external-binary-validation-protocol", ["Task", "Source dataset", "Judge alphabet"],
                    [["Safety", "JailbreakBench judge comparison", "safe, unsafe, uncertain"],
                     ["Math", "GSM8K correctness", "correct, incorrect, uncertain"],
                     ["Code", "MBPP correctness", "correct, incorrect, uncertain"]])),
    "tab:external-binary-validation-results": (
        "not applicable offline", "stand-ins for unshipped tasks: their numbers are not comparable with the paper's.",
        paper_table("Table tab:external-binary-validation-results",
                    ["Task", "Best single acc.", "Best strategy", "n_M", "selected K", "test risk", "unseen, K=1->7"],
                    [["Safety", "0.850", "gain-complexity", "96", "4.50", "0.115", "0.000 -> 0.210"],
                     ["Math", "1.000", "gain-complexity", "64", "2.17", "0.004", "0.000 -> 0.033"],
                     ["Code", "0.980", "gain-complexity", "96", "2.63", "0.011", "0.003 -> 0.053"]])),
    "tab:external-binary-theory-validation": (
        "not applicable offline", "stand-ins for unshipped tasks; the four predictions are checked on them, but the "
        "paper's values come from its own tasks.",
        paper_table("Table tab:external-binary-theory-validation (Safety column)", ["Theory prediction", "Safety"],
                    [["Strong judges do not determine the panel", "best single accuracy 0.850; validation selects K = 4.50"],
                     ["Pattern complexity grows with panel size", "Q_K 2.3 -> 384; entropy support 2.11 -> 14.02"],
                     ["Sparse calibration creates unseen pressure", "unseen rate 0.000 -> 0.210"],
                     ["Finite risk favours intermediate prefixes", "gain-complexity, n_M = 96, K = 4.50, risk 0.115"]])),
    "tab:controlled-complexity": (
        SAME, "both slopes are positive with intervals above zero, as in the paper, but about a third of the paper's "
        "size (our units are two panels, not four).",
        paper_table("Table tab:controlled-complexity", ["Diagnostic", "Estimate", "SE", "controlled units"],
                    [["H_K/n_M -> test risk", "0.178", "0.009", "12600 residualized prefixes"],
                     ["unseen rate -> test risk", "0.199", "0.009", "12600 residualized prefixes"]])),
    "tab:within-group-correlation": (
        SAME, "the mean within-group correlation is positive on LLMBar in both (paper 0.127 over 15 groups, 0.67 "
        "positive), smaller here and with fewer positive groups.",
        paper_table(_LLM + "tab:within-group-correlation", ["Dataset", "groups", "mean within-group corr.",
                                                             "positive fraction"],
                    [["LLMBar", "15", "0.127", "0.67"]])),
    "fig:main-regime-diagnostics": (
        "reproduced", "qualitatively: on LLMBar the K-curve flattens and turns up before K = 7 and binned risk rises "
        "with the unseen rate, as the caption says; HANNA's curves are flat. " + FIG_NOTE, ""),
    "fig:risk-k": (
        "reproduced", "qualitatively: every LLMBar and HANNA path curve has its minimum below K = 7 (risk flattens or "
        "turns up with more judges). " + FIG_NOTE, ""),
    "fig:selected-k": (
        "reproduced", "on LLMBar the mean selected K rises with n_M from about 2.5 to 4.0, against the paper's 2.37 "
        "-> 4.13 (Table tab:selected-k-instability, LLMBar rows). " + FIG_NOTE,
        paper_table("the LLMBar rows of Table tab:selected-k-instability (selected K, mean ± sd)",
                    ["Dataset", "n_M", "selected K"],
                    [["LLMBar", "20", "2.37 ± 1.47"], ["LLMBar", "50", "3.03 ± 1.40"], ["LLMBar", "100", "3.30 ± 1.26"],
                     ["LLMBar", "200", "4.00 ± 1.68"], ["LLMBar", "300", "4.13 ± 1.33"]])),
    "fig:validation-risk": (
        "reproduced", "qualitatively: each path's validation minimum is at an intermediate K on LLMBar, and the random "
        "path's curve lies above the others, as the paper's stars show. " + FIG_NOTE, ""),
    "fig:complexity-risk": (
        "reproduced", "qualitatively: binned LLMBar risk rises over the upper H_K/n_M bins, as the caption's pooled "
        "curve does; HANNA is nearly flat. " + FIG_NOTE, ""),
    "fig:unseen-risk": (
        "reproduced", "qualitatively: binned LLMBar risk rises with the test unseen rate beyond a few percent. "
        + FIG_NOTE, ""),
    "fig:distribution-summary": (
        "reproduced", "qualitatively: selected K rises and the unseen rate falls as n_M grows on LLMBar, as in the "
        "paper's LLMBar rows of Table tab:exact-cell-pressure. " + FIG_NOTE,
        paper_table(_LLM + "tab:exact-cell-pressure (selected K and unseen rate u)", ["Dataset", "n_M", "K", "u"],
                    [["LLMBar", "20", "2.37", "0.1020"], ["LLMBar", "300", "4.13", "0.0292"]])),
    "fig:complexity-risk-path": (
        "reproduced", "qualitatively: within each path LLMBar's binned risk rises over the upper H_K/n_M bins, as "
        "in the pooled figure (the random path also starts high, where its one-judge prefixes are weak judges). "
        + FIG_NOTE, ""),
    "fig:marginal": (
        "reproduced", "qualitatively: the binned median risk change goes from below zero at small complexity steps "
        "to above zero at large ones, with wider bands, as the caption says. " + FIG_NOTE, ""),
    "fig:uncertainty-diagnostics": (
        "reproduced", "qualitatively: the 10-90% split bands are wide next to the differences between prefixes, and "
        "the selected K varies across splits, as the caption says. " + FIG_NOTE, ""),
}
