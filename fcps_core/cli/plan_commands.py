"""The planning commands: ``next-judge`` (what adding or dropping one judge would change)."""

from __future__ import annotations

import json
import os
import sys

from .. import defaults as D
from ..errors import FCPSError
from ..families import FAMILIES
from ..jsonutil import json_ready
from ..paths import PATH_RULES
from .args import add_block_arguments, add_panel_arguments, block_counts, parse_names
from .context import RunContext
from .render import clean, fmt, log, render_table, safe


def add_plan_commands(sub) -> None:
    nj = sub.add_parser("next-judge", help="the risk and table-pressure change of adding or dropping one judge")
    add_panel_arguments(nj)
    g = nj.add_argument_group("the deployment (a new selection, or a stored run with --from-run)")
    g.add_argument("--from-run", metavar="run:N",
                   help="plan from a stored selection run (its settings, blocks and deployed candidate)")
    add_block_arguments(g, seed_default=None,  # None: the run's seed with --from-run
                        seed_help="blocks, folds and paths seed (default 0; --from-run: the run's)")
    g.add_argument("--families", nargs="+", help=f"families (default all): {', '.join(FAMILIES)}")
    g.add_argument("--paths", nargs="+", help=f"path rules (default {' '.join(D.DEFAULT_PATHS)}): "
                                              f"{', '.join(PATH_RULES)}")
    g.add_argument("--k-max", type=int, help="largest prefix size (default: whole pool; tables 8)")
    g.add_argument("--objective", choices=["mse", "nll"], default=D.DEFAULT_OBJECTIVE,
                   help="the held-out risk the changes are measured in")
    g.add_argument("--protocol", choices=["crossfit", "split"], default=D.DEFAULT_PROTOCOL,
                   help="crossfit: repeated grouped K-fold; split: the paper's S/M/V blocks")
    g.add_argument("--folds", type=int, default=D.DEFAULT_FOLDS, help="crossfit folds")
    g.add_argument("--repeats", type=int, default=D.DEFAULT_REPEATS, help="crossfit repeats")
    g.add_argument("--choice", help=f"choice rule (default {D.DEFAULT_CHOICE})")
    o = nj.add_argument_group("traffic and output")
    o.add_argument("--traffic", metavar="FILE",
                   help="unlabelled traffic holding the deployed judges plus extra judge columns: their "
                        "table-pressure change and agreement with the deployed panel (no labels needed); "
                        "'-' for standard input")
    o.add_argument("--store", help="store file for --from-run and stored panels (default: $FCPS_STORE, "
                                   "else data/fcps.duckdb)")
    o.add_argument("--json", action="store_true", help="print the plan as JSON on stdout; errors as JSON")
    o.add_argument("--top", type=int, default=15, help="judges shown in the add table")
    o.add_argument("--quiet", action="store_true", help="no progress on stderr")
    nj.set_defaults(handler=cmd_next_judge)


def cmd_next_judge(args, ctx: RunContext) -> int:
    from ..planning.next_judge import deployment_of, plan_next_judge
    from .engine_commands import load_panel_from_args
    from .progress import progress_printer
    progress = progress_printer(args)
    panel = load_panel_from_args(args, ctx)
    if args.from_run:
        dep = deployment_from_run(args, ctx, panel)
        log(args, f"planning from run {args.from_run}: {dep.family} over {len(dep.judges)} judge(s)")
    else:
        dep = deployment_of(_select(args, panel, progress))
    traffic = _load_traffic(args, dep) if args.traffic else None
    plan = plan_next_judge(dep, traffic=traffic, progress=progress)
    if args.json:
        json.dump(json_ready(plan.to_dict()), sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_plan(plan.to_dict(), top=args.top))
    return 0


def _select(args, panel, progress):
    from ..selection import DEFAULT_CHOICE, DEFAULT_PATHS, FCPSSelector
    from ..splits import make_blocks
    blocks = make_blocks(panel, split=args.split, test_share=args.test_share, counts=block_counts(args),
                         seed=args.seed or 0)
    selector = FCPSSelector(paths=parse_names(args.paths) or DEFAULT_PATHS,
                            families=parse_names(args.families) or FAMILIES, k_max=args.k_max,
                            objective=args.objective, seed=args.seed or 0, protocol=args.protocol,
                            choice=args.choice or DEFAULT_CHOICE, folds=args.folds, repeats=args.repeats,
                            estimate="none", with_baselines=False, progress=progress)
    return selector.fit(panel, blocks)


def _run_id(ref: str) -> int:
    """``run:N`` (any case, as ``show``/``export`` take it) or a bare ``N``."""
    text = ref.strip()
    text = text[4:] if text.lower().startswith("run:") else text
    try:
        return int(text)
    except ValueError:
        raise FCPSError(f"--from-run {ref!r} is not a run reference; write run:N (see: python -m fcps_core runs)") \
            from None


def deployment_from_run(args, ctx: RunContext, panel):
    """The deployment a stored selection run made: its selector settings, its blocks (redrawn
    and checked against the stored sizes) and its deployed candidate."""
    from dataclasses import fields
    from ..planning.next_judge import make_deployment
    from ..selection import FCPSSelector
    from ..store import Store, resolve_store_path
    run_id = _run_id(args.from_run)
    store = Store(resolve_store_path(args.store))
    run = store.run(run_id)
    if run["kind"] != "select" or run["status"] != "done" or not run.get("result"):
        raise FCPSError(f"run {run_id} is a {run['status']} {run['kind']} run; --from-run needs a finished selection")
    if ctx.store_panel and ctx.store_panel != run["panel_name"]:
        raise FCPSError(f"run {run_id} was made on panel {run['panel_name']!r}, not {ctx.store_panel!r}")
    params = run["params"] or {}
    known = {f.name for f in fields(FCPSSelector)} - {"progress"}
    options = {k: v for k, v in params.items() if k in known}
    if args.seed is not None:
        options["seed"] = args.seed
    selector = FCPSSelector(**options)
    blocks = _run_blocks(args, panel, params, run_id)
    sel = run["result"]["selected"]
    note = ""
    if sel["family"] == "tie_average":
        best = sel["members"][0]
        note = (f"the deployment averages {len(sel['members'])} tied candidates (tie_average); the plan uses "
                f"its best member, {best['family']} over {best['K']} judge(s)")
        risk = best.get("val_risk")
        sel = best
    else:
        risk = sel.get("val_" + selector.objective)
    missing = [j for j in sel["judges"] if j not in panel.judge_names]
    if missing:
        raise FCPSError(f"the panel lacks judge column(s) run {run_id} deployed: " + ", ".join(map(repr, missing)))

    def predictor():
        """The run's stored predictor (None for a run stored without one: the plan then
        refits the deployed configuration on its calibration rows)."""
        from ..predictor import FCPSPredictor
        from ..store import StoreError
        try:
            return FCPSPredictor.from_dict(store.run_predictor(run_id))
        except StoreError:
            return None
    return make_deployment(panel, blocks, sel["judges"], sel["family"], sel.get("params") or {},
                           selector=selector, note=note, selection_risk=risk, predictor=predictor)


def _run_blocks(args, panel, params: dict, run_id: int):
    """The run's blocks: redrawn from the flags given, else from what the run stored."""
    from ..splits import make_blocks
    stored = params.get("blocks") or {}
    cli = params.get("cli") or {}
    seed = args.seed if args.seed is not None else stored.get("seed") or 0
    counts = block_counts(args)
    split, test_share = args.split, args.test_share
    if counts is None and split is None and not test_share:
        if cli:
            split, test_share = cli.get("split"), cli.get("test_share") or 0.0
            if cli.get("n_select") is not None:
                counts = {"n_S": cli.get("n_select"), "n_M": cli.get("n_cal"), "n_V": cli.get("n_val"),
                          "n_T": cli.get("n_test") or 0}
        elif stored.get("source") == "counts":
            counts = {k: stored.get(k, 0) for k in ("n_S", "n_M", "n_V", "n_T")}
    blocks = make_blocks(panel, split=split, test_share=test_share, counts=counts, seed=seed)
    sizes = {k: stored[k] for k in ("n_S", "n_M", "n_V", "n_T") if k in stored}
    got = blocks.sizes()
    if sizes and any(got.get(k) != v for k, v in sizes.items()):
        show = lambda d: "/".join(str(d.get(k)) for k in ("n_S", "n_M", "n_V", "n_T"))  # noqa: E731
        raise FCPSError(f"run {run_id}'s blocks (S/M/V/T {show(sizes)}) cannot be redrawn from its stored "
                        f"settings (got {show(got)}); pass the --split or --n-* counts and --seed the run used")
    return blocks


def _load_traffic(args, dep):
    """The traffic: a panel file (or a stored panel name), read with the deployed judges'
    schemas; labels are not needed."""
    path = args.traffic
    if not os.path.exists(path):
        from ..store import Store, resolve_store_path
        store = Store(resolve_store_path(args.store)) if args.store or resolve_store_path(None).exists() else None
        if store is not None and store.has_panel(path):
            return store.load_panel(path)
        raise FCPSError(f"--traffic {path!r}: no such file (nor a stored panel of that name)")
    from ..ingest import load_panel
    schemas = {j.name: j.schema for j in dep.panel.judges}
    return load_panel(path, schema=schemas, require_labels=False)


def render_plan(d: dict, *, top: int = 15) -> str:
    """The text report of ``next-judge``; every string of the plan (panel, judge, file
    names) on one line (render.clean)."""
    d = clean(d)
    s, dep = d["settings"], d["deployed"]
    how = (f"cross-fitted: {s['folds']} grouped folds x {s['repeats']} repeats" if s["protocol"] == "crossfit"
           else "split: fitted on M, scored on V")
    out = [safe(f"next judge for panel {s['panel']}: deployed {dep['family']} over K={dep['K']} judge(s) "
                f"({how}; {s['rows']} rows in {s['groups']} groups; objective {s['objective']})")]
    if dep["note"]:
        out.append(safe(f"  note: {dep['note']}"))
    out.append(safe("  judges: " + ", ".join(dep["judges"])))
    out.append(f"  deployed prefix risk {fmt(dep['risk'])} (SE {fmt(dep['risk_se'])}; the selection's "
               f"{fmt(dep['selection_risk'])}), V_proxy {fmt(dep['V_proxy'])}")

    def table(rows):
        return render_table([[safe(e["judge"])[:48], e["risk_change"], e["se"],
                              f"[{fmt(e['ci'][0])}, {fmt(e['ci'][1])}]", e["verdict"], e["pressure_change"]]
                             + (["beyond menu K"] if e["beyond_menu_limit"] else [""]) for e in rows],
                            ["judge", "risk change", "SE", "95% CI", "verdict", "pressure change", ""])
    add = d["add"]
    out += ["", f"ADD one judge (risk change against the deployed prefix; below 0 helps): "
                f"{min(top, len(add))} of {len(add)}, best first"]
    out.append(table(add[:top]) if add else "  (every pool judge is deployed)\n")
    out += ["DROP one deployed judge (below 0: the panel is better without it)"]
    from ..explain import drop_verdict_words
    drop = [{**e, "verdict": drop_verdict_words(e["verdict"])} for e in d["drop"]]
    out.append(table(drop) if drop else "  (one deployed judge: nothing to drop)\n")
    c = d["calibrate_vs_curate"]
    p, cu = c["pool"], c["curated"]
    out += ["CALIBRATE, DON'T CURATE",
            f"  whole pool ({p['n_judges']} judges) calibrated by {p['family']}: risk {fmt(p['risk'])} "
            f"(SE {fmt(p['se'])}; {p['note']})",
            safe(f"  curated top-{cu['k']} by single-judge accuracy, {cu['family']}: risk {fmt(cu['risk'])} "
                 f"(SE {fmt(cu['se'])}; the same top-{cu['k']} in {cu['fold_agreement']:.0%} of folds): "
                 + ", ".join(cu["judges"][:8]) + (" ..." if len(cu["judges"]) > 8 else "")),
            f"  curated - pool: {fmt(c['difference'])} [95% {fmt(c['ci'][0])}, {fmt(c['ci'][1])}]: {c['verdict']}",
            f"  deployed - pool: {fmt(c['deployed_minus_pool']['difference'])} [95% "
            f"{fmt(c['deployed_minus_pool']['ci'][0])}, {fmt(c['deployed_minus_pool']['ci'][1])}]", ""]
    u = d.get("unlabelled")
    if u and u.get("source"):
        out.append(safe(f"JUDGES WITHOUT LABELS (on {u['source']}, {u['rows']:,} rows; deployed pressure "
                        f"{fmt(u['pressure_deployed'])} = H {fmt(u['H_K_deployed'], 2)} / n_cal {u['n_cal']} "
                        f"+ unseen {fmt(u['unseen_rate_deployed'])})"))
        out.append(render_table([[safe(j["judge"])[:48], j["pressure_change"], j["unseen_rate"], j["H_K"],
                                  j["agreement_with_deployed"], j["correlation_with_deployed"],
                                  "yes" if j["in_pool"] else ""] for j in u["judges"]],
                                ["judge", "pressure change", "unseen", "H", "agrees with deployed",
                                 "correlation", "in pool"]))
        out.append(f"  {u['judges'][0]['risk_effect'] if u['judges'] else ''}\n")
    elif u:
        out.append(safe("JUDGES WITHOUT LABELS: " + ", ".join(j["judge"] for j in u["judges"]) + f" ({u['note']})\n"))
    return "\n".join(out)
