"""Figures of the paper's appendix diagnostics, built from per-candidate sweep records
(:mod:`fcps_core.paper.analyses` computes the numbers; these only draw them): risk over the
prefix size K per path (fig:risk-k, fig:validation-risk), a figure over budgets with its
10-90 % split band (fig:selected-k, fig:uncertainty-diagnostics), binned risk against a
pressure proxy (fig:complexity-risk, fig:unseen-risk, fig:complexity-risk-path,
fig:marginal), the two-panel main diagnostics and the regime map with one trace per source.
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import LEGEND_BELOW, MARGIN, OTHER_COLOR, budget_axis, rgba

#: one colour per path rule (the paper's three, then the calibration frontier)
PATH_COLORS = {"info_first": "#d62728", "complexity_penalized": "#ff7f0e", "random": "#7f7f7f",
               "cfps": "#8c564b"}
#: colours for panels / data sets drawn on one figure
SOURCE_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#e377c2")


def path_color(path: str) -> str:
    return PATH_COLORS.get(path, OTHER_COLOR)


def source_color(i: int) -> str:
    return SOURCE_COLORS[i % len(SOURCE_COLORS)]


def _band_trace(x, lo, hi, color, group):
    return go.Scatter(x=list(x) + list(x)[::-1], y=list(hi) + list(lo)[::-1], fill="toself", mode="lines",
                      fillcolor=rgba(color, 0.15), line=dict(width=0), hoverinfo="skip", showlegend=False,
                      legendgroup=group)


def _grid(titles: list[str], cols: int | None = None, rows: int = 1, **kw):
    cols = cols or len(titles)
    return make_subplots(rows=rows, cols=cols, subplot_titles=titles, **kw)


def risk_over_k(curves: list[dict], *, y_title: str, stars: bool = False, band: bool = True) -> go.Figure:
    """One subplot per panel, one line per path over K (mean over splits) with its 10-90 %
    split band; ``stars`` marks each path's minimum of the mean. ``curves``: rows with
    panel, path, K, mean, p10, p90 (:func:`fcps_core.paper.analyses.curves_over_k`)."""
    panels = list(dict.fromkeys(r["panel"] for r in curves)) or ["(no data)"]
    fig = _grid(panels)
    shown = set()
    for i, panel in enumerate(panels, start=1):
        rows = [r for r in curves if r["panel"] == panel]
        for path in dict.fromkeys(r["path"] for r in rows):
            pts = sorted((r for r in rows if r["path"] == path), key=lambda r: r["K"])
            color = path_color(path)
            ks = [r["K"] for r in pts]
            if band:
                fig.add_trace(_band_trace(ks, [r["p10"] for r in pts], [r["p90"] for r in pts], color, path),
                              row=1, col=i)
            fig.add_trace(go.Scatter(x=ks, y=[r["mean"] for r in pts], mode="lines+markers", name=path,
                                     legendgroup=path, showlegend=path not in shown, line=dict(color=color),
                                     hovertemplate="K=%{x}<br>%{y:.4f}<extra>" + path + "</extra>"), row=1, col=i)
            shown.add(path)
            if stars and pts:
                best = min(pts, key=lambda r: r["mean"])
                fig.add_trace(go.Scatter(x=[best["K"]], y=[best["mean"]], mode="markers", showlegend=False,
                                         marker=dict(symbol="star", size=15, color=color,
                                                     line=dict(color="black", width=1)),
                                         hovertemplate="minimum: K=%{x}, %{y:.4f}<extra>" + path + "</extra>"),
                              row=1, col=i)
        fig.update_xaxes(title_text="prefix size K", dtick=1, row=1, col=i)
    fig.update_yaxes(title_text=y_title, row=1, col=1)
    fig.update_layout(legend=LEGEND_BELOW, margin=MARGIN, height=420)
    return fig


def over_budget(series: dict[str, list[dict]], *, y_title: str, titles: list[str] | None = None) -> go.Figure:
    """Lines over the budget n_M with their 10-90 % split band. ``series``: name -> rows
    with n_M, mean, p10, p90 (and optionally ``subplot``: the 1-based column to draw in)."""
    cols = max([r.get("subplot", 1) for rows in series.values() for r in rows] + [1])
    fig = _grid(titles or [""] * cols, cols=cols)
    budgets = []
    for i, (name, rows) in enumerate(series.items()):
        color = source_color(i)
        for col in sorted({r.get("subplot", 1) for r in rows}):
            pts = sorted((r for r in rows if r.get("subplot", 1) == col), key=lambda r: r["n_M"])
            x = [r["n_M"] for r in pts]
            budgets += x
            fig.add_trace(_band_trace(x, [r["p10"] for r in pts], [r["p90"] for r in pts], color, name),
                          row=1, col=col)
            fig.add_trace(go.Scatter(x=x, y=[r["mean"] for r in pts], mode="lines+markers", name=name,
                                     legendgroup=name, showlegend=col == 1, line=dict(color=color),
                                     hovertemplate="n_M=%{x}<br>%{y:.4f}<extra>" + name + "</extra>"),
                          row=1, col=col)
    budget_axis(fig, budgets)
    fig.update_yaxes(title_text=y_title, row=1, col=1)
    fig.update_layout(legend=LEGEND_BELOW, margin=MARGIN, height=420)
    return fig


def binned_relation(facets: dict[tuple[int, int], dict], *, x_title: str, y_title: str,
                    titles: list[str] | None = None, zero_line: bool = False) -> go.Figure:
    """Binned medians (line) and 10-90 % bands of y against x, one subplot per facet.
    ``facets``: (row, col) -> {"name", "bins": :func:`fcps_core.paper.analyses.quantile_bins`
    rows, optional "points": (x, y) lists drawn faintly}."""
    n_rows = max([r for r, _ in facets] + [1])
    n_cols = max([c for _, c in facets] + [1])
    fig = _grid(titles or [""] * (n_rows * n_cols), cols=n_cols, rows=n_rows)
    shown = set()
    for i, ((row, col), facet) in enumerate(sorted(facets.items())):
        name = facet["name"]
        color = facet.get("color") or source_color(i)
        bins = facet["bins"]
        if facet.get("points"):
            xs, ys = facet["points"]
            fig.add_trace(go.Scattergl(x=xs, y=ys, mode="markers", showlegend=False, hoverinfo="skip",
                                       marker=dict(size=3, color=rgba(color, 0.18))), row=row, col=col)
        x = [b["x_median"] for b in bins]
        fig.add_trace(_band_trace(x, [b["y_p10"] for b in bins], [b["y_p90"] for b in bins], color, name),
                      row=row, col=col)
        fig.add_trace(go.Scatter(x=x, y=[b["y_median"] for b in bins], mode="lines+markers", name=name,
                                 legendgroup=name, showlegend=name not in shown, line=dict(color=color),
                                 customdata=[[b["n"]] for b in bins],
                                 hovertemplate="x median %{x:.4f}<br>y median %{y:.4f}<br>%{customdata[0]} units"
                                               "<extra>" + name + "</extra>"), row=row, col=col)
        shown.add(name)
        if zero_line:
            fig.add_hline(y=0, line_dash="dot", line_color="#999", row=row, col=col)
    for col in range(1, n_cols + 1):
        fig.update_xaxes(title_text=x_title, row=n_rows, col=col)
    for row in range(1, n_rows + 1):
        fig.update_yaxes(title_text=y_title, row=row, col=1)
    fig.update_layout(legend=LEGEND_BELOW, margin=MARGIN, height=max(420, 300 * n_rows))
    return fig


def main_regime_diagnostics(curves: list[dict], bins: dict[str, list[dict]]) -> go.Figure:
    """Figure fig:main-regime-diagnostics: left, joint-table test risk over K per panel
    (information-first path, largest budget); right, binned test risk against the test
    unseen-pattern rate per panel."""
    fig = _grid(["Risk over prefix size", "Risk versus unseen-pattern rate"])
    for i, panel in enumerate(dict.fromkeys([r["panel"] for r in curves] + list(bins))):
        color = source_color(i)
        pts = sorted((r for r in curves if r["panel"] == panel), key=lambda r: r["K"])
        if pts:
            fig.add_trace(_band_trace([r["K"] for r in pts], [r["p10"] for r in pts], [r["p90"] for r in pts],
                                      color, panel), row=1, col=1)
            fig.add_trace(go.Scatter(x=[r["K"] for r in pts], y=[r["mean"] for r in pts], mode="lines+markers",
                                     name=panel, legendgroup=panel, line=dict(color=color)), row=1, col=1)
        b = bins.get(panel) or []
        fig.add_trace(go.Scatter(x=[r["x_median"] for r in b], y=[r["y_median"] for r in b], mode="lines+markers",
                                 name=panel, legendgroup=panel, showlegend=not pts,
                                 line=dict(color=color, dash="dot")), row=1, col=2)
    fig.update_xaxes(title_text="prefix size K", dtick=1, row=1, col=1)
    fig.update_xaxes(title_text="test unseen-pattern rate (bin median)", row=1, col=2)
    fig.update_yaxes(title_text="test MSE", row=1, col=1)
    fig.update_layout(legend=LEGEND_BELOW, margin=MARGIN, height=420)
    return fig


def sourced_regime_map(points: list[dict], *, gain_threshold: float, pressure_threshold: float) -> go.Figure:
    """The operational regime map (fig:operational-regime-map) with one line per source
    (``points`` carry ``source``, ``table_pressure``, ``interaction_gain``, ``label``):
    the quadrants of :func:`fcps_core.figures.selection.regime_map`, then each source's
    budgets joined in order."""
    from .selection import regime_map
    fig = regime_map([{**p, "kind": "sweep"} for p in points], gain_threshold=gain_threshold,
                     pressure_threshold=pressure_threshold)
    fig.data = ()
    for i, source in enumerate(dict.fromkeys(p["source"] for p in points)):
        pts = [p for p in points if p["source"] == source]
        color = source_color(i)
        fig.add_trace(go.Scatter(x=[p["table_pressure"] for p in pts], y=[p["interaction_gain"] for p in pts],
                                 mode="lines+markers", name=source, text=[p.get("label", "") for p in pts],
                                 marker=dict(size=9, color=color), line=dict(color=rgba(color, 0.5), width=1),
                                 hovertemplate="%{text}<br>table pressure %{x:.4f}<br>interaction gain "
                                               "%{y:+.4f}<extra>" + source + "</extra>"))
    fig.update_layout(yaxis_title="interaction gain  (scalar - table validation risk)", height=520,
                      legend=dict(**LEGEND_BELOW, title=dict(text="sweep (budgets in order)")))
    return fig




def uncertainty_diagnostics(curves: list[dict], k_rows: dict[str, list[dict]]) -> go.Figure:
    """Figure fig:uncertainty-diagnostics: (a) joint-table test risk over K with the 10-90 %
    split band per panel, (b) the selected table K over budgets with its 10-90 % band."""
    fig = _grid(["Risk envelope (information-first path, largest budget)", "Selected prefix"])
    budgets = []
    for i, panel in enumerate(dict.fromkeys([r["panel"] for r in curves] + list(k_rows))):
        color = source_color(i)
        pts = sorted((r for r in curves if r["panel"] == panel), key=lambda r: r["K"])
        fig.add_trace(_band_trace([r["K"] for r in pts], [r["p10"] for r in pts], [r["p90"] for r in pts], color,
                                  panel), row=1, col=1)
        fig.add_trace(go.Scatter(x=[r["K"] for r in pts], y=[r["mean"] for r in pts], mode="lines+markers",
                                 name=panel, legendgroup=panel, line=dict(color=color)), row=1, col=1)
        rows = sorted(k_rows.get(panel, []), key=lambda r: r["n_M"])
        x = [r["n_M"] for r in rows]
        budgets += x
        fig.add_trace(_band_trace(x, [r["p10"] for r in rows], [r["p90"] for r in rows], color, panel), row=1, col=2)
        fig.add_trace(go.Scatter(x=x, y=[r["mean"] for r in rows], mode="lines+markers", name=panel,
                                 legendgroup=panel, showlegend=False, line=dict(color=color)), row=1, col=2)
    fig.update_xaxes(title_text="prefix size K", dtick=1, row=1, col=1)
    fig.update_xaxes(type="log", title_text="calibration labels n_M (log scale)", tickmode="array",
                     tickvals=sorted(set(budgets)), ticktext=[str(b) for b in sorted(set(budgets))], row=1, col=2)
    fig.update_yaxes(title_text="test MSE (mean, 10-90% band)", row=1, col=1)
    fig.update_yaxes(title_text="selected K (mean, 10-90% band)", row=1, col=2)
    fig.update_layout(legend=LEGEND_BELOW, margin=MARGIN, height=420)
    return fig


__all__ = ["PATH_COLORS", "binned_relation", "main_regime_diagnostics", "over_budget",
           "path_color", "risk_over_k", "sourced_regime_map", "uncertainty_diagnostics"]
