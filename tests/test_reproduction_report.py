"""The reproduction report (``python -m fcps_core report``): a section per paper label, each
holding a table or a figure file, numbers that match direct computations on the same
records, safe output files, and the Paper reproduction dashboard page."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from fcps_core.paper import analyses as pa
from fcps_core.paper.reproduction.common import Plan
from fcps_core.paper.reproduction.runs import run_real
from fcps_core.paper.reproduction import write_report

ROOT = Path(__file__).resolve().parent.parent
SPLITS = 3
# Every table and figure label of the paper (fcps-paper.tex), less the two navigation tables
# (tab:theory-evidence-map, tab:interpretation-checks) and the prompt-perturbation table
# (live LLM calls). Written out here, not read from the code.
EXPECTED = [
    "fig:operational-regime-map", "tab:protocol", "tab:exact-cell-pressure", "fig:main-regime-diagnostics",
    "tab:main-finite-label-checks", "tab:protocol-guardrails", "tab:pool-artifact-guardrail",
    "tab:candidate-menu-validation", "tab:baseline-envelope", "tab:envelope-budget-k", "tab:aggregation-baselines",
    "tab:aggregation-selected", "tab:k-family-ablation", "tab:selected-k-instability", "tab:regime-comparison",
    "tab:oracle-interaction-gap-full", "tab:table-like-family-comparison", "tab:metric-robustness",
    "tab:jury-baseline", "tab:nll-selection-ablation", "tab:tie-parse-fairness", "tab:fixed-budget-allocation",
    "tab:backoff-split-sensitivity", "tab:interaction-diagnostic", "tab:theory-proxy-winner",
    "tab:table-sensitivity", "tab:residual-shrinkage-hybrid", "tab:cfps-path", "tab:cold-start-few-label",
    "tab:external-binary-validation-protocol", "tab:external-binary-validation-results",
    "tab:external-binary-theory-validation", "tab:calibration-growth-new-dataset",
    "tab:semireal-calibration-growth", "tab:controlled-aggregator-regimes", "tab:interaction-strength-sweep",
    "tab:controlled-complexity", "tab:within-group-correlation", "fig:risk-k", "fig:selected-k",
    "fig:validation-risk", "fig:complexity-risk", "fig:unseen-risk", "fig:distribution-summary",
    "fig:complexity-risk-path", "fig:marginal", "fig:uncertainty-diagnostics"]
NAVIGATION = ["tab:theory-evidence-map", "tab:interpretation-checks"]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    (out / "figures").mkdir()
    (out / "figures" / "mine.txt").write_text("not the report's")
    text = write_report(str(out / "reproduction.md"), splits=SPLITS, quick=True, workers=1)
    return out, text


@pytest.fixture(scope="module")
def runs():
    """The report's own real-panel runs (seeded: the same records the quick report used)."""
    plan = Plan(splits=SPLITS, quick=True, workers=1)
    return [run_real(name, plan, lambda m: None) for name in ("llmbar", "hanna")]


def sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## ", text, flags=re.M)
    out = {}
    for part in parts[1:]:
        head = part.splitlines()[0]
        if " — " in head:
            out[head.split(" — ")[0]] = part
    return out


def table_rows(section: str, first: str) -> list[list[str]]:
    """Rows of the section's markdown tables whose first cell is ``first``."""
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first:
            rows.append(cells)
    return rows


def test_every_reproducible_label_has_a_section_with_a_table_or_figure(report):
    out, text = report
    secs = sections(text)
    assert [s for s in EXPECTED if s not in secs] == []
    for label in EXPECTED:
        body = secs[label]
        links = re.findall(r"\]\((figures/[^)]+)\)", body)
        for link in links:
            assert (out / link).is_file(), (label, link)
            assert "plotly.min.js" in (out / link).read_text()
        has_table = "|---" in body
        assert has_table or links, label
        if label.startswith("fig:"):
            assert links, label
    assert (out / "figures" / "plotly.min.js").is_file()
    assert (out / "figures" / "mine.txt").read_text() == "not the report's"
    assert "nan" not in text.lower().replace("nanosecond", "")


def test_label_map_at_the_top(report):
    _, text = report
    head = text.split("<a id=")[0]
    for label in EXPECTED:
        assert re.search(rf"\| `{re.escape(label)}` \| \[[^\]]+\]\(#{label.replace(':', '-')}\) \|", head), label
    for label in NAVIGATION:
        assert re.search(rf"\| `{re.escape(label)}` \| navigation table", head), label
    assert re.search(r"\| `tab:prompt-perturbation` \| not applicable offline", head)
    assert re.search(r"Run time: \d+ s", head) and "load average" in head
    assert "missing from this run" not in text


def test_controlled_complexity_matches_numpy_least_squares(report, runs):
    _, text = report
    frame = pd.concat([r.frame for r in runs])
    t = frame[(frame["family"] == "table") & frame["path"].isin(["info_first", "complexity_penalized", "random"])
              & (frame["K"] <= 7)].copy()
    t["x"] = t["H_K"] / t["n_M"]
    groups = [t["panel"], t["n_M"], t["path"]]
    x = (t["x"] - t["x"].groupby(groups).transform("mean")).to_numpy()
    y = (t["test_mse"] - t["test_mse"].groupby(groups).transform("mean")).to_numpy()
    zx, zy = x / x.std(ddof=1), y / y.std(ddof=1)
    beta = np.linalg.lstsq(zx[:, None], zy, rcond=None)[0][0]
    row = table_rows(sections(text)["tab:controlled-complexity"], "H_K/n_M -> test risk")[0]
    assert float(row[1]) == pytest.approx(beta, abs=6e-4)
    assert row[3].startswith(f"{len(t)} residualized prefixes")


def test_proxy_auc_matches_scikit_learn(report, runs):
    _, text = report
    frame = pd.concat([r.frame for r in runs])
    records = [rec for r in runs for rec in r.records]
    units = pa.proxy_units(frame, records)
    assert len(units) == SPLITS * sum(len(r.sweep.budgets) for r in runs)
    y = units["scalar_wins"].to_numpy()
    assert 0 < y.sum() < len(y), "the quick runs should hold both winners"
    expected = roc_auc_score(y, units["proxy"].to_numpy())
    row = table_rows(sections(text)["tab:theory-proxy-winner"], "split-level proxy AUC for scalar winner")[0]
    assert float(row[1]) == pytest.approx(expected, abs=6e-4)


def test_marginal_deltas_match_the_candidate_records(report, runs):
    _, text = report
    for run in runs:
        t = run.frame
        t = t[(t["family"] == "table") & t["path"].isin(["info_first", "complexity_penalized", "random"])
              & (t["K"] <= 7)]
        steps, helped, d_complexity = 0, 0, []
        for _, g in t.groupby(["split", "n_M", "path"]):
            risk = dict(zip(g["K"], g["test_mse"]))
            pressure = dict(zip(g["K"], g["H_K"] / g["n_M"]))
            for k in range(1, 7):
                if k in risk and k + 1 in risk:
                    steps += 1
                    helped += risk[k + 1] < risk[k]
                    d_complexity.append(pressure[k + 1] - pressure[k])
        section = sections(text)["fig:marginal"]
        row = table_rows(section, run.name)[0]
        assert int(row[1]) == steps
        assert float(row[2]) == pytest.approx(helped / steps, abs=6e-3)
        # the binned rows of this panel start at its smallest complexity step and hold every step
        bins = table_rows(section, run.name)[1:]
        assert float(bins[0][1].strip("[]").split(",")[0]) == pytest.approx(min(d_complexity), abs=6e-5)
        assert sum(int(b[-1]) for b in bins) == steps


def test_cfps_selection_share_matches_the_records(report, runs):
    _, text = report
    for run in runs:
        share = np.mean([rec["menus"]["table_cfps"]["path_rule"] == "cfps" for rec in run.cfps.records])
        row = table_rows(sections(text)["tab:cfps-path"], run.name)[0]
        assert float(row[-1]) == pytest.approx(share, abs=6e-3)
        # the 3-path baseline is the main sweep's own table menu on the same splits
        base = np.mean([rec["menus"]["table"]["test_mse"] for rec in run.sweep.records if rec["n_M"] == run.largest])
        assert float(row[2]) == pytest.approx(base, abs=6e-5)


def test_regime_comparison_matches_the_records(report, runs):
    _, text = report
    for run in runs:
        for b in run.sweep.budgets:
            recs = [r for r in run.sweep.records if r["n_M"] == b]
            delta = np.mean([r["menus"]["table"]["test_mse"] - r["menus"]["scalar"]["test_mse"] for r in recs])
            row = [r for r in table_rows(sections(text)["tab:regime-comparison"], run.name) if r[1] == str(b)][0]
            assert float(row[4]) == pytest.approx(delta, abs=6e-5)


def test_report_refuses_existing_files_before_any_work(tmp_path, monkeypatch):
    from fcps_core import FCPSError
    from fcps_core.paper.reproduction import build

    def boom(**kw):
        raise AssertionError("computed before refusing")
    monkeypatch.setattr(build, "build_report", boom)
    out = tmp_path / "r.md"
    out.write_text("keep")
    with pytest.raises(FCPSError, match="already exists"):
        build.write_report(str(out))
    assert out.read_text() == "keep"
    fresh = tmp_path / "new.md"
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "fig-risk-k.html").write_text("mine")
    with pytest.raises(FCPSError, match="already exists"):
        build.write_report(str(fresh))
    assert not fresh.exists() and (tmp_path / "figures" / "fig-risk-k.html").read_text() == "mine"


# -- the dashboard page -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def seeded_store(tmp_path_factory):
    """The demo store (run 3: a sweep on synthetic-parity with its per-candidate records)."""
    from app_helpers import seeded_app_store
    yield from seeded_app_store(tmp_path_factory)


def _page(run: str):
    import streamlit as st
    from streamlit.testing.v1 import AppTest
    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app_pages" / "reproduction.py"), default_timeout=300)
    at.query_params["run"] = run
    return at.run()


def test_reproduction_page_browses_a_stored_sweep(seeded_store):
    import json
    at = _page("3")
    assert not at.exception, at.exception
    heads = " ".join(h.value for h in at.subheader)
    for label in ("fig:risk-k", "fig:validation-risk", "fig:complexity-risk", "fig:unseen-risk",
                  "fig:complexity-risk-path", "tab:controlled-complexity", "tab:within-group-correlation",
                  "fig:marginal", "tab:interaction-diagnostic", "tab:theory-proxy-winner"):
        assert label in heads, label
    assert len(at.dataframe) >= 6
    assert any("python -m fcps_core report" in c.value for c in at.code)
    for df in at.dataframe:           # every column carries help
        config = json.loads(df.proto.columns or "{}")
        for col in df.value.columns:
            text = (config.get(str(col)) or {}).get("help")
            assert text and text.strip() != f"{col}.", col


def test_reproduction_page_says_when_a_sweep_has_no_candidate_records(seeded_store):
    import duckdb
    from fcps_app.common import get_store
    get_store.clear()
    con = duckdb.connect(seeded_store)
    con.execute("DELETE FROM sweep_candidates WHERE run_id = 3")
    con.close()
    at = _page("3")
    assert not at.exception
    assert any("stored before the store kept them" in i.value for i in at.info)
