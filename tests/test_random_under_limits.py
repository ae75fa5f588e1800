"""``random_under_limits``: whether a binding limit (``max_judges``, ``budget``, every frontier
level below all judges) may choose a prefix of the ``random`` path (a random judge ordering,
the paper's control), :mod:`fcps_core.selection.constraints`. The unconstrained choice is
the same either way; when only random prefixes fit a limit, the limit keeps them."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core import FCPSSelector, make_blocks, select
from fcps_core.errors import MenuError
from fcps_core.files.json_values import json_ready
from fcps_core.paper.synthetic import make_regime
from fcps_core.selection.choice import GroupedLosses, choose
from fcps_core.selection.constraints import JudgeBits, PanelConstraint
from menu_helpers import FakeCandidate, deployed, limited_points_admitted, option_runs

#: measured against the limited choice among every admissible candidate (full_limit_sets off)
MENU = dict(families=["mean_iso", "logistic", "ridge_iso", "table"], n_boot=60, n_jobs=1, full_limit_sets=False)


def _Cand(index, judges, rule):
    return FakeCandidate(index, judges, rule=rule)


NAMES = ["J0", "J1", "J2"]
#: c0: the random path's first judge; c1: info_first's; c2: a random two-judge prefix;
#: c3: all three judges on the random path
CANDS = [_Cand(0, ["J0"], "random"), _Cand(1, ["J1"], "info_first"), _Cand(2, ["J0", "J2"], "random"),
         _Cand(3, NAMES, "random")]
#: four one-row groups; means c0 1.0 (the best single judge), c1 2.0, c2 1.5, c3 0.5
LOSSES = np.array([[1, 2, 1, 0], [1, 2, 2, 1], [1, 2, 1, 0], [1, 2, 2, 1]], dtype=float)
KW = dict(tie_rank=np.arange(4), simple_rank=np.arange(4), signatures=np.arange(4), max_members=10)


@pytest.mark.parametrize("use_bits", [False, True])
def test_a_binding_limit_leaves_the_random_prefixes_out(use_bits):
    bits = JudgeBits(CANDS, NAMES) if use_bits else None
    plain = PanelConstraint(max_judges=1)
    without = PanelConstraint(max_judges=1, exclude_random=True)
    assert plain.mask(CANDS, bits).tolist() == [True, True, False, False]
    assert without.mask(CANDS, bits).tolist() == [False, True, False, False]
    assert PanelConstraint(max_judges=2, exclude_random=True).mask(CANDS, bits).tolist() == \
        [False, True, False, False]
    # the argmin at one judge: the random prefix c0 (mean 1.0) with it, c1 (2.0) without
    g = GroupedLosses(LOSSES, np.arange(4))
    assert choose("argmin", g, allowed=plain.mask(CANDS, bits), **KW).chosen == 0
    assert choose("argmin", g, allowed=without.mask(CANDS, bits), **KW).chosen == 1


def test_a_limit_that_excludes_nothing_keeps_the_random_prefixes():
    """At most three judges admits every candidate: the unconstrained choice (c3, a random
    prefix, stays eligible); no limit at all gives no mask."""
    assert PanelConstraint(max_judges=3, exclude_random=True).mask(CANDS).tolist() == [True] * 4
    assert PanelConstraint(exclude_random=True).mask(CANDS) is None


def test_only_random_prefixes_within_a_limit_are_kept():
    cands = [_Cand(0, ["J0"], "random"), _Cand(1, ["J1"], "random"), _Cand(2, ["J0", "J1"], "info_first")]
    assert PanelConstraint(max_judges=1, exclude_random=True).mask(cands).tolist() == [True, True, False]


def test_budget_levels_leave_them_out_as_well():
    costs = {"J0": {"cost": 1.0, "latency": 0}, "J1": {"cost": 1.0, "latency": 0}, "J2": {"cost": 5.0, "latency": 0}}
    assert PanelConstraint(budget=1.0, costs=costs, exclude_random=True).mask(CANDS).tolist() == \
        [False, True, False, False]
    assert PanelConstraint(budget=1.0, costs=costs).mask(CANDS).tolist() == [True, True, False, False]


# -- a panel whose limited choices are random prefixes when they may be ----------------------
@pytest.fixture(scope="module")
def panel():
    """Parity judges: the info_first and complexity_penalized paths' small prefixes are no
    better than a random ordering's, and random prefixes win (or join) every limited choice
    when they may."""
    return make_regime("parity", rows=500, judges=6, seed=0, group_size=2, tie_rate=0.1)


@pytest.fixture(scope="module")
def runs(panel):
    return option_runs(panel, "random_under_limits", **MENU)


def test_limited_points_deploy_no_random_prefix_and_the_default_is_unchanged(runs):
    on, off = (json_ready(runs[k].to_dict()) for k in (True, False))
    random_on = limited_points_admitted(off, on, runs[False].candidates, lambda c: c.path_rule != "random")
    assert random_on > 0          # the precondition: with random prefixes allowed, a limited point uses one


@pytest.mark.parametrize("k", [1, 3])
def test_max_judges_deploys_the_frontier_point_without_random_prefixes(panel, runs, k):
    """select(max_judges=k) without random prefixes deploys the frontier's point k of the
    unconstrained run with the same setting, and its own bootstrap (honesty replaying the
    limited rule) gives the point's estimate (the frontier's replay of that level)."""
    res = select(panel, make_blocks(panel, seed=0), seed=0, random_under_limits=False, max_judges=k, **MENU)
    d = json_ready(res.to_dict())
    point = next(p for p in json_ready(runs[False].to_dict())["frontier"]
                 if p["constraint"] == "max_judges" and p["n_judges"] == k)
    assert deployed(d) == {m["index"] for m in point["members"]}
    assert all(res.candidates[i].path_rule != "random" for i in deployed(d))
    assert point["deployed_risk"]["bbc_estimate"] == pytest.approx(res.deployed_risk["bbc_estimate"], rel=1e-9)
    assert point["deployed_risk"]["estimate"] == pytest.approx(res.deployed_risk["estimate"], rel=1e-9)


def test_a_menu_of_random_paths_only_still_chooses_under_a_limit(panel):
    """Only the random path in the menu: every limit keeps its prefixes (no error), and the
    choice is the one random prefixes allowed make."""
    blocks = make_blocks(panel, seed=0)
    kw = dict(MENU, paths=("random",), max_judges=2, seed=0)
    on = json_ready(select(panel, blocks, random_under_limits=True, **kw).to_dict())
    off = json_ready(select(panel, blocks, random_under_limits=False, **kw).to_dict())
    assert deployed(off) == deployed(on) and off["deployed_risk"] == on["deployed_risk"]
    assert len(off["selected"]["judges"]) <= 2


def test_argmin_leaves_them_out_as_its_replay_does(panel):
    """The argmin rule (the paper's) reads the same admissible set as the tie rules."""
    blocks = make_blocks(panel, seed=0)
    kw = dict(MENU, choice="argmin", max_judges=1, seed=0)
    off = select(panel, blocks, random_under_limits=False, **kw)
    assert off.candidates[off.selected_index].path_rule != "random"
    on = select(panel, blocks, random_under_limits=True, **kw)
    assert on.candidates[on.selected_index].path_rule == "random"        # what is left out
    best = min((c for c in on.candidates if len(set(c.judge_idx)) <= 1), key=lambda c: c.val_risk)
    assert on.candidates[on.selected_index].val_risk == pytest.approx(best.val_risk)


def test_limits_may_choose_random_prefixes_by_default(panel, runs):
    """Not adopted as the default (docs/performance.md): the default selector's frontier is
    the ``random_under_limits=True`` run's."""
    assert FCPSSelector().random_under_limits is True
    default = json_ready(select(panel, make_blocks(panel, seed=0), seed=0, **MENU).to_dict())
    assert default["frontier"] == json_ready(runs[True].to_dict())["frontier"]


def test_budget_points_are_the_levels_of_the_candidates_a_budget_may_choose(panel):
    """With judge costs, the budget levels include the risk-cost front of the candidates off
    the random path (a level of the whole front may be a random prefix's, which a binding
    budget leaves out), and a budget point deploys a random prefix only where nothing else
    fits within it."""
    costs = {n: {"cost": c, "latency": 0.0} for n, c in zip(panel.judge_names, [1.0, 2.0, 3.0, 1.5, 2.5, 0.5])}
    res = select(panel, make_blocks(panel, seed=0), seed=0, judge_costs=costs, random_under_limits=False, **MENU)
    cands = res.candidates
    cost = np.array([sum(costs[j]["cost"] for j in set(c.judges)) for c in cands])
    risk = np.array([c.val_risk for c in cands])
    off = [i for i, c in enumerate(cands) if c.path_rule != "random"]

    def front(idx):          # the cheapest-first levels where the lowest risk so far falls
        levels, best = [], np.inf
        for i in sorted(idx, key=lambda i: (cost[i], risk[i])):
            if risk[i] < best - 1e-12:
                best = risk[i]
                levels.append(float(cost[i]))
        return sorted(set(levels))
    points = [p for p in json_ready(res.to_dict())["frontier"] if p["constraint"] == "budget"]
    got = [p["cost"] for p in points]
    assert set(front(off)) <= set(got) and set(front(range(len(cands)))) <= set(got)
    assert set(front(off)) - set(front(range(len(cands))))      # the precondition: levels only the filter makes
    for p in points:
        fits_off = any(cost[i] <= p["cost"] + 1e-9 for i in off)
        uses_random = any(cands[m["index"]].path_rule == "random" for m in p["members"])
        assert not (fits_off and uses_random)
        assert sum(costs[j]["cost"] for j in p["judges"]) <= p["cost"] + 1e-9


def test_random_under_limits_must_be_a_bool(panel):
    with pytest.raises(MenuError, match="random_under_limits must be True or False"):
        select(panel, make_blocks(panel, seed=0), seed=0, random_under_limits="no", **MENU)
