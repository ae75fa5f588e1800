"""Where does a latent shape's default lose to a fixed recipe? (not a test)

Reads a ``bench/bench_shapes.py --recipes --keep DIR`` run of one shape: per draw, the
default's predictor file (a tie average), the draw's 40,000 fresh items and the recipes'
fresh MSEs (``DIR/recipes.json``). Each member of the tie average is scored alone on the fresh
items (the stored, refitted member: a one-member copy of the predictor file; no refits), and
it prints, over the draws, paired mean differences (with their SE) of:

* the tie's lowest-risk member alone (what ``--choice argmin`` deploys) - the tie average;
* the average without its ``residual`` members - the tie average;
* the best member in hindsight - the tie average;
* members at the tie set's largest K, and members with fewer judges, - the control recipe
  (logistic over all judges).

    PYTHONPATH=. python bench/tie_members_fresh.py DIR [--shape binqa_6x300_g3]
"""

from __future__ import annotations

import argparse
import copy
import glob
import json
import os
import re

import numpy as np

from fcps_core import read_panel
from fcps_core.deploy.predictor import FCPSPredictor


def member_predictions(doc: dict, fresh) -> list[np.ndarray]:
    """Each member of a tie-average predictor file alone (weight 1), on ``fresh``."""
    out = []
    for m in doc["members"]:
        one = copy.deepcopy(doc)
        one["members"] = [dict(m, weight=1.0)]
        one["judges"] = [j for j in doc["judges"] if j in m["judges"]]
        one.pop("support", None)          # the support section lists the whole union's patterns
        out.append(FCPSPredictor.from_dict(one).predict(fresh))
    return out


def draw_rows(folder: str, shape: str) -> list[dict]:
    rows = []
    recipes = {r["draw"]: r for r in json.load(open(os.path.join(folder, "recipes.json"))) if r["shape"] == shape}
    paths = glob.glob(os.path.join(folder, f"{shape}.d*.default.model.json"))
    paths += glob.glob(os.path.join(folder, f"{shape}.default.model.json"))     # draw 0
    for path in paths:
        found = re.search(r"\.d(\d+)\.default", path)
        draw = int(found.group(1)) if found else 0
        doc = json.load(open(path))
        fresh = read_panel(path.replace(".default.model.json", ".fresh.csv"))
        y = fresh.labels
        whole = float(np.mean((FCPSPredictor.from_dict(doc).predict(fresh) - y) ** 2))
        P = np.array(member_predictions(doc, fresh))
        mse = np.mean((P - y) ** 2, axis=1)
        K = np.array([len(m["judges"]) for m in doc["members"]])
        plain = np.array([m["family"] != "residual" for m in doc["members"]])
        rows.append({"draw": draw, "default": whole, "argmin": float(mse[0]), "best": float(mse.min()),
                     "no_residual": float(np.mean((P[plain].mean(axis=0) - y) ** 2)) if plain.any() else None,
                     "mse": mse, "K": K, "control": recipes.get(draw, {}).get("recipes", {}).get("logistic_all")})
    return sorted(rows, key=lambda r: r["draw"])


def paired(values) -> str:
    v = np.asarray([x for x in values if x is not None], dtype=float)
    se = v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else float("nan")
    return f"{v.mean():+.4f} (SE {se:.4f}, n={len(v)})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--shape", default="binqa_6x300_g3")
    args = ap.parse_args()
    rows = draw_rows(args.folder, args.shape)
    print(f"{args.shape}: {len(rows)} draws with a stored default predictor")
    print("argmin member - tie average:      ", paired(r["argmin"] - r["default"] for r in rows))
    print("without residual - tie average:   ", paired(None if r["no_residual"] is None else r["no_residual"] - r["default"]
                                                    for r in rows))
    print("best member (hindsight) - average:", paired(r["best"] - r["default"] for r in rows))
    with_control = [r for r in rows if r["control"] is not None]
    top = [m - r["control"] for r in with_control for m, k in zip(r["mse"], r["K"]) if k == r["K"].max()]
    fewer = [m - r["control"] for r in with_control for m, k in zip(r["mse"], r["K"]) if k < r["K"].max()]
    print("largest-K members - logistic_all: ", paired(top))
    print("fewer-judge members - logistic_all:", paired(fewer))


if __name__ == "__main__":
    main()
