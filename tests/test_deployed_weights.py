"""One deployed model per distinct model (issue 24): tied candidates whose refitted models
compute the same predictions are one member of the deployed average, with their summed share
(fcps_core.selection.members.deployed_weights); the average, as a function, is unchanged."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from fcps_core.selection.members import deployed_weights


def _result(predictions: dict[int, np.ndarray], judge_sets: dict[int, tuple], T: np.ndarray):
    n_rows = len(next(iter(predictions.values())))
    candidates = [SimpleNamespace(index=i, judge_idx=judge_sets[i]) for i in sorted(predictions)]
    return SimpleNamespace(candidates=candidates, panel=SimpleNamespace(n_rows=n_rows),
                           blocks=SimpleNamespace(T=T),
                           predict_rows=lambda c, rows: predictions[c.index][rows])


def test_same_judges_and_same_predictions_outside_T_are_one_member():
    base = np.array([0.1, 0.4, 0.4, 0.9, 0.2, 0.7])
    predictions = {
        0: base,
        1: base + np.array([0, 0, 1e-3, 0, 0, 0]),          # another function on the same judges
        2: base + np.array([0, 0, 0, 0, 0, 0.5]) + 1e-9,    # the same outside T (row 5), within 1e-6
        3: base.copy(),                                      # the same predictions, other judges
    }
    judges = {0: (0, 1), 1: (1, 0), 2: (0, 1), 3: (0, 2)}
    result = _result(predictions, judges, T=np.array([5]))
    # hand-computed: four members of 1/4; candidate 2 joins candidate 0
    assert deployed_weights(result, [0, 1, 2, 3]) == [(0, 0.5), (1, 0.25), (3, 0.25)]
    # T's row counts once it is not T: then 2 differs from 0 there
    result_no_T = _result(predictions, judges, T=np.array([], dtype=np.int64))
    assert deployed_weights(result_no_T, [0, 1, 2, 3]) == [(0, 0.25), (1, 0.25), (2, 0.25), (3, 0.25)]
    # one member, or no shared judge set: nothing is compared
    assert deployed_weights(result, [1]) == [(1, 1.0)]
    assert deployed_weights(result, [0, 3]) == [(0, 0.5), (3, 0.5)]


def test_a_default_on_few_binary_judges_deploys_each_model_once(tmp_path):
    """The unseen-shape bench's 6 binary judges x 300 items (bench/bench_shapes.py): before,
    its default averaged ridge + isotonic and one-coin + isotonic on the same three judges,
    refitted into one function, as two members. Now no two members of the predictor predict
    the same on the panel, the weights are the candidates' shares, and the predictor is the
    equal-weight average of the tied candidates outside T."""
    from bench.bench_shapes import SHAPES, write_panel
    from fcps_core.service.select import SelectRequest, run_select
    from fcps_core.service.upload import read_panel_file
    shape = next(s for s in SHAPES if s.name == "binqa_6x300_g3")
    path, _ = write_panel(shape, tmp_path)
    panel = read_panel_file(str(path))
    outcome = run_select(SelectRequest(panel=panel, seed=0))
    result, predictor = outcome.result, outcome.predictor
    assert result.members and len(predictor.members) < len(result.members)
    columns = [member.predict(panel) for _, member in predictor.members]
    for i in range(len(columns)):
        for j in range(i):
            assert np.max(np.abs(columns[i] - columns[j])) > 1e-6, (i, j)
    weights = [w for w, _ in predictor.members]
    n = len(result.members)
    assert abs(sum(weights) - 1.0) < 1e-12
    assert sorted(round(w * n, 9) for w in weights) == sorted(float(round(w * n)) for w in weights)
    members = result.to_dict()["selected"]["members"]
    assert [m["weight"] for m in members] == weights
    outside_T = np.setdiff1d(np.arange(panel.n_rows), result.blocks.T)
    equal_weight = np.mean([result.predict_rows(result.candidates[i], outside_T) for i in result.members], axis=0)
    assert np.max(np.abs(predictor.predict(panel)[outside_T] - equal_weight)) < 1e-9
