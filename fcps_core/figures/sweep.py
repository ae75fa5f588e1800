"""Figures of calibration-growth sweeps and of the labelling plan: risk, selected K, unseen
rate and oracle gap over the budget n_M (a log axis ticked at the budgets), the paired gap
forest, family shares, the K-versus-family ablation and the fitted risk curves."""

from __future__ import annotations

import plotly.graph_objects as go

from .style import (LEGEND_BELOW, MARGIN, MENU_COLORS, OTHER_COLOR, Z95, budget_axis, family_color, family_order,
                    fmt_budget, menu_color, rgba)


# -- sweep figures -------------------------------------------------------------------------------
def _band(fig, x, mean, se, name, color):
    upper = [m + Z95 * s if s == s else m for m, s in zip(mean, se)]
    lower = [m - Z95 * s if s == s else m for m, s in zip(mean, se)]
    fig.add_trace(go.Scatter(x=list(x) + list(x)[::-1], y=upper + lower[::-1], fill="toself", mode="lines",
                             fillcolor=rgba(color, 0.15), legendgroup=name,
                             line=dict(width=0), hoverinfo="skip", showlegend=False))
    fig.add_trace(go.Scatter(x=list(x), y=list(mean), mode="lines+markers", name=name, legendgroup=name,
                             line=dict(color=color), marker=dict(color=color),
                             customdata=[[Z95 * s if s == s else float("nan")] for s in se],
                             hovertemplate="n_M=%{x}<br>%{y:.4f} ± %{customdata[0]:.4f} (95%)<extra>"
                                           + name + "</extra>"))


def calibration_growth_risk(cells: list[dict], menus: tuple[str, ...] = ("table", "scalar")) -> go.Figure:
    """Test risk over n_M per menu with 95% bands (mean +- 1.96 SE over splits)."""
    fig = go.Figure()
    for menu in menus:
        rows = [c for c in cells if menu in c.get("menus", {})]
        if not rows:
            continue
        _band(fig, [c["n_M"] for c in rows], [c["menus"][menu]["test_mse_mean"] for c in rows],
              [c["menus"][menu]["test_mse_se"] for c in rows], menu, menu_color(menu))
    fig.update_layout(yaxis_title="test MSE (mean over splits, 95% band)", legend=dict(title="menu"),
                      margin=MARGIN)
    return budget_axis(fig, [c["n_M"] for c in cells])


def selected_k_over_budget(cells: list[dict], menu: str = "table") -> go.Figure:
    rows = [c for c in cells if menu in c.get("menus", {})]
    fig = go.Figure(go.Scatter(
        x=[c["n_M"] for c in rows], y=[c["menus"][menu]["K_mean"] for c in rows], mode="lines+markers",
        line=dict(color=menu_color(menu)), marker=dict(color=menu_color(menu)),
        error_y=dict(type="data", array=[c["menus"][menu]["K_sd"] for c in rows], color=menu_color(menu)),
        name=f"{menu} K"))
    fig.update_layout(yaxis_title=f"selected K ({menu} menu, mean ± sd over splits)", margin=MARGIN)
    return budget_axis(fig, [c["n_M"] for c in rows])


def unseen_over_budget(cells: list[dict], menu: str = "table") -> go.Figure:
    rows = [c for c in cells if menu in c.get("menus", {})]
    color = menu_color(menu)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[c["n_M"] for c in rows], y=[c["menus"][menu]["unseen_mean"] for c in rows],
                             mode="lines+markers", name="unseen rate (T)", line=dict(color=color)))
    fig.add_trace(go.Scatter(x=[c["n_M"] for c in rows], y=[c["menus"][menu]["V_cell_mean"] for c in rows],
                             mode="lines+markers", name="V_cell", line=dict(color=color, dash="dot"),
                             marker=dict(symbol="square")))
    fig.update_layout(yaxis_title=f"rate ({menu} menu's choice, mean over splits)", legend=LEGEND_BELOW,
                      margin=MARGIN)
    return budget_axis(fig, [c["n_M"] for c in rows])


def gap_forest(cells: list[dict]) -> go.Figure:
    """Forest plot of the paired table-minus-scalar delta per budget (positive favours scalar)."""
    rows = [c for c in cells if c.get("delta") is not None]
    labels = [f"n_M={c['n_M']}" for c in rows]
    colors = [MENU_COLORS["scalar"] if (c.get("ci_low") or 0) > 0 else
              MENU_COLORS["table"] if (c.get("ci_high") or 0) < 0 else OTHER_COLOR for c in rows]
    fig = go.Figure(go.Scatter(
        x=[c["delta"] for c in rows], y=labels, mode="markers",
        error_x=dict(type="data", symmetric=False, array=[c["ci_high"] - c["delta"] for c in rows],
                     arrayminus=[c["delta"] - c["ci_low"] for c in rows], color="#555"),
        marker=dict(size=10, color=colors), hovertemplate="delta=%{x:.4f}<extra>%{y}</extra>"))
    fig.add_vline(x=0, line_dash="dash", line_color="gray")
    fig.update_layout(xaxis_title="table - scalar test MSE (paired 95% CI; > 0 favours scalar)",
                      yaxis=dict(autorange="reversed", title="calibration budget"), margin=MARGIN)
    return fig


def family_shares(cells: list[dict], menu: str = "full") -> go.Figure:
    fams = family_order({f for c in cells for f in c.get("menus", {}).get(menu, {}).get("family_shares", {})})
    fig = go.Figure()
    for f in fams:
        fig.add_trace(go.Bar(x=[fmt_budget(c["n_M"]) for c in cells],
                             y=[c["menus"].get(menu, {}).get("family_shares", {}).get(f, 0.0) for c in cells],
                             name=f, marker_color=family_color(f)))
    fig.update_layout(barmode="stack", xaxis=dict(title="calibration labels n_M", type="category"),
                      yaxis=dict(title=f"share of splits choosing the family ({menu} menu)", tickformat=".0%"),
                      legend=dict(title="family"), showlegend=True, margin=MARGIN)
    return fig


def ablation_bars(cells: list[dict]) -> go.Figure:
    """K-versus-family ablation: fixed largest K vs selected K per menu (Table tab:k-family-ablation)."""
    fig = go.Figure()
    for which, label, pattern in (("fixed_K", "largest K", "/"), ("selected_K", "selected K", "")):
        xs, ys, colors = [], [], []
        for c in cells:
            for menu, v in c.get("ablation", {}).items():
                xs.append(f"{menu} n_M={c['n_M']}")
                ys.append(v[which])
                colors.append(menu_color(menu))
        fig.add_trace(go.Bar(x=xs, y=ys, name=label, marker=dict(color=colors, pattern_shape=pattern,
                                                                 pattern_fgcolor="white")))
    fig.update_layout(barmode="group", yaxis_title="test MSE", xaxis_title="menu and calibration budget",
                      legend=dict(title="prefix size (hatched: largest K)"), margin=MARGIN)
    return fig


def oracle_gap(cells: list[dict]) -> go.Figure:
    """Finite (validation-selected) vs non-deployable test-oracle risk per menu and budget."""
    fig = go.Figure()
    for menu in ("table", "scalar"):
        rows = [c for c in cells if menu in c.get("menus", {})]
        color = menu_color(menu)
        fig.add_trace(go.Scatter(x=[c["n_M"] for c in rows], y=[c["menus"][menu]["test_mse_mean"] for c in rows],
                                 mode="lines+markers", name=f"{menu} (validation-selected)", line=dict(color=color)))
        fig.add_trace(go.Scatter(x=[c["n_M"] for c in rows],
                                 y=[c["menus"][menu]["oracle_test_mse_mean"] for c in rows],
                                 mode="lines", line=dict(dash="dot", color=color), name=f"{menu} oracle (non-deployable)"))
    fig.update_layout(yaxis_title="test MSE (mean over splits)", legend=LEGEND_BELOW, margin=MARGIN)
    return budget_axis(fig, [c["n_M"] for c in cells])


# -- the next labels (fcps_core.planning.sweep_plan) ----------------------------------------------
def plan_curves(plan: dict) -> go.Figure:
    """Each menu's fitted validation-risk curve a + b n_M^-c over n_M with its bootstrap band
    (the plan's outer percentiles), dashed beyond the measured budgets, the measured means
    (+- 1.96 SE over splits), the target n_M and the table-like/scalar crossover interval."""
    levels = plan.get("levels") or [0.1, 0.5, 0.9]
    fig = go.Figure()
    for menu, c in (plan.get("curves") or {}).items():
        color = menu_color(menu)
        name = menu.replace("_", "-")
        grid = c.get("grid")
        if grid:
            x = grid["n_M"]
            fig.add_trace(go.Scatter(x=x + x[::-1], y=grid["high"] + grid["low"][::-1], fill="toself", mode="lines",
                                     fillcolor=rgba(color, 0.15),
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
        fig.add_vrect(x0=cross.get("low") or cross["n_M"], x1=hi, fillcolor=rgba(MENU_COLORS["table_like"], 0.08),
                      line_width=0)
        fig.add_vline(x=cross["n_M"], line_dash="dash", line_color=MENU_COLORS["table_like"],
                      annotation_text="table-like overtakes", annotation_position="bottom right")
    fig.update_layout(yaxis_title="validation MSE (selected candidate)",
                      legend=dict(orientation="h", y=-0.25), height=460, margin=MARGIN)
    ticks = [b for c in (plan.get("curves") or {}).values() for b in c.get("budgets", [])]
    return budget_axis(fig, ticks + ([plan["target_n_M"]] if plan.get("target_n_M") else []))
