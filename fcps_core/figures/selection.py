"""Figures of one selection: the best candidate per family over K with the winner marked,
every candidate over K, the regime map, the cell-pressure scatter and the risk-cost chart."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from ..measures.diagnostics import QUADRANTS, table_pressure
from ..defaults import judges_count
from ..families import REGISTRY
from .frontier import log_scale
from .style import (FAMILY_COLORS, LEGEND_BELOW, MARGIN, MENU_COLORS, WINNER_MARKER, Z95, KeyWords, family_color,
                    family_order, plot_text, rgba, risk_title)


# -- one selection ---------------------------------------------------------------------------
def _best_by_family_and_k(candidates: list[dict], objective: str) -> dict[str, dict[int, dict]]:
    best: dict[str, dict[int, dict]] = {}
    for c in candidates:
        if c["path_rule"] == "cfps" or c.get(objective) is None:
            continue
        row = best.setdefault(c["family"], {})
        if c["K"] not in row or c[objective] < row[c["K"]][objective]:
            row[c["K"]] = c
    return best


def _winner_points(candidates: list[dict], selected: dict | None, objective: str,
                   words: KeyWords | None = None, digits: int = 4) -> tuple[list, dict | None]:
    """(members, point): the averaged members of an average (empty otherwise) and the point
    to mark (K, risk, label, se, text, ``average``). One deployed candidate is its own point
    (the deployed star). An average of tied models has no point of its own on a per-K chart
    (its members may sit at different K): the point is then its best member, marked and
    labelled *best single model*, never *deployed*, so it cannot be read against the
    frontier's deployed star (which stands at the average's panel size); the average itself
    is a horizontal line at its own held-out risk (:func:`_mark_winner`)."""
    if not selected:
        return [], None
    w = words or KeyWords()
    by_index = {c["index"]: c for c in candidates}
    members = [by_index[m["index"]] for m in selected.get("members") or [] if m.get("index") in by_index]
    if len(selected.get("members") or []) > 1:
        if not members:
            return [], None
        best = min(members, key=lambda m: m[objective])
        own = selected.get(objective if objective in selected else "val_mse")
        label = (f"best single model of the deployed average: {w.family(best['family'])} K={best['K']} "
                 f"({w.path(best['path'])} path); "
                 f"the deployment averages {len(members)} statistically tied models over {judges_count(selected['K'])}"
                 + (f" (held-out risk {own:.{digits}f}, the dashed line)" if own is not None else ""))
        return members, {"K": best["K"], "risk": best[objective], "se": None, "label": label, "average": True,
                         "own": own, "n": len(members), "n_judges": selected.get("K"),
                         "text": f"<b>best single model (K={best['K']})</b>"}
    c = by_index.get(selected.get("index"))
    if c is None:
        return [], None
    return [], {"K": c["K"], "risk": c[objective], "se": c.get("val_se"), "text": "<b>winner</b>",
                "label": f"deployed: {w.family(c['family'])}, K={c['K']} ({w.path(c['path'])} path)", "average": False}


def _mark_winner(fig: go.Figure, candidates, selected, objective, risk_label, words: KeyWords | None = None,
                 digits: int = 4) -> None:
    w = words or KeyWords()
    members, win = _winner_points(candidates, selected, objective, w, digits)
    y = f"%{{y:.{digits}f}}"             # a risk at the page's decimals (the answer's: more for a small MSE)
    if members:
        fig.add_trace(go.Scatter(
            x=[m["K"] for m in members], y=[m[objective] for m in members], mode="markers",
            name="averaged members", legendgroup="winner",
            marker=dict(symbol="star-open", size=12, color="black", line=dict(width=1.5)),
            text=[plot_text(f"{w.family(m['family'])} K={m['K']} ({w.path(m['path'])} path)") for m in members],
            hovertemplate="%{text}<br>" + risk_label + " " + y + "<extra>averaged member</extra>"))
    if win and win.get("average"):
        ks = [c["K"] for c in candidates]
        if win.get("own") is not None and ks:
            # the deployed average has no K of its own: a line at its held-out risk, named in the legend
            fig.add_trace(go.Scatter(
                x=[min(ks) - 0.3, max(ks) + 0.3], y=[win["own"]] * 2, mode="lines", legendgroup="winner",
                name=f"deployed: average of {win['n']} models over {judges_count(win['n_judges'])} ({win['own']:.{digits}f})",
                line=dict(color=WINNER_MARKER.get("color", "gold"), dash="dash", width=2),
                hovertemplate=f"deployed average of {win['n']} models over {judges_count(win['n_judges'])}<br>"
                              + risk_label + " " + y + "<extra></extra>"))
        fig.add_trace(go.Scatter(
            x=[win["K"]], y=[win["risk"]], mode="markers", name="best single model (a member)",
            legendgroup="winner", marker=dict(symbol="star-diamond", size=13, color="black"),
            text=[win["label"]], hovertemplate="%{text}<br>" + risk_label + " " + y + "<extra>best single model</extra>"))
        fig.add_annotation(x=win["K"], y=win["risk"], text=win["text"], showarrow=True, arrowhead=2, ax=0,
                           ay=34, font=dict(size=12, color="black"), bgcolor="rgba(255,255,255,0.85)",
                           name="best single model")
    elif win and win["risk"] is not None:
        se = win.get("se")
        fig.add_trace(go.Scatter(
            x=[win["K"]], y=[win["risk"]], mode="markers", name="deployed (winner)", legendgroup="winner",
            marker=WINNER_MARKER,
            error_y=dict(type="data", array=[Z95 * se], color="black", thickness=1.5, width=6)
            if se else None,
            text=[win["label"]], customdata=[[(Z95 * se) if se else float("nan")]],
            hovertemplate="%{text}<br>" + risk_label + " " + y
                          + (f" ± %{{customdata[0]:.{digits}f}} (95%)" if se else "") + "<extra>winner</extra>"))
        # the winner has the lowest risk, so the space below it is free of lines
        fig.add_annotation(x=win["K"], y=win["risk"], text=win["text"], showarrow=True, arrowhead=2, ax=0,
                           ay=34, font=dict(size=12, color="black"), bgcolor="rgba(255,255,255,0.85)",
                           name="winner")


def _baseline_line(fig: go.Figure, baselines: list[dict] | None, ks: list[int], digits: int = 4) -> None:
    """The best single judge's held-out risk as a dotted reference line, named in the legend
    (not on the plot, where a label would cross the family lines)."""
    single = next((b for b in baselines or [] if b.get("name") == "best_single_judge" and b.get("risk") is not None),
                  None)
    if single and ks:
        who = plot_text(single.get("judge") or "best single judge")
        fig.add_trace(go.Scatter(
            x=[min(ks) - 0.3, max(ks) + 0.3], y=[single["risk"]] * 2, mode="lines", legendgroup="baseline",
            name=f"best single judge, isotonic ({who}): held-out {single['risk']:.{digits}f}",
            line=dict(color="#555", dash="dot", width=1.5),
            hovertemplate=f"best single judge, isotonic ({who})<br>held-out risk {single['risk']:.{digits}f}<extra></extra>"))


def _repeat_note(candidate: dict, most: int) -> str:
    """The hover's note on a candidate screened after the first repeat: its risk is that
    repeat's alone, so it need not equal the same model's risk elsewhere (walk 11: "mean vote +
    isotonic" over all 25 judges at 0.2470 here, 0.2520 in the baselines table, both repeats)."""
    n = candidate.get("repeats")
    return (f"<br>(held-out in {n} of {most} repeats: screened after the first as far behind)"
            if n and n < most else "")


def best_per_family_over_k(candidates: list[dict], *, selected: dict | None = None, objective: str = "val_risk",
                           risk_label: str | None = None, baselines: list[dict] | None = None,
                           names: dict | None = None, path_names: dict | None = None,
                           digits: int = 4) -> go.Figure:
    """The decision at a glance: for each family, its best candidate (over paths and
    parameters) at each prefix size K, one line per family in the family's colour; the
    deployed choice is a gold star (with its 95% interval where it is one candidate), the
    averaged members of a tie open stars, and the best single judge a dotted line.
    ``names``: family key -> the name the legend shows (the page's plain names; default the key).
    ``digits``: the decimals risks print at (the page's answer's: 4, more for a small MSE)."""
    words = KeyWords(names, path_names)
    risk_label = risk_label or risk_title(objective)
    best = _best_by_family_and_k(candidates, objective)
    most = max((c.get("repeats") or 0 for c in candidates), default=0)
    fig = go.Figure()
    for family in family_order(best):
        by_k = best[family]
        rows = [by_k[k] for k in sorted(by_k)]
        kind = "table-like" if family in REGISTRY and REGISTRY[family].table_like else "scalar"
        fig.add_trace(go.Scatter(
            x=[r["K"] for r in rows], y=[r[objective] for r in rows], mode="lines+markers",
            name=plot_text(words.family(family)), legendgroup=family,
            line=dict(color=family_color(family), width=2,
                                                       dash="solid" if kind == "scalar" else "dash"),
            marker=dict(size=6, color=family_color(family)),
            customdata=[[plot_text(words.path(r["path"])), Z95 * (r.get("val_se") or 0.0), _repeat_note(r, most)]
                        for r in rows],
            hovertemplate="K=%{x}<br>" + risk_label + f" %{{y:.{digits}f}} ± %{{customdata[1]:.{digits}f}} (95%)"
                          "%{customdata[2]}<br>best over paths: %{customdata[0]} path<extra>"
                          + f"{plot_text(words.family(family))} ({kind})</extra>"))
    ks = sorted({c["K"] for c in candidates})
    _baseline_line(fig, baselines, ks, digits)
    _mark_winner(fig, candidates, selected, objective, risk_label, words, digits)
    span = _competitive_range(best, objective, baselines,
                              [(_winner_points(candidates, selected, objective, words)[1] or {}).get(k)
                               for k in ("risk", "own")])
    yaxis = dict(title=risk_label, range=span)
    if span is not None:
        low = min([r[objective] for by_k in best.values() for r in by_k.values()]
                  + [b["risk"] for b in baselines or [] if b.get("risk") is not None])
        if log_scale([low], [span[1]]):
            # risks from 0.0002 to 0.006 (walk 12): on a log axis the contest near the winner shows
            lo, hi = math.log10(low), math.log10(span[1])      # room below for the winner's label, as linear
            yaxis = dict(title=f"{risk_label} (log scale)", type="log", dtick="D2", tickformat=".3~g",
                         range=[lo - 0.2 * (hi - lo), hi])
    fig.update_layout(xaxis=dict(title="prefix size K (judges used, from the front of the path)",
                                 tickmode="array" if len(ks) <= 20 else "auto",
                                 tickvals=ks if len(ks) <= 20 else None),
                      yaxis=yaxis,
                      # no legend title: with one, plotly wraps a horizontal legend past the figure's edge
                      title=dict(text="Best candidate per family over K (dashed lines: table-like families)",
                                 font=dict(size=14)),
                      legend=LEGEND_BELOW,
                      height=480, margin=MARGIN)
    return fig


def _competitive_range(best: dict[str, dict[int, dict]], objective: str, baselines: list[dict] | None,
                       extra: list[float] = ()):
    """A y range for the contest near the winner: from the lowest of the risks, the winner and
    the best single judge to 4 times the distance to the reference (the worst family's best
    point, or the best single judge if higher), so every family's best point, the winner and
    the single judge show, and only far tails of families that degrade with K are cut; room
    below for the winner's label. Double-click on the chart shows everything."""
    values = [r[objective] for by_k in best.values() for r in by_k.values()]
    if not values:
        return None
    single = [b["risk"] for b in baselines or [] if b.get("name") == "best_single_judge" and b.get("risk") is not None]
    lo = min(values + single + [v for v in extra if v is not None])
    hi = max(values + single)
    ref = max([max(min(r[objective] for r in by_k.values()) for by_k in best.values())] + single)
    upper = lo + 4 * max(ref - lo, 1e-9)
    if upper >= hi:     # nothing to cut: the whole range
        upper = hi + 0.05 * max(hi - lo, 1e-9)
    return [lo - 0.15 * (upper - lo), upper]


def validation_risk_over_k(candidates: list[dict], *, objective: str = "val_mse",
                           selected: dict | None = None, risk_label: str | None = None,
                           baselines: list[dict] | None = None, names: dict | None = None,
                           path_names: dict | None = None, digits: int = 4) -> go.Figure:
    """Held-out risk against prefix size K: one line per family (its best candidate over
    the paths at each K), the deployed candidate(s) marked with a star; ``names``,
    ``path_names`` and ``digits`` as :func:`best_per_family_over_k` takes them."""
    return best_per_family_over_k(candidates, selected=selected, objective=objective, risk_label=risk_label,
                                  baselines=baselines, names=names, path_names=path_names, digits=digits)


_PATH_DASHES = ("solid", "dot", "dash", "longdash", "dashdot", "longdashdot")


def all_candidates_over_k(candidates: list[dict], *, selected: dict | None = None, objective: str = "val_risk",
                          risk_label: str | None = None, names: dict | None = None,
                          path_names: dict | None = None, digits: int = 4) -> go.Figure:
    """Full detail: every candidate's held-out risk against K. Colour = family (one legend
    entry per family), line style = path; several parameter settings of one (family, path, K)
    show as separate markers on the same vertical. ``names`` / ``path_names``: family and
    path-rule key -> the name the legend and hover show (default the key); ``digits``: the
    decimals risks print at (the page's answer's)."""
    words = KeyWords(names, path_names)
    most = max((c.get("repeats") or 0 for c in candidates), default=0)
    risk_label = risk_label or risk_title(objective)
    paths = list(dict.fromkeys(c["path"] for c in candidates))
    dash = {p: _PATH_DASHES[i % len(_PATH_DASHES)] for i, p in enumerate(paths)}
    fig = go.Figure()
    groups: dict[tuple[str, str], list[dict]] = {}
    for c in candidates:
        if c.get(objective) is not None:
            groups.setdefault((c["family"], c["path"]), []).append(c)
    shown = set()
    for family in family_order({f for f, _ in groups}):
        for path in paths:
            rows = sorted(groups.get((family, path), []), key=lambda c: (c["K"], c[objective]))
            if not rows:
                continue
            best = {}
            for r in rows:
                best.setdefault(r["K"], r)
            line = [best[k] for k in sorted(best)]
            fig.add_trace(go.Scatter(
                x=[r["K"] for r in line], y=[r[objective] for r in line], mode="lines",
                line=dict(color=family_color(family), dash=dash[path], width=1.5), opacity=0.8,
                name=plot_text(words.family(family)), legendgroup=family, showlegend=family not in shown,
                hoverinfo="skip"))
            shown.add(family)
            fig.add_trace(go.Scatter(
                x=[r["K"] for r in rows], y=[r[objective] for r in rows], mode="markers",
                marker=dict(size=5, color=family_color(family), opacity=0.7), legendgroup=family, showlegend=False,
                name=plot_text(words.family(family)),
                text=[plot_text(f"{words.family(r['family'])} K={r['K']} ({words.path(r['path'])} path)")
                      + (" " + ", ".join(f"{k}={v}" for k, v in r["params"].items()) if r.get("params") else "")
                      + _repeat_note(r, most) for r in rows],
                hovertemplate="%{text}<br>" + risk_label + f" %{{y:.{digits}f}}<extra></extra>"))
    for path in paths:   # a key for the line styles, in grey
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=plot_text(f"{words.path(path)} path"),
                                 legend="legend2",
                                 line=dict(color="#555", dash=dash[path], width=1.5)))
    _mark_winner(fig, candidates, selected, objective, risk_label, words, digits)
    ks = sorted({c["K"] for c in candidates})
    fig.update_layout(xaxis=dict(title="prefix size K (judges used, from the front of the path)",
                                 tickmode="array" if len(ks) <= 20 else "auto",
                                 tickvals=ks if len(ks) <= 20 else None),
                      yaxis_title=risk_label,
                      # families (and the winner) in a column on the right, the path key below the plot
                      legend=dict(x=1.02, y=1, xanchor="left", yanchor="top", title="family"),
                      legend2=dict(orientation="h", yanchor="top", y=-0.18, xanchor="left", x=0),
                      title=dict(text="Every candidate over K (colour: family; line style: path)", font=dict(size=14)),
                      height=540, margin=dict(l=60, r=20, t=40, b=60))
    return fig


def regime_map_points(selection: dict | None, sweep: dict | None) -> list[dict]:
    """Points of the regime map: a selection's verdict (its held-out interaction gain and
    table pressure), every table-like candidate of it against the best scalar candidate,
    and each sweep budget's mean test gain against its table-like V_proxy. Each point says
    its ``kind`` ("selection", "candidate", "sweep") and so which risks it compares."""
    points = []
    if selection and (selection.get("regime") or {}).get("quadrant"):
        rg = selection["regime"]
        n_fit = selection["split"]["n_fit"]
        verdict = rg["quadrant"].replace("_", " ")
        points.append({**rg, "kind": "selection",     # two short lines: the label stays clear of the lines
                       "label": f"selection: {verdict}<br>(fitted on {n_fit:.0f} rows)"})
        best_scalar = selection["candidates"][rg["best_scalar_index"]]["val_risk"]
        for c in selection["candidates"]:
            if REGISTRY[c["family"]].table_like and c["H_K"] is not None and c["path_rule"] != "cfps":
                points.append({"interaction_gain": best_scalar - c["val_risk"],
                               "table_pressure": table_pressure(c["H_K"], n_fit, c["unseen_val"]),
                               "kind": "candidate", "label": "", "hover": f"{c['family']} K={c['K']} {c['path']}"})
    for cell in (sweep or {}).get("cells", []):
        t = cell["menus"].get("table_like") or cell["menus"].get("table")
        s = cell["menus"].get("scalar")
        if t and s and t.get("V_proxy_mean") is not None:
            points.append({"interaction_gain": s["test_mse_mean"] - t["test_mse_mean"],
                           "table_pressure": t["V_proxy_mean"], "kind": "sweep",
                           "label": f"n_M={cell['n_M']}"})
    return points


#: quadrant -> (paper x, paper y, x anchor, y anchor): each label in its own corner of the plot
_QUADRANT_CORNERS = {"joint_table": (0.01, 0.99, "left", "top"),
                     "shrink_or_collect": (0.99, 0.99, "right", "top"),
                     "keep_scalar": (0.01, 0.01, "left", "bottom"),
                     "prefer_scalar": (0.99, 0.01, "right", "bottom")}
_QUADRANT_SHADES = {"joint_table": rgba(FAMILY_COLORS["table"], 0.10),
                    "shrink_or_collect": rgba(FAMILY_COLORS["backoff"], 0.12),
                    "keep_scalar": rgba(FAMILY_COLORS["mean_iso"], 0.10),
                    "prefer_scalar": "rgba(128,128,128,0.12)"}


def _text_position(p: dict, mid_x: float, gain_threshold: float) -> str:
    """Toward the plot's middle, and above (or below) the point, on the far side of the gain
    threshold line, so the dashed line never strikes a label (candidates show none)."""
    side = "left" if p["table_pressure"] > mid_x else "right"
    if p.get("kind") == "candidate":
        return f"middle {side}"
    return ("top " if p["interaction_gain"] >= gain_threshold else "bottom ") + side


def regime_map(points: list[dict], *, gain_threshold: float, pressure_threshold: float) -> go.Figure:
    """The paper's 2x2 operational regime map (Figure fig:operational-regime-map).

    ``points``: dicts with ``table_pressure``, ``interaction_gain``, ``label`` and (from
    :func:`regime_map_points`) ``kind``: a selection and its candidates compare held-out
    (validation) risks, sweep budgets mean test risks; each kind is its own legend entry.
    Quadrant names sit in the four corners of the plot (paper coordinates) so they never
    overlap each other or the points' labels.
    """
    xs = [p["table_pressure"] for p in points] + [pressure_threshold * 2.2, 0.0]
    ys = [p["interaction_gain"] for p in points] + [gain_threshold * 4, -gain_threshold * 4]
    x_hi = max(xs) * 1.15 or 1.0
    span = (max(ys) - min(ys)) or 1.0
    y_lo, y_hi = min(ys) - 0.2 * span, max(ys) + 0.2 * span
    fig = go.Figure()
    bounds = {"joint_table": (0, pressure_threshold, gain_threshold, y_hi),
              "shrink_or_collect": (pressure_threshold, x_hi, gain_threshold, y_hi),
              "keep_scalar": (0, pressure_threshold, y_lo, gain_threshold),
              "prefer_scalar": (pressure_threshold, x_hi, y_lo, gain_threshold)}
    for key, (x0, x1, y0, y1) in bounds.items():
        fig.add_shape(type="rect", x0=x0, x1=x1, y0=y0, y1=y1, fillcolor=_QUADRANT_SHADES[key], line_width=0,
                      layer="below")
        px, py, xa, ya = _QUADRANT_CORNERS[key]
        fig.add_annotation(x=px, y=py, xref="paper", yref="paper", xanchor=xa, yanchor=ya,
                           text=f"<b>{key.replace('_', ' ')}</b>", showarrow=False, name=key,
                           hovertext=QUADRANTS[key][1], font=dict(size=12, color="#444"),
                           bgcolor="rgba(255,255,255,0.6)")
    fig.add_hline(y=gain_threshold, line_dash="dot", line_color="#999")
    fig.add_vline(x=pressure_threshold, line_dash="dot", line_color="#999")

    def kind(p):
        return p.get("kind") or ("selection" if p.get("label") else "candidate")

    styles = {
        "candidate": dict(name="table-like candidates (held-out risks)", mode="markers",
                          marker=dict(size=6, color="rgba(120,120,120,0.6)")),
        "selection": dict(name="this selection (held-out risks)", mode="markers+text",
                          marker=dict(size=13, color=FAMILY_COLORS["table"], line=dict(color="black", width=1))),
        "sweep": dict(name="sweep budgets (mean test risks)", mode="lines+markers+text",
                      marker=dict(size=10, symbol="diamond", color=MENU_COLORS["scalar"]),
                      line=dict(color=rgba(MENU_COLORS["scalar"], 0.4), width=1)),
    }
    mid_x = x_hi / 2
    for k in ("candidate", "selection", "sweep"):
        pts = [p for p in points if kind(p) == k]
        if not pts:
            continue
        text = [p.get("hover", "") if k == "candidate" else p.get("label", "") for p in pts]
        fig.add_trace(go.Scatter(
            x=[p["table_pressure"] for p in pts], y=[p["interaction_gain"] for p in pts], text=text,
            textposition=[_text_position(p, mid_x, gain_threshold) for p in pts],
            cliponaxis=False, textfont=dict(size=11),
            hovertemplate="table pressure %{x:.4f}<br>interaction gain %{y:+.4f}<extra>%{text}</extra>",
            **styles[k]))
    fig.update_layout(xaxis_title="table pressure  (H_K / n_M + unseen rate)",
                      yaxis_title="interaction gain  (scalar risk - table-like risk)",
                      xaxis=dict(range=[0, x_hi], gridcolor="#e6e6e6", zeroline=False),
                      yaxis=dict(range=[y_lo, y_hi], gridcolor="#e6e6e6", zeroline=False),
                      plot_bgcolor="white", showlegend=True,
                      legend=LEGEND_BELOW, height=500, margin=dict(l=70, r=30, t=40, b=60))
    return fig


# -- cell-pressure figures ------------------------------------------------------------------------
def risk_vs_pressure(candidates: list[dict], n_M: int, *, x: str = "unseen_val",
                     risk: str = "val_mse") -> go.Figure:
    """Table-like candidates' risk against unseen rate or H_K / n_M (paper Figures
    fig:unseen-risk and fig:complexity-risk)."""
    fams = family_order({c["family"] for c in candidates})
    fig = go.Figure()
    for f in fams:
        rows = [c for c in candidates if c["family"] == f and c.get("H_K") is not None]
        xs = [c["H_K"] / n_M if x == "H_K/n_M" else c[x] for c in rows]
        fig.add_trace(go.Scatter(x=xs, y=[c[risk] for c in rows], mode="markers", name=f,
                                 marker=dict(color=family_color(f)),
                                 text=[f"K={c['K']} {c['path']}" for c in rows],
                                 hovertemplate="%{text}<br>x=%{x:.3f}<br>risk=%{y:.4f}<extra>" + f + "</extra>"))
    names = {"unseen_val": "unseen rate (held-out rows)", "H_K/n_M": "H_K / n_M (effective support per label)",
             "val_mse": "held-out MSE", "val_risk": "held-out risk", "test_mse": "test MSE (T)"}
    # the legend below the plot, so a half-width column gives the points its whole width
    fig.update_layout(xaxis_title=names.get(x, x), yaxis_title=names.get(risk, risk), legend=LEGEND_BELOW,
                      margin=dict(l=60, r=10, t=20, b=50), height=420)
    return fig


# -- judge costs --------------------------------------------------------------------------------
def risk_cost_pareto(candidates: list[dict], costs: dict, *, risk_label: str = "held-out risk") -> go.Figure:
    """Every candidate's cost per item against its held-out risk, the Pareto front as a
    step line, the deployed choice (star) and the cheapest statistically tied candidate
    (diamond) marked."""
    cost_of = {c["index"]: c["cost"] for c in costs["candidates"]}
    by_index = {c["index"]: c for c in candidates}
    fig = go.Figure()
    for fam in family_order({c["family"] for c in candidates}):
        rows = [c for c in candidates if c["family"] == fam]
        fig.add_scatter(x=[cost_of[c["index"]] for c in rows], y=[c["val_risk"] for c in rows], mode="markers",
                        name=fam, marker=dict(color=family_color(fam), size=6, opacity=0.55),
                        text=[f"{c['family']} K={c['K']} {c['path']}" for c in rows],
                        hovertemplate="%{text}<br>cost %{x:.3g}<br>risk %{y:.4f}<extra></extra>")
    front = [by_index[i] for i in costs["pareto"]]
    fig.add_scatter(x=[cost_of[c["index"]] for c in front], y=[c["val_risk"] for c in front],
                    mode="lines+markers", line=dict(shape="hv", color="black", width=1.5),
                    marker=dict(color="black", size=7), name="Pareto front",
                    hovertemplate="front: cost %{x:.3g}, risk %{y:.4f}<extra></extra>")
    sel = costs.get("selected_point")
    if sel:
        fig.add_scatter(x=[sel["cost"]], y=[sel["risk"]], mode="markers", name="deployed", marker=WINNER_MARKER)
    ct = costs.get("cheapest_tied")
    if ct:
        fig.add_scatter(x=[ct["cost"]], y=[by_index[ct["index"]]["val_risk"]], mode="markers",
                        name="cheapest tied", marker=dict(symbol="diamond-open", size=16, color="black",
                                                          line=dict(width=2.5)))
    fig.update_layout(title="Risk against cost per item (candidates; Pareto front in black)",
                      xaxis_title="cost per item (sum over the candidate's judges)", yaxis_title=risk_label,
                      height=460, legend=dict(orientation="h", y=-0.25), margin=dict(t=50))
    return fig
