"""``stable_judge_sets``: a binding limit chooses only among candidates whose every fold built
the judge set they deploy (``judge_set_stability`` 1), :mod:`fcps_core.selection.constraints`."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core import make_blocks, select
from fcps_core.errors import MenuError
from fcps_core.files.json_values import json_ready
from fcps_core.paper.synthetic import make_regime
from fcps_core.selection.choice import GroupedLosses, choose
from fcps_core.selection.constraints import JudgeBits, PanelConstraint
from menu_helpers import FakeCandidate, option_runs

#: measured against the limited choice among every admissible candidate (full_limit_sets off)
MENU = dict(families=["mean_iso", "logistic", "ridge_iso", "table"], n_boot=60, n_jobs=1, full_limit_sets=False)


def _Cand(index, judges, stability):
    return FakeCandidate(index, judges, stability=stability)


NAMES = ["J0", "J1", "J2"]
#: c0: one judge, built by only some folds (stability 0.6); c1: one judge, every fold;
#: c2: two judges, every fold; c3: all three judges, no stability recorded (split protocol)
CANDS = [_Cand(0, ["J0"], 0.6), _Cand(1, ["J1"], 1.0), _Cand(2, ["J0", "J1"], 1.0), _Cand(3, NAMES, None)]
#: four one-row groups; means c0 1.0, c1 2.0, c2 1.5, c3 0.5
LOSSES = np.array([[1, 2, 1, 0], [1, 2, 2, 1], [1, 2, 1, 0], [1, 2, 2, 1]], dtype=float)


@pytest.mark.parametrize("use_bits", [False, True])
def test_a_binding_limit_drops_the_unstable_candidate(use_bits):
    bits = JudgeBits(CANDS, NAMES) if use_bits else None
    plain = PanelConstraint(max_judges=1)
    stable = PanelConstraint(max_judges=1, stable_only=True)
    assert plain.mask(CANDS, bits).tolist() == [True, True, False, False]
    assert stable.mask(CANDS, bits).tolist() == [False, True, False, False]
    # at most two judges: c0 is still out, c2 (every fold built it) in
    assert PanelConstraint(max_judges=2, stable_only=True).mask(CANDS, bits).tolist() == [False, True, True, False]
    # the argmin at one judge: c0 (mean 1.0) without the filter, c1 (mean 2.0) with it
    g = GroupedLosses(LOSSES, np.arange(4))
    rank = np.arange(4)
    kw = dict(tie_rank=rank, simple_rank=rank, signatures=np.arange(4), max_members=10)
    assert choose("argmin", g, allowed=plain.mask(CANDS, bits), **kw).chosen == 0
    assert choose("argmin", g, allowed=stable.mask(CANDS, bits), **kw).chosen == 1


def test_a_limit_that_excludes_nothing_is_not_filtered():
    """At most three judges admits every candidate: the unconstrained choice, unfiltered (c0
    stays eligible); no limit at all gives no mask."""
    assert PanelConstraint(max_judges=3, stable_only=True).mask(CANDS).tolist() == [True] * 4
    assert PanelConstraint(stable_only=True).mask(CANDS) is None


def test_no_stable_candidate_at_a_limit_keeps_the_admissible_ones():
    cands = [_Cand(0, ["J0"], 0.6), _Cand(1, ["J1"], 0.8), _Cand(2, ["J0", "J1"], 1.0)]
    assert PanelConstraint(max_judges=1, stable_only=True).mask(cands).tolist() == [True, True, False]


def test_budget_levels_are_filtered_as_well():
    costs = {"J0": {"cost": 1.0, "latency": 0}, "J1": {"cost": 1.0, "latency": 0}, "J2": {"cost": 5.0, "latency": 0}}
    con = PanelConstraint(budget=1.0, costs=costs, stable_only=True)
    assert con.mask(CANDS).tolist() == [False, True, False, False]


@pytest.fixture(scope="module")
def panel():
    return make_regime("mixed", rows=600, judges=6, seed=3, group_size=2, tie_rate=0.1)


@pytest.fixture(scope="module")
def runs(panel):
    return option_runs(panel, "stable_judge_sets", **MENU)


def test_limited_points_deploy_stable_sets_and_the_default_is_unchanged(runs):
    off, on = (json_ready(runs[k].to_dict()) for k in (False, True))
    assert on["menu"]["stable_judge_sets"] is True and off["menu"]["stable_judge_sets"] is False
    cands = runs[True].candidates
    J = len(runs[True].panel.judges)
    assert any(c.stability < 1 for c in cands)             # the filter has something to drop
    unstable_deployed_off = 0
    for p_on, p_off in zip(on["frontier"], off["frontier"]):
        assert p_on["n_judges"] == p_off["n_judges"]
        if p_on["n_judges"] == J:
            assert p_on["members"] == p_off["members"]            # the unconstrained choice
            continue
        assert all(cands[m["index"]].stability == pytest.approx(1.0) for m in p_on["members"])
        unstable_deployed_off += any(runs[False].candidates[m["index"]].stability < 1 for m in p_off["members"])
    assert unstable_deployed_off > 0          # without the option some limited point deploys an unstable set
    assert on["selected"] == off["selected"]
    assert on["deployed_risk"] == off["deployed_risk"]


def test_max_judges_deploys_the_stable_frontier_point(panel, runs):
    res = select(panel, make_blocks(panel, seed=0), seed=0, stable_judge_sets=True, max_judges=1, **MENU)
    d = json_ready(res.to_dict())
    point = next(p for p in json_ready(runs[True].to_dict())["frontier"] if p["n_judges"] == 1)
    assert {m["index"] for m in d["selected"].get("members") or [d["selected"]]} == \
        {m["index"] for m in point["members"]}
    assert point["deployed_risk"]["estimate"] == pytest.approx(res.deployed_risk["estimate"], rel=1e-9)


def test_stable_judge_sets_must_be_a_bool(panel):
    with pytest.raises(MenuError, match="stable_judge_sets must be True or False"):
        select(panel, make_blocks(panel, seed=0), seed=0, stable_judge_sets="yes", **MENU)
