"""Figures of the judges, the next-judge plan and the deployment audit."""

from __future__ import annotations

import plotly.graph_objects as go

from .style import FAMILY_COLORS, Z95, KeyWords, family_color, plot_text


# -- deployment audit -------------------------------------------------------------------------
STATUS_COLORS = {"OK": "#2ca02c", "WARN": "#ff7f0e", "REFUSE": "#d62728"}


def audit_drift_bars(judges: list[dict]) -> go.Figure:
    """Per judge: the output distribution's drift (TV, calibration -> traffic) beside its
    no-drift 99% threshold; judges above their threshold in orange."""
    names = [plot_text(j["judge"]) for j in judges]
    colors = ["#ff7f0e" if j.get("shifted") else "#1f77b4" for j in judges]
    fig = go.Figure()
    fig.add_bar(x=names, y=[j["tv"] for j in judges], marker_color=colors, name="drift (TV)",
                hovertemplate="%{x}<br>TV %{y:.3f}<extra></extra>")
    fig.add_scatter(x=names, y=[j["threshold"] for j in judges], mode="markers", name="no-drift 99% threshold",
                    marker=dict(symbol="line-ew-open", size=22, color="black", line=dict(width=2)),
                    hovertemplate="%{x}<br>threshold %{y:.3f}<extra></extra>")
    fig.update_layout(title="Judge output drift: total variation, calibration to traffic",
                      yaxis_title="total variation distance", xaxis_title="judge", height=380,
                      legend=dict(orientation="h", y=-0.35), margin=dict(t=50))
    return fig


def judge_output_shift(judge: dict) -> go.Figure:
    """One judge's output distribution in calibration and in traffic, side by side."""
    cats = judge.get("categories") or []
    cal, traffic = judge.get("calibration") or [], judge.get("traffic") or []
    # outputs neither side shows (e.g. the "<never seen>" bucket of a judge with none) are left out
    keep = [i for i in range(len(cats)) if (cal[i] if i < len(cal) else 0) or (traffic[i] if i < len(traffic) else 0)]
    cats = [plot_text(cats[i]) for i in keep]
    cal = [cal[i] for i in keep if i < len(cal)]
    traffic = [traffic[i] for i in keep if i < len(traffic)]
    fig = go.Figure()
    fig.add_bar(x=cats, y=cal, name="calibration", marker_color="#1f77b4")
    fig.add_bar(x=cats, y=traffic, name="traffic", marker_color="#ff7f0e")
    fig.update_layout(barmode="group", title=f"{plot_text(judge['judge'])}: share of rows per output",
                      yaxis_title="share of rows", xaxis_title="output", yaxis_tickformat=".0%",
                      height=340, margin=dict(t=50))
    return fig


# -- the next judge ---------------------------------------------------------------------------
def next_judge_risk_changes(plan: dict, *, top: int = 20) -> go.Figure:
    """Held-out risk change of adding each pool judge (the ``top`` largest reductions) and of
    dropping each deployed judge, with 95% intervals; left of 0 the change helps."""
    rows = [("add", e) for e in plan["add"] if e["risk_change"] is not None][:top]
    rows += [("drop", e) for e in plan["drop"] if e["risk_change"] is not None]
    fig = go.Figure()
    for kind, color in (("add", "#2ca02c"), ("drop", "#d62728")):
        pts = [e for k, e in rows if k == kind]
        if not pts:
            continue
        fig.add_trace(go.Scatter(
            x=[e["risk_change"] for e in pts], y=[f"{kind} {plot_text(e['judge'])}" for e in pts], mode="markers",
            name=f"{kind} one judge", marker=dict(color=color, size=8),
            error_x=dict(type="data", symmetric=False, color=color,
                         array=[e["ci"][1] - e["risk_change"] for e in pts],
                         arrayminus=[e["risk_change"] - e["ci"][0] for e in pts]),
            customdata=[[e["ci"][0], e["ci"][1], e["pressure_change"], e["verdict"]] for e in pts],
            hovertemplate="%{y}<br>risk change %{x:+.4f}<br>95% [%{customdata[0]:+.4f}, "
                          "%{customdata[1]:+.4f}]<br>pressure change %{customdata[2]:+.4f}"
                          "<br>%{customdata[3]}<extra></extra>"))
    fig.add_vline(x=0, line_dash="dot", line_color="grey")
    fig.update_layout(title="Risk change of one more or one fewer judge (95% intervals)",
                      xaxis_title="held-out risk change vs the deployed prefix (below 0 helps)",
                      yaxis=dict(autorange="reversed"), height=max(320, 26 * len(rows) + 120),
                      margin=dict(l=40, r=20, t=50, b=40), legend=dict(orientation="h", y=-0.15))
    return fig


def calibrate_vs_curate(plan: dict, *, names: dict | None = None) -> go.Figure:
    """Cross-fitted risk (95% intervals) of the deployed prefix, the curated top-k judges and
    the whole pool under each scalar stacker: "calibrate, don't curate". ``names``: family
    key -> the name the bars show (the page's plain names; default the key)."""
    c, dep = plan["calibrate_vs_curate"], plan["deployed"]
    words = KeyWords(names)
    word = (lambda f: plot_text(words.family(f)))
    # bars in their family's colour; the deployed prefix outlined in black, the best pool stacker hatched
    bars = [(f"deployed ({word(dep['family'])}, K={dep['K']})", dep["risk"], dep["risk_se"],
             family_color(dep["family"]), "black", ""),
            (f"curated top-{c['curated']['k']} ({word(c['curated']['family'])})", c["curated"]["risk"],
             c["curated"]["se"], family_color(c["curated"]["family"]), "white", "")]
    bars += [(f"whole pool: {word(f['family'])}", f["risk"], f["se"], family_color(f["family"]), "white",
              "/" if f["family"] == c["pool"]["family"] else "") for f in c["pool"]["families"]]
    bars = [b for b in bars if b[1] is not None]
    fig = go.Figure(go.Bar(x=[b[0] for b in bars], y=[b[1] for b in bars],
                           marker=dict(color=[b[3] for b in bars], line=dict(color=[b[4] for b in bars], width=2),
                                       pattern_shape=[b[5] for b in bars], pattern_fgcolor="white"),
                           error_y=dict(type="data", array=[Z95 * (b[2] or 0.0) for b in bars]),
                           hovertemplate="%{x}<br>risk %{y:.4f}<extra></extra>"))
    lo = min((b[1] - Z95 * (b[2] or 0.0) for b in bars), default=0.0)
    hi = max((b[1] + Z95 * (b[2] or 0.0) for b in bars), default=1.0)
    fig.update_layout(title="Calibrate, don't curate: the whole pool vs the curated top-k",
                      yaxis_title="cross-fitted held-out risk",
                      yaxis_range=[max(0.0, lo - 0.1 * (hi - lo)), hi + 0.1 * (hi - lo)],
                      height=380, margin=dict(l=40, r=20, t=50, b=40))
    return fig


# -- the judges (fcps_core.selection.judges_report) ---------------------------------------------------------
def judge_matrix_heatmap(names: list[str], matrix: list[list], *, value: str = "kappa",
                         max_labels: int = 30) -> go.Figure:
    """A judge x judge matrix (agreement or error correlation) on [-1, 1], panel order on both
    axes; beyond ``max_labels`` judges the tick labels are hidden (hovering names the pair)."""
    names = [plot_text(n) for n in names]
    many = len(names) > max_labels
    # a few judges: each cell shows its value; short names stay level, long or many are slanted
    numbers = len(names) <= 12
    fig = go.Figure(go.Heatmap(z=matrix, x=names, y=names, zmin=-1, zmax=1, zmid=0, colorscale="RdBu",
                               colorbar=dict(title=value), hoverongaps=False,
                               texttemplate="%{z:.2f}" if numbers else None, textfont=dict(size=13),
                               hovertemplate="%{y}<br>%{x}<br>" + value + " %{z:.3f}<extra></extra>"))
    side = max(420, min(900, 12 * len(names) + 160))
    level = len(names) <= 12 and max((len(str(n)) for n in names), default=0) <= 8
    fig.update_layout(xaxis=dict(title="judge" + (f" ({len(names)}; hover for names)" if many else ""),
                                 showticklabels=not many, tickangle=0 if level else -45, tickfont=dict(size=10)),
                      yaxis=dict(title="judge", showticklabels=not many, autorange="reversed",
                                 tickfont=dict(size=10)),
                      height=side, margin=dict(l=40, r=20, t=30, b=40))
    return fig


def reliability_diagram(calibration: dict, *, family: str | None = None) -> go.Figure:
    """The deployed predictor's reliability curve (``judges_report.calibration``): mean label
    against mean prediction per equal-count bin, the diagonal of perfect calibration and the
    base rate; the curve in the deployed family's colour."""
    c = calibration["curve"]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration",
                             line=dict(color="#999", dash="dash"), hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=c["mean_prediction"], y=c["mean_label"], mode="lines+markers",
                             name=f"deployed predictor (ECE {calibration['ece']:.4f})",
                             line=dict(color=FAMILY_COLORS.get(family, "#333")), marker=dict(size=8),
                             customdata=c["count"],
                             hovertemplate="mean prediction %{x:.3f}<br>mean label %{y:.3f}<br>"
                                           "%{customdata} predictions<extra></extra>"))
    fig.add_hline(y=calibration["base_rate"], line_dash="dot", line_color="grey",
                  annotation_text="base rate", annotation_position="bottom right")
    fig.update_layout(xaxis=dict(title="mean predicted probability (equal-count bin)", range=[0, 1]),
                      yaxis=dict(title="mean human label in the bin", range=[0, 1]),
                      legend=dict(orientation="h", y=-0.2), height=440, margin=dict(l=40, r=20, t=30, b=40))
    return fig
