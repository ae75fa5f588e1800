"""Fixed single-judge candidates (``FCPSSelector(single_judge_candidates=True)``): "judge j
alone", an isotonic map of its score, the same judge in every fold.

Expected numbers come from scikit-learn's IsotonicRegression fitted on each fold's training
rows (an independent reference), never from the code under test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.isotonic import IsotonicRegression

from fcps_core import read_panel, select
from fcps_core.data.splits import Blocks
from fcps_core.errors import MenuError
from fcps_core.paper.synthetic import make_regime
from fcps_core.selection import FCPSSelector
from fcps_core.selection.members import model_key

#: a tiny panel: each row its own group; three judges with outputs in {0, 0.5, 1}, every
#: value at least twice per judge, so every leave-one-out training set holds each value and
#: the held-out prediction is the isotonic fit's value there (no interpolation)
LABELS = [0, 0, 1, 1, 0, 1, 1, 0, 1, 0, 1, 1]
J1 = [0, 0.5, 1, 1, 0, 0.5, 1, 0.5, 0, 0, 1, 0.5]
J2 = [0.5, 0, 0, 1, 1, 0.5, 1, 0, 0.5, 1, 0, 1]
J3 = [1, 1, 0, 0.5, 0.5, 0, 0, 1, 0.5, 1, 0, 0]


def _tiny():
    frame = pd.DataFrame({"item_id": [f"i{k}" for k in range(len(LABELS))], "label": LABELS,
                          "J1": J1, "J2": J2, "J3": J3})
    return read_panel(frame)


def _loo_isotonic_mse(x, y) -> float:
    """Leave-one-row-out MSE of sklearn's isotonic regression (clipped to [0, 1])."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    losses = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
        iso.fit(x[keep], y[keep])
        losses.append((y[i] - iso.predict(x[[i]])[0]) ** 2)
    return float(np.mean(losses))


def test_single_judge_risk_equals_independent_isotonic_fit():
    """With one group per row and as many folds as groups, each fold holds out one row, so
    judge j's candidate's cross-fitted risk is the leave-one-out MSE of an isotonic fit of
    the label on j's output, whatever the fold order."""
    panel = _tiny()
    n = panel.n_rows
    rows = np.arange(n)
    blocks = Blocks(S=rows[:3], M=rows[3:9], V=rows[9:], T=np.zeros(0, dtype=np.int64))
    res = FCPSSelector(single_judge_candidates=True, folds=n, repeats=1, n_boot=20, n_jobs=1,
                       families=("mean_iso", "ridge_iso")).fit(panel, blocks)
    singles = {c.judges[0]: c for c in res.candidates if c.path_rule == "single_judge"}
    assert sorted(singles) == ["J1", "J2", "J3"]
    for name, x in (("J1", J1), ("J2", J2), ("J3", J3)):
        c = singles[name]
        assert c.K == 1 and c.family == "mean_iso" and c.judges == [name]
        assert c.val_mse == pytest.approx(_loo_isotonic_mse(x, LABELS), abs=1e-12)
        assert c.stability == 1.0         # the same judge in every fold and in the refit


def test_option_off_offers_no_single_judge_candidate_and_is_recorded():
    panel = _tiny()
    rows = np.arange(panel.n_rows)
    blocks = Blocks(S=rows[:3], M=rows[3:9], V=rows[9:], T=np.zeros(0, dtype=np.int64))
    kw = dict(folds=4, repeats=1, n_boot=20, n_jobs=1, families=("mean_iso",))
    off = FCPSSelector(**kw).fit(panel, blocks)
    on = FCPSSelector(single_judge_candidates=True, **kw).fit(panel, blocks)
    assert not any(c.path_rule == "single_judge" for c in off.candidates)
    assert sum(c.path_rule == "single_judge" for c in on.candidates) == 3
    assert off.to_dict()["menu"]["single_judge_candidates"] is False
    assert on.to_dict()["menu"]["single_judge_candidates"] is True
    # the single paths are no ordering of the pool: the JSON's paths are the rules' own
    assert [p["rule"] for p in on.to_dict()["paths"]] == [p["rule"] for p in off.to_dict()["paths"]]


def test_single_judge_candidates_must_be_a_bool():
    with pytest.raises(MenuError, match="single_judge_candidates"):
        FCPSSelector(single_judge_candidates="yes").validate(3)


@pytest.fixture(scope="module")
def synthetic_on():
    panel = make_regime("additive", rows=500, judges=5, seed=3, group_size=2, tie_rate=0.1)
    return panel, select(panel, single_judge_candidates=True, n_boot=60, n_jobs=1, max_judges=1)


def test_max_judges_one_deploys_exactly_one_judge(synthetic_on):
    _, res = synthetic_on
    assert len(res.selected_dict()["judges"]) == 1
    members = res.deployed_members
    assert len({j for c in members for j in c.judge_idx}) == 1


def test_no_model_counted_twice(synthetic_on):
    """A single-judge candidate equal to a path rule's K=1 prefix in the same family is the
    same member: no deployed average and no frontier point lists one model twice."""
    _, res = synthetic_on
    keys = [model_key(c) for c in res.deployed_members]
    assert len(keys) == len(set(keys))
    for point in res.frontier or []:
        keys = [model_key(res.candidates[m["index"]]) for m in point["members"]]
        assert len(keys) == len(set(keys))
