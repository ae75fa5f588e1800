"""The paper's robustness checks run by ``python -m fcps_core check NAME`` (the same
functions of :mod:`fcps_core.paper.robustness_checks`, with the same arguments as that command), each under
its paper label, on the LLMBar seven-judge pool with the paper's LLMBar block sizes."""

from __future__ import annotations

from typing import Callable

from .. import robustness_checks as checks
from .common import Plan, Section, fmt, md_table, pm

#: the paper's LLMBar protocol (Table tab:protocol): S/V/T 100/100/200, n_M up to 300
LLMBAR_SIZES = {"n_select": 100, "n_val": 100, "n_test": 200, "n_M": 300, "budgets": [20, 50, 100, 200, 300],
                "n_h": 500}


def _command(name: str, splits: int, s: dict) -> str:
    return (f"`python -m fcps_core check {name} data/llmbar.csv <judges> --n-select {s['n_select']} --n-val "
            f"{s['n_val']} --n-test {s['n_test']} --n-m {s['n_M']} --budgets {','.join(map(str, s['budgets']))} "
            f"--n-h {s['n_h']} --splits {splits}`")


def run_checks(panel, plan: Plan, say: Callable[[str], None]) -> list[Section]:
    s = dict(LLMBAR_SIZES)
    if plan.quick:
        s.update(budgets=[20, 50, 100], n_M=100, n_h=300)
    blocks = {k: s[k] for k in ("n_select", "n_val", "n_test")}
    kw = {"splits": plan.check_splits, "seed": plan.seed, "workers": plan.workers}
    note = (f" Run on the LLMBar seven-judge pool ({plan.check_splits} splits), as {{cmd}}, where <judges> is "
            "the report's LLMBar pool (tab:protocol); the paper's four panels are not shipped.")
    out = []

    say("check allocation")
    rows = checks.fixed_budget_allocation(panel, s["n_h"], n_test=s["n_test"], **kw)
    out.append(Section("tab:fixed-budget-allocation", "Fixed deployable-budget allocation (check allocation)",
                       f"n_H = n_S + n_M + n_V = {s['n_h']} reallocated by the ratios below (T held out at "
                       f"{s['n_test']}); compact one-path menu (information-first path, six scalar families and the "
                       "joint table); test MSE of the validation choice (mean ± SE) and the modal family kind "
                       "(S scalar, T table)." + note.format(cmd=_command("allocation", plan.check_splits, s)),
                       md_table(["ratio S:M:V", "n_S / n_M / n_V", "test MSE", "modal kind", "table share"],
                                [[x["ratio"], f"{x['n_S']} / {x['n_M']} / {x['n_V']}",
                                  pm(x["test_mse_mean"], x["test_mse_se"]), x["modal_kind"], fmt(x["table_share"], 2)]
                                 for x in rows])))

    say("check tie-collapse")
    rows = checks.tie_collapse_check(panel, s["budgets"], **blocks, **kw)
    out.append(Section("tab:tie-parse-fairness", "Tie/parse-error encoding check (check tie-collapse)",
                       "Scalar selector (midpoint encoding), joint table, and the joint table rerun with tie and "
                       "parse_error merged into one neutral cell value, on the same splits (test MSE, mean ± SE); "
                       "positive collapsed - scalar favours scalar." + note.format(cmd=_command("tie-collapse",
                                                                                                plan.check_splits, s)),
                       md_table(["n_M", "scalar selector", "joint table", "tie/error-collapsed table",
                                 "collapsed - scalar"],
                                [[x["n_M"], pm(x["scalar"], x["scalar_se"]), pm(x["table"], x["table_se"]),
                                  pm(x["collapsed_table"], x["collapsed_table_se"]),
                                  fmt(x["collapsed_minus_scalar"], 3, True)] for x in rows])))

    say("check smoothing")
    rows = checks.smoothing_sensitivity(panel, s["n_M"], **blocks, **kw)
    best = min(rows, key=lambda x: x["test_mse_mean"])
    out.append(Section("tab:table-sensitivity", "Joint-table smoothing and fallback sensitivity (check smoothing)",
                       f"Joint table on the information-first path with K chosen on validation at n_M = {s['n_M']}, "
                       "for every smoothing alpha and unseen-pattern fallback (global mean or lower prefix); test MSE "
                       f"mean ± SE. Best setting: alpha = {best['alpha']}, {best['fallback']}: "
                       f"{fmt(best['test_mse_mean'], 4)}." + note.format(cmd=_command("smoothing", plan.check_splits, s)),
                       md_table(["alpha", "fallback", "test MSE", "mean K"],
                                [[x["alpha"], x["fallback"], pm(x["test_mse_mean"], x["test_mse_se"], 4),
                                  fmt(x["K_mean"], 2)] for x in rows])))

    say("check pool")
    rows = checks.pool_perturbation(panel, s["n_M"], **blocks, **kw)
    out.append(Section("tab:pool-artifact-guardrail", "Judge-pool perturbation (check pool)",
                       f"The full seven-judge pool and each six-judge pool with one judge dropped, at n_M = {s['n_M']} "
                       "on the information-first path: the table's mean selected K out of m judges and the table and "
                       "scalar test MSE (Delta = table - scalar). The paper's six/seven pools differ by one strong API "
                       "judge; here every judge is dropped in turn." + note.format(cmd=_command("pool",
                                                                                                plan.check_splits, s)),
                       md_table(["dropped judge", "table K/m", "table MSE", "scalar MSE", "Delta"],
                                [[x["dropped"], f"{fmt(x['table_K_mean'], 2)}/{x['m']}", fmt(x["table_test_mse"], 4),
                                  fmt(x["scalar_test_mse"], 4), fmt(x["delta"], 4, True)] for x in rows])))

    say("check cold-start")
    n_h = plan.cold_start_n_h
    rows = checks.cold_start(panel, n_h, n_test=s["n_test"], splits=plan.cold_start_splits, seed=plan.seed, k_max=7)
    out.append(Section("tab:cold-start-few-label", "Cold-start few-label deployment (check cold-start)",
                       f"Only n_h grouped labels for selection and calibration ({plan.cold_start_splits} splits, 4-fold "
                       "cross-validation on the n_h rows), test on a held-out grouped block of "
                       f"{s['n_test']}. Prior = task-type family on all judges; guarded FCPS leaves the prior only when "
                       "the CV winner's upper one-SE risk is below the prior's lower one-SE risk. Delta_g = guarded - "
                       "prior (negative favours guarded); adaptation rate = share of splits that left the prior. Run on "
                       f"the LLMBar seven-judge pool, as `python -m fcps_core check cold-start data/llmbar.csv <judges> "
                       f"--n-test {s['n_test']} --n-h-values {','.join(map(str, n_h))} --splits "
                       f"{plan.cold_start_splits}`.",
                       md_table(["n_h", "prior", "unguarded FCPS", "guarded FCPS", "Delta_g", "guarded family",
                                 "adaptation rate"],
                                [[x["n_h"], fmt(x["prior_test_mse"]), fmt(x["unguarded_test_mse"]),
                                  fmt(x["guarded_test_mse"]), fmt(x["delta_guarded"], 4, True),
                                  f"{x['guarded_family']} (prior {x['prior_family']})", fmt(x["adaptation_rate"], 2)]
                                 for x in rows])))
    return out
