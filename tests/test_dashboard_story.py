"""Issue 28: the dashboard tells one consistent story, from the first second.

* First start: a new store (``FCPS_STORE`` naming a file that does not exist) gets the demo
  panels and runs copied in from the shipped snapshot (``data/seed/``) and the Overview
  renders within 10 s; recomputing the seed gives the same stored rows as the snapshot.
* Every page that reads a selection opens ``?run=N`` of a stored one.
* No page except Paper reproduction shows a raw paper label (``eq:``, ``thm:``, ``tab:``,
  ``fig:``), a fractional block size or "nan".
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import app_store
from fcps_core.seed import SNAPSHOT_DIR, SeedSpec, comparable_rows, ensure_seeded, load_snapshot, seed_store
from fcps_core.store import Store

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TIMEOUT = 300
#: the demo store's runs (the snapshot's manifest lists their labels in this order of ids)
SELECT_LLMBAR, SELECT_PARITY, SWEEP_PARITY = 1, 5, 8


@pytest.fixture(scope="module")
def fresh_store(tmp_path_factory):
    """FCPS_STORE names a file that does not exist yet: the app creates and seeds it."""
    yield from app_store(tmp_path_factory.mktemp("fresh") / "new.duckdb")


@pytest.fixture(autouse=True)
def fresh_caches():
    import streamlit as st
    st.cache_data.clear()
    yield


def test_first_start_copies_the_demo_in_and_renders_the_overview_within_10_s(fresh_store):
    assert not fresh_store.exists()
    t0 = time.perf_counter()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    seconds = time.perf_counter() - t0
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.title and at.title[0].value, "the Overview did not render"
    assert seconds < 10, f"first start took {seconds:.1f} s"
    store = Store(fresh_store)
    manifest = json.loads((SNAPSHOT_DIR / "manifest.json").read_text(encoding="utf-8"))
    assert sorted(p["name"] for p in store.panels()) == manifest["panels"]
    assert sorted(r["label"] for r in store.runs()) == manifest["runs"]
    assert store.integrity_problems() == []
    runs = {r["run_id"]: r["label"] for r in store.runs()}
    assert runs[SELECT_LLMBAR] == "seed:select:llmbar" and runs[SELECT_PARITY] == "seed:select:synthetic-parity"
    assert runs[SWEEP_PARITY] == "seed:sweep:synthetic-parity"


def test_the_snapshot_holds_what_the_engine_computes(tmp_path):
    """The shipped rows equal a fresh computation of the default seed (timestamps and
    timings aside). When the engine changes what seeding stores, this fails: rebuild the
    snapshot with ``python -m fcps_core.seed --write-snapshot``."""
    copied, computed = Store(tmp_path / "copied.duckdb"), Store(tmp_path / "computed.duckdb")
    assert load_snapshot(copied)
    seed_store(computed, SeedSpec())
    a, b = comparable_rows(copied), comparable_rows(computed)
    assert list(a) == list(b)
    for table in a:
        assert a[table][0] == b[table][0], table
        assert a[table][1] == b[table][1], f"{table}: the shipped snapshot differs from the engine's seed"


def test_the_snapshot_goes_only_into_an_empty_store(tmp_path):
    from fcps_core.paper.synthetic import make_regime
    store = Store(tmp_path / "used.duckdb")
    store.add_panel(make_regime("mixed", rows=200, judges=3, seed=0), name="mine")
    assert load_snapshot(store) is False
    assert [p["name"] for p in store.panels()] == ["mine"] and store.runs() == []
    empty = Store(tmp_path / "empty.duckdb")
    assert ensure_seeded(empty) is True and len(empty.runs()) == 8
    assert ensure_seeded(empty) is False          # once only
    with empty.transaction() as cur:
        counters = dict(cur.execute("SELECT name, value FROM counters").fetchall())
    assert counters["run_id"] >= 8 and counters["panel_id"] >= 5     # new ids continue above the copied ones


#: a raw LaTeX label of the paper (what only the Paper reproduction page may show)
RAW_LABEL = re.compile(r"\b(?:eq|thm|tab|fig):[A-Za-z]")
#: a block size with decimals ("n_M 1,796.8", "n_S (fitting rows): 1280.5")
FRACTIONAL_SIZE = re.compile(r"(?<!/ )(?<!/)\bn_[SMVT]\b(?:\s*\([^)]*\))?[\s:=]*(?:about\s*)?\d[\d,]*\.\d")
NAN = re.compile(r"\bnan\b", re.IGNORECASE)
PAGES = ("overview", "upload", "select", "judges", "regime", "plan", "audit", "gaps", "deploy", "results", "lab")


def open_page(name: str, run: int | None = None) -> AppTest:
    """The app opened at ``/name?run=RUN`` (through the entry point, so page links work)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if run is not None:
        at.query_params["run"] = str(run)
    at.run()
    return at.switch_page(f"app_pages/{name}.py").run()


def shown_texts(at) -> list[tuple[str, str]]:
    """Every text the page shows: Markdown, captions, alerts, headings, metric labels,
    values and tooltips, widget labels and options, chart specs and table cells."""
    out = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "subheader", "header", "title"):
        out += [(kind, str(x.value)) for x in getattr(at, kind)]
    out += [("metric", f"{m.label} {m.value} {m.proto.help}") for m in at.metric]
    out += [("chart", e.proto.spec) for e in at.get("plotly_chart")]
    out += [("table", " ".join(map(str, df.value.columns)) + "\n" + df.value.astype(str).to_csv()) for df in at.dataframe]
    for w in list(at.selectbox) + list(at.radio) + list(at.multiselect):
        out.append(("widget", f"{w.label} {list(getattr(w, 'options', []))} {w.help or ''}"))
    return out


def leaks(at) -> list[str]:
    found = []
    for kind, text in shown_texts(at):
        for rx, what in ((RAW_LABEL, "paper label"), (FRACTIONAL_SIZE, "fractional block size"), (NAN, "nan")):
            for m in rx.finditer(text):
                found.append(f"{what} in {kind}: ...{text[max(0, m.start() - 60):m.end() + 30]}...")
    return found


def test_the_leak_checks_can_fail():
    """The patterns below catch what issue 28 saw on the pages."""
    assert RAW_LABEL.search("paper Theorem thm:validation-selection") and RAW_LABEL.search("fig:risk-k")
    assert FRACTIONAL_SIZE.search("n_S 1,796.8 / n_M 1,796.8") and FRACTIONAL_SIZE.search("n_M (fitting rows) 1280.5")
    assert not FRACTIONAL_SIZE.search("n_M (fitting rows) about 1,797") and not RAW_LABEL.search("ratio 1:2:1")
    assert not FRACTIONAL_SIZE.search("H_K / n_M 0.09524")         # a ratio, not a block size
    assert NAN.search("estimate nan") and not NAN.search("financial")


@pytest.mark.parametrize("run", [SELECT_PARITY, SWEEP_PARITY, SELECT_LLMBAR])
def test_no_page_but_paper_reproduction_leaks_a_label_a_fractional_size_or_nan(fresh_store, run):
    problems = {}
    for name in PAGES:
        at = open_page(name, run)
        assert not at.exception, (name, at.exception)
        if leaks(at):
            problems[name] = leaks(at)
    assert problems == {}


def test_every_page_that_reads_a_selection_opens_run_n(fresh_store):
    run = SELECT_PARITY
    at = open_page("select", run)
    assert not at.exception, at.exception
    assert at.session_state["selection"]["run_id"] == run and at.query_params.get("run") == str(run)
    at = open_page("judges", run)
    assert any(f"stored run {run}'s" in c.value for c in at.caption), [c.value for c in at.caption]
    assert [s.value for s in at.subheader].count("Contribution to the deployed predictor") == 1
    at = open_page("plan", run)
    assert any(f"(stored run {run})" in c.value for c in at.caption), [c.value for c in at.caption]
    assert [b.label for b in at.button] == ["Plan the next judge"]    # nothing computed before the button
    assert "Add or drop one judge" not in [s.value for s in at.subheader]
    for name in ("audit", "regime"):
        at = open_page(name, run)
        assert next(s for s in at.selectbox if s.label == "Run").value == run, name
    at = open_page("deploy", run)
    assert next(s for s in at.selectbox if s.label == "Deploy").value.startswith(f"run {run} ")
    at = open_page("results", run)
    assert any(m.value.startswith(f"**Run {run}**") for m in at.markdown)


def test_select_keeps_its_run_in_the_address_for_a_reload(fresh_store):
    """A selection opened from the Results browser (no ?run= on the Select page) writes its
    run id into the address, so the browser's reload opens it again."""
    at = open_page("results", SELECT_LLMBAR)
    at.session_state["selection"] = None
    from fcps_app.runs import selection_state
    at.switch_page("app_pages/select.py")
    at.query_params.clear()
    at.session_state["selection"] = selection_state(SELECT_LLMBAR)
    at.session_state["current_panel"] = "stored: llmbar"
    at.run()
    assert at.query_params.get("run") == str(SELECT_LLMBAR)
    reloaded = open_page("select", int(at.query_params["run"]))
    assert reloaded.session_state["selection"]["run_id"] == SELECT_LLMBAR


def test_the_glossary_can_be_searched(fresh_store):
    at = open_page("overview")
    box = next(t for t in at.text_input if t.label == "Search the glossary")
    everything = next(m.value for m in at.markdown if m.value.startswith("- **n_S**"))
    box.input("unseen").run()
    found = next(m.value for m in at.markdown if m.value.startswith("- **"))
    assert found != everything and all("unseen" in line.lower() for line in found.splitlines())
    box.input("no-such-term-xyz").run()
    assert any(c.value.startswith("No term matches") for c in at.caption)


@pytest.mark.parametrize("run,applies", [(SELECT_PARITY, "is table-like"), (SELECT_LLMBAR, "averages")])
def test_the_audit_says_what_applies_to_the_deployed_predictor_and_names_the_judges(fresh_store, run, applies):
    at = open_page("audit", run)
    assert not at.exception, at.exception
    assert any(applies in i.value for i in list(at.info) + list(at.warning)), [i.value for i in at.info]
    cells = next(df.value for df in at.dataframe if "pattern" in df.value.columns)
    judges = Store(fresh_store).load_panel(at.selectbox[0].value.removeprefix("stored: ")).judges
    names = [j.name for j in judges]
    for pattern in cells["pattern"].head(20):      # every part of every pattern names its judge
        parts = pattern.split(" · ")
        assert len(parts) > 1 and all(any(p.startswith(n + " ") for n in names) for p in parts), pattern


def _graded_csv(rows: int = 80) -> bytes:
    """JudgeBench-style ordered verdicts from two judges, continuous human labels."""
    import numpy as np
    rng = np.random.default_rng(0)
    verdicts = ["A>>B", "A>B", "A=B", "B>A", "B>>A"]
    lines = ["item_id,group_id,label,j1,j2"]
    for i in range(rows):
        y = float(rng.random())
        picks = [verdicts[min(4, max(0, int((1 - y) * 5 + rng.integers(-1, 2))))] for _ in range(2)]
        lines.append(f"it{i},g{i},{y:.3f},{picks[0]},{picks[1]}")
    return ("\n".join(lines) + "\n").encode()


def test_upload_reads_ordered_pairwise_verdicts_and_shows_only_the_controls_that_apply(fresh_store):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/upload.py").run()
    assert ".tab" in list(at.get("file_uploader")[0].proto.type)      # the reader's file types
    at.get("file_uploader")[0].set_value(("graded.csv", _graded_csv(), "text/csv")).run()
    assert not at.exception, at.exception
    outputs = next(m.value for m in at.markdown if m.value.startswith("**Judge outputs**"))
    assert "(pairwise)" in outputs and "ordinal pairwise" in outputs
    assert "'A>>B' -> 1" in outputs.replace("\\", "") and "'B>>A' -> 0" in outputs.replace("\\", "")
    labels = [w.label for w in list(at.text_input) + list(at.checkbox)]
    assert "label range" not in labels and "read judge outputs with the same words" not in labels
    next(b for b in at.button if b.label == "Save to the store").click().run()
    assert not at.exception, at.exception
    assert any("is stored" in s.value for s in at.success)
    links = [e.proto.page for e in at.get("page_link")]
    assert "select" in links, links


def test_the_report_shows_traffic_cell_pressure_only_for_a_table_like_predictor():
    from fcps_core.reports.run_report.sections import audit_cells_section
    base = {"pressure": 0.992, "unseen_rate": 0.98, "out_of_support_rate": 0.0, "missing_rate": 0.0,
            "joint_drift": {"tv": 0.1}, "cells": []}
    scalar = audit_cells_section({**base, "predictor": {"family": "logistic", "table_like": False}})
    table = audit_cells_section({**base, "predictor": {"family": "table", "table_like": True}})
    assert "0.992" not in scalar and "do not apply" in scalar and "outside support" in scalar
    assert "0.992" in table and "do not apply" not in table


SCALAR_RUN = 3      # synthetic-additive: the average of tied logistic stackers


def test_deploy_says_cell_pressure_does_not_apply_to_a_scalar_predictor_and_lists_the_stored_audit(fresh_store):
    at = open_page("deploy", SCALAR_RUN)
    assert not at.exception, at.exception
    next(r for r in at.radio if r.label == "Traffic").set_value("a stored or session panel").run()
    next(s for s in at.selectbox if s.label == "Panel used as traffic").set_value("stored: synthetic-additive").run()
    assert not at.exception, at.exception
    pressure = [m for m in at.metric if m.label == "cell pressure"]
    assert len(pressure) == 1 and pressure[0].value == "–" and "Does not apply" in pressure[0].proto.help
    assert any("is scalar" in c.value for c in at.caption)
    next(b for b in at.button if b.label == "Store this audit").click().run()
    assert not at.exception, at.exception
    assert len([m for m in at.metric if m.label == "cell pressure"]) == 1      # listed, not drawn again
    assert any("is the audit shown above" in c.value for c in at.caption)
