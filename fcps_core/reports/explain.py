"""Plain-language verdicts from a selection's JSON contract (CLI, dashboard, reports).

The headline says what to deploy and how good it is, in words a practitioner can act on:
"Deploy ridge_iso over judges A, B, C (K=3 of 65): held-out MSE 0.142 ± 0.008, about
0.0110 better than the best single judge (gpt-4, isotonic: out-of-bag 0.1580 against this choice's 0.1470;
paired 95% interval of the difference 0.0040 to 0.0180) and not clearly different from
logistic over all judges. Estimated MSE on new items 0.147 (95% interval 0.139 to 0.155)." The details that
follow name the statistical ties and the regime.

Every printed difference is the difference of two numbers printed beside it, on one basis:
a baseline's paired difference is taken over the bootstrap draws that replay the choice
(:func:`baseline_pair`), so it is printed between the recipe's and the choice's out-of-bag
risks; the frontier's differences are between held-out risks, or between the estimates on
new items the answer prints (:func:`further_clause`).

Every number carries its uncertainty, and a comparison is worded by its interval: the
selection is called *better* than a baseline only when the 95% interval of the paired
difference (baseline risk - selection risk) lies above 0, *worse* only when it lies below
0, and *not clearly different* otherwise (the word "tied" is kept for the one tie set of
models within one paired SE of the best, :func:`tie_sentence`); a baseline without a paired
interval is reported without a claim.
"""

from __future__ import annotations

import math
import re

from ..data.panel import INFERRED_LABEL_NOTE
from ..defaults import deployed_family_name
from ..defaults import limit_words as deployed_limit_words
from ..wording import fixed_text, gain_text, interval_end, side_digits, signed_change  # noqa: F401 (the pages read them here)
from .names import family_name, judges_count, path_name

#: how many judge names the headline spells out before "and N more"
SHOWN_JUDGES = 6


_f = fixed_text          # the module's many number cells (wording.fixed_text)


def _count(n) -> str:
    """A count as the pages' metrics print it ("1,503"); "many" when unknown."""
    return f"{n:,}" if isinstance(n, int) else "many"


def _names(items: list[str], limit: int = SHOWN_JUDGES) -> str:
    shown = list(items[:limit])
    if len(items) > limit:
        shown.append(f"{len(items) - limit} more")
    if len(shown) <= 1:
        return "".join(shown)
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def deployed_members(selected: dict) -> list[dict]:
    """The models a deployment averages: ``selected["members"]`` when it holds several
    (a result's ``selected``, a frontier point), else empty -- one model is the dict itself
    (its family, K and path)."""
    members = selected.get("members") or []
    return list(members) if len(members) > 1 else []


def deployed_kind(selected: dict) -> str:
    """What a deployment is, in the words the pages, reports and CLI use for its own risk:
    "average" (of several models) or "model"."""
    return "average" if deployed_members(selected) else "model"


def display_family(selected: dict) -> str:
    """A deployment's combination for people: its family for one model, "average of N
    models" for more (:func:`fcps_core.defaults.deployed_family_name`)."""
    return deployed_family_name(family_name(selected.get("family")), len(deployed_members(selected)))


def deployed_name(selected: dict) -> str:
    if deployed_members(selected):
        return f"{combined_as(selected)} over {judges_count(selected['K'])}"
    return (f"{family_name(selected['family'])} over {judges_count(selected['K'])} "
            f"(path: {path_name(selected['path'])})")


def average_words(members: list[dict]) -> str:
    """"an equal-weight average of m statistically tied models", or, when tied candidates
    that compute the same refitted model count once with their share (members' ``weight``
    unequal), "a weighted average of m ..."."""
    weights = {round(float(m.get("weight") or 0.0), 12) for m in members}
    kind = "an equal-weight" if len(weights) <= 1 else "a weighted"
    return f"{kind} average of {len(members)} statistically tied models"


def combined_as(selected: dict) -> str:
    """How the deployed judges are combined: a family, or an average of m distinct models
    (:func:`average_words`; their families), in plain names (:mod:`fcps_core.reports.names`)."""
    members = deployed_members(selected)
    if not members:
        return family_name(selected.get("family"))
    fams = sorted({family_name(m["family"]) for m in members})
    return f"{average_words(members)} ({', '.join(fams)})"


def judge_order(d: dict) -> tuple[list[str], str]:
    """The deployed judges by contribution, with the basis of the order: ``"drop"`` (largest
    drop-one risk change first: dropping the judge raises the risk most), ``"share"``
    (largest weight share first) or ``"path"`` (path order, when neither is known).

    A judge whose drop-one change is missing because no admissible candidate leaves it out
    (its ``drop_note`` says so: typically the best single judge, which heads every path) is
    the one no choice can do without: it comes first, and the others follow by their drop-one
    change. Without that, one such judge would send the whole order back to weight share,
    under a heading (and beside a Judges page) that says drop-one."""
    judges = list(d["selected"].get("judges") or [])
    contrib = {j["judge"]: j for j in ((d.get("judges_report") or {}).get("contribution") or {}).get("judges") or []}
    drop = {j: (contrib.get(j) or {}).get("drop_risk_change") for j in judges}
    share = {j: (contrib.get(j) or {}).get("weight_share") for j in judges}
    needed = {j for j in judges if drop[j] is None and (contrib.get(j) or {}).get("drop_note")}
    if any(drop[j] is not None for j in judges) and all(drop[j] is not None or j in needed for j in judges):
        # stable: judges every candidate calls first (by share among themselves), then by drop-one change
        judges.sort(key=lambda j: (j not in needed, -(drop[j] or 0.0), -(share[j] or 0.0)))
        return judges, "drop"
    if judges and all(share[j] is not None for j in judges):
        judges.sort(key=lambda j: -share[j])
        return judges, "share"
    return judges, "path"


def deployed_judges(d: dict) -> list[str]:
    """The deployed judges by contribution (:func:`judge_order`): largest drop-one risk
    change first where the result has it, a judge no candidate leaves out ahead of them;
    else largest weight share; else path order."""
    return judge_order(d)[0]


def signed_weights(d: dict) -> dict[str, float]:
    """Each deployed judge's signed weight, averaged over the deployed models that have
    weights (a judge a member does not use counts 0 there): the direction a judge pushes the
    prediction, which a weight share (a magnitude) hides. The judges report's own ``weight``
    where it has one (the same mean, :func:`fcps_core.selection.judges_report.contributions`)."""
    rows = ((d.get("judges_report") or {}).get("contribution") or {}).get("judges") or []
    if rows and all(r.get("weight") is not None for r in rows):
        return {r["judge"]: float(r["weight"]) for r in rows}
    models = ((d.get("judges_report") or {}).get("contribution") or {}).get("models") or []
    weighted = [m["weights"] for m in models if m.get("weights")]
    if not weighted:
        return {}
    names = {n for w in weighted for n in w}
    return {n: sum(float(w.get(n, 0.0)) for w in weighted) / len(weighted) for n in names}


def same_drop_choice(d: dict) -> dict[str, list[str]]:
    """Deployed judges whose drop-one falls back on the same predictor as another deployed
    judge's (the judges report's ``drop_choice``: family, members, K and risk alike): judge ->
    the others. Their drop-one changes are then one number (walk 11: two judges at +0.04580,
    both drops deploying the same 8-judge model), a fact about the menu without either judge,
    not about each judge, which the tables' meaning column says (:func:`drop_meaning`)."""
    rows = ((d.get("judges_report") or {}).get("contribution") or {}).get("judges") or []
    groups: dict = {}
    for r in rows:
        c = r.get("drop_choice")
        if c and r.get("drop_risk_change") is not None:
            groups.setdefault((c.get("family"), c.get("members"), c.get("K"), c.get("risk")), []).append(r["judge"])
    return {j: [o for o in g if o != j] for g in groups.values() if len(g) > 1 for j in g}


def drop_meaning(verdict: str, others: list[str]) -> str:
    """A judge's drop-one verdict, with the judges whose drop falls back on the same predictor
    (:func:`same_drop_choice`) named after it."""
    if not others:
        return verdict
    return f"{verdict} (the same choice as without {_names(others, 3)})"


def shared_with(d: dict) -> dict[str, list[str]]:
    """Deployed judges that are near-duplicates of another deployed judge (the judges
    report's redundancy pairs): their weights are shared between them, so neither's weight
    alone says what it adds."""
    deployed = set(d["selected"].get("judges") or [])
    pairs = ((d.get("judges_report") or {}).get("redundancy") or {}).get("pairs") or []
    out: dict[str, list[str]] = {}
    for p in pairs:
        a, b = (p.get("judges") or [None, None])[:2]
        if a in deployed and b in deployed:
            out.setdefault(a, []).append(b)
            out.setdefault(b, []).append(a)
    return out


#: a drop-one row's interval verdict, in the words of which way is better
DROP_VERDICT_WORDS = {"raises risk": "dropping it raises the risk: the judge helps",
                      "lowers risk": "dropping it lowers the risk: the judge hurts",
                      "no clear change": "no clear change: the interval holds 0"}


def drop_verdict_words(verdict):
    """A drop-one verdict ('raises risk', ...) said the way that is unambiguous for a drop."""
    return DROP_VERDICT_WORDS.get(verdict, verdict)


def drop_words(change) -> str:
    """What a drop-one risk change means, in the direction that is better."""
    if change is None:
        return ""
    if change > 0:
        return "dropping it raises the risk: the judge helps"
    if change < 0:
        return "dropping it lowers the risk: the judge hurts"
    return "dropping it leaves the risk unchanged"


def pressure_text(v) -> str:
    """A table pressure as every page shows it: 3 decimals ("0.035")."""
    return "-" if v is None else f"{round(v, 3) + 0.0:.3f}"


def _same_key(c: dict) -> tuple:
    """What makes two candidates the same predictor: family, parameters and the judge set
    (the path only orders the judges)."""
    params = tuple(sorted((str(k), str(v)) for k, v in (c.get("params") or {}).items()))
    return c.get("family"), params, tuple(sorted(c.get("judges") or []))


def _interval_text(v: dict | None, digits: int = 3) -> str:
    """'0.142 (95% interval 0.139 to 0.155)' from {estimate, ci}."""
    if not v or v.get("estimate") is None:
        return "-"
    lo, hi = (v.get("ci") or [None, None])[:2]
    return f"{_f(v['estimate'], digits)} (95% interval {interval_end(lo, digits)} to {interval_end(hi, digits)})"


def end_digits(values, digits: int = 4) -> int:
    """The decimals a column of interval ends needs so that none that is not 0 prints as 0
    (its side of 0 unreadable, "+0.0000" beside "worse"): ``digits``, or more (:func:`.wording.interval_end`)."""
    need = [side_digits(v) for v in values if v is not None and math.isfinite(v) and v != 0 and round(v, digits) == 0]
    return max([digits, *need])


def point_estimate(p: dict) -> dict:
    """A frontier point's estimate on new items: its deployed-risk estimate, else its
    held-out risk with the clustered interval."""
    return p.get("deployed_risk") or {"estimate": p.get("risk"), "ci": p.get("ci")}


def frontier_point(d: dict, n_judges: int | None = None) -> dict | None:
    """The frontier point deployed (``n_judges`` None: the one marked chosen) or the one
    of ``n_judges`` (a panel-size point)."""
    fr = d.get("frontier") or []
    if n_judges is None:
        return next((p for p in fr if p.get("chosen")), None)
    return next((p for p in fr if p.get("constraint") == "max_judges" and p.get("n_judges") == n_judges), None)


def point_judges(d: dict, p: dict) -> list[str]:
    """A point's judges, by contribution when it is the deployed one; else in the order of
    their own risk (the run's info_first path, the order a limit takes them in), where the
    run has that path."""
    if p.get("chosen") and set(p.get("judges") or []) == set(d["selected"].get("judges") or []):
        return deployed_judges(d)
    judges = list(p.get("judges") or [])
    order = next((list(q.get("judges") or []) for q in d.get("paths") or []
                  if isinstance(q, dict) and q.get("rule") == "info_first"), [])
    rank = {j: i for i, j in enumerate(order)}
    return sorted(judges, key=lambda j: rank.get(j, len(order)))


def _beside(d: dict, p: dict, looser: bool) -> list[dict]:
    """The frontier points of ``p``'s kind with a looser limit than ``p`` (more judges, or a
    larger budget), or with a tighter one (``looser`` False)."""
    fr = d.get("frontier") or []
    if p.get("constraint") == "budget":
        level, kind = (lambda q: q.get("cost") or 0), "budget"
    else:
        level, kind = (lambda q: q["n_judges"]), "max_judges"
    return [q for q in fr if q.get("constraint") == kind and (level(q) > level(p) if looser else level(q) < level(p))]


def further_clause(d: dict, p: dict, J: int, digits: int = 3) -> str:
    """What more judges (a larger budget) do to point ``p``'s estimate, on the basis the
    answer prints it (:func:`point_estimate`: the bias-corrected deployed risk where every
    point has one, else the held-out risk): the lowest estimate among the looser points and
    the change d = that estimate - p's, both as printed, with its direction and the paired
    bootstrap interval of the change (the point's ``more_judges_estimate``: both choices
    scored in the same draws); without that interval, the reached estimate's own. Without a
    looser point: p is the choice over all judges."""
    looser = _beside(d, p, looser=True)
    budget = p.get("constraint") == "budget"
    if not looser:
        return "No larger budget level is on the frontier" if budget else \
            f"It is the choice with all {J} judges allowed (no larger limit to compare with)"
    deployed = bool(p.get("deployed_risk")) and all(q.get("deployed_risk") for q in looser)
    est = point_estimate if deployed else (lambda x: {"estimate": x.get("risk"), "ci": x.get("ci")})
    obj = _objective(d).upper()
    kind = "estimated" if deployed else "held-out"
    # the point the frontier paired with this one (its estimate change has a paired interval)
    paired = p.get("more_judges_estimate") if deployed else None
    same = [x for x in looser if paired and (x["n_judges"], x.get("cost")) == (paired["n_judges"], paired.get("cost"))]
    q = same[0] if same else min(looser, key=lambda x: (round(est(x)["estimate"], digits), x["n_judges"]))
    paired = paired if same else None
    mine, best = round(est(p)["estimate"], digits), round(est(q)["estimate"], digits)
    change = best - mine            # of the numbers as printed
    more = "A larger budget" if budget else f"More judges (up to all {J})"
    where = f"at a cost of {q['cost']:g} per item" if budget else \
        f"with {len(q.get('judges') or [])} judge{'s' if len(q.get('judges') or []) != 1 else ''}"
    # with the change's own interval, the reached estimate needs none; without it, its own
    reached = f"{_f(est(q)['estimate'], digits)} {where}" if paired else f"{_interval_text(est(q), digits)} {where}"
    within = "" if not paired else \
        f" (paired 95% interval of the change {signed_change(paired['ci'][0], digits)} to {signed_change(paired['ci'][1], digits)})"
    base = "" if deployed or not p.get("deployed_risk") else f" (held-out {obj} here: {_f(p.get('risk'), digits)})"
    do = "does" if budget else "do"
    if change < 0:
        # the change to the best looser point, not a bound (its paired interval can reach beyond it)
        best_with = "The best with a larger budget" if budget else f"The best with more judges (up to all {J})"
        if paired and paired["ci"][0] <= 0 <= paired["ci"][1]:
            # a drop whose paired interval runs from a drop to a rise: no clear change, said so
            within = within[:-1] + ", which holds 0: no clear change)"
        return f"{best_with} lowers the {kind} {obj}{base} by {_f(-change, digits)}{within}: to {reached}"
    if change == 0:
        return f"{more} {do} not change the {kind} {obj}{base}{within} (the lowest with more: {reached})"
    return (f"{more} {do} not lower the {kind} {obj}{base}: the lowest with more is {reached}, "
            f"{_f(change, digits)} higher{within}")


def limit_deploys_words(d: dict, budget: bool = False) -> str:
    """What a frontier point (a limit of k judges, or a budget) deploys, in words, by the
    run's rule (``menu.full_limit_sets``: the first judges by their own risk; else the best
    predictor among every candidate within the limit)."""
    menu = d.get("menu") or {}
    if bool(menu.get("full_limit_sets")):
        # :mod:`fcps_core.selection.constraints`: the choice over all judges where it meets
        # the limit, else the info_first prefix (or, with the escape, the best within the
        # limit where it is clearly lower), else (none fits) every candidate within it
        z = menu.get("limit_escape_z")
        escape = "" if z is None else \
            (f", or the best predictor within it where that one's held-out risk is lower by more than "
             f"{z:g} paired SEs")
        return ("the choice over all judges if it fits the budget, else the longest run of the judges, in the "
                f"order of their own risk, within it{escape}, combined as the choice rule picks (when even the "
                "first costs more: the best predictor within the budget)") if budget else \
            ("the choice over all judges if it calls at most k, else the first k judges in the order of their "
             f"own risk{escape.replace('within it', 'with at most k judges')}, combined as the choice rule picks")
    return "the best predictor the choice rule deploys within the budget" if budget else \
        "the best predictor the choice rule deploys with at most k judges"


def fewer_clause(d: dict, p: dict, digits: int = 3) -> str:
    """'' unless a tighter point's estimate, as printed, is below point ``p``'s (a limit
    deploys the first judges in the practitioner's order, so a point may score worse than a
    smaller one); then the lowest such point: "fewer judges do better here: r with k judges",
    so the answer never leaves a lower number on the frontier unsaid. The one-judge point is
    left to the answer's own one-judge clause."""
    # a tighter limit that deploys this very predictor is not "fewer judges" or "a smaller budget":
    # its estimate differs from p's only by the replay of another limit (walk 5: budgets 1.6 and 3
    # both deploy the same 3 judges' average, estimated 0.0362 and 0.0364)
    tighter = [q for q in _beside(d, p, looser=False) if (q.get("n_judges") != 1 or q.get("constraint") == "budget")
               and _deployment_key(q) != _deployment_key(p)]
    if not tighter:
        return ""
    mine = round(point_estimate(p)["estimate"], digits)
    q = min(tighter, key=lambda x: (round(point_estimate(x)["estimate"], digits), x["n_judges"]))
    if round(point_estimate(q)["estimate"], digits) >= mine:
        return ""
    kind = "estimated" if q.get("deployed_risk") else "held-out"
    n = len(q.get("judges") or [])
    budget = q.get("constraint") == "budget"
    where = f"at a cost of {q['cost']:g} per item" if budget else \
        f"with {n} judge{'s' if n != 1 else ''} ({_names(point_judges(d, q))})"
    smaller = "a smaller budget" if budget else "fewer judges"
    reached = f"{kind} {_interval_text(point_estimate(q), digits)} {where}"
    better = f"; {smaller} {'does' if budget else 'do'} better here: {reached}"
    both = q.get("deployed_risk") and p.get("deployed_risk")
    # the frontier's paired interval of the change from p to q (q's estimate - p's): p's own
    # change from its lowest tighter point where that is q (walk 10: HANNA's answer said 46
    # judges "do better" than 92 on a paired interval of -0.0009 to +0.0002, read nowhere),
    # else q's change to its lowest looser point where that is p
    own = _tighter_pair(p, _beside(d, p, looser=False), budget) if both else None
    if own is not None and own[0] is q:
        lo, hi = -own[1]["ci"][1], -own[1]["ci"][0]
    else:
        change = _paired_change_to(q, p) if both else None
        if change is None:
            # no paired interval for this change (a result stored before the frontier carried
            # one): lower as printed, not called better
            return f"; {smaller} {'scores' if budget else 'score'} lower here: {reached}"
        lo, hi = -change["ci"][1], -change["ci"][0]
    within = f"paired 95% interval of the change {signed_change(lo, digits)} to {signed_change(hi, digits)}"
    if hi < 0:
        return f"{better} ({within})"
    # lower as printed, but the paired interval of the change holds 0: not called better
    return f"; {smaller} {'scores' if budget else 'score'} a little lower here, not clearly: {reached} " \
           f"({within}, which holds 0: no clear change)"


def non_monotone_note(d: dict, budget: bool = False, *, most: int = 3) -> str:
    """'' unless a looser limit of the frontier (more judges allowed, or a larger budget)
    deploys a predictor that does clearly worse than a tighter limit's; then the plain note
    saying so, naming up to ``most`` such points, each against the lowest tighter point.
    Clearly: on the estimates on new items (where every point has one), the point's
    ``fewer_judges_estimate`` (its estimate less the lowest tighter point's, both choices
    replayed in the same bootstrap draws) is above 0 as printed and its paired 95 %
    interval above 0; a rise within that interval is no claim (walk 10: a limit of 10 judges
    "higher" than 9 by 0.000001 of a +-0.00002 interval), :func:`frontier_noise_note` says
    it. Without estimates, on the held-out risks as printed, which the limits' choices read.
    Each limit deploys what the run's rule picks within it, so a larger limit need not do
    better; two limits deploying the same predictor are not compared."""
    kind = "budget" if budget else "max_judges"
    points = [p for p in d.get("frontier") or [] if p.get("constraint") == kind]
    deployed = all(p.get("deployed_risk") for p in points)
    level = (lambda q: q.get("cost") or 0) if budget else (lambda q: q["n_judges"])
    digits = max([4, *(answer_digits(p) for p in points)])
    found = []
    if deployed:
        for p in points:
            change = _clear_rise(p, points, digits, budget)
            if change is not None:
                found.append((p, *change))
    else:
        points = [p for p in points if p.get("risk") is not None]
        for p in points:
            tighter = [q for q in points if level(q) < level(p) and _deployment_key(q) != _deployment_key(p)
                       and round(q["risk"], digits) < round(p["risk"], digits)]
            if tighter:
                found.append((p, min(tighter, key=lambda q: (round(q["risk"], digits), level(q))), None))
    if not found:
        return ""
    obj = _objective(d).upper()
    value = (lambda q: point_estimate(q)["estimate"]) if deployed else (lambda q: q["risk"])

    def said(p, q, change):
        paired = "" if change is None else \
            (f" ({signed_change(change['estimate'], digits)}, paired 95% interval {signed_change(change['ci'][0], digits)} "
             f"to {signed_change(change['ci'][1], digits)})")
        return (f"{_limit_at(p, budget)} deploys {'estimated' if deployed else 'held-out'} {obj} "
                f"{_f(value(p), digits)}, higher than {_f(value(q), digits)} with {_limit_at(q, budget)}{paired}")
    more = f"; {len(found) - most} more such point{'s' if len(found) - most != 1 else ''}" if len(found) > most else ""
    head = ("A larger budget does not always do better here (each budget deploys by the run's rule within it, "
            "not the best of the smaller budgets' choices): ") if budget else \
        ("More judges allowed do not always do better here (each limit deploys by the run's rule within it, not "
         "the best of the smaller limits' choices): ")
    return head + "; ".join(said(*f) for f in found[:most]) + more + "."


def _limit_at(q: dict, budget: bool) -> str:
    return f"a budget of {q['cost']:g}" if budget else f"a limit of {judges_count(q['n_judges'])}"


def _tighter_pair(p: dict, points: list[dict], budget: bool) -> tuple[dict, dict] | None:
    """(the tighter point, the change) of frontier point ``p``'s ``fewer_judges_estimate``
    (p's estimate less the lowest tighter point's deploying other models, paired in the
    same bootstrap draws), None where p has none or it names no point of ``points``."""
    change = p.get("fewer_judges_estimate")
    if not change or change.get("ci") is None:
        return None
    at = (lambda q: q.get("cost")) if budget else (lambda q: q.get("n_judges"))
    q = next((q for q in points if at(q) == (change.get("cost") if budget else change.get("n_judges"))), None)
    return None if q is None or _deployment_key(q) == _deployment_key(p) else (q, change)


def _clear_rise(p: dict, points: list[dict], digits: int, budget: bool) -> tuple[dict, dict] | None:
    """(tighter point, change) where p's estimate, printed at ``digits``, is above the tighter
    point's and the change's paired interval is above 0 (its low end prints with the digits
    that keep its side, :func:`.wording.interval_end`); else None."""
    pair = _tighter_pair(p, points, budget)
    if pair is None:
        return None
    q, change = pair
    shown = round(point_estimate(p)["estimate"], digits) > round(point_estimate(q)["estimate"], digits)
    return pair if shown and change["ci"][0] > 0 else None


def frontier_noise_note(d: dict, budget: bool = False) -> str:
    """'' unless the frontier's estimates on new items could be read as saying more than they
    do; then one plain sentence for each of (walk 10, a panel whose MSE is near 0.0002):

    * a looser limit's estimate printed higher than a tighter limit's within the paired
      interval of the difference (not clearly: :func:`non_monotone_note` says the clear
      ones), the widest such rise named;
    * neighbouring rows deploying the same models with estimates that print differently
      (limits 10-19 at 0.000198, 20 at 0.000195): each estimate replays choosing under
      its own limit, and those choices differ in some bootstrap draws."""
    kind = "budget" if budget else "max_judges"
    points = [p for p in d.get("frontier") or [] if p.get("constraint") == kind]
    if not points or not all(p.get("deployed_risk") for p in points):
        return ""
    digits = max([4, *(answer_digits(p) for p in points)])
    obj = _objective(d).upper()
    rows = frontier_rows(d, kind)

    def span(row):
        text = limit_span(row["levels"], kind)
        if len(row["levels"]) == 1:
            return _limit_at(row["points"][0], budget)
        return f"budgets of {text}" if budget else f"limits of {text} judges"
    out = []
    rises = []
    for row in rows:
        p = row["points"][0]
        pair = _tighter_pair(p, points, budget)
        if pair is None or _clear_rise(p, points, digits, budget) is not None:
            continue
        q, change = pair
        if round(point_estimate(p)["estimate"], digits) > round(point_estimate(q)["estimate"], digits):
            rises.append((change["estimate"], row, q, change))
    if rises:
        _, row, q, change = max(rises, key=lambda r: r[0])
        p = row["points"][0]
        # counted as the rows are, each against its lowest tighter limit (walk 11 counted the
        # rises between neighbours, 2, against "the largest of 3 such rises")
        unit = "budgets" if budget else "rows"
        many = f" (the largest of {len(rises)} such {unit}, each compared with its lowest tighter " \
               f"{'budget' if budget else 'limit'})" if len(rises) > 1 else ""
        out.append(f"{'A larger budget' if budget else 'A looser limit'} is estimated a little higher than a tighter "
                   f"one here, not clearly: {span(row)} {_f(point_estimate(p)['estimate'], digits)} against "
                   f"{_f(point_estimate(q)['estimate'], digits)} with {_limit_at(q, budget)}, a change of "
                   f"{signed_change(change['estimate'], digits)} whose paired 95% interval "
                   f"{signed_change(change['ci'][0], digits)} to {signed_change(change['ci'][1], digits)} holds 0"
                   f"{many}.")
    same = [(a, b) for a, b in zip(rows, rows[1:]) if a["key"][0] == b["key"][0]]
    if same:
        a, b = same[0]
        est = (lambda row: _f(point_estimate(row["points"][0])["estimate"], digits))
        first = span(a)
        out.append(f"{first[0].upper() + first[1:]} and {span(b)} deploy the same models, estimated {obj} {est(a)} "
                   f"and {est(b)}: each estimate replays choosing under its own limit, and those choices differ in "
                   "some bootstrap draws.")
    return " ".join(out)


def _side(v: float, digits: int) -> int:
    """-1, 0 or 1: the sign of ``v`` as printed at ``digits`` decimals."""
    r = round(v, digits)
    return (r > 0) - (r < 0)


def _other_way_round(d: dict, tied: dict, held_side: int) -> str:
    """'' unless the estimates on new items (what the answer compares) put the smallest tied
    point ``tied`` and the choice over all judges the other way round from their held-out
    risks (``held_side``: the sign of the held-out difference the verdict prints, what the
    frontier's tie is judged on), both as printed; then both measures are named with the
    estimates (walk 6: the answer called 9 judges "a little lower, not clearly" on the
    estimates, the verdict's held-out risks put them higher)."""
    full = max((q for q in d.get("frontier") or [] if q.get("constraint") == "max_judges"),
               key=lambda q: q["n_judges"], default=None)
    mine, theirs = (tied.get("deployed_risk") or {}).get("estimate"), \
        ((full or {}).get("deployed_risk") or {}).get("estimate")
    if full is None or full is tied or mine is None or theirs is None:
        return ""
    digits = max(answer_digits(tied), answer_digits(full))
    if held_side * _side(round(mine, digits) - round(theirs, digits), digits) >= 0:
        return ""
    return (f"; its estimate on new items, which the answer compares, is "
            f"{'lower' if mine < theirs else 'higher'} instead ({_f(mine, digits)} against {_f(theirs, digits)}): "
            f"the held-out risks are what the frontier's tie is judged on, the estimates correct each for "
            f"choosing under its limit")


def _larger_not_tied(d: dict, tied: dict, chosen: dict, digits: int) -> str:
    """'' unless a panel size between the smallest tied point and the deployed one is clearly
    different from the choice over all judges (its paired interval excludes 0); then the first
    such, so "the smallest panel not clearly different has 8 judges" is not read as every
    larger one being tied (walk 12: 9 judges was clearly worse, +0.0043, 95% +0.0003 to +0.0083)."""
    n = len(chosen.get("judges") or [])
    for q in sorted((q for q in d.get("frontier") or [] if q.get("constraint") == "max_judges"
                     and tied["n_judges"] < q["n_judges"] and len(q.get("judges") or []) < n),
                    key=lambda q: q["n_judges"]):
        dv = q.get("diff_vs_best") or {}
        lo, hi = (dv.get("ci") or [None, None])[:2]
        if dv.get("estimate") is None or lo is None or hi is None or lo <= 0 <= hi:
            continue
        k = max(digits, side_digits(dv["estimate"]))
        return (f"; not every larger panel is tied: {judges_count(len(q.get('judges') or []))} (a limit of "
                f"{q['n_judges']}) {'is clearly worse' if lo > 0 else 'is clearly better'}, held-out "
                f"{signed_change(dv['estimate'], k)} (95% interval {signed_change(lo, k)} to {signed_change(hi, k)})")
    return ""


def _deployment_key(p: dict) -> tuple:
    """What frontier point ``p`` deploys: its family, judges and members (by candidate index),
    so two limits that deploy the same predictor compare equal."""
    members = tuple(sorted((m.get("index"), m.get("family"), m.get("K"), m.get("path"),
                            tuple(sorted((str(k), str(v)) for k, v in (m.get("params") or {}).items())))
                           for m in p.get("members") or []))
    return p.get("family"), tuple(sorted(p.get("judges") or [])), members


def _paired_change_to(q: dict, p: dict) -> dict | None:
    """The frontier's paired bootstrap change from the tighter point ``q`` to the looser
    point ``p`` (p's estimate - q's, with its 95% interval), when q's
    ``more_judges_estimate`` was paired with p; else None."""
    paired = q.get("more_judges_estimate")
    if not paired or paired.get("ci") is None:
        return None
    if (paired.get("n_judges"), paired.get("cost")) != (p.get("n_judges"), p.get("cost")):
        return None
    return paired


def frontier_rows(d: dict, kind: str = "max_judges") -> list[dict]:
    """The frontier's points of one limit (``"max_judges"``: panel sizes, ``"budget"``: cost
    levels) as the rows every front end shows (the CLI's FRONTIER, the Select page's control,
    the report's table): ``{"points": [...], "point": ..., "levels": [...]}``, one row per
    run of neighbouring limits that deploy the same predictor (:func:`_deployment_key`) *and*
    print the same estimate on new items at the answer's decimals; ``point`` is the deployed
    one where it is among them, else the first. Neighbours deploying the same predictor with
    estimates that print differently are two rows (the deployed limit's own estimate beside
    a tighter limit's replay of choosing under that limit; walk 7 saw one merged row print
    0.00131 where the chart and the note read 0.00137 for the same limits), so a row's
    number is what the chart and ``select --max-judges k`` print for every limit in it."""
    points = [p for p in d.get("frontier") or [] if p.get("constraint") == kind]
    digits = max([4, *(answer_digits(p) for p in d.get("frontier") or [])])

    def printed(p):
        v = point_estimate(p).get("estimate")
        return None if v is None else round(float(v), digits)
    rows: list[dict] = []
    for p in points:
        level = p.get("cost") if kind == "budget" else p.get("n_judges")
        key = (_deployment_key(p), printed(p))
        if rows and rows[-1]["key"] == key:
            rows[-1]["points"].append(p)
            rows[-1]["levels"].append(level)
            if p.get("chosen"):
                rows[-1]["point"] = p
            continue
        rows.append({"key": key, "points": [p], "levels": [level], "point": p})
    return rows


def limit_span(levels: list, kind: str = "max_judges", number=lambda v: f"{v:g}") -> str:
    """The limits of one :func:`frontier_rows` row as every front end writes them: panel
    sizes ``"8"`` or ``"8-13"``; cost levels written by ``number`` (``:g`` by default), one
    level where the first and the last print alike (one level reached by two sums of the
    same costs, 14.6 and 14.600000000000001, walk 5), else ``"0.23 to 0.63"``."""
    if kind == "budget":
        first, last = number(levels[0]), number(levels[-1])
        return first if first == last else f"{first} to {last}"
    return str(levels[0]) if len(levels) == 1 else f"{levels[0]}-{levels[-1]}"


def answer_digits(p: dict | None) -> int:
    """The decimals the answer prints frontier point ``p``'s numbers at: at least the 4 every
    page prints an estimate at (metric, frontier control, runs table), more when its interval
    is narrower (a panel whose MSE is near 0.002)."""
    if p is None:
        return 4
    ci = p.get("ci") or [0, 0]
    return max(4, side_digits(ci[1] - ci[0]))


#: the label notes of a panel whose numeric labels were mapped onto [0, 1] from another range
#: (declared with --label-range, or an integer rubric's observed range; data.labels.map_labels)
_RESCALED = re.compile(r"(?:labels normalised from|" + re.escape(INFERRED_LABEL_NOTE) + r") \[([^,\]]+), ([^\]]+)\]")


def label_scale_sentence(d: dict) -> str:
    """The scale the run's risks are on, in one sentence, when its labels were rescaled onto
    0-1 ("MSE is on the labels rescaled from [1, 5] to [0, 1]."); '' when they were not (labels
    already in [0, 1], verdicts, preferences). The objective is computed on the rescaled
    labels, so an MSE of 0.04 on a 1-5 rubric is 0.64 in squared rubric points."""
    m = _RESCALED.match(str((d.get("panel") or {}).get("label_note") or ""))
    if not m:
        return ""
    return f"{_objective(d).upper()} is on the labels rescaled from [{m.group(1)}, {m.group(2)}] to [0, 1]."


#: how the command line's reader deploys the frontier's one-judge point
CLI_ONE_JUDGE_WORDS = "what --max-judges 1 deploys"


def answer(d: dict, point: dict | None = None, *, one_judge_words: str = CLI_ONE_JUDGE_WORDS) -> str:
    """The answer first, in one sentence: "Deploy these k judges combined as F: estimated
    MSE r (interval). The best with more judges (up to all J) lowers the estimated MSE by d
    (paired interval of the change): to r' with k' judges; one judge alone: s (interval)."
    When a point with fewer judges is estimated lower, it is named too (:func:`fewer_clause`).
    Every number is a frontier point's estimate on new items (:func:`point_estimate`) and d is the
    difference of two of them as printed, its interval the frontier's paired bootstrap
    interval of that change (:func:`further_clause`). ``point``: a frontier point (default: the
    deployed one). ``one_judge_words``: how the reader deploys the one-judge point (the command
    line's flag by default; a page names its own control). '' when the result has no frontier."""
    fr = d.get("frontier") or []
    p = point or frontier_point(d)
    if not fr:
        return ""
    obj = _objective(d).upper()
    if p is None:           # a limit no frontier point stands for (judges and budget at once)
        sel = d["selected"]
        judges = deployed_judges(d)
        k = len(judges)
        single = frontier_point(d, 1)
        tail = "" if single is None else \
            f" O{_one_judge_clause(single, one_judge_words, 4, _point_cost(d, single, single.get('judges')), _budget_limit(d))[1:]}."
        who = f"these {k} judges ({_names(judges)}) combined as" if k != 1 else f"this judge ({_names(judges)}) as"
        return _with_scale(d, f"Deploy {who} {combined_as(sel)}: estimated {obj} "
                              f"{_interval_text(d.get('deployed_risk'), 4)}.{tail}")
    J = len((d.get("panel") or {}).get("judges") or []) or max(q["n_judges"] for q in fr)
    judges = point_judges(d, p)
    k = len(judges)
    sel = {"family": p["family"], "members": p.get("members")}
    how = combined_as(sel)
    # at least the deployed point's decimals (walk 12: the 1-judge point read 0.00570 in the control
    # and a preview, 0.005701 in the deployed answer's one-judge clause): point_digits
    digits = point_digits(d, p)
    # without a bias-corrected estimate the number is the held-out risk, and is called so
    kind = "estimated" if p.get("deployed_risk") else "held-out"
    who = f"these {k} judges ({_names(judges)}) combined as" if k != 1 else f"this judge ({_names(judges)}) as"
    # with judge costs the deployment's own cost per item (what a budget is spent on)
    # (a budget point's cost is its budget level: what its judges cost may be less)
    spent = _point_cost(d, p, judges)
    cost = f", at a cost of {spent:g} per item" if spent is not None else ""
    first = f"Deploy {who} {how}{cost}: {kind} {obj} {_interval_text(point_estimate(p), digits)}."
    further = further_clause(d, p, J, digits) + fewer_clause(d, p, digits)
    single = frontier_point(d, 1)
    tail = ""
    if single is not None and single is not p and (single["judges"], single["family"]) != (p["judges"], p["family"]):
        tail = f"; {_one_judge_clause(single, one_judge_words, max(digits, point_digits(d, single)), _point_cost(d, single, single.get('judges')), _budget_limit(d))}"
    return _with_scale(d, f"{first} {further}{tail}.")


def _with_scale(d: dict, text: str) -> str:
    """``text`` followed by the risks' label scale where the labels were rescaled
    (:func:`label_scale_sentence`)."""
    scale = label_scale_sentence(d)
    return f"{text} {scale}" if scale else text


def _one_judge_clause(single: dict, one_judge_words: str, digits: int, cost: float | None = None,
                      budget: float | None = None) -> str:
    """'one judge alone: estimated r (interval) for X as F, how to deploy it': the frontier's
    one-judge point, its model named (the baselines' best single judge is another model of
    it, isotonic) and its number called an estimate (not the judge's held-out risk the
    baselines and the Judges page print). With judge costs, its ``cost`` per item, as the
    deployment's is said (walk 5: under a budget of 3 the one judge quoted cost 15). The
    model comes after the number, so an average's families in parentheses are not nested
    in another pair (walk 10)."""
    name = ", ".join(single.get("judges") or [])
    kind = "estimated" if single.get("deployed_risk") else "held-out"
    spent = f" at a cost of {cost:g} per item" if cost is not None else ""
    if cost is not None and budget is not None and cost > budget + 1e-12:
        # walk 13: under a budget of 5 the clause sent the reader to a judge costing 10
        spent += f", above the budget of {budget:g}"
    return (f"one judge alone: {kind} {_interval_text(point_estimate(single), digits)} for {name} as "
            f"{combined_as(single)}{spent}, {one_judge_words}")


def _judge_limit(d: dict) -> int | None:
    """The panel-size limit the deployment was chosen under (``--max-judges``), or None
    when the chosen frontier point is the choice over all judges."""
    n_all = len((d.get("panel") or {}).get("judges") or [])
    chosen = frontier_point(d)
    if chosen and chosen.get("constraint") == "max_judges" and n_all and chosen.get("n_judges", n_all) < n_all:
        return int(chosen["n_judges"])
    return None


def _budget_limit(d: dict) -> float | None:
    """The budget per item the deployment was chosen under (``--budget``), or None."""
    budget = ((d.get("choice_info") or {}).get("constraint") or {}).get("budget")
    if budget is None:
        chosen = frontier_point(d)
        budget = chosen.get("cost") if chosen and chosen.get("constraint") == "budget" else None
    return None if budget is None else float(budget)


def _is_single_judge(b: dict) -> bool:
    """Whether fixed recipe ``b`` is the best single judge (the one recipe that calls one judge)."""
    return str(b.get("name", "")).split(":")[0] == "best_single_judge"


def _point_cost(d: dict, p: dict, judges) -> float | None:
    """What frontier point ``p``'s deployment costs per item: its judges' summed costs (the
    run's ``costs.judge_costs``), else the point's own ``cost`` (a budget point's is its budget
    level, which its judges may not spend in full); None without costs."""
    if p.get("cost") is None:
        return None
    spent = _judges_cost((d.get("costs") or {}).get("judge_costs") or {}, judges) if judges else None
    return p["cost"] if spent is None else float(round(spent, 9))


def _judges_cost(judge_costs: dict, names) -> float | None:
    """The summed cost per item of the judges ``names`` (the run's ``costs.judge_costs``);
    None when one of them has no cost."""
    cost = [(judge_costs.get(n) or {}).get("cost") for n in names]
    return None if any(c is None for c in cost) else sum(cost)


def _recipe_cost(d: dict, b: dict) -> float | None:
    """A fixed recipe's cost per item from the run's judge costs: its judge's for the best
    single judge, every judge's for the recipes over all judges; None without costs."""
    judge_costs = (d.get("costs") or {}).get("judge_costs") or {}
    if not judge_costs:
        return None
    if _is_single_judge(b):
        c = (judge_costs.get(b.get("judge")) or {}).get("cost")
        return None if c is None else float(c)
    cost = _judges_cost(judge_costs, (d.get("panel") or {}).get("judges") or list(judge_costs))
    return None if cost is None else float(round(cost, 9))


def _over_budget(d: dict, b: dict) -> bool:
    """Whether fixed recipe ``b`` costs more than the run's budget (unknown cost: a recipe
    over all judges is taken to, the single judge not)."""
    cost = _recipe_cost(d, b)
    if cost is None:
        return not _is_single_judge(b)
    return cost > _budget_limit(d) + 1e-12


def smallest_tied(d: dict) -> dict | None:
    """The smallest panel-size point whose paired difference to the unconstrained choice
    has a 95% interval containing 0 (None without a frontier)."""
    for p in d.get("frontier") or []:
        if p.get("constraint") == "max_judges":
            lo, hi = p["diff_vs_best"]["ci"]
            if lo <= 0 <= hi or p["diff_vs_best"]["estimate"] <= 0:
                return p
    return None


def tie_summary(d: dict) -> dict:
    """The statistical ties, counted once, as every page names them (the result's ``tie``:
    the distinct models within one paired SE of the best, :func:`fcps_core.selection.honesty`).

    ``n_models``: the tied models; ``n_members``: those the deployment averages (1 for one
    model; the deployed members as ``selected["members"]`` lists them, one per refitted model);
    ``n_tied``: the other tied models; ``listed``: the closest of those;
    ``unlisted``: the rest of the count; ``same``: kept for callers of the older format
    (always empty: a model reached by another path is one model)."""
    tie = d.get("tie") or {}
    n = int(tie.get("n_tied") or 0)
    members = len((d.get("selected") or {}).get("members") or []) or 1
    n_members = int(tie.get("n_members") or members)
    n_models = int(tie.get("n_models") or n + n_members)
    if 1 < members < n_members:
        # tied candidates whose refitted models are one model are one deployed member (the
        # deployment table's rows, weighted by their share); the tie counted them apart by
        # their held-out predictions: count the deployed models as the table shows them
        n_models, n_members = n + members, members
    listed = list(tie.get("alternatives") or [])
    return {"n_tied": n, "n_models": n_models, "n_members": n_members,
            "same": [], "listed": listed, "unlisted": max(0, n - len(listed))}


def tie_words(d: dict) -> str:
    """The tie set in a few words ('the 12 statistically tied models'), the same on every page."""
    t = tie_summary(d)
    m = t["n_models"]
    if m <= 1:
        return "no other model is statistically tied with the best"
    return f"{m} distinct models are statistically tied (within one paired standard error of the best)"


def tie_sentence(d: dict) -> str:
    """One sentence on the statistical ties ('' without any)."""
    t = tie_summary(d)
    if t["n_models"] <= 1:
        return ""
    head = tie_words(d)
    deployed = "the deployment averages " + (("both" if t["n_members"] == 2 else f"all {t['n_members']}")
                                             if not t["n_tied"] else
                                             f"{t['n_members']} of them") if t["n_members"] > 1 else \
        "one of them is deployed"
    rest = ""
    if t["n_tied"]:
        deployed_set = set(deployed_judges(d))

        sel = d.get("selected") or {}
        named = {(m.get("family"), m.get("K")) for m in (deployed_members(sel) or [sel])}

        def other_judges(a: dict) -> bool:
            # "logistic K=2" beside a deployed logistic K=2 over other judges read as the same
            # model left out: such an example names its judges
            return (a.get("family"), a.get("K")) in named and bool(deployed_set) \
                and not set(a.get("judges") or []) <= deployed_set
        shown = t["listed"][:3]
        sets = {tuple(a.get("judges") or []) for a in shown}
        # the examples share one judge set that some of them must name: named once, after them
        one_set = len(sets) == 1 and any(other_judges(a) for a in shown)

        def example(a: dict) -> str:
            on = f" on {_names(list(a.get('judges') or []))}" if other_judges(a) and not one_set else ""
            return f"{family_name(a['family'])} K={a['K']}{on}"
        names = list(dict.fromkeys(example(a) for a in t["listed"]))
        # the set is within one SE of the best single model; an average of its members can be
        # clearly better than that model (the frontier's paired interval says so), so the
        # models left out are not said to serve as well as the average
        others = (f"the other {t['n_tied']} {'is' if t['n_tied'] == 1 else 'are'} tied with the best single model "
                  "too, but not averaged" if t["n_members"] > 1 else
                  f"the other {t['n_tied']} would serve about as well")
        tie = d.get("tie") or {}
        cap = tie.get("max_members")
        why = _past_the_limit(d, t["listed"][:3], deployed_set) if t["n_members"] > 1 and names else ""
        picks = _picks(sel)
        if cap and picks == cap and t["n_members"] < cap and not why:
            # the picks filled the cap, some of them one refitted model (walk 12: "averages 9 of
            # them" and no reason, one member at weight 0.2): the cap in picks, and why fewer models
            others += (f", as an average takes at most {cap} picks, lowest held-out risk first (here "
                       f"{t['n_members']} models: a model reached by two paths is one model picked twice, "
                       "with twice the weight)")
        elif cap == t["n_members"] and not why:
            # the average holds as many distinct models as its cap (``max_members``: models join
            # lowest held-out risk first; its picks, at least as many, filled it): the cap left the
            # others out, with a limit those whose judges would take the average past it as well
            # (walk 11: 10 of 12 averaged under a limit of 4 judges, and no reason said)
            limited = _judge_limit(d) is not None or _budget_limit(d) is not None or \
                bool((d.get("choice_info") or {}).get("constraint"))
            within = (" whose judges stay within the " + ("budget" if _budget_limit(d) is not None and
                                                          _judge_limit(d) is None else "limit")) if limited else ""
            others += f", as an average takes at most {cap} models{within}, lowest held-out risk first"
        # a few names as examples ("e.g." only when they are not all of them): "and N more" would
        # count the listed closest only, not the others
        where = f", {'all ' if len(names[:3]) > 1 else ''}on {_names(list(next(iter(sets))))}" if one_set else ""
        every = len(names) <= 3 and len(t["listed"]) >= t["n_tied"]
        rest = f"; {others}" + (f" ({'' if every else 'e.g. '}{_names(names[:3], 3)}{where})" if names else "")
        rest += f": {why}" if why else ""
    return f"{head[0].upper()}{head[1:]}: {deployed}{rest}."


def _picks(selected: dict) -> int | None:
    """How many picks the deployed average's weights hold (each pick 1/n of the average; a model
    picked twice holds 2/n): 1 / the smallest weight, None without weights."""
    weights = [m.get("weight") for m in selected.get("members") or []]
    if not weights or any(w is None or w <= 0 for w in weights):
        return None
    n = round(1.0 / min(weights))
    return n if abs(sum(weights) - 1.0) < 1e-6 and all(abs(w * n - round(w * n)) < 1e-6 for w in weights) else None


def _past_the_limit(d: dict, listed: list[dict], deployed_set: set) -> str:
    """Why the listed tied models are left out of the average when the user's limit says so:
    each calls a judge the deployment does not, and with it the average's judges would be past
    the judge limit or cost more than the budget ('' when that is not so for every one)."""
    limit, budget = _judge_limit(d), _budget_limit(d)
    if not listed or (limit is None and budget is None):
        return ""
    judge_costs = (d.get("costs") or {}).get("judge_costs") or {}

    def past(a: dict) -> bool:
        union = deployed_set | set(a.get("judges") or [])
        if union <= deployed_set:
            return False
        if limit is not None and len(union) > limit:
            return True
        cost = _judges_cost(judge_costs, union)
        return budget is not None and cost is not None and cost > budget + 1e-12
    if not all(past(a) for a in listed):
        return ""
    what = f"would call more than the limit of {judges_count(limit)}" if limit is not None and all(
        len(deployed_set | set(a.get("judges") or [])) > limit for a in listed) else \
        f"would cost more than the budget of {budget:g} per item"
    return (f"{'it calls' if len(listed) == 1 else 'each of these calls'} a judge the deployment does not, "
            f"and with it the average {what}")


def comparison(baseline: dict) -> str:
    """'better', 'worse', 'tied' (the 95% interval of the paired difference straddles 0) or
    'unpaired' (no interval: no claim)."""
    ci = baseline.get("ci")
    if baseline.get("diff_vs_selected") is None or not ci or ci[0] is None or ci[1] is None:
        return "unpaired"
    if ci[0] > 0:
        return "better"
    if ci[1] < 0:
        return "worse"
    return "tied"


def _objective(d: dict) -> str:
    obj = (d.get("menu") or {}).get("objective") or (d.get("deployed_risk") or {}).get("objective") or "mse"
    return str(obj)


def _heldout(d: dict) -> tuple[float | None, float | None]:
    """The deployed choice's own held-out risk and its standard error (None where the
    result does not carry one, e.g. the average of tied candidates)."""
    sel, obj = d["selected"], _objective(d)
    risk = sel.get(f"val_{obj}")
    se = None
    if not deployed_members(sel):
        cand = next((c for c in d.get("candidates") or [] if c.get("index") == sel.get("index")), None)
        if cand is not None:
            risk = cand.get("val_risk", risk)
            se = cand.get("val_se")
    return risk, se


def comparison_basis(d: dict) -> float | None:
    """The deployment's risk on the basis of the baselines' paired differences: its mean
    out-of-bag risk over the bootstrap draws that replay the choice (the BBC estimate before
    any training-size correction, ``deployed_risk.bbc_estimate``; the estimate itself when
    none was applied). None when the result's estimate is not that bootstrap's (nested, or
    none): the differences then stand without the two risks."""
    dr = d.get("deployed_risk") or {}
    if dr.get("bbc_estimate") is not None:
        return float(dr["bbc_estimate"])
    if dr.get("method") == "bbc" and dr.get("estimate") is not None:
        return float(dr["estimate"])
    return None


def baseline_pair(d: dict, b: dict) -> dict | None:
    """A baseline's paired comparison with both risks on its own basis: ``baseline`` (the
    recipe's mean out-of-bag risk) = ``selection`` (:func:`comparison_basis`) + ``diff``
    (its ``diff_vs_selected``, the mean over the draws of recipe - selection), ``ci`` the
    difference's 2.5-97.5 % bootstrap interval. None without a paired difference."""
    s = comparison_basis(d)
    if s is None or b.get("diff_vs_selected") is None or not b.get("ci"):
        return None
    return {"baseline": s + float(b["diff_vs_selected"]), "selection": s, "diff": float(b["diff_vs_selected"]),
            "ci": list(b["ci"])}


#: how the baselines' paired differences are taken, in one phrase every front end uses
PAIRED_BASIS = ("paired over the bootstrap draws that replay the choice, each scored on its out-of-bag rows "
                "(the same draws as the estimate)")


def point_digits(d: dict, p: dict) -> int:
    """The decimals frontier point ``p``'s numbers print at wherever a page names the point
    alone (the answer, a preview, the frontier control's option, the one-judge clause): its
    own (:func:`answer_digits`) or the deployed point's (:func:`risk_digits`), whichever is
    more, so one number reads alike in each."""
    return max(answer_digits(p), risk_digits(d))


def risk_digits(d: dict) -> int:
    """The decimals a run's risks and their differences print at in its baselines tables
    and the verdict's comparisons (CLI, HTML report, Select page): the answer's
    (:func:`answer_digits` of the deployed point: 4, more when its interval is narrower), so
    on a panel whose MSE is near 0.0002 a risk keeps the digits the answer gives it and a
    difference of two printed risks stays within its own interval; 4 without a frontier."""
    return answer_digits(frontier_point(d)) if d.get("frontier") else 4


def baseline_rows(d: dict) -> list[dict]:
    """The baselines table every front end prints, each row's difference derivable from the
    risks beside it: ``label``, ``heldout`` (the recipe's held-out risk), ``out_of_bag`` (its
    risk on the basis of the paired difference, :func:`baseline_pair`), ``selection`` (the
    deployment's on that basis), ``diff`` (= out_of_bag - selection), ``ci`` and
    ``compared`` ('better' ... from the deployment's side). With both risks, ``diff`` is
    their difference as printed at :func:`risk_digits` decimals (:func:`shown_difference`),
    the decimals the front ends print the table's risks at."""
    k = risk_digits(d)
    out = []
    for b in d.get("baselines") or []:
        pair = baseline_pair(d, b)
        out.append({"label": b["label"], "heldout": b.get("risk"),
                    "out_of_bag": pair["baseline"] if pair else None,
                    "selection": pair["selection"] if pair else None,
                    # as the tables print them: the difference of the printed risks
                    "diff": shown_difference(pair["baseline"], pair["selection"], k) if pair
                    else b.get("diff_vs_selected"), "ci": b.get("ci"), "compared": comparison(b)})
    return out


def shown_difference(a: float, b: float, k: int) -> float:
    """a - b as the two numbers print at ``k`` decimals: a printed difference is that of the
    printed numbers (within 10^-k of the exact one), so a reader can check it."""
    return round(a, k) - round(b, k)


def _pair_text(d: dict, b: dict, k: int) -> tuple[str, float | None]:
    """('out-of-bag 0.0961 against this choice's 0.0723', 0.0238): the two risks the difference is
    taken between, at ``k`` decimals, and their printed difference; ('', None) without them."""
    pair = baseline_pair(d, b)
    if pair is None:
        return "", None
    # "out-of-bag": not the judge's held-out risk nor the answer's "one judge alone: estimated" beside it
    return (f"out-of-bag {_f(pair['baseline'], k)} against this choice's {_f(pair['selection'], k)}",
            shown_difference(pair["baseline"], pair["selection"], k))


def _isotonic(judge: str | None) -> str | None:
    """The baselines' best single judge named with its model (an isotonic map of its score)."""
    return f"{judge}, isotonic" if judge else None


def _single_judge_clause(d: dict, b: dict) -> str:
    """The comparison with the best single judge: 'about 0.0238 better than the best single
    judge (X: out-of-bag 0.0961 against this choice's 0.0723; paired 95% interval ...)'; the two risks
    only where the difference's basis is known (:func:`baseline_pair`)."""
    status = comparison(b)
    if status == "unpaired":
        inner = ": ".join(x for x in (_isotonic(b.get("judge")), f"held-out {_f(b['risk'], risk_digits(d))}") if x)
        return f"against the best single judge ({inner}; no paired interval, so no claim)"
    diff, (lo, hi) = b["diff_vs_selected"], b["ci"]
    k = max(risk_digits(d), side_digits(diff))
    pair, shown = _pair_text(d, b, k)
    diff = diff if shown is None else shown
    # "isotonic": the answer's one-judge point may be another model of the same judge
    inner = ": ".join(x for x in (_isotonic(b.get("judge")), pair) if x)
    who = "the best single judge (" + (inner + "; " if inner else "")
    interval = f"paired 95% interval of the difference {interval_end(lo, k)} to {interval_end(hi, k)}"
    if status == "better":
        return f"about {_f(diff, k)} better than {who}{interval})"
    if status == "worse":
        return f"about {_f(-diff, k)} worse than {who}{interval})"
    return f"not clearly different from {who}difference {_f(diff, k)}, {interval})"


def constant_note(d: dict) -> str:
    """'' unless the deployment is not clearly better than always predicting the labels' mean
    (the judges report's ``brier_base_rate``: that constant's MSE on the deployable labels),
    the MSE objective only; then a plain warning (walk 13: a 40-judge noisy panel deployed 17
    judges at an estimated 0.2507, interval 0.2432 to 0.2631, where the constant scores 0.2499,
    and no page said the choice was no better than a constant)."""
    if _objective(d) != "mse":
        return ""
    base = ((d.get("judges_report") or {}).get("calibration") or {}).get("brier_base_rate")
    dr = d.get("deployed_risk") or {}
    lo, hi = (list(dr.get("ci") or []) + [None, None])[:2]
    if base is None or dr.get("estimate") is None or lo is None or hi is None or hi < base:
        return ""           # clearly better than the constant (or nothing to compare)
    k = risk_digits(d)
    said = f"always predicting the labels' mean (MSE {_f(base, k)} on these labels)"
    if lo > base:
        return f"It is worse than {said}: its whole interval lies above that; the judges carry no usable signal here."
    return (f"It is not clearly better than {said}, which lies inside its interval: the judges carry little "
            "signal here.")


def one_judge_note(d: dict) -> str:
    """'' unless the frontier's one-judge point deploys the baselines' best single judge and
    their held-out risks print differently because the point's judge was not first in every
    fold; then why the one judge has two risks (walk 11, a 400-item pairwise panel: the answer's
    "one judge alone ... strongA" at held-out 0.1354 beside the baselines' "best single judge:
    strongA" at 0.1272). The point's held-out risk is that of its rule (take the path's first
    judge, chosen on each fold's training rows), the baseline's that of the judge fixed in
    every fold (chosen once on all the labels); the point deploys the judge its rule picks on
    all of them. The folds where another judge came first are counted from the members'
    judge-set stability (the share of folds whose first judge is the deployed one)."""
    single = frontier_point(d, 1)
    base = next((b for b in d.get("baselines") or [] if b.get("name") == "best_single_judge"), None)
    if single is None or base is None or list(single.get("judges") or []) != [base.get("judge")] \
            or single.get("risk") is None or base.get("risk") is None:
        return ""
    k = risk_digits(d)
    if round(single["risk"], k) == round(base["risk"], k):
        return ""
    cands = d.get("candidates") or []
    stab = [cands[m["index"]].get("judge_set_stability") for m in single.get("members") or []
            if isinstance(m.get("index"), int) and 0 <= m["index"] < len(cands)]
    stab = [s for s in stab if s is not None]
    if not stab or min(stab) >= 1:
        return ""           # the same judge in every fold: the two risks differ by their models, not this
    sp = d.get("split") or {}
    n_folds = int(sp.get("folds") or 0) * int(sp.get("repeats") or 0)
    other = round((1 - sum(stab) / len(stab)) * n_folds) if n_folds else 0
    where = f"in {other} of its {n_folds} folds" if other >= 1 else "in some of its folds"
    obj = _objective(d).upper()
    return (f"One judge, two held-out risks: the 1-judge point's held-out {obj} {_f(single['risk'], k)} is that of "
            f"choosing the first judge on each fold's training labels (another judge came first {where}), the best "
            f"single judge's {_f(base['risk'], k)} that of {base.get('judge')} in every fold, chosen once on all "
            f"the labels; the point deploys {base.get('judge')}, the judge its rule picks on all of them.")


def _others_clause(d: dict, others: list[dict]) -> str:
    """'better than A and B; not clearly different from C; worse than D (by ...)' over the
    other fixed recipes."""
    by = {s: [b for b in others if comparison(b) == s] for s in ("better", "tied", "worse", "unpaired")}
    parts = []
    if by["better"]:
        parts.append("better than " + ("all of them" if len(by["better"]) == len(others) and len(others) > 1
                                       else _names([b["label"] for b in by["better"]], 8)))
    if by["tied"]:
        parts.append("not clearly different from " + _names([b["label"] for b in by["tied"]], 8)
                     + " (the paired interval holds 0)")
    for b in by["worse"]:
        k = max(risk_digits(d), side_digits(b["diff_vs_selected"]))
        pair, shown = _pair_text(d, b, k)
        gap = -(b["diff_vs_selected"] if shown is None else shown)
        parts.append(f"worse than {b['label']} ({pair + ': ' if pair else ''}by {_f(gap, k)}, "
                     f"paired 95% interval {interval_end(-b['ci'][1], k)} to {interval_end(-b['ci'][0], k)})")
    if by["unpaired"]:
        parts.append("not compared (no paired interval) with " + _names([b["label"] for b in by["unpaired"]], 8))
    return "; ".join(parts)


def _basis_sentence(d: dict) -> str:
    """Where the baselines' risks and differences come from ('' without a paired basis)."""
    s = comparison_basis(d)
    if s is None:
        return ""
    dr = d.get("deployed_risk") or {}
    corrected = dr.get("bbc_estimate") is not None and dr.get("estimate") is not None
    # "the estimate above" as the answer above prints it (0.00205 on a panel whose MSE is near
    # 0.002, not 0.0021), and this choice's risk at the same decimals
    k = risk_digits(d)
    return (f"These comparisons are {PAIRED_BASIS}; on them this choice's {_objective(d).upper()} is "
            f"{_f(s, k)}" + (f", the estimate above ({_f(dr['estimate'], k)}) before its training-size "
                              f"correction" if corrected else "") + ".")


def cli_limit_words(n_judges: int) -> str:
    """How a reader of the command line's output deploys a panel-size limit."""
    return f"deploy it with --max-judges {n_judges}"


def verdict_parts(d: dict, *, limit_words=cli_limit_words) -> dict:
    """``headline`` (what to deploy, its risk, against what) and ``details`` (ties,
    regime, warnings), each a list of plain sentences. ``limit_words(k)``: how the reader
    deploys at most k judges where they read it (the command line's flag by default; a page
    names its own control)."""
    sel = d["selected"]
    obj = _objective(d).upper()
    n_judges = len((d.get("panel") or {}).get("judges") or []) or None
    judges = deployed_judges(d)
    of = f" of {n_judges}" if n_judges else ""
    if deployed_members(sel):
        what = f"{combined_as(sel)} over judges {_names(judges)} ({len(judges)}{of} judges)"
    else:
        path = f"; path: {path_name(sel['path'])}" if sel.get("path") else ""
        what = f"{family_name(sel['family'])} over judges {_names(judges)} (K={sel.get('K', len(judges))}{of}{path})"
    risk, se = _heldout(d)
    clauses = []
    if risk is not None and se is not None:     # an average of ties has no SE: the estimate below says it
        clauses.append(f"held-out {obj} {_f(risk)} ± {_f(1.959963984540054 * se, side_digits(1.96 * se))} (95%)")
    base = [b for b in d.get("baselines") or [] if b.get("risk") is not None]
    single = next((b for b in base if b.get("name") == "best_single_judge"), None)
    if single:
        clauses.append(_single_judge_clause(d, single))
    # no answer (no frontier): the headline says the risks' label scale instead
    headline = [_with_scale(d, f"Deploy {what}" + (": " + ", ".join(clauses) if clauses else "") + ".")]
    first = answer(d)
    if first:
        # the answer first; the comparison with the best single judge follows it
        headline = [first] + ([f"It is {_single_judge_clause(d, single)}."] if single else [])
        constant = constant_note(d)
        if constant:
            headline.append(constant)
        tied = smallest_tied(d)
        chosen = frontier_point(d)
        itself = tied is not None and (tied.get("diff_vs_best") or {}).get("estimate") == 0 and \
            list((tied.get("diff_vs_best") or {}).get("ci") or []) == [0, 0]
        # not the choice over all judges compared with itself (walk 13, under a budget: "held-out MSE
        # 0.1930 against 0.1930, paired difference 0.0000 (95% interval 0.0000 to 0.0000)")
        if tied is not None and chosen is not None and tied["n_judges"] < len(chosen.get("judges") or []) \
                and not itself:
            dv = tied["diff_vs_best"]
            rd = risk_digits(d)                          # the risks' decimals on every page
            k = max(rd, side_digits(dv["estimate"]))
            ref = tied["risk"] - dv["estimate"]          # the choice over all judges' held-out risk
            # which side of the choice over all judges the sentence puts it (its printed difference)
            held_side = _side(shown_difference(tied["risk"], ref, k) if k == rd else dv["estimate"], k)
            if k == rd:     # the difference of the two risks as printed
                shown = {"estimate": shown_difference(tied["risk"], ref, k), "ci": dv["ci"]}
                compared = (f"{_f(tied['risk'], rd)} against {_f(ref, rd)}, paired difference "
                            f"{_interval_text(shown, k)}")
            else:           # too small for the risks' decimals (printed so on every page): its own precision
                compared = (f"{_f(tied['risk'], rd)} against {_f(ref, rd)} (paired difference "
                            f"{_f(dv['estimate'], k)}, 95% interval {interval_end(dv['ci'][0], k)} to "
                            f"{interval_end(dv['ci'][1], k)})")
            headline.append(f"The smallest panel not clearly different from the choice over all judges (the paired "
                            f"95% interval of the difference holds 0) has "
                            f"{judges_count(len(tied['judges']))} ({display_family(tied)}): held-out {obj} "
                            f"{compared}{_other_way_round(d, tied, held_side)}{_larger_not_tied(d, tied, chosen, rd)}; "
                            f"{limit_words(tied['n_judges'])}.")
    others = [b for b in base if b is not single]
    if others:
        headline.append(f"Against the {'other ' if single else ''}fixed recipes it is "
                        + _others_clause(d, others) + ".")
    dr = d.get("deployed_risk")
    if first and dr and dr.get("estimate") is not None:
        if dr.get("optimistic") is not None:
            k = risk_digits(d)     # the decimals of "the estimate above"
            n_members = len(deployed_members(sel))
            whose, picked = (("deployed average's", f"its {n_members} models were") if n_members > 1
                             else ("deployed model's", "it was"))
            constraint = (d.get("choice_info") or {}).get("constraint") or {}
            within = deployed_limit_words(constraint.get("max_judges"), constraint.get("budget"))
            # under a limit the choice was among the candidates it admits, not the whole menu (walk 13)
            picked = f"{picked} picked among the menu's candidates within {within}" if within else \
                f"{picked} picked over {_count(d.get('menu_size'))} candidates"
            if round(dr["estimate"], k) <= round(dr["optimistic"], k):
                # the correction can come out below the held-out risk (a fit on more rows, bootstrap
                # noise), or print the same: then "optimistic ... corrects it" would contradict the
                # two numbers printed
                why = "that choice and for fitting on more rows" if dr.get("training_size_correction") \
                    else "that choice"
                same = round(dr["estimate"], k) == round(dr["optimistic"], k)
                headline.append(f"The {whose} own held-out {obj} {_f(dr['optimistic'], k)} ({picked}) is corrected "
                                f"by the estimate above for {why}; "
                                + ("here the two agree to the digits shown." if same else
                                   f"here the estimate, {_f(dr['estimate'], k)}, comes out lower."))
            else:
                headline.append(f"The {whose} own held-out {obj} {_f(dr['optimistic'], k)} is optimistic ({picked}); "
                                "the estimate above corrects it.")
    elif dr and dr.get("estimate") is not None:
        ci = dr.get("ci") or [None, None]
        headline.append(f"Estimated {obj} on new items {_f(dr['estimate'], 4)} (95% interval {_f(ci[0], 4)} to "
                        f"{_f(ci[1], 4)}, {str(dr.get('method', '')).upper()} estimate"
                        + (f"; the held-out {_f(dr['optimistic'], 4)} is optimistic because it won over "
                           f"{_count(d.get('menu_size'))} candidates" if dr.get("optimistic") is not None else "")
                        + ").")
    else:
        note = (d.get("choice_info") or {}).get("estimate_note")
        headline.append("No bias-corrected estimate of the risk on new items" + (f" ({note})." if note else "."))
    basis_sentence = _basis_sentence(d)
    if basis_sentence and any(comparison(b) != "unpaired" for b in base):
        headline.append(basis_sentence)
    details = []
    worse = [b for b in base if comparison(b) == "worse"]
    if worse:
        best = min(worse, key=lambda b: b["risk"])
        limit = _judge_limit(d)
        if limit is not None and not _is_single_judge(best):
            # the recipes other than the single judge call every judge: past the user's limit
            details.append(f"A fixed recipe over all judges does better ({best['label']}), but it calls more "
                           f"than the limit of {limit} judge{'s' if limit != 1 else ''}: raise the limit to "
                           "weigh it.")
        elif _budget_limit(d) is not None and _over_budget(d, best):
            budget, cost = _budget_limit(d), _recipe_cost(d, best)
            what = "A fixed recipe" if _is_single_judge(best) else "A fixed recipe over all judges"
            costs = f"costs {cost:g} per item, more than" if cost is not None else "may cost more than"
            details.append(f"{what} does better ({best['label']}), but it {costs} the budget of {budget:g}: "
                           "raise the budget to weigh it.")
        else:
            details.append(f"A fixed recipe does better: consider deploying {best['label']} instead.")
        beyond = next((b for b in worse if b is not best and _is_single_judge(b)), None)
        if beyond is not None and _budget_limit(d) is not None and _recipe_cost(d, beyond) is not None \
                and _over_budget(d, beyond):
            # the headline compares with the best single judge: past the budget, it says so (walk 5)
            details.append(f"The best single judge ({beyond.get('judge') or beyond['label']}) does better too, but it "
                           f"costs {_recipe_cost(d, beyond):g} per item, more than the budget of "
                           f"{_budget_limit(d):g}.")
    ties = tie_sentence(d)
    if ties:
        details.append(ties)
    two_risks = one_judge_note(d)
    if two_risks:
        details.append(two_risks)
    rg = d.get("regime") or {}
    if rg.get("quadrant") == "undetermined":
        details.append("Regime undetermined: the interaction gain's 95% interval contains its threshold.")
    elif rg.get("quadrant"):
        lo, hi = rg.get("interaction_gain_ci") or (None, None)
        k = risk_digits(d)
        details.append(f"Regime: {rg['quadrant'].replace('_', ' ')} ({rg.get('description', '')}; interaction gain "
                       f"{gain_text(rg['interaction_gain'], k)}"
                       + (f", 95% interval {gain_text(lo, k)} to {gain_text(hi, k)}" if lo is not None else "") + ").")
    return {"headline": headline, "details": details}


def verdict(d: dict) -> str:
    """One paragraph: what to deploy, how good it is likely to be, against what."""
    parts = verdict_parts(d)
    return " ".join(parts["headline"] + parts["details"])


def _bin_words(value: str) -> str:
    """One judge's output in a pattern as a phrase after the judge's name: a continuous
    judge's bin (">=0.851", "<2", "[0,0.00118)") reads as a comparison or a range, a
    category as "= A"."""
    v = str(value)
    if v.startswith(">="):
        return f"≥ {v[2:]}"
    if v.startswith("<") and v != "<unseen>":
        return f"< {v[1:]}"
    if v.startswith("[") and v.endswith(")") and "," in v:
        lo, hi = v[1:-1].split(",", 1)
        return f"in [{lo}, {hi})"
    if v == "<unseen>":
        return "an output calibration never saw"
    return f"= {v}"


def named_pattern(pattern: str, judges: list[str]) -> str:
    """A joint output pattern ("A|B|>=0.851") with each judge's name ("judge1 = A · judge2 =
    B · judge3 ≥ 0.851"); the raw pattern when its parts do not match the judges one to one."""
    parts = str(pattern).split("|")
    if len(parts) != len(judges):
        return str(pattern)
    return " · ".join(f"{j} {_bin_words(p)}" for j, p in zip(judges, parts))


def pressure_applies(d: dict, table_like: set[str]) -> tuple[str, str]:
    """Whether table pressure and cell audits apply to what a selection deploys: ("all",
    "none" or "some", one sentence saying why). ``table_like`` names the table-like families
    (one value per output pattern); a tie average applies to its table-like members only."""
    sel = d.get("selected") or {}
    members = sel.get("members") or []
    fams = [m.get("family") for m in members] if members else [sel.get("family")]
    tables = [f for f in fams if f in table_like]
    what = deployed_name(sel)
    if len(tables) == len(fams):
        return "all", (f"The deployed predictor, {what}, is table-like: it fits one value per joint output pattern "
                       "of its judges, so unseen and thin cells are where it pays variance; the audit applies to it.")
    if not tables:
        return "none", (f"The deployed predictor, {what}, is scalar: it fits a few weights over the judges' outputs, "
                        "not one value per output pattern, so table pressure and cell audits do not apply to it. "
                        "The cells and pressures below are those of the table-like candidates it was compared with.")
    return "some", (f"The deployed predictor averages {len(fams)} candidates, {len(tables)} of them table-like "
                    f"({', '.join(sorted(set(tables)))}): table pressure and cell audits apply to those members "
                    "only; the scalar members fit weights, not cells.")


def effective_judges_note(eff: dict | None, n_judges: int) -> str:
    """What the effective number of judges is taken over when some judges are left out of it
    ('' when none is): a judge whose decision never varies within a label class has no error
    correlation. On a panel whose labels are mostly below 1/2 (error counts over a wide range)
    most continuous judges never decide 1, and "1.0" over the one judge left read as if all
    12 judges erred alike."""
    excluded = list((eff or {}).get("excluded") or [])
    if not excluded:
        return ""
    left = (eff or {}).get("K", n_judges - len(excluded))
    return (f"over {left} of {n_judges} judges: {_names(excluded)} "
            f"{'is' if len(excluded) == 1 else 'are'} left out (the decision never varies within a label class, "
            "so the error has no correlation)")
