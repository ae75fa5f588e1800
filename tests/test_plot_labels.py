"""Judge names and outputs reach Plotly labels inert: Plotly renders a subset of HTML (links,
bold, spans) in titles, ticks, legends and hovers and substitutes %{...} in hover templates."""

from __future__ import annotations

import json

from fcps_core.figures.panel import (audit_drift_bars, judge_matrix_heatmap, judge_output_shift,
                                     next_judge_risk_changes)
from fcps_core.figures.selection import _baseline_line
from fcps_core.figures.style import plot_text

HOSTILE = ['<a href="https://evil.example">Re-verify</a>', "<b>bold</b>", "<img src=x onerror=alert(1)>",
           "x %{y} y", "A & B"]


def _strings(fig) -> str:
    return json.dumps(fig.to_plotly_json(), default=str)


def assert_inert(fig):
    text = _strings(fig)
    for raw in ("<a href", "<b>bold", "<img", "%{y} y"):
        assert raw not in text, raw
    assert "&lt;a href=" in text          # the name is still there, as entities


def test_plot_text_escapes_and_is_injective():
    assert plot_text("<a>&") == "&lt;a&gt;&amp;"
    assert plot_text("&lt;") != plot_text("<")
    assert plot_text("%{x}") == "%&#123;x}"
    assert plot_text("GPT-4/Vanilla") == "GPT-4/Vanilla"


def test_judge_figures_escape_hostile_names():
    judges = [{"judge": n, "tv": 0.1, "threshold": 0.2, "shifted": False} for n in HOSTILE]
    assert_inert(audit_drift_bars(judges))
    assert_inert(judge_matrix_heatmap(HOSTILE, [[1.0] * len(HOSTILE)] * len(HOSTILE)))
    assert_inert(judge_output_shift({"judge": HOSTILE[0], "categories": HOSTILE,
                                     "calibration": [0.2] * 5, "traffic": [0.2] * 5}))
    plan = {"add": [{"judge": n, "risk_change": -0.01, "ci": [-0.02, 0.0], "pressure_change": 0.0,
                     "verdict": "helps"} for n in HOSTILE], "drop": []}
    assert_inert(next_judge_risk_changes(plan))


def test_best_single_judge_line_escapes_its_name():
    import plotly.graph_objects as go
    fig = go.Figure()
    _baseline_line(fig, [{"name": "best_single_judge", "risk": 0.1, "judge": HOSTILE[0]}], [1, 2, 3])
    assert_inert(fig)
