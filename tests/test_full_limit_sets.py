"""``full_limit_sets``: a binding limit (``max_judges``, ``budget``, every frontier level below
all judges) chooses only among the ``info_first`` path's prefixes of the largest size it admits
on that path, every family, unless no ``info_first`` prefix fits; the unconstrained choice is
the same either way (:mod:`fcps_core.selection.constraints`). On by default (measured in
docs/performance.md); ``full_limit_sets=False`` restores the choice among every admissible
candidate."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core import FCPSSelector, make_blocks, select
from fcps_core.errors import MenuError
from fcps_core.files.json_values import json_ready
from fcps_core.paper.synthetic import make_regime
from fcps_core.selection.choice import GroupedLosses, choose
from fcps_core.selection.constraints import JudgeBits, PanelConstraint, limit_rule_filter, selector_constraint
from menu_helpers import FakeCandidate, deployed, limited_points_admitted, option_runs

MENU = dict(families=["mean_iso", "logistic", "ridge_iso", "table"], n_boot=60, n_jobs=1)

NAMES = ["J0", "J1", "J2"]
#: info_first's path J1, J2, J0: its 1-prefix (c0), its 2-prefix in two families (c1, c2),
#: a random pair (c3) and its 3-prefix (c4)
CANDS = [FakeCandidate(0, ["J1"], rule="info_first"),
         FakeCandidate(1, ["J1", "J2"], rule="info_first", family="ridge_iso"),
         FakeCandidate(2, ["J1", "J2"], rule="info_first", family="logistic"),
         FakeCandidate(3, ["J0", "J1"], rule="random"),
         FakeCandidate(4, ["J1", "J2", "J0"], rule="info_first")]
#: four one-row groups; means c0 0.25 (the best), c1 1.0, c2 0.75, c3 0.5, c4 2.0
LOSSES = np.array([[0, 1, 1, 0, 2], [0, 1, 1, 1, 2], [1, 1, 0, 0, 2], [0, 1, 1, 1, 2]], dtype=float)
KW = dict(tie_rank=np.arange(5), simple_rank=np.arange(5), signatures=np.arange(5), max_members=10)


@pytest.mark.parametrize("use_bits", [False, True])
def test_a_binding_limit_admits_only_the_longest_info_first_prefixes(use_bits):
    bits = JudgeBits(CANDS, NAMES) if use_bits else None
    plain = PanelConstraint(max_judges=2)
    info = PanelConstraint(max_judges=2, info_first_only=True)
    full = PanelConstraint(max_judges=2, full_limit=True)
    assert plain.mask(CANDS, bits).tolist() == [True, True, True, True, False]
    assert info.mask(CANDS, bits).tolist() == [True, True, True, False, False]
    assert full.mask(CANDS, bits).tolist() == [False, True, True, False, False]
    # the argmin at two judges: the one-judge prefix c0 (0.25) with or without info_first_only;
    # with full_limit the better family on the two-judge prefix, c2 (0.75)
    g = GroupedLosses(LOSSES, np.arange(4))
    assert choose("argmin", g, allowed=plain.mask(CANDS, bits), **KW).chosen == 0
    assert choose("argmin", g, allowed=info.mask(CANDS, bits), **KW).chosen == 0
    assert choose("argmin", g, allowed=full.mask(CANDS, bits), **KW).chosen == 2


def test_max_judges_one_keeps_the_one_judge_prefix():
    assert PanelConstraint(max_judges=1, full_limit=True).mask(CANDS).tolist() == [True, False, False, False, False]


def test_a_limit_above_the_path_length_keeps_its_longest_prefix():
    """K = min(k, the path's length): an info_first path of two judges (the menu's k_max)
    under a limit of three that still excludes a four-judge candidate."""
    names = ["J0", "J1", "J2", "J3"]
    cands = [FakeCandidate(0, ["J1"], rule="info_first"), FakeCandidate(1, ["J1", "J2"], rule="info_first"),
             FakeCandidate(2, ["J0", "J1", "J3"], rule="random"), FakeCandidate(3, names, rule="random")]
    assert PanelConstraint(max_judges=3, full_limit=True).mask(cands, JudgeBits(cands, names)).tolist() == \
        [False, True, False, False]


def test_a_limit_that_excludes_nothing_keeps_every_candidate():
    assert PanelConstraint(max_judges=3, full_limit=True).mask(CANDS).tolist() == [True] * 5
    assert PanelConstraint(full_limit=True).mask(CANDS) is None


def test_no_info_first_prefix_within_a_limit_keeps_the_admissible_ones():
    cands = [FakeCandidate(0, ["J0"], rule="random"), FakeCandidate(1, ["J1"], rule="complexity_penalized"),
             FakeCandidate(2, ["J0", "J1"], rule="info_first")]
    assert PanelConstraint(max_judges=1, full_limit=True).mask(cands).tolist() == [True, True, False]


def test_budget_keeps_the_longest_info_first_prefix_within_it():
    costs = {"J0": {"cost": 1.0, "latency": 0}, "J1": {"cost": 1.0, "latency": 0}, "J2": {"cost": 1.5, "latency": 0}}
    # 2.5 admits J1 (1.0), J1+J2 (2.5) and J0+J1 (2.0): the info_first pair only
    assert PanelConstraint(budget=2.5, costs=costs, full_limit=True).mask(CANDS).tolist() == \
        [False, True, True, False, False]
    # 2.0 admits J1 and J0+J1: info_first's one-judge prefix
    assert PanelConstraint(budget=2.0, costs=costs, full_limit=True).mask(CANDS).tolist() == \
        [True, False, False, False, False]
    assert PanelConstraint(budget=2.0, costs=costs).mask(CANDS).tolist() == [True, False, False, True, False]


def test_both_options_on_are_full_limit_sets_alone():
    for k in (1, 2):
        both = PanelConstraint(max_judges=k, info_first_only=True, full_limit=True).mask(CANDS)
        assert both.tolist() == PanelConstraint(max_judges=k, full_limit=True).mask(CANDS).tolist()


def test_the_selector_field_sets_the_constraint():
    assert selector_constraint(FCPSSelector(max_judges=2, full_limit_sets=False)).full_limit is False
    assert selector_constraint(FCPSSelector(max_judges=2)).full_limit is True
    assert FCPSSelector().full_limit_sets is True        # the default (docs/performance.md)
    # the budget levels of the frontier add the info_first front, as info_first_under_limits does
    assert limit_rule_filter(PanelConstraint(full_limit=True))(CANDS[0]) is True
    assert limit_rule_filter(PanelConstraint(full_limit=True))(CANDS[3]) is False


# -- a panel whose limited choices use smaller or other prefixes when they may ---------------
@pytest.fixture(scope="module")
def panel():
    return make_regime("parity", rows=500, judges=6, seed=0, group_size=2, tie_rate=0.1)


@pytest.fixture(scope="module")
def runs(panel):
    return option_runs(panel, "full_limit_sets", **MENU)


def _path_length(candidates) -> int:
    return max(len(set(c.judge_idx)) for c in candidates if c.path_rule == "info_first")


def test_limited_points_deploy_the_full_info_first_prefix_and_the_default_is_unchanged(runs):
    off, on = (json_ready(runs[k].to_dict()) for k in (False, True))
    cands = runs[True].candidates
    L = _path_length(cands)
    info_sets = {len(c.judges): set(c.judges) for c in cands if c.path_rule == "info_first"}
    J = len(on["panel"]["judges"])
    for p in on["frontier"]:
        if p["constraint"] != "max_judges" or p["n_judges"] == J:
            continue
        K = min(p["n_judges"], L)
        for m in p["members"]:
            c = cands[m["index"]]
            assert c.path_rule == "info_first" and len(set(c.judges)) == K
        assert set(p["judges"]) == info_sets[K]
    # the precondition: without the option some limited point deploys another path's prefix
    # or a smaller one
    changed = limited_points_admitted(on, off, cands, lambda c: c.path_rule == "info_first")
    smaller = sum(any(len(set(cands[m["index"]].judges)) < min(p["n_judges"], L) for m in p["members"])
                  for p in off["frontier"] if p["constraint"] == "max_judges" and p["n_judges"] < J)
    assert changed + smaller > 0


@pytest.mark.parametrize("k", [1, 3])
def test_max_judges_deploys_the_frontier_point_with_the_full_prefix(panel, runs, k):
    """select(max_judges=k) with the option deploys the frontier's point k of the
    unconstrained run with the option, and its own bootstrap (honesty replaying the limited
    rule on the restricted set) gives the point's estimate."""
    res = select(panel, make_blocks(panel, seed=0), seed=0, full_limit_sets=True, max_judges=k, **MENU)
    d = json_ready(res.to_dict())
    point = next(p for p in json_ready(runs[True].to_dict())["frontier"]
                 if p["constraint"] == "max_judges" and p["n_judges"] == k)
    assert deployed(d) == {m["index"] for m in point["members"]}
    assert all(res.candidates[i].path_rule == "info_first" and len(set(res.candidates[i].judges)) == k
               for i in deployed(d))
    assert point["deployed_risk"]["bbc_estimate"] == pytest.approx(res.deployed_risk["bbc_estimate"], rel=1e-9)
    assert point["deployed_risk"]["estimate"] == pytest.approx(res.deployed_risk["estimate"], rel=1e-9)


def test_the_replay_replays_the_restricted_rule(panel):
    """At k = 2 on this panel the limited choice differs with and without the option, and so
    do the bootstrap replays' estimates: the replay reads the restricted admissible set."""
    blocks = make_blocks(panel, seed=0)
    on = select(panel, blocks, seed=0, full_limit_sets=True, max_judges=2, **MENU)
    off = select(panel, blocks, seed=0, full_limit_sets=False, max_judges=2, **MENU)
    assert set(on.members or [on.selected_index]) != set(off.members or [off.selected_index])
    assert on.deployed_risk["bbc_estimate"] != off.deployed_risk["bbc_estimate"]


def test_argmin_reads_the_same_admissible_set(panel):
    blocks = make_blocks(panel, seed=0)
    kw = dict(MENU, choice="argmin", max_judges=2, seed=0)
    on = select(panel, blocks, full_limit_sets=True, **kw)
    chosen = on.candidates[on.selected_index]
    assert chosen.path_rule == "info_first" and len(set(chosen.judge_idx)) == 2
    best = min((c for c in on.candidates if len(set(c.judge_idx)) == 2 and c.path_rule == "info_first"),
               key=lambda c: c.val_risk)
    assert chosen.val_risk == pytest.approx(best.val_risk)


def test_budget_points_deploy_the_longest_info_first_prefix_within_them(panel):
    costs = {n: {"cost": c, "latency": 0.0} for n, c in zip(panel.judge_names, [1.0, 2.0, 3.0, 1.5, 2.5, 0.5])}
    res = select(panel, make_blocks(panel, seed=0), seed=0, judge_costs=costs, full_limit_sets=True, **MENU)
    cands = res.candidates
    cost = np.array([sum(costs[j]["cost"] for j in set(c.judges)) for c in cands])
    info = [i for i, c in enumerate(cands) if c.path_rule == "info_first"]
    top = max(cost)
    points = [p for p in json_ready(res.to_dict())["frontier"] if p["constraint"] == "budget"]
    checked = 0
    for p in points:
        if p["cost"] >= top - 1e-9:
            continue                      # excludes nothing: the unconstrained choice
        within = [i for i in info if cost[i] <= p["cost"] + 1e-9]
        if not within:
            continue
        longest = max(len(set(cands[i].judges)) for i in within)
        for m in p["members"]:
            c = cands[m["index"]]
            assert c.path_rule == "info_first" and len(set(c.judges)) == longest
        checked += 1
    assert checked > 0


def test_full_limit_sets_must_be_a_bool(panel):
    with pytest.raises(MenuError, match="full_limit_sets must be True or False"):
        select(panel, make_blocks(panel, seed=0), seed=0, full_limit_sets="no", **MENU)


def test_the_json_menu_records_the_option(runs):
    off, on = (json_ready(runs[k].to_dict())["menu"] for k in (False, True))
    assert off["full_limit_sets"] is False and on["full_limit_sets"] is True
    for menu in (off, on):
        assert menu["info_first_under_limits"] is False and menu["random_under_limits"] is True


def test_among_lets_the_filter_pick_within_the_offered_candidates():
    """Drop-one offers the candidates without a judge: the full-limit filter then keeps the
    longest info_first prefix among them, not an empty set."""
    full = PanelConstraint(max_judges=2, full_limit=True)
    without_j2 = np.array([c.judges.count("J2") == 0 for c in CANDS])      # c0 and c3
    assert full.mask(CANDS, among=without_j2).tolist() == [True, False, False, False, False]
    # without J1 no info_first prefix is offered: every admissible candidate without it (none here)
    without_j1 = np.array(["J1" not in c.judges for c in CANDS])
    assert full.mask(CANDS, among=without_j1).tolist() == [False] * 5
    # a limit that binds nothing stays unfiltered, whatever is offered
    assert PanelConstraint(max_judges=3, full_limit=True).mask(CANDS, among=without_j2).tolist() == \
        without_j2.tolist()


def test_drop_one_under_a_limit_replays_the_shorter_prefix(panel):
    """With max_judges=3 the deployed set is info_first's 3-prefix; dropping its last judge
    replays the choice on its 2-prefix (a change, not "no choice without it"), dropping its
    first one on every admissible candidate without that judge."""
    from fcps_core.selection.drop_one import drop_one_choices
    res = select(panel, make_blocks(panel, seed=0), seed=0, max_judges=3, **MENU)
    order = next(c.judges for c in res.candidates if c.path_rule == "info_first" and len(set(c.judges)) == 3)
    assert set(res.deployed_members[0].judges) == set(order)
    rows = {r["judge"]: r for r in drop_one_choices(res)["judges"]}
    assert set(rows) == set(order)
    assert all(r["change"] is not None for r in rows.values())
    assert rows[order[-1]]["K"] == 2          # the 2-prefix: the judges before it on the path
    # the same rows with the option off read every admissible candidate without the judge
    off = select(panel, make_blocks(panel, seed=0), seed=0, max_judges=3, full_limit_sets=False, **MENU)
    assert all(r["change"] is not None for r in drop_one_choices(off)["judges"])


# -- a limit the choice over all judges meets ------------------------------------------------
@pytest.fixture(scope="module")
def small_choice():
    """A panel whose choice over all judges calls two of its six judges (not info_first's
    first two): every limit of two or more is met by it."""
    panel = make_regime("parity", rows=1500, judges=6, seed=0)
    blocks = make_blocks(panel, seed=0)
    return panel, blocks, select(panel, blocks, seed=0, k_max=4, **MENU)


def test_a_limit_the_whole_choice_meets_deploys_it(small_choice):
    panel, blocks, whole = small_choice
    d = json_ready(whole.to_dict())
    k = len(d["selected"]["judges"])
    assert 1 < k < len(panel.judge_names)
    top = next(p for p in d["frontier"] if p["n_judges"] == len(panel.judge_names))
    for p in d["frontier"]:
        same = {m["index"] for m in p["members"]} == {m["index"] for m in top["members"]}
        assert same == (p["n_judges"] >= k), p["n_judges"]
    # the precondition: the full-limit prefix of k judges is another predictor
    info_k = {c.index for c in whole.candidates if c.path_rule == "info_first" and len(set(c.judges)) == k}
    assert not {m["index"] for m in top["members"]} <= info_k
    limited = select(panel, blocks, seed=0, k_max=4, max_judges=k, **MENU)
    dl = json_ready(limited.to_dict())
    assert deployed(dl) == deployed(d) and dl["choice_info"]["limit_met_by_whole_choice"] is True
    assert dl["tie"]["n_models"] == d["tie"]["n_models"]            # the whole choice's tie set
    point = next(p for p in d["frontier"] if p["n_judges"] == k)
    assert point["deployed_risk"]["estimate"] == pytest.approx(dl["deployed_risk"]["estimate"], rel=1e-9)
    # with the option off the limit chooses among its admissible candidates
    off = select(panel, blocks, seed=0, k_max=4, max_judges=k, full_limit_sets=False, **MENU)
    assert "limit_met_by_whole_choice" not in off.choice_info


def test_replays_of_a_limit_the_whole_choice_meets_equal_a_loop_over_draws(small_choice):
    from test_frontier import _check_replays_by_hand
    _check_replays_by_hand(small_choice[2])
    assert _check_replays_by_hand.whole_draws > 0
