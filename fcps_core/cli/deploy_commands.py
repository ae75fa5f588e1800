"""The deployment commands: ``score`` (predictions with per-row support) and ``audit``
(traffic against the predictor's calibration support)."""

from __future__ import annotations

import sys

from ..errors import FCPSError
from ..service.files import json_ready
from .context import RunContext
from .render import fmt, log, render_table, safe, write_data, write_json


def load_predictor(ref: str, store_path: str | None = None):
    """A predictor file, or ``run:N``: see :func:`fcps_core.service.deploy.load_predictor`."""
    from ..service.deploy import load_predictor as load
    return load(ref, store_path)


def _traffic(args, ctx, predictor):
    from ..service.deploy import load_traffic, short_name
    from .engine_commands import load_panel_from_args
    if args.schema is None:
        # Read each judge as the predictor saw it (a new file may look continuous where the
        # calibration panel was a rubric, etc.).
        args.schema = predictor.judge_schemas()

    def load(judges):
        args.judges = judges
        return load_panel_from_args(args, ctx)

    # a judge empty in every row is the monitoring case (the judge is down), not an error;
    # a judge column the predictor reads and the traffic lacks is refused (the name of a
    # stored panel is known once it is read)
    panel, empty = load_traffic(load, predictor, judges=args.judges, schemas=args.schema,
                                where=lambda: f"stored panel {args.panel!r}" if ctx.store_panel else args.panel)
    for j in empty:
        log(args, safe(f"judge {short_name(j)} is empty in every row of {args.panel}: it counts as missing on every row"))
    return panel


def _score_traffic(args, ctx, predictor):
    """(panel, item ids as Arrow or None): a plain traffic file through the fast reader
    (deploy.traffic), anything else, or anything it leaves, through :func:`_traffic`."""
    import os
    if args.schema is None:
        args.schema = predictor.judge_schemas()
    if os.path.exists(args.panel) and _plain_file_flags(args):
        from ..service.deploy import read_traffic_fast
        fast = read_traffic_fast(args.panel, predictor, schema=args.schema, layout=args.layout,
                            item_column=args.item_column, group_column=args.group_column,
                            label_column=args.label_column, block_column=args.block_column,
                            judge_column_name=args.judge_column, output_column=args.output_column)
        if fast is not None:
            panel = fast.panel.collapse_neutral() if args.collapse_ties else fast.panel
            return panel, fast.item_ids
    return _traffic(args, ctx, predictor), None


#: panel-file flags the fast traffic reader takes; any other one set sends the file to load_panel
_FAST_FLAGS = {"panel", "layout", "item_column", "group_column", "label_column", "block_column",
               "judge_column", "output_column", "schema", "collapse_ties"}


def _plain_file_flags(args) -> bool:
    """Every panel-file flag the fast reader does not take is at its default."""
    import argparse
    from .args import add_panel_arguments
    p = argparse.ArgumentParser(add_help=False)
    add_panel_arguments(p)
    defaults = {k: v for k, v in vars(p.parse_known_args(["-"])[0]).items() if k not in _FAST_FLAGS}
    return getattr(args, "require_labels", True) is False and \
        all(getattr(args, k, d) == d for k, d in defaults.items())


def write_predictions(path, panel, pred, support, *, force: bool, item_ids=None, out_format: str = "csv") -> None:
    """The predictions file in ``out_format`` (cli.formats.predictions_bytes: CSV through the
    one neutralising writer with LF line ends, Parquet, JSON Lines) to ``path`` or stdout
    (``item_ids``: ``panel.item_ids`` as Arrow, when the reader kept them so)."""
    from .formats import predictions_bytes
    data = predictions_bytes(panel.item_ids if item_ids is None else item_ids, pred, support, out_format)
    if path:
        from ..service.files import atomic_output
        with atomic_output(path, force=force, mode="wb") as fh:
            fh.write(data)
    elif out_format == "parquet":
        write_data(data)        # binary: exact bytes into a pipe or file
    else:
        sys.stdout.write(data.decode("utf-8"))
        sys.stdout.flush()


def predictions_format(args) -> str:
    """``score``/``audit``: the predictions' format -- ``--format``, else the ``--out``
    extension, else CSV; ``score --json`` without ``--out`` prints JSON Lines. Refused before
    any work when the flags disagree, or when Parquet would go to a terminal."""
    from .formats import output_format
    if args.out_format and not args.out and args.command == "audit":
        raise FCPSError("--format sets the format of --out: give --out FILE as well")
    out_format = output_format(args.out, args.out_format)
    if args.command == "score" and args.json and not args.out:
        if args.out_format not in (None, "jsonl"):
            raise FCPSError(f"score --json without --out prints the predictions as JSON Lines; drop "
                            f"--format {args.out_format} or write them to a file with --out")
        out_format = "jsonl"
    if out_format == "parquet" and not args.out and sys.stdout.isatty():
        raise FCPSError("Parquet is binary: write it to a file with --out FILE.parquet, or pipe it")
    return out_format


def support_summary(n: int, support, behaviour: str) -> str:
    """One line for stderr: rows outside support, rows with missing outputs."""
    out = int((~support.in_support).sum())
    missing = support.missing.any(axis=1)
    line = f"scored {n:,} rows: {out:,} ({out / max(n, 1):.1%}) outside calibration support"
    if missing.any():
        per = support.missing.sum(axis=0)
        worst = sorted(((int(c), j) for c, j in zip(per, support.judges) if c), reverse=True)[:3]
        line += (f"; {int(missing.sum()):,} with a missing judge output ("
                 + ", ".join(f"{j} {c:,}" for c, j in worst) + f"): {behaviour}")
    return line


def cmd_score(args, ctx: RunContext) -> int:
    from ..service.deploy import missing_behaviour, read_outputs, score
    out_format = predictions_format(args)
    if args.out:
        from ..service.files import check_output_path
        check_output_path(args.out, force=args.force)     # before any work
    predictor = load_predictor(args.model, getattr(args, "store", None))
    panel, item_ids = _score_traffic(args, ctx, predictor)
    panel, notes = read_outputs(predictor, panel)
    for line in notes:                 # once per judge: outputs read by their case, outputs never seen
        log(args, line)
    pred, support = score(predictor, panel)
    write_predictions(args.out, panel, pred, support, force=args.force, item_ids=item_ids, out_format=out_format)
    if support is None:
        log(args, f"scored {panel.n_rows:,} rows (this predictor file has no calibration support "
                  "section: run select again to get per-row support)")
    else:
        log(args, support_summary(panel.n_rows, support, missing_behaviour(predictor)))
    if args.json and args.out:
        write_json(json_ready({"out": args.out, "format": out_format, "rows": panel.n_rows,
                               "outside_support": None if support is None else int((~support.in_support).sum()),
                               "missing_rows": None if support is None else int(support.missing.any(axis=1).sum())}))
    return 0


def cmd_audit(args, ctx: RunContext) -> int:
    from ..service.deploy import DEFAULT_THRESHOLDS, audit as audit_traffic
    out_format = predictions_format(args)
    for path in (args.out,):
        if path:
            from ..service.files import check_output_path
            check_output_path(path, force=args.force)
    predictor = load_predictor(args.model, args.store)
    traffic = _traffic(args, ctx, predictor)
    thresholds = {k: getattr(args, k) for k in DEFAULT_THRESHOLDS if getattr(args, k, None) is not None}
    for k, v in thresholds.items():
        if not 0 <= v <= 1e6:
            raise FCPSError(f"--{k.replace('_', '-')} must be a non-negative number (got {v})")
    audit = audit_traffic(predictor, traffic, thresholds=thresholds, seed=args.seed)
    if args.save_audit:
        run_id = _save_audit(args, ctx, predictor, audit)
        log(args, f"saved as run {run_id}")
    if args.out:
        write_predictions(args.out, traffic, audit.predictions, audit.support, force=args.force,
                          out_format=out_format)
        log(args, f"predictions written to {args.out}")
    if args.json:
        write_json(json_ready(audit.to_dict()))
    else:
        sys.stdout.write(render_audit(audit, source=args.panel))
    return {"OK": 0, "WARN": 0, "REFUSE": 3}[audit.status] if args.strict else 0


def _save_audit(args, ctx, predictor, audit) -> int:
    from ..service.deploy import save_audit
    from ..service.stores import store_at
    params = {"predictor": args.model, "traffic": args.panel, "rows": audit.n_rows,
              "thresholds": audit.thresholds, "seed": args.seed}
    return save_audit(store_at(args.store), audit, panel_name=args.panel_name, predictor=predictor, params=params,
                      started_at=ctx.started, seconds=ctx.seconds())


def render_audit(audit, *, source: str = "traffic", cells: int = 10) -> str:
    from ..service.deploy import audit_output_notes
    d = audit.to_dict()
    p = d["predictor"]
    what = p["family"] + (f" of {len(p['members'])} members" if p.get("members") else "")
    out = [safe(f"audit of {source} ({d['rows']:,} rows) against the {what} predictor over "
                f"{len(p['judges'])} judges, calibrated on {p['calibration_rows']:,} rows"
                + (f" of {p['panel']}" if p.get("panel") else "")),
           f"status: {d['status']}"]
    out += [safe(f"  - {r}") for r in d["reasons"]]
    out += ["",
            f"deployment cell pressure   {d['pressure']:.4f}  = sum q(z)/N_z {d['pressure_sum']:.4f}"
            f" + unseen {d['unseen_rate']:.4f}  (Eq. cell-pressure, traffic q in place of p)",
            f"unseen-pattern rate        {d['unseen_rate']:.1%}",
            f"outside support            {d['out_of_support_rate']:.1%} "
            f"({'an unseen joint pattern, ' if p['table_like'] else ''}an output never seen or a value off its "
            "calibration range)",
            f"rows with a missing output {d['missing_rate']:.1%} (calibration {d['missing_calibration']:.1%})",
            f"joint pattern drift        TV {fmt(d['joint_drift']['tv'], 3)} (no-drift 99% threshold "
            f"{fmt(d['joint_drift']['threshold'], 3)}, p = {fmt(d['joint_drift']['p_value'], 3)})",
            f"missing outputs            {d['missing_behaviour']}", ""]
    rows = [[safe(j["judge"]), j["tv"], j["threshold"], j["psi"], "yes" if j["shifted"] else "",
             f"{j['missing_calibration']:.1%} -> {j['missing_traffic']:.1%}",
             f"{j['parse_error_calibration']:.1%} -> {j['parse_error_traffic']:.1%}"] for j in d["judges"]]
    out.append(render_table(rows, ["judge", "TV", "threshold", "PSI", "drifted", "missing", "parse error"]))
    notes = [line for j in d["judges"] for line in audit_output_notes(j)]
    if notes:
        out.append("outputs calibration did not hold as written:")
        out += [safe(f"  - {line}") for line in notes]
        out.append("")
    top = [[safe(c["pattern"])[:60], c["N_z"], c["q_z"], c["prediction"], "unseen" if c["unseen"] else ""]
           for c in d["cells"][:cells]]
    out.append(f"most frequent traffic patterns ({min(cells, d['n_cells'])} of {d['n_cells']:,}):")
    out.append(render_table(top, ["pattern", "N_z", "q(z)", "prediction", ""]))
    return "\n".join(out)
