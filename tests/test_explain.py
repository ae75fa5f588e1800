"""The plain-language verdict on hand-made selection dicts: what it claims must follow the
intervals (better only when the paired interval excludes 0), and every number it shows
carries its uncertainty."""

import copy

import pytest

from fcps_core.reports.explain import (comparison, deployed_judges, gain_text, pressure_text, tie_sentence, tie_summary,
                               verdict, verdict_parts)

JUDGES = [f"judge{i}" for i in range(65)]


def _baseline(name, label, risk, diff, ci, **extra):
    return {"name": name, "label": label, "risk": risk, "diff_vs_selected": diff, "ci": ci, **extra}


@pytest.fixture
def result():
    """A ridge_iso winner over 3 of 65 judges, clearly better than the best single judge and
    tied with logistic over all judges."""
    return {
        "panel": {"judges": JUDGES},
        "menu": {"objective": "mse"},
        "menu_size": 120,
        "selected": {"family": "ridge_iso", "K": 3, "path": "info_first", "index": 7,
                     "judges": ["A", "B", "C"], "val_mse": 0.142},
        "candidates": [{"index": 7, "val_risk": 0.142, "val_se": 0.004}],
        "deployed_risk": {"estimate": 0.147, "ci": [0.139, 0.155], "method": "bbc", "objective": "mse",
                          "optimistic": 0.142},
        "baselines": [
            _baseline("best_single_judge", "best single judge (isotonic): gpt-4", 0.153, 0.011, [0.004, 0.018],
                      judge="gpt-4"),
            _baseline("majority_vote", "majority vote (ties 1/2)", 0.31, 0.17, [0.15, 0.19]),
            _baseline("logistic_all", "logistic over all judges", 0.143, 0.001, [-0.003, 0.006]),
        ],
        "tie": {"n_tied": 2, "alternatives": [
            {"family": "logistic", "K": 4, "path": "info_first", "judges": ["A", "B", "C", "D"], "risk": 0.143,
             "diff": 0.001, "se": 0.002}]},
        "regime": {"quadrant": "keep_scalar", "description": "low interaction gain, low table pressure",
                   "interaction_gain": -0.004, "interaction_gain_ci": [-0.01, 0.002]},
    }


def test_headline_says_what_to_deploy_how_good_and_against_what(result):
    parts = verdict_parts(result)
    head = parts["headline"][0]
    assert head.startswith("Deploy ridge + isotonic over judges A, B and C (K=3 of 65; path: best single judge first):")
    assert "held-out MSE 0.142 ± 0.0078 (95%)" in head        # 1.96 x 0.004
    # the difference is paired over the bootstrap draws: printed between the two risks on that basis
    # (the estimate 0.147 is the selection's out-of-bag mean; the judge's is 0.147 + 0.011 = 0.158)
    assert ("about 0.0110 better than the best single judge (gpt-4, isotonic: out-of-bag 0.1580 against this choice's 0.1470; paired 95% "
            "interval of the difference 0.0040 to 0.0180)") in head
    # "tied" names the one tie set only; a baseline whose paired interval holds 0 is "not clearly different"
    assert "not clearly different from logistic over all judges" in parts["headline"][1]
    assert "tied" not in " ".join(parts["headline"])
    assert "better than majority vote (ties 1/2)" in parts["headline"][1]
    assert "Estimated MSE on new items 0.1470 (95% interval 0.1390 to 0.1550" in parts["headline"][2]
    # one tie set (issue 24): 2 other models + the deployed one = 3 distinct tied models
    assert any(s.startswith("3 distinct models are statistically tied") and "the other 2 would serve about as well"
               in s and "logistic K=4" in s for s in parts["details"])
    assert any(s.startswith("Regime: keep scalar") for s in parts["details"])
    assert verdict(result).startswith(head)


def test_better_only_when_the_interval_excludes_zero(result):
    tied = copy.deepcopy(result)
    tied["baselines"][0]["ci"] = [-0.002, 0.024]
    head = verdict_parts(tied)["headline"][0]
    assert "better than the best single judge" not in head
    assert "not clearly different from the best single judge (gpt-4, isotonic: out-of-bag 0.1580 against this choice's 0.1470; difference " \
           "0.0110" in head

    worse = copy.deepcopy(result)
    worse["baselines"][0].update(diff_vs_selected=-0.02, ci=[-0.03, -0.01])
    parts = verdict_parts(worse)
    assert "about 0.0200 worse than the best single judge (gpt-4, isotonic: out-of-bag 0.1270 against this choice's 0.1470" \
        in parts["headline"][0]
    assert "better" not in parts["headline"][0]
    assert any("consider deploying best single judge (isotonic): gpt-4" in s for s in parts["details"])

    unpaired = copy.deepcopy(result)
    for b in unpaired["baselines"]:
        b.update(diff_vs_selected=None, ci=None)
    text = verdict(unpaired)
    assert "better" not in text and "worse" not in text
    assert "no paired interval, so no claim" in text
    assert [comparison(b) for b in result["baselines"]] == ["better", "better", "tied"]


def test_small_differences_keep_two_significant_digits(result):
    result["baselines"][0].update(diff_vs_selected=0.0004, ci=[0.0001, 0.0008])
    assert "about 0.00040 better than the best single judge" in verdict(result)


def test_no_estimate_is_said_not_invented(result):
    result["deployed_risk"] = None
    result["choice_info"] = {"estimate_note": "the validation rows form one group"}
    text = verdict(result)
    assert "No bias-corrected estimate of the risk on new items (the validation rows form one group)." in text
    assert "Estimated MSE" not in text


def test_a_tie_average_names_its_members_and_judges_by_weight(result):
    result["selected"] = {"family": "tie_average", "K": 8, "path": "tie_average", "index": 7,
                          "judges": [f"j{i}" for i in range(8)], "val_mse": 0.141,
                          "members": [{"family": "ridge_iso", "K": 3}, {"family": "logistic", "K": 8}]}
    result["judges_report"] = {"contribution": {"judges": [{"judge": f"j{i}", "weight_share": i / 28}
                                                           for i in range(8)]}}
    assert deployed_judges(result) == [f"j{i}" for i in range(7, -1, -1)]
    head = verdict_parts(result)["headline"][0]
    assert head.startswith("Deploy an equal-weight average of 2 statistically tied models (logistic, ridge + isotonic) "
                           "over judges j7, j6, j5, j4, j3, j2 and 2 more (8 of 65 judges):")
    assert "held-out MSE" not in head     # an average has no single SE: its estimate below carries the interval
    assert "Estimated MSE on new items 0.1470 (95% interval" in verdict(result)


def _candidate(index, path, params, judges, risk, family="residual"):
    return {"index": index, "family": family, "K": len(judges), "path": path, "params": params, "judges": judges,
            "val_risk": risk}


def test_one_tie_set_counted_in_distinct_models(result):
    """Issue 24: the result's tie counts distinct models (a model reached by another path is
    one model, fcps_core.selection.members); the sentence says how many are tied, how many
    the deployment averages and how many others would do, with the same numbers."""
    result["selected"] = {"family": "tie_average", "K": 3, "index": 1, "judges": ["A", "B", "C"],
                          "members": [_candidate(1, "info_first", {"shrinkage": 8.0}, ["A", "B", "C"], 0.2049),
                                      _candidate(2, "info_first", {"shrinkage": 32.0}, ["A", "B", "C"], 0.2053)]}
    result["tie"] = {"n_tied": 1, "n_models": 3, "n_members": 2, "alternatives": [
        {"index": 20, "family": "table", "K": 2, "path": "info_first", "judges": ["A", "B"], "risk": 0.2060,
         "diff": 0.0011, "se": 0.002}]}
    t = tie_summary(result)
    assert (t["n_models"], t["n_members"], t["n_tied"], t["unlisted"], t["same"]) == (3, 2, 1, 0, [])
    assert tie_sentence(result) == ("3 distinct models are statistically tied (within one paired standard error of "
                                    "the best): the deployment averages 2 of them; the other 1 is tied with the best "
                                    "single model too, but not averaged (joint table K=2).")
    # the average holds as many distinct models as its cap (recorded in the tie): its picks
    # filled it, the cap is what left the other out, and the sentence says so; the one example
    # left out is all of them, so no "e.g." (walk 11)
    result["tie"].update(max_members=2)
    assert tie_sentence(result).endswith("but not averaged, as an average takes at most 2 models, lowest held-out "
                                         "risk first (joint table K=2).")
    # two of its 3 picks were one refitted model (2 distinct members, cap 3): not said, it would read false
    result["tie"].update(max_members=3)
    assert tie_sentence(result).endswith("but not averaged (joint table K=2).")
    result["tie"].update(max_members=2)
    # under a limit the cap holds too, for models whose judges stay within it (walk 11)
    result["choice_info"] = {"constraint": {"max_judges": 3, "budget": None}}
    assert tie_sentence(result).endswith("but not averaged, as an average takes at most 2 models whose judges stay "
                                         "within the limit, lowest held-out risk first (joint table K=2).")
    result.pop("choice_info")
    result["tie"] = {"n_tied": 0, "n_models": 2, "n_members": 2, "alternatives": []}
    assert tie_sentence(result) == ("2 distinct models are statistically tied (within one paired standard error of "
                                    "the best): the deployment averages both.")
    result["tie"] = {"n_tied": 0, "n_models": 1, "n_members": 1, "alternatives": []}
    assert tie_sentence(result) == ""


def test_gain_and_pressure_have_one_format():
    assert gain_text(0.01) == "+0.0100" and gain_text(-0.0003) == "-0.0003" and gain_text(None) == "-"
    assert pressure_text(0.0352) == "0.035"


# -- issue 24: every printed difference is the difference of numbers printed on its basis --------
def _frontier_result(result):
    """Three judges; the held-out risks and the bias-corrected estimates rank the points
    differently (k=3 is lowest held-out, k=2 lowest estimated)."""
    def point(k, risk, est, lo, hi, chosen=False, members=None):
        return {"constraint": "max_judges", "n_judges": k, "cost": None, "judges": ["A", "B", "C"][:k],
                "family": "logistic", "members": members or [{"family": "logistic", "K": k}], "risk": risk,
                "ci": [risk - 0.01, risk + 0.01], "diff_vs_best": {"estimate": risk - 0.088,
                                                                   "ci": [risk - 0.09, risk - 0.086]},
                "deployed_risk": {"estimate": est, "ci": [lo, hi]}, "chosen": chosen,
                # the held-out paired difference to the lowest-risk looser point (k=3)
                "more_judges": None if k == 3 else {"n_judges": 3, "estimate": risk - 0.088, "ci": [0.0, 0.02]}}
    d = copy.deepcopy(result)
    d["panel"] = {"judges": ["A", "B", "C"]}
    d["frontier"] = [point(1, 0.100, 0.110, 0.090, 0.130), point(2, 0.090, 0.096, 0.080, 0.110),
                     point(3, 0.088, 0.098, 0.080, 0.120, chosen=True)]
    # the paired change of each estimate from the lowest tighter one (k=3's: set by the tests that read it)
    d["frontier"][0]["fewer_judges_estimate"] = None
    d["frontier"][1]["fewer_judges_estimate"] = {"n_judges": 1, "cost": None, "estimate": -0.014, "ci": [-0.02, -0.008]}
    d["frontier"][2]["fewer_judges_estimate"] = None
    d["selected"]["judges"] = ["A", "B", "C"]
    d["deployed_risk"] = {"estimate": 0.0718, "bbc_estimate": 0.0723, "ci": [0.0516, 0.0937], "method": "bbc",
                          "objective": "mse", "optimistic": 0.0697}
    d["baselines"][0].update(risk=0.0967, diff_vs_selected=0.0238, ci=[0.0051, 0.0417])
    d["baselines"][1].update(risk=0.0690, diff_vs_selected=-0.0031, ci=[-0.0060, -0.0002],
                             label="ridge over all judges", name="ridge_iso_all")
    return d


def _with_clear_rise(d):
    """:func:`_frontier_result` with k=3's estimate clearly above k=2's: the change's paired
    interval above 0."""
    d["frontier"][2]["fewer_judges_estimate"] = {"n_judges": 2, "cost": None, "estimate": 0.002, "ci": [0.001, 0.003]}
    return d


def _budget_frontier_result(result, budget: float, judge_costs: dict):
    """:func:`_frontier_result` under a budget: the one-judge point costs the budget and is
    deployed, the two- and three-judge points cost 8.6 and 12.5; ``judge_costs`` (judge ->
    cost per item) are the panel's judges and costs."""
    d = _frontier_result(result)
    for p in d["frontier"]:
        p.update(constraint="budget", cost={1: budget, 2: 8.6, 3: 12.5}[p["n_judges"]], chosen=p["n_judges"] == 1)
    d["choice_info"] = {"constraint": {"budget": budget, "max_judges": None}}
    d["costs"] = {"judge_costs": {j: {"cost": c} for j, c in judge_costs.items()}}
    d["panel"] = {"judges": list(judge_costs)}
    return d


def test_further_judges_are_said_on_the_estimates_the_answer_prints(result):
    from fcps_core.reports.explain import answer, frontier_point
    d = _frontier_result(result)
    one = answer(d, frontier_point(d, 1))
    # at 4 decimals, as the Select page's metric, the frontier control and the runs table print estimates
    assert "estimated MSE 0.1100 (95% interval 0.0900 to 0.1300)" in one
    # 0.1100 - 0.0960 = 0.0140 (by hand), to the k=2 point's estimate, not the held-out 0.012 to k=3
    assert "The best with more judges (up to all 3) lowers the estimated MSE by 0.0140: to 0.0960 (95% interval 0.0800 " \
           "to 0.1100) with 2 judges" in one
    two = answer(d, frontier_point(d, 2))
    assert "More judges (up to all 3) do not lower the estimated MSE: the lowest with more is 0.0980 (95% " \
           "interval 0.0800 to 0.1200) with 3 judges, 0.0020 higher" in two
    # the unconstrained choice: no larger limit to compare with, said without calling a 4-of-16 panel the largest
    assert "It is the choice with all 3 judges allowed (no larger limit to compare with)" in answer(d)
    assert "no larger panel" not in answer(d)


def test_every_printed_difference_is_the_difference_of_the_two_risks_beside_it(result):
    import re
    text = verdict(_frontier_result(result))
    # the best single judge: 0.0723 + 0.0238 = 0.0961 on the draws' out-of-bag rows (hand-computed)
    assert "about 0.0238 better than the best single judge (gpt-4, isotonic: out-of-bag 0.0961 against this choice's 0.0723" in text
    assert "worse than ridge over all judges (out-of-bag 0.0692 against this choice's 0.0723: by 0.0031" in text
    found = re.findall(r"about (\d\.\d+) (better|worse) than [^:]+: out-of-bag (\d\.\d+) against this choice's (\d\.\d+)", text)
    found += [(by, "worse", a, b) for a, b, by in
              re.findall(r"\(out-of-bag (\d\.\d+) against this choice's (\d\.\d+): by (\d\.\d+)", text)]
    assert len(found) == 2
    for by, way, theirs, ours in found:
        assert float(by) == pytest.approx(abs(float(theirs) - float(ours)), abs=1e-12)
        assert (float(theirs) > float(ours)) == (way == "better")
    # which number is which: 0.0723 is the uncorrected one, 0.0718 the estimate printed above (issue 24 walk 2:
    # "0.0536 (the estimate above before its training-size correction, 0.0511)" read as if 0.0511 were uncorrected)
    assert "on them this choice's MSE is 0.0723, the estimate above (0.0718) before its training-size " \
           "correction." in text
    # the smallest panel not clearly different: its held-out risk and the choice's, then their difference
    # (the estimates put k=2 lower, 0.0960 against 0.0980, which the sentence says: walk 6)
    assert "has 2 judges (logistic): held-out MSE 0.0900 against 0.0880, paired difference 0.0020 (95% interval " \
           "0.0000 to 0.0040); its estimate on new items, which the answer compares, is lower instead (0.0960 " \
           "against 0.0980)" in text and "limit; deploy it with --max-judges 2" in text


def test_the_baselines_table_prints_both_risks_of_each_difference(result):
    from fcps_core.reports.explain import baseline_rows
    d = _frontier_result(result)
    rows = baseline_rows(d)
    single = rows[0]
    # hand-computed: the selection's out-of-bag risk is the BBC estimate before the correction, 0.0723
    assert single["selection"] == pytest.approx(0.0723) and single["out_of_bag"] == pytest.approx(0.0961)
    assert single["heldout"] == 0.0967                        # the held-out risk stays beside them
    for r in rows:      # the printed difference is that of the two printed risks
        shown = float(format(r["out_of_bag"], ".4f")) - float(format(r["selection"], ".4f"))
        assert format(r["diff"], ".4f") == format(shown, ".4f")


def test_without_the_bootstrap_basis_the_comparison_stays_well_formed(result):
    """A nested estimate carries no out-of-bag mean: the difference is said without the two risks."""
    result["deployed_risk"] = {"estimate": 0.147, "ci": [0.139, 0.155], "method": "nested", "objective": "mse"}
    head = verdict_parts(result)["headline"][0]
    assert "about 0.0110 better than the best single judge (gpt-4, isotonic; paired 95% interval of the difference 0.0040 " \
           "to 0.0180)" in head
    assert "((" not in verdict(result) and "( " not in verdict(result) and " (;" not in verdict(result)
    del result["baselines"][0]["judge"]
    assert "better than the best single judge (paired 95% interval" in verdict_parts(result)["headline"][0]


def test_a_larger_budget_is_said_on_the_same_basis(result):
    from fcps_core.reports.explain import answer
    d = _frontier_result(result)
    for p, cost in zip(d["frontier"], (1.0, 2.5, 4.0)):
        p.update(constraint="budget", cost=cost)
    text = answer(d, d["frontier"][0])
    # 0.110 - 0.096 = 0.014, the estimates printed (hand-computed), at the cheapest larger budget reaching it
    assert "The best with a larger budget lowers the estimated MSE by 0.0140: to 0.0960 (95% interval 0.0800 to 0.1100) " \
           "at a cost of 2.5 per item" in text


def test_the_optimistic_heldout_risk_is_named_for_what_is_deployed(result):
    """Issue 24 walk: the verdict's optimistic held-out risk is the deployed predictor's own,
    named for what is deployed: an average of tied models is not 'the winner'."""
    d = _frontier_result(result)
    text = verdict(d)
    assert "The deployed model's own held-out MSE 0.0697 is optimistic (it was picked over 120 candidates)" in text
    d["selected"] = {**d["selected"], "family": "tie_average",
                     "members": [{"family": "logistic", "K": 3}, {"family": "ridge_iso", "K": 3}]}
    text = verdict(d)
    assert "winner" not in text
    assert ("The deployed average's own held-out MSE 0.0697 is optimistic (its 2 models were picked over 120 "
            "candidates)") in text
    d["menu_size"] = 1503        # as the menu size metric prints it
    assert "picked over 1,503 candidates" in verdict(d)


def test_a_gain_that_rounds_to_0_prints_with_no_sign_on_the_page_and_in_the_advice():
    """Walk 6: an interaction gain of -1.1e-07 showed as "+0.0000, interval +0.0000 to
    +0.0000", a direction rounding made up. Every gain that rounds to 0 at 4 decimals prints
    "0.0000" with no sign, in the pages' gain_text and in the regime advice alike."""
    from fcps_core.selection.honesty import undetermined_advice
    for v in (-1.1e-07, 1.1e-07, -0.00004999, 0.00004, 0.0, -0.0):
        assert gain_text(v) == "0.0000"
    assert gain_text(0.00005001) == "+0.0001" and gain_text(-0.00006) == "-0.0001"
    text = undetermined_advice(-1.1e-07, -2e-07, 3e-08, 0.0, None)
    assert "the interaction gain 0.0000 (95% interval 0.0000 to 0.0000)" in text
    assert "+0.0000" not in text and "-0.0000" not in text
    for v in (-1.1e-07, 0.0011, -0.0003, 0.00004):
        assert f"interaction gain {gain_text(v)} " in undetermined_advice(v, v, v, 1.0, 5)


def test_the_undetermined_regime_prints_the_gain_as_the_metrics_do():
    """Issue 24 walk: the regime box said '95% interval -0.0000 to +0.0022' above a caption
    '+0.0000 to +0.0022'; the advice prints the gain and its interval as gain_text does, and
    the label count with thousands separators."""
    from fcps_core.selection.honesty import undetermined_advice
    text = undetermined_advice(0.0011, -0.00004, 0.0022, 0.001, 281063)
    assert f"the interaction gain {gain_text(0.0011)} (95% interval {gain_text(-0.00004)} to {gain_text(0.0022)})" in text
    assert "(95% interval 0.0000 to +0.0022)" in text and "-0.0000" not in text
    assert "About 281,063 more held-out labels" in text
    assert "not clearly above the threshold 0.001" in text


def test_a_tiny_paired_difference_leaves_the_risks_at_the_pages_decimals(result):
    """Issue 24 walk (a continuous-label panel, MSE near 0.008): the smallest tied panel's
    sentence printed the choice's held-out MSE as 0.007995 while the metric and the tables
    print it 0.0080. The risks print at the pages' 4 decimals; a difference too small for
    them is given as the paired difference at its own precision, and called so."""
    d = _frontier_result(result)
    for p, risk in zip(d["frontier"], (0.0100, 0.008061, 0.007995)):
        p["risk"] = risk
        p["diff_vs_best"] = {"estimate": risk - 0.007995, "ci": [risk - 0.007995 - 0.000074,
                                                                 risk - 0.007995 + 0.000073]}
    text = verdict(d)
    assert ("has 2 judges (logistic): held-out MSE 0.0081 against 0.0080 (paired difference 0.000066, 95% "
            "interval -0.000008 to 0.000139); its estimate on new items") in text
    assert "0.007995" not in text and "0.008061" not in text


def test_the_answer_prints_the_estimate_as_the_metric_does(result):
    """Issue 24 walk (LLMBar): the answer said 'estimated MSE 0.072' with the metric beside it
    saying 0.0717 and the verdict '0.0717'; a wide interval no longer drops the answer to 3
    decimals."""
    from fcps_core.reports.explain import answer
    d = _frontier_result(result)
    chosen = d["frontier"][2]
    chosen["deployed_risk"] = {"estimate": 0.0717, "ci": [0.0521, 0.0938]}
    text = answer(d)
    assert "estimated MSE 0.0717 (95% interval 0.0521 to 0.0938)" in text
    # named an estimate: the judge's held-out risk (baselines, Judges page) is another number
    assert "one judge alone: estimated 0.1100 (95% interval 0.0900 to 0.1300) for A as logistic, what --max-judges 1 deploys" in text


def test_the_answer_states_the_deployments_cost_when_judges_have_costs(result):
    """Walk 3 (a dialogue panel with judge costs, budget 2): the answer never said what the
    deployment costs per item (1.257), only the Select page's metric did; without costs it
    says nothing of cost."""
    from fcps_core.reports.explain import answer
    d = _frontier_result(result)
    assert "per item" not in answer(d)
    for p, cost in zip(d["frontier"], (0.5, 1.257, 3.0)):
        p["cost"] = cost
    assert "combined as logistic, at a cost of 3 per item: estimated" in answer(d)
    assert "at a cost of 1.257 per item" in answer(d, d["frontier"][1])


def test_an_interval_end_that_rounds_to_zero_keeps_its_sign_and_digits():
    """Issue 24 walk 2: "paired difference 0.0024 (95% interval -0.0000 to 0.0048)" beside "the
    interval holds 0": an end that is not 0 but prints as 0 at the sentence's decimals is
    printed at its own precision, so the reader sees on which side of 0 it lies."""
    from fcps_core.reports.explain import _interval_text
    assert _interval_text({"estimate": 0.0024, "ci": [-0.0000312, 0.0048]}, 4) == \
        "0.0024 (95% interval -0.000031 to 0.0048)"
    assert _interval_text({"estimate": 0.0024, "ci": [0.00004, 0.0048]}, 4) == \
        "0.0024 (95% interval 0.000040 to 0.0048)"
    assert _interval_text({"estimate": 0.0024, "ci": [0.0, 0.0048]}, 4) == "0.0024 (95% interval 0.0000 to 0.0048)"
    assert _interval_text({"estimate": 0.0024, "ci": [0.0012, 0.0048]}, 4) == "0.0024 (95% interval 0.0012 to 0.0048)"


def test_a_limit_no_point_stands_for_says_one_judge_in_the_singular(result):
    """bench_shapes walk: ``--max-judges 2 --budget 2`` deploys one judge and no frontier
    point stands for both limits; the answer said "Deploy these 1 judge (A) combined as"."""
    from fcps_core.reports.explain import answer
    d = _frontier_result(result)
    for p in d["frontier"]:
        p["chosen"] = False
    d["selected"].update(judges=["A"], family="logistic", K=1)
    text = answer(d)
    assert text.startswith("Deploy this judge (A) as logistic: estimated MSE 0.0718 (95% interval 0.0516 "
                           "to 0.0937)."), text
    assert "these 1" not in text
    d["selected"].update(judges=["A", "B"], K=2)
    assert answer(d).startswith("Deploy these 2 judges (A and B) combined as logistic: estimated MSE 0.0718")


# -- issue 24 browser walk 3 (unseen binary 20-judge and rubric 12-judge panels) --------------------
def _contribution(rows):
    return {"contribution": {"judges": [{"judge": j, "weight_share": s, "drop_risk_change": c,
                                          "drop_note": None if c is not None else note}
                                         for j, s, c, note in rows]}}


NO_CHOICE = "every admissible candidate calls this judge: no choice without it"


def test_a_judge_every_candidate_calls_leads_the_drop_one_order(result):
    """The walk: the best single judge heads every path, so no candidate leaves it out and its
    drop-one change is None; the order fell back to weight share (bin5, bin14, bin10, bin4)
    under a header "largest drop-one risk change first" while the Judges page sorted by the
    drop-one change (bin14, bin4, ...). A judge no choice can do without comes first, the rest
    by drop-one change, and the order says that is its basis."""
    from fcps_core.reports.explain import judge_order
    result["selected"]["judges"] = ["A", "B", "C", "D"]
    result["judges_report"] = _contribution([("A", 0.40, 0.0019, None), ("B", 0.30, None, NO_CHOICE),
                                             ("C", 0.20, 0.0130, None), ("D", 0.10, 0.0107, None)])
    assert deployed_judges(result) == ["B", "C", "D", "A"]
    assert judge_order(result) == (["B", "C", "D", "A"], "drop")
    # without any drop-one change: weight share, said so
    result["judges_report"] = _contribution([("A", 0.40, None, None), ("B", 0.30, None, None),
                                             ("C", 0.20, None, None), ("D", 0.10, None, None)])
    assert judge_order(result) == (["A", "B", "C", "D"], "share")


def test_the_estimate_below_the_heldout_risk_is_not_called_a_correction_of_optimism(result):
    """The walk (rubric panel, --max-judges 1): "The deployed model's own held-out MSE 0.0260
    is optimistic ...; the estimate above corrects it." above an estimate of 0.0259, lower
    than the risk called optimistic. Said so when the printed estimate is the lower one."""
    d = _frontier_result(result)
    d["deployed_risk"].update(estimate=0.0259, bbc_estimate=0.0260, optimistic=0.0260,
                              training_size_correction={"delta": 0.0001, "n_train": 960.0, "n_deployable": 1200.0})
    text = verdict(d)
    assert "is optimistic" not in text
    assert ("The deployed model's own held-out MSE 0.0260 (it was picked over 120 candidates) is corrected by the "
            "estimate above for that choice and for fitting on more rows; here the estimate, 0.0259, comes out "
            "lower.") in text
    del d["deployed_risk"]["training_size_correction"]       # no training-size correction: one reason only
    assert ("is corrected by the estimate above for that choice; here the estimate, 0.0259, comes out lower."
            in verdict(d))
    d["deployed_risk"].update(estimate=0.0262)
    assert "The deployed model's own held-out MSE 0.0260 is optimistic (it was picked over 120 candidates)" \
        in verdict(d)


def test_models_left_out_of_an_average_are_not_said_to_serve_as_well_as_it(result):
    """The walk (binary panel, the default): "18 distinct models are statistically tied ...: the
    deployment averages 10 of them; the other 8 would serve about as well (e.g. one-coin
    reliability + isotonic K=15 ...)" beside "The smallest panel not clearly different from the
    choice over all judges ... has 16 judges". The tie set is within one SE of the best single
    model (held-out 0.1682), not of the average (0.1671), and a 15-judge model 0.0023 above the
    average does not serve as well as it. For an average the others are said to be tied with the
    best single model; for one deployed model they still serve about as well as it."""
    result["selected"] = {"family": "tie_average", "K": 3, "index": 1, "judges": ["A", "B", "C"],
                          "members": [_candidate(1, "info_first", {}, ["A", "B", "C"], 0.1682, family="mean_iso"),
                                      _candidate(2, "random", {}, ["A", "B", "C"], 0.1686, family="one_coin_iso")]}
    result["tie"] = {"n_tied": 1, "n_models": 3, "n_members": 2, "alternatives": [
        {"index": 20, "family": "one_coin_iso", "K": 2, "path": "info_first", "judges": ["A", "B"],
         "risk": 0.1694, "diff": 0.0012, "se": 0.0014}]}
    text = tie_sentence(result)
    assert "would serve about as well" not in text
    assert "the other 1 is tied with the best single model too, but not averaged" in text
    result["selected"] = {"family": "mean_iso", "K": 3, "index": 1, "judges": ["A", "B", "C"]}
    result["tie"].update(n_members=1, n_models=2)
    assert "one of them is deployed; the other 1 would serve about as well" in tie_sentence(result)


def test_a_better_recipe_beyond_the_budget_is_said_to_cost_more_than_it(result):
    """The walk (rubric panel, budget 3.886 per item, rub10 deployed alone): "A fixed recipe does
    better: consider deploying logistic over all judges instead." -- twelve judges costing 39.187
    per item, ten times the budget the user set. Under a budget the advice says what the recipe
    costs against the budget, as it says the judge count against a judge limit."""
    d = _budget_frontier_result(result, 3.886, {"A": 3.886, "B": 4.703, "C": 30.598})
    text = verdict(d)
    # 3.886 + 4.703 + 30.598 = 39.187 (by hand): every judge, for a recipe over all judges
    assert ("A fixed recipe over all judges does better (ridge over all judges), but it costs 39.187 per item, "
            "more than the budget of 3.886: raise the budget to weigh it.") in text
    assert "consider deploying" not in text
    # within the budget the advice stands
    d["choice_info"]["constraint"]["budget"] = 40.0
    assert "consider deploying ridge over all judges instead" in verdict(d)


def test_tie_counts_the_deployed_models_the_deployment_table_shows(result):
    """Walk 2 (pair_40x2000_tie.d1, the default): the answer said "a weighted average of 9
    statistically tied models" and the Deployed table listed 9 (one with weight 0.2), while the
    ties sentence beside it said "25 distinct models are statistically tied ...: the deployment
    averages 10 of them". Two tied candidates whose refitted models are one model are one
    deployed member (selected["members"], weighted by their share); the result's tie counted them
    apart by their held-out predictions. The sentence counts the deployed models as the table
    does, and the tie set with them."""
    members = [_candidate(i, "info_first", {}, ["A", "B", "C"], 0.2 + i / 1000) for i in range(1, 4)]
    members[0]["weight"], members[1]["weight"], members[2]["weight"] = 0.5, 0.25, 0.25
    result["selected"] = {"family": "tie_average", "K": 3, "index": 1, "judges": ["A", "B", "C"],
                          "members": members}
    result["tie"] = {"n_tied": 2, "n_models": 6, "n_members": 4, "alternatives": [
        {"index": 20, "family": "table", "K": 2, "path": "info_first", "judges": ["A", "B"], "risk": 0.2060,
         "diff": 0.0011, "se": 0.002}]}
    t = tie_summary(result)
    assert (t["n_models"], t["n_members"], t["n_tied"]) == (5, 3, 2)
    assert tie_sentence(result).startswith("5 distinct models are statistically tied (within one paired standard "
                                           "error of the best): the deployment averages 3 of them; the other 2 ")


def test_tie_examples_do_not_count_as_the_rest_of_the_tie_set(result):
    """Walk 2: "the other 15 are tied with the best single model too, but not averaged (e.g.
    Dawid-Skene jury K=36, mean vote + isotonic K=31, one-coin reliability + isotonic K=32 and 1
    more)": "and 1 more" read as four others in all, against the 15 just counted (it counted the
    names of the five closest left over after three). The examples are a few names; the count is
    the sentence's."""
    result["selected"] = {"family": "mean_iso", "K": 3, "index": 1, "judges": ["A", "B", "C"]}
    alts = [{"index": 20 + i, "family": fam, "K": k, "path": "info_first", "judges": ["A", "B"], "risk": 0.21,
             "diff": 0.001, "se": 0.002} for i, (fam, k) in enumerate(
        [("ds_jury", 36), ("mean_iso", 31), ("one_coin_iso", 32), ("one_coin_iso", 35)])]
    result["tie"] = {"n_tied": 15, "n_models": 16, "n_members": 1, "alternatives": alts}
    text = tie_sentence(result)
    assert "more)" not in text
    assert "the other 15 would serve about as well (e.g. Dawid-Skene jury K=36, mean vote + isotonic K=31 and " \
           "one-coin reliability + isotonic K=32)" in text


def test_an_estimate_printed_equal_to_the_heldout_risk_is_not_said_to_correct_it(result):
    """Walk 2 (pair_40x2000_tie.d1, --max-judges 3): "The deployed model's own held-out MSE 0.1464
    is optimistic (it was picked over 1,128 candidates); the estimate above corrects it." under
    "estimated MSE 0.1464" (0.14641 against 0.14644): a correction that the two printed numbers do
    not show. When they print the same, the sentence says they agree to the digits shown."""
    d = _frontier_result(result)
    d["deployed_risk"].update(estimate=0.14641, bbc_estimate=0.14730, optimistic=0.14644,
                              training_size_correction={"delta": 0.0009, "n_train": 1600.0, "n_deployable": 2000.0})
    text = verdict(d)
    assert "corrects it" not in text and "comes out lower" not in text
    assert ("The deployed model's own held-out MSE 0.1464 (it was picked over 120 candidates) is corrected by the "
            "estimate above for that choice and for fitting on more rows; here the two agree to the digits "
            "shown.") in text


def test_the_drop_with_more_judges_is_not_called_a_bound_its_interval_exceeds(result):
    """Walk 2 (cont_fall_20x2000_g5 and rubric_40x300.d2, --max-judges 3): "More judges (up to all
    20) lower the estimated MSE by at most 0.0017 (paired 95% interval of the change -0.0027 to
    -0.0011): to 0.0101 with 20 judges" -- "at most" 0.0017 beside an interval reaching 0.0027.
    The 0.0017 is the change to the best looser point's estimate, not a bound: said so."""
    from fcps_core.reports.explain import answer, frontier_point
    d = _frontier_result(result)
    d["frontier"][0]["more_judges_estimate"] = {"n_judges": 2, "estimate": -0.014, "ci": [-0.024, -0.006]}
    one = answer(d, frontier_point(d, 1))
    assert "at most" not in one
    assert ("The best with more judges (up to all 3) lowers the estimated MSE by 0.0140 (paired 95% interval of "
            "the change -0.0240 to -0.0060): to 0.0960 with 2 judges") in one


def test_a_drop_whose_interval_holds_zero_is_said_to_be_no_clear_change(result):
    """Walk 2 (pair_40x2000_tie.d1, --max-judges 3): "More judges (up to all 40) lower the
    estimated MSE by ... 0.0018 (paired 95% interval of the change -0.0057 to +0.0028): to 0.1446
    with 39 judges" -- "lower" for a change whose interval runs from a drop to a rise. Said so."""
    from fcps_core.reports.explain import answer, frontier_point
    d = _frontier_result(result)
    d["frontier"][0]["more_judges_estimate"] = {"n_judges": 2, "estimate": -0.014, "ci": [-0.024, 0.006]}
    one = answer(d, frontier_point(d, 1))
    assert ("lowers the estimated MSE by 0.0140 (paired 95% interval of the change -0.0240 to +0.0060, which "
            "holds 0: no clear change): to 0.0960 with 2 judges") in one
    d["frontier"][0]["more_judges_estimate"]["ci"] = [-0.024, -0.006]
    assert "no clear change" not in answer(d, frontier_point(d, 1))


def test_the_estimate_above_is_quoted_as_the_answer_prints_it(result):
    """Issue 24 browser walk (translation metrics, labels error counts over [0, 50], MSE near
    0.002): the answer said "estimated MSE 0.00205" and the verdict "this choice's 0.00206",
    then "on them this choice's MSE is 0.0021, the estimate above (0.0021)": the estimate above
    was not the number printed above. The basis sentence prints at the answer's decimals."""
    from fcps_core.reports.explain import answer
    d = _frontier_result(result)
    chosen = d["frontier"][2]
    chosen.update(risk=0.00203, ci=[0.00183, 0.00223])
    chosen["deployed_risk"] = {"estimate": 0.002051, "ci": [0.001781, 0.002362]}
    d["deployed_risk"].update(estimate=0.002051, bbc_estimate=0.002061, ci=[0.001781, 0.002362], optimistic=0.00203)
    d["baselines"][0].update(risk=0.00258, diff_vs_selected=0.00052, ci=[0.00035, 0.00068])
    assert "estimated MSE 0.00205 (95% interval 0.00178 to 0.00236)" in answer(d)
    text = verdict(d)
    assert "the estimate above (0.00205) before its training-size correction" in text
    assert "on them this choice's MSE is 0.00206," in text
    # the held-out risk the estimate corrects, at the same decimals (it said "own held-out MSE 0.0020")
    assert "The deployed model's own held-out MSE 0.00203 is optimistic" in text


def test_tied_models_left_out_under_a_limit_name_their_judges_and_why(result):
    """Browser walk (code-review panel, 'at most 2 judges' deployed from the frontier): "the
    deployment averages 2 of them [logistic, pairwise logistic over claude and deepseek]; the
    other 13 are tied with the best single model too, but not averaged (e.g. logistic K=2,
    scalar + table residual K=2 and pairwise logistic K=2)": the same names as the deployed
    models, left out without a reason. They call another judge, which the limit leaves out."""
    d = _frontier_result(result)
    for p in d["frontier"]:
        p["chosen"] = p["n_judges"] == 2
    d["selected"] = {"family": "tie_average", "K": 2, "index": 1, "judges": ["A", "B"],
                     "members": [_candidate(1, "info_first", {}, ["A", "B"], 0.090, family="logistic"),
                                 _candidate(2, "info_first", {}, ["A", "B"], 0.0905, family="logistic_pairwise")]}
    alt = lambda i, fam, judges: {"index": i, "family": fam, "K": len(judges), "path": "random",   # noqa: E731
                                  "judges": judges, "risk": 0.091, "diff": 0.001, "se": 0.002}
    d["tie"] = {"n_tied": 2, "n_models": 4, "n_members": 2,
                "alternatives": [alt(20, "logistic", ["A", "<b>C</b>"]), alt(21, "residual", ["A", "<b>C</b>"])]}
    assert tie_sentence(d) == (
        "4 distinct models are statistically tied (within one paired standard error of the best): the deployment "
        "averages 2 of them; the other 2 are tied with the best single model too, but not averaged (logistic K=2 "
        "and scalar + table residual K=2, all on A and <b>C</b>): each of these calls a judge the deployment "
        "does not, and with it the average would call more than the limit of 2 judges.")
    # examples on other judge sets: only the one named like a deployed model names its judges; no
    # reason is given where the limit does not say it (a model on the deployed judges is left out too)
    d["tie"]["alternatives"] = [alt(20, "logistic", ["A", "<b>C</b>"]), alt(21, "residual", ["B", "<b>C</b>"]),
                                alt(22, "mean_iso", ["A", "B"])]
    d["tie"]["n_tied"] = 5      # three of five listed: examples
    assert tie_sentence(d).endswith("but not averaged (e.g. logistic K=2 on A and <b>C</b>, scalar + table "
                                    "residual K=2 and mean vote + isotonic K=2).")


def test_fewer_judges_are_called_better_only_when_the_paired_change_says_so(result):
    """Walk 4 (a 400-item pairwise panel, 14 judges, default selection): the answer said "fewer
    judges do better here: estimated 0.0321 ... with 12 judges" beside 0.0326 for all 14, while the
    frontier's paired interval of that change ran from -0.0059 to +0.0038 (no clear change), which
    the clause for more judges already says. The fewer-judges clause now quotes the same paired
    interval and calls the smaller point better only when the interval lies below 0."""
    from fcps_core.reports.explain import answer
    d = _frontier_result(result)
    d["frontier"][2]["fewer_judges_estimate"] = None    # as stored before the frontier carried it
    # k=2 (estimate 0.0960) is printed below the deployed k=3 (0.0980); its paired change to k=3
    d["frontier"][1]["more_judges_estimate"] = {"n_judges": 3, "cost": None, "estimate": 0.002,
                                                "ci": [-0.003, 0.007]}
    text = answer(d)
    assert "do better" not in text
    assert ("fewer judges score a little lower here, not clearly: estimated 0.0960 (95% interval 0.0800 to 0.1100) "
            "with 2 judges (A and B) (paired 95% interval of the change -0.0070 to +0.0030, which holds 0: no "
            "clear change)") in text
    d["frontier"][1]["more_judges_estimate"]["ci"] = [0.001, 0.004]
    text = answer(d)
    assert ("fewer judges do better here: estimated 0.0960 (95% interval 0.0800 to 0.1100) with 2 judges (A and B) "
            "(paired 95% interval of the change -0.0040 to -0.0010)") in text
    assert "no clear change" not in text
    # paired with another point than the deployed one: no interval to quote, so not called better
    d["frontier"][1]["more_judges_estimate"]["n_judges"] = 4
    assert "fewer judges score lower here: estimated 0.0960 (95% interval 0.0800 to 0.1100) with 2 judges (A and " \
           "B);" in answer(d)


def test_a_budget_point_is_said_to_cost_what_its_judges_cost_not_its_budget(result):
    """Walk 4 (300-item binary panel, judge costs 0.2 to 4, --budget 3): the answer read "bj3 and
    bj2 ..., at a cost of 3 per item" while the page's cost metric read "Cost of the deployed
    choice: 2.5 per item": a budget point's cost is its budget level, and the deployment's two
    judges cost 1.5 + 1. The answer sums the deployed judges' costs."""
    from fcps_core.reports.explain import answer
    d = _frontier_result(result)
    d["costs"] = {"judge_costs": {"A": {"cost": 1.5}, "B": {"cost": 1.0}, "C": {"cost": 4.0}}}
    for p, cost in zip(d["frontier"], (1.5, 3.0, 6.5)):
        p["cost"] = cost
    d["frontier"][1]["constraint"] = "budget"       # budget 3: A and B, 2.5 per item
    assert "at a cost of 2.5 per item: estimated" in answer(d, d["frontier"][1])
    assert "at a cost of 3 per item" not in answer(d, d["frontier"][1])
    # without the judges' costs the point's own cost is all there is
    d["costs"] = None
    assert "at a cost of 3 per item: estimated" in answer(d, d["frontier"][1])


def test_a_point_not_deployed_names_its_judges_in_the_order_a_limit_takes_them(result):
    """Walk 4 (400-item pairwise panel): the answer named the 12 judges of the 'at most 12'
    point as "judge02, judge03, judge04, judge05, judge06, judge07 and 6 more" (by name: the
    weakest first, the strongest two among the 6 unnamed), for a limit that takes the first 12
    judges by their own risk. A point not deployed names its judges in that order (the run's
    info_first path); the deployed one stays by contribution."""
    from fcps_core.reports.explain import answer, frontier_point
    d = _frontier_result(result)
    d["paths"] = [{"rule": "complexity_penalized", "judges": ["A", "B", "C"]},
                  {"rule": "info_first", "judges": ["C", "B", "A"]}]
    d["frontier"][2]["judges"] = ["A", "B", "C"]
    d["frontier"][1]["judges"] = ["B", "C"]
    assert "Deploy these 2 judges (C and B) combined as" in answer(d, frontier_point(d, 2))
    # the fewer-judges clause of the deployed point names them so too
    assert "with 2 judges (C and B)" in answer(d)
    # without the path (an older stored run) the stored order stays
    d["paths"] = []
    assert "Deploy these 2 judges (B and C) combined as" in answer(d, frontier_point(d, 2))


def test_limit_words_name_the_rule_the_run_used():
    """Walk 4: a budget below the first judge's cost deployed another path's set while the
    caption said 'the longest run of the judges ... within the budget'; the words now name
    each case of the full-limit rule, and the old rule's words stay for runs made with it."""
    from fcps_core.reports.explain import limit_deploys_words
    full = {"menu": {"full_limit_sets": True}}
    assert "choice over all judges if it calls at most k" in limit_deploys_words(full)
    assert "first k judges in the order of their own risk" in limit_deploys_words(full)
    budget = limit_deploys_words(full, budget=True)
    assert "choice over all judges if it fits" in budget and "when even the first costs more" in budget
    assert limit_deploys_words({"menu": {"full_limit_sets": False}}) == \
        "the best predictor the choice rule deploys with at most k judges"


def test_a_tighter_limit_deploying_the_same_predictor_is_not_called_better(result):
    """Walk 5 (2,000-item rubric panel, 8 judges with costs, --budget 3): the answer read "a
    smaller budget does better here: estimated 0.0362 ... at a cost of 1.6 per item" beside
    "Deploy these 3 judges ... at a cost of 1.6 per item: estimated MSE 0.0364": budgets 1.6 and
    3 deploy the same 3 judges' average (same members), whose two estimates differ only by the
    replay of each limit. A tighter point deploying the deployed predictor is not a smaller
    budget doing better."""
    from fcps_core.reports.explain import answer
    d = _frontier_result(result)
    d["costs"] = {"judge_costs": {"A": {"cost": 0.3}, "B": {"cost": 1.3}, "C": {"cost": 15.0}}}
    members = [{"index": 11, "family": "ridge_iso", "K": 2, "path": "cost_aware", "params": {}},
               {"index": 12, "family": "residual", "K": 2, "path": "cost_aware", "params": {"shrinkage": 32.0}}]
    for p, cost in zip(d["frontier"], (0.3, 1.6, 3.0)):
        p.update(constraint="budget", cost=cost, chosen=cost == 3.0, family="tie_average")
    # budget 3 deploys what budget 1.6 deploys (A and B, 1.6 per item), estimated a little higher
    d["frontier"][2].update(judges=["A", "B"], members=copy.deepcopy(members),
                            deployed_risk={"estimate": 0.0364, "ci": [0.0333, 0.0395]})
    d["frontier"][1].update(judges=["B", "A"], members=list(reversed(copy.deepcopy(members))),
                            deployed_risk={"estimate": 0.0362, "ci": [0.0333, 0.0391]})
    d["frontier"][0]["deployed_risk"] = {"estimate": 0.0569, "ci": [0.05, 0.06]}
    text = answer(d)
    assert "at a cost of 1.6 per item: estimated MSE 0.0364" in text
    assert "smaller budget" not in text
    # another predictor at the smaller budget (another member) is still named when printed lower
    # (with no paired interval of the change, as lower, not better: walk 10)
    d["frontier"][1]["members"][0]["index"] = 13
    assert "a smaller budget scores lower here: estimated 0.0362 (95% interval 0.0333 to 0.0391) at a cost of " \
           "1.6 per item" in answer(d)


def test_a_better_single_judge_beyond_the_budget_is_said_to_cost_more_than_it(result):
    """Walk 5 (rubric panel, --budget 3): the verdict opened "It is about 0.0042 worse than the
    best single judge (frontier, isotonic: ...)" and said nothing of its cost, 15 per item, five
    times the budget; only the lowest-risk recipe over all judges was said to cost more than the
    budget. A single judge that does better but costs more than the budget is said so too."""
    d = _budget_frontier_result(result, 3.0, {"A": 1.0, "B": 2.0, "gpt-4": 15.0})
    d["baselines"][0].update(risk=0.0320, diff_vs_selected=-0.0042, ci=[-0.0078, -0.0009])
    d["baselines"][1].update(risk=0.0235)      # the recipe over all judges is the lowest
    text = verdict(d)
    assert ("A fixed recipe over all judges does better (ridge over all judges), but it costs 18 per item, "
            "more than the budget of 3: raise the budget to weigh it.") in text
    assert ("The best single judge (gpt-4) does better too, but it costs 15 per item, more than the budget of 3."
            in text)
    # a single judge within the budget: no such sentence
    d["costs"]["judge_costs"]["gpt-4"]["cost"] = 2.5
    assert "The best single judge (gpt-4) does better too" not in verdict(d)


def test_a_worse_or_better_interval_end_near_zero_is_not_printed_as_zero(result):
    """Walk 5 (binary panel, --max-judges 3): "worse than ridge + isotonic over all judges (...: by
    0.0068, paired 95% interval 0.0000 to 0.0142)": the end was 0.000024, above 0 as "worse"
    needs, printed as if it touched 0; the command line's table printed it "-0.0000". Both keep
    the end's side of 0 at the decimals it needs."""
    d = copy.deepcopy(result)
    d["baselines"][2].update(diff_vs_selected=-0.0068, ci=[-0.0142, -0.000024])
    text = verdict(d)
    assert "paired 95% interval 0.000024 to 0.0142" in text and "0.0000 to" not in text
    d["baselines"][0].update(diff_vs_selected=0.0089, ci=[0.000031, 0.0181])
    assert "paired 95% interval of the difference 0.000031 to 0.0181" in verdict(d)
    from fcps_core.reports.explain import end_digits, interval_end
    assert interval_end(-0.000024) == "-0.000024" and interval_end(-0.0142) == "-0.0142"
    assert end_digits([-0.0142, -0.000024, 0.0, None]) == 6 and end_digits([-0.0142, 0.0]) == 4


def test_the_one_judge_point_states_its_cost_when_judges_have_costs(result):
    """Walk 5 (rubric panel, --budget 3): "Deploy these 3 judges ..., at a cost of 1.6 per item:
    estimated MSE 0.0364 ...; one judge alone (frontier as ..., what --max-judges 1 deploys):
    estimated 0.0322" (the words of then): the lower number, for a judge costing 15 per item, five times the budget,
    without its cost. With judge costs the one-judge point's cost is said as the deployment's."""
    from fcps_core.reports.explain import answer
    d = _frontier_result(result)
    d["costs"] = {"judge_costs": {"A": {"cost": 15.0}, "B": {"cost": 1.0}, "C": {"cost": 0.6}}}
    for p, cost in zip(d["frontier"], (15.0, 16.0, 16.6)):
        p["cost"] = cost
    text = answer(d)
    assert "one judge alone: estimated 0.1100 (95% interval 0.0900 to 0.1300) for A as logistic at a cost of 15 " \
           "per item, what --max-judges 1 deploys" in text
    # without costs, as before
    d["costs"] = None
    for p in d["frontier"]:
        p["cost"] = None
    assert "one judge alone: estimated 0.1100 (95% interval 0.0900 to 0.1300) for A as logistic, what --max-judges 1 deploys" in answer(d)


def test_the_answer_says_once_that_the_risks_are_on_rescaled_labels(result):
    """Walk 6: a rubric panel's MSE is on its labels rescaled to 0-1, and neither the Select
    page nor the command line said so. The answer (the command line's ANSWER, the page's
    answer box, the report's verdict) says the scale once, only when labels were rescaled."""
    from fcps_core.reports.explain import answer, label_scale_sentence
    d = _frontier_result(result)
    plain = answer(d)
    assert "rescaled" not in plain and label_scale_sentence(d) == ""
    for note, scale in (("integer rubric labels normalised from the observed range [1, 5]", "[1, 5]"),
                        ("labels normalised from [-2, 10]; label words declared: 'n/a' -> unlabelled", "[-2, 10]")):
        d["panel"]["label_note"] = note
        said = f"MSE is on the labels rescaled from {scale} to [0, 1]."
        assert answer(d) == f"{plain} {said}"
        assert verdict(d).count("rescaled") == 1
        assert " ".join(verdict_parts(d)["headline"]).count(said) == 1
    # a declared label word that reads like a note is not a rescaling
    d["panel"]["label_note"] = "label words declared: 'labels normalised from [1, 5]' -> 1"
    assert answer(d) == plain
    # no frontier, so no answer: the headline says it
    d["panel"]["label_note"] = "labels normalised from [1, 5]"
    d["frontier"] = []
    assert verdict_parts(d)["headline"][0].endswith(" MSE is on the labels rescaled from [1, 5] to [0, 1].")


def test_the_verdict_names_its_measure_where_the_answers_estimates_point_the_other_way(result):
    """Walk 6: the answer said fewer judges "score a little lower here, not clearly" (on the
    estimates on new items) while the verdict's smallest tied panel, the same judges, read
    higher on its held-out risks. Here k=2 is estimated 0.0960 against the choice over all 3
    judges' 0.0980, but held-out 0.0900 against 0.0880: the verdict says the estimates point
    the other way and which measure each sentence uses."""
    from fcps_core.reports.explain import answer
    d = _frontier_result(result)
    d["frontier"][1]["more_judges_estimate"] = {"n_judges": 3, "cost": None, "estimate": 0.002,
                                                "ci": [-0.003, 0.007]}
    assert "fewer judges score a little lower here, not clearly: estimated 0.0960" in answer(d)
    smallest = next(h for h in verdict_parts(d)["headline"] if h.startswith("The smallest panel"))
    assert "has 2 judges (logistic): held-out MSE 0.0900 against 0.0880, paired difference 0.0020" in smallest
    assert ("; its estimate on new items, which the answer compares, is lower instead (0.0960 against 0.0980): "
            "the held-out risks are what the frontier's tie is judged on") in smallest
    # the two measures agree: nothing added
    d["frontier"][1]["deployed_risk"]["estimate"] = 0.0990
    smallest = next(h for h in verdict_parts(d)["headline"] if h.startswith("The smallest panel"))
    assert "instead" not in smallest and "which the answer compares" not in smallest


def test_a_looser_limit_estimated_higher_is_said_plainly_not_called_an_improvement(result):
    """Walk 6: a larger budget can deploy a worse predictor (each limit chooses by its own rule),
    and nothing said so beside the frontier. Here all 3 judges are estimated 0.0980, above 2
    judges' 0.0960: the note says so, on the command line's frontier and in the report's, and
    says nothing when the estimates fall with every looser limit."""
    from fcps_core.cli.render import render_frontier
    from fcps_core.reports.explain import non_monotone_note
    from fcps_core.reports.run_report.blocks import Figures
    from fcps_core.reports.run_report.selection import frontier_section
    d = _with_clear_rise(_frontier_result(result))
    note = non_monotone_note(d)
    assert note == ("More judges allowed do not always do better here (each limit deploys by the run's rule within "
                    "it, not the best of the smaller limits' choices): a limit of 3 judges deploys estimated MSE "
                    "0.0980, higher than 0.0960 with a limit of 2 judges (+0.0020, paired 95% interval +0.0010 to "
                    "+0.0030).")
    assert f"  note: {note}" in render_frontier(d)
    assert "a limit of 3 judges deploys estimated MSE 0.0980, higher than 0.0960" in frontier_section(d, Figures(False))
    assert non_monotone_note(d, budget=True) == ""           # no budget points
    # a budget frontier: the same words for budgets
    for q, cost in zip(d["frontier"], (1.0, 2.5, 4.0)):
        q.update(constraint="budget", cost=cost)
    for q, tighter in zip(d["frontier"][1:], (1.0, 2.5)):
        q["fewer_judges_estimate"]["cost"] = tighter
    assert "a budget of 4 deploys estimated MSE 0.0980, higher than 0.0960 with a budget of 2.5" in \
        non_monotone_note(d, budget=True)
    # estimates falling with every looser limit: nothing to say
    d = _with_clear_rise(_frontier_result(result))
    d["frontier"][2]["deployed_risk"]["estimate"] = 0.0950
    d["frontier"][2]["fewer_judges_estimate"].update(estimate=-0.001, ci=[-0.002, 0.0])
    assert non_monotone_note(d) == "" and not any("note:" in line for line in render_frontier(d))
    # a point without an estimate: every point is compared on its held-out risk (here falling: 0.100, 0.090, 0.088)
    d = _frontier_result(result)
    d["frontier"][0]["deployed_risk"] = None
    assert non_monotone_note(d) == ""
    d["frontier"][2]["risk"] = 0.095
    assert "a limit of 3 judges deploys held-out MSE 0.0950, higher than 0.0900 with a limit of 2 judges" in \
        non_monotone_note(d)
    # two limits deploying the same predictor are not compared (the replay of each limit moves its estimate)
    d = _frontier_result(result)
    d["frontier"][2].update(judges=d["frontier"][1]["judges"], members=d["frontier"][1]["members"])
    assert non_monotone_note(d) == ""


def test_a_rise_of_the_estimates_within_its_paired_interval_is_no_claim(result):
    """Walk 10 (20 continuous metrics, MSE near 0.0002): the note said more judges allowed "do
    not always do better" because a limit of 10 judges printed 0.000198 against 0.000197 with 9,
    a change of +0.000001 inside a paired interval of -0.000018 to +0.000014; and two rows
    deploying the same three models read 0.000198 and 0.000195 with nothing saying why. The
    claim now needs the paired interval above 0; a rise within it, and one deployment with two
    estimates, are said as what they are, on the command line, the report and under the chart."""
    from fcps_core.cli.render import render_frontier
    from fcps_core.figures.frontier import FRONTIER_TITLES, frontier_figure
    from fcps_core.reports.explain import frontier_noise_note, non_monotone_note
    from fcps_core.reports.run_report.blocks import Figures
    from fcps_core.reports.run_report.selection import frontier_section
    d = _with_clear_rise(_frontier_result(result))
    d["frontier"][2]["fewer_judges_estimate"].update(ci=[-0.0010, 0.0050])     # +0.0020, interval holds 0
    assert non_monotone_note(d) == ""
    noise = frontier_noise_note(d)
    assert noise == ("A looser limit is estimated a little higher than a tighter one here, not clearly: a limit of 3 "
                     "judges 0.0980 against 0.0960 with a limit of 2 judges, a change of +0.0020 whose paired 95% "
                     "interval -0.0010 to +0.0050 holds 0.")
    assert f"  note: {noise}" in render_frontier(d)
    assert noise in frontier_section(d, Figures(False))
    assert frontier_figure(d["frontier"], by="judges", monotone=not non_monotone_note(d)).layout.title.text == \
        FRONTIER_TITLES[True]
    # an interval just above 0 is a claim, its low end printed with the digits that keep its side
    d["frontier"][2]["fewer_judges_estimate"].update(ci=[0.00004, 0.0050])
    assert non_monotone_note(d).endswith("(+0.0020, paired 95% interval +0.000040 to +0.0050).")
    assert frontier_noise_note(d) == ""
    # one deployment, two estimates: limits 2 and 3 deploy the same models (3's estimate is its own replay)
    d = _frontier_result(result)
    d["frontier"][2].update(judges=d["frontier"][1]["judges"], members=d["frontier"][1]["members"])
    d["frontier"][2]["fewer_judges_estimate"] = {"n_judges": 1, "cost": None, "estimate": -0.012, "ci": [-0.02, -0.004]}
    assert non_monotone_note(d) == ""
    assert frontier_noise_note(d) == ("A limit of 2 judges and a limit of 3 judges deploy the same models, estimated "
                                      "MSE 0.0960 and 0.0980: each estimate replays choosing under its own limit, and "
                                      "those choices differ in some bootstrap draws.")
    # neither: nothing
    d = _frontier_result(result)
    d["frontier"][2]["deployed_risk"]["estimate"] = 0.0950
    assert frontier_noise_note(d) == "" and frontier_noise_note(d, budget=True) == ""


def test_cli_frontier_prints_a_zero_difference_without_a_sign(result):
    """The all-judges row's difference to the choice over all judges is 0: the command line's
    FRONTIER prints it "0.0000 [0.0000, 0.0000]" as the pages print a gain that rounds to 0,
    not "+0.0000" (a direction rounding made up, walk 6); other rows keep their sign."""
    from fcps_core.cli.render import render_frontier
    d = _frontier_result(result)
    d["frontier"][2]["diff_vs_best"] = {"estimate": 0.0, "ci": [0.0, 0.0]}
    d["frontier"][1]["diff_vs_best"] = {"estimate": 0.002, "ci": [-0.00001, 0.004]}
    text = "\n".join(render_frontier(d))
    assert "0.0000 [0.0000, 0.0000]" in text and "+0.0000" not in text
    # an interval end that is not 0 keeps its side of 0, as the verdict prints it (walk 7: "[0.0000, +0.0002]"
    # in the table beside a verdict reading "-0.000002 to 0.000183", which holds 0)
    assert "+0.0020 [-0.000010, +0.0040]" in text


def _small_mse_result(result):
    """:func:`_frontier_result` on a panel whose MSE is near 0.0002 (browser walk 10,
    walk4_cont1500): the deployed point's interval 0.000190 to 0.000200, so the answer
    prints 6 decimals; the best single judge's out-of-bag risk 0.000242 + 0.0000218."""
    d = _frontier_result(result)
    for p in d["frontier"]:         # the held-out risks and differences on the same small scale
        p["risk"] /= 500
        p["diff_vs_best"] = {"estimate": p["diff_vs_best"]["estimate"] / 500,
                             "ci": [v / 500 for v in p["diff_vs_best"]["ci"]]}
        if p.get("more_judges"):
            p["more_judges"] = dict(p["more_judges"], estimate=p["more_judges"]["estimate"] / 500,
                                    ci=[v / 500 for v in p["more_judges"]["ci"]])
        p["deployed_risk"] = {"estimate": 0.000195, "ci": [0.000190, 0.000200]}
        p["ci"] = [0.000190, 0.000200]
    d["deployed_risk"] = {"estimate": 0.000195, "bbc_estimate": 0.000242, "ci": [0.000190, 0.000200],
                          "method": "bbc", "objective": "mse", "optimistic": 0.000240}
    d["baselines"][0].update(risk=0.000264, diff_vs_selected=0.0000218, ci=[0.000002, 0.000039])
    d["baselines"][1].update(risk=0.000250, diff_vs_selected=0.0000051, ci=[-0.000004, 0.000014])
    return d


def test_a_small_mse_keeps_its_digits_in_the_baselines_table_and_the_verdict(result):
    """Walk 10: on a panel whose MSE is near 0.0002 the baselines table printed a recipe's
    difference as 0.0003 - 0.0002 = +0.0001 (4 decimals) beside its own 95 % interval
    +0.000002 to +0.000039, and the verdict said "this choice's 0.0002" where the answer said
    0.000195. Risks and differences now print at the answer's decimals (6 here) in the
    table every front end prints and in the verdict."""
    import html as html_lib
    from fcps_core.reports.explain import baseline_rows, risk_digits
    from fcps_core.reports.run_report.selection import baselines_section
    d = _small_mse_result(result)
    assert risk_digits(d) == 6
    single = baseline_rows(d)[0]
    # 0.000242 + 0.0000218 = 0.0002638 -> 0.000264; 0.000264 - 0.000242 = 0.000022 (by hand)
    assert single["diff"] == pytest.approx(0.000022, abs=1e-12)
    assert single["ci"][0] <= single["diff"] <= single["ci"][1]
    text = verdict(d)
    assert "out-of-bag 0.000264 against this choice's 0.000242" in text
    assert "0.0002 " not in text and "0.0003 " not in text
    page = html_lib.unescape(baselines_section(d))
    assert "0.000264" in page and "0.000022" in page and "0.000242" in page
    # a panel at the usual scale keeps 4 decimals
    assert risk_digits(_frontier_result(result)) == 4


def test_fewer_judges_are_called_better_only_on_the_paired_interval_of_that_change(result):
    """Walk 10 (HANNA, shipped): the answer said 46 judges "do better here" than the deployed 92
    (0.0195 against 0.0198) with no interval: the frontier paired the 46-judge point with its own
    lowest looser point (55 judges), not with 92. The deployed point's own change from its lowest
    tighter point (``fewer_judges_estimate``) is that interval; here it holds 0, and the answer says
    so; clearly lower, it says "do better" with it; with no paired interval at all, only "lower"."""
    from fcps_core.reports.explain import answer
    d = _frontier_result(result)              # k=3 deployed at 0.0980, k=2 at 0.0960
    d["frontier"][2]["fewer_judges_estimate"] = {"n_judges": 2, "cost": None, "estimate": 0.002,
                                                 "ci": [-0.001, 0.005]}
    text = answer(d)
    assert "fewer judges score a little lower here, not clearly: estimated 0.0960 (95% interval 0.0800 to 0.1100) " \
           "with 2 judges (A and B) (paired 95% interval of the change -0.0050 to +0.0010, which holds 0: no clear " \
           "change)" in text, text
    d["frontier"][2]["fewer_judges_estimate"]["ci"] = [0.001, 0.003]
    assert "fewer judges do better here: estimated 0.0960 (95% interval 0.0800 to 0.1100) with 2 judges (A and B) " \
           "(paired 95% interval of the change -0.0030 to -0.0010)" in answer(d)
    d["frontier"][2]["fewer_judges_estimate"] = None
    text = answer(d)
    assert "fewer judges score lower here: estimated 0.0960" in text and "better" not in text.split("one judge")[0]


def test_one_judge_with_two_held_out_risks_is_explained():
    """Walk 11 (a 400-item pairwise panel): the answer's one judge alone was strongA at held-out
    0.1354 (the frontier's 1-judge point) beside the baselines' best single judge strongA at
    0.1272. The point's risk is its rule's (the first judge chosen on each fold's training rows;
    another judge came first in 1 of 10 folds, stability 0.9), the baseline's the judge fixed in
    every fold. The verdict says so where the two print differently and the point's judge varied."""
    from fcps_core.reports.explain import one_judge_note

    def run(stability=0.9, risk=0.1354, judge="strongA"):
        return {"menu": {"objective": "mse"}, "split": {"folds": 5, "repeats": 2},
                "frontier": [{"constraint": "max_judges", "n_judges": 1, "cost": None, "judges": [judge],
                              "family": "tie_average", "risk": risk, "ci": [risk - 0.02, risk + 0.02],
                              "members": [{"index": 0}, {"index": 1}], "chosen": False,
                              "deployed_risk": {"estimate": 0.1353, "ci": [0.1067, 0.1679]}}],
                "baselines": [{"name": "best_single_judge", "judge": "strongA", "risk": 0.1272}],
                "candidates": [{"judge_set_stability": stability}, {"judge_set_stability": stability}]}
    assert one_judge_note(run()) == (
        "One judge, two held-out risks: the 1-judge point's held-out MSE 0.1354 is that of choosing the first judge "
        "on each fold's training labels (another judge came first in 1 of its 10 folds), the best single judge's "
        "0.1272 that of strongA in every fold, chosen once on all the labels; the point deploys strongA, the judge "
        "its rule picks on all of them.")
    assert one_judge_note(run(stability=1.0)) == ""           # same judge in every fold: not this reason
    assert one_judge_note(run(risk=0.12724)) == ""            # the two print alike
    assert one_judge_note(run(judge="other")) == ""           # another judge: nothing to reconcile
    assert "in some of its folds" in one_judge_note(run(stability=0.97))    # less than one fold's share


def test_judges_whose_drop_leaves_the_same_choice_are_named_together():
    """Walk 11 (a 14-judge pairwise panel, 8 deployed): judge11 and strongA both read "+0.04580
    ... dropping it raises the risk: the judge helps"; without either, the rule deploys the same
    8-judge model, so the one number is about the menu without both, which nothing said. The
    meaning now names the other judge whose drop leaves that same choice."""
    from fcps_core.reports.explain import drop_meaning, same_drop_choice
    choice = {"family": "one_coin_iso", "members": 1, "K": 8, "risk": 0.0801}
    d = {"judges_report": {"contribution": {"judges": [
        {"judge": "judge11", "drop_risk_change": 0.0458, "drop_choice": dict(choice)},
        {"judge": "strongA", "drop_risk_change": 0.0458, "drop_choice": dict(choice)},
        {"judge": "judge10", "drop_risk_change": 0.0591, "drop_choice": dict(choice, K=9, risk=0.0934)},
        {"judge": "judge05", "drop_risk_change": None, "drop_choice": None}]}}}
    same = same_drop_choice(d)
    assert same == {"judge11": ["strongA"], "strongA": ["judge11"]}
    verdict = "dropping it raises the risk: the judge helps"
    assert drop_meaning(verdict, same["judge11"]) == \
        "dropping it raises the risk: the judge helps (the same choice as without strongA)"
    assert drop_meaning(verdict, same.get("judge10", [])) == verdict


def test_a_cap_filled_by_picks_of_one_model_twice_is_said(result):
    """Walk 12 (binary, 17 judges): "the deployment averages 9 of them; the other 24 are tied ...
    but not averaged" with no reason, one member at weight 0.2, the others 0.1: the ten picks
    filled the cap, two of them one model reached by two paths. The sentence now says so."""
    result["selected"] = {"family": "tie_average", "K": 3, "index": 1, "judges": ["A", "B", "C"],
                          "members": [dict(_candidate(i, "info_first", {}, ["A", "B", "C"], 0.2049), weight=w)
                                      for i, w in zip(range(1, 10), [0.2] + [0.1] * 8)]}
    result["tie"] = {"n_tied": 24, "n_models": 33, "n_members": 9, "max_members": 10, "alternatives": [
        {"index": 40, "family": "table", "K": 2, "path": "info_first", "judges": ["A", "B"], "risk": 0.2060,
         "diff": 0.0011, "se": 0.002}]}
    assert tie_sentence(result).endswith(
        "but not averaged, as an average takes at most 10 picks, lowest held-out risk first (here 9 models: a model "
        "reached by two paths is one model picked twice, with twice the weight) (e.g. joint table K=2).")
    # nine single picks (weights 1/9): the cap was not reached, no reason claimed
    for m in result["selected"]["members"]:
        m["weight"] = 1 / 9
    assert tie_sentence(result).endswith("but not averaged (e.g. joint table K=2).")


def test_the_smallest_tied_panel_says_when_a_larger_one_is_not_tied(result):
    """Walk 12 (pairwise, 14 judges): "the smallest panel not clearly different from the choice
    over all judges has 8 judges" read as if every panel from 8 judges up were tied, while 9
    judges were clearly worse (+0.0043, 95% +0.0003 to +0.0083). The sentence now names the
    first larger panel whose paired interval excludes 0."""
    from fcps_core.reports.explain import verdict_parts

    def point(k, diff, ci, chosen=False):
        return {"constraint": "max_judges", "n_judges": k, "cost": None, "judges": [f"J{i}" for i in range(k)],
                "family": "logistic", "members": [{"family": "logistic", "K": k}], "risk": 0.0292 + diff,
                "ci": [0.0192 + diff, 0.0392 + diff], "diff_vs_best": {"estimate": diff, "ci": ci},
                "deployed_risk": {"estimate": 0.0326 + diff, "ci": [0.0184 + diff, 0.0499 + diff]}, "chosen": chosen}
    d = copy.deepcopy(result)
    d["panel"] = {"judges": [f"J{i}" for i in range(14)]}
    d["frontier"] = [point(7, 0.0120, [0.0020, 0.0220]), point(8, 0.0051, [-0.0010, 0.0113]),
                     point(9, 0.0043, [0.0003, 0.0083]), point(10, 0.0010, [-0.0005, 0.0025]),
                     point(14, 0.0, [0.0, 0.0], chosen=True)]
    d["selected"]["judges"] = [f"J{i}" for i in range(14)]
    smallest = next(h for h in verdict_parts(d)["headline"] if h.startswith("The smallest panel"))
    assert "has 8 judges" in smallest
    assert "; not every larger panel is tied: 9 judges (a limit of 9) is clearly worse, held-out +0.0043 (95% " \
           "interval +0.0003 to +0.0083); deploy it with --max-judges 8." in smallest, smallest
    d["frontier"][2]["diff_vs_best"]["ci"] = [-0.0001, 0.0083]         # every larger panel tied: nothing added
    assert "not every larger panel" not in next(h for h in verdict_parts(d)["headline"]
                                                if h.startswith("The smallest panel"))
    # the smallest tied point is the choice over all judges itself (walk 13, under a budget: "0.1930
    # against 0.1930, paired difference 0.0000 (95% interval 0.0000 to 0.0000)"): not said
    d["frontier"][1]["diff_vs_best"] = {"estimate": 0, "ci": [0, 0]}
    assert not any(h.startswith("The smallest panel") for h in verdict_parts(d)["headline"])


def test_a_deployment_no_better_than_the_labels_mean_is_said(result):
    """Walk 13 (40 noisy binary judges): the answer deployed 17 judges at an estimated MSE 0.2507
    (95% interval 0.2432 to 0.2631) while always predicting the labels' mean scores 0.2499 on
    those labels, and no page said so. The verdict now says when the constant lies inside the
    deployment's interval, or below it; nothing when the deployment is clearly better."""
    from fcps_core.reports.explain import constant_note, verdict_parts
    d = _frontier_result(result)          # deployed estimate 0.0718, interval 0.0516 to 0.0937
    d["judges_report"] = {"calibration": {"brier_base_rate": 0.2499}}
    assert constant_note(d) == ""
    d["judges_report"]["calibration"]["brier_base_rate"] = 0.0800
    said = constant_note(d)
    assert said == ("It is not clearly better than always predicting the labels' mean (MSE 0.0800 on these labels), "
                    "which lies inside its interval: the judges carry little signal here.")
    assert said in verdict_parts(d)["headline"]
    d["judges_report"]["calibration"]["brier_base_rate"] = 0.0500
    assert constant_note(d).startswith("It is worse than always predicting the labels' mean (MSE 0.0500")
    d["menu"] = {"objective": "nll"}
    assert constant_note(d) == ""


def test_under_a_budget_the_one_judge_clause_says_when_it_breaks_the_budget(result):
    """Walk 13 (budget 5; J1 costs 10): "one judge alone: estimated 0.2348 ... for J1 ... at a
    cost of 10 per item, with 'most judges deployed' set to 1 in the form" sent the reader to a
    judge twice the budget. The clause now says the cost is above the budget."""
    from fcps_core.reports.explain import answer
    d = _frontier_result(result)
    d["costs"] = {"judge_costs": {"A": {"cost": 10.0}, "B": {"cost": 1.0}, "C": {"cost": 0.6}}}
    for p, cost in zip(d["frontier"], (10.0, 11.0, 11.6)):
        p["cost"] = cost
    d["choice_info"] = {"constraint": {"budget": 5.0, "max_judges": None}}
    text = answer(d, d["frontier"][2])
    assert "for A as logistic at a cost of 10 per item, above the budget of 5, " in text, text


def test_under_a_limit_the_optimism_sentence_counts_the_candidates_it_admits(result):
    """Walk 13: "its 10 models were picked over 944 candidates" on a run limited to one judge,
    where the choice was among the far fewer candidates the limit admits. Under a limit the
    sentence names the limit instead of the menu's size."""
    from fcps_core.reports.explain import verdict_parts
    d = _frontier_result(result)
    whole = " ".join(verdict_parts(d)["headline"])
    assert f"picked over {d['menu_size']:,} candidates" in whole, whole
    d["choice_info"] = {"constraint": {"max_judges": 2, "budget": None}}
    limited = " ".join(verdict_parts(d)["headline"])
    assert "picked among the menu's candidates within at most 2 judges" in limited, limited
    assert "picked over" not in limited
