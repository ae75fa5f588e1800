"""Shared look of every figure: one colour per family and per sweep menu, the winner's
marker, margins, legends and the logarithmic budget axis (no figure builders here)."""

from __future__ import annotations

import plotly.graph_objects as go

from ..defaults import TIE_AVERAGE

#: one colour per family, shared by every figure: warm = table-like, cool = scalar
FAMILY_COLORS = {
    # table-like (joint tables over output patterns): reds and oranges
    "table": "#d62728", "backoff": "#ff7f0e", "residual": "#e377c2",
    # scalar stackers and reliability models: blues, greens, purples
    "mean_iso": "#1f77b4", "one_coin_iso": "#17becf", "ridge_iso": "#2ca02c", "ridge_pairwise_iso": "#98df8a",
    "logistic": "#9467bd", "logistic_pairwise": "#c5b0d5", "ds_jury": "#393b79",
    # the average of statistically tied candidates (its family label: the choice rule's name)
    TIE_AVERAGE: "#444444",
}
#: one colour per sweep menu, in the hue of its families (table = the table family's red)
MENU_COLORS = {"table": "#d62728", "table_like": "#ff7f0e", "scalar": "#1f77b4", "full": "#444444"}
#: fallback for a name with no colour of its own
OTHER_COLOR = "#7f7f7f"
#: the deployed choice: a gold star with a black rim on every figure
WINNER_MARKER = dict(symbol="star", size=18, color="gold", line=dict(color="black", width=1))
MARGIN = dict(l=60, r=20, t=40, b=50)
LEGEND_BELOW = dict(orientation="h", yanchor="top", y=-0.18, xanchor="left", x=0)
Z95 = 1.959963984540054


def plot_text(value) -> str:
    """A user string (judge name, judge output, panel name) made inert for a Plotly label.

    Plotly renders a subset of HTML in titles, tick, legend and hover labels (``<a href>``,
    ``<b>``, ``<br>``, ``<span style>``) and substitutes ``%{...}`` in hover templates, so a
    judge named ``<a href="https://...">`` would become a live link. ``&``, ``<`` and ``>`` are
    written as entities (Plotly decodes them back to the characters for display) and ``%{`` as
    ``%&#123;`` (shown as ``%{``, never substituted)."""
    text = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("%{", "%&#123;")


def family_color(family: str) -> str:
    return FAMILY_COLORS.get(family, OTHER_COLOR)


def menu_color(menu: str) -> str:
    return MENU_COLORS.get(menu, OTHER_COLOR)


def rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def fmt_budget(v) -> str:
    return f"{v:,.0f}" if float(v) == int(v) else f"{v:,.3g}"


def budget_axis(fig: go.Figure, budgets, *, title: str = "calibration labels n_M (log scale)") -> go.Figure:
    """A logarithmic n_M axis whose ticks sit at the budgets used (25 50 100 200, never the
    log axis's default 2 3 4 5 ... 100 2 minor labels)."""
    vals = sorted({float(b) for b in budgets if b is not None and float(b) > 0})
    fig.update_xaxes(type="log", title=title, tickmode="array", tickvals=vals,
                     ticktext=[fmt_budget(v) for v in vals], minor=dict(showgrid=False))
    return fig


def risk_name(objective: str) -> str:
    return {"val_mse": "MSE", "val_nll": "NLL", "mse": "MSE", "nll": "NLL"}.get(objective, objective)


def risk_title(objective: str) -> str:
    return "held-out risk" if objective == "val_risk" else f"held-out risk ({risk_name(objective)})"


def family_order(families) -> list[str]:
    """Families in registry order (table-like first), unknown names last."""
    order = {f: i for i, f in enumerate(FAMILY_COLORS)}
    return sorted(families, key=lambda f: (order.get(f, len(order)), f))


class KeyWords:
    """Family and path-rule keys as the calling page names them (its ``names`` /
    ``path_names`` mappings, :mod:`fcps_core.reports.names` on the pages; a key without an
    entry, or no mapping, is shown as it is); the label that holds one escapes it
    (:func:`plot_text`). The figures take the mappings as arguments rather than import the
    reports layer."""

    def __init__(self, names: dict | None = None, path_names: dict | None = None):
        self.names, self.path_names = names or {}, path_names or {}

    def family(self, key) -> str:
        return str(self.names.get(key, key))

    def path(self, key) -> str:
        return str(self.path_names.get(key, key))
