"""Stability benchmark (not a test): how often would a path ordering judges by their grouped
5-fold cross-validated isotonic risk (the practitioner's order, ``bench_frontier.practitioner``)
build, on the training rows of each of 5 grouped folds of D, the top judge / top three it builds
on all of D? Splits as ``bench_frontier.py`` draws them (seeds 100, 101, ...).

    PYTHONPATH=. .venv/bin/python bench/cv_order_stability.py llmbar 32
"""
import sys, os, numpy as np
sys.path.insert(0, "bench")
import bench_frontier as BF
from fcps_core.selection import deployable_label_scale
from fcps_core.selection.folds import grouped_folds
from fcps_core.data.encoding import encode_panel
name, n = sys.argv[1], int(sys.argv[2])
panel = BF.load(name)
same1 = []; same3 = []; jac3 = []
for k in range(n):
    seed = 100 + k
    blocks = BF.split(panel, name, seed, 0)
    scaled = deployable_label_scale(panel, blocks)
    D = np.sort(np.concatenate([blocks.S, blocks.M, blocks.V]))
    y, groups = scaled.labels, scaled.group_ids
    def order(rows):
        enc = encode_panel(scaled, rows)
        r = [BF._cv_risk(enc, y, groups, rows, [j], "mean_iso", seed) for j in range(len(scaled.judges))]
        return list(np.argsort(r, kind="stable"))
    o = order(D)
    t1, t3 = {o[0]}, set(o[:3])
    s1 = s3 = 0; js = []
    for _, tr, va in grouped_folds(groups[D], 5, 1, seed):
        of = order(D[tr])
        s1 += {of[0]} == t1; s3 += set(of[:3]) == t3; js.append(len(set(of[:3]) & t3) / len(set(of[:3]) | t3))
    same1.append(s1 / 5); same3.append(s3 / 5); jac3.append(np.mean(js))
    print(seed, s1, s3, round(np.mean(js), 2), flush=True)
print(f"{name}: folds building D's top judge {np.mean(same1):.2f}, D's top three {np.mean(same3):.2f}; "
      f"splits with every fold: top 1 {sum(v == 1 for v in same1)}/{n}, top 3 {sum(v == 1 for v in same3)}/{n}; "
      f"mean Jaccard of the top three {np.mean(jac3):.2f}; load {os.getloadavg()[0]:.1f}")
