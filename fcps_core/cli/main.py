"""``python -m fcps_core``: the parser and the one dispatch every command goes through."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from ..version import __version__
from .. import defaults as D
from ..errors import FCPSError
from ..families import FAMILIES
from ..paths import PATH_RULES
from ..defaults import (CHOICES, DEFAULT_BOOTSTRAP, DEFAULT_CHOICE, DEFAULT_FOLDS, DEFAULT_PROTOCOL,
                        DEFAULT_REPEATS, ESTIMATES, PROTOCOLS)
from .args import OneLineParser, add_block_arguments, add_panel_arguments, check_numbers
from .context import RunContext
from .render import error_line, guarded_output
from .deploy_commands import cmd_audit, cmd_score
from .engine_commands import cmd_report, cmd_select, cmd_sweep, cmd_synth
from .check_commands import add_check_commands
from .plan_commands import add_plan_commands
from .store_commands import add_store_commands
from .store_hooks import add_save_arguments, record_failure


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m fcps_core",
                                     description="Finite-Calibration Panel Selection")
    parser.add_argument("--version", action="version", version=f"fcps {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    s = sub.add_parser("select", help="select a judge panel and aggregator")
    add_panel_arguments(s)
    add_block_arguments(s.add_argument_group("blocks"))
    m = s.add_argument_group("menu")
    m.add_argument("--menu", choices=["paper_table", "paper_scalar"],
                   help="a named paper menu (Table tab:candidate-menu-validation): paper_table = the joint "
                        "table over 3 path rules x K 1..7 (21 candidates), paper_scalar = 6 scalar families on "
                        "the info_first path x K 1..7 (42); instead of --families/--paths/--k-max")
    m.add_argument("--families", nargs="+", help=f"families (default all): {', '.join(FAMILIES)}")
    m.add_argument("--paths", nargs="+",
                   help=f"path rules (default info_first complexity_penalized random): {', '.join(PATH_RULES)}")
    m.add_argument("--k-max", type=int, help="largest prefix size (default: whole pool; tables 8)")
    m.add_argument("--table-k-max", type=int, default=D.DEFAULT_TABLE_K_MAX)
    m.add_argument("--pairwise-k-max", type=int, default=D.DEFAULT_PAIRWISE_K_MAX)
    m.add_argument("--alpha", type=float, default=D.DEFAULT_ALPHA, help="table smoothing (Eq. smooth-estimator)")
    m.add_argument("--fallback", choices=["global", "lower_prefix"], default=D.DEFAULT_FALLBACK)
    m.add_argument("--n-bins", type=int, default=D.DEFAULT_N_BINS, help="quantile bins for continuous judges")
    m.add_argument("--objective", choices=["mse", "nll"], default=D.DEFAULT_OBJECTIVE)
    pr = s.add_argument_group("protocol and choice")
    pr.add_argument("--protocol", choices=list(PROTOCOLS), default=DEFAULT_PROTOCOL,
                    help="crossfit: repeated grouped K-fold over every labelled row outside T "
                         "(default); split: the paper's S/M/V blocks")
    pr.add_argument("--folds", type=int, default=DEFAULT_FOLDS, help="crossfit folds (default 5)")
    pr.add_argument("--repeats", type=int, default=DEFAULT_REPEATS, help="crossfit repeats (default 2)")
    pr.add_argument("--choice", choices=list(CHOICES),
                    help=f"choice rule (default {DEFAULT_CHOICE}; argmin with --guard)")
    pr.add_argument("--max-members", type=int, default=D.DEFAULT_MAX_MEMBERS, help="tie_average: most members averaged")
    pr.add_argument("--judge-costs", help="CSV judge,cost[,latency]: every candidate gets its cost (sum) and "
                                          "latency (max), the report its risk-cost Pareto front; needed by "
                                          "--choice cheapest_tied (default: the costs stored with a stored panel; "
                                          "--save stores them with it)")
    pr.add_argument("--estimate", choices=list(ESTIMATES), default="bbc",
                    help="deployed-risk estimate: bbc (bootstrap bias-corrected, default), nested, none")
    pr.add_argument("--n-boot", type=int, default=DEFAULT_BOOTSTRAP, help="bootstrap resamples (default 200)")
    m.add_argument("--guard", choices=["none", "one_se"], default="none")
    m.add_argument("--prior-family", help="guard's prior family (default by task type)")
    m.add_argument("--refit", choices=["frozen", "refit"], default="frozen")
    m.add_argument("--gain-threshold", type=float, default=D.DEFAULT_GAIN_THRESHOLD)
    m.add_argument("--pressure-threshold", type=float, default=D.DEFAULT_PRESSURE_THRESHOLD)
    o = s.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="print the JSON result on stdout")
    o.add_argument("--save-model", help="write the deployable predictor (JSON) here")
    o.add_argument("--force", action="store_true", help="replace an existing --save-model file")
    o.add_argument("--top", type=int, default=15, help="candidates shown in the table")
    o.add_argument("--quiet", action="store_true", help="no progress on stderr")

    sw = sub.add_parser("sweep", help="calibration-growth sweep over n_M budgets")
    add_panel_arguments(sw)
    sw.add_argument("--budgets", default="50,100,200,400,800", help="comma-separated n_M values")
    sw.add_argument("--splits", type=int, default=30)
    sw.add_argument("--n-select", type=int, required=True)
    sw.add_argument("--n-val", type=int, required=True)
    sw.add_argument("--n-test", type=int, required=True)
    sw.add_argument("--menu", nargs="+", help="families to fit (default: the full menu)")
    sw.add_argument("--menus", choices=["default", "paper", "growth"], default="default",
                    help="the decisions compared: default (table, scalar, table_like, full over every path), "
                         "paper (the paper's 21-candidate table menu and 42-candidate scalar menu, K <= 7) or "
                         "growth (the paper's controlled calibration-growth menus: joint table against additive "
                         "and pairwise ridge, three paths, K <= 7)")
    sw.add_argument("--fallback", choices=["global", "lower_prefix"], default=D.DEFAULT_FALLBACK,
                    help="what a table predicts for an unseen pattern")
    sw.add_argument("--paths", nargs="+", help="path rules (default info_first complexity_penalized random)")
    sw.add_argument("--k-max", type=int)
    sw.add_argument("--alpha", type=float, default=D.DEFAULT_ALPHA)
    sw.add_argument("--objective", choices=["mse", "nll"], default=D.DEFAULT_OBJECTIVE)
    sw.add_argument("--seed", type=int, default=0)
    sw.add_argument("--workers", type=int, default=1,
                    help="parallel splits (joblib); more than the usable cores (local backends) or the "
                         "splits is lowered to that, with a note on stderr")
    sw.add_argument("--backend", default="loky",
                    help="joblib backend for --workers > 1: loky (local processes), threading, or dask "
                         "(needs a dask.distributed Client, e.g. DASK_SCHEDULER_ADDRESS)")
    sw.add_argument("--plan-delta", type=int,
                    help="plan: labels added to the largest budget for the extrapolated risks "
                         "(default: the largest budget, i.e. doubled)")
    sw.add_argument("--plan-n-h", type=int,
                    help="plan: total labels n_H to allocate over S/M/V (default n_S + largest n_M + n_V)")
    sw.add_argument("--plan-check", action="store_true",
                    help="plan: also run the fixed-n_H allocation check at n_H (four more sweeps) and "
                         "compare its measured ratios with the plan's")
    sw.add_argument("--json", action="store_true")
    sw.add_argument("--quiet", action="store_true")

    from ..synthetic import PARAMETER_HELP as SYNTH_PARAMETERS
    sy = sub.add_parser("synth", help="write a controlled-regime panel as a wide CSV",
                        description="Write a controlled-regime panel as a wide CSV. " + SYNTH_PARAMETERS)
    sy.add_argument("--regime", required=True, choices=["additive", "mixed", "parity", "xor", "and", "strength"])
    sy.add_argument("--from", dest="from_panel",
                    help="semi-real: resample this real panel's joint output patterns and attach the regime's target")
    sy.add_argument("--use-judges", nargs="+", metavar="JUDGE",
                    help="with --from: resample only these judges of the real panel (default: all)")
    sy.add_argument("--rows", type=int, default=2000)
    sy.add_argument("--judges", type=int, default=7)
    sy.add_argument("--seed", type=int, default=0)
    sy.add_argument("--gamma", type=float, default=0.5, help="interaction strength (regime strength)")
    sy.add_argument("--parity-order", type=int, default=6,
                    help="interaction order of the parity regime: p = 1/2 + a s_1...s_order (default 6)")
    sy.add_argument("--amplitude", type=float,
                    help="interaction amplitude a, 0..0.5 (default by regime: parity/mixed/strength 0.45, "
                         "xor 0.36, and 0.39)")
    sy.add_argument("--judge-noise", type=float, default=0.0,
                    help="probability that a judge's shown verdict is flipped from the latent one the target "
                         "uses, 0..0.5 (default 0)")
    sy.add_argument("--tie-rate", type=float, default=0.0)
    sy.add_argument("--group-size", type=int, default=1)
    sy.add_argument("--out", required=True)
    sy.add_argument("--force", action="store_true", help="replace an existing --out file")

    rp = sub.add_parser("report", help="regenerate every reproducible table and figure of the paper: one "
                                       "section per paper label (markdown) and interactive figures in a "
                                       "figures/ folder beside it")
    rp.add_argument("--out", default="docs/reproduction.md",
                    help="the markdown report (default docs/reproduction.md); figures go to figures/ beside it")
    rp.add_argument("--force", action="store_true", help="replace an existing --out file and the report's own "
                                                         "figure files (no other file is touched)")
    rp.add_argument("--splits", type=int, default=30)
    rp.add_argument("--seed", type=int, default=0)
    rp.add_argument("--workers", type=int, default=2, help="parallel processes (at most the usable cores)")
    rp.add_argument("--quick", action="store_true", help="small panels and budgets (a smoke run)")

    sc = sub.add_parser("score", help="apply a saved predictor to a panel")
    sc.add_argument("model", help="predictor JSON written by select --save-model, or run:N "
                                  "(the predictor of a stored selection)")
    add_panel_arguments(sc)
    sc.add_argument("--out", help="write item_id,prediction,N_z,in_support,missing_judges CSV here "
                                  "(default stdout)")
    sc.add_argument("--force", action="store_true", help="replace an existing --out file")
    sc.add_argument("--store", help="store file for run:N and stored panels (default: $FCPS_STORE, "
                                    "else data/fcps.duckdb)")
    sc.add_argument("--quiet", action="store_true", help="no summary line on stderr")
    sc.set_defaults(require_labels=False, handler=cmd_score)

    from ..deploy.audit import DEFAULT_THRESHOLDS
    au = sub.add_parser("audit", help="audit unlabelled traffic against a predictor's calibration support")
    au.add_argument("model", help="predictor JSON written by select --save-model, or run:N")
    add_panel_arguments(au)
    au.add_argument("--json", action="store_true", help="print the audit as JSON on stdout")
    au.add_argument("--out", help="also write the predictions with per-row support (CSV) here")
    au.add_argument("--force", action="store_true", help="replace an existing --out file")
    au.add_argument("--seed", type=int, default=0, help="seed of the drift tests' no-drift draws")
    au.add_argument("--strict", action="store_true", help="exit with status 3 when the audit refuses")
    au.add_argument("--quiet", action="store_true")
    th = au.add_argument_group("status thresholds (shares of traffic rows; TV distance)")
    for key, value in DEFAULT_THRESHOLDS.items():
        th.add_argument("--" + key.replace("_", "-"), dest=key, type=float, help=f"default {value:g}")
    g = au.add_argument_group("store")
    g.add_argument("--store", help="store file (default: $FCPS_STORE, else data/fcps.duckdb)")
    # dest save_audit: the traffic file itself is never stored as a panel (select --save does)
    g.add_argument("--save", dest="save_audit", action="store_true",
                   help="store the audit as a run of kind audit, on the predictor's calibration panel")
    g.add_argument("--panel-name", help="the stored panel to file the audit under (default: the "
                                        "predictor's calibration panel)")
    au.set_defaults(require_labels=False, handler=cmd_audit)
    s.set_defaults(handler=cmd_select)
    sw.set_defaults(handler=cmd_sweep)
    sy.set_defaults(handler=cmd_synth)
    rp.set_defaults(handler=cmd_report)

    # store: import/panels/show/delete/export/runs/seed, and select/sweep --save
    add_save_arguments(s)
    add_save_arguments(sw)
    add_store_commands(sub)
    add_plan_commands(sub)
    add_check_commands(sub)
    return parser


#: optional packages -> the pyproject extra that installs them
OPTIONAL_EXTRAS = {"plotly": "app", "streamlit": "app", "dask": "dask", "distributed": "dask"}
OPTIONAL_HINTS = {"app": " (or, for an HTML export, --no-figures)"}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Everything it prints, on stdout and stderr, usage errors included,
    passes through the one terminal sanitiser (render.TerminalGuard)."""
    with guarded_output():
        return _run(argv)


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    ctx = RunContext()
    try:
        check_numbers(args)
        return args.handler(args, ctx)
    except FCPSError as exc:
        record_failure(args, ctx, exc)      # store: select/sweep --save keeps a failed run
        sys.stderr.write(error_line(exc))
        return 2
    except BrokenPipeError:
        return 0
    except ModuleNotFoundError as exc:      # an optional extra (figures, dashboard, Dask) not installed
        package = (exc.name or "").split(".")[0]
        if package not in OPTIONAL_EXTRAS:
            return _internal_error(exc)
        extra = OPTIONAL_EXTRAS[package]
        sys.stderr.write(f"fcps: error: this needs the optional package {package!r}: "
                         f"pip install 'fcps[{extra}]'{OPTIONAL_HINTS.get(extra, '')}\n")
        return 2
    except OSError as exc:      # an unwritable --out, a missing directory, a full disk
        where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
        sys.stderr.write(f"fcps: error: cannot use{where}: {exc.strerror or exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("fcps: interrupted\n")
        return 130
    except Exception as exc:    # a bug: still one line for the user, with what to report
        return _internal_error(exc)


def _internal_error(exc: BaseException) -> int:
    first = (str(exc).splitlines() or [""])[0][:200]
    sys.stderr.write(f"fcps: internal error ({type(exc).__name__}: {first}); please report it with "
                     "the command line that caused it\n")
    return 1
