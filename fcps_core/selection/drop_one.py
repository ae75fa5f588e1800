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
(``change`` None, ``note`` says so).

Unlike the next-judge plan's drop rows (:func:`fcps_core.planning.next_judge.plan_next_judge`,
which refit the deployed family without the judge), nothing is refitted: it costs one
replay of the choice rule per deployed judge, so every selection carries it.
"""

from __future__ import annotations

import numpy as np

from ..defaults import TIE_AVERAGE
from .choice import GroupedLosses, choose, line_ids, preference_order, tie_break_order
from .constraints import JudgeBits, selector_constraint
from .members import member_lookup

#: the two-sided 95 % normal quantile
Z95 = 1.959963984540054


def _verdict(lo: float, hi: float) -> str:
    if lo > 0:
        return "raises risk"
    if hi < 0:
        return "lowers risk"
    return "no clear change"


def _choice_loss(heldout, grouped: GroupedLosses, objective: str, chosen: int, members) -> np.ndarray:
    """Per-distinct-row held-out loss of one choice (a candidate, or the average of ``members``)."""
    if members and len(members) > 1:
        return np.asarray(heldout.average_losses(objective, list(members)), dtype=float)
    return np.asarray(grouped.losses[:, grouped.col[int(chosen)]], dtype=float)


def drop_one_choices(result) -> dict | None:
    """Each deployed judge's drop-one change (see the module): ``{"judges": [{judge,
    change, ci, verdict, risk, family, members, K, note}], "risk": deployed held-out risk,
    "rule", "method"}``; None when the result has no held-out matrix."""
    heldout = getattr(result, "heldout", None)
    if heldout is None:
        return None
    sel = result.selector
    cands = result.candidates
    names = list(result.panel.judge_names)
    obj = sel.objective
    rule = "argmin" if result.guard else sel.choice
    grouped = heldout.grouped(obj)
    tie_rank = tie_break_order(cands)
    simple_rank = preference_order(rule, cands, sel.judge_costs)
    lines = line_ids(cands)
    lookup = member_lookup(heldout, cands)
    signatures = np.array([lookup[c] for c in range(len(cands))], dtype=np.int64)
    bits = JudgeBits(cands, names)
    limit = selector_constraint(sel)
    base = limit.mask(cands, bits)
    base = np.ones(len(cands), dtype=bool) if base is None else base
    members_fit = limit.members_test(cands, names, bits)
    deployed_members = list(result.members or [result.selected_index])
    deployed_loss = _choice_loss(heldout, grouped, obj, deployed_members[0], deployed_members)
    deployed_judges = list(dict.fromkeys(n for m in deployed_members for n in cands[m].judges))
    u = heldout.units()
    masks = np.array(bits.masks, dtype=object)
    rows, cache = [], {}
    for name in deployed_judges:
        j = names.index(name)
        allowed = base & np.array([not (int(mk) >> j) & 1 for mk in masks], dtype=bool)
        if not allowed.any():
            rows.append({"judge": name, "change": None, "ci": None, "verdict": None, "risk": None,
                         "family": None, "members": None, "K": None,
                         "note": "every admissible candidate calls this judge: no choice without it"})
            continue
        ch = choose(rule, grouped, tie_rank=tie_rank, simple_rank=simple_rank, signatures=signatures,
                    max_members=sel.max_members, lines=lines, allowed=allowed, members_fit=members_fit)
        key = tuple(sorted(ch.members)) if ch.members else (int(ch.chosen),)
        if key not in cache:
            loss = _choice_loss(heldout, grouped, obj, ch.chosen, ch.members)
            g = GroupedLosses.from_units(np.column_stack([loss, deployed_loss]), u.matrix, u.groups,
                                         u.group_unit, np.arange(2))
            means = g.means()
            change = float(means[0] - means[1])
            se = 0.0 if np.array_equal(loss, deployed_loss) else float(g.paired_se(1, means=means)[0])
            cache[key] = (float(means[0]), change, [change - Z95 * se, change + Z95 * se])
        risk, change, ci = cache[key]
        picked = [cands[m] for m in key]
        rows.append({"judge": name, "change": change, "ci": ci, "verdict": _verdict(*ci), "risk": risk,
                     "family": TIE_AVERAGE if len(picked) > 1 else picked[0].family,
                     "members": len(picked), "K": len({n for c in picked for n in c.judges}), "note": None})
    deployed_risk = float(GroupedLosses.from_units(deployed_loss[:, None], u.matrix, u.groups, u.group_unit,
                                                   np.arange(1)).means()[0])
    # the one-SE guard is not replayed: without the judge the plain argmin is taken
    return {"judges": rows, "risk": deployed_risk, "objective": obj,
            "rule": "argmin (guard not replayed)" if result.guard else rule,
            "method": "the same choice rule replayed without the judge on the held-out predictions (no refit); "
                      "change = its held-out risk - the deployed choice's, group-clustered paired 95% interval"}
