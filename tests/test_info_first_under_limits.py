"""``info_first_under_limits``: a binding limit (``max_judges``, ``budget``, every frontier
level below all judges) chooses only among the ``info_first`` path's prefixes (judges in the
order of their own single-judge risk), unless none fits; the unconstrained choice is the
same either way (:mod:`fcps_core.selection.constraints`). Off by default (measured in
docs/performance.md)."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core import FCPSSelector, make_blocks, select
from fcps_core.errors import MenuError
from fcps_core.files.json_values import json_ready
from fcps_core.paper.synthetic import make_regime
from fcps_core.selection.choice import GroupedLosses, choose
from fcps_core.selection.constraints import JudgeBits, PanelConstraint, selector_constraint
from menu_helpers import FakeCandidate, deployed, limited_points_admitted, option_runs

#: measured against the limited choice among every admissible candidate (full_limit_sets off)
MENU = dict(families=["mean_iso", "logistic", "ridge_iso", "table"], n_boot=60, n_jobs=1, full_limit_sets=False)

NAMES = ["J0", "J1", "J2"]
#: c0: the random path's first judge; c1: info_first's; c2: complexity_penalized's
#: two-judge prefix; c3: all three judges on info_first
CANDS = [FakeCandidate(0, ["J0"], rule="random"), FakeCandidate(1, ["J1"], rule="info_first"),
         FakeCandidate(2, ["J0", "J2"], rule="complexity_penalized"), FakeCandidate(3, NAMES, rule="info_first")]
#: four one-row groups; means c0 1.0, c1 2.0, c2 0.75, c3 0.5
LOSSES = np.array([[1, 2, 1, 0], [1, 2, 0, 1], [1, 2, 1, 0], [1, 2, 1, 1]], dtype=float)
KW = dict(tie_rank=np.arange(4), simple_rank=np.arange(4), signatures=np.arange(4), max_members=10)


@pytest.mark.parametrize("use_bits", [False, True])
def test_a_binding_limit_admits_only_info_first_prefixes(use_bits):
    bits = JudgeBits(CANDS, NAMES) if use_bits else None
    plain = PanelConstraint(max_judges=2)
    only = PanelConstraint(max_judges=2, info_first_only=True)
    assert plain.mask(CANDS, bits).tolist() == [True, True, True, False]
    assert only.mask(CANDS, bits).tolist() == [False, True, False, False]
    # the argmin at two judges: complexity_penalized's pair c2 (0.75) without the filter, c1 with it
    g = GroupedLosses(LOSSES, np.arange(4))
    assert choose("argmin", g, allowed=plain.mask(CANDS, bits), **KW).chosen == 2
    assert choose("argmin", g, allowed=only.mask(CANDS, bits), **KW).chosen == 1


def test_a_limit_that_excludes_nothing_keeps_every_path():
    assert PanelConstraint(max_judges=3, info_first_only=True).mask(CANDS).tolist() == [True] * 4
    assert PanelConstraint(info_first_only=True).mask(CANDS) is None


def test_no_info_first_prefix_within_a_limit_keeps_the_admissible_ones():
    cands = [FakeCandidate(0, ["J0"], rule="random"), FakeCandidate(1, ["J1"], rule="complexity_penalized"),
             FakeCandidate(2, ["J0", "J1"], rule="info_first")]
    assert PanelConstraint(max_judges=1, info_first_only=True).mask(cands).tolist() == [True, True, False]


def test_budget_filters_the_same_way():
    costs = {"J0": {"cost": 1.0, "latency": 0}, "J1": {"cost": 1.0, "latency": 0}, "J2": {"cost": 5.0, "latency": 0}}
    assert PanelConstraint(budget=2.0, costs=costs, info_first_only=True).mask(CANDS).tolist() == \
        [False, True, False, False]
    assert PanelConstraint(budget=2.0, costs=costs).mask(CANDS).tolist() == [True, True, False, False]


def test_the_selector_field_sets_the_constraint():
    assert selector_constraint(FCPSSelector(max_judges=2, info_first_under_limits=True)).info_first_only is True
    assert selector_constraint(FCPSSelector(max_judges=2)).info_first_only is False
    assert FCPSSelector().info_first_under_limits is False        # not the default (docs/performance.md)


# -- a panel whose limited choices use other paths' prefixes when they may -------------------
@pytest.fixture(scope="module")
def panel():
    return make_regime("parity", rows=500, judges=6, seed=0, group_size=2, tie_rate=0.1)


@pytest.fixture(scope="module")
def runs(panel):
    return option_runs(panel, "info_first_under_limits", **MENU)


def test_limited_points_deploy_info_first_prefixes_and_the_default_is_unchanged(runs):
    off, on = (json_ready(runs[k].to_dict()) for k in (False, True))
    other_off = limited_points_admitted(on, off, runs[True].candidates, lambda c: c.path_rule == "info_first")
    assert other_off > 0          # the precondition: without the option a limited point uses another path


@pytest.mark.parametrize("k", [1, 3])
def test_max_judges_deploys_the_frontier_point_on_info_first(panel, runs, k):
    """select(max_judges=k) with the option deploys the frontier's point k of the
    unconstrained run with the option, and its own bootstrap (honesty replaying the limited
    rule) gives the point's estimate."""
    res = select(panel, make_blocks(panel, seed=0), seed=0, info_first_under_limits=True, max_judges=k, **MENU)
    d = json_ready(res.to_dict())
    point = next(p for p in json_ready(runs[True].to_dict())["frontier"]
                 if p["constraint"] == "max_judges" and p["n_judges"] == k)
    assert deployed(d) == {m["index"] for m in point["members"]}
    assert all(res.candidates[i].path_rule == "info_first" for i in deployed(d))
    assert point["deployed_risk"]["bbc_estimate"] == pytest.approx(res.deployed_risk["bbc_estimate"], rel=1e-9)
    assert point["deployed_risk"]["estimate"] == pytest.approx(res.deployed_risk["estimate"], rel=1e-9)


def test_a_menu_without_info_first_still_chooses_under_a_limit(panel):
    blocks = make_blocks(panel, seed=0)
    kw = dict(MENU, paths=("random", "complexity_penalized"), max_judges=2, seed=0)
    on = json_ready(select(panel, blocks, info_first_under_limits=True, **kw).to_dict())
    off = json_ready(select(panel, blocks, info_first_under_limits=False, **kw).to_dict())
    assert deployed(on) == deployed(off) and on["deployed_risk"] == off["deployed_risk"]


def test_argmin_reads_the_same_admissible_set(panel):
    blocks = make_blocks(panel, seed=0)
    kw = dict(MENU, choice="argmin", max_judges=2, seed=0)
    on = select(panel, blocks, info_first_under_limits=True, **kw)
    assert on.candidates[on.selected_index].path_rule == "info_first"
    best = min((c for c in on.candidates if len(set(c.judge_idx)) <= 2 and c.path_rule == "info_first"),
               key=lambda c: c.val_risk)
    assert on.candidates[on.selected_index].val_risk == pytest.approx(best.val_risk)


def test_budget_points_include_the_info_first_front(panel):
    """With judge costs the budget levels include the risk-cost front of the info_first
    prefixes, and a budget point deploys another path's prefix only where no info_first
    prefix fits within it."""
    costs = {n: {"cost": c, "latency": 0.0} for n, c in zip(panel.judge_names, [1.0, 2.0, 3.0, 1.5, 2.5, 0.5])}
    res = select(panel, make_blocks(panel, seed=0), seed=0, judge_costs=costs, info_first_under_limits=True, **MENU)
    cands = res.candidates
    cost = np.array([sum(costs[j]["cost"] for j in set(c.judges)) for c in cands])
    risk = np.array([c.val_risk for c in cands])
    info = [i for i, c in enumerate(cands) if c.path_rule == "info_first"]

    def front(idx):
        levels, best = [], np.inf
        for i in sorted(idx, key=lambda i: (cost[i], risk[i])):
            if risk[i] < best - 1e-12:
                best = risk[i]
                levels.append(float(cost[i]))
        return sorted(set(levels))
    points = [p for p in json_ready(res.to_dict())["frontier"] if p["constraint"] == "budget"]
    got = [p["cost"] for p in points]
    assert set(front(info)) <= set(got) and set(front(range(len(cands)))) <= set(got)
    top = max(cost)
    for p in points:
        if p["cost"] >= top - 1e-9:
            continue                      # excludes nothing: the unconstrained choice
        fits_info = any(cost[i] <= p["cost"] + 1e-9 for i in info)
        other = any(cands[m["index"]].path_rule != "info_first" for m in p["members"])
        assert not (fits_info and other)
        assert sum(costs[j]["cost"] for j in p["judges"]) <= p["cost"] + 1e-9


def test_info_first_under_limits_must_be_a_bool(panel):
    with pytest.raises(MenuError, match="info_first_under_limits must be True or False"):
        select(panel, make_blocks(panel, seed=0), seed=0, info_first_under_limits="no", **MENU)


def test_the_json_menu_records_the_limit_and_estimate_options(runs):
    """A JSON reader sees every measured, not adopted option the run used (they change what
    a limit may choose or how an estimate is levelled): the two runs differ in the one they
    set, and carry the defaults of the others."""
    off, on = (json_ready(runs[k].to_dict())["menu"] for k in (False, True))
    assert off["info_first_under_limits"] is False and on["info_first_under_limits"] is True
    for menu in (off, on):
        assert menu["random_under_limits"] is True and menu["own_set_level"] is False
