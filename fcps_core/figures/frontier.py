"""The frontier figure: the best deployable predictor's risk against panel size or cost.

One point per limit of the selection's ``frontier`` (``select --json``): the held-out risk
with its group-clustered 95 % interval (error bars) and the estimate on new items (the
bias-corrected deployed risk of choosing under that limit) with its interval, the deployed
point marked with the winner's star. Pure: plain data in, a Plotly figure out.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from ..defaults import TIE_AVERAGE
from ..defaults import deployed_family_name, judges_count
from ..wording import signed_change
from .style import LEGEND_BELOW, MARGIN, WINNER_MARKER, KeyWords, family_color, plot_text, rgba


def point_digits(p: dict) -> int:
    """The decimals a point's numbers are printed at: 4, more when its interval is narrower
    (two significant digits of its width, at most 6), as the answer prints them
    (``reports.explain.answer_digits``)."""
    lo, hi = (p.get("ci") or [0, 0])[:2]
    width = (hi or 0) - (lo or 0)
    return 4 if not width or not math.isfinite(width) else max(4, min(6, 1 - math.floor(math.log10(abs(width)))))


def _hover(p: dict, words: KeyWords, digits: int = 4) -> str:
    judges = p.get("judges") or []
    shown = ", ".join(plot_text(j) for j in judges[:8]) + (f" and {len(judges) - 8} more" if len(judges) > 8 else "")
    how = plot_text(deployed_family_name(words.family(p.get("family")), len(p.get("members") or [])))
    dv = p.get("diff_vs_best") or {}
    lo, hi = (dv.get("ci") or [None, None])[:2]
    diff = ""
    if dv.get("estimate") is not None and dv["estimate"] == 0 and lo == 0 and hi == 0:
        diff = "<br>the choice over all judges itself"         # not "0.0000 (95% 0.0000 to 0.0000)" (walk 11)
    elif dv.get("estimate") is not None:
        # the held-out difference, as the verdict prints it: that of the two risks as printed, unless
        # it is too small for their decimals (walk 11: +0.0052 here, 0.0343 - 0.0292 = 0.0051 there)
        d = dv["estimate"]
        if round(d, digits) != 0 and p.get("risk") is not None:
            d = round(p["risk"], digits) - round(p["risk"] - dv["estimate"], digits)
        diff = f"<br>held-out vs all judges: {signed_change(d, digits)} (95% {signed_change(lo, digits)} to " \
               f"{signed_change(hi, digits)})"
    dr = p.get("deployed_risk") or {}
    est = "" if dr.get("estimate") is None else \
        (f"<br>estimated on new items: {dr['estimate']:.{digits}f}"
         + (f" (95% {dr['ci'][0]:.{digits}f} to {dr['ci'][1]:.{digits}f})" if dr.get("ci") else ""))
    return f"{judges_count(len(judges))}, {how}<br>{shown}{diff}{est}"


#: the frontier chart's titles (budget, panel size): what each limit deploys by the run's limit
#: rule, which need not be the best predictor within it (walk 5: a budget of 15 deploys the
#: best judge alone, costing 15, above what a budget of 14.6 deploys)
FRONTIER_TITLES = {False: "What a smaller budget costs: what each budget deploys",
                   True: "What fewer judges cost: what each limit deploys"}
#: ... where a looser limit deploys a predictor estimated higher than a tighter limit's (walk 7: "What
#: fewer judges cost" above a curve where 8 judges did better than 9 to 13): no cost is claimed
NON_MONOTONE_TITLES = {False: "What each budget deploys (a larger budget does not always do better here)",
                       True: "What each limit deploys (more judges allowed do not always do better here)"}


def _deployment(p: dict) -> tuple:
    """What a point deploys (its judges, family and members): two limits deploying it are not compared."""
    return (tuple(sorted(p.get("judges") or [])), p.get("family"),
            tuple(sorted(str(m.get("index")) for m in p.get("members") or [])))


def is_monotone(points: list[dict], by: str = "judges") -> bool:
    """Whether no looser limit (more judges, a larger budget) of ``points`` deploys a predictor
    that does clearly worse than a tighter limit's, as the frontier's note judges it
    (``reports.explain.non_monotone_note``, which also rounds as printed): on the estimates on
    new items where every point has one, a point whose ``fewer_judges_estimate`` (its estimate
    less the lowest tighter point's, paired in the same bootstrap draws) is above 0 with its
    95 % interval; else on the held-out risks."""
    deployed = all(p.get("deployed_risk") for p in points)
    if deployed:
        return not any((p.get("fewer_judges_estimate") or {}).get("estimate", 0) > 0
                       and ((p.get("fewer_judges_estimate") or {}).get("ci") or [0])[0] > 0 for p in points)
    level = (lambda q: q["n_judges"]) if by == "judges" else (lambda q: q.get("cost") or 0)
    scored = [p for p in points if p.get("risk") is not None]
    return not any(level(q) < level(p) and _deployment(q) != _deployment(p) and q["risk"] < p["risk"]
                   for p in scored for q in scored)


def frontier_figure(frontier: list[dict], *, by: str | None = None, objective: str = "MSE",
                    chosen: dict | None = None, names: dict | None = None,
                    monotone: bool | None = None) -> go.Figure:
    """Risk (with 95 % intervals) of what each panel size
    (``by='judges'``) or cost level (``by='cost'``) deploys; ``by`` None: the deployed point's axis
    (cost when the run was deployed under a budget, so its point is the one starred; else
    panel size); ``chosen``: the point to mark (default: the point the frontier marks
    ``chosen``); ``names``: family key -> the name the hover shows (the page's plain names;
    default the key); ``monotone``: whether every looser limit does at least as well, which
    the title then claims (None: :func:`is_monotone` of the points; a page passes what its note
    beside the chart says)."""
    if by is None:
        deployed = next((p for p in frontier or [] if p.get("chosen")), None)
        by = "cost" if deployed is not None and deployed.get("constraint") == "budget" else "judges"
    words = KeyWords(names)
    kind = "max_judges" if by == "judges" else "budget"
    points = [p for p in frontier or [] if p.get("constraint") == kind]
    fig = go.Figure()
    if not points:
        fig.update_layout(title="no frontier in this result", margin=MARGIN)
        return fig
    x = [p["n_judges"] if by == "judges" else p["cost"] for p in points]
    risk = [p["risk"] for p in points]
    lo = [p["risk"] - p["ci"][0] for p in points]
    hi = [p["ci"][1] - p["risk"] for p in points]
    digits = max([4, *(point_digits(p) for p in points)])      # the answer's decimals: a small MSE keeps its digits
    hover = [_hover(p, words, digits) for p in points]
    fig.add_trace(go.Scatter(x=x, y=risk, mode="lines+markers", name=f"held-out {objective} (95% interval)",
                             line=dict(color=family_color(TIE_AVERAGE)),
                             error_y=dict(type="data", symmetric=False, array=hi, arrayminus=lo,
                                          color=rgba(family_color(TIE_AVERAGE), 0.5)),
                             hovertext=hover, hovertemplate="%{hovertext}<br>held-out risk %{y:." + str(digits) + "f}<extra></extra>"))
    est = [(xi, p["deployed_risk"]) for xi, p in zip(x, points) if p.get("deployed_risk")]
    if est:
        fig.add_trace(go.Scatter(
            x=[e[0] for e in est], y=[e[1]["estimate"] for e in est], mode="markers",
            name=f"estimated {objective} on new items (95% interval)",
            marker=dict(symbol="diamond-open", size=8, color=family_color("logistic")),
            error_y=dict(type="data", symmetric=False,
                         array=[e[1]["ci"][1] - e[1]["estimate"] for e in est],
                         arrayminus=[e[1]["estimate"] - e[1]["ci"][0] for e in est],
                         color=rgba(family_color("logistic"), 0.4)),
            hovertemplate="estimate on new items %{y:." + str(digits) + "f}<extra></extra>"))
    deployed = next((p for p in points if p.get("chosen")), None)
    mark = chosen or deployed

    def used(p) -> str:
        """"2 judges used (at most 3 allowed)" / "1 judge used (budget 0.5)"."""
        what, limit = f"{judges_count(len(p['judges']))} used", x[points.index(p)]
        return f"{what} (at most {limit:g} allowed)" if by == "judges" else f"{what} (budget {limit:g})"

    def star(p, name, marker, extra):
        i = points.index(p)
        y = (p.get("deployed_risk") or {}).get("estimate", p["risk"])
        fig.add_trace(go.Scatter(x=[x[i]], y=[y], mode="markers", marker=marker, name=name,
                                 hovertext=[hover[i]], hovertemplate="%{hovertext}<extra>" + extra + "</extra>"))
    if deployed is not None and deployed is not mark:
        # another point is described: the deployed one stays marked, an open star, and named so
        star(deployed, f"deployed: {used(deployed)}",
             dict(WINNER_MARKER, symbol="star-open"), "deployed")
    if mark is not None and mark in points:
        name = f"deployed: {used(mark)}" if mark is deployed else f"described above, not deployed: {used(mark)}"
        star(mark, name, WINNER_MARKER, "deployed" if mark is deployed else "described above")
    fig.update_layout(xaxis_title="most judges deployed (panel size k)" if by == "judges"
                      else "cost per item (budget)",
                      yaxis_title=f"{objective} (lower is better)", margin=MARGIN, legend=LEGEND_BELOW,
                      title=(FRONTIER_TITLES if (is_monotone(points, by) if monotone is None else monotone)
                             else NON_MONOTONE_TITLES)[by == "judges"])
    if by == "judges":          # panel sizes from 1: no k = 0 on the axis (walk 12)
        fig.update_xaxes(range=[min(x) - 0.5, max(x) + 0.5])
    lows = [p["ci"][0] for p in points] + [e[1]["ci"][0] for e in est]
    highs = [p["ci"][1] for p in points] + [e[1]["ci"][1] for e in est]
    if log_scale(lows, highs):
        fig.update_yaxes(type="log", title=f"{objective} (lower is better; log scale)", dtick="D2", tickformat=".3~g")
    return fig


def log_scale(lows, highs) -> bool:
    """Whether a risk axis reads better on a log scale: every value above 0 and the largest
    more than 10 times the smallest (walk 12: one judge at 0.0057 and the deployed panel at
    0.0002 on a linear axis put every point that matters on the zero line)."""
    lows = [v for v in lows if v is not None]
    highs = [v for v in highs if v is not None]
    return bool(lows) and min(lows) > 0 and max(highs) > 10 * min(lows)
