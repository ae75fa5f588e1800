"""Drop one judge without refits (fcps_core/selection/drop_one.py): every judge the deployed
predictor calls gets a drop-one change and a signed weight, for one model and for an average."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core import make_blocks, select
from fcps_core.paper.synthetic import make_regime


@pytest.fixture(scope="module")
def panel():
    return make_regime("mixed", rows=600, judges=6, seed=3, tie_rate=0.05)


def test_argmin_drop_one_is_the_best_candidate_without_the_judge(panel):
    r = select(panel, make_blocks(panel, seed=0), families=["logistic", "ridge_iso"], k_max=6, repeats=1,
               choice="argmin")
    d = r.to_dict()
    cands = d["candidates"]
    deployed = next(c for c in cands if c["index"] == d["selected"]["index"])
    rows = d["judges_report"]["contribution"]["judges"]
    assert {j["judge"] for j in rows} == set(d["selected"]["judges"])
    for row in rows:
        without = [c["val_risk"] for c in cands if row["judge"] not in c["judges"]]
        if not without:
            assert row["drop_risk_change"] is None and row["drop_note"]
            continue
        # independent reference: the lowest recorded held-out risk among the candidates without the judge
        assert row["drop_risk_change"] == pytest.approx(min(without) - deployed["val_risk"], abs=1e-12)
        lo, hi = row["drop_ci"]
        assert lo <= row["drop_risk_change"] <= hi
        assert row["drop_risk_change"] >= -1e-12           # the deployed choice saw those candidates too
        words = row["drop_verdict"]
        assert ("raises the risk" in words) == (lo > 0) and ("lowers the risk" in words) == (hi < 0)


def test_every_judge_of_an_average_gets_a_weight_and_a_drop_one_change(panel):
    r = select(panel, make_blocks(panel, seed=0), families=["logistic", "ridge_iso", "mean_iso"], k_max=6,
               repeats=1, choice="tie_average", max_members=4)
    d = r.to_dict()
    contrib = d["judges_report"]["contribution"]
    models = contrib["models"]
    used = {n for m in (d["selected"]["members"] or [d["selected"]]) for n in m["judges"]}
    assert {j["judge"] for j in contrib["judges"]} == used
    for j in contrib["judges"]:
        assert j["drop_risk_change"] is not None or j["drop_note"], j
        weighted = [m["weights"] for m in models if m["weights"]]
        # the signed weight: the mean over the weighted models, 0 in a model without the judge
        assert j["weight"] == pytest.approx(np.mean([w.get(j["judge"], 0.0) for w in weighted]))
        assert isinstance(j["shared_with"], list)
