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


def _default_on_shape(tmp_path, name: str, draw: int = 0):
    """The default selection on an unseen-shape bench panel (bench/bench_shapes.py), and its
    predictor; the predictor's models are asserted pairwise distinct on the panel."""
    from bench.bench_shapes import SHAPES, drawn, write_panel
    from fcps_core.service.select import SelectRequest, run_select
    from fcps_core.service.upload import read_panel_file
    path, _ = write_panel(drawn(next(s for s in SHAPES if s.name == name), draw), tmp_path)
    panel = read_panel_file(str(path))
    outcome = run_select(SelectRequest(panel=panel, seed=0))
    result, predictor = outcome.result, outcome.predictor
    assert result.members and len(predictor.members) < len(result.members)
    columns = [member.predict(panel) for _, member in predictor.members]
    for i in range(len(columns)):
        for j in range(i):
            assert np.max(np.abs(columns[i] - columns[j])) > 1e-6, (i, j)
    return panel, result, predictor


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
    # hand-computed: four members of 1/4; candidates 2 (same judges) and 3 (other judges,
    # the same predictions) join candidate 0
    assert deployed_weights(result, [0, 1, 2, 3]) == [(0, 0.75), (1, 0.25)]
    # T's row counts once it is not T: then 2 differs from 0 there
    result_no_T = _result(predictions, judges, T=np.array([], dtype=np.int64))
    assert deployed_weights(result_no_T, [0, 1, 2, 3]) == [(0, 0.5), (1, 0.25), (2, 0.25)]
    # one member: nothing is compared
    assert deployed_weights(result, [1]) == [(1, 1.0)]
    assert deployed_weights(result, [0, 3]) == [(0, 1.0)]
    assert deployed_weights(result, [1, 3]) == [(1, 0.5), (3, 0.5)]


def test_a_model_with_a_judge_its_refit_ignores_is_the_same_member_on_fewer_judges():
    """Dawid-Skene with and without a judge that says the same on every row compute one
    function: one member, kept on the fewer judges whatever the member order, so the
    deployed predictor calls no judge none of its models needs. The sketch rows alone
    agreeing is not enough: a difference on any other read row keeps them apart."""
    n = 200
    base = np.linspace(0.05, 0.95, n)
    other = base.copy()
    other[7] += 0.01                       # off the sketch's 32 evenly spaced rows
    predictions = {0: base, 1: base.copy(), 2: base.copy(), 3: other}
    judges = {0: (0, 1, 2), 1: (0, 1), 2: (3, 4, 5, 6), 3: (0, 1)}
    result = _result(predictions, judges, T=np.array([], dtype=np.int64))
    sketch_rows = np.linspace(0, n - 1, 32).astype(np.int64)
    assert 7 not in sketch_rows
    assert deployed_weights(result, [0, 1]) == [(1, 1.0)]
    assert deployed_weights(result, [1, 0]) == [(1, 1.0)]
    # the first of the class's members on the fewest judges (member order among equals)
    assert deployed_weights(result, [2, 0, 1]) == [(1, 1.0)]
    assert deployed_weights(result, [0, 3]) == [(0, 0.5), (3, 0.5)]
    # a shared cache (the frontier's points) gives the same answer, read or not
    cache: dict = {}
    assert deployed_weights(result, [0, 3, 1], cache) == [(1, 2 / 3), (3, 1 / 3)]
    assert deployed_weights(result, [0, 3, 1], cache) == [(1, 2 / 3), (3, 1 / 3)]


def test_a_default_on_few_binary_judges_deploys_each_model_once(tmp_path):
    """The unseen-shape bench's 6 binary judges x 300 items (bench/bench_shapes.py): before,
    its default averaged ridge + isotonic and one-coin + isotonic on the same three judges,
    refitted into one function, as two members. Now no two members of the predictor predict
    the same on the panel, the weights are the candidates' shares, and the predictor is the
    equal-weight average of the tied candidates outside T."""
    panel, result, predictor = _default_on_shape(tmp_path, "binqa_6x300_g3")
    weights = [w for w, _ in predictor.members]
    n = len(result.members)
    assert abs(sum(weights) - 1.0) < 1e-12
    assert sorted(round(w * n, 9) for w in weights) == sorted(float(round(w * n)) for w in weights)
    members = result.to_dict()["selected"]["members"]
    assert [m["weight"] for m in members] == weights
    outside_T = np.setdiff1d(np.arange(panel.n_rows), result.blocks.T)
    equal_weight = np.mean([result.predict_rows(result.candidates[i], outside_T) for i in result.members], axis=0)
    assert np.max(np.abs(predictor.predict(panel)[outside_T] - equal_weight)) < 1e-9


def test_a_default_deploys_no_judge_only_a_merged_member_called(tmp_path):
    """The unseen-shape bench's binary 15 x 2,000 panel, draw 1 (bench/bench_shapes.py):
    the default averaged one-coin + isotonic on 14 judges and on those 14 plus a judge that
    says ``1`` on nearly every row; the two refitted models predict the same on every row,
    so they were one model named twice. Now they are one member (on the 14), and every
    reader of the deployed judges (the selected JSON, the chosen frontier point, the judges
    report, the predictor file) names the judges the distinct models call."""
    panel, result, predictor = _default_on_shape(tmp_path, "binqa_15x2000", draw=1)
    called = {j for _, member in predictor.members for j in member.judges}
    doc = result.to_dict()
    assert set(doc["selected"]["judges"]) == called == set(predictor.judges)
    chosen = [p for p in doc["frontier"] if p["chosen"]]
    assert len(chosen) == 1 and set(chosen[0]["judges"]) == called
    assert [m["index"] for m in chosen[0]["members"]] == [m["index"] for m in doc["selected"]["members"]]
    assert {row["judge"] for row in doc["judges_report"]["contribution"]["judges"]} == called
    # the tie set counts the deployed models as the JSON lists them (one sentence names both)
    tie = doc["tie"]
    assert tie["n_members"] == len(predictor.members) == len(doc["selected"]["members"])
    assert tie["n_models"] == tie["n_members"] + tie["n_tied"]
    # the predictor is still the equal-weight average of the tied candidates outside T
    outside_T = np.setdiff1d(np.arange(panel.n_rows), result.blocks.T)
    equal_weight = np.mean([result.predict_rows(result.candidates[i], outside_T) for i in result.members], axis=0)
    assert np.max(np.abs(predictor.predict(panel)[outside_T] - equal_weight)) < 1e-9
    np.testing.assert_allclose(result.predict_deployed(outside_T), equal_weight, atol=1e-9)


def test_weights_are_formed_once_per_member_list_across_replaced_results(monkeypatch):
    """The audit, the assessment and the frontier each ask for the deployed weights of a
    result that ``dataclasses.replace`` rebuilt in between; the weights memo is carried by
    every replace, so the members' predictions on every non-T row are formed once. Another
    member list, or other models, are formed again."""
    from dataclasses import dataclass, field, replace

    from fcps_core.selection import members as members_module

    @dataclass(frozen=True)
    class Result:
        candidates: list
        panel: object
        blocks: object
        models: dict
        predict_rows: object
        tag: int = 0
        weights_memo: dict = field(default_factory=dict)

    base = np.linspace(0.0, 1.0, 50)
    predictions = {0: base, 1: base.copy(), 2: base + 0.3}
    calls = []
    first = Result(candidates=[SimpleNamespace(index=i, judge_idx=(i,)) for i in range(3)],
                   panel=SimpleNamespace(n_rows=50), blocks=SimpleNamespace(T=np.array([3, 4])),
                   models={}, predict_rows=lambda c, rows: calls.append(c.index) or predictions[c.index][rows])
    assert deployed_weights(first, [0, 1, 2]) == [(0, 2 / 3), (2, 1 / 3)]
    made = len(calls)
    assert made > 0
    later = replace(first, tag=1)
    assert deployed_weights(later, [0, 1, 2]) == [(0, 2 / 3), (2, 1 / 3)]
    assert len(calls) == made                      # the memo answered
    deployed_weights(later, [1, 2])
    assert len(calls) > made                       # another member list is compared
    refitted = replace(first, models={"other": 1})
    monkeypatch.setattr(members_module, "_distinct_weights", lambda *a: [(9, 1.0)])
    assert deployed_weights(refitted, [0, 1, 2]) == [(9, 1.0)]      # other models: formed again


def test_members_on_the_same_judges_that_differ_on_the_sketch_are_not_predicted_on_every_row():
    """Two families on the same judges usually differ on the sketch's evenly spaced rows;
    only pairs that agree there are predicted on every non-T row."""
    n = 400
    base = np.linspace(0.05, 0.95, n)
    predictions = {0: base, 1: base + 0.01, 2: base.copy()}
    judges = {0: (0, 1), 1: (0, 1), 2: (0, 1)}
    asked = []
    result = _result(predictions, judges, T=np.array([], dtype=np.int64))
    predict = result.predict_rows
    result.predict_rows = lambda c, rows: asked.append((c.index, len(rows))) or predict(c, rows)
    assert deployed_weights(result, [0, 1]) == [(0, 0.5), (1, 0.5)]
    assert all(size <= 32 for _, size in asked)            # the sketch told them apart
    assert deployed_weights(result, [0, 2]) == [(0, 1.0)]
    assert any(size == n for _, size in asked)             # agreeing sketches: every row compared
