"""The limited rule's escape (:mod:`fcps_core.selection.limited_rule`): the best candidate
within a limit replaces the full-limit prefix's choice when it is lower by more than z paired
SEs; its in-bag paired statistic per bootstrap draw."""

import numpy as np

from fcps_core.selection.choice import GroupedLosses
from fcps_core.selection.limited_rule import escapes, paired_margins


def test_paired_margins_equal_the_grouped_paired_se_per_draw():
    """Per-unit sums with a draw's group counts give GroupedLosses.paired_se's statistic with
    that draw's weights (a hand-sized panel: 7 groups of 1 to 3 rows, two loss columns)."""
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(7), [1, 2, 3, 1, 2, 3, 2])
    losses = rng.random((len(groups), 2))
    g = GroupedLosses(losses, groups)
    rows = g.unit_rows
    sums = g.unit_sums()                     # (units, 2); here every group is its own unit
    W = rng.integers(0, 3, size=(5, 7)).astype(float)
    W[0] = 1.0                                # every group once: the plain statistic
    unit_counts = np.stack([np.bincount(g.group_unit, weights=w, minlength=len(rows)) for w in W])
    d, se = paired_margins(np.tile(sums[:, 1] - sums[:, 0], (5, 1)), rows, unit_counts)
    for b, w in enumerate(W):
        means = g.means(w)
        want = g.paired_se(0, w=w)[1]
        assert np.isclose(d[b], means[1] - means[0], rtol=1e-12, atol=1e-15)
        assert np.isclose(se[b], want, rtol=1e-12, atol=1e-15)
    # by hand for draw 0 (every group once): the clustered SE of the per-group differences
    D = np.bincount(groups, weights=losses[:, 1] - losses[:, 0])
    n = np.bincount(groups).astype(float)
    dd = D.sum() / n.sum()
    assert np.isclose(d[0], dd)
    assert np.isclose(se[0], np.sqrt(np.sum((D - dd * n) ** 2) * 7 / 6) / n.sum())


def test_escape_needs_more_than_the_margin_and_a_real_se():
    assert escapes(-0.04, 0.01, 3.29) and not escapes(-0.03, 0.01, 3.29)
    assert not escapes(-0.04, 0.01, None)
    np.testing.assert_array_equal(escapes(np.array([-1.0, -1.0, 0.5]), np.array([0.1, np.nan, 0.1])),
                                  [True, False, False])


def test_heldout_escape_reads_the_two_averages_paired_by_group():
    """On a HeldOut built from raw rows: the difference of the two averages' mean losses and
    the clustered SE of the per-group differences, by hand."""
    from fcps_core.selection.folds import HeldOut
    from fcps_core.selection.limited_rule import heldout_escape
    rng = np.random.default_rng(1)
    n = 60
    groups = np.repeat(np.arange(20), 3)
    y = rng.integers(0, 2, n).astype(float)
    good = np.clip(y * 0.8 + 0.1 + rng.normal(0, 0.05, n), 0, 1)
    bad = rng.random(n)
    preds = np.stack([bad, good, (good + bad) / 2], axis=1)[None]       # (repeats, rows, candidates)

    class P:
        labels = y
        group_ids = groups
    heldout = HeldOut.of(P, np.arange(n), preds, {})
    rec = heldout_escape(heldout, "mse", [0], [1, 2], z=3.29)
    avg = (preds[0, :, 1] + preds[0, :, 2]) / 2
    D = np.bincount(groups, weights=(y - avg) ** 2 - (y - bad) ** 2)
    m = np.full(20, 3.0)
    d = D.sum() / n
    se = np.sqrt(np.sum((D - d * m) ** 2) * 20 / 19) / n
    assert np.isclose(rec["diff"], d) and np.isclose(rec["se"], se)
    assert rec["escaped"] == (d < -3.29 * se) and rec["escaped"]


def _complementary_panel(n: int = 300, seed: int = 0):
    """y = (u + v + w) / 3; a strong judge of y and its near-duplicate rank first by own risk
    (the best single judges), three judges each reading one of u, v, w (weak alone, exact
    together), two noisy judges. Under at most 2 judges the first two by own risk are the
    strong judge and its duplicate; two of the readers are far better."""
    import pandas as pd
    rng = np.random.default_rng(seed)
    u, v, w = rng.random(n), rng.random(n), rng.random(n)
    strong = u + v + w + rng.normal(0, 0.45, n)
    return pd.DataFrame({"item_id": [f"i{i}" for i in range(n)], "label": (u + v + w) / 3,
                         "strong": strong, "strong_dup": strong + rng.normal(0, 0.01, n),
                         "reads_u": u + rng.normal(0, 0.02, n), "reads_v": v + rng.normal(0, 0.02, n),
                         "reads_w": w + rng.normal(0, 0.02, n),
                         "noisy1": u + v + w + rng.normal(0, 1.5, n), "noisy2": u + v + w + rng.normal(0, 2.0, n)})


def test_escape_deploys_the_clearly_better_set_and_both_replays_agree():
    """Under --max-judges 2 the prefix rule deploys the strong judge and its duplicate; the
    escape deploys the two complementary judges (lower by far more than 3.29 paired SEs).
    The frontier's replay of the escape (its chain) and the user limit's (honesty._bbc) are
    written apart and must give the same bootstrap estimate for that point."""
    from fcps_core import select
    df = _complementary_panel()
    plain = select(df, seed=0, max_judges=2, limit_escape_z=None)
    assert set(plain.selected.judges if not plain.members else
               {j for i in plain.members for j in plain.candidates[i].judges}) == {"strong", "strong_dup"}
    limited = select(df, seed=0, max_judges=2, limit_escape_z=3.29)
    judges = {j for i in (limited.members or [limited.selected.index]) for j in limited.candidates[i].judges}
    assert len(judges) == 2 and judges < {"reads_u", "reads_v", "reads_w"}
    test = limited.choice_info["limit_escape"]
    assert test["escaped"] and test["diff"] < -3.29 * test["se"]
    whole = select(df, seed=0, limit_escape_z=3.29)
    point = next(p for p in whole.frontier if p["constraint"] == "max_judges" and p["n_judges"] == 2)
    assert set(point["judges"]) == judges and point["limit_escape"]["escaped"]
    assert np.isclose(point["deployed_risk"]["bbc_estimate"], limited.deployed_risk["bbc_estimate"],
                      rtol=1e-12, atol=1e-15)
    # the escape lowers the estimate: the replay deploys two readers in its draws too
    assert limited.deployed_risk["estimate"] < plain.deployed_risk["estimate"] * 0.8



def test_the_screen_never_drops_what_the_escape_deploys():
    """The screen after the first repeat bounds every candidate within a limit by one calling a
    subset of its judges, so the escaped points (the best within their limits) are those of a
    run without the screen, replays included."""
    from fcps_core import select
    df = _complementary_panel()
    screened = select(df, seed=0, limit_escape_z=3.29).to_dict()
    full = select(df, seed=0, limit_escape_z=3.29, screen_se=None).to_dict()
    assert sum(bool((p.get("limit_escape") or {}).get("escaped")) for p in screened["frontier"]) >= 2
    assert screened["frontier"] == full["frontier"]


def test_drop_one_under_a_limit_applies_the_escape():
    """y = (u + v + w + x) / 4, four readers and a noisy strong judge with its duplicate; under
    --max-judges 2 dropping a deployed reader leaves no info_first prefix of two judges
    without it but a shorter one, while two other readers do as well: with the escape the
    row's choice is that pair (change about 0), without it the shorter prefix (a large
    change that overstates the judge)."""
    from dataclasses import replace

    import pandas as pd
    from fcps_core import select
    from fcps_core.selection.drop_one import drop_one_choices
    rng = np.random.default_rng(0)
    n = 400
    u, v, w, x = (rng.random(n) for _ in range(4))
    s = u + v + w + x
    strong = s + rng.normal(0, 0.8, n)
    df = pd.DataFrame({"item_id": [f"i{i}" for i in range(n)], "label": s / 4, "strong": strong,
                       "strong_dup": strong + rng.normal(0, 0.01, n), "reads_u": u + rng.normal(0, 0.02, n),
                       "reads_v": v + rng.normal(0, 0.02, n), "reads_w": w + rng.normal(0, 0.02, n),
                       "reads_x": x + rng.normal(0, 0.02, n), "noisy": s + rng.normal(0, 1.5, n)})
    r = select(df, seed=0, max_judges=2, limit_escape_z=3.29)
    with_escape = {row["judge"]: row for row in drop_one_choices(r)["judges"]}
    without = {row["judge"]: row for row in drop_one_choices(replace(r, selector=replace(r.selector,
                                                                                     limit_escape_z=None)))["judges"]}
    changed = [j for j in with_escape if with_escape[j]["change"] is not None
               and with_escape[j]["change"] != without[j]["change"]]
    assert changed
    for j in changed:
        assert with_escape[j]["K"] == 2 and without[j]["K"] < 2
        assert with_escape[j]["change"] < without[j]["change"] - 0.002
        assert with_escape[j]["ci"][0] < 0 < with_escape[j]["ci"][1]


def test_the_escape_replays_equal_a_loop_over_draws():
    """Every frontier point's estimate on the complementary panel against the limited rule,
    escape included, replayed draw by draw and limit by limit on raw rows
    (``test_frontier._check_replays_by_hand``); some draws escape."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parent))
    from fcps_core import select
    from test_frontier import _check_replays_by_hand
    res = select(_complementary_panel(), seed=0, n_jobs=1)
    _check_replays_by_hand(res)
    assert _check_replays_by_hand.escaped_draws > 0


def _escape_reference(unit_rows, sums, pairs, counts, todo, z, block):
    """The escape test of every draw in ``todo`` summed as draws_escaped's blocks sum it
    (``block`` draws at a time), with no draw decided beforehand."""
    out = {}
    for a in range(0, len(todo), block):
        rows = todo[a:a + block]
        d, se = paired_margins(sums[pairs[a:a + block, 0]] - sums[pairs[a:a + block, 1]], unit_rows,
                               counts[rows].astype(float))
        out.update(zip(rows.tolist(), escapes(d, se, z).tolist()))
        out.setdefault("margins", []).extend(zip(d.tolist(), se.tolist()))
    return out


def test_screened_escapes_answer_as_the_summed_test_at_every_margin():
    """draws_escaped with integer per-unit counts decides the draws whose answer rounding
    cannot change from bounds (_screen_escapes) and sums only the blocks holding others (on
    many units: here the block size ``cells`` is lowered so that 3,000 units are many): its answers equal
    the test summed draw by draw, at z values far from every draw's margin and at each
    draw's own margin -d/SE (where only the summed test can answer); there the bounds decide
    no draw wrongly."""
    from types import SimpleNamespace
    from fcps_core.selection.limited_rule import _screen_escapes, draws_escaped
    rng = np.random.default_rng(3)
    units, B = 3000, 40
    unit_rows = rng.integers(1, 4, size=units)
    counts = rng.poisson(1.0, size=(B, units)).astype(np.uint16)
    counts[5, :] = 0
    counts[5, 7] = 1                                    # one group drawn: no SE, never escapes
    # four predictors; their per-unit sums, the third close to the first
    sums = rng.random((4, units)) * unit_rows
    sums[2] = sums[0] - 0.002 * unit_rows + rng.normal(0, 1e-3, units)
    keys = [(0,), (1,), (2,), (3, 1)]
    within = [[int(rng.choice([0, 2]))] for _ in range(B)]
    prefix = [list(keys[int(rng.choice([1, 3]))]) for _ in range(B)]
    prefix[9] = list(within[9])                         # the same predictor: not tested
    opened = np.ones(B, dtype=bool)
    opened[11] = False
    grouped = SimpleNamespace(unit_rows=unit_rows)
    table = {k: i for i, k in enumerate(keys)}

    def unit_sums_of(ks):
        return np.stack([sums[table[k]] for k in ks])
    todo = np.array([b for b in range(B) if opened[b] and sorted(prefix[b]) != sorted(within[b])])
    index: dict = {}
    pairs = np.array([[index.setdefault(tuple(within[b]), len(index)), index.setdefault(tuple(prefix[b]), len(index))]
                      for b in todo])
    local = unit_sums_of(list(index))
    margins = _escape_reference(unit_rows, local, pairs, counts, todo, 1.0, 16)["margins"]
    own = [-d / se for d, se in margins if np.isfinite(se) and se > 0]
    undecided = 0
    for z in [0.0, 0.5, 3.29, 50.0] + own[:8]:
        want = _escape_reference(unit_rows, local, pairs, counts, todo, z, 16)
        got = draws_escaped(grouped, None, prefix, within, opened, z, unit_sums_of, block=16, draw_counts=counts,
                            cells=1 << 12)
        assert [bool(got[b]) for b in todo] == [want[b] for b in todo.tolist()]
        assert not got[9] and not got[11] and not got[5]
        decided, sure = _screen_escapes(local, pairs, unit_rows, counts, todo, z, 16, 1 << 12)
        assert [bool(s) for s in sure[decided]] == [want[b] for b in todo[decided].tolist()]
        undecided += int((~decided).sum())
    assert undecided > 0                                # the own margins were left to the test


def test_the_tie_of_an_escaped_limit_is_the_escaped_choices():
    """Walk 12 (20 continuous metrics, --max-judges 8): the escape deployed the best model
    within the limit (held-out 0.000248) while the result's tie was the prefix rule's, led by a
    model at 0.001324, so the page called models 5 times worse "tied" with the deployment. The
    tie of an escaped choice is now taken among every candidate within the limit, as the choice
    itself: its best is deployed, and every tied model is within one paired SE of it."""
    from fcps_core import select
    df = _complementary_panel()
    limited = select(df, seed=0, max_judges=2, limit_escape_z=3.29)
    assert limited.choice_info["limit_escape"]["escaped"]
    tie = limited.to_dict()["tie"]
    deployed = set(limited.members or [limited.selected.index])
    assert tie["best_index"] in deployed, (tie["best_index"], deployed)
    own = float(limited.selected_val["val_mse"]) if limited.members else limited.selected.val_risk
    for a in tie["alternatives"]:
        assert a["diff"] <= (a["se"] or 0.0) + 1e-12
        assert a["risk"] < own + 0.01, (a, own)       # near the deployed, not the prefix rule's


def test_the_loosest_points_estimate_does_not_depend_on_the_point_deployed():
    """Walk 12 (this panel: 20 continuous metrics, 1,500 items): deploying a smaller panel moved
    the all-judges point's estimate (0.000195 as the deployed default's, 0.000198 once 8 judges
    were deployed: it shared the replay of the tighter limits deploying the same predictor,
    10 to 19, whose draws choose otherwise now and then). The loosest point now always has its
    own replay: a limited run's all-judges point equals the unconstrained run's estimate."""
    from pathlib import Path

    from fcps_core import make_blocks, read_panel, select
    panel = read_panel(Path(__file__).resolve().parents[1] / "bench" / "panels" / "walk4_cont1500.csv.gz")
    whole = select(panel, make_blocks(panel, seed=0), seed=0)
    limited = select(panel, make_blocks(panel, seed=0), seed=0, max_judges=8)
    J = len(panel.judges)
    loosest = next(p for p in limited.frontier if p["constraint"] == "max_judges" and p["n_judges"] == J)
    assert not loosest["chosen"]
    assert np.isclose(loosest["deployed_risk"]["estimate"], whole.deployed_risk["estimate"], rtol=1e-9, atol=1e-15)
    assert np.allclose(loosest["deployed_risk"]["ci"], whole.deployed_risk["ci"], rtol=1e-9, atol=1e-15)
