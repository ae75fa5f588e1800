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
    fig.update_layout(yaxis_title="test MSE on T (mean over splits, 95% band)", legend=dict(title="menu"),
                      margin=MARGIN)
    return budget_axis(fig, [c["n_M"] for c in cells])


def selected_k_over_budget(cells: list[dict], menu: str = "table", *, k_max: int | None = None) -> go.Figure:
    """The menu's validation-selected prefix K over n_M (mean ± sd over splits) on whole-number
    ticks; the sd bar is clipped to the menu's K range, 1 to ``k_max``."""
    rows = [c for c in cells if menu in c.get("menus", {})]
    mean = [c["menus"][menu]["K_mean"] for c in rows]
    sd = [c["menus"][menu].get("K_sd") or 0.0 for c in rows]
    top = float(k_max) if k_max else float("inf")
    up = [max(0.0, min(m + d, top) - m) for m, d in zip(mean, sd)]
    down = [max(0.0, m - max(m - d, 1.0)) for m, d in zip(mean, sd)]
    fig = go.Figure(go.Scatter(
        x=[c["n_M"] for c in rows], y=mean, mode="lines+markers",
        line=dict(color=menu_color(menu)), marker=dict(color=menu_color(menu)),
        error_y=dict(type="data", symmetric=False, array=up, arrayminus=down, color=menu_color(menu)),
        name=f"{menu} K", hovertemplate="n_M=%{x}<br>mean K %{y:.2f}<extra></extra>"))
    highest = max([m + u for m, u in zip(mean, up)] + [float(k_max or 1)])
    fig.update_layout(yaxis=dict(title=f"selected K ({menu} menu, mean ± sd over splits)", dtick=1, tick0=0,
                                 tickformat="d", range=[0.5, highest + 0.5]),
                      margin=MARGIN)
    return budget_axis(fig, [c["n_M"] for c in rows])


def unseen_over_budget(cells: list[dict], menu: str = "table") -> go.Figure:
    """The menu's choice: its unseen rate on T (a share of rows) and its held-out cell
    pressure V_cell (expected inverse cell count plus that unseen rate), mean over splits."""
    rows = [c for c in cells if menu in c.get("menus", {})]
    color = menu_color(menu)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[c["n_M"] for c in rows], y=[c["menus"][menu]["unseen_mean"] for c in rows],
                             mode="lines+markers", name="unseen rate (share of T rows)", line=dict(color=color)))
    fig.add_trace(go.Scatter(x=[c["n_M"] for c in rows], y=[c["menus"][menu]["V_cell_mean"] for c in rows],
                             mode="lines+markers", name="V_cell (cell pressure)", line=dict(color=color, dash="dot"),
                             marker=dict(symbol="square")))
    fig.update_layout(yaxis_title=f"unseen rate, V_cell ({menu} menu, mean)",
                      legend=LEGEND_BELOW, margin=MARGIN)
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
    """K-versus-family ablation (Table tab:k-family-ablation) as a dot plot: per menu and
    budget, the test MSE with the largest prefix K (open circle) and with the
    validation-selected K (filled), joined by a line, on an axis zoomed to the risks (bars
    from 0 would hide differences of a few thousandths)."""
    rows = [(f"{menu} n_M={fmt_budget(c['n_M'])}", menu, v) for c in cells
            for menu, v in c.get("ablation", {}).items()]
    fig = go.Figure()
    link_x, link_y = [], []
    for label, _, v in rows:
        link_x += [v["fixed_K"], v["selected_K"], None]
        link_y += [label, label, None]
    fig.add_trace(go.Scatter(x=link_x, y=link_y, mode="lines", line=dict(color="#bbbbbb", width=2),
                             hoverinfo="skip", showlegend=False, name="difference"))
    for which, label, symbol in (("fixed_K", "largest K", "circle-open"), ("selected_K", "selected K", "circle")):
        fig.add_trace(go.Scatter(
            x=[v[which] for _, _, v in rows], y=[r[0] for r in rows], mode="markers", name=label,
            showlegend=False, marker=dict(symbol=symbol, size=11, color=[menu_color(m) for _, m, _ in rows],
                                          line=dict(width=2, color=[menu_color(m) for _, m, _ in rows])),
            customdata=[[v["selected_K"] - v["fixed_K"]] for _, _, v in rows],
            hovertemplate="%{y}<br>" + label + " test MSE %{x:.4f}<br>selected - largest %{customdata[0]:+.4f}"
                          "<extra></extra>"))
        # the legend's swatch in a neutral colour (the points take their menu's colour)
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=label,
                                 marker=dict(symbol=symbol, size=11, color="#444", line=dict(width=2, color="#444"))))
    fig.update_layout(xaxis=dict(title="test MSE (mean over splits)", tickformat=".3f", gridcolor="#e6e6e6"),
                      yaxis=dict(autorange="reversed", type="category"),     # the labels say menu and n_M
                      legend=dict(title="prefix size", orientation="h", yanchor="top", y=-0.18, xanchor="left", x=0),
                      height=max(300, 30 * len(rows) + 150), margin=dict(l=130, r=20, t=20, b=50))
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
#: one look per sweep menu on the plan chart: the lines differ in dash, width and marker as well
#: as colour, so a table-like fit that coincides with the full menu's still shows beneath it
PLAN_STYLES = {"table_like": dict(dash="dash", width=4.0, symbol="diamond", offset=0.96),
               "table": dict(dash="dash", width=4.0, symbol="diamond", offset=0.96),
               "scalar": dict(dash="solid", width=2.5, symbol="circle", offset=1.0),
               "full": dict(dash="dot", width=2.0, symbol="square", offset=1.04)}


def plan_curves(plan: dict) -> go.Figure:
    """Each menu's fitted validation-risk curve a + b n_M^-c over n_M with its bootstrap band
    (the plan's outer percentiles, lightly filled with thin edges), faded beyond the measured
    budgets, the measured means (+- 1.96 SE over splits, nudged apart so their bars do not
    overlap), the target n_M and the table-like/scalar crossover interval. Menus differ in
    colour, dash, width and marker; the widest line is drawn first."""
    levels = plan.get("levels") or [0.1, 0.5, 0.9]
    curves = plan.get("curves") or {}
    look = {m: PLAN_STYLES.get(m, dict(dash="solid", width=2.0, symbol="circle", offset=1.0)) for m in curves}
    fig = go.Figure()
    for menu in sorted(curves, key=lambda m: -look[m]["width"]):
        c, st = curves[menu], look[menu]
        color = menu_color(menu)
        name = menu.replace("_", "-")
        grid = c.get("grid")
        if grid:
            x = grid["n_M"]
            fig.add_trace(go.Scatter(x=x + x[::-1], y=grid["high"] + grid["low"][::-1], fill="toself", mode="lines",
                                     fillcolor=rgba(color, 0.05), line=dict(width=0.8, color=rgba(color, 0.5),
                                                                            dash=st["dash"]),
                                     hoverinfo="skip", showlegend=False,
                                     name=f"{name} {levels[0]:.0%}-{levels[-1]:.0%} band"))
            top = max(c["budgets"])
            inside = [i for i, n in enumerate(x) if n <= top]
            beyond = [i for i, n in enumerate(x) if n >= top]
            for idx, faded, label in ((inside, False, f"{name} fit"), (beyond, True, f"{name} extrapolated")):
                if idx:
                    fig.add_trace(go.Scatter(x=[x[i] for i in idx], y=[grid["fit"][i] for i in idx], mode="lines",
                                             name=label, opacity=0.55 if faded else 1.0,
                                             line=dict(color=color, dash=st["dash"], width=st["width"]),
                                             showlegend=not faded, legendgroup=menu,
                                             hovertemplate="n_M=%{x:.0f}<br>risk=%{y:.4f}<extra>" + label + "</extra>"))
        se = [1.959963984540054 * s if s is not None and s == s else 0.0 for s in c.get("se", [])]
        budgets = c.get("budgets", [])
        fig.add_trace(go.Scatter(x=[b * st["offset"] for b in budgets], y=c.get("mean", []), mode="markers",
                                 name=f"{name} measured", legendgroup=menu,
                                 marker=dict(color=color, size=9, symbol=st["symbol"], line=dict(color="white",
                                                                                                 width=1)),
                                 error_y=dict(type="data", array=se, color=color, thickness=1.5),
                                 customdata=budgets,
                                 hovertemplate="n_M=%{customdata}<br>validation risk=%{y:.4f}<extra>" + name
                                               + "</extra>"))
        at = c.get("at_target") or {}
        if at.get("risk") is not None:
            fig.add_trace(go.Scatter(x=[at["n_M"] * st["offset"]], y=[at["risk"]], mode="markers", showlegend=False,
                                     marker=dict(color=color, size=12, symbol=st["symbol"] + "-open",
                                                 line=dict(width=2)),
                                     error_y=dict(type="data", symmetric=False, color=color,
                                                  array=[at["high"] - at["risk"]], arrayminus=[at["risk"] - at["low"]]),
                                     customdata=[at["n_M"]],
                                     hovertemplate="n_M=%{customdata}<br>expected %{y:.4f}<extra>" + name
                                                   + "</extra>"))
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
    fig.update_layout(yaxis_title="validation MSE (selected candidate, optimistic)",
                      legend=dict(orientation="h", y=-0.25), height=460, margin=MARGIN)
    ticks = [b for c in curves.values() for b in c.get("budgets", [])]
    return budget_axis(fig, ticks + ([plan["target_n_M"]] if plan.get("target_n_M") else []))
