"""The limited rule (:mod:`fcps_core.selection.limited_rule`): the one object that says what a
limit deploys: the choice over all judges where that one meets the limit (under a full-limit
rule), else the choice among the admissible candidates. The deployed choice, its bootstrap
replay, the frontier and drop-one ask it (their end-to-end checks: tests/test_full_limit_sets.py)."""

from __future__ import annotations

import numpy as np

from fcps_core import FCPSSelector
from fcps_core.selection.constraints import PanelConstraint
from fcps_core.selection.limited_rule import (WHOLE_CHOICE_KEY, LimitedRule, deploys_whole_choice,
                                              replays_whole_choice, unlimited, whole_choice_recorded)
from menu_helpers import FakeCandidate

#: info_first's path J1, J2, J0 (c0, c1, c4), a random pair (c3), a random single judge (c2)
CANDS = [FakeCandidate(0, ["J1"]), FakeCandidate(1, ["J1", "J2"]), FakeCandidate(2, ["J0"], rule="random"),
         FakeCandidate(3, ["J0", "J1"], rule="random"), FakeCandidate(4, ["J1", "J2", "J0"])]


def _calls():
    calls = []

    def make(name):
        def form():
            calls.append(name)
            return name
        return form
    return calls, make


def test_the_whole_choice_is_deployed_where_it_meets_the_limit():
    rule = LimitedRule(PanelConstraint(max_judges=2, full_limit=True), CANDS)
    calls, make = _calls()
    members = {"whole": [3], "limited": [1]}
    assert rule.deploy(make("whole"), make("limited"), members.get) == ("whole", True)
    assert calls == ["whole"]                      # the limited choice is not formed
    members["whole"] = [3, 4]                      # the union calls three judges: over the limit
    calls.clear()
    assert rule.deploy(make("whole"), make("limited"), members.get) == ("limited", False)
    assert calls == ["whole", "limited"]


def test_without_a_full_limit_rule_the_whole_choice_is_never_formed():
    for constraint in (PanelConstraint(max_judges=2), PanelConstraint(full_limit=True)):
        rule = LimitedRule(constraint, CANDS)
        calls, make = _calls()
        assert rule.deploy(make("whole"), make("limited"), lambda ch: [0]) == ("limited", False)
        assert calls == ["limited"]
        assert not rule.whole_first and not rule.met_by([0])


def test_the_admissible_candidates_are_the_constraints_mask():
    constraint = PanelConstraint(max_judges=2, full_limit=True)
    rule = LimitedRule(constraint, CANDS)
    assert rule.admissible().tolist() == constraint.mask(CANDS).tolist() == [False, True, False, False, False]
    among = np.array([True, False, True, True, True])           # drop-one without J2
    assert rule.admissible(among=among).tolist() == [True, False, False, False, False]
    assert rule.replays_whole(rule.admissible())
    # a limit that excludes nothing: the choice among the admissible ones is the whole one
    loose = LimitedRule(PanelConstraint(max_judges=3, full_limit=True), CANDS)
    assert loose.whole_first and not loose.replays_whole(loose.admissible())
    assert not LimitedRule(PanelConstraint(full_limit=True), CANDS).replays_whole(None)


def test_per_draw_answers_equal_one_answer_per_draw():
    rule = LimitedRule(PanelConstraint(max_judges=2, full_limit=True), CANDS)
    whole = [[0], [4], [0, 3], [1, 2]]
    assert rule.draws_met(whole).tolist() == [rule.met_by(m) for m in whole] == [True, False, True, False]
    cols, limited = np.array([4, 0, 3, 4, 2]), np.array([1, 1, 1, 0, 0])
    assert rule.columns_deployed(cols, limited).tolist() == [1, 0, 3, 0, 2]
    # a replay's own test of the members (a MembersTest) is the one asked
    strict = LimitedRule(PanelConstraint(max_judges=2, full_limit=True), CANDS, lambda m: False)
    assert strict.columns_deployed(cols, limited).tolist() == limited.tolist()
    assert not strict.draws_met(whole).any()


def test_a_chain_replays_the_whole_choice_only_below_an_active_loosest_level():
    full = [PanelConstraint(max_judges=k, full_limit=True) for k in (3, 2, 1)]
    assert replays_whole_choice(full)
    assert not replays_whole_choice([PanelConstraint(max_judges=k) for k in (3, 2, 1)])
    assert not replays_whole_choice([PanelConstraint(full_limit=True)] + full)     # it leads already
    assert deploys_whole_choice(full[0]) and not deploys_whole_choice(PanelConstraint(full_limit=True))


def test_the_selector_settings_and_the_record():
    sel = FCPSSelector(max_judges=2, budget=None)
    assert LimitedRule.of(sel, CANDS).whole_first                      # full_limit_sets is the default
    assert not LimitedRule.of(FCPSSelector(max_judges=2, full_limit_sets=False), CANDS).whole_first
    whole = unlimited(sel)
    assert whole.max_judges is None and whole.budget is None and whole.choice == sel.choice
    assert sel.max_judges == 2                                          # a copy
    assert whole_choice_recorded({WHOLE_CHOICE_KEY: True})
    assert not whole_choice_recorded({}) and not whole_choice_recorded(None)
    assert WHOLE_CHOICE_KEY == "limit_met_by_whole_choice"             # the JSON contract's field
