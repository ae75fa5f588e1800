"""A practitioner's fixed recipes scored on a latent panel's fresh items, beside the
selection's runs (``bench/bench_shapes.py --recipes``; issue 24, "How it will be checked").

A ``select`` run on a panel file has no research test block: every labelled row of the panel
is deployable. So the practitioner's recipes are chosen and fitted on all the panel's rows
(D) and scored on the same fresh items (T) the runs' saved predictors are scored on:

* the best single judge: the lowest grouped 5-fold cross-validated isotonic risk on D,
  isotonic fitted on D; and the top-three stack: the three best such judges stacked by
  ridge+isotonic or logistic, whichever has the lower grouped CV risk on D
  (:func:`bench.bench_frontier.practitioner`);
* the fixed recipes over all judges with no selection (majority vote, mean vote+isotonic,
  one-coin+isotonic, ridge+isotonic, logistic, Dawid-Skene) and every single judge with
  isotonic (:func:`bench.bench_quality.fixed_recipes`).

"The best fixed recipe in hindsight" is the lowest fresh-item MSE among all of them (the
top-three stack included). Both benches take a Panel and row indices, so the panel's rows and
the fresh rows are put in one Panel (:func:`combined_panel`): the fresh rows' item and group
ids get a prefix no panel id carries, D is the panel's rows and T the fresh rows, and the
encoders (``encode_panel(panel, D)``) are fitted on D alone. The labels must be on a declared
scale (0/1, or numbers in [0, 1]): a label range inferred from the file would read T's labels.

Gaps (per shape and draw): ``--max-judges 1`` - best single judge (target +0.002),
``--max-judges 3`` - top-three stack (+0.001), default - best fixed recipe in hindsight
(+0.002); and each run's deployed-risk estimate minus its fresh-item MSE (+-0.005).
:func:`summary_lines` prints their mean and SE over draws per shape, the mean and SE over
all shapes x draws, and the worst shape.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

#: prefix of the fresh rows' item and group ids in the combined panel
FRESH_PREFIX = "fresh:"

#: (name, run, baseline, target): a gap is the run's fresh MSE minus the baseline's
GAPS = (("max1-single", "max1", "single", 0.002),
        ("max3-top3", "max3", "top3", 0.001),
        ("default-hindsight", "default", "hindsight", 0.002))

#: the runs whose deployed-risk estimate is compared with its fresh MSE
RUNS = ("default", "max1", "max3")

#: issue 24's bound on the deployed-risk estimate's bias
BIAS_TARGET = 0.005


def _rows(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        return header, list(reader)


def combined_panel(panel_csv: Path, fresh_csv: Path, out_csv: Path):
    """(Panel, D, T): the panel's rows and the fresh rows in one panel read from ``out_csv``
    (written, then removed), D the panel's rows and T the fresh rows (row indices, sorted).
    The fresh rows' item and group ids (the first two columns) get :data:`FRESH_PREFIX`;
    a panel id that already starts with it is refused, so no fresh row can join D nor share
    a group with a panel row."""
    from fcps_core import read_panel
    from fcps_core.files.csv_writer import write_csv
    header, rows = _rows(panel_csv)
    fresh_header, fresh = _rows(fresh_csv)
    if fresh_header != header:
        raise ValueError(f"{fresh_csv} has other columns than {panel_csv}")
    if any(r[0].startswith(FRESH_PREFIX) or r[1].startswith(FRESH_PREFIX) for r in rows):
        raise ValueError(f"{panel_csv}: an item or group id starts with {FRESH_PREFIX!r}")
    renamed = [[FRESH_PREFIX + r[0], FRESH_PREFIX + r[1], *r[2:]] for r in fresh]
    write_csv(str(out_csv), header, rows + renamed, force=True, lineterminator="\n")
    try:
        panel = read_panel(str(out_csv))
    finally:
        out_csv.unlink(missing_ok=True)
    if panel.label_range_inferred:
        raise ValueError(f"{panel_csv}: labels rescaled by their observed range, which would read the fresh rows")
    is_fresh = np.array([str(i).startswith(FRESH_PREFIX) for i in panel.item_ids])
    return panel, np.flatnonzero(~is_fresh), np.flatnonzero(is_fresh)


def recipe_risks(panel, D: np.ndarray, T: np.ndarray, seed: int = 0) -> dict:
    """Fresh-item (T) MSE of the practitioner's best single judge and top-three stack and of
    the best fixed recipe in hindsight, all chosen (where they choose) and fitted on D."""
    from bench.bench_frontier import practitioner
    from bench.bench_quality import fixed_recipes
    out = practitioner(panel, D, T, seed)
    yT = panel.labels[T]
    fixed = {name: float(np.mean((yT - p) ** 2))
             for name, p in fixed_recipes(panel, D, T, np.array([], dtype=np.int64)).items()}
    fixed[f"top3:{out['top3_family']}"] = out["top3"]
    best = min(fixed, key=fixed.get)
    out["hindsight"], out["hindsight_recipe"] = fixed[best], best
    out[CONTROL] = fixed[CONTROL]
    return out


#: the fixed recipe whose cross-fitted risk (the default run's baseline of that name) less its
#: fresh MSE measures how much easier or harder the panel's own rows are than fresh items
CONTROL = "logistic_all"


def record(shape: str, draw: int, runs: dict, recipes: dict, control_risk: float | None = None) -> dict:
    """One shape and draw: ``runs`` maps a run kind to (estimate, fresh MSE); ``control_risk``
    is the default run's cross-fitted risk of :data:`CONTROL` (its ``baselines`` entry).

    ``luck`` = that risk - the recipe's fresh MSE: a recipe that chooses nothing, so what it
    shows is the panel's own rows against fresh items (a 300-row panel whose labels happen to
    vary less scores every predictor lower), plus the recipe's training-size pessimism (fold
    models see 4/5 of the rows; small and >= 0). ``bias_less_luck`` = each run's est - fresh
    less ``luck``: the estimate's error paired against the same panel's luck, far less noisy
    over few draws, and low by about that pessimism."""
    gaps = {name: runs[run][1] - recipes[base] for name, run, base, _ in GAPS if run in runs}
    bias = {run: runs[run][0] - runs[run][1] for run in RUNS if run in runs and runs[run][0] is not None}
    rec = {"shape": shape, "draw": draw, "gaps": gaps, "bias": bias, "recipes": recipes,
           "fresh": {run: v[1] for run, v in runs.items()}}
    if control_risk is not None and CONTROL in recipes:
        rec["luck"] = control_risk - recipes[CONTROL]
        rec["control_risk"] = control_risk
        rec["bias_less_luck"] = {run: b - rec["luck"] for run, b in bias.items()}
    return rec


def record_line(rec: dict) -> str:
    """The per-shape line printed after its runs."""
    r, f = rec["recipes"], rec["fresh"]
    return (f"  recipes on fresh items: single {r['single']:.4f} ({r['single_judge']}), top3 {r['top3']:.4f} "
            f"({r['top3_family']}), hindsight {r['hindsight']:.4f} ({r['hindsight_recipe']}); runs "
            + ", ".join(f"{k} {v:.4f}" for k, v in f.items())
            + "; gaps " + ", ".join(f"{k} {v:+.4f}" for k, v in rec["gaps"].items())
            + "; est - fresh " + ", ".join(f"{k} {v:+.4f}" for k, v in rec["bias"].items()))


def _mean_se(v) -> tuple[float, float]:
    v = np.asarray(v, dtype=float)
    return float(v.mean()), (float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else math.nan)


def _cell(v) -> str:
    m, se = _mean_se(v)
    return f"{m:+.4f} ({se:.4f})" if math.isfinite(se) else f"{m:+.4f}"


def summary_lines(records: list[dict]) -> list[str]:
    """Per shape: each gap and bias, mean (SE over draws); then over all shapes x draws:
    mean (SE), the share of cells within the target and the worst shape (by its mean)."""
    if not records:
        return []
    columns = [("gaps", name, target) for name, _, _, target in GAPS] + [("bias", run, BIAS_TARGET) for run in RUNS]
    shapes = list(dict.fromkeys(r["shape"] for r in records))
    values = {(s, kind, name): [r[kind][name] for r in records if r["shape"] == s and name in r[kind]]
              for s in shapes for kind, name, _ in columns}
    draws = sorted({sum(r["shape"] == s for r in records) for s in shapes})
    out = [f"Practitioner targets on fresh items: mean (SE over {'-'.join(map(str, draws[::max(1, len(draws) - 1)]))} "
           f"draws) per shape",
           f"{'shape':<20} " + " ".join(f"{(name if kind == 'gaps' else 'est-true ' + name):>19}"
                                        for kind, name, _ in columns)]
    for s in shapes:
        out.append(f"{s:<20} " + " ".join(f"{(_cell(values[s, k, n]) if values[s, k, n] else '-'):>19}"
                                          for k, n, _ in columns))
    lucky = [r for r in records if "bias_less_luck" in r]
    if lucky:
        out.append(f"The panel's luck ({CONTROL}: cross-fitted - fresh MSE) and est - fresh less it, mean (SE over draws)")
        out.append(f"{'shape':<20} {'luck':>19} " + " ".join(f"{'less luck ' + run:>19}" for run in RUNS))
        for s in shapes:
            mine = [r for r in lucky if r["shape"] == s]
            if mine:
                out.append(f"{s:<20} {_cell([r['luck'] for r in mine]):>19} " + " ".join(
                    f"{(_cell(v) if (v := [r['bias_less_luck'][run] for r in mine if run in r['bias_less_luck']]) else '-'):>19}"
                    for run in RUNS))
    out.append(f"Over shapes x draws ({len(records)} cells): mean (SE), cells within target, worst shape (its mean)")
    for kind, name, target in columns:
        allv = [v for s in shapes for v in values[s, kind, name]]
        if not allv:
            continue
        means = {s: float(np.mean(values[s, kind, name])) for s in shapes if values[s, kind, name]}
        worst = max(means, key=(lambda s: abs(means[s])) if kind == "bias" else means.get)
        inside = sum(abs(v) <= target if kind == "bias" else v <= target for v in allv)
        label = name if kind == "gaps" else f"est - fresh MSE, {name}"
        bound = f"|.| <= {target}" if kind == "bias" else f"<= +{target}"
        out.append(f"  {label:<26} {_cell(allv):>17}  {inside}/{len(allv)} {bound}  worst {worst} "
                   f"{_cell(values[worst, kind, name])}")
    return out


def rescored(rec: dict, folder: Path) -> dict:
    """``rec`` with its recipes fitted and scored again on the panel and fresh items kept in
    ``folder`` (the runs' estimates and fresh MSEs as they were): the recipes as the current
    benches define them, against selections already run."""
    name = rec["shape"] + (f".d{rec['draw']}" if rec["draw"] else "")
    panel, D, T = combined_panel(folder / f"{name}.csv", folder / f"{name}.fresh.csv",
                                 folder / f"{name}.combined.csv")
    runs = {run: (rec["bias"].get(run, math.nan) + fresh, fresh) for run, fresh in rec["fresh"].items()}
    return record(rec["shape"], rec["draw"], runs, recipe_risks(panel, D, T, seed=0), rec.get("control_risk"))


def main(argv=None) -> int:
    """Summarise the records of one or more ``bench_shapes.py --recipes --keep DIR`` runs
    (their ``DIR/recipes.json``), e.g. two runs with different ``--first-draw``;
    ``--rescore``: the recipes fitted again on the panels kept beside each file."""
    import argparse
    import json
    ap = argparse.ArgumentParser(description=main.__doc__.split("\n")[0])
    ap.add_argument("records", nargs="+", help="recipes.json files")
    ap.add_argument("--rescore", action="store_true",
                    help="fit and score the recipes again on the kept panels (the runs are not rerun)")
    args = ap.parse_args(argv)
    records = {}
    for path in args.records:
        with open(path, encoding="utf-8") as fh:
            found = json.load(fh)
        if args.rescore:
            found = [rescored(r, Path(path).parent) for r in found]
        records.update({(r["shape"], r["draw"]): r for r in found})   # a draw run twice: once
    print("\n".join(summary_lines(list(records.values()))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
