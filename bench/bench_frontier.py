"""Frontier benchmark (not a test): what does deploying fewer judges cost, and is the frontier's
deployed-risk estimate honest?

For each panel, ``--splits`` seeded grouped splits hold out 20 % of the labelled groups as the
research test block T (seeds 100, 101, ...); T never informs a choice. On the other 80 % (the
deployable rows D) it runs the default selection once; its frontier gives, for every panel
size k, what ``select --max-judges k`` deploys (the same choice on the same held-out matrix;
every candidate's model is refitted on D, so the point's predictor is the average of its
members' refits). Per split it scores on T:

* each frontier point (k = 1..J) and the default (the choice over all judges);
* the smallest statistically tied point (the smallest k whose paired 95 % interval of the
  difference to the choice over all judges contains 0), the alternative default;
* a practitioner's best single judge: the judge with the lowest grouped cross-validated
  isotonic risk on D, isotonic fitted on D;
* a practitioner's top-three stack: the three judges with the lowest such risks, stacked by
  ridge+isotonic or logistic (whichever has the lower grouped cross-validated risk on D),
  fitted on D;

and records each point's deployed-risk estimate minus its T-MSE (and the same without the
point's learning-curve correction). It prints per panel the mean
T-MSE of k=1 against the best single judge, of k=3 against the top-three stack, of the default
and of the smallest tied point, and the mean bias of the deployed-risk estimate per k (with
its largest absolute value over k).

    PYTHONPATH=. .venv/bin/python bench/bench_frontier.py [--splits 6] [--panels llmbar hanna additive ...]
    PYTHONPATH=. .venv/bin/python bench/bench_frontier.py --timing     # the frontier's share of a selection
    PYTHONPATH=. .venv/bin/python bench/bench_frontier.py --parts      # its parts' CPU, one process
    PYTHONPATH=. .venv/bin/python bench/bench_frontier.py --population 20000 --panels additive parity mixed

``--population N`` (synthetic panels): N more rows of the same generator, all in T, D of the
usual size, so T-MSE is close to the risk on fresh items and estimate - T-MSE measures the
estimate rather than a few hundred T rows' noise. ``--out FILE`` writes every panel's
summary, the bias at every k included, as JSON.

``--paired-random``: each split's selection also decides, replays and scores its frontier
with the other setting of ``FCPSSelector.random_under_limits`` (whether a binding limit may
choose a prefix of the ``random`` path; the unconstrained choice is the same either way), so
the two settings are compared on the same splits, bootstrap draws and T; the limited
choices' extra learning-curve refits are started with the run's own. It prints both
summaries and the paired differences (the other setting - the run's) of k=1 - single,
k=3 - top three and every k's estimate - T-MSE.

``--own-set-level``: the selections run with ``FCPSSelector(own_set_level=True)``; every
point's estimate less its shift is the default's (the same choice, draws and correction), so
it also prints the two paired by split (:func:`own_level_report`: the worst |estimate -
T-MSE| over k and k = 1's), the adoption rule's figures (docs/performance.md).

``--panels shape:NAME`` (a latent shape of ``bench/bench_shapes.py``): split s is draw s of
the shape (:func:`bench_shapes.drawn`), D the panel's rows (S:M:V 1:2:1 by groups) and T its
40,000 fresh items (:func:`bench.shape_recipes.combined_panel`); selections seeded 0 as the
sweep's ``select --seed 0``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time

import numpy as np

from fcps_core import read_panel
from fcps_core.data.encoding import encode_panel
from fcps_core.families import REGISTRY, PrefixFeatures
from fcps_core.files.json_values import json_ready
from fcps_core.reports.explain import smallest_tied
from fcps_core.selection import FCPSSelector, deployable_label_scale
from fcps_core.selection.baselines import single_judge_columns
from fcps_core.selection.folds import grouped_folds
from fcps_core.data.splits import draw_blocks
from fcps_core.paper.synthetic import make_regime

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")


#: rows of a synthetic panel's deployable block D and of its research test block T
SYNTH_ROWS = 1500


def shape_split(name: str, draw: int):
    """(panel, blocks) of draw ``draw`` of the latent shape ``name`` (``shape:NAME``): the
    panel's rows are D (grouped S:M:V 1:2:1, seeded by the draw), its fresh items T."""
    import tempfile
    from pathlib import Path
    from fcps_core.data.splits import Blocks
    from bench import bench_shapes
    from bench.shape_recipes import combined_panel
    shape = bench_shapes.drawn(next(sh for sh in bench_shapes.SHAPES if sh.name == name), draw)
    with tempfile.TemporaryDirectory() as tmp:
        panel_csv, _ = bench_shapes.write_panel(shape, Path(tmp))
        panel, D, T = combined_panel(panel_csv, Path(tmp) / f"{shape.name}.fresh.csv", Path(tmp) / "both.csv")
    uniq, inverse = np.unique(panel.group_ids[D], return_inverse=True)
    order = np.random.default_rng(draw).permutation(len(uniq))
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[order] = np.arange(len(uniq))
    part = np.digitize(rank[inverse.reshape(-1)], [len(uniq) // 4, len(uniq) - len(uniq) // 4])   # 0 S, 1 M, 2 V
    blocks = Blocks(S=D[part == 0], M=D[part == 1], V=D[part == 2], T=T, seed=draw)
    return panel, blocks


def load(name: str, population: int = 0):
    """A shared panel, or a synthetic regime of :data:`SYNTH_ROWS` rows; with ``population``
    the synthetic panel has that many more rows, all of which join T (see :func:`split`)."""
    if name in ("llmbar", "hanna"):
        return read_panel(os.path.join(DATA, f"{name}.csv"))
    if name.endswith((".csv", ".csv.gz")):          # a panel file (e.g. bench/panels/walk4_pair400.csv)
        return read_panel(name)
    return make_regime(name, rows=SYNTH_ROWS + population, judges=10, seed=7, group_size=2, tie_rate=0.1)


def split(panel, name: str, seed: int, population: int):
    """The split's blocks: 20 % of the labelled groups in T, the rest S:M:V = 1:2:1. With
    ``population`` (synthetic panels only) D keeps the size it has without it (80 % of
    :data:`SYNTH_ROWS`, drawn from the whole larger panel) and T holds every other row, so
    a T-MSE is a predictor's risk on many fresh items from the same generator rather than on
    a few hundred: estimate - T-MSE then measures the estimate's own error, not T's."""
    if population and name not in ("llmbar", "hanna"):
        n_d = int(round(0.8 * SYNTH_ROWS))
        counts = {"n_S": n_d // 4, "n_M": n_d - 2 * (n_d // 4), "n_V": n_d // 4,
                  "n_T": panel.n_rows - n_d}
        return draw_blocks(panel, counts=counts, seed=seed)
    return draw_blocks(panel, ratio=(1, 2, 1), test_share=0.2, seed=seed)


def _features(enc, rows, judges):
    return PrefixFeatures(patterns=[None] * len(judges), scores=enc.scores[rows][:, list(judges)])


def _cv_risk(enc, y, groups, D, judges, family, seed) -> float:
    """Grouped 5-fold cross-validated MSE on D of ``family`` over ``judges``."""
    loss = np.zeros(len(D))
    for _, tr, va in grouped_folds(groups[D], 5, 1, seed):
        model = REGISTRY[family]().fit(_features(enc, D[tr], judges), y[D[tr]])
        loss[va] = (y[D[va]] - model.predict(_features(enc, D[va], judges))) ** 2
    return float(loss.mean())


def _cv_single_risks(enc, y, groups, D, seed) -> np.ndarray:
    """Every judge's grouped 5-fold cross-validated MSE on D as a practitioner's isotonic map
    (:func:`fcps_core.selection.baselines.single_judge_columns`: increasing or decreasing as
    scikit-learn's ``increasing="auto"`` decides on each fold's training rows)."""
    loss = np.zeros((len(D), enc.scores.shape[1]))
    for _, tr, va in grouped_folds(groups[D], 5, 1, seed):
        pred = single_judge_columns(enc.scores[D[tr]], y[D[tr]], enc.scores[D[va]])
        loss[va] = (y[D[va], None] - pred) ** 2
    return loss.mean(axis=0)


def practitioner(panel, D, T, seed) -> dict:
    """The best single judge and the top-three stack, chosen and fitted on D only."""
    enc = encode_panel(panel, D)
    y, groups = panel.labels, panel.group_ids
    single = _cv_single_risks(enc, y, groups, D, seed)
    order = np.argsort(single, kind="stable")
    best = [int(order[0])]
    top3 = [int(j) for j in order[:3]]
    fit = lambda fam, js: REGISTRY[fam]().fit(_features(enc, D, js), y[D]).predict(_features(enc, T, js))  # noqa
    stack_fam = min(("ridge_iso", "logistic"), key=lambda f: _cv_risk(enc, y, groups, D, top3, f, seed))
    yT = y[T]
    single_T = single_judge_columns(enc.scores[D][:, best], y[D], enc.scores[T][:, best])[:, 0]
    return {"single": float(np.mean((yT - single_T) ** 2)), "single_judge": panel.judge_names[best[0]],
            "top3_judges": [panel.judge_names[j] for j in top3],
            "top3": float(np.mean((yT - fit(stack_fam, top3)) ** 2)), "top3_family": stack_fam}


def point_tmse(res, point, T) -> float:
    """T-MSE of a frontier point's deployed predictor: its distinct models, each by its
    weight (its share of the tied members)."""
    p = np.sum([m["weight"] * res.predict_rows(res.candidates[m["index"]], T) for m in point["members"]], axis=0)
    return float(np.mean((res.panel.labels[T] - p) ** 2))


def _member(c) -> dict:
    """A deployed member's path rule, prefix size, family and judge-set stability (mean
    Jaccard overlap of the folds' judge sets with the deployed one)."""
    return {"rule": c.path_rule, "K": c.K, "family": c.family, "stability": c.stability,
            "judges": list(c.judges)}


def other_setting(selector, option: str):
    """The other setting of a selector option the paired runs compare: a boolean's negation;
    ``limit_escape_z``: :data:`.limited_rule.ESCAPE_Z` where it is None, else None."""
    value = getattr(selector, option)
    if option == "limit_escape_z":
        from fcps_core.selection.limited_rule import ESCAPE_Z
        return ESCAPE_Z if value is None else None
    return not value


@contextlib.contextmanager
def other_random_setting(option: str = "random_under_limits"):
    """For the selections made inside the block, the frontier decided, replayed and
    corrected a second time with the other setting of the boolean selector field ``option``
    (``random_under_limits`` or another option read only by binding limits, e.g.
    ``full_limit_sets``: the unconstrained choice is the same under both): the levels' choices of both settings start their learning-curve
    refits together (:meth:`.frontier.FrontierChoices.member_sets`), and the second frontier
    is computed from the same bootstrap draws and correction refits as the run's own. Yields
    a list that receives each selection's other frontier (JSON-ready points)."""
    from dataclasses import replace
    from fcps_core.selection import crossfit as C
    from fcps_core.selection import frontier as F
    original_choices, original_with = F.FrontierChoices, C.with_frontier
    other_frontiers: list = []

    def flipped(result):
        sel = result.selector
        return replace(result, selector=replace(sel, **{option: other_setting(sel, option)}))

    class PairedChoices(original_choices):
        def __init__(self, result, heldout):
            super().__init__(result, heldout)
            self.other = original_choices(flipped(result), heldout)

        def member_sets(self):
            sets = {tuple(m): m for m in super().member_sets()}
            for m in self.other.member_sets():
                sets.setdefault(tuple(m), m)
            return list(sets.values())

    def paired_with_frontier(result, heldout, *, choices=None, corrections=None, replays=None, levels=None):
        if isinstance(choices, PairedChoices):
            other = flipped(result)
            other_replays = F.frontier_replays(other, heldout, choices.other) if replays is not None else None
            other_frontiers.append(json_ready(F.compute_frontier(other, heldout, choices.other, corrections,
                                                                 other_replays)))
        else:
            other_frontiers.append(None)
        return original_with(result, heldout, choices=choices, corrections=corrections, replays=replays,
                             levels=levels)
    F.FrontierChoices, C.with_frontier = PairedChoices, paired_with_frontier
    try:
        yield other_frontiers
    finally:
        F.FrontierChoices, C.with_frontier = original_choices, original_with


def _points(res, judge_points: list, T, cache: dict) -> dict:
    """Per k the frontier point's T-MSE (``cache``: per member set), estimate and members."""
    out = {}
    for p in judge_points:
        key = tuple(sorted((m["index"], round(m["weight"], 12)) for m in p["members"]))
        if key not in cache:
            cache[key] = point_tmse(res, p, T)
        tm = cache[key]
        dr = p["deployed_risk"] or {}
        est = dr.get("estimate")
        # the estimate without the point's own learning-curve correction (the deployed
        # point keeps the default's, which it always had)
        uncorrected = est if p["chosen"] else dr.get("bbc_estimate", est)
        # FCPSSelector(own_set_level=True): the shift in the estimate (estimate - shift is the
        # default's estimate, the same choice and draws)
        shift = float((dr.get("own_set_level") or {}).get("shift", 0.0))
        out[p["n_judges"]] = {"tmse": tm, "estimate": est, "uncorrected": uncorrected, "shift": shift,
                              "risk": p.get("risk"),
                              "used": len(p["judges"]), "chosen": p["chosen"],
                              # FCPSSelector(limit_rule_choice=True): which rule the point deploys
                              "limit_rule": (p.get("limit_rule") or {}).get("deployed"),
                              "kept_monotone": bool((p.get("limit_rule") or {}).get("kept_monotone")),
                              "judges": list(p["judges"]),
                              "members": [_member(res.candidates[m["index"]]) for m in p["members"]]}
    return out


def split_k(name: str, panel, k: int, population: int = 0):
    """(panel, blocks, selector seed) of split ``k`` of ``name``: draw k of a latent shape
    (``shape:NAME``, :func:`shape_split`, seed 0), else ``panel``'s split seeded 100 + k
    (:func:`split`)."""
    if name.startswith("shape:"):
        return (*shape_split(name.removeprefix("shape:"), k), 0)
    return panel, split(panel, name, 100 + k, population), 100 + k


def run_panel(name: str, splits: int, quiet: bool, population: int = 0, single: bool = False,
              options: dict | None = None, paired_random: bool | str = False):
    """The panel's summary (:func:`summarise`); with ``paired_random`` a pair (the run's
    summary, the other ``random_under_limits`` setting's; a field name: that boolean
    option's other setting) from the same selections."""
    panel = None if name.startswith("shape:") else load(name, population)
    recs, other_recs = [], []
    stack = contextlib.ExitStack()
    option = paired_random if isinstance(paired_random, str) else "random_under_limits"
    other_frontiers = stack.enter_context(other_random_setting(option)) if paired_random else None
    for k in range(splits):
        panel, blocks, seed = split_k(name, panel, k, population)
        scaled = deployable_label_scale(panel, blocks)
        D = np.sort(np.concatenate([blocks.S, blocks.M, blocks.V]))
        T = blocks.T
        t0 = time.perf_counter()
        c0 = time.process_time()
        res = FCPSSelector(seed=seed, single_judge_candidates=single, **(options or {})).fit(panel, blocks)
        seconds = time.perf_counter() - t0
        cpu = time.process_time() - c0
        d = json_ready(res.to_dict())
        judge_points = [p for p in d["frontier"] if p["constraint"] == "max_judges"]
        rec = {"seed": seed, "split": k, "seconds": seconds, "cpu": cpu, "J": len(panel.judges),
               **practitioner(scaled, D, T, seed), "points": {}}
        cache: dict = {}
        rec["points"] = _points(res, judge_points, T, cache)
        if paired_random:
            other = other_frontiers[-1]
            if other is None:
                raise RuntimeError("--paired-random: the selection made no frontier choices to pair")
            other_points = _points(res, [p for p in other if p["constraint"] == "max_judges"], T, cache)
        J = len(panel.judges)
        # k=1 diagnostics: the point's held-out risk (its columns come from each fold's own
        # path rule) against the held-out risk of its judge fixed in every fold (the
        # cross-fitted single-judge isotonic baseline), both minus T-MSE
        one = judge_points[0]
        sj = res.heldout.baselines.get("single_judges") if res.heldout is not None else None
        if one["n_judges"] == 1 and sj is not None and len(one["judges"]) == 1:
            j = panel.judge_names.index(one["judges"][0])
            yv = res.heldout.y
            rec["points"][1]["heldout"] = float(one["risk"])
            rec["points"][1]["fixed"] = float(np.mean([np.mean((yv - sj[r, :, j]) ** 2) for r in range(sj.shape[0])]))
        rec["default"] = rec["points"][J]["tmse"]
        tied = smallest_tied(d)
        rec["smallest_tied"] = rec["points"][tied["n_judges"]]["tmse"]
        rec["smallest_tied_k"] = tied["n_judges"]
        rec["smallest_tied_used"] = len(tied["judges"])
        rec["default_used"] = len(d["selected"]["judges"])
        recs.append(rec)
        if paired_random:
            # the other setting's points; the default (unconstrained) and smallest tied as the run's
            orec = {**rec, "points": other_points, "default": other_points[J]["tmse"]}
            other_recs.append(orec)
        if not quiet:
            sys.stderr.write(f"{name} split {k} seed {seed}: default {rec['default']:.4f} ({rec['default_used']} judges), "
                             f"smallest tied {rec['smallest_tied']:.4f} ({rec['smallest_tied_used']} judges); "
                             f"k=1 {rec['points'][1]['tmse']:.4f} vs single {rec['single']:.4f}; "
                             f"k=3 {rec['points'][min(3, J)]['tmse']:.4f} vs top3 {rec['top3']:.4f}; "
                             + (f"other setting k=1 {orec['points'][1]['tmse']:.4f}, "
                                f"k=3 {orec['points'][min(3, J)]['tmse']:.4f}; " if paired_random else "")
                             + f"{seconds:.1f}s (load {os.getloadavg()[0]:.1f})\n")
            sys.stderr.flush()
    stack.close()
    if paired_random:
        return summarise(name, recs), summarise(name, other_recs)
    return summarise(name, recs)


def paired_random_report(a: dict, b: dict, setting, option: str = "random_under_limits") -> tuple[str, dict]:
    """The paired differences (``b`` - ``a``, ``a`` the run's summary with
    ``random_under_limits=setting``, ``b`` the other setting's, split by split): k=1 -
    single, k=3 - top three, the worst point's |estimate - T-MSE| (the paired SE at the k
    worst in the worse setting) and the count of points outside +-0.005."""
    J = a["J"]
    pa, pb = a["per_split"], b["per_split"]
    other = other_setting(FCPSSelector(**{option: setting}), option)
    out = {"setting": setting, "other": other}
    lines = [f"{a['panel']}: paired, {option}={other} - {option}={setting} "
             f"({len(pa)} splits)"]
    for key, label in (("k1", "k=1 - single"), ("k3", "k=3 - top three")):
        base = "single" if key == "k1" else "top3"
        va = np.array([r[key] - r[base] for r in pa])
        vb = np.array([r[key] - r[base] for r in pb])
        dm, dse = _mean_se(vb - va)
        out[key] = {"a": _mean_se(va), "b": _mean_se(vb), "diff": (dm, dse),
                    "changed": int(np.count_nonzero(np.abs(vb - va) > 1e-12))}
        lines.append(f"  {label}: {va.mean():+.4f} -> {vb.mean():+.4f}; paired {dm:+.4f} (SE {dse:.4f}); "
                     f"{out[key]['changed']} splits changed")
    # the default (the point over all judges) under both settings, split by split
    dd = np.array([rb["default"] - ra["default"] for ra, rb in zip(pa, pb)])
    out["default_diff"] = {"max_abs": float(np.abs(dd).max()), "mean_se": _mean_se(dd)}
    lines.append(f"  default T-MSE: largest per-split |difference| {out['default_diff']['max_abs']:.3g}")
    ks = [k for k in range(1, J + 1) if all(k in r["bias"] for r in pa) and all(k in r["bias"] for r in pb)]
    ea = {k: np.array([r["bias"][k] for r in pa]) for k in ks}
    eb = {k: np.array([r["bias"][k] for r in pb]) for k in ks}
    worst_a, wa, worst_b, wb, at, se = worst_paired(ea, eb, ks)
    out["worst"] = {"a": (worst_a, wa), "b": (worst_b, wb), "diff": (worst_b - worst_a, se), "se_at": at}
    out["outside"] = {"a": int(sum(abs(ea[k].mean()) > 0.005 for k in ks)),
                      "b": int(sum(abs(eb[k].mean()) > 0.005 for k in ks)), "points": len(ks)}
    out["bias_diff"] = {k: _mean_se(eb[k] - ea[k]) for k in ks}
    lines.append(f"  worst |estimate - T-MSE|: {worst_a:.4f} (k={wa}) -> {worst_b:.4f} (k={wb}); paired "
                 f"{worst_b - worst_a:+.4f} (SE {se:.4f} at k={at})")
    lines.append(f"  points with |mean estimate - T-MSE| > 0.005: {out['outside']['a']} -> {out['outside']['b']} "
                 f"of {len(ks)}")
    out["non_monotone"] = {"a": non_monotone(pa), "b": non_monotone(pb)}
    lines.append(f"  points k with cross-fitted risk above point k-1's (all splits): "
                 f"{out['non_monotone']['a'][0]} -> {out['non_monotone']['b'][0]} of {out['non_monotone']['a'][1]}")
    # limit_rule_choice: how often rule B is deployed, and the estimate - T-MSE of the points
    # deploying it (the choice between the two rules is not replayed), against the same
    # points without the option (paired by split and k)
    for side, ps in (("a", pa), ("b", pb)):
        pts = [(i, k) for i, r in enumerate(ps) for k in r.get("rule_b", [])]
        if not pts:
            continue
        own = np.array([ps[i]["bias"][k] for i, k in pts if k in ps[i]["bias"]])
        other = pb if side == "a" else pa
        base = np.array([other[i]["bias"][k] for i, k in pts if k in ps[i]["bias"]])
        k3 = sum(1 for r in ps if min(3, J) in r.get("rule_b", []))
        out[f"rule_b_{side}"] = {"points": len(pts), "of": sum(len(r["bias"]) for r in ps), "k3": k3,
                                 "kept_monotone": sum(len(r.get("kept_monotone", [])) for r in ps),
                                 "bias": _mean_se(own), "bias_other_setting": _mean_se(base),
                                 "bias_diff": _mean_se(own - base)}
        o = out[f"rule_b_{side}"]
        lines.append(f"  rule B deployed ({'run' if side == 'a' else 'other'}): {o['points']} of {o['of']} points "
                     f"(k=3 on {k3} of {len(ps)} splits; {o['kept_monotone']} more kept A by the monotone guard); "
                     f"their estimate - T-MSE {o['bias'][0]:+.4f} (SE {o['bias'][1]:.4f}), the same points without "
                     f"the option {o['bias_other_setting'][0]:+.4f}, paired {o['bias_diff'][0]:+.4f} "
                     f"(SE {o['bias_diff'][1]:.4f})")
    lines.append("  estimate - T-MSE per k (run -> other, paired SE): " + ", ".join(
        f"{k}: {ea[k].mean():+.4f} -> {eb[k].mean():+.4f} ({out['bias_diff'][k][1]:.4f})"
        for k in ks if k <= 5 or k == J or k % 5 == 0 or abs(out["bias_diff"][k][0]) > 1e-12))
    return "\n".join(lines), out


def non_monotone(per_split: list[dict]) -> tuple[int, int]:
    """(frontier points k whose cross-fitted risk is above point k - 1's, points k >= 2 with
    both risks), over the splits of a summary's ``per_split``: "at most k judges" should be
    no worse than "at most k - 1" on the risk the choice read, but a rule that deploys
    exactly k judges (``full_limit_sets``) can make it so."""
    above = total = 0
    for r in per_split:
        risk = {int(k): v for k, v in (r.get("risk") or {}).items()}
        for k in sorted(risk):
            if k - 1 in risk:
                total += 1
                above += risk[k] > risk[k - 1] + 1e-12
    return above, total


def worst_paired(a: dict, b: dict, ks: list) -> tuple:
    """Per-split arrays ``a[k]``, ``b[k]`` (estimate - T-MSE at panel size k of two settings on
    the same splits): (|worst mean| of a, its k, the same of b, its k, the k where the worse
    one is worst, the paired SE of b - a there; nan with one split)."""
    wa = max(ks, key=lambda k: abs(a[k].mean()))
    wb = max(ks, key=lambda k: abs(b[k].mean()))
    worst_a, worst_b = abs(a[wa].mean()), abs(b[wb].mean())
    at = wa if worst_a >= worst_b else wb
    se = _mean_se(b[at] - a[at])[1] if len(a[at]) > 1 else float("nan")
    return worst_a, wa, worst_b, wb, at, se


def own_level_report(s: dict) -> tuple[str, dict]:
    """``--own-set-level``: the run's estimates (the option on) against the same estimates less
    their shifts (the default's, same splits, choices and draws), paired by split: the worst
    |mean estimate - T-MSE| over k of each (the paired SE at the k where the worse one is
    worst) and k = 1's, for the adoption rule in docs/performance.md."""
    ps = s["per_split"]
    ks = [k for k in range(1, s["J"] + 1) if all(k in r["bias"] for r in ps)]
    on = {k: np.array([r["bias"][k] for r in ps]) for k in ks}
    off = {k: np.array([r["bias_base"][k] for r in ps]) for k in ks}
    worst_off, w_off, worst_on, w_on, at, se = worst_paired(off, on, ks)
    k1 = ks[0]
    d1 = np.abs(on[k1].mean()) - np.abs(off[k1].mean())
    out = {"worst_off": (worst_off, w_off), "worst_on": (worst_on, w_on), "worst_diff": (worst_on - worst_off, se),
           "se_at": at, "k1_off": _mean_se(off[k1]), "k1_on": _mean_se(on[k1]),
           "k1_abs_diff": (float(d1), _mean_se(on[k1] - off[k1])[1]),
           "shifted_points": int(sum(np.count_nonzero(on[k] != off[k]) > 0 for k in ks)), "points": len(ks),
           "bias_diff": {k: _mean_se(on[k] - off[k]) for k in ks}}
    lines = [f"{s['panel']}: own_set_level on - off, paired ({len(ps)} splits; {out['shifted_points']} of {len(ks)} "
             f"points shifted on some split)",
             f"  worst |estimate - T-MSE|: off {worst_off:.4f} (k={w_off}) -> on {worst_on:.4f} (k={w_on}); "
             f"paired {worst_on - worst_off:+.4f} (SE {se:.4f} at k={at})",
             f"  k={k1}: off {off[k1].mean():+.4f} -> on {on[k1].mean():+.4f}; |bias| change {d1:+.4f} "
             f"(paired SE {out['k1_abs_diff'][1]:.4f})",
             "  estimate - T-MSE per k (off -> on): " + ", ".join(
                 f"{k}: {off[k].mean():+.4f} -> {on[k].mean():+.4f}" for k in ks
                 if k <= 5 or k == s["J"] or k % 5 == 0)]
    return "\n".join(lines), out


def _mean_se(v) -> tuple[float, float]:
    v = np.asarray(v, dtype=float)
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else float("nan")


def summarise(name: str, recs: list[dict]) -> dict:
    J = recs[0]["J"]
    out = {"panel": name, "splits": len(recs), "J": J}
    for key, a, b in (("k1_vs_single", lambda r: r["points"][1]["tmse"], lambda r: r["single"]),
                      ("k3_vs_top3", lambda r: r["points"][min(3, J)]["tmse"], lambda r: r["top3"]),
                      ("tied_vs_default", lambda r: r["smallest_tied"], lambda r: r["default"])):
        out[key] = _mean_se([a(r) - b(r) for r in recs])
    out["default"] = _mean_se([r["default"] for r in recs])
    out["smallest_tied"] = _mean_se([r["smallest_tied"] for r in recs])
    out["single"] = _mean_se([r["single"] for r in recs])
    out["top3"] = _mean_se([r["top3"] for r in recs])
    out["default_used"] = float(np.mean([r["default_used"] for r in recs]))
    out["smallest_tied_used"] = float(np.mean([r["smallest_tied_used"] for r in recs]))
    bias = {}
    for k in range(1, J + 1):
        v = [r["points"][k]["estimate"] - r["points"][k]["tmse"] for r in recs
             if k in r["points"] and r["points"][k]["estimate"] is not None]
        if v:
            bias[k] = _mean_se(v)
    out["bias"] = bias
    out["max_abs_bias"] = max(abs(m) for m, _ in bias.values()) if bias else None
    raw = {}
    for k in bias:
        raw[k] = _mean_se([r["points"][k]["uncorrected"] - r["points"][k]["tmse"] for r in recs
                           if k in r["points"] and r["points"][k]["uncorrected"] is not None])
    out["bias_uncorrected"] = raw
    out["max_abs_bias_uncorrected"] = max(abs(m) for m, _ in raw.values()) if raw else None
    fixed = [r for r in recs if "fixed" in r["points"].get(1, {})]
    if fixed:
        out["k1_heldout_bias"] = _mean_se([r["points"][1]["heldout"] - r["points"][1]["tmse"] for r in fixed])
        out["k1_fixed_bias"] = _mean_se([r["points"][1]["fixed"] - r["points"][1]["tmse"] for r in fixed])
    out["k1_used"] = max(r["points"][1]["used"] for r in recs)
    out["k3_used"] = max(r["points"][min(3, J)]["used"] for r in recs)
    out["seconds"] = float(np.mean([r["seconds"] for r in recs]))
    # per split, for paired comparisons between two runs (e.g. with and without
    # --single-judge-candidates): T-MSEs and the k=1 point's estimate - T-MSE
    out["per_split"] = [{"default": r["default"], "k1": r["points"][1]["tmse"], "k3": r["points"][min(3, J)]["tmse"],
                         "single": r["single"], "top3": r["top3"], "cpu": r["cpu"], "seed": r["seed"],
                         "top3_judges": r["top3_judges"],
                         "bias": {k: p["estimate"] - p["tmse"] for k, p in r["points"].items()
                                  if p["estimate"] is not None},
                         "bias_base": {k: p["estimate"] - p["shift"] - p["tmse"] for k, p in r["points"].items()
                                       if p["estimate"] is not None},
                         # limit_rule_choice: the points deploying rule B, and those where B's
                         # estimate was lower but the monotone guard kept A
                         "rule_b": [k for k, p in r["points"].items() if p.get("limit_rule") == "full_limit_linear"],
                         "kept_monotone": [k for k, p in r["points"].items() if p.get("kept_monotone")],
                         # each point's cross-fitted (held-out) risk, for non_monotone
                         "risk": {k: p["risk"] for k, p in r["points"].items() if p.get("risk") is not None},
                         "detail": {k: {"judges": r["points"][k]["judges"], "members": r["points"][k]["members"],
                                        "heldout": r["points"][k].get("heldout"), "fixed": r["points"][k].get("fixed")}
                                    for k in sorted({1, min(3, J), J})},
                         "k1_bias": (None if r["points"][1]["estimate"] is None
                                     else r["points"][1]["estimate"] - r["points"][1]["tmse"])} for r in recs]
    return out


def report(s: dict) -> str:
    f = lambda ms: f"{ms[0]:+.4f} (SE {ms[1]:.4f})"  # noqa: E731
    lines = [f"{s['panel']} ({s['J']} judges, {s['splits']} splits, {s['seconds']:.1f} s per selection):",
             f"  default (all judges; {s['default_used']:.1f} used) T-MSE {s['default'][0]:.4f}; smallest tied "
             f"point ({s['smallest_tied_used']:.1f} judges) {s['smallest_tied'][0]:.4f}; "
             f"smallest tied - default {f(s['tied_vs_default'])}",
             f"  --max-judges 1 (at most {s['k1_used']} judge) - best single judge (isotonic): "
             f"{f(s['k1_vs_single'])}",
             f"  --max-judges 3 (at most {s['k3_used']} judges) - top-three stack: {f(s['k3_vs_top3'])}",
             f"  default T-MSE {f(s['default'])}; k=1 estimate - T-MSE "
             f"{f(s['bias'][1]) if 1 in s['bias'] else '-'}",
             f"  deployed-risk estimate - T-MSE, largest |mean| over k: {s['max_abs_bias']:.4f} (SE of a k's mean "
             f"{min(se for _, se in s['bias'].values()):.4f} to {max(se for _, se in s['bias'].values()):.4f}); per k: "
             + ", ".join(f"{k}: {m:+.4f}" for k, (m, _) in sorted(s["bias"].items())
                         if k <= 5 or k == s["J"] or k % 5 == 0)]
    if s["bias_uncorrected"]:
        u = s["bias_uncorrected"]
        lines.append(f"  without the points' learning-curve corrections: largest |mean| {s['max_abs_bias_uncorrected']:.4f}"
                     f"; per k: " + ", ".join(f"{k}: {m:+.4f}" for k, (m, _) in sorted(u.items())
                                              if k <= 5 or k == s["J"] or k % 5 == 0))
    if "k1_heldout_bias" in s:
        lines.append(f"  k=1 held-out risk - T-MSE {f(s['k1_heldout_bias'])}; the same judge fixed in every fold "
                     f"(cross-fitted isotonic) - T-MSE {f(s['k1_fixed_bias'])}")
    return "\n".join(lines)


def _cpu_seconds() -> float:
    """CPU seconds of this process and its live worker processes (loky keeps its workers
    between calls, so a child's time is read from the process itself), plus reaped children."""
    import resource
    import psutil
    me = psutil.Process()
    total = sum(me.cpu_times()[:2])
    for child in me.children(recursive=True):
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.Error:
            pass
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return total + ru.ru_utime + ru.ru_stime


@contextlib.contextmanager
def _calls_timed(module, name: str, ends: list | None = None):
    """``module.name`` replaced, for the block, by a wrapper that appends each call's wall
    and CPU seconds (this process) to the two lists it yields, and (``ends``) the
    ``time.perf_counter()`` at which it returned."""
    orig = getattr(module, name)
    wall, cpu = [], []

    def timed(*args, **kwargs):
        t, c = time.perf_counter(), time.process_time()
        try:
            return orig(*args, **kwargs)
        finally:
            end = time.perf_counter()
            wall.append(end - t)
            cpu.append(time.process_time() - c)
            if ends is not None:
                ends.append(end)
    setattr(module, name, timed)
    try:
        yield wall, cpu
    finally:
        setattr(module, name, orig)


def _timing_panels(hanna: bool = False):
    """The timing runs' panels: the 2,000-row 7-judge synthetic panel and LLMBar (and HANNA)."""
    yield "2000 x 7 synthetic", make_regime("mixed", rows=2000, judges=7, seed=0, tie_rate=0.1, group_size=2)
    yield "LLMBar 838 x 65", read_panel(os.path.join(DATA, "llmbar.csv"))
    if hanna:
        yield "HANNA", read_panel(os.path.join(DATA, "hanna.csv"))


def median_interval(values: list, level: float = 0.9) -> tuple:
    """The median of ``values`` and a distribution-free interval for it: the order
    statistics whose ranks a Binomial(n, 1/2) puts ``level`` between (the sign test's
    interval; with fewer than 6 values, the least and the largest)."""
    from scipy.stats import binom
    v = np.sort(np.asarray(values, dtype=float))
    n = len(v)
    lo = int(binom.ppf((1 - level) / 2, n, 0.5))           # ranks lo+1 .. n-lo, 1-based
    lo = max(0, min(lo - 1, (n - 1) // 2)) if n >= 6 else 0
    return float(np.median(v)), float(v[lo]), float(v[n - 1 - lo])


def timing(repeat: int = 3) -> None:
    """The frontier's share of a default selection, folds in worker processes as
    ``bench/bench_select.py`` runs them: the 2,000-row 7-judge synthetic panel and LLMBar,
    ``repeat`` pairs of runs without and with the points' learning-curve refits, the order
    within a pair alternating. The frontier's work in a pair is :func:`compute_frontier`
    without the refits (timed in this process in the run without them; it then decides the
    levels itself) plus what the refits add (the pair's difference of CPU time, workers
    included, and of wall time). The selection without the frontier is the run without the
    refits less that part. Each pair gives a share; printed are their median and its 90 %
    sign-test interval (a host whose speed drifts between pairs moves both runs of a pair
    alike), then the medians of the runs as before. "From the choice on": the same wall
    share with each run's wall time after the default's choice (:func:`choose_deployed`,
    before which the frontier does nothing) in place of its whole wall time in the
    difference, which leaves out the folds' run-to-run noise."""
    import statistics
    from fcps_core import make_blocks, select
    from fcps_core.selection import crossfit as C
    from fcps_core.selection import frontier as F
    chosen_at = []          # when each selection's choice returned
    try:
        with _calls_timed(F, "compute_frontier") as (spent, spent_cpu), \
                _calls_timed(C, "choose_deployed", ends=chosen_at):
            for name, panel in _timing_panels():
                blocks = make_blocks(panel, split="1:2:1:1", seed=0)
                runs = {False: ([], [], [], []), True: ([], [], [], [])}
                tails = {False: [], True: []}
                for i in range(repeat):
                    for on in ((False, True) if i % 2 == 0 else (True, False)):
                        F.POINT_CORRECTIONS = on
                        spent.clear()
                        spent_cpu.clear()
                        chosen_at.clear()
                        t, c = time.perf_counter(), _cpu_seconds()
                        select(panel, blocks)
                        end = time.perf_counter()
                        walls, cpus, fw, fc = runs[on]
                        walls.append(end - t)
                        cpus.append(_cpu_seconds() - c)
                        fw.append(sum(spent))
                        fc.append(sum(spent_cpu))
                        tails[on].append(end - chosen_at[-1])
                (w_off, c_off, fw_off, fc_off), (w_on, c_on, _, _) = (np.array(runs[False]), np.array(runs[True]))
                tail_off, tail_on = np.array(tails[False]), np.array(tails[True])
                shares = {"wall": (w_on - (w_off - fw_off)) / (w_off - fw_off),
                          "wall from the choice on": (tail_on - (tail_off - fw_off)) / (w_off - fw_off),
                          "CPU": (c_on - (c_off - fc_off)) / (c_off - fc_off)}
                text = "; ".join(f"{k} {m * 100:+.0f} % (90 % interval {lo * 100:+.0f} to {hi * 100:+.0f} %)"
                                 for k, (m, lo, hi) in ((k, median_interval(v)) for k, v in shares.items()))
                med = {on: [statistics.median(v) for v in runs[on]] for on in runs}
                mw_off, mc_off, mfw_off, mfc_off = med[False]
                mw_on, mc_on, _, _ = med[True]
                base_w, base_c = mw_off - mfw_off, mc_off - mfc_off         # the selection without the frontier
                print(f"{name}: the frontier's share per pair of runs, median of {repeat}: {text}; "
                      f"medians of the runs: selection without the frontier {base_w:.2f} s wall, {base_c:.2f} CPU s "
                      f"(workers included), the points and their replays {mfc_off:.2f} CPU s, the points' "
                      f"learning-curve refits {mc_on - mc_off:+.2f} CPU s (load {os.getloadavg()[0]:.1f})", flush=True)
    finally:
        F.POINT_CORRECTIONS = True
    refit_cpu()


def refit_cpu() -> None:
    """The points' own learning-curve refits timed directly: one selection per panel in one
    process (``n_jobs=1``, so the refits run here and a wrapper sees them), the CPU time of
    the default's refit tasks and of the points' own (:func:`.crossfit.start_point_refits`)
    against the selection's."""
    from fcps_core import make_blocks, select
    from fcps_core.selection import crossfit as C
    with _calls_timed(C, "half_fold_configurations") as (_, spent):
        for name, panel in _timing_panels(hanna=True):
            blocks = make_blocks(panel, split="1:2:1:1", seed=0)
            spent.clear()
            c = time.process_time()
            res = select(panel, blocks, n_jobs=1)
            total = time.process_time() - c
            folds = len(spent) // 2 if len(spent) > res.selector.folds else len(spent)
            default, points = sum(spent[:folds]), sum(spent[folds:])
            print(f"{name}, one process: selection {total:.2f} CPU s; the default's half-size refits {default:.2f} s, "
                  f"the points' own {points:.2f} s (+{points / (total - points) * 100:.0f} %) "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)


def parts_cpu(runs: int = 3, hanna: bool = False, files: list | None = None) -> None:
    """The frontier's parts timed in one process (``n_jobs=1``, so every part runs here;
    CPU seconds, the least of ``runs`` selections, which a loaded machine inflates least):
    the levels' decisions (:class:`.frontier.FrontierChoices`), the bootstrap replays
    (:func:`.frontier.frontier_replays`), the default's half-size refits and the points'
    own (:func:`.crossfit.half_fold_configurations`, the first and second half of its calls),
    against the whole selection's CPU. The points themselves are not counted. ``files``: panel files timed instead of the timing panels
    (e.g. a ``bench_rows.continuous_csv`` proxy)."""
    from fcps_core import make_blocks, select
    from fcps_core.selection import crossfit as C
    from fcps_core.selection import frontier as F
    spent: dict[str, list] = {}

    class TimedChoices(F.FrontierChoices):
        def __init__(self, *args, **kwargs):
            c = time.process_time()
            super().__init__(*args, **kwargs)
            spent.setdefault("choices", []).append(time.process_time() - c)
    stack = contextlib.ExitStack()
    with stack:
        _, replays = stack.enter_context(_calls_timed(F, "frontier_replays"))
        _, halves = stack.enter_context(_calls_timed(C, "half_fold_configurations"))
        original = C.frontier.FrontierChoices
        C.frontier.FrontierChoices = TimedChoices
        stack.callback(setattr, C.frontier, "FrontierChoices", original)
        panels = ((os.path.basename(f), read_panel(f)) for f in files) if files else _timing_panels(hanna=hanna)
        for name, panel in panels:
            blocks = make_blocks(panel, split="1:2:1:1", seed=0)
            best: dict[str, float] = {}
            for _ in range(runs):
                spent.clear()
                replays.clear()
                halves.clear()
                c = time.process_time()
                select(panel, blocks, n_jobs=1)
                total = time.process_time() - c
                folds = len(halves) // 2
                parts = {"selection": total, "levels": sum(spent.get("choices", [])), "replays": sum(replays),
                         "default refits": sum(halves[:folds]), "points' refits": sum(halves[folds:])}
                for k, v in parts.items():
                    best[k] = min(best.get(k, np.inf), v)
            frontier_cpu = best["levels"] + best["replays"] + best["points' refits"]
            print(f"{name}, one process, least of {runs}: " + ", ".join(f"{k} {v:.3f}" for k, v in best.items())
                  + f" CPU s; levels + replays + points' refits {frontier_cpu:.3f} "
                  f"(+{frontier_cpu / (best['selection'] - frontier_cpu) * 100:.0f} % of the rest) "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--splits", type=int, default=6)
    ap.add_argument("--panels", nargs="+", default=["llmbar", "hanna", "additive", "mixed", "parity"])
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--population", type=int, default=0,
                    help="synthetic panels: this many more rows, all in T (D keeps its size), so T-MSE is "
                         "close to the risk on fresh items")
    ap.add_argument("--out", help="also write every panel's summary (bias per k included) to this JSON file")
    ap.add_argument("--timing", action="store_true", help="only the frontier's share of a selection's time")
    ap.add_argument("--repeat", type=int, default=3, help="--timing, --parts: runs per panel and setting")
    ap.add_argument("--parts", action="store_true",
                    help="only the frontier's parts' CPU in one process (the least of --repeat runs)")
    ap.add_argument("--panel-files", nargs="+", help="--parts: time these panel files instead")
    ap.add_argument("--single-judge-candidates", action="store_true",
                    help="run the selections with FCPSSelector(single_judge_candidates=True)")
    ap.add_argument("--stable-judge-sets", action="store_true",
                    help="run the selections with FCPSSelector(stable_judge_sets=True)")
    ap.add_argument("--own-set-level", action="store_true",
                    help="run the selections with FCPSSelector(own_set_level=True) and print the estimates "
                         "paired with the same estimates less their shifts (the default's)")
    ap.add_argument("--paired-random", action="store_true",
                    help="also decide, replay and score each selection's frontier with the other "
                         "random_under_limits setting, and print the paired differences")
    ap.add_argument("--paired-option", metavar="FIELD",
                    help="as --paired-random for another FCPSSelector option that only binding limits "
                         "read (a boolean, e.g. full_limit_sets; or limit_escape_z: None against 3.29)")
    args = ap.parse_args(argv)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    if args.timing:
        timing(args.repeat)
        return 0
    if args.parts:
        parts_cpu(args.repeat, files=args.panel_files)
        return 0
    summaries = []
    option = args.paired_option or ("random_under_limits" if args.paired_random else None)
    for name in args.panels:
        options = {**({"stable_judge_sets": True} if args.stable_judge_sets else {}),
                   **({"own_set_level": True} if args.own_set_level else {})}
        out = run_panel(name, args.splits, args.quiet, args.population, args.single_judge_candidates,
                        options or None, option or False)
        if option:
            setting = getattr(FCPSSelector(), option)
            text, paired = paired_random_report(out[0], out[1], setting, option)
            summaries.append({**out[0], option: setting, "other_setting": out[1], "paired": paired})
            print(report(out[0]), flush=True)
            print(f"  (the other setting, {option}={other_setting(FCPSSelector(**{option: setting}), option)}:)",
                  flush=True)
            print(report(out[1]), flush=True)
            print(text, flush=True)
        else:
            summaries.append(out)
            print(report(summaries[-1]), flush=True)
            if args.own_set_level:
                text, paired = own_level_report(out)
                summaries[-1]["own_set_level"] = paired
                print(text, flush=True)
        if args.out:
            import json
            with open(args.out, "w") as fh:
                json.dump(json_ready(summaries), fh, indent=1)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
