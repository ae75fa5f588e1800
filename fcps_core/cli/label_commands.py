"""``label-next``: the next items to send to annotators (fcps_core.service.label_next)."""

from __future__ import annotations


from ..service.files import json_ready
from ..service.reports import count_of, estimate_name
from .args import add_panel_arguments
from .context import RunContext
from .render import fmt, log, write_data, write_json


def add_label_commands(sub) -> None:
    ln = sub.add_parser("label-next", help="rank the unlabelled items and write the next batch to label",
                        description="Rank a panel's unlabelled items (blank label) and write the next batch to "
                                    "label: a uniform random audit sample (its risks stay honest) plus the items "
                                    "that most reduce the deployed predictor's prediction variance over the "
                                    "traffic (fcps_core.planning.label_next).")
    add_panel_arguments(ln)
    ln.add_argument("--batch", type=int, required=True, help="items to return (new, unlabelled)")
    ln.add_argument("--seed", type=int, default=0, help="seed of the selection, the audit draw and ties")
    ln.add_argument("--audit-share", type=float, default=None,   # None: the precision rule (planning.label_next)
                    help="share of the batch drawn uniformly at random as the audit sample (default: the "
                         "smallest audit that keeps the evaluation rows at least half of the labels)")
    ln.add_argument("--whole-groups", action="store_true",
                    help="add a chosen item's unlabelled group-mates right after it")
    ln.add_argument("--out", help="write the batch CSV here (default: stdout); fill its label column and "
                                  "merge it back (the Label next page, or import --replace)")
    ln.add_argument("--force", action="store_true", help="replace an existing --out file")
    ln.add_argument("--json", action="store_true",
                    help="print the batch (without --out) or a summary (with --out) as JSON; errors as JSON")
    ln.add_argument("--store", help="store file for stored panels (default: $FCPS_STORE, else data/fcps.duckdb)")
    ln.add_argument("--quiet", action="store_true", help="no progress on stderr")
    ln.set_defaults(handler=cmd_label_next)


def cmd_label_next(args, ctx: RunContext) -> int:
    from ..service.label_next import plan_batch, record_plan
    from .engine_commands import load_panel_from_args
    from .progress import progress_printer
    if args.out:
        from ..service.files import check_output_path
        check_output_path(args.out, force=args.force)       # before the selection
    panel = load_panel_from_args(args, ctx)
    store = None
    active = None
    if ctx.store_panel:
        from ..service.stores import store_at
        store = store_at(args.store)
        active = store.active_items(ctx.store_panel)
    plan = plan_batch(panel, args.batch, seed=args.seed, audit_share=args.audit_share,
                      whole_groups=args.whole_groups, active_items=active, progress=progress_printer(args))
    if store is not None:
        record_plan(store, ctx.store_panel, plan)
    d = plan.decision
    # the estimate named as the Select and Label next pages name it ("MSE on new items")
    ci = d.get("deployed_risk_ci") or [None, None]
    estimate = (f"{fmt(d['deployed_risk'])} (95% interval {fmt(ci[0])} to {fmt(ci[1])})"
                if d.get("deployed_risk") is not None else "not estimated")
    log(args, f"{count_of(len(plan.batch), 'item')}: {plan.batch.info['n_audit']:,} audit, "
              f"{plan.batch.info['n_active']:,} active; {estimate_name(d['objective'])} "
              f"{estimate}, read on {count_of(d['n_evaluation_rows'], 'evaluation row')}")
    if args.out:
        plan.write(args.out, force=args.force)
        log(args, f"batch written to {args.out}")
        if args.json:
            out = plan.to_dict()
            out["out"] = args.out
            write_json(json_ready(out))
    elif args.json:
        write_json(json_ready(plan.to_dict()))
    else:
        write_data(plan.csv_text())
    return 0
