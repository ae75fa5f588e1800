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


def test_drop_one_replays_sharing_unit_sums_match_the_plain_replays(panel, monkeypatch):
    """The replays of a tie rule read their paired SEs from unit sums formed once for all of
    them (:meth:`.choice.GroupedLosses.unit_sums_held`); the rows must be those of replays that
    form the sums per paired SE, to the bit (the reference path: no sums held)."""
    from fcps_core.selection import drop_one
    from fcps_core.selection.frontier import RuleReplay
    r = select(panel, make_blocks(panel, seed=0), families=["logistic", "ridge_iso", "mean_iso"], k_max=6,
               repeats=1, choice="tie_average", max_members=4)
    grouped = r.heldout.grouped(r.selector.objective)
    held_during = []
    decide = RuleReplay.decide

    def spying(self, *args, **kwargs):
        held_during.append("held_unit_sums" in self.grouped._cache)
        return decide(self, *args, **kwargs)
    monkeypatch.setattr(RuleReplay, "decide", spying)

    def fresh_rows():
        # no paired SE or spread kept from an earlier pass: each run computes its own
        for key in [k for k in grouped._cache if k == "spread" or (isinstance(k, tuple) and k[0] == "paired_se")]:
            del grouped._cache[key]
        return drop_one.drop_one_choices(r)
    shared = fresh_rows()
    assert len(held_during) >= 2 and all(held_during)          # the shared path was taken
    held_during.clear()
    monkeypatch.setattr(drop_one, "UNIT_SUM_CELLS", 0)          # nothing fits: sums formed per paired SE
    plain = fresh_rows()
    assert held_during and not any(held_during)
    assert shared == plain
    assert len({row["risk"] for row in shared["judges"] if row["risk"] is not None}) >= 2   # several replays' choices
