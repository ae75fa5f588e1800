"""The engine commands: select, sweep, synth, report (score and audit: deploy_commands)."""

from __future__ import annotations

import json
import os
import sys
import time

from ..errors import FCPSError
from ..families import FAMILIES
from ..defaults import DEFAULT_CHOICE
from .args import block_counts, capped_workers, parse_budgets, parse_names, parse_range
from .context import RunContext
from ..jsonutil import json_ready
from .render import fmt, log, one_line, render_result, render_table, warn
from .store_hooks import load_stored_panel, remember_file_panel, save_result


def load_panel_from_args(args, ctx: RunContext):
    # store: a stored panel name works wherever a panel file does (store_hooks.py)
    from ..ingest import import_warnings
    stored = load_stored_panel(args, ctx)
    if stored is not None:
        if getattr(args, "require_labels", True):
            stored.import_warnings = import_warnings(stored)
            for warning in stored.import_warnings:
                warn(f"fcps: warning: {warning}")
        return stored.collapse_neutral() if args.collapse_ties else stored
    # Files are read by the DuckDB importer (CSV/TSV/Parquet/JSONL, .gz), the same reader as
    # `import` and the library's read_panel.
    from ..ingest import load_panel as read_panel
    panel = read_panel(args.panel, layout=args.layout, judges=args.judges,
                       item_column=args.item_column, group_column=args.group_column,
                       label_column=args.label_column, block_column=args.block_column,
                       judge_column=args.judge_column, output_column=args.output_column,
                       labels_path=args.labels_path, schema=args.schema, delimiter=args.delimiter,
                       label_range=parse_range(args.label_range, "--label-range"),
                       judge_range=parse_range(args.judge_range, "--judge-range"),
                       require_labels=getattr(args, "require_labels", True), decimal=args.decimal)
    # how the file was read, and (for a labelled panel) what no selection can use
    for note in panel.import_notes:
        log(args, f"fcps: note: {note}")
    for warning in panel.import_warnings if getattr(args, "require_labels", True) else ():
        warn(f"fcps: warning: {warning}")
    remember_file_panel(args, ctx, panel)   # store: --save stores a panel file first
    return panel.collapse_neutral() if args.collapse_ties else panel


def cmd_select(args, ctx: RunContext) -> int:
    from ..selection import DEFAULT_PATHS, FCPSSelector
    from ..splits import make_blocks
    from .progress import progress_printer
    choice = args.choice or ("argmin" if args.guard != "none" else DEFAULT_CHOICE)
    if args.save_model:
        from ..outputs import check_output_path
        check_output_path(args.save_model, force=args.force)     # before a long selection
    panel = load_panel_from_args(args, ctx)
    costs = judge_costs_for(args, ctx, panel)
    counts = block_counts(args)
    blocks = make_blocks(panel, split=args.split, test_share=args.test_share, counts=counts,
                         seed=args.seed)
    if blocks.source == "column":
        log(args, f"using the {args.block_column!r} column's blocks exactly")
    menu = named_menu(args)
    selector = FCPSSelector(
        # with judge costs the default menu also orders judges by information per cost
        paths=menu.get("paths") or parse_names(args.paths)
        or (DEFAULT_PATHS + ("cost_aware",) if costs else DEFAULT_PATHS),
        families=menu.get("families") or parse_names(args.families) or FAMILIES,
        k_max=menu.get("k_max", args.k_max), table_k_max=menu.get("k_max", args.table_k_max),
        pairwise_k_max=menu.get("k_max", args.pairwise_k_max),
        alpha=args.alpha, fallback=args.fallback, objective=args.objective,
        guard=None if args.guard == "none" else args.guard, prior_family=args.prior_family,
        refit=args.refit, n_bins=args.n_bins, seed=args.seed,
        gain_threshold=args.gain_threshold, pressure_threshold=args.pressure_threshold,
        protocol=args.protocol, choice=choice, folds=args.folds, repeats=args.repeats,
        estimate=args.estimate, n_boot=args.n_boot, max_members=args.max_members, judge_costs=costs,
        max_judges=args.max_judges, budget=args.budget, progress=progress_printer(args))
    result = selector.fit(panel, blocks)
    predictor = result.predictor() if args.save_model or getattr(args, "save", False) else None
    save_result(args, ctx, "select", result, predictor=predictor)     # store: --save
    if costs and args.judge_costs and getattr(args, "save", False) and ctx.store_panel \
            and not args.judges:
        from ..store import Store, resolve_store_path
        Store(resolve_store_path(args.store)).set_judge_costs(ctx.store_panel, costs)
        log(args, f"judge costs stored with panel {ctx.store_panel!r}")
    if args.save_model:
        predictor.save(args.save_model, force=args.force)
        log(args, f"predictor written to {args.save_model}")
    if args.json:
        out = result.to_dict()
        # what the reader found that may make the result meaningless (a constant label...)
        out["panel"]["warnings"] = list(getattr(panel, "import_warnings", None) or [])
        json.dump(json_ready(out), sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_result(result, top=args.top))
    return 0


def named_menu(args) -> dict:
    """``select --menu paper_table|paper_scalar``: the paper menu's families, paths and
    largest K (fcps_core.experiments.NAMED_MENUS); refused beside the flags it replaces."""
    if not getattr(args, "menu", None):
        return {}
    from ..experiments import NAMED_MENUS
    given = [f for f, v in (("--families", args.families), ("--paths", args.paths), ("--k-max", args.k_max)) if v]
    if given:
        raise FCPSError(f"--menu {args.menu} fixes the families, paths and K; drop {', '.join(given)} "
                        "or drop --menu")
    spec = NAMED_MENUS[args.menu]
    return {"families": tuple(spec.families), "paths": tuple(spec.paths), "k_max": spec.k_max}


def judge_costs_for(args, ctx: RunContext, panel) -> dict | None:
    """--judge-costs FILE, else the costs stored with a stored panel; restricted to the
    judges in use (a --judges subset may leave some rows of the file unused). The costs
    must cover exactly those judges; an error names the costs file."""
    costs = None
    source = None
    if args.judge_costs:
        from ..judge_costs import read_judge_costs
        costs = read_judge_costs(args.judge_costs)
        source = args.judge_costs
    elif ctx.store_panel:
        from ..store import Store, resolve_store_path
        costs = Store(resolve_store_path(args.store)).judge_costs(ctx.store_panel)
        source = f"the costs stored with panel {ctx.store_panel!r}"
    if costs and args.judges:
        costs = {j: v for j, v in costs.items() if j in set(panel.judge_names)}
    if costs:
        from ..judge_costs import check_costs_cover
        check_costs_cover(costs, panel.judge_names, source=source)
    return costs


def cmd_sweep(args, ctx: RunContext) -> int:
    """Calibration-growth sweep. ``--json`` prints the sweep without its per-split records:
    ``panel``, ``budgets``, ``settings``, ``cells`` and ``plan`` (fcps_core.planning.sweep_plan:
    each menu's validation-risk curve a + b n_M^-c with bootstrap bands, the expected risks at
    the largest budget + ``--plan-delta``, the table-like/scalar crossover budget and the
    S/M/V allocation of ``--plan-n-h`` labels, compared with the fixed-n_H check under
    ``--plan-check``)."""
    from ..experiments import MENU_SETS, calibration_growth
    from ..planning import allocation_text
    from ..selection import DEFAULT_PATHS
    from .progress import progress_printer
    for flag, value in (("--plan-delta", args.plan_delta), ("--plan-n-h", args.plan_n_h)):
        if value is not None and value < (0 if flag == "--plan-delta" else 1):
            raise FCPSError(f"{flag} must be at least {0 if flag == '--plan-delta' else 1} (got {value})")
    budgets = parse_budgets(args.budgets)
    panel = load_panel_from_args(args, ctx)
    plan_options = {k: v for k, v in (("delta", args.plan_delta), ("n_total", args.plan_n_h)) if v is not None}
    menus = MENU_SETS[args.menus]
    paper = args.menus in ("paper", "growth")
    if paper and args.paths and not set(DEFAULT_PATHS) <= set(parse_names(args.paths)):
        raise FCPSError(f"--menus {args.menus} needs the paths {' '.join(DEFAULT_PATHS)}; drop --paths")
    options = dict(splits=args.splits, seed=args.seed, paths=parse_names(args.paths) or DEFAULT_PATHS,
                   workers=capped_workers(args, args.splits), backend=_backend(args.backend),
                   # the paper's menus stop at K = 7: larger scalar prefixes would be fitted for nothing
                   k_max=args.k_max or (7 if paper else None),
                   alpha=args.alpha, fallback=args.fallback, objective=args.objective)
    result = calibration_growth(
        panel, budgets, n_select=args.n_select, n_val=args.n_val, n_test=args.n_test,
        families=parse_names(args.menu), menus=menus, plan_options=plan_options,
        progress=progress_printer(args), **options)
    if args.plan_check:
        _plan_check(args, panel, result, plan_options, options)
    save_result(args, ctx, "sweep", result)      # store: --save
    if args.json:
        json.dump(json_ready({k: v for k, v in result.to_dict().items() if k != "records"}),
                  sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
    else:
        rows = [[c["n_M"], c.get("table_test_mse"), c.get("scalar_test_mse"), c.get("delta"),
                 f"[{fmt(c.get('ci_low'))}, {fmt(c.get('ci_high'))}]", c.get("table_K_mean"),
                 c.get("unseen_mean"), c.get("V_cell_mean")] for c in result.cells]
        sys.stdout.write(f"calibration growth on {one_line(result.panel)}: {args.splits} grouped splits, "
                         f"S={args.n_select} V={args.n_val} T={args.n_test}\n")
        sys.stdout.write(render_table(rows, ["n_M", "table", "scalar", "delta", "95% CI", "table K",
                                             "unseen", "V_cell"]))
        sys.stdout.write("delta = table minus scalar test MSE (positive favours scalar)\n")
        plan = result.plan or {}
        for line in (plan.get("answer"), allocation_text(plan.get("allocation"))):
            if line:
                sys.stdout.write(f"plan: {one_line(line)}\n")
    return 0


def _plan_check(args, panel, result, plan_options: dict, options: dict) -> None:
    """Run the fixed-n_H allocation check at the plan's n_H and put its rows into the plan."""
    from ..checks import fixed_budget_allocation
    from ..planning import sweep_plan
    n_h = plan_options.get("n_total") or args.n_select + max(result.budgets) + args.n_val
    log(args, f"plan: fixed-n_H allocation check at n_H = {n_h}")
    measured = fixed_budget_allocation(panel, n_h, n_test=args.n_test, **{k: v for k, v in options.items()
                                                                           if k != "paths"})
    result.plan = sweep_plan(result.to_dict(), **plan_options, measured_allocation=measured)


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


def cmd_synth(args, ctx: RunContext) -> int:
    from ..synthetic import check_synth_size, make_regime
    from ..outputs import check_output_path
    from .formats import output_format
    check_output_path(args.out, force=args.force)           # before any work
    fmt = output_format(args.out, args.out_format)
    if args.from_panel:
        from ..ingest import load_panel as read_panel
        from ..synthetic import semi_real
        source = read_panel(args.from_panel, require_labels=False)
        if args.use_judges:
            source = source.subset_judges(_known_judges(args.use_judges, source, args.from_panel))
        check_synth_size(args.rows, len(source.judges))
        if args.judge_noise:
            raise FCPSError("--judge-noise flips generated verdicts: a semi-real panel (--from) keeps the real ones")
        panel = semi_real(source, args.regime, rows=args.rows, seed=args.seed, gamma=args.gamma,
                          parity_order=args.parity_order, amplitude=args.amplitude)
    else:
        if args.use_judges:
            raise FCPSError("--use-judges picks judges of a real panel: give it with --from PANEL")
        panel = make_regime(args.regime, rows=args.rows, judges=args.judges, seed=args.seed,
                            gamma=args.gamma, parity_order=args.parity_order, tie_rate=args.tie_rate,
                            group_size=args.group_size, amplitude=args.amplitude, judge_noise=args.judge_noise)
    write_panel_file(panel, args.out, fmt, force=args.force)
    sys.stderr.write(f"wrote {panel.n_rows} rows x {len(panel.judges)} judges ({args.regime}) to {args.out}\n")
    if args.json:
        _dump({"out": args.out, "format": fmt, "rows": panel.n_rows, "judges": panel.judge_names,
               "regime": args.regime, "seed": args.seed})
    return 0


def _dump(obj) -> None:
    json.dump(json_ready(obj), sys.stdout, indent=1, allow_nan=False)
    sys.stdout.write("\n")


def write_panel_file(panel, path: str, fmt: str, *, force: bool = False) -> None:
    """A panel as a wide file in ``fmt``: CSV by the one neutralising writer (LF line ends),
    Parquet or JSON Lines with numbers as numbers (a judge column whose every output is a
    number is numeric; empty cells are null)."""
    from ..outputs import write_output
    from ..writers import panel_to_wide_rows
    from .formats import table_bytes
    header, rows = panel_to_wide_rows(panel)
    columns = {h: [r[i] for r in rows] for i, h in enumerate(header)}
    if fmt != "csv":
        columns = {h: _typed(v) if h not in ("item_id", "group_id", "block") else v for h, v in columns.items()}
    write_output(path, table_bytes(columns, fmt), force=force)


def _typed(values: list[str]) -> list:
    """Text cells as numbers when every non-empty one is a number, else as text; '' is null."""
    import math
    try:
        numbers = [None if v == "" else float(v) for v in values]
    except ValueError:
        return [None if v == "" else v for v in values]
    return numbers if all(x is None or math.isfinite(x) for x in numbers) else \
        [None if v == "" else v for v in values]


def _known_judges(names: list[str], panel, path: str) -> list[str]:
    wanted = parse_names(names)
    unknown = [n for n in wanted if n not in set(panel.judge_names)]
    if unknown:
        raise FCPSError(f"{path}: no judge column {unknown[0]!r} (--use-judges); its judges are "
                        f"{', '.join(panel.judge_names[:12])}{' ...' if len(panel.judge_names) > 12 else ''}")
    return wanted


def cmd_report(args, ctx: RunContext) -> int:
    from ..report import write_report
    command = f"python -m fcps_core report --out {args.out} --splits {args.splits} --seed {args.seed}" \
        + (" --quick" if args.quick else "")
    t0 = time.perf_counter()
    workers = capped_workers(args)
    write_report(args.out, force=args.force, splits=args.splits, seed=args.seed, workers=workers, quick=args.quick,
                 command=command, progress=lambda m: sys.stderr.write(f"[{time.perf_counter() - t0:4.0f} s] {m}\n"))
    figures = os.path.join(os.path.dirname(args.out) or ".", "figures")
    seconds = time.perf_counter() - t0
    sys.stderr.write(f"report written to {args.out} (figures in {figures}) in {seconds:.0f} s\n")
    if args.json:
        _dump({"out": args.out, "figures": figures, "seconds": round(seconds, 1), "splits": args.splits,
               "seed": args.seed, "quick": args.quick})
    return 0
