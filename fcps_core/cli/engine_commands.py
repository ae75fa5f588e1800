"""The engine commands: select, sweep, synth, report (score and audit: deploy_commands)."""

from __future__ import annotations

import os
import sys
import time

from ..errors import FCPSError
from ..defaults import DEFAULT_CHOICE
from ..service.files import json_ready
from ..service.select import FAMILIES
from ..service.parsers import screen_option
from .args import block_counts, capped_workers, parse_budgets, parse_names, parse_range
from .context import RunContext
from .render import fmt, log, one_line, render_result, render_table, warn, write_json
from .store_hooks import cli_params, load_stored_panel, remember_file_panel, save_result


def load_panel_from_args(args, ctx: RunContext):
    # store: a stored panel name works wherever a panel file does (store_hooks.py)
    from ..service.upload import import_warnings, read_panel_file
    stored = load_stored_panel(args, ctx)
    if stored is not None:
        if getattr(args, "require_labels", True):
            stored.import_warnings = import_warnings(stored)
            for warning in stored.import_warnings:
                warn(f"fcps: warning: {warning}")
        return stored.collapse_neutral() if args.collapse_ties else stored
    # Files are read by the DuckDB importer (CSV/TSV/Parquet/JSONL, .gz), the same reader as
    # `import` and the library's read_panel.
    panel = read_panel_file(args.panel, layout=args.layout, judges=args.judges,
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
    from ..service.select import SelectRequest, run_select
    from ..service.stores import store_at
    from .progress import progress_printer
    choice = args.choice or ("argmin" if args.guard != "none" else DEFAULT_CHOICE)
    if args.save_model:
        from ..service.files import check_output_path
        check_output_path(args.save_model, force=args.force)     # before a long selection
    panel = load_panel_from_args(args, ctx)
    costs = judge_costs_for(args, ctx, panel)
    menu = named_menu(args)
    save = bool(getattr(args, "save", False)) and ctx.store_panel is not None
    request = SelectRequest(
        panel, split=args.split, counts=block_counts(args), test_share=args.test_share, seed=args.seed,
        # no --paths: the default menu (with judge costs it also orders judges by information per cost)
        options=dict(
            paths=menu.get("paths") or parse_names(args.paths) or None,
            families=menu.get("families") or parse_names(args.families) or FAMILIES,
            k_max=menu.get("k_max", args.k_max), table_k_max=menu.get("k_max", args.table_k_max),
            pairwise_k_max=menu.get("k_max", args.pairwise_k_max),
            alpha=args.alpha, fallback=args.fallback, objective=args.objective,
            guard=None if args.guard == "none" else args.guard, prior_family=args.prior_family,
            refit=args.refit, n_bins=args.n_bins,
            gain_threshold=args.gain_threshold, pressure_threshold=args.pressure_threshold,
            protocol=args.protocol, choice=choice, folds=args.folds, repeats=args.repeats,
            estimate=args.estimate, n_boot=args.n_boot, max_members=args.max_members,
            max_judges=args.max_judges, budget=args.budget, **screen_option(args.screen_se)),
        judge_costs=costs, progress=progress_printer(args), want_predictor=bool(args.save_model),
        # store: --save
        save=save, store=store_at(args.store) if save else None, panel_name=ctx.store_panel,
        panel_version=ctx.panel_version, params={"cli": cli_params(args)}, started_at=ctx.started)
    outcome = run_select(request)
    result, predictor = outcome.result, outcome.predictor
    if outcome.blocks.source == "column":
        log(args, f"using the {args.block_column!r} column's blocks exactly")
    if outcome.run_id is not None:
        log(args, f"saved as run {outcome.run_id} in {request.store.path}")
    if costs and args.judge_costs and save and not args.judges:
        request.store.set_judge_costs(ctx.store_panel, costs)
        log(args, f"judge costs stored with panel {ctx.store_panel!r}")
    if args.save_model:
        predictor.save(args.save_model, force=args.force)
        log(args, f"predictor written to {args.save_model}")
    if args.json:
        out = result.to_dict()
        # what the reader found that may make the result meaningless (a constant label...)
        out["panel"]["warnings"] = list(getattr(panel, "import_warnings", None) or [])
        write_json(json_ready(out))
    else:
        sys.stdout.write(render_result(result, top=args.top))
    return 0


def named_menu(args) -> dict:
    """``select --menu paper_table|paper_scalar``: the paper menu's families, paths and
    largest K (fcps_core.service.select.named_menu); refused beside the flags it replaces."""
    from ..service.select import named_menu as menu
    return menu(getattr(args, "menu", None), **{"--families": args.families, "--paths": args.paths,
                                                "--k-max": args.k_max})


def judge_costs_for(args, ctx: RunContext, panel) -> dict | None:
    """--judge-costs FILE, else the costs stored with a stored panel; restricted to the
    judges in use (a --judges subset may leave some rows of the file unused). The costs
    must cover exactly those judges; an error names the costs file."""
    from ..service.select import costs_for_judges, read_judge_costs
    costs = None
    source = None
    if args.judge_costs:
        costs = read_judge_costs(args.judge_costs)
        source = args.judge_costs
    elif ctx.store_panel:
        from ..service.stores import store_at
        costs = store_at(args.store).judge_costs(ctx.store_panel)
        source = f"the costs stored with panel {ctx.store_panel!r}"
    return costs_for_judges(costs, panel.judge_names, subset=bool(args.judges), source=source)


def cmd_sweep(args, ctx: RunContext) -> int:
    """Calibration-growth sweep. ``--json`` prints the sweep without its per-split records:
    ``panel``, ``budgets``, ``settings``, ``cells`` and ``plan`` (fcps_core.planning.sweep_plan:
    each menu's validation-risk curve a + b n_M^-c with bootstrap bands, the expected risks at
    the largest budget + ``--plan-delta``, the table-like/scalar crossover budget and the
    S/M/V allocation of ``--plan-n-h`` labels, compared with the fixed-n_H check under
    ``--plan-check``)."""
    from ..service import sweep
    from .progress import progress_printer
    plan_options = sweep.check_plan_options(args.plan_delta, args.plan_n_h)
    budgets = parse_budgets(args.budgets)
    panel = load_panel_from_args(args, ctx)
    menus = sweep.menu_set(args.menus)
    paper = args.menus in ("paper", "growth")
    options = dict(splits=args.splits, seed=args.seed, paths=sweep.sweep_paths(parse_names(args.paths), args.menus),
                   workers=capped_workers(args, args.splits), backend=_backend(args.backend),
                   # the paper's menus stop at K = 7: larger scalar prefixes would be fitted for nothing
                   k_max=args.k_max or (7 if paper else None),
                   alpha=args.alpha, fallback=args.fallback, objective=args.objective)
    result = sweep.run_sweep(
        panel, budgets, n_select=args.n_select, n_val=args.n_val, n_test=args.n_test,
        families=parse_names(args.menu), menus=menus, plan_options=plan_options,
        progress=progress_printer(args), **options)
    if args.plan_check:
        n_h = plan_options.get("n_total") or args.n_select + max(result.budgets) + args.n_val
        log(args, f"plan: fixed-n_H allocation check at n_H = {n_h}")
        sweep.check_allocation(panel, result, n_h=n_h, n_test=args.n_test, plan_options=plan_options,
                               options=options)
    save_result(args, ctx, "sweep", result)      # store: --save
    if args.json:
        write_json(json_ready({k: v for k, v in result.to_dict().items() if k != "records"}))
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
        for line in (plan.get("answer"), sweep.allocation_text(plan.get("allocation"))):
            if line:
                sys.stdout.write(f"plan: {one_line(line)}\n")
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


def cmd_synth(args, ctx: RunContext) -> int:
    from ..service.paper import check_synth_size, make_regime
    from ..service.files import check_output_path
    from .formats import output_format
    check_output_path(args.out, force=args.force)           # before any work
    fmt = output_format(args.out, args.out_format)
    if args.from_panel:
        from ..service.paper import semi_real
        from ..service.upload import read_panel_file
        source = read_panel_file(args.from_panel, require_labels=False)
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
    write_json(json_ready(obj))


def write_panel_file(panel, path: str, fmt: str, *, force: bool = False) -> None:
    """A panel as a wide file in ``fmt``: CSV by the one neutralising writer (LF line ends),
    Parquet or JSON Lines with numbers as numbers (a judge column whose every output is a
    number is numeric; empty cells are null)."""
    from ..service.files import panel_to_wide_rows, write_output
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
    from ..service.paper import write_report
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
