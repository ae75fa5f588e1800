"""Command line: ``python -m fcps_core {select,sweep,synth,report,score} ...`` and the store
commands of :mod:`fcps_core.cli_store` (import, panels, show, delete, export, runs, seed).

JSON goes to stdout (``--json``), logs and progress to stderr. Bad input exits with
status 2 and one line naming the row/column and what to do.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Sequence

from . import __version__
from .cli_store import record_failure, save_result
from .errors import FCPSError
from .families import FAMILIES
from .paths import PATH_RULES
from .selection import (CHOICES, DEFAULT_BOOTSTRAP, DEFAULT_CHOICE, DEFAULT_FOLDS, DEFAULT_PROTOCOL,
                        DEFAULT_REPEATS, ESTIMATES, PROTOCOLS)


def _names(values: Sequence[str] | None) -> list[str] | None:
    """Accept ``--families a b`` and ``--families a,b``."""
    if values is None:
        return None
    out = []
    for v in values:
        out += [x.strip() for x in v.split(",") if x.strip()]
    return out


def _range(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    try:
        lo, hi = (float(x) for x in text.split(","))
    except ValueError:
        raise FCPSError(f"range {text!r} must be LO,HI (e.g. 1,5)") from None
    return lo, hi


def add_panel_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("panel file")
    g.add_argument("panel", help="panel file (wide or long CSV/TSV/Parquet/JSONL, optionally .gz) or a stored panel name")
    g.add_argument("--layout", choices=["auto", "wide", "long"], default="auto")
    g.add_argument("--item-column", default="item_id")
    g.add_argument("--group-column", default="group_id")
    g.add_argument("--label-column", default="label")
    g.add_argument("--block-column", default="block",
                   help="column with S/M/V/T to use the user's own blocks exactly (default: 'block' when present)")
    g.add_argument("--judge-column", default="judge", help="long layout: the judge column")
    g.add_argument("--output-column", default="output", help="long layout: the output column")
    g.add_argument("--labels", dest="labels_path", help="long layout: separate labels file (item id, label)")
    g.add_argument("--judges", nargs="+", help="judge columns to use (default: all other columns)")
    g.add_argument("--schema", choices=["pairwise", "binary", "rubric", "continuous", "categorical"],
                   help="override the detected output schema for every judge")
    g.add_argument("--label-range", help="LO,HI of integer rubric labels (normalised to [0,1])")
    g.add_argument("--judge-range", help="LO,HI of rubric judge scores (default: observed range)")
    g.add_argument("--collapse-ties", action="store_true",
                   help="merge tie and parse_error into one neutral cell value")


def load_panel_from_args(args):
    # store: a stored panel name works wherever a panel file does (cli_store.py)
    from .cli_store import load_stored_panel, remember_file_panel
    stored = load_stored_panel(args)
    if stored is not None:
        return stored.collapse_neutral() if args.collapse_ties else stored
    # Files are read by the DuckDB importer (CSV/TSV/Parquet/JSONL, .gz), the same reader as
    # `import`; fcps_core.io.read_panel stays the row-by-row reference it is tested against.
    from .ingest import load_panel as read_panel
    panel = read_panel(args.panel, layout=args.layout, judges=args.judges,
                       item_column=args.item_column, group_column=args.group_column,
                       label_column=args.label_column, block_column=args.block_column,
                       judge_column=args.judge_column, output_column=args.output_column,
                       labels_path=args.labels_path, schema=args.schema,
                       label_range=_range(args.label_range), judge_range=_range(args.judge_range),
                       require_labels=getattr(args, "require_labels", True))
    remember_file_panel(args, panel)        # store: --save stores a panel file first
    return panel.collapse_neutral() if args.collapse_ties else panel


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one ``fcps: error:`` line (exit 2), like every other bad input."""

    def error(self, message: str):
        self.exit(2, f"fcps: error: {message} (see python -m fcps_core {self._subcommand()}--help)\n")

    def _subcommand(self) -> str:
        name = self.prog.split("fcps_core", 1)[-1].strip()
        return f"{name} " if name else ""


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m fcps_core",
                                     description="Finite-Calibration Panel Selection")
    parser.add_argument("--version", action="version", version=f"fcps {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    s = sub.add_parser("select", help="select a judge panel and aggregator")
    add_panel_arguments(s)
    g = s.add_argument_group("blocks")
    g.add_argument("--split", help="S:M:V or S:M:V:T ratio (default 1:2:1)")
    g.add_argument("--test-share", type=float, default=0.0, help="share of labelled rows for T")
    g.add_argument("--n-select", type=int)
    g.add_argument("--n-cal", type=int)
    g.add_argument("--n-val", type=int)
    g.add_argument("--n-test", type=int, default=0)
    g.add_argument("--seed", type=int, default=0)
    m = s.add_argument_group("menu")
    m.add_argument("--families", nargs="+", help=f"families (default all): {', '.join(FAMILIES)}")
    m.add_argument("--paths", nargs="+",
                   help=f"path rules (default info_first complexity_penalized random): {', '.join(PATH_RULES)}")
    m.add_argument("--k-max", type=int, help="largest prefix size (default: whole pool; tables 8)")
    m.add_argument("--table-k-max", type=int, default=8)
    m.add_argument("--pairwise-k-max", type=int, default=12)
    m.add_argument("--alpha", type=float, default=0.5, help="table smoothing (Eq. smooth-estimator)")
    m.add_argument("--fallback", choices=["global", "lower_prefix"], default="global")
    m.add_argument("--n-bins", type=int, default=5, help="quantile bins for continuous judges")
    m.add_argument("--objective", choices=["mse", "nll"], default="mse")
    pr = s.add_argument_group("protocol and choice")
    pr.add_argument("--protocol", choices=list(PROTOCOLS), default=DEFAULT_PROTOCOL,
                    help="crossfit: repeated grouped K-fold over every labelled row outside T "
                         "(default); split: the paper's S/M/V blocks")
    pr.add_argument("--folds", type=int, default=DEFAULT_FOLDS, help="crossfit folds (default 5)")
    pr.add_argument("--repeats", type=int, default=DEFAULT_REPEATS, help="crossfit repeats (default 2)")
    pr.add_argument("--choice", choices=list(CHOICES),
                    help=f"choice rule (default {DEFAULT_CHOICE}; argmin with --guard)")
    pr.add_argument("--max-members", type=int, default=10, help="tie_average: most members averaged")
    pr.add_argument("--estimate", choices=list(ESTIMATES), default="bbc",
                    help="deployed-risk estimate: bbc (bootstrap bias-corrected, default), nested, none")
    pr.add_argument("--n-boot", type=int, default=DEFAULT_BOOTSTRAP, help="bootstrap resamples (default 200)")
    m.add_argument("--guard", choices=["none", "one_se"], default="none")
    m.add_argument("--prior-family", help="guard's prior family (default by task type)")
    m.add_argument("--refit", choices=["frozen", "refit"], default="frozen")
    m.add_argument("--gain-threshold", type=float, default=0.001)
    m.add_argument("--pressure-threshold", type=float, default=0.1)
    o = s.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="print the JSON result on stdout")
    o.add_argument("--save-model", help="write the deployable predictor (JSON) here")
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
    sw.add_argument("--paths", nargs="+", help="path rules (default info_first complexity_penalized random)")
    sw.add_argument("--k-max", type=int)
    sw.add_argument("--alpha", type=float, default=0.5)
    sw.add_argument("--objective", choices=["mse", "nll"], default="mse")
    sw.add_argument("--seed", type=int, default=0)
    sw.add_argument("--workers", type=int, default=1, help="parallel splits (joblib)")
    sw.add_argument("--backend", default="loky",
                    help="joblib backend for --workers > 1: loky (local processes), threading, or dask "
                         "(needs a dask.distributed Client, e.g. DASK_SCHEDULER_ADDRESS)")
    sw.add_argument("--json", action="store_true")
    sw.add_argument("--quiet", action="store_true")

    sy = sub.add_parser("synth", help="write a controlled-regime panel as a wide CSV")
    sy.add_argument("--regime", required=True, choices=["additive", "mixed", "parity", "xor", "and", "strength"])
    sy.add_argument("--from", dest="from_panel",
                    help="semi-real: resample this real panel's joint output patterns and attach the regime's target")
    sy.add_argument("--rows", type=int, default=2000)
    sy.add_argument("--judges", type=int, default=7)
    sy.add_argument("--seed", type=int, default=0)
    sy.add_argument("--gamma", type=float, default=0.5, help="interaction strength (regime strength)")
    sy.add_argument("--parity-order", type=int, default=6)
    sy.add_argument("--tie-rate", type=float, default=0.0)
    sy.add_argument("--group-size", type=int, default=1)
    sy.add_argument("--out", required=True)

    rp = sub.add_parser("report", help="run the reproduction report (controlled regimes + real panels)")
    rp.add_argument("--out", default="docs/reproduction.md")
    rp.add_argument("--splits", type=int, default=30)
    rp.add_argument("--seed", type=int, default=0)
    rp.add_argument("--workers", type=int, default=2)
    rp.add_argument("--quick", action="store_true", help="small panels and budgets (a smoke run)")

    sc = sub.add_parser("score", help="apply a saved predictor to a panel")
    sc.add_argument("model", help="predictor JSON written by select --save-model")
    add_panel_arguments(sc)
    sc.add_argument("--out", help="write item_id,prediction CSV here (default stdout)")
    sc.set_defaults(require_labels=False)

    # store: import/panels/show/delete/export/runs/seed, and select/sweep --save (cli_store.py)
    from .cli_store import add_save_arguments, add_store_commands
    add_save_arguments(s)
    add_save_arguments(sw)
    add_store_commands(sub)
    return parser


def _counts(args) -> dict | None:
    given = [args.n_select, args.n_cal, args.n_val]
    if all(v is None for v in given):
        if args.n_test:
            raise FCPSError("--n-test needs --n-select, --n-cal and --n-val as well")
        return None
    if any(v is None for v in given):
        raise FCPSError("give all of --n-select, --n-cal and --n-val (or use --split)")
    if args.split:
        raise FCPSError("use either --split or the --n-* counts, not both")
    return {"n_S": args.n_select, "n_M": args.n_cal, "n_V": args.n_val, "n_T": args.n_test or 0}


def _check_numbers(args) -> None:
    """Reject impossible numeric flags with one line before any work starts."""
    import math as _m
    for flag, low in (("seed", 0), ("n_bins", 1), ("splits", 1), ("workers", 1), ("k_max", 1),
                      ("folds", 2), ("repeats", 1), ("n_boot", 10), ("max_members", 1),
                      ("table_k_max", 1), ("pairwise_k_max", 1), ("rows", 1), ("judges", 1)):
        v = getattr(args, flag, None)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v < low:
            raise FCPSError(f"--{flag.replace('_', '-')} must be at least {low} (got {v})")
    for flag in ("alpha", "gain_threshold", "pressure_threshold", "test_share", "gamma"):
        v = getattr(args, flag, None)
        if isinstance(v, float) and not _m.isfinite(v):
            raise FCPSError(f"--{flag.replace('_', '-')} must be a finite number (got {v})")


def cmd_select(args) -> int:
    from .selection import DEFAULT_PATHS, FCPSSelector, progress_to_stderr
    from .splits import make_blocks
    choice = args.choice or ("argmin" if args.guard != "none" else DEFAULT_CHOICE)
    panel = load_panel_from_args(args)
    counts = _counts(args)
    blocks = make_blocks(panel, split=args.split, test_share=args.test_share, counts=counts,
                         seed=args.seed)
    if blocks.source == "column":
        _log(args, f"using the {args.block_column!r} column's blocks exactly")
    selector = FCPSSelector(
        paths=_names(args.paths) or DEFAULT_PATHS, families=_names(args.families) or FAMILIES,
        k_max=args.k_max, table_k_max=args.table_k_max, pairwise_k_max=args.pairwise_k_max,
        alpha=args.alpha, fallback=args.fallback, objective=args.objective,
        guard=None if args.guard == "none" else args.guard, prior_family=args.prior_family,
        refit=args.refit, n_bins=args.n_bins, seed=args.seed,
        gain_threshold=args.gain_threshold, pressure_threshold=args.pressure_threshold,
        protocol=args.protocol, choice=choice, folds=args.folds, repeats=args.repeats,
        estimate=args.estimate, n_boot=args.n_boot, max_members=args.max_members,
        progress=None if args.quiet else progress_to_stderr)
    result = selector.fit(panel, blocks)
    save_result(args, "select", result)     # store: --save
    if args.save_model:
        result.predictor().save(args.save_model)
        _log(args, f"predictor written to {args.save_model}")
    if args.json:
        json.dump(_jsonable(result.to_dict()), sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_result(result, top=args.top))
    return 0


def cmd_sweep(args) -> int:
    from .experiments import calibration_growth
    from .selection import DEFAULT_PATHS, progress_to_stderr
    panel = load_panel_from_args(args)
    try:
        budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
    except ValueError:
        raise FCPSError(f"--budgets {args.budgets!r} must be comma-separated integers (e.g. 50,100,200)") from None
    result = calibration_growth(
        panel, budgets, n_select=args.n_select, n_val=args.n_val, n_test=args.n_test,
        splits=args.splits, seed=args.seed, families=_names(args.menu),
        paths=_names(args.paths) or DEFAULT_PATHS, workers=args.workers, backend=_backend(args.backend),
        k_max=args.k_max,
        alpha=args.alpha, objective=args.objective,
        progress=None if args.quiet else progress_to_stderr)
    save_result(args, "sweep", result)      # store: --save
    if args.json:
        json.dump(_jsonable({k: v for k, v in result.to_dict().items() if k != "records"}),
                  sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
    else:
        rows = [[c["n_M"], c.get("table_test_mse"), c.get("scalar_test_mse"), c.get("delta"),
                 f"[{_fmt(c.get('ci_low'))}, {_fmt(c.get('ci_high'))}]", c.get("table_K_mean"),
                 c.get("unseen_mean"), c.get("V_cell_mean")] for c in result.cells]
        sys.stdout.write(f"calibration growth on {result.panel}: {args.splits} grouped splits, "
                         f"S={args.n_select} V={args.n_val} T={args.n_test}\n")
        sys.stdout.write(render_table(rows, ["n_M", "table", "scalar", "delta", "95% CI", "table K",
                                             "unseen", "V_cell"]))
        sys.stdout.write("delta = table minus scalar test MSE (positive favours scalar)\n")
    return 0


def _backend(name: str) -> str:
    """Validate the joblib backend; for dask, connect a Client (it registers the backend)."""
    if name in ("loky", "threading", "multiprocessing"):
        return name
    if name == "dask":
        import os
        try:
            from dask.distributed import Client
        except ImportError:
            raise FCPSError("--backend dask needs dask[distributed] installed") from None
        address = os.environ.get("DASK_SCHEDULER_ADDRESS")
        Client(address) if address else Client(processes=False)
        return "dask"
    raise FCPSError(f"unknown --backend {name!r}; use loky, threading, multiprocessing or dask")


def cmd_synth(args) -> int:
    from .synthetic import make_regime, to_wide_csv
    if args.rows < 1 or args.judges < 1:
        raise FCPSError("--rows and --judges must be positive")
    if args.from_panel:
        from .ingest import load_panel as read_panel
        from .synthetic import semi_real
        source = read_panel(args.from_panel, require_labels=False)
        panel = semi_real(source, args.regime, rows=args.rows, seed=args.seed, gamma=args.gamma,
                          parity_order=args.parity_order)
    else:
        panel = make_regime(args.regime, rows=args.rows, judges=args.judges, seed=args.seed,
                            gamma=args.gamma, parity_order=args.parity_order, tie_rate=args.tie_rate,
                            group_size=args.group_size)
    to_wide_csv(panel, args.out)
    sys.stderr.write(f"wrote {panel.n_rows} rows x {len(panel.judges)} judges ({args.regime}) to {args.out}\n")
    return 0


def cmd_report(args) -> int:
    from .report import write_report
    command = f"python -m fcps_core report --out {args.out} --splits {args.splits} --seed {args.seed}" \
        + (" --quick" if args.quick else "")
    write_report(args.out, splits=args.splits, seed=args.seed, workers=args.workers, quick=args.quick,
                 command=command, progress=lambda m: sys.stderr.write(m + "\n"))
    sys.stderr.write(f"report written to {args.out}\n")
    return 0


def cmd_score(args) -> int:
    import csv
    from .predictor import FCPSPredictor
    predictor = FCPSPredictor.load(args.model)
    if args.schema is None:
        # Read each judge as the predictor saw it (a new file may look continuous where the
        # calibration panel was a rubric, etc.).
        args.schema = predictor.judge_schemas()
    panel = load_panel_from_args(args)
    pred = predictor.predict(panel)
    fh = open(args.out, "w", newline="", encoding="utf-8") if args.out else sys.stdout
    try:
        w = csv.writer(fh)
        w.writerow(["item_id", "prediction"])
        for item, p in zip(panel.item_ids, pred):
            w.writerow([item, f"{p:.6f}"])
    finally:
        if args.out:
            fh.close()
    return 0


def _jsonable(obj):
    """Replace NaN/inf with null so stdout is strict JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "item"):
        return _jsonable(obj.item())
    return obj


def _fmt(v, digits=4):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def render_table(rows: list[list], header: list[str]) -> str:
    cells = [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in cells]
    return "\n".join(out) + "\n"


def render_result(result, *, top: int = 15) -> str:
    d = result.to_dict(cells_limit=12)
    sel = d["selected"]
    sp = d["split"]
    if d["protocol"] == "crossfit":
        blocks = (f"cross-fitted: {sp['folds']} grouped folds x {sp['repeats']} repeats over "
                  f"{sp['n_deployable']} deployable rows; T={sp['n_T']}  seed={sp['seed']}")
        risk_word = "cross-fitted"
    else:
        blocks = (f"blocks ({sp['source']}): S={sp['n_S']} M={sp['n_M']} V={sp['n_V']} "
                  f"T={sp['n_T']}  seed={sp['seed']}")
        risk_word = "validation"
    lines = [
        f"panel {d['panel']['name']}: {d['panel']['rows']} rows, {d['panel']['labelled']} labelled, "
        f"{len(d['panel']['judges'])} judges, schema {d['panel']['schema']}",
        blocks,
        f"menu: {d['menu_size']} fitted candidates ({d['n_candidates']} path x K x family rows); "
        f"validation scale sqrt(log|C|/n_V) = {d['validation_scale']:.4f}; "
        f"Theorem 1 bound (delta=0.05) = {d['theorem1_bound']:.4f}; choice rule {d['choice']}",
        "",
    ]
    if sel["family"] == "tie_average":
        lines.append(f"SELECTED  tie_average of {len(sel['members'])} tied candidates over {sel['K']} judges  "
                     f"{risk_word}_mse={_fmt(sel['val_mse'])}  test_mse={_fmt(sel['test_mse'])}")
        for m in sel["members"]:
            lines.append(f"  member {m['family']} K={m['K']} path={m['path']} {risk_word}_risk={_fmt(m['val_risk'])}")
    else:
        lines.append(f"SELECTED  {sel['family']}  K={sel['K']}  path={sel['path']}  "
                     f"{risk_word}_mse={_fmt(sel['val_mse'])}  test_mse={_fmt(sel['test_mse'])}")
        lines.append("  judges: " + ", ".join(sel["judges"]))
    dr = d.get("deployed_risk")
    if dr:
        lines.append(f"  deployed risk ({dr['method']}, {dr['objective']}): {_fmt(dr['estimate'])} "
                     f"[95% {_fmt(dr['ci'][0])}, {_fmt(dr['ci'][1])}]"
                     + (f"; the winner's own {risk_word} risk {_fmt(dr['optimistic'])} is optimistic"
                        if dr.get("optimistic") is not None else ""))
    tie = d.get("tie") or {}
    if tie.get("tied"):
        alts = "; ".join(f"{a['family']} K={a['K']} ({a['path']}) {_fmt(a['risk'])}"
                         for a in tie.get("alternatives", [])[:3])
        lines.append(f"  statistical tie: {tie['n_tied']} other candidate(s) within one paired SE"
                     + (f", e.g. {alts}" if alts else ""))
    if d["guard"]:
        g = d["guard"]
        lines.append(f"  guard one_se toward {g['prior_family']}: "
                     + ("adapted away from the prior" if g.get("adapted") else "kept the prior"))
    if d.get("baselines"):
        lines += ["", "baselines on the same held-out rows (diff = baseline - selection; > 0: selection better):"]
        lines.append(render_table([[b["label"], b["risk"], b["diff_vs_selected"],
                                    None if b["ci"] is None else f"[{_fmt(b['ci'][0])}, {_fmt(b['ci'][1])}]"]
                                   for b in d["baselines"]], ["baseline", "risk", "diff", "95% CI"]))
    rg = d["regime"]
    lines += ["", f"REGIME  {rg.get('quadrant') or 'n/a'}: interaction gain {_fmt(rg.get('interaction_gain'))}"
              + (f" (SE {_fmt(rg.get('interaction_gain_se'))})" if rg.get("interaction_gain_se") is not None else "")
              + f", table pressure {_fmt(rg.get('table_pressure'))}", f"  {rg.get('advice', '')}", ""]
    cands = sorted(d["candidates"], key=lambda c: (c["val_risk"], c["K"]))[:top]
    rows = [[c["family"], c["path"], c["K"], c["val_mse"], c["val_nll"], c["test_mse"], c["H_K"],
             c["unseen_val"], c["V_cell"], c["V_proxy"]] for c in cands]
    lines.append(f"top {len(rows)} candidates by {risk_word} {result.selector.objective}:")
    lines.append(render_table(rows, ["family", "path", "K", f"{risk_word[:5]}_mse", f"{risk_word[:5]}_nll",
                                     "test_mse", "H_K", "unseen", "V_cell", "V_proxy"]))
    if d["cells"]:
        lines.append("cells of the selected prefix (N_z = calibration count):")
        lines.append(render_table([[c["pattern"], c["N_z"], c["mean_label"], c["prediction"], c["freq_val"],
                                    c["freq_test"]] for c in d["cells"]],
                                  ["pattern", "N_z", "mean_y", "pred", "freq_V", "freq_T"]))
    return "\n".join(lines) + "\n"


def _log(args, msg: str) -> None:
    if not getattr(args, "quiet", False):
        sys.stderr.write(msg + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _check_numbers(args)
        if args.command == "select":
            return cmd_select(args)
        if args.command == "score":
            return cmd_score(args)
        if args.command == "sweep":
            return cmd_sweep(args)
        if args.command == "synth":
            return cmd_synth(args)
        if args.command == "report":
            return cmd_report(args)
        if hasattr(args, "handler"):        # store commands (cli_store.py)
            return args.handler(args)
    except FCPSError as exc:
        record_failure(args, exc)           # store: select/sweep --save keeps a failed run
        sys.stderr.write(f"fcps: error: {exc}\n")
        return 2
    except BrokenPipeError:
        return 0
    except OSError as exc:      # an unwritable --out, a missing directory, a full disk
        where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
        sys.stderr.write(f"fcps: error: cannot use{where}: {exc.strerror or exc}\n")
        return 2
    parser.error(f"unknown command {args.command}")
    return 2
