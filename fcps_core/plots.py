"""Plotly figure builders: pure functions from result data to figures (no Streamlit)."""

from __future__ import annotations

import plotly.graph_objects as go

from .diagnostics import QUADRANTS, table_pressure
from .families import REGISTRY


#: one colour per family, shared by every figure
FAMILY_COLORS = {
    "mean_iso": "#1f77b4", "one_coin_iso": "#17becf", "ridge_iso": "#2ca02c", "logistic": "#98df8a",
    "ridge_pairwise_iso": "#bcbd22", "logistic_pairwise": "#8c564b", "ds_jury": "#9467bd",
    "table": "#d62728", "backoff": "#ff7f0e", "residual": "#e377c2",
}


def validation_risk_over_k(candidates: list[dict], *, objective: str = "val_mse",
                           selected: dict | None = None) -> go.Figure:
    """Held-out risk against prefix size K: one line per family (its best candidate over
    the paths at each K), the deployed candidate(s) marked with a star."""
    fig = go.Figure()
    best: dict[str, dict[int, dict]] = {}
    for c in candidates:
        if c["path_rule"] == "cfps" or c.get(objective) is None:
            continue
        row = best.setdefault(c["family"], {})
        if c["K"] not in row or c[objective] < row[c["K"]][objective]:
            row[c["K"]] = c
    for family, by_k in sorted(best.items()):
        rows = [by_k[k] for k in sorted(by_k)]
        fig.add_trace(go.Scatter(
            x=[r["K"] for r in rows], y=[r[objective] for r in rows], mode="lines+markers",
            name=family, line=dict(color=FAMILY_COLORS.get(family)), marker=dict(size=5),
            customdata=[r["path"] for r in rows],
            hovertemplate="K=%{x}<br>risk=%{y:.4f}<br>path %{customdata}<extra>%{fullData.name}</extra>"))
    if selected is not None:
        marks = selected.get("members") or [selected]
        by_index = {c["index"]: c for c in candidates}
        pts = [by_index[m["index"]] for m in marks if m.get("index") in by_index]
        if pts:
            fig.add_trace(go.Scatter(
                x=[p["K"] for p in pts], y=[p[objective] for p in pts], mode="markers",
                name="deployed" if len(pts) == 1 else "deployed (averaged)",
                marker=dict(symbol="star", size=16, color="gold", line=dict(color="black", width=1)),
                hovertemplate="%{text}<extra>deployed</extra>",
                text=[f"{p['family']} K={p['K']} {p['path']}" for p in pts]))
    fig.update_layout(xaxis_title="prefix size K (judges used)",
                      yaxis_title=objective.replace("val_", "held-out ").replace("_", " "),
                      legend_title="family", margin=dict(l=40, r=20, t=30, b=40))
    return fig


def regime_map_points(selection: dict | None, sweep: dict | None) -> list[dict]:
    """Points of the regime map: a selection's verdict (its held-out interaction gain and
    table pressure), every table-like candidate of it against the best scalar candidate,
    and each sweep budget's mean test gain against its table-like V_proxy."""
    points = []
    if selection and (selection.get("regime") or {}).get("quadrant"):
        rg = selection["regime"]
        n_fit = selection["split"]["n_fit"]
        verdict = rg["quadrant"].replace("_", " ")
        points.append({**rg, "label": f"selection: {verdict} (fitted on {n_fit:.0f} rows)"})
        best_scalar = selection["candidates"][rg["best_scalar_index"]]["val_risk"]
        for c in selection["candidates"]:
            if REGISTRY[c["family"]].table_like and c["H_K"] is not None and c["path_rule"] != "cfps":
                points.append({"interaction_gain": best_scalar - c["val_risk"],
                               "table_pressure": table_pressure(c["H_K"], n_fit, c["unseen_val"]),
                               "label": "", "hover": f"{c['family']} K={c['K']} {c['path']}"})
    for cell in (sweep or {}).get("cells", []):
        t = cell["menus"].get("table_like") or cell["menus"].get("table")
        s = cell["menus"].get("scalar")
        if t and s and t.get("V_proxy_mean") is not None:
            points.append({"interaction_gain": s["test_mse_mean"] - t["test_mse_mean"],
                           "table_pressure": t["V_proxy_mean"], "label": f"n_M={cell['n_M']} (sweep)"})
    return points


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
    main = [p for p in points if p.get("label")]
    minor = [p for p in points if not p.get("label")]
    if minor:   # individual candidates: small, unlabelled, named on hover
        fig.add_trace(go.Scatter(x=[p["table_pressure"] for p in minor], y=[p["interaction_gain"] for p in minor],
                                 mode="markers", marker=dict(size=6, color="rgba(120,120,120,0.7)"),
                                 text=[p.get("hover", "") for p in minor], name="candidates",
                                 hovertemplate="pressure=%{x:.4f}<br>gain=%{y:.4f}<extra>%{text}</extra>"))
    fig.add_trace(go.Scatter(x=[p["table_pressure"] for p in main],
                             y=[p["interaction_gain"] for p in main], mode="markers+text",
                             text=[p.get("label", "") for p in main], textposition="top center",
                             marker=dict(size=11), name="panel",
                             hovertemplate="pressure=%{x:.4f}<br>gain=%{y:.4f}<extra>%{text}</extra>"))
    fig.update_layout(xaxis_title="table pressure  (H_K / n_M + unseen rate)",
                      yaxis_title="interaction gain  (scalar - table validation risk)",
                      xaxis_range=[0, x_hi], yaxis_range=[y_lo, y_hi], showlegend=False,
                      margin=dict(l=40, r=20, t=30, b=40))
    return fig


# -- sweep figures -------------------------------------------------------------------------------
_Z95 = 1.959963984540054


def _band(fig, x, mean, se, name, color):
    upper = [m + _Z95 * s if s == s else m for m, s in zip(mean, se)]
    lower = [m - _Z95 * s if s == s else m for m, s in zip(mean, se)]
    fig.add_trace(go.Scatter(x=list(x) + list(x)[::-1], y=upper + lower[::-1], fill="toself",
                             fillcolor=color.replace("rgb", "rgba").replace(")", ",0.15)"),
                             line=dict(width=0), hoverinfo="skip", showlegend=False))
    fig.add_trace(go.Scatter(x=list(x), y=list(mean), mode="lines+markers", name=name,
                             line=dict(color=color)))


def calibration_growth_risk(cells: list[dict], menus: tuple[str, ...] = ("table", "scalar")) -> go.Figure:
    """Test risk over n_M per menu with 95% bands (mean +- 1.96 SE over splits)."""
    colors = {"table": "rgb(214,39,40)", "scalar": "rgb(31,119,180)", "table_like": "rgb(255,127,14)",
              "full": "rgb(44,160,44)"}
    fig = go.Figure()
    for menu in menus:
        rows = [c for c in cells if menu in c.get("menus", {})]
        if not rows:
            continue
        _band(fig, [c["n_M"] for c in rows], [c["menus"][menu]["test_mse_mean"] for c in rows],
              [c["menus"][menu]["test_mse_se"] for c in rows], menu, colors.get(menu, "rgb(100,100,100)"))
    fig.update_layout(xaxis_title="calibration labels n_M", yaxis_title="test MSE", xaxis_type="log",
                      margin=dict(l=40, r=20, t=30, b=40))
    return fig


def selected_k_over_budget(cells: list[dict], menu: str = "table") -> go.Figure:
    rows = [c for c in cells if menu in c.get("menus", {})]
    fig = go.Figure(go.Scatter(
        x=[c["n_M"] for c in rows], y=[c["menus"][menu]["K_mean"] for c in rows], mode="lines+markers",
        error_y=dict(type="data", array=[c["menus"][menu]["K_sd"] for c in rows]), name=f"{menu} K"))
    fig.update_layout(xaxis_title="calibration labels n_M", yaxis_title=f"selected K ({menu}, mean +- sd)",
                      xaxis_type="log", margin=dict(l=40, r=20, t=30, b=40))
    return fig


def unseen_over_budget(cells: list[dict], menu: str = "table") -> go.Figure:
    rows = [c for c in cells if menu in c.get("menus", {})]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[c["n_M"] for c in rows], y=[c["menus"][menu]["unseen_mean"] for c in rows],
                             mode="lines+markers", name="unseen rate (T)"))
    fig.add_trace(go.Scatter(x=[c["n_M"] for c in rows], y=[c["menus"][menu]["V_cell_mean"] for c in rows],
                             mode="lines+markers", name="V_cell"))
    fig.update_layout(xaxis_title="calibration labels n_M", yaxis_title="rate", xaxis_type="log",
                      margin=dict(l=40, r=20, t=30, b=40))
    return fig


def gap_forest(cells: list[dict]) -> go.Figure:
    """Forest plot of the paired table-minus-scalar delta per budget (positive favours scalar)."""
    rows = [c for c in cells if c.get("delta") is not None]
    labels = [f"n_M={c['n_M']}" for c in rows]
    fig = go.Figure(go.Scatter(
        x=[c["delta"] for c in rows], y=labels, mode="markers",
        error_x=dict(type="data", symmetric=False, array=[c["ci_high"] - c["delta"] for c in rows],
                     arrayminus=[c["delta"] - c["ci_low"] for c in rows]),
        marker=dict(size=10), hovertemplate="delta=%{x:.4f}<extra>%{y}</extra>"))
    fig.add_vline(x=0, line_dash="dash", line_color="gray")
    fig.update_layout(xaxis_title="table - scalar test MSE (paired 95% CI; > 0 favours scalar)",
                      yaxis=dict(autorange="reversed"), margin=dict(l=40, r=20, t=30, b=40))
    return fig


def family_shares(cells: list[dict], menu: str = "full") -> go.Figure:
    fams = sorted({f for c in cells for f in c.get("menus", {}).get(menu, {}).get("family_shares", {})})
    fig = go.Figure()
    for f in fams:
        fig.add_trace(go.Bar(x=[str(c["n_M"]) for c in cells],
                             y=[c["menus"].get(menu, {}).get("family_shares", {}).get(f, 0.0) for c in cells],
                             name=f))
    fig.update_layout(barmode="stack", xaxis_title="n_M", yaxis_title=f"share of splits ({menu} menu)",
                      margin=dict(l=40, r=20, t=30, b=40))
    return fig


def ablation_bars(cells: list[dict]) -> go.Figure:
    """K-versus-family ablation: fixed largest K vs selected K per menu (Table tab:k-family-ablation)."""
    fig = go.Figure()
    for which, label in (("fixed_K", "largest K"), ("selected_K", "selected K")):
        xs, ys = [], []
        for c in cells:
            for menu, v in c.get("ablation", {}).items():
                xs.append(f"{menu} n_M={c['n_M']}")
                ys.append(v[which])
        fig.add_trace(go.Bar(x=xs, y=ys, name=label))
    fig.update_layout(barmode="group", yaxis_title="test MSE", margin=dict(l=40, r=20, t=30, b=40))
    return fig


def oracle_gap(cells: list[dict]) -> go.Figure:
    """Finite (validation-selected) vs non-deployable test-oracle risk per menu and budget."""
    fig = go.Figure()
    for menu in ("table", "scalar"):
        rows = [c for c in cells if menu in c.get("menus", {})]
        fig.add_trace(go.Scatter(x=[c["n_M"] for c in rows], y=[c["menus"][menu]["test_mse_mean"] for c in rows],
                                 mode="lines+markers", name=f"{menu} (validation-selected)"))
        fig.add_trace(go.Scatter(x=[c["n_M"] for c in rows],
                                 y=[c["menus"][menu]["oracle_test_mse_mean"] for c in rows],
                                 mode="lines", line=dict(dash="dot"), name=f"{menu} oracle (non-deployable)"))
    fig.update_layout(xaxis_title="n_M", yaxis_title="test MSE", xaxis_type="log",
                      margin=dict(l=40, r=20, t=30, b=40))
    return fig


# -- cell-pressure figures ------------------------------------------------------------------------
def risk_vs_pressure(candidates: list[dict], n_M: int, *, x: str = "unseen_val",
                     risk: str = "val_mse") -> go.Figure:
    """Table-like candidates' risk against unseen rate or H_K / n_M (paper Figures
    fig:unseen-risk and fig:complexity-risk)."""
    fams = sorted({c["family"] for c in candidates})
    fig = go.Figure()
    for f in fams:
        rows = [c for c in candidates if c["family"] == f and c.get("H_K") is not None]
        xs = [c["H_K"] / n_M if x == "H_K/n_M" else c[x] for c in rows]
        fig.add_trace(go.Scatter(x=xs, y=[c[risk] for c in rows], mode="markers", name=f,
                                 text=[f"K={c['K']} {c['path']}" for c in rows],
                                 hovertemplate="%{text}<br>x=%{x:.3f}<br>risk=%{y:.4f}<extra>" + f + "</extra>"))
    fig.update_layout(xaxis_title=x, yaxis_title=risk, margin=dict(l=40, r=20, t=30, b=40))
    return fig


# -- deployment audit -------------------------------------------------------------------------
STATUS_COLORS = {"OK": "#2ca02c", "WARN": "#ff7f0e", "REFUSE": "#d62728"}


def audit_drift_bars(judges: list[dict]) -> go.Figure:
    """Per judge: the output distribution's drift (TV, calibration -> traffic) beside its
    no-drift 99% threshold; judges above their threshold in orange."""
    names = [j["judge"] for j in judges]
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
    fig = go.Figure()
    fig.add_bar(x=cats, y=judge.get("calibration") or [], name="calibration", marker_color="#1f77b4")
    fig.add_bar(x=cats, y=judge.get("traffic") or [], name="traffic", marker_color="#ff7f0e")
    fig.update_layout(barmode="group", title=f"{judge['judge']}: share of rows per output",
                      yaxis_title="share of rows", xaxis_title="output", yaxis_tickformat=".0%",
                      height=340, margin=dict(t=50))
    return fig


# -- judge costs --------------------------------------------------------------------------------
def risk_cost_pareto(candidates: list[dict], costs: dict, *, risk_label: str = "held-out risk") -> go.Figure:
    """Every candidate's cost per item against its held-out risk, the Pareto front as a
    step line, the deployed choice (star) and the cheapest statistically tied candidate
    (diamond) marked."""
    cost_of = {c["index"]: c["cost"] for c in costs["candidates"]}
    by_index = {c["index"]: c for c in candidates}
    fig = go.Figure()
    for fam in dict.fromkeys(c["family"] for c in candidates):
        rows = [c for c in candidates if c["family"] == fam]
        fig.add_scatter(x=[cost_of[c["index"]] for c in rows], y=[c["val_risk"] for c in rows], mode="markers",
                        name=fam, marker=dict(color=FAMILY_COLORS.get(fam, "#7f7f7f"), size=6, opacity=0.55),
                        text=[f"{c['family']} K={c['K']} {c['path']}" for c in rows],
                        hovertemplate="%{text}<br>cost %{x:.3g}<br>risk %{y:.4f}<extra></extra>")
    front = [by_index[i] for i in costs["pareto"]]
    fig.add_scatter(x=[cost_of[c["index"]] for c in front], y=[c["val_risk"] for c in front],
                    mode="lines+markers", line=dict(shape="hv", color="black", width=1.5),
                    marker=dict(color="black", size=7), name="Pareto front",
                    hovertemplate="front: cost %{x:.3g}, risk %{y:.4f}<extra></extra>")
    sel = costs.get("selected_point")
    if sel:
        fig.add_scatter(x=[sel["cost"]], y=[sel["risk"]], mode="markers", name="deployed",
                        marker=dict(symbol="star", size=18, color="gold", line=dict(color="black", width=1)))
    ct = costs.get("cheapest_tied")
    if ct:
        fig.add_scatter(x=[ct["cost"]], y=[by_index[ct["index"]]["val_risk"]], mode="markers",
                        name="cheapest tied", marker=dict(symbol="diamond-open", size=16, color="#d62728",
                                                          line=dict(width=2.5)))
    fig.update_layout(title="Risk against cost per item (candidates; Pareto front in black)",
                      xaxis_title="cost per item (sum over the candidate's judges)", yaxis_title=risk_label,
                      height=460, legend=dict(orientation="h", y=-0.25), margin=dict(t=50))
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
            x=[e["risk_change"] for e in pts], y=[f"{kind} {e['judge']}" for e in pts], mode="markers",
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


def calibrate_vs_curate(plan: dict) -> go.Figure:
    """Cross-fitted risk (95% intervals) of the deployed prefix, the curated top-k judges and
    the whole pool under each scalar stacker: "calibrate, don't curate"."""
    c, dep = plan["calibrate_vs_curate"], plan["deployed"]
    bars = [(f"deployed ({dep['family']}, K={dep['K']})", dep["risk"], dep["risk_se"], "#ff7f0e"),
            (f"curated top-{c['curated']['k']} ({c['curated']['family']})", c["curated"]["risk"],
             c["curated"]["se"], "#d62728")]
    bars += [(f"whole pool: {f['family']}", f["risk"], f["se"],
              "#2ca02c" if f["family"] == c["pool"]["family"] else "#98df8a") for f in c["pool"]["families"]]
    bars = [b for b in bars if b[1] is not None]
    fig = go.Figure(go.Bar(x=[b[0] for b in bars], y=[b[1] for b in bars], marker_color=[b[3] for b in bars],
                           error_y=dict(type="data", array=[_Z95 * (b[2] or 0.0) for b in bars]),
                           hovertemplate="%{x}<br>risk %{y:.4f}<extra></extra>"))
    lo = min((b[1] - _Z95 * (b[2] or 0.0) for b in bars), default=0.0)
    hi = max((b[1] + _Z95 * (b[2] or 0.0) for b in bars), default=1.0)
    fig.update_layout(title="Calibrate, don't curate: the whole pool vs the curated top-k",
                      yaxis_title="cross-fitted held-out risk",
                      yaxis_range=[max(0.0, lo - 0.1 * (hi - lo)), hi + 0.1 * (hi - lo)],
                      height=380, margin=dict(l=40, r=20, t=50, b=40))
    return fig


# -- the next labels (fcps_core.planning.sweep_plan) ----------------------------------------------
def plan_curves(plan: dict) -> go.Figure:
    """Each menu's fitted validation-risk curve a + b n_M^-c over n_M with its bootstrap band
    (the plan's outer percentiles), dashed beyond the measured budgets, the measured means
    (+- 1.96 SE over splits), the target n_M and the table-like/scalar crossover interval."""
    colors = {"table": "rgb(214,39,40)", "scalar": "rgb(31,119,180)", "table_like": "rgb(255,127,14)",
              "full": "rgb(44,160,44)"}
    levels = plan.get("levels") or [0.1, 0.5, 0.9]
    fig = go.Figure()
    for menu, c in (plan.get("curves") or {}).items():
        color = colors.get(menu, "rgb(100,100,100)")
        name = menu.replace("_", "-")
        grid = c.get("grid")
        if grid:
            x = grid["n_M"]
            fig.add_trace(go.Scatter(x=x + x[::-1], y=grid["high"] + grid["low"][::-1], fill="toself",
                                     fillcolor=color.replace("rgb", "rgba").replace(")", ",0.15)"),
                                     line=dict(width=0), hoverinfo="skip", showlegend=False,
                                     name=f"{name} {levels[0]:.0%}-{levels[-1]:.0%} band"))
            top = max(c["budgets"])
            inside = [i for i, n in enumerate(x) if n <= top]
            beyond = [i for i, n in enumerate(x) if n >= top]
            for idx, dash, label in ((inside, None, f"{name} fit"), (beyond, "dash", f"{name} extrapolated")):
                if idx:
                    fig.add_trace(go.Scatter(x=[x[i] for i in idx], y=[grid["fit"][i] for i in idx], mode="lines",
                                             name=label, line=dict(color=color, dash=dash),
                                             showlegend=dash is None,
                                             hovertemplate="n_M=%{x:.0f}<br>risk=%{y:.4f}<extra>" + label + "</extra>"))
        se = [1.959963984540054 * s if s is not None and s == s else 0.0 for s in c.get("se", [])]
        fig.add_trace(go.Scatter(x=c.get("budgets", []), y=c.get("mean", []), mode="markers",
                                 name=f"{name} measured", marker=dict(color=color, size=8),
                                 error_y=dict(type="data", array=se, color=color),
                                 hovertemplate="n_M=%{x}<br>validation risk=%{y:.4f}<extra>" + name + "</extra>"))
        at = c.get("at_target") or {}
        if at.get("risk") is not None:
            fig.add_trace(go.Scatter(x=[at["n_M"]], y=[at["risk"]], mode="markers", showlegend=False,
                                     marker=dict(color=color, size=11, symbol="diamond-open"),
                                     error_y=dict(type="data", symmetric=False, color=color,
                                                  array=[at["high"] - at["risk"]], arrayminus=[at["risk"] - at["low"]]),
                                     hovertemplate="n_M=%{x}<br>expected %{y:.4f}<extra>" + name + "</extra>"))
    if plan.get("target_n_M"):
        fig.add_vline(x=plan["target_n_M"], line_dash="dot", line_color="grey",
                      annotation_text=f"+{plan.get('delta', 0):,} labels", annotation_position="top")
    cross = plan.get("crossover") or {}
    if cross.get("status") == "crossover" and cross.get("n_M"):
        hi = cross.get("high") or cross.get("horizon") or cross["n_M"]
        fig.add_vrect(x0=cross.get("low") or cross["n_M"], x1=hi, fillcolor="rgba(255,127,14,0.08)", line_width=0)
        fig.add_vline(x=cross["n_M"], line_dash="dash", line_color="rgb(255,127,14)",
                      annotation_text="table-like overtakes", annotation_position="bottom right")
    fig.update_layout(xaxis_title="calibration labels n_M", yaxis_title="validation MSE (selected candidate)",
                      xaxis_type="log", legend=dict(orientation="h", y=-0.25), height=460,
                      margin=dict(l=40, r=20, t=30, b=40))
    return fig


# -- the judges (fcps_core.judges_report) ---------------------------------------------------------
def judge_matrix_heatmap(names: list[str], matrix: list[list], *, value: str = "kappa",
                         max_labels: int = 30) -> go.Figure:
    """A judge x judge matrix (agreement or error correlation) on [-1, 1], panel order on both
    axes; beyond ``max_labels`` judges the tick labels are hidden (hovering names the pair)."""
    many = len(names) > max_labels
    fig = go.Figure(go.Heatmap(z=matrix, x=names, y=names, zmin=-1, zmax=1, zmid=0, colorscale="RdBu",
                               colorbar=dict(title=value), hoverongaps=False,
                               hovertemplate="%{y}<br>%{x}<br>" + value + " %{z:.3f}<extra></extra>"))
    side = max(420, min(900, 12 * len(names) + 160))
    fig.update_layout(xaxis=dict(title="judge" + (f" ({len(names)}; hover for names)" if many else ""),
                                 showticklabels=not many, tickangle=-45, tickfont=dict(size=10)),
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
                             name=f"deployed predictor (ECE {calibration['ece']:.3f})",
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
