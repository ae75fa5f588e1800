"""Drop one judge: what the same choice rule deploys without it, from the held-out matrix.

For every judge the deployed predictor calls (every member's judges for an average), the
choice rule of the selection (argmin, a within-tie rule or the tie average, under the
user's own limits :mod:`.constraints`) is replayed on the candidates that do *not* call
that judge, on the same cross-fitted held-out predictions it chose on (no refit). The
judge's drop-one change is

    change_j = risk(best admissible choice without j) - risk(deployed choice),

both held-out risks on the same rows, with the group-clustered paired 95 % interval
change_j +- 1.96 SE (SE of the mean of the per-row loss differences, clustered by group, as
the frontier's ``diff_vs_best``). Above 0 dropping the judge raises the risk (the judge
helps); below 0 it lowers it (the judge hurts). The deployed choice is the best over a
menu that contains every candidate without j, so the change is >= 0 up to the tie rule's
averaging; its size says what the judge is worth to this deployment.

This works the same for one deployed model and for an average of tied models: a judge that
only one of ten members uses gets a row too (the rule then averages other tied models
without it). A judge every candidate calls has no admissible choice without it
(``change`` None, ``note`` says so). Under a binding limit the limit's filters
(:meth:`.constraints.PanelConstraint.mask` with ``among``) pick among the candidates without
the judge: with ``full_limit_sets`` (the default) the longest ``info_first`` prefix within
the limit that does not call it, i.e. the judges before it in that order, and every
admissible candidate without it when the judge is that path's first.

Unlike the next-judge plan's drop rows (:func:`fcps_core.planning.next_judge.plan_next_judge`,
which refit the deployed family without the judge), nothing is refitted: it costs one
replay of the choice rule per deployed judge, so every selection carries it.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..defaults import TIE_AVERAGE
from .choice import best_column
from .limited_rule import LimitedRule, heldout_escape
from .frontier import HeldoutChoice, RuleReplay, grouped_columns
from .honesty import UNIT_SUM_CELLS, Z95


def _verdict(lo: float, hi: float) -> str:
    if lo > 0:
        return "raises risk"
    if hi < 0:
        return "lowers risk"
    return "no clear change"


def drop_one_choices(result) -> dict | None:
    """Each deployed judge's drop-one change (see the module): ``{"judges": [{judge,
    change, ci, verdict, risk, family, members, K, note}], "risk": deployed held-out risk,
    "rule", "method"}``; None when the result has no held-out matrix."""
    heldout = getattr(result, "heldout", None)
    if heldout is None:
        return None
    cands = result.candidates
    names = list(result.panel.judge_names)
    replay = RuleReplay(result, heldout)
    limited = LimitedRule.of(result.selector, cands)
    members_fit = limited.constraint.members_test(cands, names, replay.bits)
    deployed = HeldoutChoice(heldout, replay.grouped, replay.selector.objective, result.selected_index,
                             result.members)
    # the judges the deployed predictor calls (its distinct models': an average's member
    # merged into another model computes nothing the predictor calls it for)
    deployed_judges = list(dict.fromkeys(n for c in result.deployed_members for n in c.judges))
    # which judges each candidate calls, once: (candidates, judges)
    masks = [int(mk) for mk in replay.bits.masks]
    calls = np.array([[(mk >> j) & 1 for j in range(len(names))] for mk in masks], dtype=bool)
    rows, cache = [], {}
    z = getattr(result.selector, "limit_escape_z", None)
    escape = limited.within() if z is not None and limited.whole_first else None
    escape_fit = None if escape is None else escape.constraint.members_test(cands, names, replay.bits)
    # a rule with a tie set reads the paired SEs against each replay's best column, each one
    # all columns' unit sums: formed once for all the replays (the same sparse products, so
    # the same SEs: :meth:`.choice.GroupedLosses.unit_sums_held`) when there are several
    shared = replay.rule != "argmin" and len(deployed_judges) > 1
    with replay.grouped.unit_sums_held(UNIT_SUM_CELLS) if shared else contextlib.nullcontext():
        for name in deployed_judges:
            # the limit's own filters (the info_first prefix using the whole limit, ...) pick
            # among the candidates without the judge, as on a menu without it
            without_judge = ~calls[:, names.index(name)]
            allowed = limited.admissible(replay.bits, among=without_judge)
            allowed = without_judge if allowed is None else allowed
            if not allowed.any():
                rows.append({"judge": name, "change": None, "ci": None, "verdict": None, "risk": None,
                             "family": None, "members": None, "K": None,
                             "note": "every admissible candidate calls this judge: no choice without it"})
                continue
            # the limited rule: the choice over all judges without it, where it meets the limit
            without, met = limited.deploy(lambda: replay.decide(without_judge),
                                          lambda: replay.decide(allowed, members_fit),
                                          lambda h: h.members or [h.chosen])
            if escape is not None and not met:
                # the escape: the best choice within the limit without the judge, where it
                # beats the prefix's choice clearly (as the deployed choice is made)
                loose = escape.admissible(replay.bits, among=without_judge)
                test = heldout_escape(heldout, replay.selector.objective, list(without.key),
                                      [best_column(replay.grouped.means(), replay.tie_rank, loose)], z)
                if test is not None and test["escaped"]:
                    without = replay.decide(loose, escape_fit)
            if without.key not in cache:
                g = grouped_columns(heldout, without.loss, deployed.loss)
                means = g.means()
                change = float(means[0] - means[1])
                se = 0.0 if np.array_equal(without.loss, deployed.loss) else float(g.paired_se(1, means=means)[0])
                cache[without.key] = (float(means[0]), change, [change - Z95 * se, change + Z95 * se])
            risk, change, ci = cache[without.key]
            picked = [cands[m] for m in without.key]
            rows.append({"judge": name, "change": change, "ci": ci, "verdict": _verdict(*ci), "risk": risk,
                         "family": TIE_AVERAGE if len(picked) > 1 else picked[0].family,
                         "members": len(picked), "K": len({n for c in picked for n in c.judges}), "note": None})
    deployed_risk = float(grouped_columns(heldout, deployed.loss).means()[0])
    # the one-SE guard is not replayed: without the judge the plain argmin is taken
    return {"judges": rows, "risk": deployed_risk, "objective": replay.selector.objective,
            "rule": "argmin (guard not replayed)" if result.guard else replay.rule,
            "method": "the same choice rule replayed without the judge on the held-out predictions (no refit); "
                      "change = its held-out risk - the deployed choice's, group-clustered paired 95% interval"}
