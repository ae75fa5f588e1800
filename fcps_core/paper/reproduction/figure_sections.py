"""Sections for the paper's figures: each writes its figure to the figures folder and
holds the plotted numbers as a markdown table. Computed from the real panels' per-candidate
records (joint table, three paths, K <= 7; :mod:`fcps_core.paper.analyses`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import analyses as pa
from ...measures.diagnostics import GAIN_THRESHOLD, PRESSURE_THRESHOLD, regime_quadrant
from ...figures import paper as figs
from .common import P3, Section, fmt, md_table
from .real_more import table_frame
from .real_tables import REAL_NOTE

MAX_POINTS = 1500


def _records(curves: pd.DataFrame) -> list[dict]:
    return curves.to_dict("records")


def _at_largest(tf: pd.DataFrame) -> pd.DataFrame:
    top = tf.groupby("panel")["n_M"].transform("max")
    return tf[tf["n_M"] == top]


def _sample(df: pd.DataFrame, x: str, y: str, seed: int = 0):
    d = df if len(df) <= MAX_POINTS else df.sample(MAX_POINTS, random_state=seed)
    return d[x].astype(float).tolist(), d[y].astype(float).tolist()


def _titles(facets: dict) -> list[str]:
    """Subplot titles in the order :func:`fcps_core.figures.paper.binned_relation` draws."""
    return [facets[k].get("title", facets[k]["name"]) for k in sorted(facets)]


def _bins_table(facets: dict) -> str:
    rows = [[facets[k].get("title", facets[k]["name"]), f"[{fmt(b['x_low'], 4)}, {fmt(b['x_high'], 4)}]",
             fmt(b["y_median"]), f"[{fmt(b['y_p10'])}, {fmt(b['y_p90'])}]", b["n"]]
            for k in sorted(facets) for b in facets[k]["bins"]]
    return md_table(["facet", "x bin", "median y", "10-90% band", "units"], rows)


def _k_table(curves: pd.DataFrame, digits: int = 4) -> str:
    rows = []
    for (panel, path), g in curves.groupby(["panel", "path"], sort=False):
        by_k = dict(zip(g["K"], g["mean"]))
        rows.append([panel, int(g["n_M"].iloc[0]), path] + [fmt(by_k.get(k), digits) for k in range(1, 8)])
    return md_table(["Dataset", "n_M", "path"] + [f"K={k}" for k in range(1, 8)], rows)


def _selected_k_rows(runs, key: str = "K") -> dict[str, list[dict]]:
    out = {}
    for r in runs:
        rows = []
        for b in r.sweep.budgets:
            v = np.array([rec["menus"]["table"][key] for rec in r.sweep.records if rec["n_M"] == b], float)
            v = v[np.isfinite(v)]
            rows.append({"n_M": b, "mean": float(v.mean()), "p10": float(np.quantile(v, 0.1)),
                         "p90": float(np.quantile(v, 0.9))})
        out[r.name] = rows
    return out


def _budget_table(series: dict[str, list[dict]], what: str) -> str:
    return md_table(["Dataset", "n_M", f"{what} mean", "10-90% band"],
                    [[name, r["n_M"], fmt(r["mean"], 3), f"[{fmt(r['p10'], 3)}, {fmt(r['p90'], 3)}]"]
                     for name, rows in series.items() for r in rows])


def figure_sections(runs, frame: pd.DataFrame, controlled: dict, sink, plan) -> list[Section]:
    tf = table_frame(frame)
    top = _at_largest(tf)
    panels = [r.name for r in runs]
    out = []

    # fig:operational-regime-map
    points = []
    sources = [(r.name, r.sweep) for r in runs] + list(controlled.items())
    for source, sweep in sources:
        for c in sweep.cells:
            t, s = c["menus"].get("table"), c["menus"].get("scalar")
            if t and s and t.get("V_proxy_mean") is not None:
                recs = [r["menus"] for r in sweep.records if r["n_M"] == c["n_M"] and "table" in r["menus"]
                        and "scalar" in r["menus"]]
                val_gain = float(np.mean([m["scalar"]["val_risk"] - m["table"]["val_risk"] for m in recs]))
                points.append({"source": source, "label": f"n_M={c['n_M']}", "n_M": c["n_M"],
                               "table_pressure": t["V_proxy_mean"], "interaction_gain": val_gain,
                               "test_gain": s["test_mse_mean"] - t["test_mse_mean"]})
    fig = figs.sourced_regime_map(points, gain_threshold=GAIN_THRESHOLD, pressure_threshold=PRESSURE_THRESHOLD)
    rows = [[p["source"], p["n_M"], fmt(p["table_pressure"]), fmt(p["interaction_gain"], 4, True),
             (regime_quadrant(p["interaction_gain"], p["table_pressure"])["quadrant"] or "-").replace("_", " "),
             fmt(p["test_gain"], 4, True),
             (regime_quadrant(p["test_gain"], p["table_pressure"])["quadrant"] or "-").replace("_", " ")]
            for p in points]
    agree = sum(r[4] == r[6] for r in rows)
    out.append(Section("fig:operational-regime-map", "Operational finite-calibration regime map",
                       "Every sweep of this report placed on the 2x2 map: table pressure = H_K/n_M + unseen rate of "
                       "the validation-selected joint table (mean over splits); interaction gain = scalar minus table "
                       "**validation** risk of the two menus' choices (mean over splits; positive: the table wins), as "
                       "the paper's caption defines it, and the figure plots it. The test-MSE gain and the quadrant it "
                       f"would give are shown beside it (labelled 'test'). Thresholds: gain {GAIN_THRESHOLD}, pressure "
                       f"{PRESSURE_THRESHOLD}. Real panels (shipped LLMBar, HANNA) and the controlled growth regimes "
                       f"(menus of tab:calibration-growth-new-dataset). Validation and test quadrants agree in {agree} "
                       f"of {len(rows)} rows.",
                       md_table(["Sweep", "n_M", "table pressure", "validation gain", "quadrant", "test gain",
                                 "test quadrant"], rows),
                       [("operational regime map", sink.add("fig:operational-regime-map", fig))],
                       verdict="reproduced",
                       why="qualitatively: the paper's map is a schematic with no plotted numbers; its reading (real "
                           "panels in the low-gain quadrants, interaction regimes reaching the joint-table quadrant "
                           "once n_M is large) is what the rows show."))

    # fig:main-regime-diagnostics
    info = pa.curves_over_k(top, "test_mse", paths=("info_first",))
    bins = {p: pa.quantile_bins(g["unseen_test"], g["test_mse"]) for p, g in tf.groupby("panel", sort=False)}
    fig = figs.main_regime_diagnostics(_records(info), bins)
    out.append(Section("fig:main-regime-diagnostics", "Main regime diagnostics: risk over K and versus unseen rate",
                       "Left: joint-table test MSE over K (information-first path, largest budget; mean and 10-90% "
                       "band over splits). Right: test MSE binned by the test unseen-pattern rate over every joint-table "
                       "candidate (all budgets, paths, K). " + REAL_NOTE,
                       _k_table(info) + "\n" + _bins_table({(1, i): {"name": p, "bins": b}
                                                            for i, (p, b) in enumerate(bins.items())}),
                       [("risk over K and versus unseen rate", sink.add("fig:main-regime-diagnostics", fig))]))

    # fig:risk-k and fig:validation-risk
    risk = pa.curves_over_k(top, "test_mse")
    out.append(Section("fig:risk-k", "Joint-table test risk over prefix size K",
                       "Mean test MSE over splits (10-90% band) of every path's K-judge joint table at each panel's "
                       "largest budget. " + REAL_NOTE, _k_table(risk),
                       [("test risk over K", sink.add("fig:risk-k", figs.risk_over_k(_records(risk),
                                                                                       y_title="test MSE")))]))
    val = pa.curves_over_k(top, "val_risk")
    mins = [[p, path, int(g.loc[g["mean"].idxmin(), "K"]), fmt(g["mean"].min())]
            for (p, path), g in val.groupby(["panel", "path"], sort=False)]
    out.append(Section("fig:validation-risk", "Path-separated joint-table validation risk over K",
                       "Mean validation MSE over splits per path at the largest budget; stars mark each path's "
                       "minimum of the mean. " + REAL_NOTE,
                       _k_table(val) + "\n" + md_table(["Dataset", "path", "K at the minimum", "minimum"], mins),
                       [("validation risk over K", sink.add("fig:validation-risk", figs.risk_over_k(
                           _records(val), y_title="validation MSE", stars=True, band=False)))]))

    # fig:selected-k
    k_series = _selected_k_rows(runs)
    out.append(Section("fig:selected-k", "Selected joint-table prefix size over the budget",
                       "The table menu's validation-selected K per split: mean and 10-90% band over splits. "
                       + REAL_NOTE, _budget_table(k_series, "selected K"),
                       [("selected K over n_M", sink.add("fig:selected-k", figs.over_budget(
                           k_series, y_title="selected K")))]))

    # fig:complexity-risk, fig:unseen-risk, fig:complexity-risk-path
    for label, col, title, xt in (("fig:complexity-risk", "H_per_n", "Joint-table risk versus H_K/n_M",
                                   "H_K / n_M"),
                                  ("fig:unseen-risk", "unseen_test", "Joint-table test risk versus unseen rate",
                                   "test unseen-pattern rate")):
        d = tf.assign(H_per_n=tf["H_K"].astype(float) / tf["n_M"].astype(float))
        facets = {(1, i + 1): {"name": p, "bins": pa.quantile_bins(g[col], g["test_mse"]),
                               "points": _sample(g, col, "test_mse", plan.seed)}
                  for i, p in enumerate(panels) for g in [d[d["panel"] == p]]}
        fig = figs.binned_relation(facets, x_title=xt, y_title="test MSE", titles=_titles(facets))
        out.append(Section(label, title,
                           f"Every joint-table candidate (three paths pooled, K <= 7, all budgets and splits): test MSE "
                           f"binned by {xt} (quantile bins; median and 10-90% band; faint points: a sample of at most "
                           f"{MAX_POINTS} candidates). " + REAL_NOTE, _bins_table(facets),
                           [(title, sink.add(label, fig))]))
    d = tf.assign(H_per_n=tf["H_K"].astype(float) / tf["n_M"].astype(float))
    facets = {}
    for i, p in enumerate(panels):
        for j, path in enumerate(P3):
            g = d[(d["panel"] == p) & (d["path"] == path)]
            facets[(i + 1, j + 1)] = {"name": path, "title": f"{p}: {path}", "color": figs.path_color(path),
                                      "bins": pa.quantile_bins(g["H_per_n"], g["test_mse"])}
    fig = figs.binned_relation(facets, x_title="H_K / n_M", y_title="test MSE", titles=_titles(facets))
    out.append(Section("fig:complexity-risk-path", "Path-separated complexity diagnostic",
                       "fig:complexity-risk with one row per dataset and one column per path rule (information-first, "
                       "complexity-penalized, random): binned median test MSE and 10-90% band against H_K/n_M. "
                       + REAL_NOTE, _bins_table(facets), [("risk versus H_K/n_M by path",
                                                                  sink.add("fig:complexity-risk-path", fig))]))

    # fig:distribution-summary
    u_series = _selected_k_rows(runs, "unseen_test")
    both = {**{f"{p}: selected K": [{**r, "subplot": 1} for r in rows] for p, rows in k_series.items()},
            **{f"{p}: unseen rate": [{**r, "subplot": 2} for r in rows] for p, rows in u_series.items()}}
    out.append(Section("fig:distribution-summary", "Selected complexity and sparse-cell rate per dataset",
                       "Per dataset and budget, the selected table's K (left) and its test unseen-pattern rate (right): "
                       "mean and 10-90% band over splits. " + REAL_NOTE,
                       _budget_table(k_series, "selected K") + "\n" + _budget_table(u_series, "unseen rate"),
                       [("selected K and unseen rate", sink.add("fig:distribution-summary", figs.over_budget(
                           both, y_title="selected K / unseen rate", titles=["selected K", "unseen rate"])))]))

    # fig:marginal
    deltas = pa.marginal_deltas(tf)
    facets = {(1, i + 1): {"name": p, "bins": pa.quantile_bins(g["d_complexity"], g["d_risk"]),
                           "points": _sample(g, "d_complexity", "d_risk", plan.seed)}
              for i, p in enumerate(panels) for g in [deltas[deltas["panel"] == p]]}
    helped = [[p, len(g), fmt(float((g["d_risk"] < 0).mean()), 2), fmt(float(g["d_risk"].median()), 5)]
              for p in panels for g in [deltas[deltas["panel"] == p]]]
    out.append(Section("fig:marginal", "Marginal risk change versus marginal complexity (K to K+1)",
                       "For every joint-table path, split and budget: d_risk = test MSE(K+1) - test MSE(K) against "
                       "d_complexity = H_{K+1}/n_M - H_K/n_M; below zero the added judge helped. Binned median and "
                       "10-90% band. " + REAL_NOTE,
                       md_table(["Dataset", "K -> K+1 steps", "share that reduced risk", "median d_risk"], helped)
                       + "\n" + _bins_table(facets),
                       [("marginal risk change", sink.add("fig:marginal", figs.binned_relation(
                           facets, x_title="Delta(H_K / n_M)", y_title="Delta test MSE", titles=_titles(facets),
                           zero_line=True)))]))

    # fig:uncertainty-diagnostics
    fig = figs.uncertainty_diagnostics(_records(info), k_series)
    band = [[p, int(g["n_M"].iloc[0]), k, fmt(m), f"[{fmt(lo)}, {fmt(hi)}]"]
            for p, g in info.groupby("panel", sort=False) for k, m, lo, hi in zip(g["K"], g["mean"], g["p10"], g["p90"])]
    out.append(Section("fig:uncertainty-diagnostics", "Uncertainty versions of fig:risk-k and fig:selected-k",
                       "Split means with 10-90% split bands (not standard-error bands): (a) information-first joint-table "
                       "test MSE over K at the largest budget, (b) the selected table K over budgets. " + REAL_NOTE,
                       md_table(["Dataset", "n_M", "K", "mean test MSE", "10-90% band"], band) + "\n"
                       + _budget_table(k_series, "selected K"),
                       [("risk envelope and selected prefix", sink.add("fig:uncertainty-diagnostics", fig))]))
    return out
