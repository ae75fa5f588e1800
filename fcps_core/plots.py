"""Plotly figure builders: pure functions from result data to figures (no Streamlit)."""

from __future__ import annotations

import plotly.graph_objects as go

from .diagnostics import QUADRANTS


def validation_risk_over_k(candidates: list[dict], *, objective: str = "val_mse") -> go.Figure:
    """Validation risk against prefix size K, one line per (family, path)."""
    fig = go.Figure()
    series: dict[tuple[str, str], list[dict]] = {}
    for c in candidates:
        if c["path_rule"] == "cfps":
            continue
        series.setdefault((c["family"], c["path"]), []).append(c)
    for (family, path), rows in sorted(series.items()):
        rows = sorted(rows, key=lambda r: r["K"])
        fig.add_trace(go.Scatter(x=[r["K"] for r in rows], y=[r[objective] for r in rows],
                                 mode="lines+markers", name=f"{family} / {path}",
                                 hovertemplate="K=%{x}<br>risk=%{y:.4f}<extra>%{fullData.name}</extra>"))
    fig.update_layout(xaxis_title="prefix size K", yaxis_title=objective.replace("_", " "),
                      legend_title="family / path", margin=dict(l=40, r=20, t=30, b=40))
    return fig


def regime_map(points: list[dict], *, gain_threshold: float, pressure_threshold: float) -> go.Figure:
    """The paper's 2x2 operational regime map (Figure fig:operational-regime-map).

    ``points``: dicts with ``table_pressure``, ``interaction_gain`` and ``label``.
    """
    xs = [p["table_pressure"] for p in points] + [pressure_threshold * 2.2, 0.0]
    ys = [p["interaction_gain"] for p in points] + [gain_threshold * 4, -gain_threshold * 4]
    x_hi = max(xs) * 1.15 or 1.0
    y_lo, y_hi = min(ys) * 1.2, max(ys) * 1.2
    fig = go.Figure()
    shades = {"joint_table": (0, pressure_threshold, gain_threshold, y_hi, "rgba(46,139,87,0.12)"),
              "shrink_or_collect": (pressure_threshold, x_hi, gain_threshold, y_hi, "rgba(255,165,0,0.12)"),
              "keep_scalar": (0, pressure_threshold, y_lo, gain_threshold, "rgba(70,130,180,0.12)"),
              "prefer_scalar": (pressure_threshold, x_hi, y_lo, gain_threshold, "rgba(128,128,128,0.12)")}
    for key, (x0, x1, y0, y1, color) in shades.items():
        fig.add_shape(type="rect", x0=x0, x1=x1, y0=y0, y1=y1, fillcolor=color, line_width=0, layer="below")
        fig.add_annotation(x=(x0 + x1) / 2, y=y1 if y1 > 0 else y0, text=key.replace("_", " "),
                           showarrow=False, yanchor="top" if y1 > 0 else "bottom",
                           hovertext=QUADRANTS[key][1], font=dict(size=11, color="#555"))
    fig.add_trace(go.Scatter(x=[p["table_pressure"] for p in points],
                             y=[p["interaction_gain"] for p in points], mode="markers+text",
                             text=[p.get("label", "") for p in points], textposition="top center",
                             marker=dict(size=11), name="panel",
                             hovertemplate="pressure=%{x:.4f}<br>gain=%{y:.4f}<extra>%{text}</extra>"))
    fig.update_layout(xaxis_title="table pressure  (H_K / n_M + unseen rate)",
                      yaxis_title="interaction gain  (scalar - table validation risk)",
                      xaxis_range=[0, x_hi], yaxis_range=[y_lo, y_hi], showlegend=False,
                      margin=dict(l=40, r=20, t=30, b=40))
    return fig
