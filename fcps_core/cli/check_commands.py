"""``python -m fcps_core check NAME PANEL``: the paper's seven robustness checks
(:mod:`fcps_core.paper.robustness_checks`, appendix "Extended Empirical Results") from the command line.

Each check runs grouped splits of its own (the research test block T only reports);
sizes default to shares of the panel's labelled rows, so ``check NAME PANEL`` works on
any panel, and the flags reproduce the paper's settings (e.g. LLMBar: ``--n-val 100``).
"""

from __future__ import annotations

import sys

from ..errors import FCPSError
from ..service.files import json_ready
from .args import add_panel_arguments, capped_workers, parse_budgets
from .context import RunContext
from .render import fmt, log, one_line, render_table, write_json

#: name -> (paper label, one-line description)
CHECKS = {
    "allocation": ("tab:fixed-budget-allocation", "a fixed n_H = n_S + n_M + n_V reallocated 1:1:1, 1:2:1, "
                                                  "1:3:1, 1:1:2 over a compact one-path menu"),
    "objective": ("tab:nll-selection-ablation", "MSE- versus NLL-selected scalar selector per budget"),
    "tie-collapse": ("tab:tie-parse-fairness", "joint table with tie and parse_error merged"),
    "smoothing": ("tab:table-sensitivity", "table alpha in {0.1, 0.5, 1, 2} x global / lower-prefix fallback"),
    "metrics": ("tab:metric-robustness", "MSE, NLL, accuracy, Pearson, Spearman of the scalar selector"),
    "pool": ("tab:pool-artifact-guardrail", "drop one judge at a time"),
    "cold-start": ("tab:cold-start-few-label", "n_h in {8, 16, 32, 64} labels, cross-validated selection "
                                               "with and without a one-SE guard toward the task prior"),
}


def add_check_commands(sub) -> None:
    ck = sub.add_parser("check", help="run one of the paper's robustness checks: " + ", ".join(CHECKS))
    ck.add_argument("name", choices=list(CHECKS), metavar="NAME",
                    help="; ".join(f"{k}: {v[1]} ({v[0]})" for k, v in CHECKS.items()))
    add_panel_arguments(ck)
    g = ck.add_argument_group("sizes (default: shares of the labelled rows)")
    g.add_argument("--n-select", type=int, help="n_S (default: labelled / 8)")
    g.add_argument("--n-val", type=int, help="n_V (default: labelled / 8)")
    g.add_argument("--n-test", type=int, help="n_T, the research test block (default: labelled / 5)")
    g.add_argument("--n-m", type=int, help="n_M of the one-budget checks smoothing and pool "
                                           "(default: the rows left, at most 200)")
    g.add_argument("--budgets", help="comma-separated n_M for objective, tie-collapse and metrics "
                                     "(default: 25%%, 50%% and 100%% of --n-m)")
    g.add_argument("--n-h", type=int, help="allocation: the fixed n_H (default n_S + n_M + n_V)")
    g.add_argument("--n-h-values", default="8,16,32,64", help="cold-start: label budgets")
    g.add_argument("--k-max", type=int, default=7, help="cold-start: largest prefix (default: %(default)s, "
                                                        "the paper's)")
    g.add_argument("--drop", nargs="+", metavar="JUDGE", help="pool: judges to drop (default: each)")
    r = ck.add_argument_group("runs")
    r.add_argument("--splits", type=int, default=30, help="grouped splits (default: %(default)s; cold-start: 12)")
    r.add_argument("--seed", type=int, default=0, help="seed of the splits")
    r.add_argument("--workers", type=int, default=1,
                   help="parallel splits (joblib; at most the usable cores and the splits)")
    r.add_argument("--json", action="store_true", help="print the rows as JSON on stdout; errors as JSON")
    r.add_argument("--quiet", action="store_true", help="no progress on stderr")
    ck.set_defaults(handler=cmd_check)


def check_sizes(args, panel) -> dict:
    """The check's block sizes: flags, else shares of the labelled rows (refused early when
    they cannot fit, naming the flags)."""
    n = int(panel.n_labelled)
    n_select = args.n_select or max(1, n // 8)
    n_val = args.n_val or max(1, n // 8)
    n_test = args.n_test or max(1, n // 5)
    left = n - n_select - n_val - n_test
    n_m = args.n_m or min(200, left)
    if n_m < 1 or n_select + n_val + n_test + n_m > n:
        raise FCPSError(f"the panel has {n} labelled rows: n_S {n_select} + n_V {n_val} + n_T {n_test} + "
                        f"n_M {n_m} do not fit; lower --n-select/--n-val/--n-test/--n-m")
    if args.budgets:
        budgets = sorted(set(parse_budgets(args.budgets)))
    else:
        budgets = sorted({max(1, n_m // 4), max(1, n_m // 2), n_m})
    return {"n_select": n_select, "n_val": n_val, "n_test": n_test, "n_M": n_m, "budgets": budgets,
            "n_h": args.n_h or n_select + n_m + n_val}


def run_check(name: str, panel, sizes: dict, **options) -> list[dict]:
    """Rows of one check (:func:`fcps_core.service.paper.run_check`)."""
    from ..service.paper import run_check as check
    return check(name, panel, sizes, names=tuple(CHECKS), **options)


def cmd_check(args, ctx: RunContext) -> int:
    from .engine_commands import load_panel_from_args
    from .progress import progress_printer
    panel = load_panel_from_args(args, ctx)
    sizes = check_sizes(args, panel)
    if args.drop:
        unknown = [j for j in args.drop if j not in set(panel.judge_names)]
        if unknown:
            raise FCPSError(f"--drop: the panel has no judge {unknown[0]!r}")
    try:
        n_h_values = [int(v) for v in args.n_h_values.split(",") if v.strip()]
    except ValueError:
        raise FCPSError(f"--n-h-values must be comma-separated integers (got {args.n_h_values!r})") from None
    label, what = CHECKS[args.name]
    splits = args.splits if args.name != "cold-start" or args.splits != 30 else 12
    log(args, f"check {args.name} ({label}): {what}; {splits} splits")
    rows = run_check(args.name, panel, sizes, splits=splits, seed=args.seed, workers=capped_workers(args, splits),
                     drop=args.drop, n_h_values=n_h_values, k_max=args.k_max,
                     progress=progress_printer(args))
    if args.json:
        write_json(json_ready({"check": args.name, "paper_label": label, "panel": panel.name,
                               "sizes": sizes, "splits": splits, "seed": args.seed, "rows": rows}))
        return 0
    sys.stdout.write(f"{args.name} check on {one_line(panel.name)} (paper {label}), {splits} splits, "
                     f"S={sizes['n_select']} V={sizes['n_val']} T={sizes['n_test']}\n")
    sys.stdout.write(rows_table(rows))
    return 0


def rows_table(rows: list[dict]) -> str:
    """Flat rows as a text table (nested dicts shown as key=value)."""
    if not rows:
        return "(no rows)\n"
    headers = list(dict.fromkeys(k for r in rows for k in r))
    body = [[fmt(r.get(h)) if not isinstance(r.get(h), dict) else
             " ".join(f"{k}={fmt(v)}" for k, v in r[h].items()) for h in headers] for r in rows]
    return render_table(body, headers)
