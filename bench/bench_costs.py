"""cheapest_tied against argmin on LLMBar with synthetic judge costs (not a test).

Costs: every judge of a model line pays that line's price (GPT-4 30, ChatGPT 2, PaLM2 1,
LLaMA2 0.4, Falcon 0.3 per item) times a seeded factor in [0.8, 1.2]; latency is 10% of
the cost times a factor in [0.5, 1.5]. For each seed the panel is split 1:2:1:1 (T = 20%,
the research test block, never seen by the choice); the same menu (default paths plus
cost_aware) is chosen by ``argmin`` and by ``cheapest_tied``, and the deployed cost and
T-MSE of both are printed. The issue's target: cheapest_tied costs less than argmin in
most splits while its T-MSE stays within 0.002 of argmin's.

    PYTHONPATH=. .venv/bin/python bench/bench_costs.py [--splits 10]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from fcps_core import make_blocks, read_panel
from fcps_core.defaults import DEFAULT_PATHS
from fcps_core.data.judge_costs import judges_cost
from fcps_core.selection import FCPSSelector

PRICE = {"GPT-4": 30.0, "ChatGPT-0301": 2.0, "ChatGPT": 2.0, "PaLM2": 1.0, "LLaMA2": 0.4, "Falcon": 0.3}


def synthetic_costs(judges: list[str], seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for j in judges:
        base = PRICE[j.split("/")[0]]
        out[j] = {"cost": round(base * rng.uniform(0.8, 1.2), 3),
                  "latency": round(base * 0.1 * rng.uniform(0.5, 1.5), 3)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=10)
    args = ap.parse_args()
    panel = read_panel("data/llmbar.csv")
    costs = synthetic_costs(panel.judge_names)
    print(f"LLMBar, {args.splits} splits 1:2:1:1, load average {os.getloadavg()[0]:.2f}")
    print(f"{'seed':>4}  {'argmin cost':>11}  {'tied cost':>9}  {'argmin T-MSE':>12}  {'tied T-MSE':>10}  "
          f"{'diff':>7}  tied pick")
    cheaper, within, diffs, ratios = 0, 0, [], []
    t0 = time.perf_counter()
    for seed in range(args.splits):
        blocks = make_blocks(panel, split="1:2:1:1", seed=seed)
        out = {}
        for rule in ("argmin", "cheapest_tied"):
            sel = FCPSSelector(paths=DEFAULT_PATHS + ("cost_aware",), judge_costs=costs, choice=rule,
                               estimate="none", with_baselines=False, seed=seed)
            r = sel.fit(panel, blocks)
            d = r.selected_dict()
            out[rule] = (judges_cost(d["judges"], costs)[0], d["test_mse"], f"{d['family']} K={d['K']} {d['path']}")
        (ca, ta, _), (cc, tc, pick) = out["argmin"], out["cheapest_tied"]
        cheaper += cc < ca
        within += abs(tc - ta) <= 0.002
        diffs.append(tc - ta)
        ratios.append(cc / ca if ca else 1.0)
        print(f"{seed:>4}  {ca:>11.1f}  {cc:>9.1f}  {ta:>12.4f}  {tc:>10.4f}  {tc - ta:>+7.4f}  {pick}")
    print(f"cheapest_tied cheaper in {cheaper}/{args.splits} splits; median cost ratio "
          f"{np.median(ratios):.2f}; T-MSE within 0.002 in {within}/{args.splits}; mean T-MSE diff "
          f"{np.mean(diffs):+.4f} (SE {np.std(diffs, ddof=1) / np.sqrt(len(diffs)):.4f}); "
          f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
