"""The planning commands: ``next-judge`` (what adding or dropping one judge would change)."""

from __future__ import annotations

import sys

from .. import defaults as D
from ..service.files import json_ready
from ..service.reports import family_name, judges_count
from ..service.select import FAMILIES, PATH_RULES
from .args import add_block_arguments, add_panel_arguments, block_counts, parse_names
from .context import RunContext
from .render import clean, fmt, log, render_table, safe, write_json


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
    from ..service import plan as planning
    from ..service.stores import resolve_store_path, store_at
    from .engine_commands import load_panel_from_args
    from .progress import progress_printer
    progress = progress_printer(args)
    panel = load_panel_from_args(args, ctx)
    if args.from_run:
        run_id = planning.run_id_of(args.from_run)
        dep = planning.deployment_from_run(store_at(args.store), run_id, panel, store_panel=ctx.store_panel,
                                           seed=args.seed, split=args.split, test_share=args.test_share,
                                           counts=block_counts(args))
        log(args, f"planning from run {args.from_run}: {family_name(dep.family)} over {judges_count(len(dep.judges))}")
    else:
        dep = planning.select_deployment(
            panel, split=args.split, test_share=args.test_share, counts=block_counts(args), seed=args.seed or 0,
            paths=parse_names(args.paths), families=parse_names(args.families), k_max=args.k_max,
            objective=args.objective, protocol=args.protocol, choice=args.choice, folds=args.folds,
            repeats=args.repeats, progress=progress)
    traffic = None
    if args.traffic:
        store = store_at(args.store) if args.store or resolve_store_path(None).exists() else None
        traffic = planning.read_plan_traffic(args.traffic, dep, store)
    plan = planning.plan_next_judge(dep, traffic=traffic, progress=progress)
    if args.json:
        write_json(json_ready(plan.to_dict()))
    else:
        sys.stdout.write(render_plan(plan.to_dict(), top=args.top))
    return 0


def render_plan(d: dict, *, top: int = 15) -> str:
    """The text report of ``next-judge``; every string of the plan (panel, judge, file
    names) on one line (render.clean)."""
    d = clean(d)
    s, dep = d["settings"], d["deployed"]
    how = (f"cross-fitted: {s['folds']} grouped folds x {s['repeats']} repeats" if s["protocol"] == "crossfit"
           else "split: fitted on M, scored on V")
    out = [safe(f"next judge for panel {s['panel']}: deployed {family_name(dep['family'])} over {judges_count(dep['K'])} "
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
    from ..service.reports import drop_verdict_words
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
