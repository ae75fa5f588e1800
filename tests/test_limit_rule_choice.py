"""``limit_rule_choice``: every binding limit (``max_judges``, ``budget``, every frontier level
below all judges) deploys the one of two limited rules with the lower deployed-risk estimate:
A, the limited choice, or B, the ``info_first`` prefix that uses the whole limit in the linear
stack families (``ridge_iso``, ``logistic``) and their tie average; each with its own bootstrap
replay and learning-curve correction. The choice over all judges is the same either way
(:mod:`fcps_core.selection.constraints`, :mod:`fcps_core.selection.frontier`). Off by default
(measured in docs/performance.md)."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core import FCPSSelector, make_blocks, select
from fcps_core.errors import MenuError
from fcps_core.files.json_values import json_ready
from fcps_core.paper.synthetic import make_regime
from fcps_core.selection.constraints import (LINEAR_STACK_FAMILIES, PanelConstraint, linear_full_limit,
                                             rule_b_selector, selector_constraint)
from menu_helpers import FakeCandidate, deployed, option_runs

#: measured against the limited choice among every admissible candidate (full_limit_sets off)
MENU = dict(families=["mean_iso", "logistic", "ridge_iso", "table", "backoff"], n_boot=60, n_jobs=1, full_limit_sets=False)

NAMES = ["J0", "J1", "J2"]
#: info_first's path J1, J2, J0: its 1-prefix (c0), its 2-prefix in three families (c1-c3), a
#: random pair (c4) and its 3-prefix (c5)
CANDS = [FakeCandidate(0, ["J1"], rule="info_first", family="logistic"),
         FakeCandidate(1, ["J1", "J2"], rule="info_first", family="ridge_iso"),
         FakeCandidate(2, ["J1", "J2"], rule="info_first", family="logistic"),
         FakeCandidate(3, ["J1", "J2"], rule="info_first", family="table"),
         FakeCandidate(4, ["J0", "J1"], rule="random", family="logistic"),
         FakeCandidate(5, ["J1", "J2", "J0"], rule="info_first", family="logistic")]


def test_rule_b_admits_the_full_limit_prefix_in_the_linear_families():
    assert set(LINEAR_STACK_FAMILIES) == {"ridge_iso", "logistic"}
    b2 = PanelConstraint(max_judges=2, linear_full_limit=True)
    assert b2.mask(CANDS).tolist() == [False, True, True, False, False, False]
    assert PanelConstraint(max_judges=1, linear_full_limit=True).mask(CANDS).tolist() == \
        [True, False, False, False, False, False]
    # rule B reads the limit alone: the other filters do not narrow it
    both = PanelConstraint(max_judges=2, linear_full_limit=True, exclude_random=True, info_first_only=True)
    assert both.mask(CANDS).tolist() == b2.mask(CANDS).tolist()
    # a limit that excludes nothing is no limit
    assert PanelConstraint(max_judges=3, linear_full_limit=True).mask(CANDS).tolist() == [True] * 6


def test_rule_b_has_no_candidate_without_a_linear_full_limit_prefix():
    only_table = [FakeCandidate(0, ["J1"], rule="info_first", family="logistic"),
                  FakeCandidate(1, ["J1", "J2"], rule="info_first", family="table"),
                  FakeCandidate(2, ["J0", "J1", "J2"], rule="info_first", family="logistic")]
    assert not linear_full_limit(only_table, np.array([True, True, False])).any()
    off_path = [FakeCandidate(0, ["J0"], rule="random", family="logistic"),
                FakeCandidate(1, ["J0", "J1"], rule="info_first", family="logistic")]
    assert not linear_full_limit(off_path, np.array([True, False])).any()


def test_the_selector_field_sets_the_constraint():
    assert FCPSSelector().limit_rule_choice is False        # not the default (docs/performance.md)
    on = selector_constraint(FCPSSelector(max_judges=2, limit_rule_choice=True, full_limit_sets=False))
    assert on.rule_choice is True and on.linear_full_limit is False
    # rule_choice alone leaves the limited choice's mask (rule A) as it is
    assert on.mask(CANDS).tolist() == PanelConstraint(max_judges=2).mask(CANDS).tolist()
    b = selector_constraint(rule_b_selector(FCPSSelector(max_judges=2, limit_rule_choice=True)))
    assert b.linear_full_limit is True
    assert selector_constraint(FCPSSelector(max_judges=2)).rule_choice is False


def test_limit_rule_choice_must_be_a_bool():
    panel = make_regime("additive", rows=60, judges=3, seed=0)
    with pytest.raises(MenuError, match="limit_rule_choice must be True or False"):
        select(panel, make_blocks(panel, seed=0), seed=0, limit_rule_choice="yes", **MENU)


# -- a panel where rule B's estimate is lower at some limits (additive: the linear stacks
# -- fit), and one where rule A's is lower at every limit (parity) -----------------------------
def _additive():
    return make_regime("additive", rows=400, judges=6, seed=0, group_size=2, tie_rate=0.1, judge_noise=0.1)


def _parity():
    return make_regime("parity", rows=500, judges=6, seed=0, group_size=2, tie_rate=0.1)


@pytest.fixture(scope="module")
def additive():
    return _additive()


@pytest.fixture(scope="module")
def additive_runs(additive):
    return option_runs(additive, "limit_rule_choice", **MENU)


@pytest.fixture(scope="module")
def parity_runs():
    return option_runs(_parity(), "limit_rule_choice", **MENU)


def _judge_points(d: dict) -> list:
    return [p for p in d["frontier"] if p["constraint"] == "max_judges"]


def test_the_default_choice_is_unchanged(additive_runs, parity_runs):
    for runs in (additive_runs, parity_runs):
        off, on = (json_ready(runs[k].to_dict()) for k in (False, True))
        assert off["selected"] == on["selected"] and off["deployed_risk"] == on["deployed_risk"]
        J = len(on["panel"]["judges"])
        # the deployed point itself; its change from the tighter points (fewer_judges_estimate) is theirs to move
        own = lambda p: {k: v for k, v in p.items() if k != "fewer_judges_estimate"}      # noqa: E731
        assert own(_judge_points(on)[-1]) == own(_judge_points(off)[-1]) and _judge_points(on)[-1]["n_judges"] == J
        assert off["menu"]["limit_rule_choice"] is False and on["menu"]["limit_rule_choice"] is True
        # the option off records nothing of it
        assert all("limit_rule" not in p for p in off["frontier"])


def test_rule_b_deployed_where_its_estimate_is_lower(additive_runs):
    off, on = (json_ready(additive_runs[k].to_dict()) for k in (False, True))
    cands = additive_runs[True].candidates
    chose_b = 0
    for p_off, p_on in zip(_judge_points(off)[:-1], _judge_points(on)[:-1]):
        rule = p_on["limit_rule"]
        est = rule["estimates"]
        # rule A is the limited choice without the option, with its estimate
        assert est["limited"] == pytest.approx(p_off["deployed_risk"]["estimate"], rel=1e-12)
        if rule["deployed"] == "full_limit_linear":
            chose_b += 1
            assert est["full_limit_linear"] < est["limited"]
            assert p_on["deployed_risk"]["estimate"] == pytest.approx(est["full_limit_linear"], rel=1e-12)
            K = max(len(set(c.judges)) for c in cands
                    if c.path_rule == "info_first" and len(set(c.judges)) <= p_on["n_judges"])
            for m in p_on["members"]:
                c = cands[m["index"]]
                assert c.path_rule == "info_first" and c.family in LINEAR_STACK_FAMILIES and len(set(c.judges)) == K
        else:
            assert p_on["members"] == p_off["members"] and p_on["deployed_risk"] == p_off["deployed_risk"]
            b = est["full_limit_linear"]
            assert b is None or b >= est["limited"] or rule["kept_monotone"]
    assert chose_b > 0            # the precondition: B wins somewhere on this panel


def test_rule_a_stays_where_its_estimate_is_lower(parity_runs):
    off, on = (json_ready(parity_runs[k].to_dict()) for k in (False, True))
    limited = _judge_points(on)[:-1]
    assert limited and all(p["limit_rule"]["deployed"] == "limited" for p in limited)
    assert all(p["limit_rule"]["estimates"]["full_limit_linear"] > p["limit_rule"]["estimates"]["limited"]
               for p in limited)
    for p_off, p_on in zip(_judge_points(off), _judge_points(on)):
        p_on = {k: v for k, v in p_on.items() if k != "limit_rule"}
        assert p_on == p_off


def test_the_points_stay_monotone_where_they_were(additive_runs, parity_runs):
    """On a second additive draw B's estimate is lower at a limit where deploying it would
    make the point's held-out risk exceed the smaller point's, while A's did not: the guard
    keeps A there (the precondition, ``kept_monotone``)."""
    guarded = option_runs(make_regime("additive", rows=400, judges=6, seed=1, group_size=2, tie_rate=0.1,
                                      judge_noise=0.1), "limit_rule_choice", **MENU)
    kept = 0
    for runs in (additive_runs, parity_runs, guarded):
        off, on = (_judge_points(json_ready(runs[k].to_dict())) for k in (False, True))
        kept += sum(bool((p.get("limit_rule") or {}).get("kept_monotone")) for p in on)
        for i in range(1, len(off)):
            if off[i]["risk"] <= off[i - 1]["risk"]:
                assert on[i]["risk"] <= on[i - 1]["risk"]
    assert kept > 0


@pytest.mark.parametrize("k", [1, 2, 3])
def test_max_judges_deploys_the_frontier_point(additive, additive_runs, k):
    """select(max_judges=k) with the option deploys the frontier's point k of the
    unconstrained run with the option, with the same estimate (rule B's replay and
    correction where B wins, the limited choice's own bootstrap where A does)."""
    res = select(additive, make_blocks(additive, seed=0), seed=0, limit_rule_choice=True, max_judges=k, **MENU)
    d = json_ready(res.to_dict())
    point = next(p for p in _judge_points(json_ready(additive_runs[True].to_dict())) if p["n_judges"] == k)
    assert deployed(d) == {m["index"] for m in point["members"]}
    assert res.deployed_risk["estimate"] == pytest.approx(point["deployed_risk"]["estimate"], rel=1e-9)
    mine = next(p for p in d["frontier"] if p["chosen"])
    assert mine["n_judges"] == k and mine["limit_rule"]["deployed"] == point["limit_rule"]["deployed"]
    assert {m["index"] for m in mine["members"]} == deployed(d)


def test_max_judges_with_rule_b_differs_from_the_limited_choice(additive, additive_runs):
    """The precondition of the test above: at some k it deploys rule B, not what
    max_judges=k deploys without the option."""
    k = next(p["n_judges"] for p in _judge_points(json_ready(additive_runs[True].to_dict()))
             if (p.get("limit_rule") or {}).get("deployed") == "full_limit_linear")
    assert k <= 3
    blocks = make_blocks(additive, seed=0)
    on = select(additive, blocks, seed=0, limit_rule_choice=True, max_judges=k, **MENU)
    off = select(additive, blocks, seed=0, max_judges=k, **MENU)
    assert set(on.members or [on.selected_index]) != set(off.members or [off.selected_index])
    assert all(on.candidates[i].family in LINEAR_STACK_FAMILIES for i in (on.members or [on.selected_index]))


def test_a_budget_deploys_its_frontier_point(additive):
    """Budget levels decide both rules too, and ``budget`` deploys the point's rule."""
    costs = {n: {"cost": c, "latency": 0.0} for n, c in zip(additive.judge_names, [1.0, 2.0, 3.0, 1.5, 2.5, 0.5])}
    blocks = make_blocks(additive, seed=0)
    full = json_ready(select(additive, blocks, seed=0, judge_costs=costs, limit_rule_choice=True, **MENU).to_dict())
    point = next(p for p in full["frontier"] if p["constraint"] == "budget"
                 and (p.get("limit_rule") or {}).get("deployed") == "full_limit_linear")
    res = select(additive, blocks, seed=0, judge_costs=costs, budget=point["cost"], limit_rule_choice=True, **MENU)
    assert deployed(json_ready(res.to_dict())) == {m["index"] for m in point["members"]}
    assert res.deployed_risk["estimate"] == pytest.approx(point["deployed_risk"]["estimate"], rel=1e-9)
