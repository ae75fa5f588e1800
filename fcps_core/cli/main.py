"""``python -m fcps_core``: the parser and the one dispatch every command goes through."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from ..version import __version__
from .. import defaults as D
from ..errors import FCPSError
from ..service.process import Terminated
from ..service.select import FAMILIES, PATH_RULES
from ..defaults import (CHOICES, DEFAULT_BOOTSTRAP, DEFAULT_CHOICE, DEFAULT_FOLDS, DEFAULT_PROTOCOL,
                        DEFAULT_REPEATS, ESTIMATES, PROTOCOLS)
from .args import (OneLineParser, add_block_arguments, add_panel_arguments, check_numbers, joined_range_values,
                   program_name)
from .context import RunContext
from .render import clear_aliases, error_fields, error_json, error_line, guarded_output
from .deploy_commands import cmd_audit, cmd_score
from .engine_commands import cmd_report, cmd_select, cmd_sweep, cmd_synth
from .check_commands import add_check_commands
from .label_commands import add_label_commands
from .plan_commands import add_plan_commands
from .store_commands import add_store_commands
from .stdin import read_stdin_arguments, remove_copies
from .store_hooks import add_save_arguments, record_failure


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=program_name(),
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
    m.add_argument("--table-k-max", type=int, default=D.DEFAULT_TABLE_K_MAX,
                   help="largest prefix of the joint table (its cells grow as 3^K)")
    m.add_argument("--pairwise-k-max", type=int, default=D.DEFAULT_PAIRWISE_K_MAX,
                   help="largest prefix of the pairwise-interaction families")
    m.add_argument("--alpha", type=float, default=D.DEFAULT_ALPHA, help="table smoothing (Eq. smooth-estimator)")
    m.add_argument("--fallback", choices=["global", "lower_prefix"], default=D.DEFAULT_FALLBACK,
                   help="what a table predicts for an unseen pattern: the global mean or the shorter "
                        "prefix's cell")
    m.add_argument("--n-bins", type=int, default=D.DEFAULT_N_BINS, help="quantile bins for continuous judges")
    m.add_argument("--objective", choices=["mse", "nll"], default=D.DEFAULT_OBJECTIVE,
                   help="the held-out risk candidates are compared on")
    pr = s.add_argument_group("protocol and choice")
    pr.add_argument("--protocol", choices=list(PROTOCOLS), default=DEFAULT_PROTOCOL,
                    help="crossfit: repeated grouped K-fold over every labelled row outside T; "
                         "split: the paper's S/M/V blocks")
    pr.add_argument("--folds", type=int, default=DEFAULT_FOLDS, help="crossfit folds")
    pr.add_argument("--repeats", type=int, default=DEFAULT_REPEATS, help="crossfit repeats")
    pr.add_argument("--screen-se", metavar="Z|off",
                    help="crossfit: after the first repeat, the later repeats do not refit a candidate behind the "
                         "best one calling a subset of its judges (and the best of its side of the regime verdict) "
                         "by more than Z times the sum of its clustered SE and the largest among the candidates "
                         "ahead (it keeps its first repeat's risk); 'off' refits every candidate in every repeat "
                         "(default 2)")
    pr.add_argument("--choice", choices=list(CHOICES),
                    help=f"choice rule (default {DEFAULT_CHOICE}; argmin with --guard)")
    pr.add_argument("--max-members", type=int, default=D.DEFAULT_MAX_MEMBERS, help="the most models an average of tied candidates holds")
    pr.add_argument("--judge-costs", help="CSV judge,cost[,latency]: every candidate gets its cost (sum) and "
                                          "latency (max), the report its risk-cost Pareto front; needed by "
                                          "--choice cheapest_tied (default: the costs stored with a stored panel; "
                                          "--save stores them with it)")
    pr.add_argument("--max-judges", type=int, help="deploy at most this many judges: the choice over all "
                                                   "judges if it calls at most K, else the first K judges in the "
                                                   "order of their own risk, combined as the choice rule picks, "
                                                   "unless a set of at most K judges scores lower on the held-out "
                                                   "rows by more than 3.29 paired SEs (then the best within K) "
                                                   "(the JSON's frontier shows every K)")
    pr.add_argument("--budget", type=float, help="deploy judges costing at most this much per item (the sum of "
                                                 "their costs): the choice over all judges if it fits, else the "
                                                 "longest run of the judges, in the order of their own risk, "
                                                 "within it, unless a predictor within it scores lower on the "
                                                 "held-out rows by more than 3.29 paired SEs (the best predictor "
                                                 "within it also when even the first costs more); needs "
                                                 "--judge-costs or costs stored with the panel")
    pr.add_argument("--estimate", choices=list(ESTIMATES), default="bbc",
                    help="deployed-risk estimate: bbc (bootstrap bias-corrected), nested, none")
    pr.add_argument("--n-boot", type=int, default=DEFAULT_BOOTSTRAP, help="bootstrap resamples")
    m.add_argument("--guard", choices=["none", "one_se"], default="none",
                   help="one_se: keep the prior family unless another beats it by one paired SE")
    m.add_argument("--prior-family", help="guard's prior family (default by task type)")
    m.add_argument("--refit", choices=["frozen", "refit"], default="frozen",
                   help="frozen: deploy the model fitted on M; refit: refit the chosen configuration on M+V")
    m.add_argument("--gain-threshold", type=float, default=D.DEFAULT_GAIN_THRESHOLD,
                   help="regime verdict: interaction gain above which interactions count")
    m.add_argument("--pressure-threshold", type=float, default=D.DEFAULT_PRESSURE_THRESHOLD,
                   help="regime verdict: table pressure above which the table is starved")
    o = s.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="print the JSON result on stdout")
    o.add_argument("--save-model", help="write the deployable predictor (JSON) here")
    o.add_argument("--force", action="store_true", help="replace an existing --save-model file")
    o.add_argument("--top", type=int, default=15, help="candidates shown in the table")
    o.add_argument("--quiet", action="store_true", help="no progress on stderr")

    sw = sub.add_parser("sweep", help="calibration-growth sweep over n_M budgets")
    add_panel_arguments(sw)
    sw.add_argument("--budgets", default="50,100,200,400,800", help="comma-separated n_M values")
    sw.add_argument("--splits", type=int, default=30, help="grouped random splits")
    sw.add_argument("--n-select", type=int, required=True, help="n_S, rows of the selection block (fixed)")
    sw.add_argument("--n-val", type=int, required=True, help="n_V, rows of the validation block (fixed)")
    sw.add_argument("--n-test", type=int, required=True, help="n_T, rows of the test block (fixed)")
    sw.add_argument("--menu", nargs="+", help="families to fit (default: the full menu)")
    sw.add_argument("--menus", choices=["default", "paper", "growth"], default="default",
                    help="the decisions compared: default (table, scalar, table_like, full over every path), "
                         "paper (the paper's 21-candidate table menu and 42-candidate scalar menu, K <= 7) or "
                         "growth (the paper's controlled calibration-growth menus: joint table against additive "
                         "and pairwise ridge, three paths, K <= 7) (default: %(default)s)")
    sw.add_argument("--fallback", choices=["global", "lower_prefix"], default=D.DEFAULT_FALLBACK,
                    help="what a table predicts for an unseen pattern")
    sw.add_argument("--paths", nargs="+", help="path rules (default info_first complexity_penalized random)")
    sw.add_argument("--k-max", type=int, help="largest prefix size (default: whole pool; 7 with --menus "
                                               "paper or growth)")
    sw.add_argument("--alpha", type=float, default=D.DEFAULT_ALPHA, help="table smoothing (Eq. smooth-estimator)")
    sw.add_argument("--objective", choices=["mse", "nll"], default=D.DEFAULT_OBJECTIVE,
                    help="the validation risk each split selects on")
    sw.add_argument("--seed", type=int, default=0, help="seed of the splits and random paths")
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
    sw.add_argument("--json", action="store_true", help="print the sweep (without per-split records) as "
                                                         "JSON on stdout; errors as JSON")
    sw.add_argument("--quiet", action="store_true", help="no progress on stderr")

    from ..service.paper import synth_parameter_help
    SYNTH_PARAMETERS = synth_parameter_help()
    sy = sub.add_parser("synth", help="write a controlled-regime panel as a wide CSV",
                        description="Write a controlled-regime panel as a wide CSV. " + SYNTH_PARAMETERS)
    sy.add_argument("--regime", required=True, choices=["additive", "mixed", "parity", "xor", "and", "strength"],
                    help="how the label depends on the judges' latent verdicts")
    sy.add_argument("--from", dest="from_panel",
                    help="semi-real: resample this real panel's joint output patterns and attach the regime's "
                         "target ('-' for standard input)")
    sy.add_argument("--use-judges", nargs="+", metavar="JUDGE",
                    help="with --from: resample only these judges of the real panel (default: all)")
    sy.add_argument("--rows", type=int, default=2000, help="rows (items) to write")
    sy.add_argument("--judges", type=int, default=7, help="judges (ignored with --from)")
    sy.add_argument("--seed", type=int, default=0, help="random seed")
    sy.add_argument("--gamma", type=float, default=0.5, help="interaction strength (regime strength)")
    sy.add_argument("--parity-order", type=int, default=6,
                    help="interaction order of the parity regime: p = 1/2 + a s_1...s_order (default: %(default)s)")
    sy.add_argument("--amplitude", type=float,
                    help="interaction amplitude a, 0..0.5 (default by regime: parity/mixed/strength 0.45, "
                         "xor 0.36, and 0.39)")
    sy.add_argument("--judge-noise", type=float, default=0.0,
                    help="probability that a judge's shown verdict is flipped from the latent one the target "
                         "uses, 0..0.5 (default 0)")
    sy.add_argument("--tie-rate", type=float, default=0.0, help="share of judge outputs that are ties")
    sy.add_argument("--group-size", type=int, default=1, help="items per group (rows of a group share a group_id)")
    sy.add_argument("--out", required=True, help="the panel file; its format from the extension (.csv, "
                                                 ".parquet, .jsonl) or --format")
    sy.add_argument("--format", dest="out_format", choices=["csv", "parquet", "jsonl"],
                    help="format of --out (default: from its extension, else csv)")
    sy.add_argument("--force", action="store_true", help="replace an existing --out file")
    sy.add_argument("--json", action="store_true", help="print what was written as JSON on stdout; errors as JSON")

    rp = sub.add_parser("report", help="regenerate every reproducible table and figure of the paper: one "
                                       "section per paper label (markdown) and interactive figures in a "
                                       "figures/ folder beside it")
    rp.add_argument("--out", default="docs/reproduction.md",
                    help="the markdown report; figures go to figures/ beside it")
    rp.add_argument("--force", action="store_true", help="replace an existing --out file and the report's own "
                                                         "figure files (no other file is touched)")
    rp.add_argument("--splits", type=int, default=30, help="grouped splits of every sweep")
    rp.add_argument("--seed", type=int, default=0, help="random seed")
    rp.add_argument("--workers", type=int, default=2, help="parallel processes (at most the usable cores)")
    rp.add_argument("--quick", action="store_true", help="small panels and budgets (a smoke run)")
    rp.add_argument("--json", action="store_true", help="print what was written as JSON on stdout; errors as JSON")

    sc = sub.add_parser("score", help="apply a saved predictor to a panel")
    sc.add_argument("model", help="predictor JSON written by select --save-model, or run:N "
                                  "(the predictor of a stored selection)")
    add_panel_arguments(sc)
    sc.add_argument("--out", help="write item_id,prediction,N_z,in_support,missing_judges here (default "
                                  "stdout); the format from the extension (.csv, .parquet, .jsonl) or --format")
    sc.add_argument("--format", dest="out_format", choices=["csv", "parquet", "jsonl"],
                    help="format of the predictions (default: from the --out extension, else csv)")
    sc.add_argument("--json", action="store_true",
                    help="without --out: the predictions as JSON Lines on stdout; with --out: a JSON summary "
                         "on stdout; errors as JSON")
    sc.add_argument("--force", action="store_true", help="replace an existing --out file")
    sc.add_argument("--store", help="store file for run:N and stored panels (default: $FCPS_STORE, "
                                    "else data/fcps.duckdb)")
    sc.add_argument("--quiet", action="store_true", help="no summary line on stderr")
    sc.set_defaults(require_labels=False, handler=cmd_score)

    from ..service.deploy import DEFAULT_THRESHOLDS
    au = sub.add_parser("audit", help="audit unlabelled traffic against a predictor's calibration support")
    au.add_argument("model", help="predictor JSON written by select --save-model, or run:N")
    add_panel_arguments(au)
    au.add_argument("--json", action="store_true", help="print the audit as JSON on stdout")
    au.add_argument("--out", help="also write the predictions with per-row support here (.csv, .parquet or "
                                  ".jsonl, or --format)")
    au.add_argument("--format", dest="out_format", choices=["csv", "parquet", "jsonl"],
                    help="format of --out (default: from its extension, else csv)")
    au.add_argument("--force", action="store_true", help="replace an existing --out file")
    au.add_argument("--seed", type=int, default=0, help="seed of the drift tests' no-drift draws")
    au.add_argument("--strict", action="store_true", help="exit with status 3 when the audit refuses")
    au.add_argument("--quiet", action="store_true", help="no notes on stderr")
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
    add_label_commands(sub)
    return parser


#: optional packages -> the pyproject extra that installs them
OPTIONAL_EXTRAS = {"plotly": "app", "streamlit": "app", "dask": "dask", "distributed": "dask"}
OPTIONAL_HINTS = {"app": " (or, for an HTML export, --no-figures)"}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Everything it prints, on stdout and stderr, usage errors included,
    passes through the one terminal sanitiser (render.TerminalGuard). The process is the
    command's own, so its allocator keeps freed memory for reuse
    (:func:`fcps_core.service.process.prepare_own_process`)."""
    from ..service.process import prepare_own_process, stopping_on_termination
    prepare_own_process()
    with guarded_output(), stopping_on_termination():
        return _run(argv)


def _run(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in argv
    OneLineParser.json_errors = as_json        # usage errors as JSON too
    cleanup: list = []
    try:
        args = build_parser().parse_args(joined_range_values(argv))
        return _dispatch(args, as_json and bool(getattr(args, "json", False)), cleanup)
    finally:
        OneLineParser.json_errors = False
        remove_copies(cleanup)
        clear_aliases()


def _fail(as_json: bool, message: str, *, exit_code: int = 2, kind: str = "error", text: str | None = None,
          **fields) -> int:
    """Report a failure: the one ``fcps: error:`` line on stderr (``text`` when given), and
    under ``--json`` also the error as one line of JSON on stdout, where the result would
    have been (docs/json-contract.md, "Errors"); returns the exit status."""
    if as_json:
        sys.stdout.write(error_json(message, kind=kind, exit_code=exit_code, **fields))
        sys.stdout.flush()
    sys.stderr.write(text if text is not None else error_line(message))
    return exit_code


#: commands whose --out defaults to standard output: there ``--out -`` means it
STDOUT_OUTPUTS = frozenset({"score", "export", "label-next"})


def dash_outputs(args) -> None:
    """``--out -`` (and ``--save-model -``): standard output where the command's output goes
    there by default, else refused. Read as a file name, ``-`` made a file named ``-`` in
    the working directory, and the same command a second time failed with "it already
    exists", while ``-`` as an input means standard input."""
    if getattr(args, "out", None) == "-" and getattr(args, "command", None) in STDOUT_OUTPUTS:
        args.out = None
        return
    for attr, flag in (("out", "--out"), ("save_model", "--save-model")):
        if getattr(args, attr, None) == "-":
            raise FCPSError(f"{flag} '-': this output cannot go to standard output; give a file name "
                            "(./- for a file named '-')")


def _dispatch(args, as_json: bool, cleanup: list) -> int:
    ctx = RunContext()
    try:
        check_numbers(args)
        dash_outputs(args)
        read_stdin_arguments(args, cleanup)    # '-': a bounded temporary copy of standard input
        return args.handler(args, ctx)
    except FCPSError as exc:
        record_failure(args, ctx, exc)      # store: select/sweep --save keeps a failed run
        return _fail(as_json, str(exc), kind=type(exc).__name__, **error_fields(exc))
    except BrokenPipeError:
        return 0
    except ModuleNotFoundError as exc:      # an optional extra (figures, dashboard, Dask) not installed
        package = (exc.name or "").split(".")[0]
        if package not in OPTIONAL_EXTRAS:
            return _internal_error(exc, as_json)
        extra = OPTIONAL_EXTRAS[package]
        message = f"this needs the optional package {package!r}"
        hint = f"pip install 'fcps[{extra}]'{OPTIONAL_HINTS.get(extra, '')}"
        return _fail(as_json, message, kind="missing_package", hint=hint,
                     text=f"fcps: error: {message}: {hint}\n")
    except OSError as exc:      # an unwritable --out, a missing directory, a full disk
        where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
        message = f"cannot use{where}: {exc.strerror or exc}"
        return _fail(as_json, message, kind="OSError", **error_fields(exc))
    except KeyboardInterrupt:
        return _fail(as_json, "interrupted", exit_code=130, kind="interrupted", text="fcps: interrupted\n")
    except Terminated as exc:       # SIGTERM / SIGHUP, unwound as Ctrl-C is (service.process)
        message = f"terminated by {exc}"
        return _fail(as_json, message, exit_code=128 + exc.signum, kind="terminated", text=f"fcps: {message}\n")
    except Exception as exc:    # a bug: still one line for the user, with what to report
        return _internal_error(exc, as_json)


def _internal_error(exc: BaseException, as_json: bool = False) -> int:
    first = (str(exc).splitlines() or [""])[0][:200]
    message = f"internal error ({type(exc).__name__}: {first})"
    hint = "please report it with the command line that caused it"
    return _fail(as_json, message, exit_code=1, kind="internal", hint=hint,
                 text=f"fcps: {message}; {hint}\n")
